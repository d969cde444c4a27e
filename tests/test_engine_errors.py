"""The 20 error codes (upstream-facts.md 3.10, and ENGINE_IO: deliberate difference 6): one
trigger per code, the failure receipt's shape, and (3.3) a refused call changes nothing."""

from __future__ import annotations

import json
import math

import pytest

from dsh_notebook.reckoner import ERROR_CODES, ERROR_TRIGGERS
from dsh_notebook.reckoner import engine as engine_module
from dsh_notebook.reckoner.values import stored


def setup_slots(e):
    e.set("L", {"num": 2, "dim": "metre"})
    e.set("V", {"num": 10, "dim": "volt"})
    e.set("a", {"array": [1, 2, 3]})
    e.set("o", {"object": {"x": {"num": 1}}})


TRIGGERS = {
    "ENGINE_INVALID_FORMULA": lambda e: e.eval("3 # 4", "x"),
    "ENGINE_INVALID_NUMBER": lambda e: e.eval("2e", "x"),
    "ENGINE_INVALID_IDENTIFIER": lambda e: e.eval("2x", "x"),
    "ENGINE_INVALID_DIMENSION": lambda e: e.set("x", {"num": 1, "dim": "kohm"}),
    "ENGINE_INVALID_NOTATION": lambda e: e.eval("$foo(1)", "x"),
    "ENGINE_INVALID_ARITY": lambda e: e.eval("$sin(1, 2)", "x"),
    "ENGINE_SLOT_NOT_FOUND": lambda e: e.eval("@missing", "x"),
    "ENGINE_NAME_NOT_BOUND": lambda e: e.eval("k + 1", "x"),
    "ENGINE_INCOMPATIBLE_DIMENSION": lambda e: e.eval("@L + @V", "x"),
    "ENGINE_UNSUPPORTED_OPERATION": lambda e: e.eval("@o * 2", "x"),
    "ENGINE_INVALID_INDEX": lambda e: e.eval("@a[3]", "x"),
    "ENGINE_UNDEFINED_RESULT": lambda e: e.eval("$sqrt(-1)", "x"),
    "ENGINE_UNSUPPORTED_INDEX": lambda e: e.eval("@L[0]", "x"),
    "ENGINE_FIELD_NOT_FOUND": lambda e: e.eval("@o.y", "x"),
    "ENGINE_UNSUPPORTED_SYMBOL": lambda e: e.eval("$integral_{0}^{1}(x, x)", "x"),
    "ENGINE_INVALID_ARGS": lambda e: e.set("x", {"num": 1, "re": 1, "im": 0}),
    "ENGINE_OPEN_RECORD_NOT_FOUND": None,  # needs a closed engine, see below
    "ENGINE_OPEN_RECORD_FOUND": lambda e: e.record_start("again"),
    "ENGINE_UNKNOWN_ERROR": None,  # needs a fault, see below
    "ENGINE_IO": None,  # needs a disk that refuses a row: tests/test_engine_io.py
}


def check_receipt(r, code):
    assert isinstance(r, dict)
    assert set(r) == {"ok", "code", "error"}, r
    assert r["ok"] is False and r["code"] == code, r
    assert isinstance(r["error"], str) and r["error"].strip() == r["error"] and r["error"]
    assert "\n" not in r["error"]


def test_exactly_20_codes():
    assert len(ERROR_CODES) == 20 and len(set(ERROR_CODES)) == 20
    assert ERROR_CODES[-1] == "ENGINE_IO"  # upstream's 19 first, in upstream's order
    assert set(TRIGGERS) == set(ERROR_CODES)
    assert set(ERROR_TRIGGERS) == set(ERROR_CODES)
    assert all(c.startswith("ENGINE_") for c in ERROR_CODES)


@pytest.mark.parametrize("code", [c for c, t in TRIGGERS.items() if t is not None])
def test_code_trigger(engine, code):
    setup_slots(engine)
    before = {n: (stored(v), rev) for n, (v, rev) in engine.slots().items()}
    r = TRIGGERS[code](engine)
    check_receipt(r, code)
    assert r["error"].endswith(".")
    # the refusal is recorded as a row with {code, error}
    rows = [json.loads(x) for x in (engine.home / "open-record.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows[-1]["ok"] is False and rows[-1]["content"] == {"code": code, "error": r["error"]}
    assert {n: (stored(v), rev) for n, (v, rev) in engine.slots().items()} == before


def test_open_record_not_found(tmp_path):
    e = engine_module.Engine(tmp_path / "h")
    for r in (e.set("x", {"num": 1}), e.get("x"), e.eval("1", "x"), e.record_message("m"), e.record_end()):
        check_receipt(r, "ENGINE_OPEN_RECORD_NOT_FOUND")
        assert r["error"].endswith(".")


def test_unknown_error(engine, monkeypatch):
    setup_slots(engine)
    before = {n: (stored(v), rev) for n, (v, rev) in engine.slots().items()}

    def boom(text):
        raise RuntimeError("boom")

    monkeypatch.setattr(engine_module, "parse", boom)
    r = engine.eval("@L*2", "L")
    check_receipt(r, "ENGINE_UNKNOWN_ERROR")
    assert r["error"].startswith("internal error: ") and "boom" in r["error"]
    assert {n: (stored(v), rev) for n, (v, rev) in engine.slots().items()} == before
    rows = [json.loads(x) for x in (engine.home / "open-record.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows[-1]["content"]["code"] == "ENGINE_UNKNOWN_ERROR"
    monkeypatch.undo()
    assert engine.eval("@L*2", "L")["ok"]


def test_unknown_error_from_set(engine, monkeypatch):
    def boom(value):
        raise ZeroDivisionError("inside")

    monkeypatch.setattr(engine_module, "parse_tagged", boom)
    check_receipt(engine.set("x", {"num": 1}), "ENGINE_UNKNOWN_ERROR")
    assert "x" not in engine.slots()


# ------------------------------------------------------------------ refused calls change nothing

REFUSED_CALLS = [
    ("set over existing, bad value", lambda e: e.set("L", {"num": "2"})),
    ("set over existing, two tags", lambda e: e.set("L", {"num": 2, "array": [1]})),
    ("set bad dim", lambda e: e.set("L", {"num": 2, "dim": "furlong"})),
    ("set non-finite", lambda e: e.set("L", {"num": math.inf})),
    ("set bad element", lambda e: e.set("a", {"array": [1, {"object": {}}]})),
    ("set bad name", lambda e: e.set("@L", {"num": 1})),
    ("eval into existing, dimension", lambda e: e.eval("@L + @V", "L")),
    ("eval into existing, fractional", lambda e: e.eval("$sqrt(@L)", "L")),
    ("eval into existing, non-finite", lambda e: e.eval("$exp(1000)", "V")),
    ("eval into existing, overflow", lambda e: e.eval("(@L/@L*1e300)*1e300", "a")),
    ("eval into new target", lambda e: e.eval("@nothing", "new")),
    ("eval syntax", lambda e: e.eval("2(3)", "L")),
    ("eval index", lambda e: e.eval("@a[9]", "a")),
    ("eval division", lambda e: e.eval("@L/0", "L")),
    ("eval symbolic", lambda e: e.eval("$diff(x, x)", "L")),
    ("eval on object", lambda e: e.eval("@o + 1", "o")),
    ("get mismatch", lambda e: e.get("L", dim="volt")),
    ("get bad digits", lambda e: e.get("L", digits=0)),
    ("record_start while open", lambda e: e.record_start("x")),
    ("record_message empty", lambda e: e.record_message("")),
    ("record_end bad text", lambda e: e.record_end(3)),
    ("call unknown arg", lambda e: e.call("set", {"name": "L", "value": {"num": 1}, "extra": 1})),
    ("call missing arg", lambda e: e.call("eval", {"formula": "1"})),
]


@pytest.mark.parametrize("what, call", REFUSED_CALLS, ids=[w for w, _ in REFUSED_CALLS])
def test_refused_call_changes_nothing(engine, what, call):
    setup_slots(engine)
    engine.eval("@L*2", "L")  # rev 2
    before = {n: (stored(v), rev) for n, (v, rev) in engine.slots().items()}
    r = call(engine)
    assert r["ok"] is False and r["code"] in ERROR_CODES, r
    after = {n: (stored(v), rev) for n, (v, rev) in engine.slots().items()}
    assert after == before
    assert engine.open_record is not None
