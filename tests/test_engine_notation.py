"""The 35 `$` names (upstream-facts.md 3.7): values, dimension rules, misuse codes,
domain errors and the bounded forms."""

from __future__ import annotations

import cmath
import math

import pytest

from receipts import refused

from dsh_notebook.reckoner.grammar import ALL_NAMES

DL = "dim-less"
METRE = "metre"
OHM = "ohm"




@pytest.fixture
def data(engine):
    engine.set("L", {"num": 2, "dim": "metre"})
    engine.set("A", {"num": 9, "dim": [2, 0, 0, 0, 0, 0, 0]})
    engine.set("Z", {"re": 3, "im": 4, "dim": "ohm"})
    engine.set("R", {"num": 5, "dim": "ohm"})
    engine.set("V", {"num": 10, "dim": "volt"})
    engine.set("N", {"num": 2})
    engine.set("a", {"array": [10, 20, 30], "dim": "metre"})
    engine.set("M", {"array": [[1, 2, 3], [4, 5, 6]], "dim": "second"})
    engine.set("C", {"array": [[[1]]]})
    engine.set("o", {"object": {"x": {"num": 1}}})
    return engine


def close(got, want):
    """Compare a rendered value with an expected one (floats approximately)."""
    assert set(got) == set(want), (got, want)
    for k, w in want.items():
        if isinstance(w, float):
            assert got[k] == pytest.approx(w, rel=1e-12, abs=1e-12), (k, got, want)
        elif isinstance(w, list) and w and isinstance(w[0], float):
            assert got[k] == pytest.approx(w), (k, got, want)
        else:
            assert got[k] == w, (k, got, want)


def num(x, dim=DL):
    return {"num": float(x), "dim": dim}


def cpx(z, dim=DL):
    z = complex(z)
    return {"re": z.real, "im": z.imag, "dim": dim}


def test_there_are_35_names():
    assert len(ALL_NAMES) == 35 and len(set(ALL_NAMES)) == 35


# ------------------------------------------------------------------ one case per name

CASES = [
    # constants (5), dimensionless
    ("pi", "$pi", num(math.pi)),
    ("e", "$e", num(math.e)),
    ("inf", "1/$inf", num(0.0)),
    ("inf_bound", "$atan($inf)", num(math.pi / 2)),
    ("i", "$i", cpx(1j)),
    ("j", "$j", cpx(1j)),
    ("const_dimless", "$pi*@L", num(2 * math.pi, METRE)),
    # unary (20)
    ("abs", "$abs(-1*@R)", num(5, OHM)),
    ("abs_complex", "$abs(@Z)", num(5, OHM)),
    ("sqrt", "$sqrt(@A)", num(3, METRE)),
    ("sqrt_complex", "$sqrt(-4+0j)", cpx(2j)),
    ("exp", "$exp(1)", num(math.e)),
    ("exp_complex", "$exp($i*$pi)", cpx(cmath.exp(1j * math.pi))),
    ("ln", "$ln($e^3)", num(3)),
    ("ln_complex", "$ln(-1+0j)", cpx(1j * math.pi)),
    ("log", "$log(1000)", num(3)),
    ("log_complex", "$log(-10+0j)", cpx(1 + 1j * math.pi / math.log(10))),
    ("sin", "$sin($pi/2)", num(1)),
    ("sin_complex", "$sin(1j)", cpx(1j * math.sinh(1))),
    ("cos", "$cos(0)", num(1)),
    ("cos_complex", "$cos(1j)", cpx(math.cosh(1))),
    ("tan", "$tan($pi/4)", num(1)),
    ("asin", "$asin(1)", num(math.pi / 2)),
    ("acos", "$acos(-1)", num(math.pi)),
    ("acos_complex", "$acos(2+0j)", cpx(cmath.acos(2))),
    ("atan", "$atan(1)", num(math.pi / 4)),
    ("atan_complex", "$atan(2j)", cpx(cmath.atan(2j))),
    ("floor", "$floor(-2.5)", num(-3)),
    ("ceil", "$ceil(2.1)", num(3)),
    ("sign_neg", "$sign(-4)", num(-1)),
    ("sign_zero", "$sign(0)", num(0)),
    ("sign_pos", "$sign(0.2)", num(1)),
    ("re", "$re(@Z)", num(3, OHM)),
    ("re_real", "$re(@L)", num(2, METRE)),
    ("im", "$im(@Z)", num(4, OHM)),
    ("im_real", "$im(@L)", num(0, METRE)),
    ("arg", "$arg(@Z)", num(math.atan2(4, 3))),
    ("arg_zero", "$arg(0)", num(0)),
    ("arg_neg", "$arg(-1)", num(math.pi)),
    ("conj", "$conj(@Z)", cpx(3 - 4j, OHM)),
    ("len", "$len(@a)", num(3)),
    ("len_2d", "$len(@M)", num(2)),
    ("transpose", "$transpose(@M)", {"array": [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]], "dim": "second"}),
    # binary (4)
    ("atan2", "$atan2(1, 0)", num(0)),
    ("atan2_zero", "$atan2(0, 0)", num(0)),
    ("atan2_dims", "$atan2(@L, @L)", num(math.pi / 4)),
    ("min", "$min(@L, 3*@L)", num(2, METRE)),
    ("max", "$max(@L, 3*@L)", num(6, METRE)),
    ("mod", "$mod(7, 3)", num(1)),
    ("mod_dims", "$mod(3.5*@L, @L)", num(1, METRE)),
    # bounded (3 evaluable)
    ("sum", "$sum_{k=1}^{4}(k^2)", num(30)),
    ("sum_dims", "$sum_{k=1}^{3}(k*@L)", num(12, METRE)),
    ("sum_complex", "$sum_{k=1}^{3}(@Z)", cpx(9 + 12j, OHM)),
    ("prod", "$prod_{k=1}^{5}(k)", num(120)),
    ("prod_dims", "$prod_{k=1}^{3}(@R)", num(125, [6, 3, -9, -6, 0, 0, 0])),
    ("prod_var_exponent", "$prod_{k=1}^{3}(@L^k)", num(64, [6, 0, 0, 0, 0, 0, 0])),
    ("seq", "$seq_{k=1}^{3}(k*@L)", {"array": [2.0, 4.0, 6.0], "dim": METRE}),
    ("seq_nested", "$seq_{i=1}^{2}($seq_{j=1}^{3}(i*j))", {"array": [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]], "dim": DL}),
]


@pytest.mark.parametrize("case, formula, want", CASES, ids=[c[0] for c in CASES])
def test_name_value_and_dimension(data, calc, case, formula, want):
    close(calc(formula), want)


def test_every_name_is_covered():
    covered = set()
    for _, formula, _ in CASES:
        for n in ALL_NAMES:
            if f"${n}" in formula:
                covered.add(n)
    # the three symbolic forms are covered by test_symbolic_forms_are_unsupported
    assert covered | {"integral", "limit", "diff"} == set(ALL_NAMES)


@pytest.mark.parametrize("formula", [
    "$integral_{0}^{1}(x^2, x)", "$integral(x^2, x)", "$limit_{x->0}($sin(x)/x)", "$diff(x^2, x)", "$diff(x^3, x, 2)",
    "1 + $integral(x, x)",
])
def test_symbolic_forms_are_unsupported(engine, formula):
    msg = refused(engine.eval(formula, "x"), "ENGINE_UNSUPPORTED_SYMBOL")
    start = formula.index("$")
    # the message repeats the written form
    written = formula[start:]
    assert written in msg


# ------------------------------------------------------------------ dimension rules


@pytest.mark.parametrize("name", ["exp", "ln", "log", "sin", "cos", "tan", "asin", "acos", "atan",
                                  "floor", "ceil", "sign"])
def test_functions_requiring_dimensionless_argument(data, name):
    msg = refused(data.eval(f"${name}(@L)", "x"), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "[1,0,0,0,0,0,0]" in msg and "divide" in msg
    assert data.eval(f"${name}(@L/@L/2)", "x")["ok"]


def test_trig_hint_mentions_degrees(data):
    msg = refused(data.eval("$sin(@L)", "x"), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "$pi/180" in msg


@pytest.mark.parametrize("name", ["abs", "re", "im", "conj"])
def test_same_vector_functions_keep_dimension(data, calc, name):
    assert calc(f"${name}(@R)")["dim"] == "ohm"


@pytest.mark.parametrize("formula", ["$arg(@R)", "$len(@a)"])
def test_any_argument_to_dimensionless_result(data, calc, formula):
    assert calc(formula)["dim"] == DL


@pytest.mark.parametrize("name", ["atan2", "min", "max", "mod"])
def test_binary_functions_need_one_vector(data, name):
    msg = refused(data.eval(f"${name}(@L, 1)", "x"), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "metre" in msg


@pytest.mark.parametrize("name", ["atan2", "min", "max", "mod"])
def test_binary_functions_are_real_only(data, name):
    refused(data.eval(f"${name}(1j, 1)", "x"), "ENGINE_UNDEFINED_RESULT")
    refused(data.eval(f"${name}(1, @Z/@R)", "x"), "ENGINE_UNDEFINED_RESULT")


@pytest.mark.parametrize("a, b, want", [(7, 3, 1), (-7, 3, -1), (7, -3, 1), (-7, -3, -1), (5.5, 2, 1.5), (-5.5, 2, -1.5)])
def test_mod_has_sign_of_dividend(calc, a, b, want):
    assert calc(f"$mod({a}, {b})")["num"] == pytest.approx(want)


# ------------------------------------------------------------------ misuse


@pytest.mark.parametrize("formula", ["$pi()", "$pi(2)", "$e_{1}", "$j(1)"])
def test_constant_with_parentheses_or_subscript(engine, formula):
    msg = refused(engine.eval(formula, "x"), "ENGINE_INVALID_NOTATION")
    name = formula[: formula.index("(") if "(" in formula else formula.index("_")]
    assert name in msg  # repeats the written form


@pytest.mark.parametrize("formula, written", [
    ("$sin", "$sin(x)"), ("$sqrt + 1", "$sqrt(x)"), ("$sin_{1}(2)", "$sin(x)"), ("$atan2", "$atan2(x, y)"),
    ("$sum(k)", "$sum_{k=a}^{b}(body)"), ("$prod(2)", "$prod_{k=a}^{b}(body)"), ("$limit(x)", "$limit_{x->a}(body)"),
    ("$diff_{1}(x, x)", "$diff(body, x)"), ("$seq_{k=1}^{2}", "$seq_{k=a}^{b}(body)"),
])
def test_function_without_parentheses_or_bounds(engine, formula, written):
    msg = refused(engine.eval(formula, "x"), "ENGINE_INVALID_NOTATION")
    assert written in msg


@pytest.mark.parametrize("formula", ["$foo", "$Pi", "$sqr(2)", "$ohm"])
def test_unknown_name_lists_all_35(engine, formula):
    msg = refused(engine.eval(formula, "x"), "ENGINE_INVALID_NOTATION")
    for n in ALL_NAMES:
        assert f"${n}" in msg


@pytest.mark.parametrize("formula", [
    "$sin(1, 2)", "$sqrt()", "$mod(1)", "$atan2()", "$min(1, 2, 3)", "$sum_{k=1}^{2}(k, k)", "$sum_{k=1}^{2}()",
    "$integral(x)", "$diff(x)", "$diff(x, x, 2, 3)",
])
def test_wrong_arity(engine, formula):
    msg = refused(engine.eval(formula, "x"), "ENGINE_INVALID_ARITY")
    assert "position" in msg


@pytest.mark.parametrize("formula", [
    "$limit_{x=0}(x)",               # = instead of ->
    "$sum_{k=1}(k)",                 # missing upper bound
    "$integral_{0}(x, x)",           # missing upper bound
    "$sum_{1}^{2}(1)",               # missing bound variable
    "$limit_{x}(x)",                 # missing variable
    "$sum_{k->1}^{2}(1)",            # -> in a sum
    "$integral_{k=0}^{1}(x, x)",     # bound variable in $integral's subscript
])
def test_bound_misuse_is_arity(engine, formula):
    refused(engine.eval(formula, "x"), "ENGINE_INVALID_ARITY")


def test_limit_with_equals_names_arrow(engine):
    msg = refused(engine.eval("$limit_{x=0}(x)", "x"), "ENGINE_INVALID_ARITY")
    assert "->" in msg and "$limit_{x->a}(body)" in msg


def test_missing_upper_bound_message(engine):
    msg = refused(engine.eval("$sum_{k=1}(k)", "x"), "ENGINE_INVALID_ARITY")
    assert "upper bound" in msg


@pytest.mark.parametrize("formula", ["$integral(x, 2)", "$diff(x, 2*x)"])
def test_symbolic_variable_must_be_a_plain_name(engine, formula):
    refused(engine.eval(formula, "x"), "ENGINE_INVALID_FORMULA")


# ------------------------------------------------------------------ domain errors


@pytest.mark.parametrize("formula, hint", [
    ("$sqrt(-1)", "$j*$sqrt(-x)"),
    ("$ln(0)", None),
    ("$ln(-2)", None),
    ("$log(0)", None),
    ("$log(-1)", None),
    ("$ln(0j)", None),
    ("$asin(2)", None),
    ("$acos(-1.5)", None),
    ("$mod(1, 0)", None),
    ("$mod(@L, 0*@L)", None),
    ("$floor(1+2j)", None),
    ("$ceil(2j)", None),
    ("$sign(1j)", None),
    ("1/0", None),
    ("@L/0", None),
    ("@L/(@L-@L)", None),
    ("0^-1", None),
    ("0^(1j)", None),
    ("(-8)^(1/3)", None),
])
def test_domain_errors(data, formula, hint):
    msg = refused(data.eval(formula, "x"), "ENGINE_UNDEFINED_RESULT")
    if hint:
        assert hint in msg


@pytest.mark.parametrize("formula", ["$mod($inf, $pi)", "-$mod($inf, 2)", "$floor($inf)", "$sin($inf)", "@L^$inf",
                                     "@L^($inf-$inf)", "$mod(@N*$inf, 2)", "$inf*0", "$exp($inf)"])
def test_infinity_in_domains_is_undefined_not_internal(data, formula):
    # constant sub-expressions are folded while checking; their domain faults are refusals too
    refused(data.eval(formula, "x"), "ENGINE_UNDEFINED_RESULT")


def test_division_by_zero_names_position(engine):
    msg = refused(engine.eval("2 + 1/0", "x"), "ENGINE_UNDEFINED_RESULT")
    assert "zero" in msg and "position 7" in msg


# ------------------------------------------------------------------ bounds


@pytest.mark.parametrize("formula", [
    "$sum_{k=3}^{1}(k)",
    "$prod_{k=1}^{0}(k)",
    "$seq_{k=2}^{1}(k)",
    "$sum_{k=1.5}^{3}(k)",
    "$sum_{k=1}^{2.5}(k)",
    "$sum_{k=1}^{@L}(k)",
    "$sum_{k=@L}^{3}(k)",
    "$sum_{k=1}^{1j}(k)",
    "$sum_{k=@a}^{3}(k)",
    "$prod_{k=1}^{@L}(@L)",
])
def test_bad_bounds(data, formula):
    refused(data.eval(formula, "x"), "ENGINE_INVALID_INDEX")


def test_lower_above_upper_is_error_not_empty_sum(engine):
    msg = refused(engine.eval("$sum_{k=3}^{1}(k)", "x"), "ENGINE_INVALID_INDEX")
    assert "3" in msg and "1" in msg


@pytest.mark.parametrize("formula, want", [
    ("$sum_{k=2}^{2}(k)", 2), ("$sum_{k=-2}^{2}(k)", 0), ("$prod_{k=1}^{1}(7)", 7),
    ("$sum_{k=1}^{@N+1}(k)", 6), ("$sum_{k=0}^{$len(@a)-1}(@a[k]/@a[0])", 6),
])
def test_bounds_inclusive_and_from_expressions(data, calc, formula, want):
    assert calc(formula)["num"] == pytest.approx(want)


def test_sum_over_1000_terms(calc):
    assert calc("$sum_{k=1}^{1000}(k)") == num(500500)
    got = calc("$sum_{k=1}^{1000}(1/k^2)")["num"]
    assert got == pytest.approx(sum(1 / k ** 2 for k in range(1, 1001)), rel=1e-12)


def test_sum_terms_must_share_a_vector(data):
    refused(data.eval("$sum_{k=1}^{2}(@L^k)", "x"), "ENGINE_INCOMPATIBLE_DIMENSION")
    refused(data.eval("$seq_{k=1}^{2}(@L^k)", "x"), "ENGINE_INCOMPATIBLE_DIMENSION")


def test_prod_dimension_follows_bound_from_slot_not_cache(data):
    """$prod_{k=1}^{@N}(@L) is L^N: the cached check must not reuse the first N's dimension."""
    formula = "$prod_{k=1}^{@N}(@L)"
    for n in (2, 3, 2, 1, 4):
        assert data.set("N", {"num": n})["ok"]
        assert data.eval(formula, "P")["ok"]
        v = data.get("P")["value"]
        assert v["num"] == pytest.approx(2.0 ** n)
        want = [n, 0, 0, 0, 0, 0, 0]
        assert v["dim"] == ("metre" if n == 1 else want)


def test_prod_with_variable_exponent_and_bound_from_slot(data):
    for n in (2, 3, 2):
        data.set("N", {"num": n})
        assert data.eval("$prod_{k=1}^{@N}(@L^k)", "P")["ok"]
        e = n * (n + 1) // 2
        assert data.get("P")["value"] == num(2.0 ** e, [e, 0, 0, 0, 0, 0, 0])


def test_prod_dimension_follows_len_bound(data):
    formula = "$prod_{k=1}^{$len(@a)}(@L)"
    data.set("a", {"array": [1, 2]})
    data.eval(formula, "P")
    assert data.get("P")["value"]["dim"] == [2, 0, 0, 0, 0, 0, 0]
    data.set("a", {"array": [1, 2, 3]})
    data.eval(formula, "P")
    assert data.get("P")["value"] == num(8, [3, 0, 0, 0, 0, 0, 0])


def test_power_exponent_from_slot_not_cache(data):
    for n in (2, 3):
        data.set("N", {"num": n})
        data.eval("@L^@N", "P")
        assert data.get("P")["value"]["dim"] == [n, 0, 0, 0, 0, 0, 0]


def test_seq_nested_is_2d_and_indexable(data, calc):
    data.eval("$seq_{i=0}^{2}($seq_{j=0}^{1}(i*10+j))", "T")
    assert data.get("T")["value"] == {"array": [[0.0, 1.0], [10.0, 11.0], [20.0, 21.0]], "dim": DL}
    assert calc("@T[2][1]")["num"] == 21.0
    assert calc("$len(@T)")["num"] == 3.0
    assert calc("$transpose(@T)")["array"] == [[0.0, 10.0, 20.0], [1.0, 11.0, 21.0]]


def test_len_and_transpose_misuse(data):
    refused(data.eval("$len(1)", "x"), "ENGINE_INVALID_ARGS")
    refused(data.eval("$len(@L)", "x"), "ENGINE_INVALID_ARGS")
    refused(data.eval("$transpose(@a)", "x"), "ENGINE_INVALID_ARGS")
    refused(data.eval("$transpose(1)", "x"), "ENGINE_INVALID_ARGS")
    refused(data.eval("$transpose(@C)", "x"), "ENGINE_INVALID_ARGS")
    refused(data.eval("$len(@o)", "x"), "ENGINE_UNSUPPORTED_OPERATION")


def test_nested_folds_share_one_term_budget(engine):
    import time

    t = time.time()
    r = engine.eval("$sum_{i=1}^{100000}($sum_{k=1}^{100000}(k))", "x")
    assert refused(r, "ENGINE_INVALID_INDEX") and "in all" in r["error"]
    r = engine.eval("$seq_{a=1}^{100}($seq_{b=1}^{100}($seq_{c=1}^{100}($seq_{d=1}^{100}(1))))", "x")
    assert r["code"] == "ENGINE_INVALID_INDEX"
    assert time.time() - t < 30
    assert engine.eval("$sum_{i=1}^{100}($sum_{k=1}^{100}(k))", "x")["ok"]
