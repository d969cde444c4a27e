"""Property tests: whatever is fed to set/eval/get/call, the engine answers with a receipt
(never an exception), refusals use the 19 codes with a message, and a refused call leaves
the slot table unchanged (upstream-facts.md 3.2, 3.3, 3.10)."""

from __future__ import annotations

import math
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_notebook.reckoner import ERROR_CODES, Engine, replay
from dsh_notebook.reckoner.grammar import ALL_NAMES
from dsh_notebook.reckoner.values import stored

SLOTS = {
    "L": {"num": 2, "dim": "metre"},
    "V": {"num": 10, "dim": "volt"},
    "R": {"re": 3, "im": 4, "dim": "ohm"},
    "N": {"num": 3},
    "z": {"num": 0},
    "neg": {"num": -1.5},
    "a": {"array": [1, 2, 3]},
    "b": {"array": [1, 2]},
    "M": {"array": [[1, 2], [3, 4]], "dim": "second"},
    "c": {"array": [{"re": 1, "im": -1}, 2]},
    "o": {"object": {"x": {"num": 1, "dim": "metre"}, "arr": {"array": [4, 5]},
                     "in": {"object": {"y": {"num": 2}}}}},
}

TOKENS = (
    list("0123456789+-*/^()[]{},.=_ \t\n@$") + ["->", "e", "i", "j", "k", "x", "N"]
    + ["$" + n for n in ALL_NAMES] + ["$foo", "$Pi"]
    + ["@" + n for n in SLOTS] + ["@missing", "@o.x", "@o.arr", "@o.in.y", "@a[0]", "@M[1]"]
    + ["1", "2", "0", "0.5", "1e3", "2j", "1e400", "1e-400", "2.5e-3", "1E5", "2x", "2e", "4."]
    + ["_{k=1}^{3}", "_{k=0}^{@N}", "_{x->0}", "_{0}^{1}", "^{2}", "(k)", "(x, x)", "(1, 2)", "($pi)"]
    + ["²", "é", "×", "中", "Ω", "\u2028", "\x00", "#", "%", ";", "'", '"', "!", "<", ">"]
)

UNARY = ["abs", "sqrt", "exp", "ln", "log", "sin", "cos", "tan", "asin", "acos", "atan", "floor", "ceil",
         "sign", "re", "im", "arg", "conj", "len", "transpose"]
BINARY = ["atan2", "min", "max", "mod"]
atoms = st.one_of(
    st.sampled_from(["0", "1", "2", "0.5", "3.25", "1e3", "1e-3", "2j", "1e300", "k", "x"]),
    st.sampled_from(["@" + n for n in SLOTS] + ["@o.x", "@o.arr", "@o.in.y", "@missing"]),
    st.sampled_from(["$pi", "$e", "$inf", "$i", "$j"]),
)


def _grow(inner):
    return st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "^"]), inner).map(lambda t: f"{t[0]}{t[1]}{t[2]}"),
        inner.map(lambda x: f"({x})"),
        inner.map(lambda x: f"-{x}"),
        st.tuples(st.sampled_from(UNARY), inner).map(lambda t: f"${t[0]}({t[1]})"),
        st.tuples(st.sampled_from(BINARY), inner, inner).map(lambda t: f"${t[0]}({t[1]}, {t[2]})"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.tuples(st.sampled_from(["sum", "prod", "seq"]), st.sampled_from(["0", "1", "-1", "@N", "2.5"]),
                  st.sampled_from(["0", "1", "3", "@N", "$len(@a)"]), inner)
        .map(lambda t: f"${t[0]}_{{k={t[1]}}}^{{{t[2]}}}({t[3]})"),
    )


#: well-formed expressions (to reach evaluation) mixed with token soup and arbitrary text
formulas = st.one_of(
    st.recursive(atoms, _grow, max_leaves=6),
    st.lists(st.sampled_from(TOKENS), min_size=0, max_size=12).map("".join),
    st.text(max_size=20),
)

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(["num", "re", "im", "mag", "ang", "array", "object", "dim"]),
                                  st.text(max_size=5)), inner, max_size=4),
    ),
    max_leaves=12,
)
dims = st.one_of(
    st.none(), st.sampled_from(["ohm", "metre", "degC", "kelvin", "dim-less", "kohm", "", "volt"]),
    st.lists(st.integers(-3, 3), min_size=0, max_size=8), json_values,
)
numbers = st.one_of(st.integers(-1000, 1000), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0, -0.0, 1e308, -1e308, 5e-324]), json_scalars)
elements = st.recursive(
    st.one_of(numbers, st.fixed_dictionaries({"re": numbers, "im": numbers}),
              st.fixed_dictionaries({"mag": numbers, "ang": numbers})),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=8,
)
tagged = st.recursive(
    st.one_of(
        st.fixed_dictionaries({"num": numbers}, optional={"dim": dims}),
        st.fixed_dictionaries({"re": numbers, "im": numbers}, optional={"dim": dims}),
        st.fixed_dictionaries({"mag": numbers, "ang": numbers}, optional={"dim": dims}),
        st.fixed_dictionaries({"array": st.lists(elements, max_size=4)}, optional={"dim": dims}),
    ),
    lambda inner: st.fixed_dictionaries({"object": st.dictionaries(st.sampled_from(["x", "y", "_z", "1a", ""]),
                                                                   inner, max_size=3)},
                                        optional={"dim": dims}),
    max_leaves=6,
)
names = st.one_of(st.sampled_from(list(SLOTS) + ["new", "t", "_x", "@L", "1a", ""]), st.text(max_size=6),
                  json_values)
values = st.one_of(tagged, json_values)
tools = st.one_of(st.sampled_from(["set", "get", "eval", "record_message", "search", "record_start"]),
                  json_scalars)
args = st.one_of(
    st.dictionaries(st.sampled_from(["name", "value", "formula", "target", "form", "digits", "dim", "text",
                                     "hide", "title", "extra"]), json_values, max_size=5),
    json_values,
)


@pytest.fixture(scope="module")
def engine():
    home = tempfile.mkdtemp(prefix="reckoner-prop-")
    e = Engine(home)
    assert e.record_start("property")["ok"]
    yield e
    e.close()
    shutil.rmtree(home, ignore_errors=True)


def reset(e):
    for name in list(e.slots()):
        if name not in SLOTS:
            e.set(name, None)
    for name, value in SLOTS.items():
        assert e.set(name, value)["ok"]


def snapshot(e):
    return {n: (stored(v), rev) for n, (v, rev) in e.slots().items()}


def check(receipt, e, before):
    assert isinstance(receipt, dict), receipt
    assert receipt.get("ok") in (True, False), receipt
    if receipt["ok"] is False:
        assert set(receipt) == {"ok", "code", "error"}, receipt
        assert receipt["code"] in ERROR_CODES, receipt
        # nothing here is an internal fault: every input has an engine refusal of its own
        assert receipt["code"] != "ENGINE_UNKNOWN_ERROR", receipt
        assert isinstance(receipt["error"], str) and receipt["error"].strip(), receipt
        assert snapshot(e) == before
    else:
        assert "code" not in receipt and "error" not in receipt


FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])


@FAST
@given(formula=formulas, target=st.one_of(st.sampled_from(["t", "L", "a", "o"]), names))
def test_eval_never_raises(engine, formula, target):
    reset(engine)
    before = snapshot(engine)
    r = engine.eval(formula, target)
    check(r, engine, before)
    if r["ok"]:
        assert r == {"ok": True, "target": target, "rev": before.get(target, (None, 0))[1] + 1}
        g = engine.get(target)
        assert g["ok"], g
        # every number written is finite (deliberate difference 3)
        text = repr(g["value"])
        assert "nan" not in text and "inf" not in text


@FAST
@given(name=names, value=values)
def test_set_never_raises(engine, name, value):
    reset(engine)
    before = snapshot(engine)
    r = engine.set(name, value)
    check(r, engine, before)
    if r["ok"] and value is not None:
        assert r["rev"] == before.get(name, (None, 0))[1] + 1
        # the stored form is accepted again unchanged
        again = engine.set(name, r["value"])
        assert again["ok"] and again["value"] == r["value"]


@FAST
@given(name=names, form=st.one_of(st.none(), st.sampled_from(["rect", "polar"]), json_scalars),
       digits=st.one_of(st.none(), st.integers(-2, 20), json_scalars), dim=dims)
def test_get_never_raises_and_never_changes_storage(engine, name, form, digits, dim):
    reset(engine)
    before = snapshot(engine)
    r = engine.get(name, form=form, digits=digits, dim=dim)
    check(r, engine, before)
    assert snapshot(engine) == before


@FAST
@given(tool=tools, arguments=args)
def test_call_never_raises(engine, tool, arguments):
    reset(engine)
    if tool == "record_start":
        tool = "get"  # keep the module's record open
    before = snapshot(engine)
    r = engine.call(tool, arguments)
    check(r, engine, before)
    assert engine.open_record is not None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(formulas, st.sampled_from(["t", "u", "L", "a"])), min_size=1, max_size=8))
def test_accepted_evals_replay_identically(steps):
    home = tempfile.mkdtemp(prefix="reckoner-replay-")
    try:
        e = Engine(home)
        e.record_start("replay")
        for name, value in SLOTS.items():
            e.set(name, value)
        accepted = 0
        for formula, target in steps:
            accepted += bool(e.eval(formula, target)["ok"])
        rid = e.open_record["id"]
        assert e.record_end()["ok"]
        e.close()
        out = replay(f"{home}/records/{rid}.jsonl")
        assert out["checked"] == accepted
        assert out["differences"] == []
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_no_nan_leaks_into_receipts(engine):
    reset(engine)
    for formula in ("@L*1e308*10", "$inf/$inf", "$sqrt(@neg)", "0*$inf"):
        r = engine.eval(formula, "t")
        assert r["ok"] is False and r["code"] == "ENGINE_UNDEFINED_RESULT", (formula, r)
    assert not math.isnan(engine.get("L")["value"]["num"])
