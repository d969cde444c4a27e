"""The one escaper per format, superscript table and timestamp (issue 22, item 2:
``dsh_notebook.formats``), and the views that use them."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from test_magic import bundle

from dsh_notebook.formats import latex_text, markdown_text, superscript, utc_now

# Each LaTeX special character and what a LaTeX document must contain to print it, written by hand.
LATEX = [
    ("\\", r"\textbackslash{}"),
    ("{", r"\{"),
    ("}", r"\}"),
    ("$", r"\$"),
    ("&", r"\&"),
    ("#", r"\#"),
    ("^", r"\^{}"),
    ("_", r"\_"),
    ("%", r"\%"),
    ("~", r"\~{}"),
]


@pytest.mark.parametrize(("char", "tex"), LATEX)
def test_latex_text_escapes_each_special_character(char, tex):
    assert latex_text(f"a{char}b") == f"a{tex}b"


@pytest.mark.parametrize(("char", "tex"), LATEX)
def test_latex_text_escapes_a_backslash_followed_by_each(char, tex):
    # the replacement's own braces are never escaped again (the old render.py copy wrote
    # a\textbackslash\{\}b for a\b)
    assert latex_text(f"a\\{char}b") == rf"a\textbackslash{{}}{tex}b"


def test_latex_text_the_issue_example_and_a_mixed_line():
    assert latex_text("a\\b") == r"a\textbackslash{}b"
    assert latex_text(r"C:\new {x}_1 50% & $5 #2 ~ ^") == (
        r"C:\textbackslash{}new \{x\}\_1 50\% \& \$5 \#2 \~{} \^{}")
    assert latex_text("127 mΩ, 20 °C") == "127 mΩ, 20 °C"


def test_markdown_text_is_literal_and_holds_no_html():
    assert markdown_text("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert markdown_text(r"a*b_c [x](y) #1 | `z` $5 \n") == r"a\*b\_c \[x\](y) \#1 \| \`z\` \$5 \\n"


def test_superscript_and_utc_now():
    assert superscript(-12) == "⁻¹²" and superscript(3) == "³" and superscript("m2") == "m²"
    stamp = utc_now()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp), stamp
    assert datetime.fromisoformat(stamp).tzinfo is not None
    assert datetime.fromisoformat(stamp).utcoffset() == datetime.now(UTC).utcoffset()


def test_a_reckon_note_shows_each_special_character_once_escaped(sh):  # noqa: F811
    _, cap = sh.reckon("given x = 2 m\nnote path C:\\temp {a}_1 & 50% #3 ~ ^ $5\nend ok")
    data = bundle(cap).data
    assert (r"\text{path C:\textbackslash{}temp \{a\}\_1 \& 50\% \#3 \~{} \^{} \$5}"
            in data["text/latex"]), data["text/latex"]
    assert r"\textbackslash\{" not in data["text/latex"]
    assert r"path C:\\temp {a}\_1 &amp; 50% \#3 ~ ^ \$5" in data["text/markdown"], data["text/markdown"]


def test_no_other_copy_of_the_tables_or_escapers():
    """Every module takes the superscript table and the LaTeX escaper from dsh_notebook.formats
    (the copies drifted: one escaped its own braces)."""
    from pathlib import Path

    import dsh_notebook

    root = Path(dsh_notebook.__file__).parent
    copies = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "formats.py":
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ('"-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"', '"⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789"', r'r"\textbackslash{}"',
                       '"\\\\textbackslash{}"'):
            if needle in text:
                copies.append(f"{path.relative_to(root)}: {needle}")
    assert copies == []
    from dsh_notebook.formats import FROM_SUPERSCRIPTS

    assert superscript(-205).translate(FROM_SUPERSCRIPTS) == "-205"
