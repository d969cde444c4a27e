"""The formula language (upstream-facts.md 3.6): literals, precedence, explicit
multiplication, lexical and syntax errors with positions, data access, bound names."""

from __future__ import annotations

import math

import pytest

from receipts import refused




@pytest.fixture
def data(engine):
    engine.set("a", {"array": [10, 20, 30]})
    engine.set("M", {"array": [[1, 2], [3, 4]]})
    engine.set("L", {"num": 2, "dim": "metre"})
    engine.set("i", {"num": 1})
    engine.set("E", {"array": []})
    engine.set("net", {"object": {
        "R": {"num": 50, "dim": "ohm"},
        "port": {"object": {"f": {"array": [5, 6], "dim": "hertz"}, "z": {"re": 50, "im": 5, "dim": "ohm"}}},
        "m": {"array": [[1, 2], [3, 4]], "dim": "metre"},
    }})
    return engine


# ------------------------------------------------------------------ precedence


@pytest.mark.parametrize("formula, want", [
    ("-2^2", -4.0),
    ("2^3^2", 512.0),
    ("(2^3)^2", 64.0),
    ("+3", 3.0),
    ("+-3", -3.0),
    ("--2", 2.0),
    ("2*-3", -6.0),
    ("2^-1", 0.5),
    ("2^-2^2", 0.0625),
    ("2+3*4", 14.0),
    ("(2+3)*4", 20.0),
    ("8/4/2", 1.0),
    ("2-3-4", -5.0),
    ("2*3^2", 18.0),
    ("-(2)^2", -4.0),
    ("1 +\t2\n*3", 7.0),
    ("12", 12.0),
    ("4.7", 4.7),
    ("1e5", 1e5),
    ("2.5e-3", 2.5e-3),
    ("1e+2", 100.0),
    ("$pi^2", math.pi ** 2),
    ("$e^(2)", math.e ** 2),
])
def test_precedence_and_literals(calc, formula, want):
    v = calc(formula)
    assert v == {"num": pytest.approx(want), "dim": "dim-less"}


@pytest.mark.parametrize("formula, im", [("2j", 2.0), ("4i", 4.0), ("2.5j", 2.5), ("1e3i", 1000.0), ("0.5e-1j", 0.05)])
def test_imaginary_literals(calc, formula, im):
    assert calc(formula) == {"re": 0.0, "im": pytest.approx(im), "dim": "dim-less"}


def test_postfix_binds_tighter_than_power(data, calc):
    assert calc("@a[0]^2")["num"] == 100.0
    assert calc("-@a[1]")["num"] == -20.0


# ------------------------------------------------------------------ explicit multiplication


@pytest.mark.parametrize("formula", ["2@a", "2$pi", "2(3)", "(2)(3)", "@i @i", "$pi$pi", "@i(2)"])
def test_multiplication_must_be_explicit(data, formula):
    msg = refused(data.eval(formula, "x"), "ENGINE_INVALID_FORMULA")
    assert "position" in msg


# ------------------------------------------------------------------ lexical errors


@pytest.mark.parametrize("formula", ["2e", "2e+", "1.5e-", "3*2e"])
def test_exponent_without_digits(engine, formula):
    msg = refused(engine.eval(formula, "x"), "ENGINE_INVALID_NUMBER")
    assert "position" in msg


def test_fraction_needs_digit_after_point(engine):
    # The spec says "a fraction needs a digit after the point"; the engine reports it as a number error.
    msg = refused(engine.eval("4.", "x"), "ENGINE_INVALID_NUMBER")
    assert "4." in msg


def test_uppercase_exponent_is_identifier_error(engine):
    msg = refused(engine.eval("1E5", "x"), "ENGINE_INVALID_IDENTIFIER")
    assert "1e5" in msg and "position 2" in msg


def test_letter_after_number_suggests_multiplication(engine):
    msg = refused(engine.eval("2x", "x"), "ENGINE_INVALID_IDENTIFIER")
    assert "2*x" in msg
    refused(engine.eval("3*2ix", "x"), "ENGINE_INVALID_IDENTIFIER")


@pytest.mark.parametrize("formula, ch, pos", [
    ("3 # 4", "#", 3),
    ("@a²", "²", 3),
    ("2×3", "×", 2),
    ("1 % 2", "%", 3),
    ("1 > 2", ">", 3),
    ('"a"', '"', 1),
    ("1;2", ";", 2),
    ("√2", "√", 1),
    ("2 Ω", "Ω", 3),
])
def test_character_outside_charset(engine, formula, ch, pos):
    msg = refused(engine.eval(formula, "x"), "ENGINE_INVALID_FORMULA")
    assert ch in msg
    assert f"position {pos}" in msg
    assert f"U+{ord(ch):04X}" in msg


@pytest.mark.parametrize("formula, opener", [("(1", "("), ("@a[0", "["), ("$sum_{k=1^{2}(k)", "{"), ("((1)", "(")])
def test_unclosed_brackets_name_the_opener(data, formula, opener):
    msg = refused(data.eval(formula, "x"), "ENGINE_INVALID_FORMULA")
    assert repr(opener) in msg or opener in msg
    assert "position" in msg


@pytest.mark.parametrize("formula", ["1)", "(1]", "]"])
def test_unmatched_closers(engine, formula):
    refused(engine.eval(formula, "x"), "ENGINE_INVALID_FORMULA")


@pytest.mark.parametrize("formula, pos", [("1 2", 3), ("1,2", 2), ("@i = 2", 4), ("1->2", 2), ("x=1", 2)])
def test_trailing_tokens(data, formula, pos):
    msg = refused(data.eval(formula, "x"), "ENGINE_INVALID_FORMULA")
    assert f"position {pos}" in msg


@pytest.mark.parametrize("formula", ["", "   ", "\n"])
def test_empty_formula(engine, formula):
    refused(engine.eval(formula, "x"), "ENGINE_INVALID_FORMULA")


def test_power_brace_outside_position_refused(engine):
    msg = refused(engine.eval("$pi^{2}", "x"), "ENGINE_INVALID_FORMULA")
    assert "position 4" in msg
    refused(engine.eval("2^{3}", "x"), "ENGINE_INVALID_FORMULA")


@pytest.mark.parametrize("formula", ["$", "$ pi", "@", "@ x", "@net.", "@net.1", "1+", "*2", "@a[0,1]",
                                     "$min(1,)", "$min(,1)", "()", "1.2.3"])
def test_malformed(data, formula):
    msg = refused(data.eval(formula, "x"), "ENGINE_INVALID_FORMULA")
    assert "position" in msg or "empty" in msg


# ------------------------------------------------------------------ data access


def test_slot_read_and_missing_slot(data, calc):
    assert calc("@L*3") == {"num": 6.0, "dim": "metre"}
    msg = refused(data.eval("@nope + 1", "x"), "ENGINE_SLOT_NOT_FOUND")
    assert "nope" in msg and "set" in msg


@pytest.mark.parametrize("formula, want", [
    ("@a[0]", 10.0), ("@a[2]", 30.0), ("@a[1+1]", 30.0), ("@a[@i]", 20.0), ("@a[1.0]", 20.0),
    ("@a[1+0j]", 20.0), ("@a[$len(@a)-1]", 30.0), ("@M[1][0]", 3.0),
])
def test_index(data, calc, formula, want):
    assert calc(formula) == {"num": want, "dim": "dim-less"}


def test_index_2d_row(data, calc):
    assert calc("@M[1]") == {"array": [3.0, 4.0], "dim": "dim-less"}


def test_field_access_and_chaining(data, calc):
    assert calc("@net.R") == {"num": 50.0, "dim": "ohm"}
    assert calc("@net.port.f[1]") == {"num": 6.0, "dim": "hertz"}
    assert calc("@net.port.z") == {"re": 50.0, "im": 5.0, "dim": "ohm"}
    assert calc("@net.m[1][0]") == {"num": 3.0, "dim": "metre"}
    assert calc("@net.m[0]") == {"array": [1.0, 2.0], "dim": "metre"}
    assert calc("@net.port")["object"]["f"] == {"array": [5.0, 6.0], "dim": "hertz"}


@pytest.mark.parametrize("formula", ["@a[0.5]", "@a[1+1j]", "@a[@L]", "@a[@a]"])
def test_index_must_be_dimensionless_integer(data, formula):
    refused(data.eval(formula, "x"), "ENGINE_INVALID_INDEX")


@pytest.mark.parametrize("formula, rng", [("@a[3]", "0..2"), ("@a[-1]", "0..2"), ("@a[100]", "0..2"),
                                          ("@M[2]", "0..1")])
def test_index_out_of_range_gives_valid_range(data, formula, rng):
    msg = refused(data.eval(formula, "x"), "ENGINE_INVALID_INDEX")
    assert rng in msg


def test_index_into_empty_array(data):
    msg = refused(data.eval("@E[0]", "x"), "ENGINE_INVALID_INDEX")
    assert "empty" in msg


@pytest.mark.parametrize("formula", ["@L[0]", "@net[0]", "@a[0][0]", "(1+2)[0]"])
def test_brackets_on_non_array(data, formula):
    refused(data.eval(formula, "x"), "ENGINE_UNSUPPORTED_INDEX")


@pytest.mark.parametrize("formula", ["@L.x", "@a.x", "@net.R.x", "@net.port.f[0].z", "@net.m[0].x"])
def test_dot_on_non_object(data, formula):
    refused(data.eval(formula, "x"), "ENGINE_UNSUPPORTED_INDEX")


def test_missing_field_lists_fields(data):
    msg = refused(data.eval("@net.port.q", "x"), "ENGINE_FIELD_NOT_FOUND")
    assert "q" in msg and "f" in msg and "z" in msg


# ------------------------------------------------------------------ bound names


def test_unbound_name_suggests_slot(engine):
    msg = refused(engine.eval("R*2", "x"), "ENGINE_NAME_NOT_BOUND")
    assert "@R" in msg and "position 1" in msg


@pytest.mark.parametrize("formula", ["$sum_{k=1}^{3}(k) + k", "$sum_{k=1}^{k}(1)", "$sum_{k=1}^{N-1}(1)"])
def test_bound_variable_visible_only_in_body(engine, formula):
    refused(engine.eval(formula, "x"), "ENGINE_NAME_NOT_BOUND")


def test_inner_binding_shadows_outer(calc):
    assert calc("$sum_{k=1}^{2}($sum_{k=1}^{3}(k))")["num"] == 12.0
    assert calc("$sum_{k=1}^{2}(k*$sum_{j=1}^{3}(j))")["num"] == 18.0


def test_bound_variable_is_dimensionless_real(calc):
    assert calc("$sum_{k=1}^{4}(k)") == {"num": 10.0, "dim": "dim-less"}


# ------------------------------------------------------------------ positions


@pytest.mark.parametrize("formula, code, pos", [
    ("1 + 2e", "ENGINE_INVALID_NUMBER", 5),
    ("1 + 2x", "ENGINE_INVALID_IDENTIFIER", 6),
    ("1 + $foo", "ENGINE_INVALID_NOTATION", 5),
    ("1 + $sin(1, 2)", "ENGINE_INVALID_ARITY", 5),
    ("1 + k", "ENGINE_NAME_NOT_BOUND", 5),
    ("1 + $pi(2)", "ENGINE_INVALID_NOTATION", 5),
    ("1 + @nope", "ENGINE_SLOT_NOT_FOUND", 5),
    ("1 + 1/0", "ENGINE_UNDEFINED_RESULT", 7),
    ("1 + $limit_{x->0}(x)", "ENGINE_UNSUPPORTED_SYMBOL", 5),
])
def test_formula_errors_carry_positions(engine, formula, code, pos):
    msg = refused(engine.eval(formula, "x"), code)
    assert f"position {pos}" in msg


def test_target_with_at_sign_gets_a_hint(engine):
    msg = refused(engine.eval("1", "@x"), "ENGINE_INVALID_IDENTIFIER")
    assert "without the @" in msg
