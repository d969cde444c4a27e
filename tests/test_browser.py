"""The side panel in a real JupyterLab, driven in headless Chromium (issue 8).

* A session fixture copies ``notebooks/rc-circuit.ipynb`` into a temporary server root, runs it
  with ``dsh-notebook run --no-save`` (so its record lands in ``rc-circuit.dsh/`` beside it),
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
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
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
    run = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "run", "--no-save", NOTEBOOK], cwd=root, env=env,
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
        yield {"url": url, "root": root, "home": home, "notebook": root / NOTEBOOK, "log": base / "lab.log"}
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
    from dsh_notebook.notebook.paths import sidecar_for
    from dsh_notebook.notebook.records_view import record_list

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
