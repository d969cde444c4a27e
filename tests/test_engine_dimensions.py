"""Dimension arithmetic (upstream-facts.md 3.6 "Powers", 3.8, 3.9)."""

from __future__ import annotations

import pytest

from receipts import refused

from dsh_notebook.reckoner.values import stored




@pytest.fixture
def data(engine):
    engine.set("V", {"num": 10, "dim": "volt"})
    engine.set("R", {"num": 5, "dim": "ohm"})
    engine.set("I", {"num": 2, "dim": "ampere"})
    engine.set("L", {"num": 2, "dim": "metre"})
    engine.set("A", {"num": 9, "dim": [2, 0, 0, 0, 0, 0, 0]})
    engine.set("t", {"num": 4, "dim": "second"})
    return engine


@pytest.mark.parametrize("formula", ["@V + @R", "@V - @I", "@L + @A", "@R + @R*@R"])
def test_add_sub_need_same_vector(data, formula):
    msg = refused(data.eval(formula, "x"), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "position" in msg


def test_add_message_names_both_vectors(data):
    msg = refused(data.eval("@V + @R", "x"), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "volt" in msg and "ohm" in msg


@pytest.mark.parametrize("formula", ["5 + @V", "@V - 5", "@L + 1", "1 - @t"])
def test_bare_number_is_not_a_quantity(data, formula):
    msg = refused(data.eval(formula, "x"), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "dimensionless" in msg


@pytest.mark.parametrize("formula, want, dim", [
    ("2*@R", 10.0, "ohm"),
    ("@R*2", 10.0, "ohm"),
    ("@R/2", 2.5, "ohm"),
    ("@V/@R", 2.0, "ampere"),
    ("@I*@R", 10.0, "volt"),
    ("(@V)^2/@R", 20.0, "watt"),
    ("@V^2/@R", 20.0, "watt"),
    ("@V*@V/@R", 20.0, "watt"),
    ("@V/@L*@L", 10.0, "volt"),            # unnamed intermediate
    ("$sqrt(@L)*$sqrt(@L)", 2.0, "metre"),  # fractional intermediate
    ("$sqrt(@L)^2", 2.0, "metre"),
    ("@A^0.5", 3.0, "metre"),
    ("$sqrt(@A)", 3.0, "metre"),
    ("@L^0", 1.0, "dim-less"),
    ("@L^1", 2.0, "metre"),
    ("@L/@L", 1.0, "dim-less"),
    ("1/@t", 0.25, "hertz"),
    ("@L^3", 8.0, [3, 0, 0, 0, 0, 0, 0]),
    ("@L^-1", 0.5, [-1, 0, 0, 0, 0, 0, 0]),
    ("@L^(2/2)", 2.0, "metre"),
    ("@L/@t", 0.5, [1, 0, -1, 0, 0, 0, 0]),
    ("@V + 2*@V", 30.0, "volt"),
])
def test_vector_arithmetic(data, calc, formula, want, dim):
    assert calc(formula) == {"num": pytest.approx(want), "dim": dim}


@pytest.mark.parametrize("formula", ["$sqrt(@L)", "@L^1.5", "@L^0.5", "@A^(1/3)", "$sqrt(@R)"])
def test_fractional_vector_never_written(data, formula):
    before = {n: (stored(v), r) for n, (v, r) in data.slots().items()}
    msg = refused(data.eval(formula, "L"), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "fractional" in msg
    after = {n: (stored(v), r) for n, (v, r) in data.slots().items()}
    assert after == before


@pytest.mark.parametrize("formula", ["2^@L", "@L^@L", "$e^(@t)", "@V^(@R/@R*@L)"])
def test_exponent_must_be_dimensionless(data, formula):
    msg = refused(data.eval(formula, "x"), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "exponent" in msg


@pytest.mark.parametrize("formula", ["@L^(1j)", "@L^(2+1j)", "@R^$j"])
def test_complex_exponent_on_dimensional_base(data, formula):
    msg = refused(data.eval(formula, "x"), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "complex" in msg


def test_complex_exponent_on_dimensionless_base_is_fine(data, calc):
    v = calc("(@L/@L*2)^(1j)")
    assert v["dim"] == "dim-less" and set(v) == {"re", "im", "dim"}


@pytest.mark.parametrize("formula, want", [("(-2)^3", -8.0), ("(-2)^2", 4.0), ("0^0", 1.0), ("0^2", 0.0),
                                           ("(-2)^-1", -0.5), ("4^0.5", 2.0)])
def test_real_power_rules(calc, formula, want):
    assert calc(formula) == {"num": want, "dim": "dim-less"}


def test_eval_target_replaces_any_vector(data):
    assert data.eval("@V/@R", "R") == {"ok": True, "target": "R", "rev": 2}
    assert data.get("R")["value"] == {"num": 2.0, "dim": "ampere"}


def test_eval_arguments_shape(engine):
    refused(engine.eval(3, "x"), "ENGINE_INVALID_ARGS")
    refused(engine.eval(None, "x"), "ENGINE_INVALID_ARGS")
    refused(engine.eval("1", None), "ENGINE_INVALID_ARGS")
    refused(engine.eval("1", "@x"), "ENGINE_INVALID_IDENTIFIER")


def test_eval_does_not_return_the_value(data):
    r = data.eval("@V/@R", "I2")
    assert r == {"ok": True, "target": "I2", "rev": 1}
