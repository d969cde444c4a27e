"""The ``%%reckon`` record view through Jinja2 (issue 22, item 3): the HTML keeps its structure and
classes, every text from the cell shows as text, and a notebook rendered by the previous renderer
(``reckon-render/3``, hand-built HTML, ``tests/data/before-jinja``) still verifies, check 7
comparing it number by number."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import nbformat

from dsh_notebook.artifact.seal import verify
from dsh_notebook.reckon.cell import ReckonSession, parse_options, run_cell
from dsh_notebook.reckon.render import bundle
from dsh_notebook.reckoner import Engine
from dsh_notebook.version import RENDERER_VERSION

sys.path.insert(0, str(Path(__file__).parent))
from test_verify import cli  # noqa: E402 - the same helper

DATA = Path(__file__).parent / "data" / "before-jinja"


def rendered(tmp_path: Path, head: str, body: str) -> dict:
    out = run_cell(ReckonSession(Engine(tmp_path / "home", recover=False)), parse_options(head), body, {})
    return bundle(out, {})[0]


def test_the_html_view_keeps_its_structure_one_line_per_row(tmp_path):
    data = rendered(tmp_path, "Ohm's law", "given V = 12 V\ngiven R = 4.7 ohm\nnote! hidden\nnote a lamp\n"
                                           "I = @V/@R in mA\nI2 = @V + @R\nshow I")
    assert data["text/html"].split("\n") == [
        '<div class="dsh-reckon"><p class="tex2jax_ignore mathjax_ignore"><b>Ohm&#39;s law</b> — record refused</p>',
        '<table class="dsh-steps">',
        r'<tr><td>1</td><td style="text-align:left">$\displaystyle V = 12\,\mathrm{V}$</td></tr>',
        r'<tr><td>2</td><td style="text-align:left">$\displaystyle R = 4.7\,\Omega$</td></tr>',
        '<tr><td>4</td><td style="text-align:left" class="tex2jax_ignore mathjax_ignore"><i>a lamp</i></td></tr>',
        r'<tr><td>5</td><td style="text-align:left">$\displaystyle I = \frac{V}{R} = '
        r'\frac{\left(12\,\mathrm{V}\right)}{\left(4.7\,\Omega\right)} = 2553.2\,\mathrm{mA}$</td></tr>',
        '<tr style="color:#c62828"><td>✗ 6</td><td style="text-align:left"><code>I2 = @V + @R</code><br>'
        '<b>ENGINE_INCOMPATIBLE_DIMENSION</b>: &#39;+&#39; at position 6 combines @V [2,1,-3,-1,0,0,0] (volt) with '
        '@R [2,1,-3,-2,0,0,0] (ohm); both sides of + and - must have the same vector: check the formula or the '
        'units of the slots.</td></tr>',
        '<tr style="color:#c62828"><td colspan="2" style="text-align:left"><i>(line 7 was not run: the cell stops '
        'at the first refused line)</i></td></tr>',
        '</table></div>',
    ]


def test_markup_in_a_title_note_or_closing_text_shows_as_text(tmp_path):
    data = rendered(tmp_path, '<img src=x onerror="alert(1)"> & co',
                    "note <script>alert(2)</script> C:\\lab\\{x}\ngiven x = 2 m\nend <b>done</b> & 'ok'")
    page = data["text/html"]
    assert "<script" not in page and "<img" not in page and "<b>done" not in page
    assert "<b>&lt;img src=x onerror=&#34;alert(1)&#34;&gt; &amp; co</b>" in page
    assert r"<i>&lt;script&gt;alert(2)&lt;/script&gt; C:\lab\{x}</i>" in page
    assert "<i>&lt;b&gt;done&lt;/b&gt; &amp; &#39;ok&#39;</i>" in page
    # the same note in the LaTeX output, through the one escaper: a backslash once, braces escaped
    assert r"\text{<script>alert(2)</script> C:\textbackslash{}lab\textbackslash{}\{x\}}" in data["text/latex"]


def test_the_renderer_version_names_the_jinja2_view():
    assert RENDERER_VERSION == "reckon-render/4"


def test_a_notebook_rendered_by_reckon_render_3_still_verifies(tmp_path):
    folder = tmp_path / "nb"
    shutil.copytree(DATA, folder)
    nb = folder / "render-3.ipynb"
    stored = json.loads(nb.read_text(encoding="utf-8"))
    html = "".join(stored["cells"][1]["outputs"][0]["data"]["text/html"])
    assert "Ohm&#x27;s law for a &quot;12 V&quot; lamp" in html  # html.escape's entities, as /3 wrote them
    assert r"Path: C:\lab\bench{2}; the set {a, b} &amp;" in html
    found = [f for f in verify(nb) if f.check == 7]
    assert [(f.subject, f.ok) for f in found] == [("cell 2", True), ("cell 3", True)], found
    assert all("made by an older version (reckon-render/3), compared in SI and number by number" in f.detail
               for f in found), found
    p = cli("verify", str(nb))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "render-3.ipynb: verified" in p.stdout


def test_an_edited_number_in_a_reckon_render_3_output_is_still_found(tmp_path):
    folder = tmp_path / "nb"
    shutil.copytree(DATA, folder)
    nb = folder / "render-3.ipynb"
    book = nbformat.read(str(nb), as_version=4)
    out = book.cells[1].outputs[0]
    assert "2553.2" in out["data"]["text/html"]
    out["data"]["text/html"] = out["data"]["text/html"].replace("2553.2", "2653.2")
    nbformat.write(book, str(nb))
    bad = [f.detail for f in verify(nb) if f.check == 7 and f.ok is False]
    assert bad and "its text/html output shows 2653.2, a number record" in bad[0], bad
    assert "made by an older version (reckon-render/3)" in bad[0]
