"""Records (upstream-facts.md 3.3 lifetime, 3.11): markers, trace rows and their content,
file layout, the version gate, recovery by replay, set-aside records and replay()."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from receipts import refused

from dsh_notebook.reckoner import (
    Engine,
    UnreadableRecord,
    close_set_aside,
    discard_set_aside,
    list_records,
    read_record,
    replay,
)
from dsh_notebook.reckoner.values import stored

ROOT = Path(__file__).resolve().parents[1]
METRE = [1, 0, 0, 0, 0, 0, 0]
ZERO = [0, 0, 0, 0, 0, 0, 0]


def lines(path):
    return [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]


def rows(engine):
    return lines(engine.home / "open-record.jsonl")[1:]


def snapshot(engine):
    return {n: (stored(v), rev) for n, (v, rev) in engine.slots().items()}




@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


@pytest.fixture
def fresh(home):
    e = Engine(home)
    yield e
    e.close()


# ------------------------------------------------------------------ markers and rows


def test_record_start_writes_header_and_start_row(fresh):
    t0 = time.time() * 1000
    assert fresh.record_start("Copper wire") == {"ok": True}
    raw = (fresh.home / "open-record.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(raw[0]) == {"seq": 0, "version": 1}
    assert raw[0] == '{"seq":0,"version":1}'
    start = json.loads(raw[1])
    assert set(start) == {"seq", "at", "tool", "ok", "content"}
    assert start["seq"] == 1 and start["tool"] == "record_start" and start["ok"] is True
    assert start["content"]["title"] == "Copper wire"
    rid = start["content"]["record"]
    assert isinstance(rid, str) and rid.split("-")[0].isdigit()
    assert abs(int(rid.split("-")[0]) - t0) < 60_000
    assert isinstance(start["at"], int) and abs(start["at"] - t0) < 60_000
    assert fresh.open_record["id"] == rid and fresh.open_record["title"] == "Copper wire"


def test_rows_and_content_shapes(engine):
    engine.set("x", {"num": 1, "dim": "metre"})
    engine.set("y", {"num": 2, "dim": "metre"})
    engine.eval("@y + @x + @y", "x")
    engine.eval("$sum_{k=1}^{2}(k*@x)", "z")
    engine.get("x", digits=1, form="rect")
    engine.set("y", None)
    engine.eval("@q", "x")
    engine.record_message("a visible note")
    engine.record_message("for the writer", hide=True)
    engine.record_message("explicitly shown", hide=False)
    rs = rows(engine)
    assert [r["seq"] for r in rs] == list(range(1, len(rs) + 1))
    assert [r["tool"] for r in rs] == ["record_start", "set", "set", "eval", "eval", "get", "set", "eval",
                                       "record_message", "record_message", "record_message"]
    for r in rs:
        assert set(r) == {"seq", "at", "tool", "ok", "content"}
        assert isinstance(r["at"], int)
    assert rs[1]["content"] == {"name": "x", "value": {"num": 1.0, "dim": METRE}}
    ev = rs[3]
    assert ev["ok"] is True
    assert ev["content"] == {
        "formula": "@y + @x + @y",
        "target": "x",
        "rev": 2,
        # first-use order, values before the write
        "vars": {"y": {"num": 2.0, "dim": METRE}, "x": {"num": 1.0, "dim": METRE}},
        "result": {"num": 5.0, "dim": METRE},
    }
    assert list(ev["content"]["vars"]) == ["y", "x"]
    # bound variables never appear in vars
    assert rs[4]["content"]["vars"] == {"x": {"num": 5.0, "dim": METRE}}
    assert rs[4]["content"]["result"] == {"num": 15.0, "dim": METRE}
    # get stores the rendered value, not the options
    assert rs[5]["content"] == {"name": "x", "value": {"re": 5.0, "im": 0.0, "dim": "metre"}}
    assert rs[6]["content"] == {"name": "y", "value": None}
    assert rs[7]["ok"] is False
    assert set(rs[7]["content"]) == {"code", "error"}
    assert rs[7]["content"]["code"] == "ENGINE_SLOT_NOT_FOUND"
    assert rs[8]["content"] == {"text": "a visible note"}
    assert rs[9]["content"] == {"text": "for the writer", "hide": True}
    assert rs[10]["content"] == {"text": "explicitly shown"}


def test_vars_order_follows_evaluation_order(engine):
    engine.set("a", {"num": 1})
    engine.set("b", {"num": 2})
    engine.set("c", {"array": [5, 6]})
    engine.eval("$sum_{k=@a}^{@b}(@c[k-1]) + @b*@a", "out")
    assert list(rows(engine)[-1]["content"]["vars"]) == ["a", "b", "c"]


def test_vars_of_array_and_object(engine):
    engine.set("o", {"object": {"L": {"array": [1, 2], "dim": "metre"}}})
    engine.eval("@o.L[1]*2", "x")
    c = rows(engine)[-1]["content"]
    assert c["vars"] == {"o": {"object": {"L": {"array": [1.0, 2.0], "dim": METRE}}}}
    assert c["result"] == {"num": 4.0, "dim": METRE}


def test_refused_rows_hold_code_and_error(engine):
    engine.set("x", {"num": "1"})
    engine.get("nope")
    engine.eval("2x", "y")
    engine.record_message("")
    for r in rows(engine)[1:]:
        assert r["ok"] is False
        assert set(r["content"]) == {"code", "error"}


def test_record_end_moves_file_read_only_and_clears_table(engine):
    engine.set("x", {"num": 1})
    rid = engine.open_record["id"]
    assert engine.record_end("The answer is 1.") == {"ok": True}
    home = engine.home
    dest = home / "records" / f"{rid}.jsonl"
    assert dest.exists()
    assert not (home / "open-record.jsonl").exists()
    assert stat.S_IMODE(dest.stat().st_mode) & 0o222 == 0
    assert engine.slots() == {}
    assert engine.open_record is None
    last = lines(dest)[-1]
    assert last["tool"] == "record_end" and last["ok"] is True
    assert last["content"] == {"text": "The answer is 1.", "record": rid}
    refused(engine.get("x"), "ENGINE_OPEN_RECORD_NOT_FOUND")


@pytest.mark.parametrize("text", [None, "", "   \n"])
def test_record_end_without_text(engine, text):
    rid = engine.open_record["id"]
    r = engine.record_end() if text is None else engine.record_end(text)
    assert r == {"ok": True}
    assert lines(engine.home / "records" / f"{rid}.jsonl")[-1]["content"] == {"record": rid}


def test_calls_without_open_record_write_nothing(fresh):
    home = fresh.home
    before = sorted(p.name for p in home.rglob("*"))
    for r in (fresh.set("x", {"num": 1}), fresh.get("x"), fresh.eval("1", "x"),
              fresh.record_message("hello"), fresh.record_end(), fresh.record_end("bye")):
        refused(r, "ENGINE_OPEN_RECORD_NOT_FOUND")
    assert sorted(p.name for p in home.rglob("*")) == before
    assert fresh.slots() == {}


def test_calls_after_record_end_write_nothing(engine):
    rid = engine.open_record["id"]
    engine.record_end()
    dest = engine.home / "records" / f"{rid}.jsonl"
    content = dest.read_bytes()
    refused(engine.set("x", {"num": 1}), "ENGINE_OPEN_RECORD_NOT_FOUND")
    refused(engine.record_message("late"), "ENGINE_OPEN_RECORD_NOT_FOUND")
    assert dest.read_bytes() == content
    assert not (engine.home / "open-record.jsonl").exists()


def test_record_start_twice(engine):
    engine.set("x", {"num": 1})
    msg = refused(engine.record_start("second"), "ENGINE_OPEN_RECORD_FOUND")
    assert "test record" in msg
    last = rows(engine)[-1]
    assert last["tool"] == "record_start" and last["ok"] is False
    assert last["content"]["code"] == "ENGINE_OPEN_RECORD_FOUND"
    assert "x" in engine.slots()  # the open record is untouched


@pytest.mark.parametrize("title", ["", "   ", None, 5, ["t"]])
def test_record_start_needs_title(fresh, title):
    refused(fresh.record_start(title), "ENGINE_INVALID_ARGS")
    assert fresh.open_record is None
    assert not (fresh.home / "open-record.jsonl").exists()


@pytest.mark.parametrize("kwargs", [{"text": ""}, {"text": "  "}, {"text": None}, {"text": 3},
                                    {"text": "ok", "hide": "yes"}, {"text": "ok", "hide": 1}])
def test_record_message_arguments(engine, kwargs):
    refused(engine.record_message(**kwargs), "ENGINE_INVALID_ARGS")


def test_record_end_text_must_be_string(engine):
    refused(engine.record_end(5), "ENGINE_INVALID_ARGS")
    assert engine.open_record is not None


def test_table_cleared_between_records(engine):
    engine.set("x", {"num": 1})
    engine.record_end()
    engine.record_start("next")
    assert engine.slots() == {}
    refused(engine.eval("@x", "y"), "ENGINE_SLOT_NOT_FOUND")
    assert engine.set("x", {"num": 2})["rev"] == 1


def test_record_ids_are_unique(fresh):
    ids = []
    for i in range(4):
        fresh.record_start(f"r{i}")
        ids.append(fresh.open_record["id"])
        fresh.record_end()
    assert len(set(ids)) == 4
    assert sorted(p.stem for p in (fresh.home / "records").iterdir()) == sorted(ids)
    listed = list_records(fresh.home)
    assert [s["title"] for s in listed["closed"]] == ["r0", "r1", "r2", "r3"]


def test_list_and_read_records(engine):
    engine.set("x", {"num": 1})
    engine.eval("@x*2", "y")
    rid = engine.open_record["id"]
    listed = list_records(engine.home)
    assert listed["open"]["id"] == rid and listed["open"]["title"] == "test record"
    assert listed["closed"] == []
    engine.record_end("done")
    listed = list_records(engine.home)
    assert listed["open"] is None
    (s,) = listed["closed"]
    assert s["id"] == rid and s["title"] == "test record" and s["opened"] and s["closed"]
    rec = read_record(engine.home / "records" / f"{rid}.jsonl")
    assert rec.id == rid and rec.title == "test record" and rec.version == 1 and rec.closed
    assert rec.closing_text == "done"
    assert [r["content"]["target"] for r in rec.steps] == ["y"]


# ------------------------------------------------------------------ recovery


def test_crash_and_recover_resumes(engine):
    home = engine.home
    engine.set("L", {"num": 2, "dim": "metre"})
    engine.set("gone", {"num": 1})
    engine.eval("@L*3", "L3")
    engine.set("gone", None)
    engine.eval("@nope", "bad")
    engine.set("L", {"num": 5, "dim": "metre"})
    before = snapshot(engine)
    rid = engine.open_record["id"]
    last_seq = rows(engine)[-1]["seq"]
    engine.close()  # the record stays open on disk, as after a crash

    e2 = Engine(home)
    try:
        assert e2.recovered == rid
        assert e2.open_record["id"] == rid and e2.open_record["title"] == "test record"
        assert snapshot(e2) == before
        assert "gone" not in e2.slots() and "bad" not in e2.slots()
        assert e2.get("L3")["value"] == {"num": 6.0, "dim": "metre"}
        assert e2.eval("@L3 + @L", "s")["ok"]
        assert e2.set("L", {"num": 1})["rev"] == 3  # revs continue from replay
        rs = lines(home / "open-record.jsonl")[1:]
        assert [(r["seq"], r["tool"]) for r in rs[-3:]] == [
            (last_seq + 1, "get"), (last_seq + 2, "eval"), (last_seq + 3, "set")]
        assert e2.record_end() == {"ok": True}
        assert (home / "records" / f"{rid}.jsonl").exists()
    finally:
        e2.close()


def test_recovery_writes_stored_eval_results_without_recomputing(engine):
    home = engine.home
    engine.set("x", {"num": 2})
    engine.eval("@x*10", "y")
    engine.close()
    path = home / "open-record.jsonl"
    text = path.read_text(encoding="utf-8").replace('"result":{"num":20.0', '"result":{"num":21.0')
    path.write_text(text, encoding="utf-8")
    e2 = Engine(home)
    try:
        assert e2.get("y")["value"]["num"] == 21.0
    finally:
        e2.close()


def test_recovery_after_process_crash(home):
    code = textwrap.dedent(f"""
        import os
        from dsh_notebook.reckoner import Engine
        e = Engine({str(home)!r})
        e.record_start("crashing")
        e.set("V", {{"num": 12, "dim": "volt"}})
        e.set("R", {{"num": 4, "dim": "ohm"}})
        r = e.eval("@V/@R", "I")
        assert r["ok"], r
        os._exit(0)   # no close, no record_end: a kernel crash
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT, timeout=60)
    assert (home / "open-record.jsonl").exists()
    e = Engine(home)
    try:
        assert e.open_record["title"] == "crashing"
        assert e.get("I")["value"] == {"num": 3.0, "dim": "ampere"}
        assert e.eval("@I*@R", "V2")["ok"]
        last = lines(home / "open-record.jsonl")[-1]
        assert (last["seq"], last["tool"]) == (6, "eval")  # start, set, set, eval, then get=5, eval=6
    finally:
        e.close()


def test_torn_last_line_does_not_block_recovery(engine):
    home = engine.home
    engine.set("x", {"num": 7})
    engine.close()
    path = home / "open-record.jsonl"
    with open(path, "ab") as f:
        f.write(b'{"seq":3,"at":1,"tool":"set","ok":true,"content":{"name":"y","va')
    e2 = Engine(home)
    try:
        assert e2.get("x")["value"]["num"] == 7.0
        assert "y" not in e2.slots()
        assert e2.set("z", {"num": 1})["ok"]
        rec = read_record(path)
        assert rec.problems  # the torn line is reported and dropped
        assert rec.rows[-1]["tool"] == "set" and rec.rows[-1]["content"]["name"] == "z"
        assert rec.rows[-1]["seq"] == 4  # x=2, get=3, z=4
    finally:
        e2.close()


def test_recover_false_sets_aside_and_close_set_aside(engine):
    home = engine.home
    engine.set("x", {"num": 1})
    rid = engine.open_record["id"]
    engine.close()
    e2 = Engine(home, recover=False)
    try:
        assert e2.open_record is None and e2.slots() == {}
        stale = home / "stale" / f"{rid}.jsonl"
        assert stale.exists() and not (home / "open-record.jsonl").exists()
        assert stale in e2.set_aside
        assert [s["id"] for s in list_records(home)["set_aside"]] == [rid]
        refused(e2.set("x", {"num": 1}), "ENGINE_OPEN_RECORD_NOT_FOUND")
        dest = close_set_aside(home, rid, "closed later")
        assert dest == home / "records" / f"{rid}.jsonl"
        assert not stale.exists()
        last = lines(dest)[-1]
        assert last["tool"] == "record_end" and last["content"]["text"] == "closed later"
        assert read_record(dest).closed
        assert [s["id"] for s in list_records(home)["closed"]] == [rid]
        assert e2.record_start("new one")["ok"]
    finally:
        e2.close()


def test_discard_set_aside(engine):
    home = engine.home
    rid = engine.open_record["id"]
    engine.close()
    e2 = Engine(home, recover=False)
    try:
        discard_set_aside(home, rid)
        assert not (home / "stale" / f"{rid}.jsonl").exists()
        listed = list_records(home)
        assert listed["set_aside"] == [] and listed["closed"] == [] and listed["open"] is None
        with pytest.raises(FileNotFoundError):
            discard_set_aside(home, rid)
    finally:
        e2.close()


def test_second_engine_on_same_folder(engine):
    home = engine.home
    engine.set("x", {"num": 1})
    content = (home / "open-record.jsonl").read_bytes()
    e2 = Engine(home)
    try:
        assert e2.open_record is None and e2.recovered is None
        msg = refused(e2.record_start("other"), "ENGINE_OPEN_RECORD_FOUND")
        assert "another" in msg
        refused(e2.set("y", {"num": 1}), "ENGINE_OPEN_RECORD_NOT_FOUND")
        assert (home / "open-record.jsonl").read_bytes() == content
        # the first engine carries on
        assert engine.set("x", {"num": 2})["rev"] == 2
    finally:
        e2.close()


# ------------------------------------------------------------------ version gate


def _write(path, objs):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")


START = {"seq": 1, "at": 1700000000000, "tool": "record_start", "ok": True,
         "content": {"title": "old", "record": "1700000000000"}}


@pytest.mark.parametrize("header", [{"seq": 0, "version": 0}, None, {"seq": 0}, {"seq": 0, "version": "1"}])
def test_version_gate_on_closed_records(home, header):
    good = home / "records" / "1700000000001.jsonl"
    _write(good, [{"seq": 0, "version": 1}, dict(START, content={"title": "good", "record": "1700000000001"})])
    bad = home / "records" / "1700000000000.jsonl"
    _write(bad, ([header] if header else []) + [START])
    listed = list_records(home)
    assert [u["id"] for u in listed["unreadable"]] == ["1700000000000"]
    assert [s["id"] for s in listed["closed"]] == ["1700000000001"]
    with pytest.raises(UnreadableRecord):
        read_record(bad)
    with pytest.raises(UnreadableRecord):
        replay(bad)


def test_record_without_start_row_is_unreadable(home):
    bad = home / "records" / "1.jsonl"
    _write(bad, [{"seq": 0, "version": 1}, {"seq": 1, "at": 1, "tool": "set", "ok": True,
                                            "content": {"name": "x", "value": {"num": 1}}}])
    with pytest.raises(UnreadableRecord):
        read_record(bad)
    assert [u["id"] for u in list_records(home)["unreadable"]] == ["1"]


def test_open_file_failing_version_gate_is_discarded_at_start(home):
    _write(home / "open-record.jsonl", [{"seq": 0, "version": 0}, START,
                                        {"seq": 2, "at": 1, "tool": "set", "ok": True,
                                         "content": {"name": "x", "value": {"num": 1, "dim": ZERO}}}])
    e = Engine(home)
    try:
        assert e.open_record is None and e.slots() == {}
        assert not (home / "open-record.jsonl").exists()
        refused(e.get("x"), "ENGINE_OPEN_RECORD_NOT_FOUND")
        assert e.record_start("fresh")["ok"]
    finally:
        e.close()


def test_open_file_without_start_title_is_discarded_at_start(home):
    _write(home / "open-record.jsonl", [{"seq": 0, "version": 1},
                                        dict(START, content={"record": "1700000000000"}),
                                        {"seq": 2, "at": 1, "tool": "set", "ok": True,
                                         "content": {"name": "x", "value": {"num": 1, "dim": ZERO}}}])
    e = Engine(home)
    try:
        assert e.open_record is None and e.slots() == {}
        assert not (home / "open-record.jsonl").exists()
    finally:
        e.close()


# ------------------------------------------------------------------ replay


def _closed_record(engine):
    engine.set("V", {"num": 12, "dim": "volt"})
    engine.set("R", {"re": 4, "im": 3, "dim": "ohm"})
    engine.set("a", {"array": [1, 2, 3], "dim": "metre"})
    engine.eval("@V/@R", "I")
    engine.eval("$sum_{k=0}^{2}(@a[k])*2", "s")
    engine.eval("@I*@R", "V")
    engine.eval("$sqrt(@a)", "bad")  # refused: not replayed
    rid = engine.open_record["id"]
    engine.record_end()
    return engine.home / "records" / f"{rid}.jsonl"


def test_replay_finds_no_difference(engine):
    path = _closed_record(engine)
    out = replay(path)
    assert out["differences"] == []
    assert out["checked"] == 3
    assert out["title"] == "test record"


def test_replay_reports_tampered_result(engine, tmp_path):
    path = _closed_record(engine)
    copy = tmp_path / "copy.jsonl"
    shutil.copyfile(path, copy)
    os.chmod(copy, 0o644)
    data = lines(copy)
    for row in data:
        if row.get("tool") == "eval" and row.get("ok") and row["content"]["target"] == "s":
            row["content"]["result"]["num"] += 1
            tampered_seq = row["seq"]
    copy.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
    out = replay(copy)
    assert len(out["differences"]) == 1
    d = out["differences"][0]
    assert d["seq"] == tampered_seq and d["target"] == "s"
    assert d["recorded"]["num"] == 13.0 and d["replayed"]["num"] == 12.0
    assert replay(path)["differences"] == []  # the original is untouched


def test_sigkill_while_writing_loses_no_acknowledged_row(home):
    import signal

    from dsh_notebook.reckoner import close_set_aside

    code = textwrap.dedent(f"""
        import sys
        from dsh_notebook.reckoner import Engine
        e = Engine({str(home)!r})
        e.record_start("killed")
        e.set("x", {{"num": 1}})
        i = 0
        while True:
            r = e.eval("@x + 1", "x")
            assert r["ok"], r
            i += 1
            print(i, flush=True)   # acknowledged: the row is on disk
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env, cwd=ROOT)
    acknowledged = 0
    while acknowledged < 300:
        acknowledged = int(proc.stdout.readline())
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    rec = read_record(home / "open-record.jsonl")
    evals = [r for r in rec.rows if r["tool"] == "eval" and r["ok"]]
    assert len(evals) >= acknowledged  # every acknowledged call is on disk
    assert [r["content"]["rev"] for r in evals] == list(range(2, len(evals) + 2))
    # the person closes it: set aside at the next start, then closed with every row kept
    e = Engine(home, recover=False)
    [aside] = e.set_aside
    dest = close_set_aside(home, aside.stem)
    closed = read_record(dest)
    assert closed.closed and len([r for r in closed.rows if r["tool"] == "eval"]) == len(evals)
