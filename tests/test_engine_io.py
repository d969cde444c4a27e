"""I/O errors refuse (issue 16 item 1; deliberate difference 6 from upstream, which counts a trace
row it cannot write and answers ok): on a full disk, or past a file size limit, the call whose
row the disk refuses answers ``ENGINE_IO`` and changes nothing (its slot write is rolled back,
no partial line stays in the record); ``record_end`` that cannot write its closing row leaves the
record open; a ``%%reckon`` cell shows the refusal and the record is set aside for
``%reckon recover``. Each case runs in a child process whose ``RLIMIT_FSIZE`` the test lowers
(Python ignores SIGXFSZ, so a write past the limit fails with EFBIG)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

resource = pytest.importorskip("resource", reason="RLIMIT_FSIZE needs a POSIX system")


def child(script: str, *args: str) -> dict:
    """Run *script* in a fresh interpreter; it prints one JSON object."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


LIMIT = """
import json, resource, sys
from pathlib import Path

def limit_to(path, extra):
    # the file may grow by *extra* bytes more; every write past that fails with EFBIG
    size = Path(path).stat().st_size
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + extra, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

def unlimit():
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
"""


def test_a_row_the_disk_refuses_fails_its_call_and_changes_nothing(tmp_path):
    out = child(LIMIT + """
from dsh_notebook.reckoner import Engine, read_record
home = Path(sys.argv[1])
e = Engine(home)
e.record_start("Full disk")
e.set("L", {"num": 2.0, "dim": "metre"})
limit_to(home / "open-record.jsonl", 200)
receipts = [e.set("L", {"num": float(n), "dim": "metre"}) for n in range(3, 12)]
failed = next(r for r in receipts if not r["ok"])
held = e.slots()["L"][0].mag
ev = e.eval("@L*2", "x")
end = e.record_end("done")
still_open = e.open_record is not None
rec = read_record(home / "open-record.jsonl")
sets = [r["content"]["value"]["num"] for r in rec.rows if r["tool"] == "set"]
unlimit()
after = e.record_end("done, once the disk had room")  # still refused: rows are missing from it
rid = e.open_record["id"]
e.close()
from dsh_notebook.reckoner import close_set_aside
Engine(home, recover=False)  # the notebook's next engine sets it aside; %reckon recover closes it
closed = close_set_aside(home, rid)
rows = read_record(closed).rows
print(json.dumps({"failed": failed, "held": held, "eval": ev, "x": "x" in e.slots(), "end": end,
                  "still_open": still_open, "problems": rec.problems, "sets": sets, "after": after,
                  "failures": e.trace_failures, "stopped": read_record(closed).ended_in_refusal,
                  "tail": [(r["tool"], r["ok"]) for r in rows[-2:]]}))
""", str(tmp_path / "home"))
    assert out["failed"]["code"] == "ENGINE_IO" and "could not be written" in out["failed"]["error"]
    assert "EFBIG" in out["failed"]["error"] and "changed nothing" in out["failed"]["error"]
    assert out["held"] == out["sets"][-1]  # the slot holds the last value the record holds
    assert out["eval"]["code"] == "ENGINE_IO" and out["x"] is False  # the eval's write rolled back
    assert out["end"]["code"] == "ENGINE_IO" and out["still_open"]
    assert out["problems"] == []  # no torn line: a refused row leaves nothing behind
    assert out["after"]["code"] == "ENGINE_IO" and "not whole" in out["after"]["error"]
    assert out["tail"] == [["record_end", False], ["record_end", True]]  # the refusal is in the record
    assert out["stopped"] is True  # and it reads as a calculation that stopped at a refusal
    assert out["failures"] >= 3


def test_a_record_start_the_disk_refuses_leaves_no_record(tmp_path):
    out = child(LIMIT + """
import os
from dsh_notebook.reckoner import Engine
home = Path(sys.argv[1])
e = Engine(home)
(home / "probe").write_bytes(b"")
limit_to(home / "probe", 10)  # smaller than the header and the start row
r = e.record_start("No room")
unlimit()
print(json.dumps({"r": r, "open": e.open_record, "file": (home / "open-record.jsonl").exists(),
                  "again": e.record_start("Room again")}))
""", str(tmp_path / "home"))
    assert out["r"]["code"] == "ENGINE_IO" and out["open"] is None and out["file"] is False
    assert out["again"] == {"ok": True}


def test_a_reckon_cell_shows_the_refusal_and_sets_the_record_aside(tmp_path):
    out = child(LIMIT + """
from dsh_notebook.reckon.cell import ReckonSession, parse_options, run_cell
from dsh_notebook.reckon.render import bundle
from dsh_notebook.reckoner import Engine, list_records
home = Path(sys.argv[1])
session = ReckonSession(Engine(home, recover=False))
(home / "probe").write_bytes(b"")
body = "\\n".join(f"given x{n} = {n} m" for n in range(40))
resource.setrlimit(resource.RLIMIT_FSIZE, (900, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
outcome = run_cell(session, parse_options("Too long for the disk"), body, {})
unlimit()
data, _ = bundle(outcome, {})
nxt = run_cell(session, parse_options("Next"), "given y = 1 m", {})
info = list_records(home)
print(json.dumps({"status": outcome.status, "codes": [s.receipt.get("code") for s in outcome.steps if not s.ok],
                  "text": data["text/plain"], "next": nxt.status,
                  "aside": [s["id"] for s in info["set_aside"]]}))
""", str(tmp_path / "home"))
    assert out["status"] == "refused" and out["codes"][0] == "ENGINE_IO"
    assert "ENGINE_IO" in out["text"] and "could not be closed" in out["text"]
    assert out["next"] == "closed" and len(out["aside"]) == 1  # ready for %reckon recover


def test_run_exits_non_zero_when_a_row_cannot_be_written(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in [
        "%load_ext dsh_notebook",
        "import resource\nresource.setrlimit(resource.RLIMIT_FSIZE, (600, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))",
        "%%reckon Too long\n" + "\n".join(f"given x{n} = {n} m" for n in range(40)),
    ]])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "full.ipynb"
    nbformat.write(nb, str(path))
    done = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "run", str(path), "--no-save"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ENGINE_IO" in done.stderr


def test_a_closed_record_left_read_only_in_place_is_finished_not_appended_to(tmp_path):
    """A kill between making the closing record read-only and moving it (issue 16 item 3): the
    next engine moves it into records/ as it is; recovery never appends after a closing row."""
    from dsh_notebook.reckoner import Engine, read_record

    home = tmp_path / "home"
    e = Engine(home)
    e.record_start("Interrupted close")
    e.set("L", {"num": 2.0, "dim": "metre"})
    rid = e.open_record["id"]
    e.record_end("closed")  # then put it back as the kill would have left it
    closed = home / "records" / f"{rid}.jsonl"
    stuck = home / "open-record.jsonl"
    closed.rename(stuck)
    before = stuck.read_bytes()
    again = Engine(home)  # a new kernel resumes the folder
    assert again.open_record is None and again.last_closed == closed
    assert closed.read_bytes() == before and not stuck.exists()
    assert read_record(closed).closed and [r["tool"] for r in read_record(closed).rows][-1] == "record_end"


def test_recover_close_of_a_set_aside_record_with_its_closing_row_appends_nothing(tmp_path):
    from dsh_notebook.reckoner import Engine, close_set_aside, list_records

    home = tmp_path / "home"
    e = Engine(home)
    e.record_start("Closed, never moved")
    e.set("L", {"num": 2.0, "dim": "metre"})
    rid = e.open_record["id"]
    e.record_end()
    (home / "records" / f"{rid}.jsonl").rename(home / "open-record.jsonl")
    (home / "open-record.jsonl").chmod(0o644)
    Engine(home, recover=False)  # the notebook's engine sets it aside instead
    aside = list_records(home)["set_aside"]
    assert [a["id"] for a in aside] == [rid]
    dest = close_set_aside(home, rid)
    assert dest == home / "records" / f"{rid}.jsonl"
    rows = [json.loads(x) for x in dest.read_text().splitlines()]
    assert [r.get("tool") for r in rows].count("record_end") == 1


def test_a_reckon_output_never_names_an_earlier_record_when_a_close_fails(tmp_path):
    """The closing row is written but the record cannot be moved (an I/O error in the rename): the
    cell's outcome names no file, never the previous record's."""
    out = child(LIMIT + """
from dsh_notebook.reckon.cell import ReckonSession, parse_options, run_cell
from dsh_notebook.reckoner import Engine
home = Path(sys.argv[1])
session = ReckonSession(Engine(home, recover=False))
first = run_cell(session, parse_options("First"), "given a = 1 m", {})
# the next close can write its row but not fsync-and-move: make the records folder a file
import shutil
shutil.move(str(home / "records"), str(home / "records-moved"))
(home / "records").write_text("not a folder")
second = run_cell(session, parse_options("Second"), "given b = 2 m", {})
print(json.dumps({"first": str(first.path), "second": None if second.path is None else str(second.path),
                  "status": second.status, "codes": [s.receipt.get("code") for s in second.steps if not s.ok]}))
""", str(tmp_path / "home"))
    assert out["first"].endswith(".jsonl") and out["second"] is None
    assert out["status"] == "refused" and out["codes"] == ["ENGINE_IO"]


def test_a_full_tmpfs_refuses_rows_with_enospc(tmp_path):
    """A real full disk: a 64 KiB tmpfs (mounted when this process may mount one, else skipped)."""
    import os
    import shutil as sh

    mnt = tmp_path / "small"
    mnt.mkdir()
    if not sh.which("mount") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root and mount(8): run the tests as root to include this one")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"this machine does not let the tests mount a tmpfs ({done.stderr.strip()})")
    try:
        out = child("""
import json, sys
from pathlib import Path
from dsh_notebook.reckoner import Engine, read_record
home = Path(sys.argv[1]) / "home"
e = Engine(home)
e.record_start("Until the disk is full")
codes, n = [], 0
while n < 5000:
    r = e.set("x", {"num": float(n), "dim": "metre"})
    if not r["ok"]:
        codes.append(r["code"])
        break
    n += 1
held = e.slots()["x"][0].mag
rec = read_record(home / "open-record.jsonl")
last = [r for r in rec.rows if r["tool"] == "set"][-1]["content"]["value"]["num"]
print(json.dumps({"codes": codes, "error": r.get("error", ""), "held": held, "last": last,
                  "problems": rec.problems, "end": e.record_end()}))
""", str(mnt))
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
    assert out["codes"] == ["ENGINE_IO"] and "ENOSPC" in out["error"]
    assert out["held"] == out["last"] and out["problems"] == []  # rolled back, no torn line
    assert out["end"]["code"] == "ENGINE_IO"  # a record missing a row is never closed as whole
