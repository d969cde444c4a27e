"""Every magic's arguments through the one parser (issue 22, item 2; :mod:`dsh_notebook.notebook.args`):
a bad argument is a ``UsageError`` naming the problem, and nothing is read, written or switched."""

from __future__ import annotations

import pytest

from dsh_notebook.notebook.args import parser, split


def files(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def usage_error(r) -> str:
    assert type(r.error_in_exec).__name__ == "UsageError", repr(r.error_in_exec)  # shown without a traceback
    return str(r.error_in_exec)


def test_the_parser_never_exits_and_names_the_problem():
    class Bad(ValueError):
        pass

    p = parser("%x", Bad)
    p.add_argument("--n")
    p.add_argument("--flag", action="store_true")
    with pytest.raises(Bad, match=r"^--n needs a value$"):
        p.parse_line(["--n"])
    with pytest.raises(Bad, match=r"^unknown option '--fl'; the options are --n, --flag$"):
        p.parse_line(["--fl"])  # no abbreviations
    with pytest.raises(Bad, match=r"^unexpected 'word'$"):
        p.parse_line(["word"])
    with pytest.raises(Bad, match="No closing quotation"):
        split('--n "open', Bad)
    assert p.parse_line(["--n=3", "--flag"]).n == "3"


@pytest.mark.parametrize("line, words", [
    ("%reckon frobnicate", ["%reckon frobnicate", "invalid choice: 'frobnicate'", "Use: %reckon list"]),
    ("%reckon list --all", ["unknown option '--all'; it takes no options"]),
    ("%reckon show", ["required: id"]),
    ("%reckon show 1 2", ["unexpected '2'"]),
    ("%reckon recover keep", ["invalid choice: 'keep'", "close", "discard"]),
    ("%reckon article 1795969445532 --format pdf", ["invalid choice: 'pdf'"]),
    ("%reckon article 1795969445532 --form md", ["unknown option '--form'; the options are --format, --compile"]),
    ("%reckon units length=mm --force kN", ["unknown option '--force'"]),
])
def test_reckon_line_bad_arguments(sh, line, words):
    sh.reckon("given x = 1 m", "--continue Kept open")  # an open record: a bad line must not touch it
    before = files(sh.folder)
    prefs = sh.run("%reckon units")[1].stdout
    err = usage_error(sh.run(line)[0])
    assert all(w in err for w in words), err
    assert files(sh.folder) == before and sh.run("%reckon units")[1].stdout == prefs


@pytest.mark.parametrize("digits", ["40", "\u00b3", "\u0663"])  # too many; a superscript 3; an Arabic-Indic 3
def test_reckon_cell_bad_option_names_it(sh, digits):
    err = usage_error(sh.run(f"%%reckon --digits {digits} Title\ngiven x = 1 m")[0])
    assert f"--digits {digits}" in err and "1 to 17" in err
    assert sh.records() == [] and not (sh.sidecar / "open-record.jsonl").exists()


@pytest.mark.parametrize("line, word", [
    ("--session a --session b", "--session is given twice"),
    ("--new=1", "--new"),
    ("--mod x", "unknown option '--mod'"),
    ('--session "open', "No closing quotation"),
])
def test_chat_bad_options_send_nothing(sh, server, line, word):
    srv = server([])
    r, _ = sh.chat("hello", line)
    assert r.error_in_exec is not None and word in str(r.error_in_exec)
    assert srv.requests == [] and sh.sessions() == []


def test_chat_line_bad_argument(sh):
    err = usage_error(sh.run("%chat list --all")[0])
    assert "unknown option '--all'" in err and "%chat list" in err


def test_academic_bad_argument_changes_nothing(sh):
    from dsh_notebook.academic import state

    before = state.status()["enabled"]
    err = usage_error(sh.run("%academic on please")[0])
    assert "unexpected 'please'" in err
    assert state.status()["enabled"] == before
    assert "Academic mode: on" in sh.run("%academic ON")[1].stdout  # any case, as before
    sh.run("%academic off")


@pytest.mark.parametrize("line, word", [("--foc me", "unknown option '--foc'"), ("--target", "--target"),
                                        ("--wait now", "unexpected 'now'")])
def test_review_bad_option_changes_nothing(sh, line, word):
    err = usage_error(sh.run(f"%review {line}")[0])
    assert word in err
    assert not (sh.sidecar / "reviewer.json").exists()


def test_ledger_bad_option_writes_nothing(sh):
    err = usage_error(sh.run("%ledger show --nam x")[0])
    assert "unrecognized arguments: --nam x" in err  # as dsh-notebook ledger says it
    assert not (sh.sidecar / "ledger").exists()
