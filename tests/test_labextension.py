"""Packaging of the JupyterLab side panel (issue 8, parts 2-3).

* The npm lockfile names no registry host (``labextension/.npmrc``:
  ``omit-lockfile-registry-resolved=true``), and builds use @jupyter/builder.
* The installed package ships the prebuilt extension under
  ``share/jupyter/labextensions/dsh-notebook/`` (built by ``pip install .`` through
  hatch-jupyter-builder), with ``install.json``; ``jupyter labextension list`` shows it
  enabled and OK when JupyterLab is installed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dsh_notebook

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / "labextension"


def test_the_lockfile_names_no_registry_host():
    assert "omit-lockfile-registry-resolved=true" in (LAB / ".npmrc").read_text().split()
    lock = json.loads((LAB / "package-lock.json").read_text())
    resolved = [name for name, pkg in lock["packages"].items() if "resolved" in pkg]
    assert resolved == [], f"package-lock.json has resolved URLs for {resolved[:5]}"


def test_the_package_builds_with_jupyter_builder_into_the_named_folder():
    pkg = json.loads((LAB / "package.json").read_text())
    assert pkg["name"] == "dsh-notebook"
    assert "@jupyter/builder" in pkg["devDependencies"]
    assert pkg["jupyterlab"]["outputDir"] == "../dsh_notebook/labextension"
    assert dsh_notebook._jupyter_labextension_paths() == [{"src": "labextension", "dest": "dsh-notebook"}]


def _installed() -> Path | None:
    from jupyter_core.paths import jupyter_path

    for d in jupyter_path("labextensions"):
        if (Path(d) / "dsh-notebook" / "package.json").is_file():
            return Path(d) / "dsh-notebook"
    return None


def test_the_prebuilt_extension_is_installed():
    where = _installed()
    assert where is not None, ("the dsh-notebook labextension is not installed: `pip install .` (or -e .) builds it "
                               "with npm from labextension/ and installs it under share/jupyter/labextensions/")
    meta = json.loads((where / "package.json").read_text())
    assert meta["name"] == "dsh-notebook"
    assert (where / meta["jupyterlab"]["_build"]["load"]).is_file()
    if not where.is_symlink():  # `jupyter-builder develop` links the build output, which has no install.json
        assert json.loads((where / "install.json").read_text())["packageName"] == "dsh-notebook"


def test_jupyter_labextension_list_shows_it_enabled():
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (it is optional: pip install jupyterlab)")
    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_CONFIG_DIR",)}
    out = subprocess.run([sys.executable, "-m", "jupyterlab.labextensions", "list"], capture_output=True, text=True,
                         timeout=120, env=env, check=False)
    text = out.stdout + out.stderr
    # the extension's own line ("dsh-notebook v0.1.0 enabled OK ..."), not a path that happens to
    # contain the name (a checkout in a folder called dsh-notebook)
    line = next((ln for ln in text.splitlines() if ln.split()[:1] == ["dsh-notebook"]), "")
    assert "enabled" in line and "OK" in line, text


# ----------------------------------------------------------------------------- issue 22, item 5

STYLE = LAB / "style"
ROOTS = (".dsh-panel", ".dsh-record-renderer")
# a colour written out instead of a theme variable: #rgb, #rrggbb(aa), rgb()/rgba()/hsl()
_COLOUR = re.compile(r"#[0-9a-fA-F]{3,8}\b|\b(?:rgba?|hsla?)\s*\(")


def _selectors(css: str) -> list[str]:
    """Every selector of every rule in a stylesheet (comments removed; no @media blocks here)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
    assert "@media" not in css and "@supports" not in css, "nested rules: extend _selectors"
    heads = re.findall(r"([^{}]+)\{[^{}]*\}", css)
    return [s.strip() for head in heads for s in head.split(",") if s.strip() and not s.strip().startswith("@")]


def test_every_panel_style_rule_is_scoped_under_the_panel_or_the_record_renderer():
    """The panel's CSS never reaches a notebook's widgets: the AcademicToggle ipywidget's button has
    the class ``dsh-academic-toggle`` too (widgets/academic.py), and an unscoped
    ``button.dsh-academic-toggle`` rule with the panel's padding clipped its label in JupyterLab 4.6
    and Notebook 7."""
    from dsh_notebook.widgets import academic

    assert 'add_class("dsh-academic-toggle")' in Path(academic.__file__).read_text(encoding="utf-8")
    selectors = [s for f in sorted(STYLE.glob("*.css")) for s in _selectors(f.read_text(encoding="utf-8"))]
    assert len(selectors) > 50, selectors
    unscoped = [s for s in selectors if not any(s == r or s.startswith((r + " ", r + "."))
                                                for r in ROOTS)]
    assert unscoped == [], f"rules not under {ROOTS}: {unscoped}"
    toggle = [s for s in selectors if "dsh-academic-toggle" in s]
    assert toggle and all(s.startswith(".dsh-panel ") for s in toggle), toggle


def test_the_panel_uses_only_theme_colours():
    """No colour is written out in the stylesheets or the TypeScript: only JupyterLab's theme
    variables (``--jp-...``), so the dark theme works."""
    files = sorted(STYLE.glob("*.css")) + sorted((LAB / "src").rglob("*.ts"))
    found = {f.relative_to(LAB).as_posix(): _COLOUR.findall(f.read_text(encoding="utf-8")) for f in files}
    assert {k: v for k, v in found.items() if v} == {}
    css = (STYLE / "base.css").read_text(encoding="utf-8")
    assert len(re.findall(r"var\(--jp-[a-z0-9-]+\)", css)) > 40


def test_preferences_live_in_the_settings_registry():
    """The panel's preferences are a JupyterLab settings schema (read and written through
    ISettingRegistry), not localStorage."""
    pkg = json.loads((LAB / "package.json").read_text())
    assert pkg["jupyterlab"]["schemaDir"] == "schema"
    assert "@jupyterlab/settingregistry" in pkg["dependencies"]
    schema = json.loads((LAB / "schema" / "panel.json").read_text())  # the plugin id is dsh-notebook:panel
    assert schema["properties"]["showAll"]["default"] is False
    assert schema["properties"]["reviewsSeen"]["type"] == "object"
    sources = {f.name: f.read_text(encoding="utf-8") for f in (LAB / "src").rglob("*.ts")}
    assert [name for name, text in sources.items() if "localStorage" in text] == []
    assert "id: PLUGIN_ID" in sources["index.ts"] and "const PLUGIN_ID = 'dsh-notebook:panel'" in sources["index.ts"]
    where = _installed()
    if where is not None and not where.is_symlink():
        assert (where / "schemas" / "dsh-notebook" / "panel.json").is_file()
