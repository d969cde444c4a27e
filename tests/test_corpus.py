"""A lab's whole corpus (issue 23): ``dsh-notebook run PATH...`` and ``verify PATH...`` over
notebooks and folders, in this process, on a local dask cluster (``--workers 2``) and on an
existing cluster started here as real ``dask scheduler`` and ``dask worker`` processes on
127.0.0.1; a tampered notebook named in the results, a worker killed mid-run (its notebook
retried once, its kernel gone with it, the others complete), an unreachable scheduler."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

pytest.importorskip("distributed")

DEADLINE = 300  # seconds: only a bound for a failing test, never a timing the test relies on


def run_cli(*args, cwd=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "dsh_notebook.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def reckon_notebook(path: Path, n_cells: int = 2, seed: int = 0) -> Path:
    """A notebook whose ``%%reckon`` cells were run by the magic's own cell runner and renderer
    (as a kernel writes them, without starting one), synced and signed: it verifies."""
    from dsh_notebook.artifact.seal import sync
    from dsh_notebook.reckon.cell import ReckonSession, parse_options, run_cell
    from dsh_notebook.reckon.render import bundle, record_metadata
    from dsh_notebook.reckoner import Engine

    path.parent.mkdir(parents=True, exist_ok=True)
    session = ReckonSession(Engine(path.with_name(path.stem + ".dsh"), recover=False))
    where = SimpleNamespace(known=True, notebook=path)
    cells = []
    for c in range(n_cells):
        lines = [f"%%reckon Wire {seed}.{c}", "given rho = 1.68e-8 ohm*m", f"given L = {25 + seed + c} m",
                 "given d = 2.05 mm", "A = $pi*(@d/2)^2", "R = @rho*@L/@A", "show R in mohm"]
        out = run_cell(session, parse_options(lines[0][len("%%reckon"):]), "\n".join(lines[1:]), {})
        sha = hashlib.sha256(Path(out.path).read_bytes()).hexdigest()
        data, metadata = bundle(out, record_metadata(out, where, sha))
        cells.append(nbformat.v4.new_code_cell("\n".join(lines), execution_count=c + 1, outputs=[
            nbformat.v4.new_output("display_data", data=data, metadata=metadata)]))
    session.engine.close()
    nbformat.write(nbformat.v4.new_notebook(cells=cells), str(path))
    sync(path)
    return path


def kernel_notebook(path: Path, cells: list[str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


WIRE = "%%reckon Wire {i}\ngiven rho = 1.68e-8 ohm*m\ngiven L = {L} m\ngiven A = 3.3006 mm^2\nR = @rho*@L/@A"


def tamper(notebook: Path, length: int) -> Path:
    """Change the given length *length* m in the closed record that holds it to one metre more:
    check 1 (the hash) and check 2 (the replay) catch it."""
    for rec in (notebook.with_name(notebook.stem + ".dsh") / "records").glob("*.jsonl"):
        text = rec.read_text(encoding="utf-8")
        if f'"num":{length}' in text:
            os.chmod(rec, 0o644)
            rec.write_text(text.replace(f'"num":{length}', f'"num":{length + 1}'), encoding="utf-8")
            return rec
    raise AssertionError(f"no record of {notebook} holds {length}")


def by_name(results: dict) -> dict:
    return {Path(r["notebook"]).name: r for r in results["notebooks"]}


# --------------------------------------------------------------------------- which notebooks


def test_folders_are_searched_checkpoints_and_sidecars_skipped_each_notebook_once(tmp_path):
    from dsh_notebook.corpus.discover import NoSuchPath, find_notebooks

    for rel in ("a.ipynb", "sub/b.ipynb", "sub/deeper/c.ipynb", ".ipynb_checkpoints/a-checkpoint.ipynb",
                "a.dsh/articles/x.ipynb", ".git/d.ipynb", "notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    found = find_notebooks([tmp_path, tmp_path / "a.ipynb", tmp_path / "sub" / ".." / "a.ipynb"])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a.ipynb", "sub/b.ipynb", "sub/deeper/c.ipynb"]
    with pytest.raises(NoSuchPath, match="no such notebook or folder: .*nope.ipynb"):
        find_notebooks([tmp_path / "a.ipynb", tmp_path / "nope.ipynb"])


def test_a_missing_path_runs_nothing(tmp_path):
    nb = reckon_notebook(tmp_path / "a.ipynb")
    p = run_cli("verify", str(nb), str(tmp_path / "nope.ipynb"))
    assert p.returncode == 2
    assert "no such notebook or folder" in p.stderr and "nothing was run" in p.stderr


# --------------------------------------------------------------------------- in this process


def test_verify_a_corpus_here_names_the_tampered_notebook_and_the_rest_verify(tmp_path):
    for i in range(3):
        reckon_notebook(tmp_path / "corpus" / f"n{i}.ipynb", seed=i)
    tamper(tmp_path / "corpus" / "n0.ipynb", 25)
    (tmp_path / "corpus" / "broken.ipynb").write_text("{not json")
    p = run_cli("verify", "corpus", cwd=tmp_path)
    assert p.returncode == 1
    rows = {ln.split()[0]: ln.split() for ln in p.stdout.splitlines() if ln.startswith("corpus/")}
    assert rows["corpus/n1.ipynb"][1:4] == ["verified", "2", "none"]
    assert rows["corpus/n2.ipynb"][1:4] == ["verified", "2", "none"]
    assert rows["corpus/n0.ipynb"][1] == "failed" and rows["corpus/broken.ipynb"][1] == "error"
    assert "4 notebook(s): 1 error, 1 failed, 2 verified in" in p.stdout
    # each failure named with its first findings
    assert "corpus/n0.ipynb: failed\n  check 1" in p.stderr and "sha256" in p.stderr
    assert "corpus/broken.ipynb: error\n  not a readable notebook" in p.stderr


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file under *folder* by its relative path, with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_run_a_corpus_here_saves_nothing_without_save(tmp_path):
    nbs = [kernel_notebook(tmp_path / f"w{i}.ipynb", ["%load_ext dsh_notebook", WIRE.format(i=i, L=25 + i)])
           for i in range(2)]
    before = files_under(tmp_path)
    p = run_cli("run", str(nbs[0]), str(nbs[1]), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["ok"] is True and [r["status"] for r in out["notebooks"]] == ["ok", "ok"]
    assert [r["records"] for r in out["notebooks"]] == [1, 1]
    assert [r["kept"] for r in out["notebooks"]] == [False, False]
    # never re-signed, never rewritten, and no sidecar made: the kernels wrote into private copies
    assert files_under(tmp_path) == before
    assert not (tmp_path / "w0.dsh").exists()
    plain = run_cli("run", str(nbs[0]), str(nbs[1]))  # the table's summary says nothing was kept
    assert plain.returncode == 0, plain.stderr
    assert "nothing saved: each ran on a temporary copy of its sidecar (--save keeps and signs the outputs)" in plain.stdout
    assert files_under(tmp_path) == before


def test_a_notebook_never_run_is_named_as_skipped_in_the_table(tmp_path):
    """From a newcomer's trial: a folder's table showed a notebook whose %%reckon cell had no
    output as 'verified' with findings 'none'."""
    reckon_notebook(tmp_path / "ran.ipynb")
    kernel_notebook(tmp_path / "never.ipynb", ["%load_ext dsh_notebook", WIRE.format(i=0, L=25)])
    p = run_cli("verify", str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    rows = {Path(line.split()[0]).name: line for line in p.stdout.splitlines() if line.endswith(" s")}
    assert "1 skipped: cell 2: runs %%reckon but its output names" in rows["never.ipynb"]
    assert " 2 " in rows["ran.ipynb"] and "none" in rows["ran.ipynb"]  # its two records, nothing skipped


def test_run_without_save_leaves_a_signed_corpus_as_it_was_and_it_still_verifies(tmp_path):
    """From a newcomer's trial: 'run, then verify' failed every signed notebook, because a run
    that saved nothing still wrote its records into the sidecar (check 5: not covered by the seal)."""
    corpus = tmp_path / "corpus"
    nbs = [kernel_notebook(corpus / f"w{i}.ipynb", ["%load_ext dsh_notebook", WIRE.format(i=i, L=25 + i),
                                                     "%%reckon --continue Left open\ngiven x = 1 m"])
           for i in range(2)]
    p = run_cli("run", str(corpus), "--save", "--json")  # the author's run: saved and signed
    assert p.returncode == 0, p.stderr
    assert all(r["kept"] for r in json.loads(p.stdout)["notebooks"])
    v = run_cli("verify", str(corpus), "--json")
    assert v.returncode == 0, v.stdout
    signed = files_under(corpus)
    assert any(name.startswith("w0.dsh/records/") for name in signed)
    # a reviewer's runs: a corpus without --save, and one notebook with --no-save
    p = run_cli("run", str(corpus), "--json")
    assert p.returncode == 0, p.stderr
    assert [r["records"] for r in json.loads(p.stdout)["notebooks"]] == [2, 2]
    one = run_cli("run", str(nbs[0]), "--no-save")
    assert one.returncode == 0, one.stderr
    assert "nothing saved" in one.stdout and "Wire 0" in one.stdout  # its records, read from the copy
    assert "records in the temporary copy" in one.stdout
    assert "'Left open' was left open" in one.stdout and "nothing is left open beside the notebook" in one.stdout
    assert files_under(corpus) == signed  # byte for byte: no record, no lock, no open record added
    v = run_cli("verify", str(corpus), "--json")
    assert v.returncode == 0, v.stdout
    assert {r["status"] for r in json.loads(v.stdout)["notebooks"]} == {"verified"}


def test_run_without_save_on_a_full_disk_runs_nothing_and_says_why(tmp_path, monkeypatch):
    from dsh_notebook.corpus import execute

    nb = kernel_notebook(tmp_path / "w.ipynb", ["%load_ext dsh_notebook", WIRE.format(i=0, L=25)])
    (tmp_path / "w.dsh").mkdir()
    (tmp_path / "w.dsh" / "reviewer.json").write_text("{}")
    before = files_under(tmp_path)

    def full(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(execute.shutil, "copy2", full)
    r = execute.run_task(str(nb))
    assert r["status"] == "error" and r["kept"] is False
    assert r["findings"] == ["cannot copy the notebook's sidecar to run it without saving "
                             "([Errno 28] No space left on device); nothing was run"]
    assert files_under(tmp_path) == before


def test_run_without_save_reads_the_real_folder_and_never_writes_through_a_sidecar_link(tmp_path):
    """From an attack: the kernel of a run without saving must still find its data beside the
    notebook (DSH_NOTEBOOK_PATH is the real one), and a sidecar whose records/ is a symbolic link
    (relative or absolute) must run and leave what the link points to as it was."""
    for kind in ("relative", "absolute"):
        folder = tmp_path / kind
        store = folder / "store" / "records"
        store.mkdir(parents=True)
        (folder / "nb.dsh").mkdir()
        (folder / "nb.dsh" / "records").symlink_to(Path("..") / "store" / "records" if kind == "relative" else store)
        (folder / "data.csv").write_text("25\n")
        nb = kernel_notebook(folder / "nb.ipynb", [
            "%load_ext dsh_notebook",
            "import os, pathlib\n"
            "L = float(pathlib.Path(os.environ['DSH_NOTEBOOK_PATH']).with_name('data.csv').read_text())",
            "%%reckon Wire\ngiven L = py:L m\ngiven A = 2 mm^2\ngiven rho = 1.68e-8 ohm*m\nR = @rho*@L/@A"])
        saved = run_cli("run", str(nb))  # the author's run: its record goes through the link, signed
        assert saved.returncode == 0, saved.stderr
        assert len(list(store.glob("*.jsonl"))) == 1
        before = files_under(folder)
        for args in (("run", str(nb), "--no-save"), ("run", str(nb), "--json")):
            p = run_cli(*args)
            assert p.returncode == 0, p.stdout + p.stderr
        assert files_under(folder) == before
        v = run_cli("verify", str(nb))
        assert v.returncode == 0, v.stdout


# --------------------------------------------------------------------------- a local cluster


def test_run_on_two_local_workers_saves_with_save_and_names_an_unreadable_notebook(tmp_path):
    corpus = tmp_path / "corpus"
    for i in range(3):
        kernel_notebook(corpus / f"w{i}.ipynb", ["%load_ext dsh_notebook", WIRE.format(i=i, L=25 + i)])
    kernel_notebook(corpus / "fails.ipynb", ["%load_ext dsh_notebook", "%%reckon X\nx = @missing"])
    (corpus / "garbage.ipynb").write_text("not a notebook")
    p = run_cli("run", str(corpus), "--workers", "2", "--save", "--json")
    assert p.returncode == 1, p.stderr
    res = by_name(json.loads(p.stdout))
    assert {n: r["status"] for n, r in res.items()} == {
        "fails.ipynb": "failed", "garbage.ipynb": "error", "w0.ipynb": "ok", "w1.ipynb": "ok", "w2.ipynb": "ok"}
    assert "not a readable notebook" in res["garbage.ipynb"]["findings"][0]
    assert any("ENGINE_SLOT_NOT_FOUND" in line for line in res["fails.ipynb"]["findings"])
    assert all(r["worker"].startswith("tcp://127.0.0.1:") for r in res.values())
    assert all(r["attempts"] == 1 for r in res.values())
    # --save: the outputs are in the files, indexed and signed, so the saved corpus verifies
    saved = nbformat.read(str(corpus / "w1.ipynb"), as_version=4)
    assert any("application/vnd.dsh.record+json" in o.get("data", {}) for o in saved.cells[1].outputs)
    v = run_cli("verify", str(corpus / "w0.ipynb"), str(corpus / "w1.ipynb"), str(corpus / "w2.ipynb"),
                "--workers", "2", "--json")
    assert v.returncode == 0, v.stdout + v.stderr
    assert {r["status"] for r in json.loads(v.stdout)["notebooks"]} == {"verified"}


def test_verify_on_two_local_workers_table_and_failures(tmp_path):
    for i in range(4):
        reckon_notebook(tmp_path / f"n{i}.ipynb", seed=i)
    tamper(tmp_path / "n2.ipynb", 27)
    p = run_cli("verify", ".", "--workers", "2", cwd=tmp_path)
    assert p.returncode == 1
    assert p.stdout.splitlines()[0].split() == ["notebook", "status", "records", "findings", "time"]
    rows = {ln.split()[0]: ln.split() for ln in p.stdout.splitlines() if ln.startswith("n")}
    assert [rows[f"n{i}.ipynb"][1] for i in range(4)] == ["verified", "verified", "failed", "verified"]
    assert rows["n2.ipynb"][3:5] == [rows["n2.ipynb"][3], "failing"] and int(rows["n2.ipynb"][3]) >= 1
    assert "(2 local worker(s))" in p.stdout
    assert "n2.ipynb: failed\n  check 1" in p.stderr


# --------------------------------------------------------------------------- workers checked first


class FakeClient:
    """Answers ``client.run(worker_check, ...)`` as the given workers would."""

    def __init__(self, answers):
        self.answers = answers

    def run(self, fn, *args, on_error="raise"):
        return self.answers


def test_workers_with_another_version_or_without_the_files_are_named_before_anything_runs(tmp_path):
    from dsh_notebook.corpus.cluster import WorkerMismatch, check_workers
    from dsh_notebook.version import __version__

    nb = tmp_path / "a.ipynb"
    good = {"version": __version__, "python": "3.11", "pid": 1, "kernel": None, "unseen": []}
    assert check_workers(FakeClient({"tcp://10.0.0.1:1": good}), [nb], "python3") == ["tcp://10.0.0.1:1"]
    with pytest.raises(WorkerMismatch) as info:
        check_workers(FakeClient({
            "tcp://10.0.0.1:1": good,
            "tcp://10.0.0.2:1": {**good, "version": "0.0.9"},
            "tcp://10.0.0.3:1": {**good, "unseen": [str(nb)]},
            "tcp://10.0.0.4:1": ModuleNotFoundError("No module named 'dsh_notebook'"),
            "tcp://10.0.0.5:1": {**good, "kernel": "no kernel named 'python3'"},
        }), [nb], "python3")
    msg = str(info.value)
    assert "nothing was run" in msg and "tcp://10.0.0.1:1" not in msg
    assert f"worker tcp://10.0.0.2:1 has dsh_notebook 0.0.9, this command {__version__}" in msg
    assert f"worker tcp://10.0.0.3:1 cannot read 1 notebook(s): {nb}" in msg and "same path" in msg
    assert "worker tcp://10.0.0.4:1 cannot import dsh_notebook" in msg
    assert "worker tcp://10.0.0.5:1: no kernel named 'python3'" in msg


def test_without_dask_distributed_the_command_says_what_to_install(tmp_path, monkeypatch):
    from dsh_notebook.corpus.cluster import DistributedMissing, run_corpus

    nb = tmp_path / "a.ipynb"
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    with pytest.raises(DistributedMissing, match=r"need dask.distributed: pip install 'dsh-notebook\[corpus\]'"):
        run_corpus("verify", [nb], workers=2)
    assert not (tmp_path / "a.dsh").exists()


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path):
    nb = reckon_notebook(tmp_path / "a.ipynb")
    port = free_port()  # nobody listens there
    p = run_cli("verify", str(nb), "--scheduler", f"tcp://127.0.0.1:{port}", "--connect-timeout", "2")
    assert p.returncode == 2
    assert f"cannot reach the dask scheduler at tcp://127.0.0.1:{port} within 2 s" in p.stderr
    assert p.stdout == ""


def test_notebooks_of_another_shape_are_named_and_the_rest_verify(tmp_path):
    good = reckon_notebook(tmp_path / "good.ipynb")
    (tmp_path / "nocells.ipynb").write_text('{"cells": []}')
    (tmp_path / "deep.ipynb").write_text("[" * 100_000)
    (tmp_path / "v3.ipynb").write_text(json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {},
                                                   "worksheets": [{"cells": []}]}))
    p = run_cli("verify", str(tmp_path), "--json")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    res = by_name(json.loads(p.stdout))
    assert res[good.name]["status"] == "verified"
    assert res["v3.ipynb"]["status"] == "error" and "not a version 4 notebook (nbformat 3)" in res["v3.ipynb"]["findings"][0]
    assert res["nocells.ipynb"]["status"] == "error"
    assert "nested too deeply" in res["deep.ipynb"]["findings"][0]


def test_a_symlink_loop_and_a_hostile_file_name_are_named_and_never_draw_the_table(tmp_path):
    good = reckon_notebook(tmp_path / "good.ipynb")
    (tmp_path / "loop.ipynb").symlink_to("loop.ipynb")
    odd = "x  verified  2  -  0.1\n3 notebook(s): 3 verified\x1b[8m.ipynb"
    (tmp_path / odd).write_text("not a notebook")
    p = run_cli("verify", str(tmp_path))
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "\x1b" not in p.stdout + p.stderr and "3 verified" not in p.stdout.splitlines()[-1]
    assert "\\n3 notebook(s)" in p.stdout and "\\x1b[8m" in p.stdout  # shown as escapes, on its own row
    rows = {Path(line.split()[0]).name: line.split()[1] for line in p.stdout.splitlines()[2:]
            if line.strip() and "\\x1b" not in line}
    assert rows.get(good.name) == "verified" and rows.get("loop.ipynb") == "error"
    [odd_row] = [line for line in p.stdout.splitlines() if "\\x1b[8m" in line]  # one row, its status at the end
    assert " error " in odd_row.split("\\x1b[8m.ipynb", 1)[1]


def test_more_local_workers_than_the_machine_can_run_are_refused(tmp_path):
    nb = reckon_notebook(tmp_path / "a.ipynb")
    p = run_cli("verify", str(nb), "--workers", "100000")
    assert p.returncode == 2 and "more than this machine can run" in p.stderr and "--scheduler" in p.stderr


def test_an_address_that_accepts_and_never_answers_is_refused_within_the_timeout(tmp_path):
    # e.g. the scheduler's dashboard port by mistake: the connection is accepted, no dask answer comes
    nb = reckon_notebook(tmp_path / "a.ipynb")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        p = run_cli("verify", str(nb), "--scheduler", f"tcp://127.0.0.1:{port}", "--connect-timeout", "2",
                    timeout=120)  # only bounds a hang; the command gives up after its own 2 s (+5 s grace)
    assert p.returncode == 2
    assert f"tcp://127.0.0.1:{port} did not answer as a dask scheduler within 2 s" in p.stderr
    assert "Traceback" not in p.stderr


def test_a_tls_address_without_its_configuration_is_a_clear_error(tmp_path):
    nb = reckon_notebook(tmp_path / "a.ipynb")
    p = run_cli("verify", str(nb), "--scheduler", "tls://127.0.0.1:1", "--connect-timeout", "2", timeout=120)
    assert p.returncode == 2
    assert "cannot reach the dask scheduler at tls://127.0.0.1:1" in p.stderr and "Traceback" not in p.stderr


# --------------------------------------------------------------------------- an existing cluster


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask() -> str:
    return str(Path(sys.executable).with_name("dask"))


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=30)


@pytest.fixture
def cluster(tmp_path, request):
    """A real ``dask scheduler`` (allowed failures 1) and two ``dask worker`` processes (one thread,
    no nanny, so a killed worker stays dead) on 127.0.0.1, torn down whatever happens."""
    from distributed import Client

    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1"}
    logs = tmp_path / "dask-logs"
    logs.mkdir()
    procs: list[subprocess.Popen] = []

    def start(name, argv):
        with open(logs / f"{name}.log", "w") as log:
            procs.append(subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))

    request.addfinalizer(lambda: [_stop(p) for p in reversed(procs)])
    start("scheduler", [_dask(), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0"])
    for i in range(2):
        start(f"worker{i}", [_dask(), "worker", address, "--nthreads", "1", "--no-nanny", "--name", f"w{i}",
                             "--host", "127.0.0.1", "--no-dashboard"])
    client = Client(address, timeout=DEADLINE)
    request.addfinalizer(client.close)
    client.wait_for_workers(2, timeout=DEADLINE)
    return SimpleNamespace(address=address, client=client, procs=procs)


def test_verify_on_an_existing_scheduler(tmp_path, cluster):
    for i in range(3):
        reckon_notebook(tmp_path / "c" / f"n{i}.ipynb", seed=i)
    tamper(tmp_path / "c" / "n1.ipynb", 26)
    p = run_cli("verify", str(tmp_path / "c"), "--scheduler", cluster.address, "--json")
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)
    assert out["where"] == f"the scheduler at {cluster.address}" and out["ok"] is False
    res = by_name(out)
    assert {n: r["status"] for n, r in res.items()} == {"n0.ipynb": "verified", "n1.ipynb": "failed",
                                                      "n2.ipynb": "verified"}
    assert res["n1.ipynb"]["findings"][0].startswith("check 1 ")
    workers = set(cluster.client.nthreads())  # asked of the scheduler now (scheduler_info() is a cached copy)
    assert {r["worker"] for r in res.values()} <= workers
    assert "2 worker(s)" in p.stderr  # every worker was checked before the work started


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def _wait(what, cond):
    end = time.monotonic() + DEADLINE
    while not cond():
        assert time.monotonic() < end, f"gave up waiting for {what}"
        time.sleep(0.2)


def test_a_worker_killed_mid_run_its_notebook_retried_once_its_kernel_gone_the_others_complete(tmp_path, cluster):
    import psutil

    corpus = tmp_path / "corpus"
    # the slow notebook opens a record (--continue: the kernel holds its lock), says which kernel it
    # is, then waits for the file 'go' the test creates; its last cell closes the record
    slow = kernel_notebook(corpus / "slow.ipynb", [
        "%load_ext dsh_notebook",
        "%%reckon --continue Slow wire\ngiven L = 25 m",
        "import os, pathlib, time\n"
        "here = pathlib.Path.cwd()\n"
        "with open(here / 'attempts.txt', 'a') as f:\n    f.write(f'{os.getpid()}\\n')\n"
        f"end = time.monotonic() + {DEADLINE}\n"
        "while not (here / 'go').exists() and time.monotonic() < end:\n    time.sleep(0.05)",
        "%%reckon\nR = @L*2",
    ])
    for i in range(3):
        kernel_notebook(corpus / f"w{i}.ipynb", ["%load_ext dsh_notebook", WIRE.format(i=i, L=25 + i)])
    attempts = corpus / "attempts.txt"
    cli = subprocess.Popen([sys.executable, "-m", "dsh_notebook.cli", "run", str(corpus), "--scheduler",
                            cluster.address, "--save", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        _wait("the slow notebook's first kernel", lambda: len(_lines(attempts)) == 1)
        kernel = psutil.Process(int(_lines(attempts)[0]))
        worker_pid = kernel.ppid()  # the launcher exec'd the kernel: its parent is the worker process
        assert worker_pid in cluster.client.run(os.getpid).values()
        os.kill(worker_pid, signal.SIGKILL)

        def gone():
            try:
                return kernel.status() == psutil.STATUS_ZOMBIE
            except psutil.NoSuchProcess:
                return True

        _wait("the killed worker's kernel to die with it", gone)
        (corpus / "go").touch()  # only now: a kernel that outlived its worker would be seen going on
        out, err = cli.communicate(timeout=DEADLINE)
    finally:
        _stop(cli)
    assert cli.returncode == 0, err
    res = by_name(json.loads(out))
    assert res["slow.ipynb"]["status"] == "ok" and res["slow.ipynb"]["attempts"] == 2
    assert all(res[f"w{i}.ipynb"]["status"] == "ok" and res[f"w{i}.ipynb"]["attempts"] == 1 for i in range(3))
    pids = _lines(attempts)
    assert len(pids) == 2 and pids[0] != pids[1]  # retried once, in a new kernel
    sidecar = corpus / "slow.dsh"
    # the first kernel's lock was released, so the retry's kernel set its open record aside and
    # wrote its own: one closed record of two steps, one set aside for %reckon recover
    assert len(list((sidecar / "records").glob("*.jsonl"))) == 1
    assert len(list((sidecar / "stale").glob("*.jsonl"))) == 1
    assert not (sidecar / "open-record.jsonl").exists()
    assert slow.exists()
    # the killed worker's kernel sockets (its finally never ran) were cleared by the retry
    assert not list(Path(tempfile.gettempdir()).glob(f"dshk-{worker_pid}-*"))


def test_a_kernel_started_through_the_launcher_dies_with_the_process_that_started_it(tmp_path):
    """Not only ipykernel (which polls its parent): any kernel command, here ``sleep``."""
    import psutil

    from dsh_notebook.corpus.execute import launcher_argv

    if not launcher_argv():
        pytest.skip("the launcher is used on Linux only")
    starter = subprocess.Popen([sys.executable, "-c", (
        "import os, subprocess, sys, time\n"
        f"argv = {launcher_argv(0)[:2]!r} + [str(os.getpid()), 'sleep', '{DEADLINE}']\n"
        "child = subprocess.Popen(argv, start_new_session=True)\n"
        "print(child.pid, flush=True)\n"
        f"time.sleep({DEADLINE})")], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        child = psutil.Process(int(starter.stdout.readline()))
        _wait("the launcher to become sleep", lambda: child.name() == "sleep")
        os.kill(starter.pid, signal.SIGKILL)

        def gone():
            try:
                return child.status() == psutil.STATUS_ZOMBIE
            except psutil.NoSuchProcess:
                return True

        _wait("the child to die with its parent", gone)
    finally:
        _stop(starter)


def test_socket_folders_of_dead_workers_are_cleared_and_nothing_else(tmp_path):
    from dsh_notebook.corpus.execute import hold_socket_folder, sweep_dead_socket_folders

    tmp = Path(tempfile.gettempdir())
    # a process that made and held its folder, then ended without removing it (as SIGKILL leaves it)
    made = subprocess.run([sys.executable, "-c", "import os, tempfile\n"
                           "from dsh_notebook.corpus.execute import hold_socket_folder\n"
                           "d = tempfile.mkdtemp(prefix=f'dshk-{os.getpid()}-'); hold_socket_folder(d); print(d)\n"
                           "os._exit(0)"], capture_output=True, text=True, check=True)
    dead = Path(made.stdout.strip())
    live = Path(tempfile.mkdtemp(prefix=f"dshk-{os.getpid()}-"))
    held = hold_socket_folder(str(live))  # this process's own, in use
    planted = [Path(tempfile.mkdtemp(prefix=prefix)) for prefix in
               ("dshk-99999999999999999999-", "dshk-\u00b2-", "dshk-1-")]  # odd pids, no owner file
    victim = tmp_path / "victim"
    victim.mkdir()
    link = tmp / f"dshk-999999-{tmp_path.name}"
    link.symlink_to(victim)
    try:
        removed = sweep_dead_socket_folders()
        assert dead in removed and not dead.exists()
        assert live.exists() and all(p.exists() for p in planted) and link.is_symlink() and victim.exists()
        assert not {live, link, *planted} & set(removed)
    finally:
        held.close()
        link.unlink()
        for folder in (live, *planted):
            for f in folder.iterdir():
                f.unlink()
            folder.rmdir()



def test_a_save_that_cannot_be_signed_is_a_failure_not_a_success(tmp_path):
    """From a newcomer's trial: with a sidecar file edited since the last seal, run --save saved the
    outputs, could not renew the seal, and still exited 0 with 'ok'; the next verify failed."""
    nb = kernel_notebook(tmp_path / "w.ipynb", ["%load_ext dsh_notebook", WIRE.format(i=0, L=25)])
    first = run_cli("run", str(nb))
    assert first.returncode == 0, first.stderr
    tamper(nb, 25)
    one = run_cli("run", str(nb))
    assert one.returncode == 1, one.stdout + one.stderr
    assert "the outputs are saved but not signed" in one.stderr and "signed with" not in one.stdout
    many = run_cli("run", str(nb), str(tmp_path / "w.ipynb"), "--save")  # the corpus form (one notebook, named twice)
    assert many.returncode == 1, many.stdout + many.stderr
    assert "w.ipynb: the outputs are saved but not signed" in many.stderr
    assert run_cli("verify", str(nb)).returncode == 1
