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
