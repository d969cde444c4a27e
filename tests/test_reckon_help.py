"""Help where people look (issue 17): ``%reckon?`` and ``%%reckon?`` show every line form and
option in plain text; a mistyped keyword gets a did-you-mean; a refused line says which of the
cell's lines were not run, in every rendering, in the error and in the record output, and
``verify`` still reads notebooks run before these changes."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

from dsh_notebook.artifact.seal import verify
from dsh_notebook.reckon.cell import USAGE
from test_magic import MIME, bundle, text

sys.path.insert(0, str(Path(__file__).parent))
from test_verify import cli, write_notebook  # noqa: E402 - the same helpers

EVERY_FORM = [
    "--continue", "--quiet", "--digits N", "--export NAME", "TITLE",
    "given NAME = VALUE [UNIT]", "3+4j", "[1, 2, 3]", "3.3006×10⁻⁶", "py:VAR",
    "NAME = FORMULA", "NAME = FORMULA in UNIT", "show NAME [in UNIT] [digits N]",
    "note TEXT", "note! TEXT", "delete NAME", "end [TEXT]", "# comment",
    "@name", "$sqrt", "$pi", "$sum_{k=", "^ for powers",
    "degC", "°C", "℃", "degF", "delta_degC", "Δ°C", "K and degR are either",
    "%reckon list", "%reckon show ID", "%reckon recover [close|discard] [ID]",
    "%reckon article ID [--format md|latex] [--compile] [--language auto|zh-CN|en] [--writer offline|model]",
]


def assert_plain_help(shown: str) -> None:
    for form in EVERY_FORM:
        assert form in shown, form
    assert USAGE in shown  # the cell usage is the one in reckon.cell, word for word
    assert "``" not in shown and ":param" not in shown and ":func:" not in shown


@pytest.mark.parametrize("magic", ["%reckon", "%%reckon"])
def test_the_inspector_shows_every_form_and_option_in_plain_text(sh, magic):
    assert_plain_help(sh.ip.object_inspect_text(magic))
    mime = sh.ip.object_inspect_mime(magic)
    assert "``" not in mime["text/plain"] and "``" not in mime.get("text/html", "")


@pytest.mark.parametrize("typed", ["%reckon?", "%%reckon?"])
def test_a_question_mark_after_the_magic_prints_the_help(sh, typed):
    r, cap = sh.run(typed)
    assert r.error_in_exec is None
    assert_plain_help(cap.stdout)


def test_the_line_magic_alone_prints_the_help(sh):
    r, cap = sh.run("%reckon")
    assert r.error_in_exec is None
    assert_plain_help(cap.stdout)


# --------------------------------------------------------------- did you mean


@pytest.mark.parametrize(
    "line, word, keyword",
    [
        ("givn T = 5 degC", "givn", "given"),
        ("shwo R", "shwo", "show"),
        ("Show R", "Show", "show"),
        ("dlete x", "dlete", "delete"),
        ("nte text", "nte", "note"),
        ("note: a colon", "note:", "note"),
    ],
)
def test_a_mistyped_keyword_gets_a_did_you_mean(sh, line, word, keyword):
    r, cap = sh.reckon(f"given R = 2 ohm\n{line}")
    err = r.error_in_exec
    assert type(err).__name__ == "ReckonRefused" and err.code == "ENGINE_INVALID_ARGS"
    said = f"'{word}' is not a %%reckon keyword; did you mean '{keyword}'? '{line}' is not a %%reckon line; lines are"
    assert said in str(err) and said in text(cap)
    row = sh.rows(sh.records()[-1])[-2]  # the refused line is recorded, as before
    assert row["tool"] == "eval" and row["ok"] is False and said in row["content"]["error"]


def test_a_line_far_from_any_keyword_gets_no_guess(sh):
    r, _ = sh.reckon("frobnicate the slot")
    assert "not a %%reckon line" in str(r.error_in_exec) and "did you mean" not in str(r.error_in_exec)


def test_a_slot_named_like_a_typo_is_still_an_eval(sh):
    r, cap = sh.reckon("gven = 5\nshwo_x = @gven*2")
    assert r.error_in_exec is None
    assert sh.ns["_reckon"]["shwo_x"].magnitude == 10 and "gven = 5" in text(cap)


# --------------------------------------------------------------- lines not run

REFUSED_WITH_MORE = """given L = 2 m
given t = 4 s
x = @L + @t
# the lines below never run

y = 2
show y
note never reached
end not reached either"""


def test_a_refused_line_says_which_lines_were_not_run(sh):
    r, cap = sh.reckon(REFUSED_WITH_MORE)
    err = r.error_in_exec
    assert type(err).__name__ == "ReckonRefused" and err.code == "ENGINE_INCOMPATIBLE_DIMENSION"
    assert str(err).startswith("line 3: x = @L + @t -> ENGINE_INCOMPATIBLE_DIMENSION: ")
    assert str(err).endswith("\nLines 6-9 were not run: the cell stops at the first refused line.")
    data = bundle(cap).data
    said = "lines 6-9 were not run: the cell stops at the first refused line"
    assert f"  ({said})" in data["text/plain"].split("\n")
    for mime in ("text/markdown", "text/html", "text/latex"):
        assert said in data[mime], mime
    assert data[MIME]["not_run"] == [6, 7, 8, 9]  # the lines, without the comment and the blank one
    assert [s["line"] for s in data[MIME]["steps"]] == [1, 2, 3]
    rows = sh.rows(sh.records()[-1])
    assert [row["tool"] for row in rows[1:]] == ["record_start", "set", "set", "eval", "record_end"]
    _, again = sh.reckon(REFUSED_WITH_MORE)  # deterministic: the same visible output
    assert bundle(again).data == data


def test_one_line_not_run(sh):
    r, cap = sh.reckon("given L = 2 m\nx = @L + 1\nshow x")
    assert str(r.error_in_exec).endswith("\nLine 3 was not run: the cell stops at the first refused line.")
    assert "(line 3 was not run: the cell stops at the first refused line)" in text(cap)


def test_a_refusal_on_the_last_line_says_nothing_more(sh):
    r, cap = sh.reckon("given L = 2 m\nx = @L + 1")
    assert "not run" not in str(r.error_in_exec) and "not run" not in text(cap)
    assert "not_run" not in bundle(cap).data[MIME]


# --------------------------------------------------------------- verify


def test_verify_reads_the_not_run_lines_and_what_earlier_versions_showed(tmp_path):
    """Check 7 re-renders the refused cell (the not-run note included) and finds it exact; the
    empty-cell usage as version 0.1.0 printed it still verifies; an output or error of this
    version's record without the not-run note is named (records made by 0.1.0 itself, whose
    errors had no such note, verify: tests/test_temperature_kinds.py, tests/data/before-kinds)."""
    path = write_notebook(tmp_path / "refused.ipynb", [
        "%load_ext dsh_notebook",
        "%%reckon Empty\n# nothing yet",
        "%%reckon Wrong\n" + REFUSED_WITH_MORE,
    ])
    assert cli("run", str(path)).returncode == 1  # the refused cell fails the run; its outputs are saved
    nb = nbformat.read(str(path), as_version=4)
    err = next(o for o in nb.cells[2].outputs if o.get("output_type") == "error")
    assert err["evalue"].endswith("\nLines 6-9 were not run: the cell stops at the first refused line.")
    found = [f for f in verify(path) if f.check == 7]
    assert found and all(f.ok for f in found), found

    earlier_usage = USAGE.replace(
        "\nNAME = FORMULA in UNIT           evaluate; the result must have UNIT's dimension and shows in UNIT", ""
    ).replace(", 3.3006×10⁻⁶ or py:VAR", " or py:VAR")
    nb.cells[1].outputs = [nbformat.v4.new_output(
        "stream", name="stdout", text="%%reckon: the cell has no lines to run (nothing was recorded).\n\n"
                                      + earlier_usage + "\n")]
    nbformat.write(nb, str(path))
    found = [f for f in verify(path) if f.check == 7]
    assert found and all(f.ok for f in found), found

    err["evalue"] = err["evalue"].split("\n")[0]  # the note dropped from this version's error
    nbformat.write(nb, str(path))
    bad = [f.detail for f in verify(path) if f.check == 7 and f.ok is False]
    assert any("its error says" in f for f in bad), bad
    err["evalue"] += "\nLines 6-9 were not run: the cell stops at the first refused line."
    out = next(o for o in nb.cells[2].outputs if MIME in o.get("data", {}))
    out["data"]["text/plain"] = "\n".join(x for x in out["data"]["text/plain"].split("\n") if "were not run" not in x)
    nbformat.write(nb, str(path))
    bad = [f.detail for f in verify(path) if f.check == 7 and f.ok is False]
    assert any("were not run" in f for f in bad), bad

