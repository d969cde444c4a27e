"""Several processes on one engine folder (spec: storage.md "Writing rules": two kernels never
interleave lines; an engine locks its open record)."""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from pathlib import Path


def _worker(home: str, seconds: float, out) -> None:
    from dsh_notebook.reckoner import Engine

    e = Engine(home)
    closed = 0
    refused = 0
    deadline = time.time() + seconds
    while time.time() < deadline:
        r = e.record_start("worker")
        if not r["ok"]:
            assert r["code"] == "ENGINE_OPEN_RECORD_FOUND", r
            refused += 1
            continue
        assert e.set("x", {"num": 2, "dim": "metre"})["ok"]
        assert e.eval("@x*3", "y")["ok"]
        r = e.record_end("done")
        assert r["ok"], r
        closed += 1
    out.put((closed, refused))


def test_processes_sharing_a_folder_never_lose_or_merge_records(tmp_path):
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(str(tmp_path), 2.5, out)) for _ in range(3)]
    for p in procs:
        p.start()
    results = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    closed = sum(c for c, _ in results)
    files = sorted((tmp_path / "records").glob("*.jsonl"))
    assert closed > 0 and len(files) == closed  # every acknowledged record is on disk, none overwritten
    for f in files:
        rows = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()]
        assert rows[0] == {"seq": 0, "version": 1}
        assert [r["seq"] for r in rows] == list(range(len(rows)))  # one record per file
        assert rows[-1]["tool"] == "record_end" and rows[1]["content"]["record"] == f.stem
    assert not list(Path(tmp_path, "stale").glob("*.jsonl")) if (tmp_path / "stale").exists() else True
