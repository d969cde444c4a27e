"""The side panel in a real JupyterLab, driven in headless Chromium (issue 8).

* A session fixture copies ``notebooks/rc-circuit.ipynb`` into a temporary server root, runs it
  with ``dsh-notebook run`` (its records land in ``rc-circuit.dsh/`` beside it, and the copy is
  saved with outputs naming them; ``--no-save`` would leave nothing on disk),
  and starts ``jupyter lab`` on a free 127.0.0.1 port with a token and ``--allow-root``, its
  own DSH_NOTEBOOK_HOME, config, settings and workspace folders (nothing of yours is read or
  written).
* Chromium is Debian's (``shutil.which("chromium")``), driven by Playwright for Python with
  ``executable_path`` and flags that keep it off the network; without it (or without
  Playwright or JupyterLab) the test is skipped with the reason.
* The test opens the notebook, opens the panel from its right-sidebar icon, checks that the
  Records tab lists exactly the notebook's records and that the academic toggle changes
  ``$DSH_NOTEBOOK_HOME/academic.json`` (and back). Screenshots go to ``test-artifacts/``
  (``DSH_TEST_ARTIFACTS`` overrides), kept after the run.
* The record output typeset (issue 18): in rc-circuit (its saved outputs) and in a notebook the
  test writes and runs with ``dsh-notebook run`` (subscripted and Greek slot names, a hidden note,
  one refused line), every line that carries LaTeX shows its source line as written and beneath it
  one MathJax element (``mjx-container``) whose assistive MathML holds the slot name as a symbol
  and, in order, the numbers and unit symbols of the line's plain ``text`` (read from the notebook
  file); no raw LaTeX is left; the refused line is shown in the theme's error colour with its code
  and message; "show all" reveals the hidden note and the math is typeset again; in a narrow window
  a wide formula scrolls sideways inside its block. A copy of rc-circuit without the ``latex``
  keys (a notebook saved before them) is drawn from the plain ``text``, with no math element.
* The ledger explorer widget as a person uses it (spec: research.md "The explorer"): a notebook
  written into the server root builds a ledger up to ``human-approval-requested`` (the event
  sequence of ``tests/test_ledger_explorer.py``'s ``build``) with the plain Python API in its
  first cell, beside itself as the kernel locates it through ``JPY_SESSION_NAME``, and shows
  ``LedgerExplorer(name="main")`` in its second. The test runs it with Run > Run All Cells,
  checks the decision, the predicates' reasons and the Claims / Sources / Timeline / Graph tabs,
  and, in a narrower window, that the graph and timeline scroll sideways and the buttons wrap
  (no label cut, nothing sticking out); then clicks Approve with a note, then Confirm, and reads
  the ledger file itself: one ``human-decision-recorded`` on the ``explorer`` channel (none
  before), a chain that verifies, and the widget showing the decision approved without buttons.
* The panel's Ledger tab lists the sources with their verdict (issue 21): a ``withdrawn`` source
  has a red badge, and its title's markup is shown as text.
* The dark theme (issue 22, item 5): with the theme setting at "JupyterLab Dark" the panel's
  computed background and text colours differ from the light theme's, and its text (plain, muted,
  the active tab, green, red and amber badges) keeps a contrast ratio of at least 4.5 in both.
* The panel's stylesheet leaves the notebook's ``AcademicToggle`` ipywidget alone (issue 22, item
  5): its button keeps JupyterLab's padding and its label is drawn inside it, which the check shows
  is not so with the panel's old unscoped ``button.dsh-academic-toggle`` rule.
* The record timeline's "show all" is a JupyterLab setting (``dsh-notebook/panel.jupyterlab-settings``
  in the user settings folder), read back on the next page load; nothing is kept in localStorage.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import unicodedata
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = "rc-circuit.ipynb"
TOKEN = "dsh-browser-test-token"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(os.environ.get("DSH_TEST_ARTIFACTS") or REPO / "test-artifacts")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _labextension_dir() -> Path | None:
    from jupyter_core.paths import jupyter_path

    for d in jupyter_path("labextensions"):
        if (Path(d) / "dsh-notebook" / "package.json").is_file():
            return Path(d) / "dsh-notebook"
    return None


@pytest.fixture(scope="session")
def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium); the browser test needs it")
    pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed (pip install '.[test]')")
    return path


@pytest.fixture(scope="session")
def lab(chromium, tmp_path_factory):
    """``{url, root, home, notebook}`` of a running JupyterLab with the notebook and its records."""
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (pip install '.[test]')")
    if _labextension_dir() is None:
        pytest.fail("the dsh-notebook labextension is not installed in this environment: `pip install .` (or -e .) "
                    "builds it from labextension/ with npm and installs it under share/jupyter/labextensions/")
    base = tmp_path_factory.mktemp("lab")
    root, home, config = base / "root", base / "home", base / "config"
    settings, workspaces, runtime = base / "settings", base / "workspaces", base / "runtime"
    for d in (root, home, config, settings, workspaces, runtime):
        d.mkdir()
    # no "Jupyter news" pop-up over the page
    news = settings / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    shutil.copy(REPO / "notebooks" / NOTEBOOK, root / NOTEBOOK)
    env = {**os.environ, "DSH_NOTEBOOK_HOME": str(home), "JUPYTER_CONFIG_DIR": str(config),
           "JUPYTER_RUNTIME_DIR": str(runtime)}
    env.pop("DSH_NOTEBOOK_PATH", None)
    run = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "run", NOTEBOOK], cwd=root, env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, f"dsh-notebook run failed:\n{run.stdout}\n{run.stderr}"
    port = _free_port()
    log = open(base / "lab.log", "w")  # noqa: SIM115 - open while the server runs, closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}", f"--LabApp.user_settings_dir={settings}",
         f"--LabApp.workspaces_dir={workspaces}", "--ServerApp.open_browser=False"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(f"jupyter lab did not start:\n{(base / 'lab.log').read_text()[-3000:]}")
                time.sleep(0.3)
        yield {"url": url, "root": root, "home": home, "notebook": root / NOTEBOOK, "log": base / "lab.log",
               "env": env}
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


@pytest.fixture
def page(lab, chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            pg = browser.new_page(viewport={"width": 1400, "height": 900})
            pg.set_default_timeout(30_000)
            yield pg
        finally:
            browser.close()


def _academic_enabled(home: Path) -> bool:
    return json.loads((home / "academic.json").read_text(encoding="utf-8"))["enabled"]


def test_the_panel_lists_the_records_and_switches_academic_mode(lab, page):
    from dsh_notebook.artifact.paths import sidecar_for
    from dsh_notebook.artifact.records import record_list

    expected = {r["id"] for r in record_list(sidecar_for(lab["notebook"]))}
    assert expected, "dsh-notebook run wrote no record beside the notebook"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    page.goto(f"{lab['url']}/lab/tree/{NOTEBOOK}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    # the record output drawn by the mime renderer
    page.wait_for_selector("[data-testid=dsh-record-output]")
    # open the panel from its right-sidebar icon (a click on the icon of an open panel would close it)
    panel = page.locator("[data-testid=dsh-panel]")
    icon = page.locator("li.lm-TabBar-tab[data-id='dsh-panel']")
    icon.wait_for()
    if not panel.is_visible():
        icon.click()
    panel.wait_for(state="visible")
    assert page.locator("[data-testid=dsh-notebook-path]").inner_text() == NOTEBOOK

    # Records: exactly the notebook's records
    page.locator("[data-testid=dsh-tab-records]").click()
    page.wait_for_selector("[data-testid=dsh-record-row]")
    rows = page.locator("[data-testid=dsh-record-row]")
    shown = {rows.nth(i).get_attribute("data-record-id") for i in range(rows.count())}
    assert shown == expected
    page.screenshot(path=str(ARTIFACTS / "browser-records.png"))

    # one record's timeline with its step cards
    rows.first.click()
    page.wait_for_selector("[data-testid=dsh-record-timeline]")
    assert page.locator("[data-testid=dsh-record-timeline] [data-testid=dsh-step-card]").count() >= 3
    # values in the units the cell shows them in (issue 18): R was given in kΩ, C in µF
    timeline = page.locator("[data-testid=dsh-record-timeline]").inner_text()
    assert "10 kΩ" in timeline and "470 µF" in timeline and "10000 Ω" not in timeline, timeline
    panel.screenshot(path=str(ARTIFACTS / "browser-panel-timeline.png"))

    # Academic: the toggle writes $DSH_NOTEBOOK_HOME/academic.json, both ways
    page.locator("[data-testid=dsh-tab-academic]").click()
    toggle = page.locator("[data-testid=dsh-academic-toggle]")
    toggle.wait_for()
    before = toggle.get_attribute("data-enabled") == "true"
    toggle.click()
    page.wait_for_selector(f"[data-testid=dsh-academic-toggle][data-enabled={str(not before).lower()}]")
    assert _academic_enabled(lab["home"]) is (not before)
    assert ("dsh-academic-on" in (toggle.get_attribute("class") or "")) is (not before)
    panel.screenshot(path=str(ARTIFACTS / "browser-panel-academic.png"))
    toggle.click()
    page.wait_for_selector(f"[data-testid=dsh-academic-toggle][data-enabled={str(before).lower()}]")
    assert _academic_enabled(lab["home"]) is before


# ----------------------------------------------------------------------------- typeset record output (issue 18)

MIME_RECORD = "application/vnd.dsh.record+json"
TYPESET_NOTEBOOK = "typeset-refused.ipynb"
TYPESET_CELL = """\
%%reckon Inlet air, one line refused on purpose
given T_in = 20 degC
given rho = 1.204 kg/m^3
given delta = 2 mm
note! For the article writer: the last line is refused on purpose.
m_A = @rho*@delta
x = @rho + @delta"""
# slot names the renderer shows as Greek letters (the rest as written, a `_` starting a subscript)
GREEK = {"tau": "τ", "rho": "ρ", "delta": "δ"}
# the MathML of one math block, whitespace removed (MathJax 3's assistive MathML, what a screen reader reads)
_MATHML = "e => { const m = e.querySelector('mjx-assistive-mml'); return m ? m.textContent.replace(/\\s+/g, '') : null; }"
# [head, subscript] of each subscript in a math block's MathML
_SUBSCRIPTS = "e => Array.from(e.querySelectorAll('mjx-assistive-mml msub')).map(s => Array.from(s.children).map(c => c.textContent))"
# the element's colour and the theme's error colour, both as the browser computes them
_COLOURS = """e => {
  const probe = document.createElement('span');
  probe.style.color = 'var(--jp-error-color1)';
  document.body.appendChild(probe);
  const theme = getComputedStyle(probe).color;
  probe.remove();
  return {shown: getComputedStyle(e).color, theme,
          defined: getComputedStyle(document.body).getPropertyValue('--jp-error-color1').trim() !== ''};
}"""


def _record_steps(path: Path) -> list[dict]:
    """The steps of the notebook file's one record output."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = [o["data"][MIME_RECORD]["steps"] for c in nb["cells"] if c["cell_type"] == "code"
             for o in c.get("outputs", []) if MIME_RECORD in o.get("data", {})]
    assert len(found) == 1, f"{path.name}: {len(found)} record outputs"
    return found[0]


def _tokens(text: str) -> list[str]:
    """The numbers and unit symbols (letter runs: Ω, µF, kg) of a plain-text value, compatibility
    forms folded (``m⁻³`` reads ``m−3``, as the MathML's superscript does)."""
    return re.findall(r"\d+(?:\.\d+)?|[^\W\d_]+", unicodedata.normalize("NFKC", text))


def _in_order(tokens: list[str], math: str) -> bool:
    math = unicodedata.normalize("NFKC", math)
    at = 0
    for t in tokens:
        at = math.find(t, at)
        if at < 0:
            return False
        at += len(t)
    return True


def _check_typeset(output, steps: list[dict]) -> int:
    """Every step with LaTeX in the record output: its source line in monospace beside one typeset
    math element that carries the slot's symbol and the values of the step's ``text``. Returns how
    many steps were checked."""
    from playwright.sync_api import expect

    typeset = [s for s in steps if s["ok"] and s.get("latex") and s["kind"] != "note!"]
    assert typeset, "the notebook's record output carries no LaTeX (written before issue 18?)"
    expect(output.locator("[data-testid=dsh-math] mjx-container")).to_have_count(len(typeset), timeout=30_000)
    assert not any("\\" in t for t in output.locator("[data-testid=dsh-math]").all_text_contents()), \
        "raw LaTeX left in a math block"
    for s in typeset:
        block = output.locator(f"[data-testid=dsh-math][data-line='{s['line']}']")
        expect(block).to_have_count(1)
        assert block.locator("mjx-container").count() == 1
        # the source line as written (the `@` form), in monospace, above the math
        beside = block.locator("xpath=..")
        assert s["source"] in [" ".join(t.split()) for t in beside.locator("code").all_text_contents()], \
            f"line {s['line']}: the source line {s['source']!r} is not shown beside its math"
        math = block.evaluate(_MATHML)
        assert math, f"line {s['line']}: no assistive MathML in {block.inner_html()[:300]}"
        parts, mparts = s["text"].split(" = "), math.split("=")
        assert len(mparts) == len(parts), f"line {s['line']}: {math!r} against {s['text']!r}"
        name = parts[0]
        head, _, sub = name.partition("_")
        assert mparts[0] == GREEK.get(head, head) + GREEK.get(sub, sub), f"line {s['line']}: name {mparts[0]!r}"
        if sub:
            assert [GREEK.get(head, head), GREEK.get(sub, sub)] in block.evaluate(_SUBSCRIPTS), \
                f"line {s['line']}: {name} is not a subscripted symbol"
        # the values: after the formula for an eval line (its symbols differ from the `@` form)
        first = 2 if s["kind"] == "eval" else 1
        for shown, drawn in zip(parts[first:], mparts[first:], strict=True):
            assert _tokens(shown), f"line {s['line']}: no value in {shown!r}"
            assert _in_order(_tokens(shown), drawn), \
                f"line {s['line']}: {drawn!r} lacks the numbers and units of {shown!r} ({_tokens(shown)})"
    return len(typeset)


def test_the_record_output_is_typeset_with_its_values(lab, page):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    steps = _record_steps(lab["notebook"])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{lab['url']}/lab/workspaces/typeset/tree/{NOTEBOOK}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    output = page.locator(".jp-OutputArea-output").filter(has=page.locator("[data-testid=dsh-record-output]"))
    expect(output).to_have_count(1)
    checked = _check_typeset(output, steps)
    assert any(s["kind"] == "eval" and "@" in s["source"] for s in steps if s.get("latex"))
    tau = next(s for s in steps if s["kind"] == "eval" and s["text"].startswith("tau = "))
    assert output.locator(f"[data-testid=dsh-math][data-line='{tau['line']}']").evaluate(_MATHML).startswith("τ=")
    assert checked == len([s for s in steps if s.get("latex")])
    page.set_viewport_size({"width": 1400, "height": 2200})  # the whole output in one picture
    output.screenshot(path=str(ARTIFACTS / "browser-record-typeset.png"))

    # a narrow window: the widest formula scrolls sideways inside its block, the cell does not widen
    page.set_viewport_size({"width": 560, "height": 900})
    blocks = output.locator("[data-testid=dsh-math]")
    try:
        page.wait_for_function(
            "els => els.some(e => e.scrollWidth > e.clientWidth + 1)", arg=blocks.element_handles(), timeout=10_000)
    except PlaywrightTimeout:
        widths = blocks.evaluate_all("bs => bs.map(e => [e.scrollWidth, e.clientWidth])")
        pytest.fail(f"no formula is wider than its block in a 560 px window (scroll, client widths: {widths})")
    for i in range(blocks.count()):
        if blocks.nth(i).evaluate("e => e.scrollWidth > e.clientWidth + 1"):
            assert blocks.nth(i).evaluate("e => getComputedStyle(e).overflowX") == "auto"
            _holds(page, blocks.nth(i).locator("mjx-container"), _REACHABLE, "cut off without a scrollbar")
    assert output.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the record output widens its cell"
    output.screenshot(path=str(ARTIFACTS / "browser-record-typeset-narrow.png"))
    page.set_viewport_size({"width": 1400, "height": 900})


def test_a_refused_line_is_red_with_its_code_beside_typeset_math(lab, page):
    import nbformat
    from playwright.sync_api import expect

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%load_ext dsh_notebook"),
                                         nbformat.v4.new_code_cell(TYPESET_CELL)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    path = lab["root"] / TYPESET_NOTEBOOK
    nbformat.write(nb, path)
    # run and saved as a person would (the refused cell makes the run exit 1; its outputs are saved)
    run = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "run", TYPESET_NOTEBOOK], cwd=lab["root"],
                         env=lab["env"], capture_output=True, text=True, timeout=300, check=False)
    steps = _record_steps(path)
    refused = [s for s in steps if not s["ok"]]
    assert len(refused) == 1 and refused[0]["code"], f"{run.stdout}\n{run.stderr}"
    bad = refused[0]
    hidden = next(s for s in steps if s["kind"] == "note!")

    page.goto(f"{lab['url']}/lab/workspaces/typeset-refused/tree/{TYPESET_NOTEBOOK}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    output = page.locator(".jp-OutputArea-output").filter(has=page.locator("[data-testid=dsh-record-output]"))
    expect(output).to_have_count(1)
    _check_typeset(output, steps)
    assert any("_" in s["source"].split("=")[0] for s in steps if s.get("latex"))  # a subscript was checked

    # the refused line: its source, code and message, in the theme's error colour
    row = output.locator("[data-testid=dsh-refused-row]")
    expect(row).to_have_count(1)
    expect(row).to_contain_text(f"L{bad['line']}")
    expect(row).to_contain_text(bad["source"])
    expect(row.locator("b")).to_have_text(bad["code"])
    expect(row).to_contain_text(" ".join(bad["error"].split()))
    colours = row.evaluate(_COLOURS)
    assert colours["defined"], "the theme defines no --jp-error-color1"
    assert colours["shown"] == colours["theme"], colours
    r, g, b = (int(x) for x in re.findall(r"\d+", colours["shown"])[:3])
    assert r > 2 * g and r > 2 * b, f"the refused line is not red: {colours['shown']}"
    output.screenshot(path=str(ARTIFACTS / "browser-record-refused.png"))

    # "show all" reveals the hidden note; the redrawn math is typeset again
    expect(output).not_to_contain_text(hidden["text"])
    output.locator("input.dsh-show-all").check()
    expect(output).to_contain_text(hidden["text"])
    _check_typeset(output, steps)


def test_an_output_written_before_latex_keeps_its_plain_lines(lab, page):
    """A notebook saved before the record output carried LaTeX: the lines are drawn from ``text``."""
    from playwright.sync_api import expect

    nb = json.loads(lab["notebook"].read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            for step in out.get("data", {}).get(MIME_RECORD, {}).get("steps", []):
                step.pop("latex", None)
    old = lab["root"] / "before-latex.ipynb"
    old.write_text(json.dumps(nb), encoding="utf-8")
    steps = _record_steps(old)
    page.goto(f"{lab['url']}/lab/workspaces/before-latex/tree/{old.name}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    output = page.locator(".jp-OutputArea-output").filter(has=page.locator("[data-testid=dsh-record-output]"))
    expect(output).to_have_count(1)
    given = next(s for s in steps if s["kind"] == "given")
    expect(output.locator("code", has_text=given["text"])).to_have_count(1)
    result = next(s for s in steps if s["kind"] == "eval")["text"].split(" = ")[-1]
    expect(output.locator(".dsh-result b", has_text=result).first).to_be_visible()
    assert output.locator("[data-testid=dsh-math], mjx-container").count() == 0


# ----------------------------------------------------------------------------- the ledger explorer

EXPLORER_NOTEBOOK = "ledger-explorer.ipynb"
# Cell 1: the event sequence of tests/test_ledger_explorer.py's build(), through the plain Python
# API, into the ledger beside the notebook as the kernel finds it (JPY_SESSION_NAME).
BUILD_CELL = """\
import hashlib
from dsh_notebook.artifact.paths import locate
from dsh_notebook.research import Actor, Ledger, ledger_path

SCOUT, BIB, EXT, CV = Actor("scout"), Actor("bibliographic_verifier"), Actor("extractor"), Actor("claim_verifier")
LEAD, AUDIT = Actor("lead"), Actor("citation_auditor")
SHA = hashlib.sha256(b"Aspirin reduced the risk of colorectal cancer by 24% over 20 years.").hexdigest()
led = Ledger(ledger_path(locate().notebook))


def ok(receipt):
    assert receipt["ok"], receipt


if not led.events():
    ok(led.append("question-posed", {"question_id": "q1", "text": "Does aspirin prevent colorectal cancer?"}, LEAD))
    ok(led.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1016/S0140-6736(10)61543-7",
                                      "title": "Aspirin trial", "authors": ["Rothwell"], "year": 2010}, SCOUT))
    ok(led.append("source-verified", {"source_id": "s1", "verdict": "verified", "resolver": "crossref",
                                      "metadata": {"title": "Long-term effect of aspirin on colorectal cancer",
                                                   "authors": ["Peter M Rothwell", "Michelle Wilson"],
                                                   "year": 2010, "doi": "10.1016/S0140-6736(10)61543-7"}}, BIB))
    ok(led.append("fulltext-linked", {"source_id": "s1", "locator": "fulltext/s1.txt", "sha256": SHA,
                                      "bytes": 67, "media_type": "text/plain"}, LEAD))
    ok(led.append("claim-extracted", {"claim_id": "c1", "source_id": "s1", "text": "Aspirin lowers CRC risk",
                                      "span": {"locator": "p1", "quote": "reduced the risk | by 24%",
                                               "fulltext_sha256": SHA}}, EXT))
    ok(led.append("claim-verified", {"claim_id": "c1", "verdict": "supported", "rationale": "quote"}, CV))
    ok(led.append("source-proposed", {"source_id": "s2", "kind": "arxiv", "identifier": "2101.00001",
                                      "title": "A preprint", "authors": ["Doe"], "year": 2021}, SCOUT))
    ok(led.append("source-verified", {"source_id": "s2", "verdict": "retracted", "resolver": "arxiv"}, BIB))
    ok(led.append("decision-proposed", {"decision_id": "d1", "question_id": "q1", "statement": "Probably yes",
                                        "claim_ids": ["c1"], "confidence": 0.7, "limitations": "one cohort"}, LEAD))
    ok(led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 1, "verdict": "pass"}, AUDIT))
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD))
print(led.path.relative_to(locate().notebook.parent), len(led.events()), "events")
"""
EXPLORER_CELL = 'from dsh_notebook.widgets import LedgerExplorer\nLedgerExplorer(name="main")'
NOTE = "checked the quote in the browser"


def _human_decisions(path: Path) -> list[dict]:
    from dsh_notebook.research import Ledger

    return [e for e in Ledger(path).events() if e["type"].endswith("human-decision-recorded")]


# Layout checks, each a predicate on one element polled until it holds (lumino lays widgets out in
# animation frames, so one reading right after a click or a resize could be a stale one).
_WHOLE_LABEL = "e => e.scrollWidth <= e.clientWidth"  # not cut to an ellipsis
# inside its row (the row's own scrollbar would be a poor way to reach a decision button)
_INSIDE = "e => e.getBoundingClientRect().right <= e.parentElement.getBoundingClientRect().right + 0.5"
# the ancestors, up to the output area, narrower than their content without letting the person
# scroll to the rest (overflow auto or scroll): they cut it off
_CUT_BY = """e => {
  const cut = [];
  for (let x = e.parentElement; x && !x.classList.contains('jp-OutputArea-output'); x = x.parentElement) {
    const o = getComputedStyle(x).overflowX;
    if (x.scrollWidth > x.clientWidth + 1 && o !== 'auto' && o !== 'scroll') cut.push(x.className + ' ' + o);
  }
  return cut;
}"""
_REACHABLE = f"e => ({_CUT_BY})(e).length === 0"


def _holds(page, locator, predicate: str, what: str) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(predicate, arg=locator.element_handle(), timeout=10_000)
    except PlaywrightTimeout:
        text = " ".join((locator.text_content() or "").split())[:60]
        pytest.fail(f"{text!r}: {what} (ancestors cutting it off: {locator.evaluate(_CUT_BY)})")


def test_the_ledger_explorer_records_a_confirmed_approval(lab, page):
    import nbformat
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    from dsh_notebook.artifact.ledgers import person_name
    from dsh_notebook.research import Ledger

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(BUILD_CELL),
                                         nbformat.v4.new_code_cell(EXPLORER_CELL)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, lab["root"] / EXPLORER_NOTEBOOK)
    ledger = lab["root"] / "ledger-explorer.dsh" / "ledger" / "main.jsonl"
    assert not ledger.exists()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    # a workspace of its own: the layout the other test left (its notebook, the side panel with
    # its own Approve buttons) is not restored here
    page.goto(f"{lab['url']}/lab/workspaces/ledger-explorer/tree/{EXPLORER_NOTEBOOK}?token={TOKEN}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=60_000)
    # the kernel connected (cells run before that are dropped by JupyterLab, outputs and all): the
    # status bar goes "No Kernel | Initializing", "... | Connecting", "... | Busy", then "Idle"
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Python 3 (ipykernel) | Idle", timeout=60_000)
    # Run > Run All Cells, as a person would
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()

    cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
    widget = cells.nth(1).locator(".jp-OutputArea-output")
    approve = widget.get_by_role("button", name="Approve", exact=True)
    try:
        approve.wait_for(state="visible", timeout=90_000)
    except PlaywrightTimeout:
        outputs = "\n---\n".join(page.locator(".jp-OutputArea").all_inner_texts())
        pytest.fail(f"the explorer did not render; the notebook's outputs:\n{outputs}\n"
                    f"server log:\n{lab['log'].read_text()[-3000:]}")
    expect(cells.nth(0).locator(".jp-OutputArea-output")).to_contain_text(
        "ledger-explorer.dsh/ledger/main.jsonl 11 events")
    assert ledger.is_file(), "the kernel wrote its ledger somewhere else than beside the notebook"

    # the decision awaiting the person, its three buttons and the predicates' reasons
    buttons = [widget.get_by_role("button", name=n, exact=True) for n in ("Approve", "Reject", "Needs revision")]
    for button in buttons:
        expect(button).to_be_visible()
        _holds(page, button, _WHOLE_LABEL, "the label is cut")
    expect(widget).to_contain_text("Probably yes")
    expect(widget).to_contain_text("awaiting_human")
    expect(widget).to_contain_text("Awaiting your decision")
    expect(widget).to_contain_text("can_request_human_approval")
    expect(widget).to_contain_text("revision 1 already awaits the person")
    expect(widget).to_contain_text("has no unresolved objections")
    expect(widget).to_contain_text("verified source, linked fulltext, verdict 'supported'")
    expect(widget).to_contain_text("11 event(s)")
    assert _human_decisions(ledger) == []  # nothing decided before the click
    widget.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "browser-explorer-decisions.png"))

    # the other tabs: claims, sources, timeline, graph
    tabs = {"Claims": ["Aspirin lowers CRC risk", "reduced the risk | by 24%", "supported"],
            "Sources": ["10.1016/S0140-6736(10)61543-7", "verified", "retracted", "not linked"],
            "Timeline": ["question-posed", "human-approval-requested", "citation_auditor"],
            "Graph": ["d1", "c1", "s1", "s2", "awaiting_human", "eligible", "retracted"]}
    for tab, texts in tabs.items():
        widget.get_by_role("tab", name=tab, exact=True).click()
        shown = widget.locator(".widget-tab-contents > :not(.lm-mod-hidden)")
        for text in texts:
            expect(shown).to_contain_text(text)
        if tab == "Graph":
            svg = shown.locator("svg[role=img]")
            expect(svg).to_be_visible()
            assert svg.locator("line, path").count() >= 2  # decision -> claim -> source edges
        widget.screenshot(path=str(ARTIFACTS / f"browser-explorer-{tab.lower()}.png"))

    # a narrower notebook: the graph and the timeline scroll sideways, the buttons wrap, nothing cut
    page.set_viewport_size({"width": 1000, "height": 900})
    for tab, inner in (("Graph", "svg[role=img]"), ("Timeline", "table")):
        widget.get_by_role("tab", name=tab, exact=True).click()
        content = widget.locator(f".widget-tab-contents > :not(.lm-mod-hidden) {inner}")
        expect(content).to_be_visible()
        _holds(page, content, _REACHABLE, "cut off without a scrollbar")
        if tab == "Graph":
            widget.screenshot(path=str(ARTIFACTS / "browser-explorer-graph-narrow.png"))
    widget.get_by_role("tab", name="Decisions", exact=True).click()
    expect(approve).to_be_visible()
    for button in buttons:
        _holds(page, button, _INSIDE, "sticks out of its row")
        _holds(page, button, _WHOLE_LABEL, "the label is cut")
    page.set_viewport_size({"width": 1400, "height": 900})

    # Approve asks for confirmation; nothing is written until Confirm
    widget.locator("input[placeholder='note (optional)']").fill(NOTE)
    approve.click()
    confirm = widget.get_by_role("button", name="Confirm", exact=True)
    expect(confirm).to_be_visible()
    expect(widget).to_contain_text(
        f"Record approved for decision d1 revision 1 (“Probably yes”) as {person_name()} with the note “{NOTE}”")
    for button in (confirm, widget.get_by_role("button", name="Cancel", exact=True)):
        _holds(page, button, _WHOLE_LABEL, "the label is cut")
    assert _human_decisions(ledger) == []
    page.screenshot(path=str(ARTIFACTS / "browser-explorer-confirm.png"))
    confirm.click()

    expect(widget).to_contain_text(f"Recorded: decision d1 approved by {person_name()} (seq 12)")
    for name in ("Approve", "Reject", "Needs revision", "Confirm"):
        expect(widget.get_by_role("button", name=name, exact=True)).to_have_count(0)
    expect(widget).to_contain_text("revision 1 · approved")
    expect(widget).to_contain_text(f"human decision, revision 1: approved by {person_name()} (explorer) — {NOTE}")
    expect(widget).not_to_contain_text("Awaiting your decision")
    page.screenshot(path=str(ARTIFACTS / "browser-explorer-approved.png"))
    widget.get_by_role("tab", name="Timeline", exact=True).click()
    row = rf"^12 .* human-decision-recorded d1 human human_adjudication {re.escape(person_name())} · explorer$"
    expect(widget.get_by_role("row", name=re.compile(row))).to_be_visible()

    recorded = _human_decisions(ledger)
    assert len(recorded) == 1
    assert recorded[0]["actor"] == {"role": "human", "authority": "human_adjudication", "by": person_name(),
                                    "channel": "explorer"}
    data = dict(recorded[0]["data"])
    assert data.pop("revision", 1) == 1  # the revision the person saw, where the event carries it
    assert data.pop("signature").startswith("-----BEGIN SSH SIGNATURE-----")  # the person's key (issue 15)
    assert data == {"decision_id": "d1", "verdict": "approved", "note": NOTE, "by": person_name()}
    assert Ledger(ledger).verify()["ok"]


# ----------------------------------------------------------------------------- a hostile reply (issue 14)

HOSTILE_NOTEBOOK = "hostile-reply.ipynb"
# Each payload, if it ever ran, would set window.__dshPwned and (script with a session) write a
# file through the contents API and post an approval to the decision route.
_RUN = ("window.__dshPwned=1;fetch('/api/contents/pwned.txt',{method:'PUT',headers:{'Content-Type':"
        "'application/json'},body:JSON.stringify({type:'file',format:'text',content:'x'})})")
HOSTILE_REPLY = (
    "The resistance is $R = \\rho L / A$, and\n\n$$P = I^2 R$$\n\n"
    f'<img src=x onerror="{_RUN}"> <script>{_RUN}</script> <svg onload="{_RUN}"><circle r="1"/></svg> '
    f'<iframe srcdoc="<script>parent.{_RUN}</script>"></iframe> '
    f"[click me](javascript:{_RUN}) ![chart](https://example.invalid/chart.png)\n"
)
HOSTILE_CELL = """\
import os
os.environ["DEEPSEEK_BASE_URL"] = {url!r}
os.environ["DEEPSEEK_API_KEY"] = "test-key-not-real"
%load_ext dsh_notebook
"""
CHAT_CELL = "%%chat\nWhat is the resistance of the wire?"


def test_a_hostile_model_reply_never_runs_in_the_page(lab, page):
    """A %%chat reply carrying <img onerror>, <script>, <svg onload>, an <iframe>, a javascript:
    link and an image, plus maths: in JupyterLab nothing of it runs (the page flag stays unset, no
    file appears through the contents API, no ledger is written), no image is fetched, and the
    maths is typeset by the page's MathJax."""
    import nbformat
    from playwright.sync_api import expect

    from dsh_notebook.llm.testing import ScriptedServer

    with ScriptedServer([{"reply": {"content": HOSTILE_REPLY}}]) as srv:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(HOSTILE_CELL.format(url=srv.base_url)),
                                             nbformat.v4.new_code_cell(CHAT_CELL)])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
        nbformat.write(nb, lab["root"] / HOSTILE_NOTEBOOK)
        requested: list[str] = []
        page.on("request", lambda r: requested.append(r.url))
        page.goto(f"{lab['url']}/lab/workspaces/hostile-reply/tree/{HOSTILE_NOTEBOOK}?token={TOKEN}")
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=60_000)
        expect(page.locator("#jp-main-statusbar")).to_contain_text("Python 3 (ipykernel) | Idle", timeout=60_000)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()
        outputs = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea-output")
        answer = outputs.filter(has_text="The resistance is").last
        expect(answer).to_contain_text("The resistance is", timeout=90_000)
        # the maths typeset (MathJax's elements), the markup shown as text
        expect(answer.locator("mjx-container").first).to_be_attached(timeout=30_000)
        assert answer.locator("mjx-container").count() >= 2
        for text in ("<img src=x onerror=", "<script>", "<svg onload=", "<iframe srcdoc=", "[click me](javascript:",
                     "[image: chart]"):
            expect(answer).to_contain_text(text)
        assert answer.locator("img, script, svg:not(mjx-container svg), iframe").count() == 0
        assert answer.locator("a[href^='javascript']").count() == 0
        page.wait_for_timeout(1500)  # give any handler that might have been attached a chance to fire
        assert page.evaluate("() => window.__dshPwned") is None
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        answer.screenshot(path=str(ARTIFACTS / "browser-hostile-reply.png"))
    assert not (lab["root"] / "pwned.txt").exists()
    assert not any("example.invalid" in u for u in requested)  # the image was never loaded
    assert not (lab["root"] / "hostile-reply.dsh" / "ledger").exists()


def test_the_panel_ledger_tab_shows_a_withdrawn_source(lab, page):
    """Issue 21: the ledger tab lists the sources with their verdict; a ``withdrawn`` one (an arXiv
    withdrawal) has a red badge; a title carrying markup is shown as text, never as HTML."""
    from dsh_notebook.research import Actor, Ledger, ledger_path

    led = Ledger(ledger_path(lab["notebook"], "issue21"))
    receipts = [
        led.append("source-proposed", {"source_id": "s-withdrawn", "kind": "arxiv", "identifier": "1605.08386",
                                       "title": "<b>Heat-bath</b> random walks", "authors": ["Doe"], "year": 2016},
                   Actor("scout")),
        led.append("source-verified", {"source_id": "s-withdrawn", "verdict": "withdrawn", "resolver": "arxiv"},
                   Actor("bibliographic_verifier")),
    ]
    assert all(r["ok"] for r in receipts), receipts
    page.goto(f"{lab['url']}/lab/tree/{NOTEBOOK}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    panel = page.locator("[data-testid=dsh-panel]")
    icon = page.locator("li.lm-TabBar-tab[data-id='dsh-panel']")
    icon.wait_for()
    if not panel.is_visible():
        icon.click()
    panel.wait_for(state="visible")
    page.locator("[data-testid=dsh-tab-ledger]").click()
    select = page.locator("[data-testid=dsh-ledger-select]")
    if select.count():
        select.select_option("issue21")
    row = page.locator("[data-testid=dsh-source][data-verdict=withdrawn]")
    row.wait_for()
    assert row.locator(".dsh-badge-error").inner_text() == "withdrawn"
    assert "<b>Heat-bath</b> random walks" in row.inner_text()
    assert row.locator("b").count() == 0  # the title's markup stays text
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(ARTIFACTS / "browser-ledger-withdrawn-source.png"))


# ----------------------------------------------------------------------------- dark theme (issue 22, item 5)

# the computed colours of the panel, its muted path line and its active tab, as the browser computes them
_PANEL_COLOURS = """() => {
  const get = sel => { const e = document.querySelector(sel); const s = getComputedStyle(e);
                       return {color: s.color, background: s.backgroundColor}; };
  return {panel: get('[data-testid=dsh-panel]'), muted: get('[data-testid=dsh-notebook-path]'),
          tab: get('.dsh-tab.dsh-tab-active'),
          verified: get('[data-testid=dsh-source][data-verdict=verified] .dsh-badge'),
          withdrawn: get('[data-testid=dsh-source][data-verdict=withdrawn] .dsh-badge'),
          inconclusive: get('[data-testid=dsh-source][data-verdict=inconclusive] .dsh-badge')};
}"""
# the text the contrast is checked on: plain, muted, the active tab, and green, red and amber badges
_READ = ("panel", "muted", "tab", "verified", "withdrawn", "inconclusive")


def _rgba(text: str) -> tuple[float, float, float, float]:
    """``rgb(1, 2, 3)`` / ``rgba(1, 2, 3, 0.5)`` / ``color(srgb 0.1 0.2 0.3 / 0.5)`` (a ``color-mix``)
    -> (r, g, b, a), r, g, b from 0 to 255."""
    m = re.fullmatch(r"rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)", text.strip())
    if m:
        return float(m[1]), float(m[2]), float(m[3]), float(m[4]) if m[4] is not None else 1.0
    m = re.fullmatch(r"color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)(?: / ([\d.]+))?\)", text.strip())
    assert m, f"not a computed colour: {text!r}"
    return float(m[1]) * 255, float(m[2]) * 255, float(m[3]) * 255, float(m[4]) if m[4] is not None else 1.0


def _contrast(fore: str, back: str) -> float:
    """WCAG 2 contrast ratio of text colour ``fore`` (blended over ``back``) against ``back``."""
    br, bg, bb, _ = _rgba(back)
    fr, fg, fb, fa = _rgba(fore)
    blended = (fr * fa + br * (1 - fa), fg * fa + bg * (1 - fa), fb * fa + bb * (1 - fa))

    def lum(rgb):
        c = [v / 255 for v in rgb]
        c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    hi, lo = sorted((lum(blended), lum((br, bg, bb))), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _open_panel(lab, page, workspace: str) -> None:
    page.goto(f"{lab['url']}/lab/workspaces/{workspace}/tree/{NOTEBOOK}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    panel = page.locator("[data-testid=dsh-panel]")
    icon = page.locator("li.lm-TabBar-tab[data-id='dsh-panel']")
    icon.wait_for()
    if not panel.is_visible():
        icon.click()
    panel.wait_for(state="visible")
    page.locator("[data-testid=dsh-tab-ledger]").click()
    page.wait_for_selector("[data-testid=dsh-ledger]")
    select = page.locator("[data-testid=dsh-ledger-select]")
    if select.count():  # other tests' ledgers beside it
        select.select_option("theme")
    page.wait_for_selector("[data-testid=dsh-source][data-verdict=inconclusive]")


def test_the_panel_follows_the_dark_theme_and_stays_readable(lab, page):
    """Switched to "JupyterLab Dark" (the theme setting, as Settings > Theme writes it), the panel's
    computed background and text colours change from the light theme's, and its text (the main
    text, the muted notebook path, the active tab, the green, red and amber verdict badges of a
    ledger's sources) keeps a contrast ratio of at least 4.5 with the panel's background (WCAG AA)."""
    from dsh_notebook.research import Actor, Ledger, ledger_path

    led = Ledger(ledger_path(lab["notebook"], "theme"))
    for sid, verdict in (("s-ok", "verified"), ("s-gone", "withdrawn"), ("s-unsure", "inconclusive")):
        receipts = [led.append("source-proposed", {"source_id": sid, "kind": "arxiv", "identifier": "1605.08386",
                                                   "title": f"Source {sid}", "authors": ["Doe"], "year": 2016},
                               Actor("scout")),
                    led.append("source-verified", {"source_id": sid, "verdict": verdict, "resolver": "arxiv"},
                               Actor("bibliographic_verifier"))]
        assert all(r["ok"] for r in receipts), receipts
    themes = lab["home"].parent / "settings" / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings"
    themes.parent.mkdir(parents=True, exist_ok=True)
    themes.write_text(json.dumps({"theme": "JupyterLab Light"}))
    try:
        _open_panel(lab, page, "theme-light")
        page.wait_for_selector("body[data-jp-theme-name='JupyterLab Light']", state="attached")
        light = page.evaluate(_PANEL_COLOURS)
        themes.write_text(json.dumps({"theme": "JupyterLab Dark"}))
        _open_panel(lab, page, "theme-dark")
        page.wait_for_selector("body[data-jp-theme-name='JupyterLab Dark']", state="attached")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.locator("[data-testid=dsh-panel]").screenshot(path=str(ARTIFACTS / "browser-panel-dark.png"))
        dark = page.evaluate(_PANEL_COLOURS)
    finally:
        themes.unlink(missing_ok=True)
    assert dark["panel"]["background"] != light["panel"]["background"], (light, dark)
    assert dark["panel"]["color"] != light["panel"]["color"], (light, dark)
    # the dark theme's background is dark and its text light
    assert _contrast("rgb(0, 0, 0)", dark["panel"]["background"]) < _contrast("rgb(0, 0, 0)", light["panel"]["background"])
    for theme, colours in (("light", light), ("dark", dark)):
        back = colours["panel"]["background"]
        for part in _READ:
            ratio = _contrast(colours[part]["color"], back)
            assert ratio >= 4.5, f"{theme} theme: the {part} text {colours[part]['color']} on {back}: contrast {ratio:.2f}"


# ----------------------------------------------------------------------------- the panel's CSS and the notebook's toggle (issue 22, item 5)

TOGGLE_NOTEBOOK = "academic-toggle.ipynb"
TOGGLE_CELL = "from dsh_notebook.widgets.academic import AcademicToggle\nAcademicToggle(poll=60)"
# where the button's label (icon and text) is drawn against the button's inner box, and its padding
_FITS = """e => { const r = document.createRange(); r.selectNodeContents(e);
  const t = r.getBoundingClientRect(), b = e.getBoundingClientRect(), s = getComputedStyle(e);
  const inner = {top: b.top + parseFloat(s.borderTopWidth), bottom: b.bottom - parseFloat(s.borderBottomWidth),
                 left: b.left + parseFloat(s.borderLeftWidth), right: b.right - parseFloat(s.borderRightWidth)};
  return {label: [t.top, t.bottom, t.left, t.right], inner: [inner.top, inner.bottom, inner.left, inner.right],
          fits: t.top >= inner.top - 0.5 && t.bottom <= inner.bottom + 0.5 && t.left >= inner.left - 0.5
                && t.right <= inner.right + 0.5,
          padding: s.padding, inPanel: !!e.closest('.dsh-panel')}; }"""
# the rule the panel's stylesheet had before it was scoped (issue 22): it reached the widget's button
_UNSCOPED = "button.dsh-academic-toggle {padding: 6px 10px; text-align: left;}"


def test_the_panel_style_leaves_the_notebook_academic_toggle_alone(lab, page):
    """The notebook's AcademicToggle ipywidget has the class ``dsh-academic-toggle`` on its button,
    as the panel's toggle does; with the side panel loaded, the widget keeps JupyterLab's own button
    padding (not the panel's 6px 10px) and its label "Academic mode" fits inside the button (nothing
    clipped), while the panel's own toggle still has the panel's style."""
    import nbformat
    from playwright.sync_api import expect

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(TOGGLE_CELL)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, lab["root"] / TOGGLE_NOTEBOOK)
    page.goto(f"{lab['url']}/lab/workspaces/academic-toggle/tree/{TOGGLE_NOTEBOOK}?token={TOKEN}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=60_000)
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Python 3 (ipykernel) | Idle", timeout=60_000)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()
    widget = page.locator(".jp-NotebookPanel .jp-OutputArea-output button.dsh-academic-toggle")
    expect(widget).to_contain_text("Academic mode", timeout=90_000)
    # the side panel is loaded in the page (its stylesheet with it), and its own toggle drawn
    panel = page.locator("[data-testid=dsh-panel]")
    icon = page.locator("li.lm-TabBar-tab[data-id='dsh-panel']")
    icon.wait_for()
    if not panel.is_visible():
        icon.click()
    page.locator("[data-testid=dsh-tab-academic]").click()
    own = page.locator("[data-testid=dsh-academic-toggle]")
    own.wait_for()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    widget.screenshot(path=str(ARTIFACTS / "browser-notebook-academic-toggle.png"))
    fits = widget.evaluate(_FITS)
    assert not fits["inPanel"]
    assert fits["padding"] != "6px 10px", fits
    assert fits["fits"], f"the widget's label is clipped: {fits}"
    assert own.evaluate(_FITS)["padding"] == "6px 10px"
    # the check sees the clipping the unscoped rule caused
    tag = page.add_style_tag(content=_UNSCOPED)
    clipped = widget.evaluate(_FITS)
    tag.evaluate("t => t.remove()")
    assert clipped["padding"] == "6px 10px" and not clipped["fits"], clipped


def test_show_all_is_kept_in_the_jupyterlab_settings(lab, page):
    """The record timeline's "show all" box is a JupyterLab setting of the panel (schema
    dsh-notebook:panel), written to the user settings folder when it is ticked and read back on the
    next page load (issue 22, item 5: no localStorage)."""
    from playwright.sync_api import expect

    saved = lab["home"].parent / "settings" / "dsh-notebook" / "panel.jupyterlab-settings"

    def show_all() -> bool | None:
        try:
            # JupyterLab writes the settings as JSON with // comments above each value
            text = re.sub(r"(?m)^\s*//.*$", "", saved.read_text(encoding="utf-8"))
            return json.loads(text).get("showAll")
        except (OSError, ValueError):
            return None

    assert show_all() is not True
    page.goto(f"{lab['url']}/lab/workspaces/show-all/tree/{NOTEBOOK}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    panel = page.locator("[data-testid=dsh-panel]")
    icon = page.locator("li.lm-TabBar-tab[data-id='dsh-panel']")
    icon.wait_for()
    if not panel.is_visible():
        icon.click()
    panel.wait_for(state="visible")
    page.locator("[data-testid=dsh-tab-records]").click()
    page.locator("[data-testid=dsh-record-row]").first.click()
    page.wait_for_selector("[data-testid=dsh-record-timeline]")
    box = page.locator("[data-testid=dsh-show-all]")
    expect(box).not_to_be_checked(timeout=30_000)
    box.check()
    deadline = time.monotonic() + 30
    while show_all() is not True and time.monotonic() < deadline:
        time.sleep(0.2)
    assert show_all() is True, saved.read_text(encoding="utf-8") if saved.exists() else f"{saved} not written"
    try:
        page.reload()
        page.wait_for_selector(".jp-Notebook", timeout=60_000)
        if not panel.is_visible():
            icon.click()
        page.locator("[data-testid=dsh-tab-records]").click()
        page.locator("[data-testid=dsh-record-row]").first.click()
        page.wait_for_selector("[data-testid=dsh-record-timeline]")
        expect(page.locator("[data-testid=dsh-show-all]")).to_be_checked(timeout=30_000)
        assert page.evaluate("() => Object.keys(window.localStorage).filter(k => k.startsWith('dsh-notebook'))") == []
    finally:
        saved.unlink(missing_ok=True)
