"""Arrays (upstream-facts.md 3.6 "Arrays"): element-wise operators, broadcasting, length
mismatches, functions mapping over elements, $len and $transpose, objects refused."""

from __future__ import annotations

import math

import pytest

from receipts import refused




@pytest.fixture
def data(engine):
    engine.set("a", {"array": [1, 4, 9]})
    engine.set("b", {"array": [1, 2]})
    engine.set("c", {"array": [10, 20, 30]})
    engine.set("M", {"array": [[1, 2, 3], [4, 5, 6]]})
    engine.set("v", {"array": [10, 20]})
    engine.set("n", {"array": [-1, 4]})
    engine.set("z", {"array": [1, 0]})
    engine.set("L", {"num": 2, "dim": "metre"})
    engine.set("d", {"array": [1, 2, 3], "dim": "metre"})
    engine.set("o", {"object": {"x": {"num": 1}}})
    return engine


def arr(items, dim="dim-less"):
    return {"array": items, "dim": dim}


@pytest.mark.parametrize("formula, want", [
    ("@a + @c", [11.0, 24.0, 39.0]),
    ("@c - @a", [9.0, 16.0, 21.0]),
    ("@a * @c", [10.0, 80.0, 270.0]),
    ("@c / @a", [10.0, 5.0, 30.0 / 9]),
    ("@a ^ 2", [1.0, 16.0, 81.0]),
    ("2 ^ @a", [2.0, 16.0, 512.0]),
    ("@a * 2", [2.0, 8.0, 18.0]),
    ("2 * @a", [2.0, 8.0, 18.0]),
    ("@a + 1", [2.0, 5.0, 10.0]),
    ("@a[0] + @a", [2.0, 5.0, 10.0]),
    ("12 / @a", [12.0, 3.0, 12.0 / 9]),
    ("-@a", [-1.0, -4.0, -9.0]),
])
def test_element_wise_and_scalar_broadcast(data, calc, formula, want):
    got = calc(formula)
    assert got["dim"] == "dim-less"
    assert got["array"] == pytest.approx(want)


def test_array_dims_follow_vector_arithmetic(data, calc):
    assert calc("@d * @L") == arr([2.0, 4.0, 6.0], [2, 0, 0, 0, 0, 0, 0])
    assert calc("@d + @d") == arr([2.0, 4.0, 6.0], "metre")
    assert calc("@d / @L") == arr([0.5, 1.0, 1.5])
    msg = refused(data.eval("@d + @a", "x"), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "metre" in msg


@pytest.mark.parametrize("formula", ["@a + @b", "@b * @c", "$min(@a, @b)", "@M * @a", "@a ^ @b"])
def test_length_mismatch_names_both_lengths(data, formula):
    msg = refused(data.eval(formula, "x"), "ENGINE_INVALID_ARGS")
    lengths = {"a": 3, "b": 2, "c": 3, "M": 2}
    names = [n for n in ("a", "b", "c", "M") if f"@{n}" in formula]
    for n in names:
        assert str(lengths[n]) in msg


def test_outer_level_pairing_2d_with_1d(data, calc):
    # arrays pair from the outermost level; the shallower one repeats inside
    assert calc("@M + @v") == arr([[11.0, 12.0, 13.0], [24.0, 25.0, 26.0]])
    assert calc("@v + @M") == arr([[11.0, 12.0, 13.0], [24.0, 25.0, 26.0]])
    assert calc("@M * 2")["array"] == [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]


@pytest.mark.parametrize("formula, want", [
    ("$sqrt(@a)", [1.0, 2.0, 3.0]),
    ("$abs(@n)", [1.0, 4.0]),
    ("$sign(@n)", [-1.0, 1.0]),
    ("$floor(@a/2)", [0.0, 2.0, 4.0]),
    ("$ceil(@a/2)", [1.0, 2.0, 5.0]),
    ("$exp(@b)", [math.e, math.e ** 2]),
    ("$ln(@a)", [0.0, math.log(4), math.log(9)]),
    ("$log(@c)", [1.0, math.log10(20), math.log10(30)]),
    ("$sin(@b*0)", [0.0, 0.0]),
    ("$cos(@b*0)", [1.0, 1.0]),
    ("$atan(@b)", [math.atan(1), math.atan(2)]),
    ("$min(@a, 5)", [1.0, 4.0, 5.0]),
    ("$max(@a, 5)", [5.0, 5.0, 9.0]),
    ("$mod(@a, 4)", [1.0, 0.0, 1.0]),
    ("$atan2(@b, @b)", [math.pi / 4, math.pi / 4]),
    ("$re(@a + @a*$j)", [1.0, 4.0, 9.0]),
    ("$im(@a + 2*@a*$j)", [2.0, 8.0, 18.0]),
    ("$abs(@a*$j)", [1.0, 4.0, 9.0]),
])
def test_functions_map_over_elements(data, calc, formula, want):
    got = calc(formula)
    assert got["array"] == pytest.approx(want)


def test_function_keeps_array_dimension(data, calc):
    assert calc("$abs(@d)") == arr([1.0, 2.0, 3.0], "metre")
    assert calc("$sqrt(@d*@d)") == arr([1.0, 2.0, 3.0], "metre")


@pytest.mark.parametrize("formula, code", [
    ("$sqrt(@n)", "ENGINE_UNDEFINED_RESULT"),
    ("$ln(@z)", "ENGINE_UNDEFINED_RESULT"),
    ("1/@z", "ENGINE_UNDEFINED_RESULT"),
    ("@v/(@v-@v)", "ENGINE_UNDEFINED_RESULT"),
    ("$asin(@a)", "ENGINE_UNDEFINED_RESULT"),
    ("$mod(@a, 0)", "ENGINE_UNDEFINED_RESULT"),
    ("$exp(@d)", "ENGINE_INCOMPATIBLE_DIMENSION"),
    ("@L^@a", "ENGINE_INCOMPATIBLE_DIMENSION"),
])
def test_element_refusals(data, code, formula):
    refused(data.eval(formula, "x"), code)


def test_division_by_zero_element_is_named(data):
    msg = refused(data.eval("1/@z", "x"), "ENGINE_UNDEFINED_RESULT")
    assert "element 1" in msg


def test_len_and_transpose(data, calc):
    assert calc("$len(@a)") == {"num": 3.0, "dim": "dim-less"}
    assert calc("$len(@M)") == {"num": 2.0, "dim": "dim-less"}
    assert calc("$len(@M[0])") == {"num": 3.0, "dim": "dim-less"}
    assert calc("$len(@d)") == {"num": 3.0, "dim": "dim-less"}  # any vector in, dimensionless out
    assert calc("$transpose(@M)") == arr([[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]])
    assert calc("$transpose($transpose(@M))") == arr([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    data.set("D", {"array": [[1, 2]], "dim": "metre"})
    assert calc("$transpose(@D)") == arr([[1.0], [2.0]], "metre")


@pytest.mark.parametrize("formula", ["$len(3)", "$len(@L)", "$transpose(@a)", "$transpose(@L)", "$transpose(2)"])
def test_len_transpose_misuse(data, formula):
    refused(data.eval(formula, "x"), "ENGINE_INVALID_ARGS")


def test_ragged_seq_refused(data):
    # The engine keeps arrays rectangular (numpy); a ragged nesting is refused.
    refused(data.eval("$seq_{k=1}^{2}($seq_{j=1}^{k}(j))", "x"), "ENGINE_INVALID_ARGS")
    refused(data.set("r", {"array": [[1, 2], [3]]}), "ENGINE_INVALID_ARGS")


def test_folds_over_arrays(data, calc):
    assert calc("$sum_{k=0}^{2}(@a)")["array"] == [3.0, 12.0, 27.0]
    assert calc("$seq_{k=1}^{2}(@v*k)") == arr([[10.0, 20.0], [20.0, 40.0]])
    assert calc("$sum_{k=0}^{2}(@a[k])") == {"num": 14.0, "dim": "dim-less"}


@pytest.mark.parametrize("formula", ["@o + 1", "-@o", "@o * 2", "$abs(@o)", "@o^2", "2^@o", "$min(@o, 1)",
                                     "$sum_{k=1}^{2}(@o)", "$seq_{k=1}^{2}(@o)", "@o + @o"])
def test_objects_refuse_operators_and_cannot_be_elements(data, formula):
    refused(data.eval(formula, "x"), "ENGINE_UNSUPPORTED_OPERATION")


def test_object_can_be_copied_whole(data, calc):
    assert calc("@o") == {"object": {"x": {"num": 1.0, "dim": "dim-less"}}}
