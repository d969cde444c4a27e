"""Articles from closed records (spec: reckoner.md section 3; upstream-facts.md 3.12)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_notebook.artifact.articles import write_article
from dsh_notebook.reckoner import Engine, read_record
from dsh_notebook.reckoner.articles import (
    FORBIDDEN,
    ArticleError,
    cut,
    facts,
    result_numbers,
    sanitize_latex,
)

ROOT = Path(__file__).resolve().parents[1]
BOOKS = ["reckoner-tour", "copper-conductor-resistance", "rc-circuit", "speed-of-sound-in-air", "ideal-gas-molar-volume"]


@pytest.fixture(scope="module")
def example_records(tmp_path_factory) -> list[Path]:
    """Closed records of the example notebooks, produced by running copies of them."""
    folder = tmp_path_factory.mktemp("books")
    out = []
    for book in BOOKS:
        nb = folder / f"{book}.ipynb"
        shutil.copy(ROOT / "notebooks" / f"{book}.ipynb", nb)
        p = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "run", str(nb)], capture_output=True,
                           text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        out += sorted((folder / f"{book}.dsh" / "records").glob("*.jsonl"))
    return [p for p in out if read_record(p).steps]


def test_articles_carry_every_result_and_no_hidden_note(example_records, tmp_path):
    hidden = []
    for path in example_records:
        rec = read_record(path)
        hidden += [r["content"]["text"] for r in rec.rows if r["tool"] == "record_message" and r["content"].get("hide")]
        md = write_article(path, tmp_path, "md").path.read_text(encoding="utf-8")
        tex = write_article(path, tmp_path, "latex").path.read_text(encoding="utf-8")
        from dsh_notebook.formats import latex_text as tex_escape
        from dsh_notebook.formats import markdown_text as md_escape

        assert md.startswith(f"# {md_escape(rec.title)}\n") and "## Calculations" in md  # its title is the record's
        assert rf"\title{{{tex_escape(rec.title)}}}" in tex and r"\section*{Calculations}" in tex
        for number in result_numbers(facts(path)):
            assert number in md, (rec.title, number)
        for secret in hidden:
            assert secret not in md and secret not in tex
        assert rec.id not in md and rec.id not in tex  # no record ids in the write-up
    assert hidden, "the tour has a note! line; it must have been recorded"


def test_number_cut_follows_upstream():
    assert cut(0.12724821149048626) == 0.1272
    assert cut(1.68e-8) == 1.68e-8 and cut(3.3006357816777757e-06) == 3.3006e-06
    assert cut(22413969.54) == 2.2414e7 and cut(0.0) == 0.0 and cut(-343.2312) == -343.2312


@pytest.mark.parametrize("cmd", FORBIDDEN)
def test_sanitizer_rejects_each_forbidden_command(cmd):
    with pytest.raises(ArticleError, match=rf"\\{cmd}"):
        sanitize_latex(f"Text \\{cmd}{{x}} more.")


@pytest.mark.parametrize("body, words", [
    ("\\begin{document} x \\end{document}", "document environment"),
    ("a { b", "'{'"),
    ("cost $x", "odd number"),
    ("   ", "empty"),
])
def test_sanitizer_rejects_unsafe_bodies(body, words):
    with pytest.raises(ArticleError, match=words):
        sanitize_latex(body)


def test_sanitizer_escapes_bare_percent_and_keeps_lookalikes():
    assert sanitize_latex("50% of \\% and \\letter") == "50\\% of \\% and \\letter"


def _record(home: Path, title: str, note: str | None = None) -> Path:
    e = Engine(home)
    e.record_start(title)
    e.set("V", {"num": 12, "dim": "volt"})
    e.set("R", {"num": 4.7, "dim": "ohm"})
    if note:
        e.record_message(note, hide=True)
    e.eval("@V/@R", "I")
    e.record_end("结论" if not title.isascii() else "done")
    return e.last_closed


def test_language_auto_and_latex_shell(tmp_path):
    zh = write_article(_record(tmp_path / "a", "欧姆定律"), tmp_path, "latex")
    assert zh.language == "zh-CN" and "\\documentclass{ctexart}" in zh.path.read_text(encoding="utf-8")
    en = write_article(_record(tmp_path / "b", "Ohm's law"), tmp_path, "latex")
    text = en.path.read_text(encoding="utf-8")
    assert en.language == "en" and "\\documentclass{article}" in text and text.startswith("% !TeX program = xelatex")
    assert en.path.parent.name == en.path.stem  # LaTeX goes into a folder named after the file
    forced = write_article(_record(tmp_path / "c", "Ohm's law"), tmp_path, "md", language="zh-CN", name="ohm")
    assert forced.path.name == "ohm.md" and "## 计算" in forced.path.read_text(encoding="utf-8")


def test_open_record_and_bad_arguments_are_refused(tmp_path):
    e = Engine(tmp_path)
    e.record_start("still open")
    with pytest.raises(ArticleError, match="still open"):
        write_article(tmp_path / "open-record.jsonl", tmp_path, "md")
    e.record_end()
    path = e.last_closed
    for kwargs, words in (({"fmt": "pdf"}, "format"), ({"language": "fr"}, "language"),
                          ({"fmt": "md", "compile": True}, "only LaTeX"), ({"name": "../x"}, "plain name")):
        with pytest.raises(ArticleError, match=words):
            write_article(path, tmp_path, **kwargs)


HAVE_TEX = bool(shutil.which("latexmk") and shutil.which("xelatex"))


@pytest.mark.skipif(HAVE_TEX, reason="latexmk and xelatex are installed here (this test checks the message shown without them)")
def test_compile_without_latexmk_names_the_missing_tool_and_keeps_the_tex(tmp_path):
    path = _record(tmp_path / "h", "Ohm's law")
    with pytest.raises(ArticleError, match="latexmk") as exc:
        write_article(path, tmp_path / "out", "latex", compile=True)
    assert "was written to" in str(exc.value)
    assert list((tmp_path / "out").rglob("*.tex"))


@pytest.mark.skipif(not HAVE_TEX,
                    reason="latexmk and xelatex are not installed (apt-get install latexmk texlive-xetex; .ci/run installs TeX Live only when it can within 5 minutes)")
def test_compile_builds_a_pdf(tmp_path):
    result = write_article(_record(tmp_path / "p", "Ohm's law"), tmp_path / "out", "latex", compile=True)
    assert result.pdf and result.pdf.stat().st_size > 1000


def test_article_from_the_command_line_and_the_magic(tmp_path, monkeypatch, new_kernel):
    nb = tmp_path / "report.ipynb"
    path = _record(tmp_path / "report.dsh", "Ohm's law", note="secret guidance")
    p = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "article", path.stem, "--notebook", str(nb),
                        "--format", "md"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    written = tmp_path / "report.dsh" / "articles" / f"reckoner-{path.stem}.md"
    assert written.exists() and "secret guidance" not in written.read_text(encoding="utf-8")
    bad = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "article", "nope", "--notebook", str(nb)],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2

    from IPython.utils.capture import capture_output

    monkeypatch.setenv("DSH_NOTEBOOK_PATH", str(nb))
    ip = new_kernel()
    with capture_output() as cap:
        r = ip.run_cell(f"%reckon article {path.stem} --format latex")
    assert r.error_in_exec is None
    html = cap.outputs[-1].data["text/html"]
    assert "<a href=" in html and ".tex" in html
    r = ip.run_cell("%reckon article nope")
    assert type(r.error_in_exec).__name__ == "UsageError"


def _record_with_lookup(home: Path, tier: str = "strict") -> Path:
    e = Engine(home)
    e.record_start("Resistance of 25 m of copper wire")
    url = "https://en.wikipedia.org/wiki/Electrical_resistivity_and_conductivity"
    e.record_lookup({"question": "What is the electrical resistivity of copper at 20 °C?", "tier": tier,
                     "outcome": "answered", "candidates": [{"url": url}], "used": [{"url": url}],
                     "synthesis": {"provider": "deepseek", "model": "deepseek-chat", "promptVersion": "search-extract/1",
                                   "answer": "Copper's resistivity at 20 °C is 1.68×10⁻⁸ Ω·m.", "used": [0]},
                     "durationMs": 12})
    e.record_lookup({"question": "What is the resistivity of unobtainium?", "tier": tier, "outcome": "insufficient",
                     "candidates": [], "used": [], "code": "SEARCH_INSUFFICIENT", "durationMs": 3})
    e.set("rho", {"num": 1.68e-8, "dim": [3, 1, -3, -2, 0, 0, 0]})
    e.set("L", {"num": 25, "dim": "metre"})
    e.set("A", {"num": 3.3e-6, "dim": [2, 0, 0, 0, 0, 0, 0]})
    e.eval("@rho*@L/@A", "R")
    e.record_end("The wire's resistance is about 0.127 ohm.")
    return e.last_closed


@pytest.mark.parametrize("fmt", ["md", "latex"])
def test_answered_lookups_reach_the_writer_and_the_article(tmp_path, fmt):
    from dsh_notebook.llm.article_prompt import writer_prompt
    from dsh_notebook.reckoner.articles import OfflineWriter, check_article, facts

    f = facts(_record_with_lookup(tmp_path / "calc"))
    [lk] = f.lookups  # the insufficient lookup is not a fact
    assert lk.answer == "Copper's resistivity at 20 °C is 1.68×10⁻⁸ Ω·m." and lk.sources[0].endswith("conductivity")
    prompt = writer_prompt(f, fmt)
    assert "a fact looked up at step 2" in prompt and "answer: Copper's resistivity at 20 °C is 1.68×10⁻⁸ Ω·m." in prompt
    art = write_article(_record_with_lookup(tmp_path / "again"), tmp_path / "out", fmt)
    text = art.path.read_text(encoding="utf-8")
    assert "From a reference lookup:" in text and "1.68×10⁻⁸ Ω·m" in text
    body = OfflineWriter().write_body(f, fmt, "en")
    assert check_article(body, f, fmt) == []


def test_open_tier_lookups_are_flagged_unverified(tmp_path):
    from dsh_notebook.llm.article_prompt import writer_prompt
    from dsh_notebook.reckoner.articles import OfflineWriter, facts

    f = facts(_record_with_lookup(tmp_path / "calc", tier="open"))
    assert "from the open web: unverified" in writer_prompt(f, "md")
    assert "(web-derived, unverified)" in OfflineWriter().write_body(f, "md", "en")


# --------------------------------------------------------------------- LaTeX hardening (file reads)


@pytest.mark.parametrize("body, command", [
    ("Text \\InputIfFileExists{/etc/hostname}{}{} more.", "\\InputIfFileExists"),
    ("\\newread\\r \\openin\\r=/path/credentials.toml \\read\\r to\\a \\detokenize\\expandafter{\\a}", "\\newread"),
    ("\\openin5=/etc/hostname", "\\openin"),
    ("x \\read5 to\\a", "\\read"),
    ("\\lstinputlisting{/etc/passwd}", "\\lstinputlisting"),
    ("\\verbatiminput{/etc/passwd}", "\\verbatiminput"),
    ("\\VerbatimInput{/etc/passwd}", "\\VerbatimInput"),
    ("\\subimport{/etc/}{passwd}", "\\subimport"),
    ("\\includegraphics{/etc/passwd}", "\\includegraphics"),
    ("\\includepdf{/x.pdf}", "\\includepdf"),
    ("\\directlua{os.execute('id')}", "\\directlua"),
    ("\\ShellEscape{id}", "\\ShellEscape"),
    ("\\scantokens{x}", "\\scantokens"),
    ("\\endlinechar=-1", "\\endlinechar"),
    ("\\expandafter\\x\\y", "\\expandafter"),
    ("\\UseName{input}{/etc/hostname}", "\\UseName"),
    ("\\input/etc/hostname", "\\input"),  # a command name followed by any non-letter
    ("\\input\t{/etc/hostname}", "\\input"),
    ("text\\input1", "\\input"),
])
def test_sanitizer_refuses_file_reads_and_tricks(body, command):
    with pytest.raises(ArticleError) as exc:
        sanitize_latex(body)
    assert command in str(exc.value)


@pytest.mark.parametrize("body, words", [
    ("\\@@input /etc/hostname ", "'@'"),  # the primitive \input under LaTeX's internal name
    ("\\@input{x}", "'@'"),
    ("\\inp^^75t{/etc/hostname}", "^^ notation"),  # ^^75 is u: TeX reads \input
    ("^^5cinput{/etc/hostname}", "^^ notation"),  # ^^5c is a backslash
    ("\\begin{filecontents}{x.tex}\\end{filecontents}", "{filecontents}"),
    ("\\begin{filecontents*}{x.tex}\\end{filecontents*}", "{filecontents*}"),
    ("\\begin{input}/etc/hostname \\end{input}", "{input}"),  # \begin{X} runs \X
    ("\\begin{@@input}/etc/hostname \\end{@@input}", "plain letters"),
    ("\\begin{verbatim}x\\end{verbatim}", "{verbatim}"),
    ("\\begin\\jobname x", "environment name in braces"),
    ("a\x00b", "control character"),
])
def test_sanitizer_refuses_internal_names_catcode_tricks_and_environments(body, words):
    with pytest.raises(ArticleError) as exc:
        sanitize_latex(body)
    assert words in str(exc.value)


def test_sanitizer_reads_commands_as_tex_does():
    # \\ is a line break (then the word "input"), \inputlineno is another command, \begin{align*} is fine
    body = "Line\\\\input here, line \\the\\inputlineno.\n\\begin{align*} x &= 1 \\end{align*}\n"
    assert sanitize_latex(body) == body


def test_upstream_list_is_kept_and_extended():
    from dsh_notebook.reckoner.articles import FORBIDDEN_EXTRA, UPSTREAM_FORBIDDEN

    assert FORBIDDEN[:len(UPSTREAM_FORBIDDEN)] == UPSTREAM_FORBIDDEN and "input" in UPSTREAM_FORBIDDEN
    for cmd in ("InputIfFileExists", "openin", "read", "detokenize", "includegraphics", "directlua", "openout"):
        assert cmd in FORBIDDEN_EXTRA and cmd in FORBIDDEN


@pytest.mark.skipif(not (HAVE_TEX and shutil.which("pdftotext")),
                    reason="needs latexmk, xelatex and pdftotext (apt-get install latexmk texlive-xetex poppler-utils)")
def test_compile_cannot_read_an_absolute_path(tmp_path):
    """Defence in depth: even a body the sanitizer missed cannot read outside the article's
    folder, because compile_latex runs TeX with openin_any=p (paranoid)."""
    from dsh_notebook.artifact.articles import compile_latex

    secret = tmp_path / "credentials.toml"
    secret.write_text("SECRETMARKER\n", encoding="utf-8")
    folder = tmp_path / "art"
    folder.mkdir()
    # the primitive read: a file that cannot be opened reads as at its end
    reader = folder / "reader.tex"
    reader.write_text("\\documentclass{article}\n\\begin{document}\n\\newread\\r \\openin\\r=" + str(secret) +
                      " \\ifeof\\r NOTREAD\\else\\read\\r to\\a \\a\\fi\n\\end{document}\n", encoding="utf-8")
    pdf = compile_latex(reader)
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert "NOTREAD" in text and "SECRETMARKER" not in text
    # \input of an absolute path: the run fails (a missing file with -halt-on-error) and no PDF has it
    inputter = folder / "inputter.tex"
    inputter.write_text("\\documentclass{article}\n\\begin{document}\nX\\input{" + str(secret) + "}Y\n"
                        "\\end{document}\n", encoding="utf-8")
    with pytest.raises(ArticleError, match="latexmk failed"):
        compile_latex(inputter)
    out = folder / "inputter.pdf"
    assert not out.exists() or "SECRETMARKER" not in subprocess.run(
        ["pdftotext", str(out), "-"], capture_output=True, text=True, check=False).stdout


def test_compile_runs_without_shell_escape_in_paranoid_mode():
    from dsh_notebook.artifact.articles import LATEXMK_COMMAND, TEX_ENVIRONMENT

    assert "-no-shell-escape" in LATEXMK_COMMAND and "-norc" in LATEXMK_COMMAND
    assert TEX_ENVIRONMENT["openin_any"] == "p" and TEX_ENVIRONMENT["openout_any"] == "p"


# --------------------------------------------------------------------- records with nothing computed


def _record_without_calculation(home: Path, refused: bool) -> Path:
    e = Engine(home)
    e.record_start("How long is the wire?")
    e.set("R", {"num": 4.7, "dim": "ohm"})
    if refused:
        assert not e.eval("@R/@L", "x")["ok"]  # L was never given: the only eval is refused
    e.record_end("The question gives no length.")
    return e.last_closed


@pytest.mark.parametrize("refused", [False, True])
def test_an_article_without_calculations_says_so_and_has_no_calculations_section(tmp_path, refused):
    from dsh_notebook.reckoner.articles import OfflineWriter, check_article

    f = facts(_record_without_calculation(tmp_path / "calc", refused))
    writer = OfflineWriter()
    md = writer.write_body(f, "md", "en")
    said = "stopped at a refused call" if refused else "No calculation could be made from the recorded conditions."
    assert said in md and "needed" not in md
    assert "## Calculations" not in md and "## Approach" in md and "## Conclusion" in md
    tex = writer.write_body(f, "latex", "en")
    assert said in tex and "\\section*{Calculations}" not in tex
    zh = writer.write_body(f, "md", "zh-CN")
    assert ("中止" if refused else "未能进行计算") in zh and "## 计算" not in zh and "无需计算" not in zh
    assert "\\section*{计算}" not in writer.write_body(f, "latex", "zh-CN")
    for fmt in ("md", "latex"):
        for language in ("en", "zh-CN"):
            assert check_article(writer.write_body(f, fmt, language), f, fmt) == []


# ------------------------------------------------------------ refused records (issue 16 item 4)


def _calls_record(tmp_path, calls) -> Path:
    e = Engine(tmp_path / "home")
    e.record_start("Beam deflection")
    for call in calls:
        call(e)
    rid = e.open_record["id"]
    e.record_end()
    return tmp_path / "home" / "records" / f"{rid}.jsonl"


def test_an_article_of_a_refused_record_says_so_and_concludes_no_result(tmp_path):
    path = _calls_record(tmp_path, [
        lambda e: e.set("F", {"num": 2500, "dim": "newton"}),
        lambda e: e.set("L", {"num": 3.6, "dim": "metre"}),
        lambda e: e.eval("@F*@L/4", "M"),
        lambda e: e.eval("@M + @F", "bad"),  # refused: N·m + N
    ])
    for lang in ("en", "zh-CN"):
        md = write_article(path, tmp_path / lang, language=lang).path.read_text(encoding="utf-8")
        conclusion = md.split("## ", 4)[-1]
        assert "ENGINE\\_INCOMPATIBLE\\_DIMENSION" in conclusion and "6" in conclusion  # the row and the code
        assert "2250" not in conclusion  # never the refused calculation's last value as its result
        assert ("no result is concluded" in conclusion) if lang == "en" else ("不给出结论" in conclusion)


def test_a_refusal_along_the_way_is_named_beside_the_result(tmp_path):
    path = _calls_record(tmp_path, [
        lambda e: e.set("F", {"num": 2500, "dim": "newton"}),
        lambda e: e.eval("@F + 1", "x"),  # refused, then the calculation goes on
        lambda e: e.eval("@F*2", "y"),
    ])
    md = write_article(path, tmp_path / "a").path.read_text(encoding="utf-8")
    conclusion = md.split("## Conclusion", 1)[1]
    assert "The calculation gives y = 5000 N." in conclusion
    assert "Refused along the way" in conclusion and "row 3 (eval)" in conclusion


def test_a_model_writer_is_not_asked_for_a_refused_record(tmp_path):
    from dsh_notebook.reckoner.articles import article_body

    class Asked:
        name = "model"
        calls = 0

        def write_body(self, f, fmt, language):
            Asked.calls += 1
            return "# anything"

    path = _calls_record(tmp_path, [lambda e: e.set("F", {"num": 1, "dim": "newton"}), lambda e: e.eval("@G", "x")])
    body, used, reason = article_body(facts(path), "md", "en", Asked())
    assert Asked.calls == 0 and used == "offline" and "refused calls (row 3: ENGINE_SLOT_NOT_FOUND)" in reason
    assert "ENGINE\\_SLOT\\_NOT\\_FOUND" in body


def test_every_refusal_is_named_and_the_stopping_one_is_the_last_call(tmp_path):
    path = _calls_record(tmp_path, [
        lambda e: e.set("a", {"num": 2, "dim": "metre"}),
        lambda e: e.eval("@a + 1", "p"),  # refused, row 3
        lambda e: e.eval("@a*2", "x"),
        lambda e: e.eval("@a + 1", "q"),  # refused, row 5: the calculation stops here
        lambda e: e.call("record_message", {"text": 5}),  # refused note, row 6: not a calculation
    ])
    md = write_article(path, tmp_path / "a").path.read_text(encoding="utf-8")
    conclusion = md.split("## Conclusion", 1)[1]
    assert conclusion.index("row 5 (eval)") < conclusion.index("It stopped there")
    assert "row 3 (eval)" in conclusion and "row 6 (record\\_message)" in conclusion
    assert "x = 4" not in conclusion


def test_a_closing_text_never_concludes_a_stopped_calculation(tmp_path):
    e = Engine(tmp_path / "home")
    e.record_start("Stopped")
    e.set("a", {"num": 2, "dim": "metre"})
    e.eval("@a*2", "x")
    e.get("missing")  # refused: the last call
    e.record_end("The answer is x = 4 m.")
    md = write_article(e.last_closed, tmp_path / "a").path.read_text(encoding="utf-8")
    assert "The answer is x = 4 m." not in md and "no result is concluded" in md
    assert "stopped at a refused call" in md.split("## Approach", 1)[1]


def test_a_title_with_line_breaks_stays_one_heading(tmp_path):
    e = Engine(tmp_path / "home")
    e.record_start("Line one\n=====\n# Injected heading\n\n- item")
    e.set("a", {"num": 2, "dim": "metre"})
    e.eval("@a*2", "x")
    e.record_end()
    md = write_article(e.last_closed, tmp_path / "a").path.read_text(encoding="utf-8")
    assert md.splitlines()[0] == "# Line one ===== \\# Injected heading - item"
    assert sum(1 for line in md.splitlines() if line.startswith("# ")) == 1
    tex = write_article(e.last_closed, tmp_path / "b", "latex").path.read_text(encoding="utf-8")
    title = next(line for line in tex.splitlines() if line.startswith("\\title{"))
    assert title.endswith("}") and "\n" not in title


# --------------------------------------------------------------------- numbers: the engine's formatter


def test_numbers_print_as_the_engine_formats_them_after_the_cut():
    """Issue 22 item 1: the articles' numbers come from the engine's formatter
    (display.num_text without a digit limit) after the cut; whole numbers up to 1e15 in full."""
    from dsh_notebook.reckoner.articles import number_text

    assert number_text(0.12724821149048626) == "0.1272"
    assert number_text(1.68e-8) == "1.68×10⁻⁸"
    assert number_text(1.5e12) == "1500000000000"  # 12 significant digits would give 1.5×10¹²
    assert number_text(1e16) == "1×10¹⁶"
    assert number_text(22413969.54) == "22414000"
    assert number_text(complex(3, -4.00004)) == "3-4j"


def test_an_article_of_complex_arrays_is_written_with_cut_parts(tmp_path):
    """Issue 22 item 1: a complex array with a part below 1e-4 made the article writer fail
    (ValueError from its own number formatter); each part now prints cut, in the ×10 form."""
    e = Engine(tmp_path / "calc")
    e.record_start("Complex impedances")
    assert e.set("c", {"array": [{"re": 1, "im": 2}, {"re": 0.123456, "im": -1e-8}], "dim": "ohm"})["ok"]
    assert e.set("Y", {"re": 1e-6, "im": -2.5e-7, "dim": "siemens"})["ok"]
    assert e.eval("@c*3", "c3")["ok"]
    e.record_end("Done.")
    md = write_article(e.last_closed, tmp_path / "out", "md").path.read_text(encoding="utf-8")
    assert "c = [1+2j, 0.1235-1×10⁻⁸j] Ω" in md and "c3 = [3+6j, 0.3704-3×10⁻⁸j] Ω" in md
    tex = write_article(e.last_closed, tmp_path / "out", "latex").path.read_text(encoding="utf-8")
    assert r"Y = (1 \times 10^{-6} - 2.5 \times 10^{-7}\,j)\,\mathrm{S}" in tex  # never 1e-06 inside LaTeX
