"""The six deliberate differences from upstream (reckoner.md section 1; the sixth from issue 16),
one test each."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_notebook.reckoner import Engine, default_home
from dsh_notebook.reckoner.values import stored


def lines(path):
    return [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]


def test_difference_1_atan2_point_order(engine, calc):
    """$atan2(x, y) is the angle of the point (x, y) (upstream's code swaps the arguments)."""
    assert calc("$atan2(0, 1)")["num"] == pytest.approx(math.pi / 2)
    assert calc("$atan2(1, 0)")["num"] == 0.0
    assert calc("$atan2(-1, 0)")["num"] == pytest.approx(math.pi)
    assert calc("$atan2(0, -1)")["num"] == pytest.approx(-math.pi / 2)
    assert calc("$atan2(1, $sqrt(3))")["num"] == pytest.approx(math.pi / 3)
    engine.set("x", {"array": [1, 0], "dim": "metre"})
    engine.set("y", {"array": [0, 1], "dim": "metre"})
    assert calc("$atan2(@x, @y)") == {"array": [0.0, pytest.approx(math.pi / 2)], "dim": "dim-less"}


def test_difference_2_degc_array_converts_every_element(engine):
    r = engine.set("T", {"array": [20, 25], "dim": "degC"})
    assert r["ok"]
    assert r["value"]["array"] == [pytest.approx(293.15), pytest.approx(298.15)]
    assert r["value"]["dim"] == [0, 0, 0, 0, 1, 0, 0]
    assert engine.get("T", dim="degC")["value"] == {"array": [pytest.approx(20), pytest.approx(25)], "dim": "degC"}
    r = engine.set("T2", {"array": [[0, 100], [-273.15, 1]], "dim": "degC"})
    assert r["value"]["array"] == [[pytest.approx(273.15), pytest.approx(373.15)], [pytest.approx(0, abs=1e-9),
                                                                                      pytest.approx(274.15)]]
    r = engine.set("Tc", {"array": [{"re": 10, "im": 2}], "dim": "degC"})
    (el,) = r["value"]["array"]
    assert el["re"] == pytest.approx(283.15) and el["im"] == pytest.approx(2.0)  # offset on the real part only
    # a kelvin array is stored as written
    assert engine.set("K", {"array": [20, 25], "dim": "kelvin"})["value"]["array"] == [20.0, 25.0]
    # arithmetic sees kelvin
    engine.eval("@T - @K", "d")
    assert engine.get("d")["value"]["array"] == [pytest.approx(273.15), pytest.approx(273.15)]


@pytest.mark.parametrize("formula", ["@y*1e300", "@y*@y/@y*1e300", "$exp(1000)", "$inf", "-$inf", "$inf-$inf",
                                     "@big*1e300", "$sum_{k=1}^{3}(@y*1e300)", "10^400", "$e^1000"])
def test_difference_3_non_finite_result_never_written(engine, formula):
    engine.set("y", {"num": 1e300, "dim": "metre"})
    engine.set("big", {"array": [1, 1e300]})
    engine.set("out", {"num": 1})
    before = {n: (stored(v), rev) for n, (v, rev) in engine.slots().items()}
    r = engine.eval(formula, "out")
    assert r["ok"] is False and r["code"] == "ENGINE_UNDEFINED_RESULT", r
    assert isinstance(r["error"], str) and r["error"]
    assert {n: (stored(v), rev) for n, (v, rev) in engine.slots().items()} == before
    r = engine.eval(formula, "fresh")
    assert r["code"] == "ENGINE_UNDEFINED_RESULT" and "fresh" not in engine.slots()
    # and the record stays strict JSON
    for row in lines(engine.home / "open-record.jsonl"):
        assert row is not None


def test_difference_4_home_chooses_the_folder(tmp_path, monkeypatch):
    env_home = tmp_path / "env-home"
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(env_home))
    assert default_home() == env_home / "reckoner"
    chosen = tmp_path / "notebook.sidecar" / "reckoner"
    e = Engine(home=chosen)
    try:
        assert e.home == chosen
        e.record_start("here")
        e.set("x", {"num": 1})
        rid = e.open_record["id"]
        assert (chosen / "open-record.jsonl").exists()
        e.record_end()
        assert (chosen / "records" / f"{rid}.jsonl").exists()
        assert not env_home.exists()
    finally:
        e.close()
    d = Engine()
    try:
        assert d.home == env_home / "reckoner"
        d.record_start("default")
        assert (env_home / "reckoner" / "open-record.jsonl").exists()
        d.record_end()
    finally:
        d.close()


def test_difference_5_rows_flushed_and_close_fsyncs_before_rename(engine, monkeypatch):
    path = engine.home / "open-record.jsonl"
    reader = ("import sys, json; print(len([json.loads(l) for l in open(sys.argv[1], encoding='utf-8') "
              "if l.strip()]))")
    for i, call in enumerate([lambda: engine.set("x", {"num": 1}), lambda: engine.eval("@x*2", "y"),
                              lambda: engine.get("y"), lambda: engine.eval("@nope", "z")]):
        call()
        # another reader (a separate file handle) sees the row at once
        with open(path, encoding="utf-8") as f:
            got = [json.loads(line) for line in f if line.strip()]
        assert got[-1]["seq"] == i + 2
    # and a separate process as well
    out = subprocess.run([sys.executable, "-c", reader, str(path)], capture_output=True, text=True, check=True)
    assert int(out.stdout) == 6  # header + start + 4 rows

    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = f"fd{fd}"
        events.append(("fsync", os.path.basename(target)))
        return real_fsync(fd)

    def replace(src, dst, *a, **k):
        events.append(("replace", os.path.basename(str(src)), str(dst)))
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    rid = engine.open_record["id"]
    assert engine.record_end("closing") == {"ok": True}
    monkeypatch.undo()
    dest = engine.home / "records" / f"{rid}.jsonl"
    replaces = [i for i, ev in enumerate(events) if ev[0] == "replace"]
    assert replaces, events
    first_replace = replaces[0]
    assert events[first_replace][1] == "open-record.jsonl" and events[first_replace][2] == str(dest)
    assert ("fsync", "open-record.jsonl") in events[:first_replace], events
    assert dest.exists() and not path.exists()
    assert lines(dest)[-1]["content"] == {"text": "closing", "record": rid}


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE needs a POSIX system")
def test_difference_6_a_row_the_disk_refuses_fails_its_call(tmp_path):
    """Upstream counts a trace row it cannot write and answers ok; this engine answers
    ENGINE_IO and the call changes nothing (more cases in tests/test_engine_io.py)."""
    script = (
        "import json, resource, sys\n"
        "from pathlib import Path\n"
        "from dsh_notebook.reckoner import Engine\n"
        "e = Engine(sys.argv[1]); e.record_start('Full')\n"
        "e.set('x', {'num': 1.0})\n"
        "size = (Path(sys.argv[1]) / 'open-record.jsonl').stat().st_size\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (size + 10, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\n"
        "r = e.set('x', {'num': 2.0})\n"
        "print(json.dumps({'r': r, 'x': e.slots()['x'][0].mag}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "home")], capture_output=True, text=True,
                          timeout=120)
    out = json.loads(done.stdout)
    assert out["r"]["ok"] is False and out["r"]["code"] == "ENGINE_IO" and out["x"] == 1.0
