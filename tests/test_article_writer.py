"""The model article writer (upstream-facts.md 3.12): one model call through the real httpx
client against the scripted server on 127.0.0.1; its article is checked before it is saved,
else the offline article is saved with the reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_articles import _record, example_records  # noqa: F401 - the fixture is used below

from dsh_notebook.artifact.articles import write_article
from dsh_notebook.llm.article_prompt import WRITER_PROMPT_VERSION, WRITER_RULES, writer_prompt, writer_system_prompt
from dsh_notebook.llm.testing import ScriptedServer
from dsh_notebook.llm.writer import ModelArticleWriter
from dsh_notebook.reckoner import Engine
from dsh_notebook.reckoner.articles import (
    AUTHOR,
    FIXED_TITLE,
    OfflineWriter,
    allowed_numbers,
    check_article,
    facts,
    written_numbers,
)


@pytest.fixture
def model_env(tmp_path, monkeypatch):
    """A model home with a (fake) key; the server's address is set by each test."""
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "model-home"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    monkeypatch.delenv("DSH_MODEL", raising=False)
    return monkeypatch


def pi_record(home: Path) -> Path:
    """R = 127.25 ohm, k = 3.14159265, P = R*k = 399.7677 ohm after the cut."""
    e = Engine(home)
    e.record_start("Scaled resistance")
    e.set("R", {"num": 127.25, "dim": "ohm"})
    e.set("k", {"num": 3.14159265})
    e.record_message("The resistance is scaled by the factor k.")
    e.record_message("check the factor twice before trusting it", hide=True)
    e.eval("@R*@k", "P")
    e.record_end("The scaled resistance is about 400 ohm.")
    return e.last_closed


GOOD_MD = f"""# Scaled resistance

*{AUTHOR}*

## Question

**Scaled resistance**

The resistance is scaled by the factor k. Given $R = 127.25\\,\\Omega$ and $k = 3.1416$.

## Approach

One multiplication gives the scaled resistance.

## Calculations

$$ P = R \\cdot k $$

With R = 127.25 Ω and k = 3.1416, this gives P = 399.7677 Ω.

## Conclusion

The scaled resistance is about 400 ohm.
"""

GOOD_TEX = r"""\section{Question}
\textbf{Scaled resistance}

The resistance is scaled by the factor $k$: $R = \SI{127.25}{\ohm}$, $k = 3.1416$.

\section{Calculations}
\[ P = R \cdot k \]
This gives $P = \SI{399.7677}{\ohm}$.

\section{Conclusion}
The scaled resistance is about 400 ohm.
"""


def serve(article: str, **expect) -> ScriptedServer:
    return ScriptedServer([{"expect": expect, "reply": {"content": article, "chunk": 40}}])


def test_a_good_model_article_is_saved_as_written(tmp_path, model_env):
    path = pi_record(tmp_path / "home")
    with serve(GOOD_MD, stream=True, contains="399.7677") as srv:
        model_env.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        writer = ModelArticleWriter()
        result = write_article(path, tmp_path / "out", "md", writer=writer)
    assert srv.mismatches == []
    assert (result.writer, result.fallback_reason) == ("model", None)
    assert result.path.read_text(encoding="utf-8") == GOOD_MD
    assert writer.model_id == "deepseek-chat"


def test_a_fenced_latex_body_is_unwrapped_checked_and_put_in_the_shell(tmp_path, model_env):
    path = pi_record(tmp_path / "home")
    with serve("```latex\n" + GOOD_TEX + "```\n") as srv:
        model_env.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        result = write_article(path, tmp_path / "out", "latex", writer=ModelArticleWriter())
    assert (result.writer, result.fallback_reason) == ("model", None)
    tex = result.path.read_text(encoding="utf-8")
    assert r"\SI{399.7677}{\ohm}" in tex and "```" not in tex and tex.startswith("% !TeX program = xelatex")


def test_the_request_holds_the_writer_prompt_and_the_cut_numbers_and_no_record_id(tmp_path, model_env):
    path = pi_record(tmp_path / "home")
    with serve(GOOD_MD) as srv:
        model_env.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        write_article(path, tmp_path / "out", "md", language="en", writer=ModelArticleWriter())
    body = srv.requests[0]["body"]
    system, user = body["messages"]
    assert system == {"role": "system", "content": writer_system_prompt("md", "en")}
    assert WRITER_RULES in system["content"] and "# followed by the title from the facts" in system["content"]
    assert "ENTIRE article in English" in system["content"]
    assert user == {"role": "user", "content": writer_prompt(facts(path), "md", "en")}
    assert "3.1416" in user["content"] and "399.7677" in user["content"]
    assert "3.14159265" not in user["content"] and "399.76766" not in user["content"]  # only cut numbers
    assert path.stem not in json.dumps(body)  # no record id anywhere in the request
    assert WRITER_PROMPT_VERSION == "article-writer/3"


def test_an_invented_number_falls_back_to_offline_naming_it(tmp_path, model_env):
    path = pi_record(tmp_path / "home")
    with serve(GOOD_MD.replace("R = 127.25 Ω", "R = 128 Ω")) as srv:
        model_env.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        result = write_article(path, tmp_path / "out", "md", writer=ModelArticleWriter())
    assert result.writer == "offline"
    assert "the number 128 " in result.fallback_reason and "127.25" in result.fallback_reason
    assert result.path.read_text(encoding="utf-8") == OfflineWriter().write_body(facts(path), "md", "en")


def test_a_latex_body_with_input_falls_back_naming_the_command(tmp_path, model_env):
    path = pi_record(tmp_path / "home")
    with serve(GOOD_TEX + "\\input{/etc/passwd}\n") as srv:
        model_env.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        result = write_article(path, tmp_path / "out", "latex", writer=ModelArticleWriter())
    assert result.writer == "offline" and "\\input" in result.fallback_reason
    assert "\\input" not in result.path.read_text(encoding="utf-8")


def test_a_product_name_outside_the_fixed_lines_falls_back(tmp_path, model_env):
    path = pi_record(tmp_path / "home")
    with serve(GOOD_MD.replace("One multiplication", "Reckoner used one multiplication")) as srv:
        model_env.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        result = write_article(path, tmp_path / "out", "md", writer=ModelArticleWriter())
    assert result.writer == "offline" and "Reckoner outside the author line" in result.fallback_reason


def test_a_missing_key_falls_back_with_missing_credential(tmp_path, model_env):
    model_env.delenv("DEEPSEEK_API_KEY")
    path = pi_record(tmp_path / "home")
    with ScriptedServer([]) as srv:
        model_env.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        result = write_article(path, tmp_path / "out", "md", writer=ModelArticleWriter())
    assert result.writer == "offline" and "MISSING_CREDENTIAL" in result.fallback_reason
    assert "DEEPSEEK_API_KEY" in result.fallback_reason and srv.requests == []
    assert result.path.exists()


def test_a_failing_provider_and_a_cut_off_article_fall_back(tmp_path, model_env):
    path = pi_record(tmp_path / "home")
    script = [{"reply": {"status": 401, "message": "bad key"}},
              {"reply": {"content": GOOD_MD[:80], "finish_reason": "length"}}]
    with ScriptedServer(script) as srv:
        model_env.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        first = write_article(path, tmp_path / "out", "md", writer=ModelArticleWriter())
        second = write_article(path, tmp_path / "out", "md", writer=ModelArticleWriter())
    assert first.writer == "offline" and "HTTP_STATUS" in first.fallback_reason and "401" in first.fallback_reason
    assert second.writer == "offline" and "cut off" in second.fallback_reason


# --------------------------------------------------------------------- the number rule


@pytest.mark.parametrize("written", [
    "3.1416", "3.14159265", "127.25", "399.7677", "127.25 Ω", "−127.25", "0.12725 kΩ", r"\SI{0.12725}{\kilo\ohm}",
    "127250 mΩ", "Step 3", "3 calculations", "第 2 步", "## 2. Calculations", "R_1 and V0", "x^{2} m^2",
])
def test_numbers_the_rule_accepts(tmp_path, written):
    f = facts(pi_record(tmp_path))
    assert _number_problems(written, f) == [], written


@pytest.mark.parametrize("written", ["128", "3.14", "127.2", "127.3 mΩ", "0.127 kΩ", "399.77", "2024", "12", "1/2"])
def test_numbers_the_rule_refuses(tmp_path, written):
    f = facts(pi_record(tmp_path))
    assert _number_problems(written, f), written


def _number_problems(written: str, f) -> list[str]:
    text = f"# {f.title}\n*{AUTHOR}*\n## Question\n{written}\n"
    return check_article(text, f, "md")


def test_every_spelling_of_a_power_of_ten_reads_the_same():
    spellings = ["3.3006e-6", r"3.3006\times10^{-6}", "3.3006 × 10⁻⁶", r"\SI{3.3006e-6}{\farad}", "3.3006E-06",
                 r"3.3006 \cdot 10^{-6}"]
    for s in spellings:
        assert [w.value for w in written_numbers(s)] == [3.3006e-6], s
    assert [w.value for w in written_numbers("22,413,969 Pa and 22\\,413\\,969")] == [22413969.0] * 2
    assert [w.value for w in written_numbers("scaled: 127.2 mΩ")] == [127.2]
    assert written_numbers(r"\SI{127.2}{\milli\ohm}")[0].prefixed_unit


def test_a_scaled_value_needs_a_prefixed_unit(tmp_path):
    e = Engine(tmp_path)
    e.record_start("Wire")
    e.set("R", {"num": 0.12725, "dim": "ohm"})
    e.record_end()
    f = facts(e.last_closed)
    assert allowed_numbers(f) == [0.12725, 0.1273]  # full precision and cut
    assert _number_problems("R = 127.25 mΩ, 127.3 mΩ or \\SI{127.3}{\\milli\\ohm}", f) == []
    assert _number_problems("R = 127.25 Ω", f)  # not a record number without the prefix


def test_format_names_ids_timestamps_and_notes_are_checked(tmp_path):
    path = pi_record(tmp_path)
    f = facts(path)
    assert check_article(GOOD_MD, f, "md") == [] and check_article(GOOD_TEX, f, "latex") == []
    cases = {
        GOOD_MD.replace("# Scaled resistance", f"# {FIXED_TITLE}"): "first line",  # the record's title, not upstream's
        GOOD_MD.replace(f"*{AUTHOR}*", "*Anonymous*"): "author line",
        GOOD_MD + "\n# Appendix\n": "second level-1 heading",
        GOOD_MD + f"\nRecord {path.stem}.\n": "record id",
        GOOD_MD + "\nWritten 2026-01-02 10:11.\n": "timestamp",
        GOOD_MD + "\nCheck the factor twice before trusting it.\n": "author's note",
        GOOD_MD + "\nThanks to DeepSeek Harness.\n": "DeepSeek",
        GOOD_TEX + "\\maketitle\n": "\\maketitle",
        GOOD_TEX.replace("\\section", "\\paragraph"): "no \\section",
        GOOD_TEX + "\n## Notes\n": "Markdown",
        GOOD_TEX + "\n{unbalanced\n": "'{'",
        "  \n": "empty",
    }
    for text, words in cases.items():
        fmt = "latex" if "\\section" in text or "\\paragraph" in text else "md"
        problems = check_article(text, f, fmt)
        assert any(words in p for p in problems), (words, problems)


# --------------------------------------------------------------------- the offline writer passes


def test_the_offline_writer_passes_the_check_on_every_example_record(example_records, tmp_path):  # noqa: F811
    extra = [_record(tmp_path / "a", "Ohm's law", note="secret guidance"), _record(tmp_path / "b", "欧姆定律"),
             pi_record(tmp_path / "c")]
    writer = OfflineWriter()
    for path in [*example_records, *extra]:
        f = facts(path)
        for fmt in ("md", "latex"):
            for language in ("en", "zh-CN"):
                body = writer.write_body(f, fmt, language)
                assert check_article(body, f, fmt) == [], (path, fmt, language)


# --------------------------------------------------------------------- command line


def test_cli_writer_model_reports_the_fallback_reason(tmp_path, model_env):
    nb = tmp_path / "report.ipynb"
    path = pi_record(tmp_path / "report.dsh")
    script = [{"reply": {"content": GOOD_MD.replace("399.7677", "400.1")}}, {"reply": {"content": GOOD_MD}}]
    with ScriptedServer(script) as srv:
        env = {**os.environ, "DEEPSEEK_BASE_URL": srv.base_url}
        cmd = [sys.executable, "-m", "dsh_notebook.cli", "article", path.stem, "--notebook", str(nb), "--writer",
               "model"]
        bad = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120,
                             env=env)
        good = subprocess.run([*cmd, "--name", "good"], check=False, capture_output=True, text=True, timeout=120,
                              env=env)
    assert bad.returncode == 0, bad.stderr
    assert "offline writer wrote the article instead" in bad.stderr and "400.1" in bad.stderr
    assert "offline writer" in bad.stdout
    assert good.returncode == 0 and good.stderr == "" and "model writer, deepseek-chat" in good.stdout
    assert (tmp_path / "report.dsh" / "articles" / "good.md").read_text(encoding="utf-8") == GOOD_MD


def test_magic_writer_model_shows_the_writer_and_the_fallback_reason(tmp_path, model_env, new_kernel):
    from IPython.utils.capture import capture_output

    nb = tmp_path / "magic.ipynb"
    path = pi_record(tmp_path / "magic.dsh")
    model_env.setenv("DSH_NOTEBOOK_PATH", str(nb))
    ip = new_kernel()
    with ScriptedServer([{"reply": {"content": GOOD_MD}}]) as srv:
        model_env.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        with capture_output() as good:
            r = ip.run_cell(f"%reckon article {path.stem} --writer model")
        assert r.error_in_exec is None
        model_env.delenv("DEEPSEEK_API_KEY")
        with capture_output() as bad:
            r = ip.run_cell(f"%reckon article {path.stem} --writer model --format latex")
        assert r.error_in_exec is None
    assert "(model writer, deepseek-chat)" in good.outputs[-1].data["text/plain"]
    plain = bad.outputs[-1].data["text/plain"]
    assert "(offline writer)" in plain and "MISSING_CREDENTIAL" in plain
    assert "MISSING_CREDENTIAL" in bad.outputs[-1].data["text/html"]
    r = ip.run_cell(f"%reckon article {path.stem} --writer poet")
    assert type(r.error_in_exec).__name__ == "UsageError"


# --------------------------------------------------------------------- unsafe model articles


@pytest.mark.parametrize("extra, command", [
    ("\\InputIfFileExists{/etc/hostname}{}{}\n", "\\InputIfFileExists"),
    ("\\newread\\r \\openin\\r=/path/credentials.toml \\read\\r to\\a \\detokenize\\expandafter{\\a}\n", "\\newread"),
    ("\\@@input /etc/hostname \n", "\\@@input"),
])
def test_a_latex_body_reading_a_file_falls_back_naming_the_command(tmp_path, model_env, extra, command):
    path = pi_record(tmp_path / "home")
    with serve(GOOD_TEX + extra) as srv:
        model_env.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        result = write_article(path, tmp_path / "out", "latex", writer=ModelArticleWriter())
    assert result.writer == "offline" and command in result.fallback_reason, result.fallback_reason
    text = result.path.read_text(encoding="utf-8")
    assert "/etc/hostname" not in text and "credentials" not in text


def test_a_huge_article_falls_back_naming_the_limit(tmp_path, model_env):
    path = pi_record(tmp_path / "home")
    with serve(GOOD_MD + "The scaled resistance is about 400 ohm. " * 130_000) as srv:  # about 5 MB
        model_env.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        result = write_article(path, tmp_path / "out", "md", writer=ModelArticleWriter())
    assert result.writer == "offline" and "the limit is 100,000 characters" in result.fallback_reason
    assert len(result.path.read_text(encoding="utf-8")) < 100_000


SOURCE = "https://en.wikipedia.org/wiki/Electrical_resistivity_and_conductivity"


def lookup_record(home: Path) -> Path:
    e = Engine(home)
    e.record_start("Resistivity")
    e.record_lookup({"question": "What is the resistivity of copper?", "tier": "strict", "outcome": "answered",
                     "candidates": [{"url": SOURCE}], "used": [{"url": SOURCE}],
                     "synthesis": {"answer": "Copper's resistivity is 1.68×10⁻⁸ Ω·m.", "used": [0]}})
    e.set("rho", {"num": 1.68e-8, "dim": [3, 1, -3, -2, 0, 0, 0]})
    e.record_end("done")
    return e.last_closed


@pytest.mark.parametrize("extra, words", [
    ("<script>alert(1)</script>", "raw HTML"),
    ('<img src="https://tracker.example/p.png">', "raw HTML"),
    ("<div>x</div>", "raw HTML"),
    ("<!-- hidden -->", "raw HTML"),
    ("<https://tracker.example/>", "raw HTML"),
    ("![x](https://tracker.example/p.png)", "image"),
    ("![x](figure.png)", "image"),
    ("![x][ref]\n\n[ref]: https://tracker.example/p.png", "image"),
    ("[click](javascript:alert(1))", "javascript:"),
    ("[click](&#106;avascript:alert(1))", "javascript:"),
    ("[click](java\tscript:alert(1))", "javascript:"),
    ("[click](data:text/html,hi)", "links to"),
    ("[site](https://tracker.example/)", "links to"),
    ("[site](//tracker.example/)", "links to"),
    ("[site][r]\n\n[r]: https://tracker.example/", "links to"),
    (f"[site](http://{SOURCE[8:]})", "links to"),  # a source, but not https
    (f"[site]({SOURCE}?x=1)", "links to"),
    ("See https://tracker.example/ for more.", "not a source"),
    ("See www.tracker.example for more.", "not a source"),
])
def test_markdown_with_html_images_or_foreign_links_is_refused(tmp_path, extra, words):
    f = facts(lookup_record(tmp_path))
    problems = check_article(GOOD_MD + "\n" + extra + "\n", f, "md")
    assert any(words in p for p in problems), (extra, problems)


LOOKUP_MD = f"""# Resistivity

*{AUTHOR}*

## Question

**Resistivity**

## Answer

Copper's resistivity is 1.68×10⁻⁸ Ω·m.
"""


@pytest.mark.parametrize("extra", [
    f"Source: [Wikipedia]({SOURCE}).",
    f"Source: [Wikipedia](<{SOURCE}>).",
    f"Source: {SOURCE}.",  # the bare URL
    f"(source: {SOURCE.replace('_', chr(92) + '_')})",  # as the offline writer escapes it
    "See [the answer](#answer).",
    "In math, $a < b$ and $c > d$.",
])
def test_markdown_may_name_a_lookup_source_and_local_anchors(tmp_path, extra):
    f = facts(lookup_record(tmp_path))
    assert check_article(LOOKUP_MD + "\n" + extra + "\n", f, "md") == []


def test_the_offline_markdown_with_a_lookup_source_passes_the_check(tmp_path):
    f = facts(lookup_record(tmp_path))
    body = OfflineWriter().write_body(f, "md", "en")
    assert "en.wikipedia.org" in body and check_article(body, f, "md") == []
