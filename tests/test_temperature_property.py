"""Property test of the temperature rules (issue 17): random expressions over Celsius and
Fahrenheit points, differences and kelvins, evaluated by the engine and by a hand-written
affine model that keeps each point on its own scale (never in K), so the two only agree when
the engine's kinds and numbers are right."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_notebook.reckoner import Engine

REFUSED = "refused"
_FACTOR = {"C": 1.0, "F": 1.8}  # scale degrees per kelvin


def kelvin(v):
    """The model value's absolute magnitude in K (a difference: its size)."""
    if v[0] == "P":
        _, scale, reading = v
        return reading + 273.15 if scale == "C" else (reading + 459.67) / 1.8
    return v[1]


def shift(point, kelvins, sign):
    """A point moved by a difference, computed on the point's own scale."""
    _, scale, reading = point
    return ("P", scale, reading + sign * kelvins * _FACTOR[scale])


def model(op, a, b=None, c=None):
    """The affine model: points stay readings on their scale; ``REFUSED`` where the rules refuse.
    A point below absolute zero (a K value taken as a difference where it was a point) is refused
    in the result (:func:`final`), as the engine checks results, not the steps inside a formula
    (``200 K + $min(0 °C, -(200 K))`` is a 0 K point)."""
    return _model(op, a, b, c)


def final(out):
    """The model's result as the engine gives it: a point below absolute zero is refused."""
    if out != REFUSED and out[0] == "P" and kelvin(out) < 0:
        return REFUSED
    return out


def _model(op, a, b=None, c=None):
    if REFUSED in (a, b):
        return REFUSED
    if op == "neg":
        return REFUSED if a[0] == "P" else (a[0], -a[1])
    if op == "scale":
        return REFUSED if a[0] == "P" else (a[0], c * a[1])
    ka, kb = a[0], b[0]
    if op in ("min", "max"):
        pick = min if op == "min" else max
        k = pick(kelvin(a), kelvin(b))
        if ka == "P" and kb == "P":
            return ("P", a[1], (k - 273.15) * _FACTOR[a[1]] if a[1] == "C" else k * 1.8 - 459.67)
        if "P" in (ka, kb):
            if "D" in (ka, kb):
                return REFUSED
            p = a if ka == "P" else b
            return ("P", p[1], (k - 273.15) if p[1] == "C" else k * 1.8 - 459.67)
        return ("D", k) if ka == kb == "D" else ("T", k)
    if op == "+":
        if ka == "P" and kb == "P":
            return REFUSED
        if ka == "P":
            return shift(a, b[1], +1)
        if kb == "P":
            return shift(b, a[1], +1)
        return ("D", a[1] + b[1]) if ka == kb == "D" else ("T", a[1] + b[1])
    # op == "-"
    if ka == "P" and kb == "P":
        return ("D", kelvin(a) - kelvin(b))
    if ka == "P":
        return shift(a, b[1], -1)
    if kb == "P":
        return REFUSED if ka == "D" else ("D", a[1] - kelvin(b))
    if ka == "D":
        return ("D", a[1] - b[1])
    return ("T", a[1] - b[1])


leaves = st.one_of(
    st.tuples(st.just("P"), st.sampled_from(["C", "F"]), st.integers(-40, 120).map(float)),
    st.tuples(st.just("D"), st.integers(-50, 50).map(float)),
    st.tuples(st.just("T"), st.integers(200, 400).map(float)),
)


def trees(depth):
    if depth == 0:
        return leaves.map(lambda v: ("leaf", v))
    sub = trees(depth - 1)
    return st.one_of(
        leaves.map(lambda v: ("leaf", v)),
        st.tuples(st.sampled_from(["+", "-", "min", "max"]), sub, sub),
        st.tuples(st.just("scale"), sub, st.sampled_from([2.0, 0.5, -1.5, 3.0])),
        st.tuples(st.just("neg"), sub),
    )


def build(tree, leaves_out):
    """``(formula, model value)``; each leaf becomes a slot ``x<n>`` listed in *leaves_out*."""
    if tree[0] == "leaf":
        name = f"x{len(leaves_out)}"
        leaves_out.append((name, tree[1]))
        return f"@{name}", tree[1]
    op = tree[0]
    if op == "neg":
        f, v = build(tree[1], leaves_out)
        return f"-({f})", model("neg", v)
    if op == "scale":
        f, v = build(tree[1], leaves_out)
        return f"{tree[2]}*({f})", model("scale", v, c=tree[2])
    fa, va = build(tree[1], leaves_out)
    fb, vb = build(tree[2], leaves_out)
    if op in ("min", "max"):
        return f"${op}({fa}, {fb})", model(op, va, vb)
    return f"({fa}) {op} ({fb})", model(op, va, vb)


def tagged(v):
    if v[0] == "P":
        return {"num": v[2], "dim": "degC"} if v[1] == "C" else \
            {"num": (v[2] + 459.67) / 1.8, "dim": [0, 0, 0, 0, 1, 0, 0], "kind": "point", "scale": "degF"}
    if v[0] == "D":
        return {"num": v[1], "dim": [0, 0, 0, 0, 1, 0, 0], "kind": "difference"}
    return {"num": v[1], "dim": "kelvin"}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    e = Engine(tmp_path_factory.mktemp("kinds"))
    assert e.record_start("property")["ok"]
    yield e
    e.close()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trees(3))
def test_engine_agrees_with_the_affine_model(engine, tree):
    slots: list = []
    formula, want = build(tree, slots)
    want = final(want)
    for name, v in slots:
        assert engine.set(name, tagged(v))["ok"]
    r = engine.eval(formula, "out")
    if want == REFUSED:
        assert not r["ok"] and r["code"] == "ENGINE_INCOMPATIBLE_DIMENSION", (formula, r)
        return
    assert r["ok"], (formula, r)
    got = engine.get("out")["value"]
    kind = {"P": "point", "D": "difference", "T": None}[want[0]]
    assert got.get("kind") == kind, (formula, got, want)
    if kind == "point":
        assert got["scale"] == {"C": "degC", "F": "degF"}[want[1]], (formula, got, want)
    assert math.isclose(got["num"], kelvin(want), rel_tol=1e-9, abs_tol=1e-9), (formula, got, want)
