"""What people paste into ``%%reckon`` (issue 17): anything the product displays, and what
engineers write, typed back into a ``given`` line reads as the same SI value and vector, or is
refused with a message that names the fix (spec: reckoner.md section 2; cases P05, P08)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_notebook.reckoner import dims as D
from dsh_notebook.reckoner.display import value_text
from dsh_notebook.reckoner.values import parse_tagged
from test_magic import text

OHM = (2, 1, -3, -2, 0, 0, 0)
LENGTH = (1, 0, 0, 0, 0, 0, 0)
TEMPERATURE = (0, 0, 0, 0, 1, 0, 0)
PRESSURE = (-1, 1, -2, 0, 0, 0, 0)
SPECIFIC_HEAT = (2, 0, -2, 0, -1, 0, 0)
HEAT_TRANSFER = (0, 1, -3, 0, -1, 0, 0)


def stored(sh) -> dict:
    """Slot name -> (SI magnitude, vector) as the last record's accepted ``set`` rows hold them."""
    out = {}
    for row in sh.rows(sh.records()[-1]):
        c = row.get("content") or {}
        if row.get("tool") == "set" and row.get("ok") and isinstance(c.get("value"), dict):
            v = c["value"]
            mag = complex(v["re"], v["im"]) if "re" in v else v.get("num", v.get("array"))
            out[c["name"]] = (mag, tuple(v["dim"]))
    return out


def given_one(sh, value: str):
    """Run ``given x = VALUE`` and return x's stored ``(SI magnitude, vector)``."""
    r, cap = sh.reckon(f"given x = {value}")
    assert r.error_in_exec is None, r.error_in_exec
    return stored(sh)["x"]


def refused(sh, value: str) -> str:
    """Run ``given x = VALUE``, expect a refusal; return its message (the refused row is recorded)."""
    r, _ = sh.reckon(f"given x = {value}")
    err = r.error_in_exec
    assert type(err).__name__ == "ReckonRefused", err
    rows = sh.rows(sh.records()[-1])
    assert rows[-2]["tool"] == "set" and rows[-2]["ok"] is False
    return f"{err.code}: {err}"


# --------------------------------------------------------------- signs in units


def test_ohm_sign_u2126_reads_as_ohm(sh):
    """Datasheets write the ohm sign U+2126; pint knows only the Greek capital omega U+03A9."""
    assert given_one(sh, "4.7 k\u2126") == (4700.0, OHM)
    assert given_one(sh, "1.68e-8 \u2126\u00b7m") == (1.68e-8, (3, 1, -3, -2, 0, 0, 0))
    assert given_one(sh, "4.7 \u03a9") == (4.7, OHM)


@pytest.mark.parametrize("unit", ["\u00b5m", "\u03bcm", "um"])
def test_micro_sign_and_greek_mu_both_give_micro(sh, unit):
    """P05: U+00B5, U+03BC and 'u' are all micro; a normaliser never drops the prefix (7.5 m)."""
    assert given_one(sh, f"7.5 {unit}") == (7.5e-6, LENGTH)


def test_micro_sign_in_compound_units(sh):
    mag, dim = given_one(sh, "2.2 \u03bcF")
    assert mag == pytest.approx(2.2e-6, rel=1e-15) and dim == (-2, -1, 4, 2, 0, 0, 0)
    mag, dim = given_one(sh, "3 \u00b5\u2126")
    assert mag == pytest.approx(3e-6, rel=1e-15) and dim == OHM


@pytest.mark.parametrize(
    "unit, dim",
    [
        ("m\u00b2", (2, 0, 0, 0, 0, 0, 0)),
        ("s\u207b\u00b9", (0, 0, -1, 0, 0, 0, 0)),
        ("m/s\u00b2", (1, 0, -2, 0, 0, 0, 0)),
        ("kg\u00b7m\u207b\u00b3", (-3, 1, 0, 0, 0, 0, 0)),
        ("W/(m\u00b2\u00b7K)", HEAT_TRANSFER),
        ("\u03a9\u00b7m", (3, 1, -3, -2, 0, 0, 0)),
        ("m\u00b3/s", (3, 0, -1, 0, 0, 0, 0)),
        ("kg\u22c5m\u00b2", (2, 1, 0, 0, 0, 0, 0)),
        ("m^\u22122", (-2, 0, 0, 0, 0, 0, 0)),  # typographic minus in an exponent
        ("m\u00b9\u2070\u00b7s\u207b\u00b9\u00b2", (10, 0, -12, 0, 0, 0, 0)),  # several superscript digits
    ],
)
def test_superscript_exponents_read_as_the_product_prints_them(sh, unit, dim):
    assert given_one(sh, f"2.5 {unit}") == (2.5, dim)


def test_superscripts_in_a_show_unit(sh):
    r, cap = sh.reckon("given A = 3 mm\u00b2\nshow A in mm\u00b2\nshow A in m\u00b2")
    assert r.error_in_exec is None
    out = text(cap)
    assert "A = 3 mm² = 3×10⁻⁶ m²" in out and "A = 3 mm²" in out and "A = 3×10⁻⁶ m²" in out


@pytest.mark.parametrize(
    "unit, words",
    [
        ("m\u00b23", "right after the exponent"),  # would read as m^23
        ("s\u207b", "not a whole number"),
        ("\u207b\u00b9", "no unit right before it"),
        ("s \u207b\u00b9", "no unit right before it"),
        ("m^\u00b2", "no unit right before it"),
        ("m\u00b2^2", "power of a power"),
    ],
)
def test_malformed_superscripts_are_refused(sh, unit, words):
    msg = refused(sh, f"2 {unit}")
    assert msg.startswith("ENGINE_INVALID_DIMENSION") and words in msg


def test_one_character_degree_signs_read_as_degrees(sh):
    """U+2103 and U+2109 (pint raises AssertionError on them) are °C and °F: points on the scale."""
    r, cap = sh.reckon("given T = 20 \u2103\ngiven F = 68 \u2109\nshow T in \u2103\nshow F in \u2103")
    assert r.error_in_exec is None
    s = stored(sh)
    assert s["T"] == (pytest.approx(293.15), TEMPERATURE) and s["F"] == (pytest.approx(293.15), TEMPERATURE)
    out = text(cap)
    assert "T = 20 °C\n" in out and "F = 68 °F\n" in out and "F = 20 °C" in out
    assert sh.ns["_reckon"].kind("T") == "point" and sh.ns["_reckon"].scale("F") == "degF"


# --------------------------------------------------------------- gauge pressure


@pytest.mark.parametrize(
    "unit, base, atm",
    [
        ("barg", "bar", "1.01325"),
        ("psig", "psi", "14.696"),
        ("kPag", "kPa", "101.325"),
        ("MPag", "MPa", "0.101325"),
        ("bar(g)", "bar", "1.01325"),
        ("psi(g)", "psi", "14.696"),
        ("bar_g", "bar", "1.01325"),
        ("psi_gauge", "psi", "14.696"),
        ("bar (g)", "bar", "1.01325"),
        ("kPa(G)", "kPa", "101.325"),
        ("mbarg", "mbar", "1013.25"),
    ],
)
def test_gauge_pressure_is_refused_naming_the_absolute_unit(sh, unit, base, atm):
    msg = refused(sh, f"2.5 {unit}")
    assert msg.startswith("ENGINE_INVALID_DIMENSION")
    assert f"'{unit}' is a gauge pressure" in msg and f"1 atm = {atm} {base}" in msg
    assert f"give the absolute value in {base} (the gauge reading + {atm} {base}" in msg
    assert f"pressure difference in {base}" in msg


def test_gauge_pressure_in_a_compound_unit_is_refused(sh):
    assert "'psig' is a gauge pressure" in refused(sh, "3 psig/s")


@pytest.mark.parametrize("unit, pa", [("psia", 6894.757293168361), ("bara", 1e5), ("bar(a)", 1e5), ("kPa_abs", 1e3)])
def test_absolute_pressure_reads_as_the_plain_unit(sh, unit, pa):
    mag, dim = given_one(sh, f"2 {unit}")
    assert mag == pytest.approx(2 * pa, rel=1e-14) and dim == PRESSURE


def test_units_ending_in_g_or_a_are_unchanged(sh):
    assert given_one(sh, "3 kg") == (3.0, (0, 1, 0, 0, 0, 0, 0))
    assert given_one(sh, "3 mg") == (pytest.approx(3e-6, rel=1e-15), (0, 1, 0, 0, 0, 0, 0))
    mag, dim = given_one(sh, "30 inHg")
    assert mag == pytest.approx(30 * 3386.389, rel=1e-6) and dim == PRESSURE


# --------------------------------------------------------------- offset temperatures in compound units


@pytest.mark.parametrize(
    "value, si, dim",
    [
        ("4186 J/(kg*degC)", 4186.0, SPECIFIC_HEAT),
        ("4186 J/(kg·°C)", 4186.0, SPECIFIC_HEAT),
        ("4186 J/(kg·\u2103)", 4186.0, SPECIFIC_HEAT),
        ("4186 J/(kg*degree_Celsius)", 4186.0, SPECIFIC_HEAT),
        ("10 W/(m^2*°C)", 10.0, HEAT_TRANSFER),
        ("10 W/(m²·℃)", 10.0, HEAT_TRANSFER),
        ("1.2e-5 1/degC", 1.2e-5, (0, 0, 0, 0, -1, 0, 0)),
        ("5 J/(kg*degF)", 9.0, SPECIFIC_HEAT),  # a Fahrenheit degree is 5/9 K
    ],
)
def test_offset_temperature_in_a_compound_unit_is_a_difference(sh, value, si, dim):
    """Per degree can only mean per degree of difference: J/(kg*degC) is J/(kg*K)."""
    mag, got = given_one(sh, value)
    assert mag == pytest.approx(si, rel=1e-14) and got == dim


def test_btu_per_pound_degree_fahrenheit(sh):
    """pint's BTU is the ISO 31-4 one (1055.056 J): 1 BTU/(lb*degF) = 4186.8006 J/(kg*K); the
    International Table Btu_it gives the familiar 4186.8 exactly."""
    r, cap = sh.reckon("given c = 1 BTU/(lb*degF)\ngiven c_it = 1 Btu_it/(lb*degF)\nshow c in J/(kg*K)\n"
                       "show c_it in J/(kg*°C) digits 8")
    assert r.error_in_exec is None
    s = stored(sh)
    assert s["c"][0] == pytest.approx(4186.800584851107, rel=1e-14) and s["c"][1] == SPECIFIC_HEAT
    assert s["c_it"][0] == pytest.approx(4186.8, rel=1e-14)
    out = text(cap)
    assert "c = 1 BTU/(lb·Δ°F) = 4186.8 J/(kg·K)" in out  # the rendering says how it was read
    assert "c_it = 4186.8 J/(kg·Δ°C)" in out


def test_a_lone_offset_temperature_stays_a_point_on_its_scale(sh):
    r, _ = sh.reckon("given T = 20 degC\ngiven U = 20 (degC)\ngiven d = 20 delta_degC")
    assert r.error_in_exec is None
    s = stored(sh)
    assert s["T"][0] == pytest.approx(293.15) and s["U"][0] == pytest.approx(293.15) and s["d"][0] == 20.0


# --------------------------------------------------------------- numbers as displayed and as typed


@pytest.mark.parametrize(
    "value, si",
    [
        ("3.3006×10⁻⁶", 3.3006e-6),
        ("1.68×10⁻⁸", 1.68e-8),
        ("2×10³", 2000.0),
        ("-4.5×10¹²", -4.5e12),
        ("3.3006×10^-6", 3.3006e-6),
        ("3.3006*10^-6", 3.3006e-6),
        ("3.3006·10⁻⁶", 3.3006e-6),
        ("3.3006x10^-6", 3.3006e-6),
        ("3.3006×10^\u22126", 3.3006e-6),
        ("\u22123.3006×10⁻⁶", -3.3006e-6),
        ("3.3006×10^{-6}", 3.3006e-6),
        ("1.5E3", 1500.0),
    ],
)
def test_numbers_as_the_product_prints_them_and_as_typed(sh, value, si):
    assert given_one(sh, f"{value} m") == (si, LENGTH)


@pytest.mark.parametrize(
    "value, z",
    [
        ("3+4j", 3 + 4j),
        ("-31.83j", -31.83j),
        ("1.2×10³+4.5×10⁻²j", 1200 + 0.045j),
        ("1.2×10³\u22124.5×10⁻²j", 1200 - 0.045j),
        ("2.5×10⁻³j", 0.0025j),
    ],
)
def test_complex_numbers_as_the_product_prints_them(sh, value, z):
    assert given_one(sh, f"{value} ohm") == (z, OHM)


def test_array_elements_as_the_product_prints_them(sh):
    mag, dim = given_one(sh, "[1, 2.5×10⁻³, 3*10^2] m")
    assert mag == [1.0, 0.0025, 300.0] and dim == LENGTH


def test_typed_power_of_ten_renders_as_a_number(sh):
    r, cap = sh.reckon("given A = 3.3006×10⁻⁶ m²\ngiven x = 1.23456789×10⁻³ mm")
    assert r.error_in_exec is None
    b = cap.outputs[-1].data
    assert "A = 3.3006×10⁻⁶ m²" in b["text/plain"]
    assert r"3.3006 \times 10^{-6}\,\mathrm{m}^{2}" in b["text/latex"]
    assert "x = 1.23456789×10⁻³ mm = 1.23456789×10⁻⁶ m" in b["text/plain"]  # no typed digit dropped


@pytest.mark.parametrize(
    "value, words",
    [
        ("nan kg", "not a finite number"),
        ("inf m", "not a finite number"),
        ("1e400 m", "overflows to infinity"),
        ("1×10⁴⁰⁰ m", "overflows to infinity"),
        ("2×10⁻⁶⁶⁶⁶ m", "too small for a double-precision"),
        ("1e-400 m", "too small for a double-precision"),
        ("2×10⁻⁶⁶⁶⁶j m", "too small for a double-precision"),
        ("3×10 m", "a power of ten needs its exponent"),
        ("×10⁻⁶ m", "needs a number before it"),
        ("10^-6 m", "is not a number"),
        ("1e5×10³ m", "is not a number"),
        ("2-3 m", "is not a number"),
        ("1,5 m", "is not a number"),
    ],
)
def test_what_is_not_a_finite_number_is_still_refused(sh, value, words):
    msg = refused(sh, value)
    assert msg.startswith("ENGINE_INVALID_ARGS") and words in msg


def test_a_prefix_is_never_dropped(sh):
    assert given_one(sh, "7.5 m") == (7.5, LENGTH)
    assert given_one(sh, "7.5 mm")[0] == pytest.approx(7.5e-3, rel=1e-15)


# --------------------------------------------------------------- the display, typed back

DERIVED = [
    (2, 0, 0, 0, 0, 0, 0), (3, 0, 0, 0, 0, 0, 0), (-2, 0, 0, 0, 0, 0, 0), (1, 0, -1, 0, 0, 0, 0),
    (1, 0, -2, 0, 0, 0, 0), (-3, 1, 0, 0, 0, 0, 0), (3, 1, -3, -2, 0, 0, 0), HEAT_TRANSFER, SPECIFIC_HEAT,
    (1, 1, -3, 0, -1, 0, 0), (3, 0, -1, 0, 0, 0, 0), (0, 1, 0, 0, 0, -1, 0), (-1, 1, -1, 0, 0, 0, 0),
    (2, 0, -1, 0, 0, 0, 0), (2, 1, -2, 0, -1, -1, 0), (1, 1, -3, -1, 0, 0, 0), (1, 1, -1, 0, 0, 0, 0),
    (-3, 0, 0, 0, 0, 1, 0), (0, -1, 1, 1, 0, 0, 0), (4, 0, 0, 0, 0, 0, 0), (10, 0, -12, 0, 0, 0, 0),
]
VECTORS = list(dict.fromkeys([tuple(row[0]) for row in D.TABLE_ROWS] + DERIVED))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_displayed_value_types_back_as_the_same_value(sh, x):
    """For every vector of the SI name table and common derived ones, the text the product
    displays for a value (17 digits) typed back as ``given`` is the same SI value and vector."""
    shown = {f"v{i}": value_text(parse_tagged({"num": x, "dim": list(vec)}), 17) for i, vec in enumerate(VECTORS)}
    r, _ = sh.reckon("\n".join(f"given {name} = {t}" for name, t in shown.items()))
    assert r.error_in_exec is None, (r.error_in_exec, shown)
    back = stored(sh)
    for i, vec in enumerate(VECTORS):
        mag, dim = back[f"v{i}"]
        assert dim == vec, (shown[f"v{i}"], dim)
        assert mag == pytest.approx(x, rel=1e-15, abs=0), shown[f"v{i}"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(st.complex_numbers(allow_nan=False, allow_infinity=False).filter(lambda z: z.imag != 0))
def test_every_displayed_complex_value_types_back(sh, z):
    vecs = [OHM, (0, 0, 0, 0, 0, 0, 0), (1, 1, -3, -1, 0, 0, 0)]
    shown = {f"z{i}": value_text(parse_tagged({"re": z.real, "im": z.imag, "dim": list(v)}), 17)
             for i, v in enumerate(vecs)}
    r, _ = sh.reckon("\n".join(f"given {name} = {t}" for name, t in shown.items()))
    assert r.error_in_exec is None, (r.error_in_exec, shown)
    back = stored(sh)
    for i, vec in enumerate(vecs):
        mag, dim = back[f"z{i}"]
        assert dim == vec and mag == pytest.approx(z, rel=1e-15, abs=0), shown[f"z{i}"]
