"""Complex numbers (upstream-facts.md 3.4, 3.6 "Powers", 3.7): arithmetic, powers,
$abs/$arg/$re/$im/$conj, and the polar reading."""

from __future__ import annotations

import cmath
import math

import pytest

from receipts import refused




@pytest.fixture
def data(engine):
    engine.set("Z", {"re": 3, "im": 4, "dim": "ohm"})
    engine.set("I", {"re": 1, "im": -1, "dim": "ampere"})
    engine.set("w", {"mag": 2, "ang": math.pi / 3})
    return engine


def as_complex(v):
    assert set(v) == {"re", "im", "dim"}, v
    return complex(v["re"], v["im"])


@pytest.mark.parametrize("formula, want", [
    ("(1+2j)*(3-1j)", (1 + 2j) * (3 - 1j)),
    ("(1+2j)/(1-1j)", (1 + 2j) / (1 - 1j)),
    ("(1+2j)+(3-1j)", 4 + 1j),
    ("(1+2j)-(3-1j)", -2 + 3j),
    ("-(1+2j)", -1 - 2j),
    ("2*$i + 1", 1 + 2j),
    ("(1+1j)^2", 2j),
    ("(1+1j)^3", (1 + 1j) ** 3),
    ("(1j)^0.5", cmath.rect(1, math.pi / 4)),
    ("(-1+0j)^0.5", 1j),
    ("(1+1j)^(1j)", cmath.exp(1j * cmath.log(1 + 1j))),
    ("2^(1j)", cmath.exp(1j * math.log(2))),
    ("$e^($i*$pi)", -1 + 0j),
    ("(0+0j)^2", 0j),
    ("$conj(2-3j)", 2 + 3j),
    ("$sqrt(-9+0j)", 3j),
])
def test_complex_arithmetic_and_powers(calc, formula, want):
    got = as_complex(calc(formula))
    assert got == pytest.approx(want, abs=1e-12)


def test_complex_with_dimensions(data, calc):
    v = calc("@Z*@I")
    assert as_complex(v) == 7 + 1j and v["dim"] == "volt"
    v = calc("@Z^2")
    assert as_complex(v) == pytest.approx((3 + 4j) ** 2) and v["dim"] == [4, 2, -6, -4, 0, 0, 0]
    v = calc("@Z + @Z")
    assert as_complex(v) == 6 + 8j and v["dim"] == "ohm"


@pytest.mark.parametrize("formula, want, dim", [
    ("$abs(@Z)", 5.0, "ohm"),
    ("$re(@Z)", 3.0, "ohm"),
    ("$im(@Z)", 4.0, "ohm"),
    ("$arg(@Z)", math.atan2(4, 3), "dim-less"),
    ("$arg(@I)", -math.pi / 4, "dim-less"),
    ("$abs(@w)", 2.0, "dim-less"),
    ("$arg(@w)", math.pi / 3, "dim-less"),
])
def test_real_valued_complex_functions(data, calc, formula, want, dim):
    v = calc(formula)
    assert set(v) == {"num", "dim"}  # the result is real
    assert v["num"] == pytest.approx(want) and v["dim"] == dim


def test_conj_keeps_vector(data, calc):
    v = calc("$conj(@Z)")
    assert as_complex(v) == 3 - 4j and v["dim"] == "ohm"


def test_polar_get_of_complex(data):
    data.eval("@Z*2", "Z2")
    v = data.get("Z2", form="polar")["value"]
    assert v["mag"] == pytest.approx(10) and v["ang"] == pytest.approx(math.atan2(4, 3)) and v["dim"] == "ohm"
    v = data.get("w", form="polar", digits=4)["value"]
    assert v == {"mag": 2.0, "ang": 1.047, "dim": "dim-less"}


@pytest.mark.parametrize("formula", ["0^(1j)", "(0+0j)^-1", "(0+0j)^(1+1j)", "$floor(@w)", "$mod(@w, 1)",
                                     "$ln(0+0j)"])
def test_complex_undefined(data, formula):
    refused(data.eval(formula, "x"), "ENGINE_UNDEFINED_RESULT")


def test_complex_division_by_zero(data):
    refused(data.eval("@Z/(0*@Z/@Z)", "x"), "ENGINE_UNDEFINED_RESULT")
