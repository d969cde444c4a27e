"""``dsh-notebook run`` and the notebooks in ``notebooks/`` (spec: README.md "Public surface")."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]


def make_nb(path: Path, cells: list[tuple[str, list[str]]]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src, metadata={"tags": tags} if tags else {}) for src, tags in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dsh_notebook.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_run_executes_saves_outputs_and_prints_records(tmp_path):
    nb = make_nb(tmp_path / "report.ipynb", [
        ("%load_ext dsh_notebook", []),
        ("%%reckon Copper wire\ngiven rho = 1.68e-8 ohm*m\ngiven L = 25 m\ngiven d = 2.05 mm\n"
         "A = $pi*(@d/2)^2\nR = @rho*@L/@A", []),
        ("%%reckon A unit mistake\ngiven V = 12 V\ngiven R = 4.7 ohm\nI = @V + @R", ["raises-exception"]),
    ])
    p = run_cli("run", str(nb))
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "Copper wire" in out and "R = 0.12725 Ω" in out and "A unit mistake" in out
    lines = [ln for ln in out.splitlines() if ln.startswith(("Copper wire", "A unit mistake"))]
    assert lines[0].split()[2:4] == ["2", "0"]  # steps, refused
    assert lines[1].split()[3:5] == ["0", "1"]
    saved = nbformat.read(str(nb), as_version=4)
    assert all(c.execution_count for c in saved.cells)
    assert any("application/vnd.dsh.record+json" in o.get("data", {}) for o in saved.cells[1].outputs)
    records = list((tmp_path / "report.dsh" / "records").glob("*.jsonl"))
    assert len(records) == 2
    nbformat.validate(saved)


def test_run_fails_on_an_untagged_error(tmp_path):
    nb = make_nb(tmp_path / "bad.ipynb", [("%load_ext dsh_notebook", []), ("%%reckon X\nx = @missing", [])])
    p = run_cli("run", str(nb))
    assert p.returncode == 1
    assert "ENGINE_SLOT_NOT_FOUND" in p.stderr and "\x1b[" not in p.stderr


def test_run_missing_or_unreadable_notebook(tmp_path):
    assert run_cli("run", str(tmp_path / "nope.ipynb")).returncode == 2
    junk = tmp_path / "junk.ipynb"
    junk.write_text("{not json", encoding="utf-8")
    p = run_cli("run", str(junk))
    assert p.returncode == 2 and "not a readable notebook" in p.stderr


def test_no_save_leaves_the_file_unchanged(tmp_path):
    nb = make_nb(tmp_path / "keep.ipynb", [("%load_ext dsh_notebook", []), ("%%reckon K\ngiven x = 1", [])])
    before = nb.read_bytes()
    p = run_cli("run", str(nb), "--no-save")
    assert p.returncode == 0, p.stderr
    assert nb.read_bytes() == before
    assert not (tmp_path / "keep.dsh").exists()  # its record went to a temporary copy (issue 23)
    assert "K" in p.stdout and "nothing saved" in p.stdout


def test_every_example_notebook_is_committed_executed():
    books = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert any(b.name == "reckoner-tour.ipynb" for b in books)
    for book in books:
        nb = json.loads(book.read_text(encoding="utf-8"))
        missing = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and c["source"]
                   and c.get("execution_count") is None]
        assert not missing, f"{book.name}: code cells {missing} were never executed"


LAYERS = {
    "reckoner": {"IPython", "ipywidgets", "anywidget", "httpx", "ipykernel", "nbclient"},
    "storage": {"IPython", "ipywidgets", "anywidget", "httpx", "ipykernel", "nbclient"},
    "llm": {"IPython", "ipywidgets", "anywidget", "ipykernel", "nbclient"},
}


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_engine_layers_import_no_ui_or_network(package):
    banned = LAYERS[package]
    for path in (ROOT / "dsh_notebook" / package).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.ImportFrom) and node.level >= 2 and node.module:
                names = [node.module.split(".")[0]]
                assert names[0] not in {"notebook", "server", "widgets", "cli"}, f"{path} imports {node.module}"
            for n in names:
                assert n.split(".")[0] not in banned, f"{path} imports {n}"


def test_no_eval_or_exec_in_the_package():
    for path in (ROOT / "dsh_notebook").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in {"eval", "exec"}, f"{path}:{node.lineno} calls {node.func.id}"


def test_unknown_kernel_runs_nothing_and_saves_nothing(tmp_path):
    nb = make_nb(tmp_path / "k.ipynb", [("%load_ext dsh_notebook", []), ("%%reckon K\ngiven x = 1", [])])
    before = nb.read_bytes()
    p = run_cli("run", str(nb), "--kernel", "no-such-kernel")
    assert p.returncode == 2 and "no kernel named" in p.stderr
    assert nb.read_bytes() == before


def test_run_reports_a_record_left_open_and_is_quiet_about_transport(tmp_path):
    nb = make_nb(tmp_path / "open.ipynb", [("%load_ext dsh_notebook", []),
                                           ("%%reckon --continue Half done\ngiven x = 1 m", [])])
    p = run_cli("run", str(nb))
    assert p.returncode == 0
    assert "Half done  (still open)" in p.stdout and "left open" in p.stdout
    assert "without encryption" not in p.stderr


def _serve_fake_llm(tmp_path, content: bytes, *args):
    script = tmp_path / "script.json"
    script.write_bytes(content)
    return run_cli("serve-fake-llm", "--script", str(script), *args)


def _one_clear_line(p, words: str) -> None:
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1 and words in p.stderr, p.stderr
    assert p.stderr.startswith("dsh-notebook serve-fake-llm: ")


@pytest.mark.parametrize("content, args, words", [
    (b"\xff\xfe[]", (), "not UTF-8 text"),
    (b"[]", ("--port", "99999"), "--port 99999 is not a port number"),
    (b"[]", ("--port", "-1"), "is not a port number"),
    (b"{not json", (), "cannot read the script"),
    (b'{"reply": {}}', (), "JSON list"),
    (b'[{"reply": {"status": "abc"}}]', (), "turn 1 reply: 'status'"),
    (b'[{"reply": {}}, {"reply": {"tool_calls": [{"name": "f", "arguments": "{}"}]}}]', (), "turn 2 reply tool call 1"),
    (b'[{"reply": {"delay": "soon"}}]', (), "'delay'"),
    (b'[{"expect": "str"}]', (), "turn 1 expect must be an object"),
    (b'[{"reply": {"content": 5}}]', (), "'content' must be a string"),
    (b'[1, "x", null]', (), "turn 1 is a number"),
    (b'[{"expect": {"contain": "x"}}]', (), "unknown key 'contain'"),
])
def test_serve_fake_llm_refuses_bad_input_in_one_line(tmp_path, content, args, words):
    _one_clear_line(_serve_fake_llm(tmp_path, content, *args), words)


def test_serve_fake_llm_port_in_use_is_one_line(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        p = _serve_fake_llm(tmp_path, b'[{"reply": {"content": "x"}}]', "--port", str(port))
    _one_clear_line(p, f"cannot listen on 127.0.0.1:{port}")


def test_run_refuses_what_is_not_a_regular_file(tmp_path):
    """``dsh-notebook run`` on a fifo or a device never reads it (issue 14 item 4)."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "pipe.ipynb"
    os.mkfifo(fifo)
    for target in (str(fifo), "/dev/zero"):
        out = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "run", target], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 2 and "is not a regular file" in out.stderr, (target, out.stderr)
    # a folder is a corpus since issue 23: the fifo in it is named, never read
    out = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "run", str(tmp_path)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 1 and f"{fifo}: error\n  not a regular file" in out.stderr, out.stderr


def test_run_says_it_signed_and_where_a_new_key_was_made(tmp_path):
    """From a newcomer's trial: the first run made a signing key and signed the notebook silently."""
    import os

    nb = make_nb(tmp_path / "k.ipynb", [("%load_ext dsh_notebook", []), ("%%reckon K\ngiven x = 1 m", [])])
    env = {**os.environ, "DSH_NOTEBOOK_HOME": str(tmp_path / "home")}
    env.pop("DSH_SIGNING_KEY", None)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "dsh_notebook.cli", *args], capture_output=True, text=True,
                              timeout=300, env=env)

    first = run("run", str(nb))
    key = tmp_path / "home" / "signing" / "id_ed25519"
    assert first.returncode == 0, first.stderr
    assert "signed with SHA256:" in first.stdout and f"a key made now at {key}" in first.stdout
    again = run("run", str(nb))
    assert "signed with SHA256:" in again.stdout and "made now" not in again.stdout
    quiet = run("run", str(nb), "--no-save")
    assert "signed" not in quiet.stdout
