"""Notebook writes are atomic and serialized (issue 16 item 2): a failed write leaves the old file
byte for byte; ``run``, ``sync``, ``prune`` and the pre-save hook of one notebook hold one lock;
``run`` re-reads the file under it and puts its outputs in by cell id, keeping what a ``sync``
wrote meanwhile, and saves beside the notebook instead of overwriting cells a person changed.
The races go through seams (a cell of the run itself edits or syncs the notebook), not timing."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from dsh_notebook.artifact import notebookfile
from dsh_notebook.artifact.notebookfile import NotebookBusy, notebook_lock, save_run, write_notebook
from dsh_notebook.artifact.seal import sync, verify

sys.path.insert(0, str(Path(__file__).parent))
from test_verify import cli  # noqa: E402 - the same command-line runner
from test_verify import write_notebook as write_cells  # noqa: E402


def notebook(tmp_path: Path, *cells: str) -> Path:
    return write_cells(tmp_path / "report.ipynb", list(cells))


RECKON = "%%reckon Ohm\ngiven V = 12 V\ngiven R = 4 ohm\nI = @V/@R"


def test_a_sync_during_the_run_keeps_the_run_outputs(tmp_path):
    # the second cell syncs the notebook from inside the run, between run's read and its save
    path = notebook(tmp_path, "%load_ext dsh_notebook", RECKON,
                    f"import subprocess, sys\nsubprocess.run([sys.executable, '-m', 'dsh_notebook.cli', 'sync', "
                    f"{str(tmp_path / 'report.ipynb')!r}], check=True)")
    done = cli("run", str(path))
    assert done.returncode == 0, done.stderr
    nb = nbformat.read(str(path), as_version=4)
    assert any("application/vnd.dsh.record+json" in o.get("data", {}) for o in nb.cells[1].outputs)
    assert nb.cells[1].execution_count == 2 and "seal" in nb.metadata["dsh"]
    assert not [f for f in verify(path) if f.ok is False]


def test_cells_edited_during_the_run_are_never_overwritten(tmp_path):
    edit = ("import nbformat\n"
            f"p = {str(tmp_path / 'report.ipynb')!r}\n"
            "nb = nbformat.read(p, as_version=4)\n"
            "nb.cells.append(nbformat.v4.new_markdown_cell('A note typed while it ran.'))\n"
            "nbformat.write(nb, p)")
    path = notebook(tmp_path, "%load_ext dsh_notebook", RECKON, edit)
    done = cli("run", str(path))
    assert done.returncode == 0, done.stderr
    assert "was edited while it ran" in done.stderr and "outputs saved in report.run-" in done.stdout
    mine = nbformat.read(str(path), as_version=4)
    assert mine.cells[-1].source == "A note typed while it ran." and not mine.cells[1].outputs
    beside = next(tmp_path.glob("report.run-*.ipynb"))
    ran = nbformat.read(str(beside), as_version=4)
    assert len(ran.cells) == 3 and any("application/vnd.dsh.record+json" in o.get("data", {})
                                       for o in ran.cells[1].outputs)


def test_save_run_puts_outputs_in_by_cell_id_and_keeps_new_metadata(tmp_path):
    path = notebook(tmp_path, "1 + 1", "2 + 2")
    started = nbformat.read(str(path), as_version=4)
    executed = nbformat.read(str(path), as_version=4)
    for n, cell in enumerate(executed.cells, 1):
        cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": str(2 * n)}, execution_count=n)]
        cell.execution_count = n
    meanwhile = nbformat.read(str(path), as_version=4)  # someone sets a tag and saves: no cell edited
    meanwhile.cells[0].metadata["tags"] = ["keep-me"]
    meanwhile.metadata["authors"] = [{"name": "Ana"}]
    nbformat.write(meanwhile, str(path))
    assert save_run(path, started, executed, []) == path
    saved = nbformat.read(str(path), as_version=4)
    assert [c.outputs[0]["data"]["text/plain"] for c in saved.cells] == ["2", "4"]
    assert saved.cells[0].metadata["tags"] == ["keep-me"] and saved.metadata["authors"] == [{"name": "Ana"}]


def test_a_writer_holding_the_lock_makes_sync_wait_and_then_refuse(tmp_path, monkeypatch):
    path = notebook(tmp_path, "1 + 1")
    before = path.read_bytes()
    monkeypatch.setattr(notebookfile, "LOCK_TIMEOUT", 0)  # refuse at once instead of waiting a minute
    with notebook_lock(path):  # another writer (run, prune, a JupyterLab save) is at work
        with pytest.raises(NotebookBusy, match="another dsh-notebook process"):
            sync(path)
    assert path.read_bytes() == before
    assert notebookfile.lock_file(path).name == ".report.ipynb.lock"


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE needs a POSIX system")
def test_a_write_the_disk_refuses_leaves_the_old_notebook_byte_for_byte(tmp_path):
    path = notebook(tmp_path, "1 + 1")
    before = path.read_bytes()
    script = textwrap.dedent("""
        import json, resource, sys
        import nbformat
        from dsh_notebook.artifact.notebookfile import write_notebook
        path = sys.argv[1]
        nb = nbformat.read(path, as_version=4)
        nb.cells[0].source = "x = 1\\n" * 20000  # far past the limit below
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            write_notebook(path, nb)
            print(json.dumps({"raised": None}))
        except OSError as exc:
            print(json.dumps({"raised": type(exc).__name__}))
    """)
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout)["raised"] is not None, done.stderr
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.ipynb"]  # no temporary file left


def test_write_notebook_replaces_the_file_whole(tmp_path):
    path = notebook(tmp_path, "1 + 1")
    nb = nbformat.read(str(path), as_version=4)
    nb.cells[0].source = "2 + 2"
    write_notebook(path, nb)
    assert nbformat.read(str(path), as_version=4).cells[0].source == "2 + 2"
    sync(path)  # sync writes through the same function, under the lock
    assert "dsh" in nbformat.read(str(path), as_version=4).metadata
