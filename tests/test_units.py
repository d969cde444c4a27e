"""Unit parsing for ``given`` and ``show`` lines, through pint (spec: reckoner.md section 2)."""

from __future__ import annotations

import pytest

from dsh_notebook.reckon import units as U
from test_magic import text


@pytest.mark.parametrize(
    "unit, dim, factor",
    [
        ("kN*m", (2, 1, -2, 0, 0, 0, 0), 1e3),
        ("mohm", (2, 1, -3, -2, 0, 0, 0), 1e-3),
        ("uF", (-2, -1, 4, 2, 0, 0, 0), 1e-6),
        ("ohm*m", (3, 1, -3, -2, 0, 0, 0), 1.0),
        ("percent", (0, 0, 0, 0, 0, 0, 0), 1e-2),
        ("ppm", (0, 0, 0, 0, 0, 0, 0), 1e-6),
        ("J/(mol*K)", (2, 1, -2, 0, -1, -1, 0), 1.0),
        ("kWh", (2, 1, -2, 0, 0, 0, 0), 3.6e6),
        ("psi", (-1, 1, -2, 0, 0, 0, 0), 6894.757293168361),
        ("L/min", (3, 0, -1, 0, 0, 0, 0), 1e-3 / 60),
        ("", (0, 0, 0, 0, 0, 0, 0), 1.0),
    ],
)
def test_units_convert_to_si(unit, dim, factor):
    info = U.parse_unit(unit)
    assert info.dim == dim
    assert info.factor == pytest.approx(factor, rel=1e-12)


@pytest.mark.parametrize(
    "unit, words",
    [
        ("bit", "outside the seven SI base"),
        ("byte", "outside the seven SI base"),
        ("count", "outside the seven SI base"),
        ("furlongz", "cannot read"),
        ("m^0.5", "whole number"),
        ("5 m - 2 m", "outside parentheses"),
        ("m - 2 m", "subtraction"),
        ("ft + 3 in", "addition"),
        ("m # note", "comments start only"),
        ("m**2**3", "power of a power"),
        ("meter/", "must follow"),
        ("(m", "never closed"),
        ("pi m", "constant"),
        ("m*e", "constant"),
        ("Nm", "textile"),
        ("dB", "logarithmic"),
        ("kg/m s", "parentheses"),
    ],
)
def test_refused_units_name_the_problem(unit, words):
    with pytest.raises(U.UnitError) as exc:
        U.parse_unit(unit)
    assert words in exc.value.message
    assert exc.value.code == "ENGINE_INVALID_DIMENSION"


def test_offset_temperature_is_absolute_and_delta_is_a_difference(sh):
    r, cap = sh.reckon("given T = 20 degC\ngiven dT = 20 delta_degC\ngiven F = 68 degF\nshow T in degC\nshow T in K\n"
                       "T2 = @T + @dT\nshow T2 in degC")
    assert r.error_in_exec is None
    q = sh.ns["_reckon"]
    assert q["T"].to("K").magnitude == pytest.approx(293.15)
    assert q["dT"].to("K").magnitude == pytest.approx(20)
    assert q["F"].to("K").magnitude == pytest.approx(293.15)
    out = text(cap)
    assert "T = 20 °C" in out and "T = 293.15 K" in out and "T2 = 40 °C" in out


def test_show_converts_only_within_the_same_dimension(sh):
    r, cap = sh.reckon("given p = 2.5 bar\nshow p in kPa\nshow p in psi digits 4")
    assert r.error_in_exec is None
    assert "p = 250 kPa" in text(cap) and "p = 36.26 psi" in text(cap)


def test_si_display_names():
    assert U.si_text((2, 1, -3, -2, 0, 0, 0)) == "Ω"
    assert U.si_text((1, 1, -2, 0, 0, 0, 0)) == "N"
    assert U.si_text((-1, 1, -2, 0, 0, 0, 0)) == "Pa"
    assert U.si_text((0, 0, -1, 0, 0, 0, 0)) == "s⁻¹"  # never Hz unless asked
    assert U.si_text((3, 1, -3, -2, 0, 0, 0)) == "Ω·m"
    assert U.si_text((0, 0, 0, 0, 0, 0, 0)) == ""


def test_unit_written_as_typed_in_the_given_rendering():
    assert U.unit_pretty("ohm*m") == "Ω·m"
    assert U.unit_pretty("kg/m^3") == "kg/m³"
    assert U.unit_pretty("degC") == "°C"
