"""Where the kernel writes (spec: storage.md "Where the kernel writes")."""

from __future__ import annotations

from pathlib import Path

from dsh_notebook.artifact import paths


def clear(monkeypatch):
    for var in ("DSH_NOTEBOOK_PATH", "JPY_SESSION_NAME"):
        monkeypatch.delenv(var, raising=False)


def test_dsh_notebook_path_wins(tmp_path, monkeypatch):
    clear(monkeypatch)
    monkeypatch.setenv("DSH_NOTEBOOK_PATH", str(tmp_path / "report.ipynb"))
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "other.ipynb"))
    loc = paths.locate({})
    assert loc.notebook == (tmp_path / "report.ipynb").resolve()
    assert loc.sidecar == (tmp_path / "report.dsh").resolve()
    assert loc.source == "DSH_NOTEBOOK_PATH" and loc.known


def test_jpy_session_name_absolute_and_relative(tmp_path, monkeypatch):
    clear(monkeypatch)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.ipynb").write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "sub" / "a.ipynb"))
    assert paths.locate({}).sidecar == tmp_path / "sub" / "a.dsh"
    # relative to the server root while the kernel runs in the notebook's folder
    monkeypatch.setenv("JPY_SESSION_NAME", "sub/a.ipynb")
    loc = paths.locate({}, cwd=tmp_path / "sub")
    assert loc.notebook == (tmp_path / "sub" / "a.ipynb").resolve()
    assert loc.source == "JPY_SESSION_NAME"


def test_vscode_variable(tmp_path, monkeypatch):
    clear(monkeypatch)
    loc = paths.locate({"__vsc_ipynb_file__": str(tmp_path / "v.ipynb")})
    assert loc.sidecar == tmp_path / "v.dsh" and loc.source == "__vsc_ipynb_file__"


def test_unknown_notebook_falls_back_to_unsaved(tmp_path, monkeypatch):
    clear(monkeypatch)
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    loc = paths.locate({})
    assert loc.notebook is None and not loc.known and loc.source == "unsaved"
    assert loc.sidecar.parent == tmp_path / "home" / "unsaved"
    assert loc.sidecar.name.endswith(".dsh")
    assert paths.locate({}).sidecar == loc.sidecar  # stable for the kernel's lifetime


def test_sidecar_name():
    assert paths.sidecar_for(Path("/x/report.ipynb")) == Path("/x/report.dsh")


def test_a_sidecar_named_apart_is_written_into_only_with_the_notebook_path(tmp_path, monkeypatch):
    """``run --no-save`` keeps the kernel's notebook and hands it a private copy of the sidecar."""
    for var in ("JPY_SESSION_NAME", "DSH_NOTEBOOK_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DSH_NOTEBOOK_SIDECAR", str(tmp_path / "copy" / "report.dsh"))
    assert paths.locate({}, tmp_path).source == "unsaved"  # alone it names nothing
    monkeypatch.setenv("DSH_NOTEBOOK_PATH", str(tmp_path / "report.ipynb"))
    loc = paths.locate({}, tmp_path)
    assert loc.notebook == tmp_path / "report.ipynb"
    assert loc.sidecar == tmp_path / "copy" / "report.dsh"
    monkeypatch.setenv("DSH_NOTEBOOK_SIDECAR", "rel.dsh")  # relative to the working folder
    assert paths.locate({}, tmp_path / "work").sidecar == tmp_path / "work" / "rel.dsh"
