"""Values, set and get (upstream-facts.md 3.2-3.5): the tagged input forms, dims, refusals,
revs, delete, and get's form/digits/dim renderings."""

from __future__ import annotations

import math

import pytest

from receipts import refused

from dsh_notebook.reckoner.values import stored

ZERO = [0, 0, 0, 0, 0, 0, 0]
OHM = [2, 1, -3, -2, 0, 0, 0]
METRE = [1, 0, 0, 0, 0, 0, 0]
KELVIN = [0, 0, 0, 0, 1, 0, 0]

# The 24-row SI name table, written out from the spec (first name = receipt name).
TABLE = [
    ([0, 0, 0, 0, 0, 0, 0], ["dim-less", "radian", "steradian"]),
    ([0, 0, 1, 0, 0, 0, 0], ["second"]),
    ([1, 0, 0, 0, 0, 0, 0], ["metre"]),
    ([0, 1, 0, 0, 0, 0, 0], ["kilogram"]),
    ([0, 0, 0, 1, 0, 0, 0], ["ampere"]),
    ([0, 0, 0, 0, 1, 0, 0], ["kelvin", "degC"]),
    ([0, 0, 0, 0, 0, 1, 0], ["mole"]),
    ([0, 0, 0, 0, 0, 0, 1], ["candela", "lumen"]),
    ([0, 0, -1, 0, 0, 0, 0], ["hertz", "becquerel"]),
    ([1, 1, -2, 0, 0, 0, 0], ["newton"]),
    ([-1, 1, -2, 0, 0, 0, 0], ["pascal"]),
    ([2, 1, -2, 0, 0, 0, 0], ["joule"]),
    ([2, 1, -3, 0, 0, 0, 0], ["watt"]),
    ([0, 0, 1, 1, 0, 0, 0], ["coulomb"]),
    ([2, 1, -3, -1, 0, 0, 0], ["volt"]),
    ([-2, -1, 4, 2, 0, 0, 0], ["farad"]),
    ([2, 1, -3, -2, 0, 0, 0], ["ohm"]),
    ([-2, -1, 3, 2, 0, 0, 0], ["siemens"]),
    ([2, 1, -2, -2, 0, 0, 0], ["henry"]),
    ([2, 1, -2, -1, 0, 0, 0], ["weber"]),
    ([0, 1, -2, -1, 0, 0, 0], ["tesla"]),
    ([-2, 0, 0, 0, 0, 0, 1], ["lux"]),
    ([2, 0, -2, 0, 0, 0, 0], ["gray", "sievert"]),
    ([0, 0, -1, 0, 0, 1, 0], ["katal"]),
]
ALL_NAMES = [n for _, names in TABLE for n in names]




def snapshot(engine):
    return {n: (stored(v), rev) for n, (v, rev) in engine.slots().items()}


# ------------------------------------------------------------------ tagged input forms


def test_set_num_with_table_name(engine):
    r = engine.set("R", {"num": 4.7, "dim": "ohm"})
    assert r == {"ok": True, "name": "R", "rev": 1, "value": {"num": 4.7, "dim": OHM}}
    assert engine.get("R") == {"ok": True, "name": "R", "value": {"num": 4.7, "dim": "ohm"}}


def test_set_num_with_seven_ints(engine):
    r = engine.set("v", {"num": 3, "dim": [1, 0, -1, 0, 0, 0, 0]})
    assert r["ok"] and r["value"] == {"num": 3.0, "dim": [1, 0, -1, 0, 0, 0, 0]}


@pytest.mark.parametrize("value", [{"num": 2}, {"num": 2, "dim": None}])
def test_set_num_dim_omitted_or_null_is_dimensionless(engine, value):
    r = engine.set("k", value)
    assert r["value"] == {"num": 2.0, "dim": ZERO}
    assert engine.get("k")["value"] == {"num": 2.0, "dim": "dim-less"}


def test_set_rectangular_complex(engine):
    r = engine.set("Z", {"re": 3, "im": -4, "dim": "ohm"})
    assert r["value"] == {"re": 3.0, "im": -4.0, "dim": OHM}
    assert engine.get("Z")["value"] == {"re": 3.0, "im": -4.0, "dim": "ohm"}


def test_set_polar_is_converted_to_rectangular(engine):
    r = engine.set("V", {"mag": 2, "ang": math.pi / 2, "dim": "volt"})
    v = r["value"]
    assert set(v) == {"re", "im", "dim"}  # always stored rectangular
    assert v["re"] == pytest.approx(0, abs=1e-12)
    assert v["im"] == pytest.approx(2)
    assert v["dim"] == [2, 1, -3, -1, 0, 0, 0]


def test_set_flat_array(engine):
    r = engine.set("L", {"array": [1, 2.5, 3], "dim": "metre"})
    assert r["value"] == {"array": [1.0, 2.5, 3.0], "dim": METRE}
    assert engine.get("L")["value"] == {"array": [1.0, 2.5, 3.0], "dim": "metre"}


def test_set_nested_array(engine):
    r = engine.set("M", {"array": [[1, 2], [3, 4]], "dim": "second"})
    assert r["value"] == {"array": [[1.0, 2.0], [3.0, 4.0]], "dim": [0, 0, 1, 0, 0, 0, 0]}


def test_set_array_with_complex_elements(engine):
    r = engine.set("zs", {"array": [{"re": 1, "im": 2}, {"mag": 2, "ang": math.pi}]})
    assert r["ok"], r
    a = r["value"]["array"]
    assert a[0] == {"re": 1.0, "im": 2.0}
    assert a[1]["re"] == pytest.approx(-2) and a[1]["im"] == pytest.approx(0, abs=1e-12)


def test_empty_array_gets_zero_vector(engine):
    r = engine.set("e", {"array": [], "dim": "metre"})
    assert r["ok"] and r["value"] == {"array": [], "dim": ZERO}


def test_set_object_nested_field_by_field(engine):
    value = {"object": {
        "R": {"num": 50, "dim": "ohm"},
        "port": {"object": {"z": {"re": 50, "im": 5, "dim": "ohm"}, "f": {"array": [1, 2], "dim": "hertz"}}},
    }}
    r = engine.set("net", value)
    assert r["ok"], r
    assert r["value"] == {"object": {
        "R": {"num": 50.0, "dim": OHM},
        "port": {"object": {"z": {"re": 50.0, "im": 5.0, "dim": OHM},
                            "f": {"array": [1.0, 2.0], "dim": [0, 0, -1, 0, 0, 0, 0]}}},
    }}
    g = engine.get("net")["value"]
    assert "dim" not in g  # an object has no dim of its own
    assert g["object"]["port"]["object"]["f"] == {"array": [1.0, 2.0], "dim": "hertz"}


def test_set_receipt_is_refeedable(engine):
    """A get receipt can be given back to set and stores the same value."""
    engine.set("Z", {"re": 1.5, "im": -2, "dim": "ohm"})
    engine.set("T", {"num": 20, "dim": "degC"})
    for name, opts in (("Z", {}), ("T", {"dim": "degC"})):
        before = snapshot(engine)[name][0]
        receipt = engine.get(name, **opts)["value"]
        assert engine.set(name + "2", receipt)["value"] == before


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize("value, needle", [
    ({"num": 1, "unit": "ohm"}, "unit"),
    ({"value": 3}, "value"),
    ({"num": 1, "Dim": "ohm"}, "Dim"),
])
def test_unknown_key_refused_with_vocabulary(engine, value, needle):
    msg = refused(engine.set("x", value), "ENGINE_INVALID_ARGS")
    assert needle in msg
    for tag in ("num", "re", "mag", "array", "object", "dim"):
        assert tag in msg


@pytest.mark.parametrize("value", [{}, {"dim": "ohm"}])
def test_no_tag_refused(engine, value):
    refused(engine.set("x", value), "ENGINE_INVALID_ARGS")


@pytest.mark.parametrize("value", [
    {"num": 1, "re": 1, "im": 2},
    {"num": 1, "array": [1]},
    {"re": 1, "im": 2, "mag": 1, "ang": 0},
    {"array": [1], "object": {}},
])
def test_two_tag_groups_refused(engine, value):
    refused(engine.set("x", value), "ENGINE_INVALID_ARGS")


@pytest.mark.parametrize("value, missing", [
    ({"re": 1}, "im"), ({"im": 1}, "re"), ({"mag": 1}, "ang"), ({"ang": 1}, "mag"),
])
def test_half_pair_refused_naming_missing_half(engine, value, missing):
    msg = refused(engine.set("x", value), "ENGINE_INVALID_ARGS")
    assert repr(missing) in msg or f"'{missing}'" in msg


def test_dim_beside_object_refused(engine):
    msg = refused(engine.set("o", {"object": {"a": {"num": 1}}, "dim": "ohm"}), "ENGINE_INVALID_ARGS")
    assert "dim" in msg and "object" in msg


@pytest.mark.parametrize("items", [
    ["1"], [True], [None], [{"num": 1}], [{"re": 1}], [{"re": 1, "im": 2, "dim": "ohm"}],
    [[1, 2], ["x", 3]], [{"mag": 1, "ang": "0"}],
])
def test_bad_array_element_refused(engine, items):
    refused(engine.set("a", {"array": items}), "ENGINE_INVALID_ARGS")


def test_object_as_array_element_refused(engine):
    msg = refused(engine.set("a", {"array": [1, {"object": {"x": {"num": 1}}}]}), "ENGINE_INVALID_ARGS")
    assert "object" in msg


@pytest.mark.parametrize("value", [
    {"num": math.nan}, {"num": math.inf}, {"num": -math.inf},
    {"re": math.inf, "im": 0}, {"re": 0, "im": math.nan}, {"mag": math.inf, "ang": 0},
    {"array": [1, math.nan]}, {"object": {"a": {"num": math.inf}}},
])
def test_non_finite_numbers_refused(engine, value):
    refused(engine.set("x", value), "ENGINE_INVALID_ARGS")


@pytest.mark.parametrize("value", [
    {"num": "1"}, {"num": True}, {"num": False}, {"num": None}, {"num": [1]},
    {"re": "1", "im": 0}, {"re": 1, "im": True}, {"mag": None, "ang": 0}, {"mag": 1, "ang": "pi"},
    {"array": [1, "2"]}, {"array": [False]},
])
def test_strings_booleans_in_numeric_positions_refused(engine, value):
    refused(engine.set("x", value), "ENGINE_INVALID_ARGS")


@pytest.mark.parametrize("value", [5, "4.7 ohm", [1, 2], True, {"array": "1,2"}, {"array": {"a": 1}},
                                   {"object": [1]}, {"object": "x"}])
def test_wrong_shapes_refused(engine, value):
    refused(engine.set("x", value), "ENGINE_INVALID_ARGS")


@pytest.mark.parametrize("field", ["1a", "a-b", "é", ""])
def test_object_field_name_rule(engine, field):
    refused(engine.set("o", {"object": {field: {"num": 1}}}), "ENGINE_INVALID_IDENTIFIER")


@pytest.mark.parametrize("name", ["1R", "@R", "", "R load", "Rü", 5, None, True, ["R"], {"R": 1}, 1.5])
def test_slot_name_rule(engine, name):
    refused(engine.set(name, {"num": 1}), "ENGINE_INVALID_IDENTIFIER")
    refused(engine.get(name), "ENGINE_INVALID_IDENTIFIER")
    # a missing target (None) is a tool-argument shape error; anything else breaks the name rule
    refused(engine.eval("1", name), "ENGINE_INVALID_ARGS" if name is None else "ENGINE_INVALID_IDENTIFIER")


@pytest.mark.parametrize("name", ["sum", "abs", "ohm", "_x", "R_load2", "pi"])
def test_names_that_shadow_notation_or_units_are_fine(engine, name):
    assert engine.set(name, {"num": 1})["ok"]
    assert engine.eval(f"@{name}*2", "y")["ok"]


def test_unknown_dim_name_lists_names_and_suggests_ints(engine):
    msg = refused(engine.set("x", {"num": 1, "dim": "kohm"}), "ENGINE_INVALID_DIMENSION")
    assert "kohm" in msg
    for n in ALL_NAMES:
        assert n in msg
    assert "[1,0,-1,0,0,0,0]" in msg.replace(" ", "")


@pytest.mark.parametrize("dim", [
    [1, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0], [0.5, 0, 0, 0, 0, 0, 0], ["1", 0, 0, 0, 0, 0, 0],
    [True, 0, 0, 0, 0, 0, 0], {"m": 1}, 3, "m/s", "kOhm", "Ohm",
])
def test_bad_dim_refused(engine, dim):
    refused(engine.set("x", {"num": 1, "dim": dim}), "ENGINE_INVALID_DIMENSION")


# ------------------------------------------------------------------ revs and delete


def test_rev_increments_and_any_vector_may_overwrite(engine):
    assert engine.set("x", {"num": 1, "dim": "ohm"})["rev"] == 1
    assert engine.set("x", {"num": 2, "dim": "metre"})["rev"] == 2
    assert engine.set("x", {"array": [1, 2]})["rev"] == 3
    assert engine.eval("@x*2", "x") == {"ok": True, "target": "x", "rev": 4}
    assert engine.get("x")["value"] == {"array": [2.0, 4.0], "dim": "dim-less"}


def test_delete_semantics(engine):
    engine.set("x", {"num": 1})
    engine.set("x", {"num": 2})
    assert engine.set("x", None) == {"ok": True, "name": "x", "rev": None, "value": None}
    refused(engine.get("x"), "ENGINE_SLOT_NOT_FOUND")
    assert "x" not in engine.slots()
    # idempotent
    assert engine.set("x", None) == {"ok": True, "name": "x", "rev": None, "value": None}
    assert engine.set("never", None)["ok"] is True
    # recreated at rev 1
    assert engine.set("x", {"num": 3})["rev"] == 1
    assert engine.eval("1", "y")["rev"] == 1


def test_get_missing_slot(engine):
    msg = refused(engine.get("nope"), "ENGINE_SLOT_NOT_FOUND")
    assert "nope" in msg


def test_get_never_changes_storage(engine):
    engine.set("T", {"array": [20, 30], "dim": "degC"})
    before = snapshot(engine)
    engine.get("T", form="polar", digits=2, dim="degC")
    engine.get("T", dim=[0, 0, 0, 0, 1, 0, 0])
    assert snapshot(engine) == before


# ------------------------------------------------------------------ get: form


def test_get_form_rect_and_polar_for_reals(engine):
    engine.set("p", {"num": 2, "dim": "volt"})
    engine.set("n", {"num": -3})
    assert engine.get("p", form="rect")["value"] == {"re": 2.0, "im": 0.0, "dim": "volt"}
    assert engine.get("p", form="polar")["value"] == {"mag": 2.0, "ang": 0.0, "dim": "volt"}
    v = engine.get("n", form="polar")["value"]
    assert v["mag"] == 3.0 and v["ang"] == pytest.approx(math.pi)
    assert engine.get("n", form="rect")["value"] == {"re": -3.0, "im": 0.0, "dim": "dim-less"}


def test_get_form_for_complex(engine):
    engine.set("z", {"re": 0, "im": -2})
    v = engine.get("z", form="polar")["value"]
    assert v["mag"] == pytest.approx(2) and v["ang"] == pytest.approx(-math.pi / 2)
    assert engine.get("z")["value"] == {"re": 0.0, "im": -2.0, "dim": "dim-less"}


def test_get_form_applies_to_array_elements_and_fields(engine):
    engine.set("a", {"array": [1, -1]})
    v = engine.get("a", form="polar")["value"]["array"]
    assert v[0] == {"mag": 1.0, "ang": 0.0}
    assert v[1]["mag"] == 1.0 and v[1]["ang"] == pytest.approx(math.pi)
    assert engine.get("a", form="rect")["value"]["array"] == [{"re": 1.0, "im": 0.0}, {"re": -1.0, "im": 0.0}]
    engine.set("o", {"object": {"x": {"num": 4}}})
    assert engine.get("o", form="rect")["value"] == {"object": {"x": {"re": 4.0, "im": 0.0, "dim": "dim-less"}}}


@pytest.mark.parametrize("form", ["polar2", "RECT", "", 1, True, ["rect"]])
def test_get_bad_form(engine, form):
    engine.set("x", {"num": 1})
    refused(engine.get("x", form=form), "ENGINE_INVALID_ARGS")


# ------------------------------------------------------------------ get: digits


@pytest.mark.parametrize("x, digits, want", [
    (0.12345, 4, 0.1235),       # half rounds up
    (-0.12345, 4, -0.1234),     # half toward +infinity
    (2.5, 1, 3.0),
    (-2.5, 1, -2.0),
    (123456, 2, 120000.0),
    (0.1, 10, 0.1),             # never padded
    (1.0, 3, 1.0),
    (9.996, 3, 10.0),
    (0.0, 3, 0.0),
    (6.02214076e23, 3, 6.02e23),
    (1.23456e-7, 2, 1.2e-7),
])
def test_digits_rounding(engine, x, digits, want):
    engine.set("x", {"num": x})
    got = engine.get("x", digits=digits)["value"]["num"]
    assert got == pytest.approx(want, rel=1e-12, abs=0)
    assert got == want or abs(got - want) <= abs(want) * 1e-12


def test_digits_negative_zero_becomes_zero(engine):
    engine.set("z", {"num": -0.0})
    got = engine.get("z", digits=3)["value"]["num"]
    assert got == 0 and math.copysign(1.0, got) == 1.0


def test_digits_apply_to_every_leaf(engine):
    engine.set("z", {"re": 1.23456, "im": -9.87654})
    assert engine.get("z", digits=3)["value"] == {"re": 1.23, "im": -9.88, "dim": "dim-less"}
    p = engine.get("z", form="polar", digits=3)["value"]
    assert p["mag"] == 9.95 and p["ang"] == -1.45
    engine.set("a", {"array": [[1.23456, 2.34567]]})
    assert engine.get("a", digits=2)["value"]["array"] == [[1.2, 2.3]]
    engine.set("o", {"object": {"x": {"num": 3.14159}}})
    assert engine.get("o", digits=3)["value"]["object"]["x"]["num"] == 3.14


@pytest.mark.parametrize("digits", [0, -1, 1.5, "3", True, [3]])
def test_bad_digits(engine, digits):
    engine.set("x", {"num": 1})
    refused(engine.get("x", digits=digits), "ENGINE_INVALID_ARGS")


# ------------------------------------------------------------------ get: dim


def test_degc_entry_and_reading(engine):
    r = engine.set("T", {"num": 20, "dim": "degC"})
    assert r["value"]["num"] == pytest.approx(293.15) and r["value"]["dim"] == KELVIN
    assert engine.get("T")["value"]["dim"] == "kelvin"
    engine.set("K", {"num": 293.15, "dim": "kelvin"})
    v = engine.get("K", dim="degC")["value"]
    assert v["num"] == pytest.approx(20) and v["dim"] == "degC"


def test_degc_complex_offset_applies_to_real_part_only(engine):
    r = engine.set("T", {"re": 10, "im": 2, "dim": "degC"})
    assert r["value"]["re"] == pytest.approx(283.15) and r["value"]["im"] == 2.0
    v = engine.get("T", dim="degC")["value"]
    assert v["re"] == pytest.approx(10) and v["im"] == pytest.approx(2)


def test_get_dim_ints_checks_without_converting(engine):
    engine.set("T", {"num": 300, "dim": "kelvin"})
    assert engine.get("T", dim=KELVIN)["value"] == {"num": 300.0, "dim": KELVIN}
    assert engine.get("T", dim="kelvin")["value"] == {"num": 300.0, "dim": "kelvin"}
    engine.set("R", {"num": 5, "dim": "ohm"})
    assert engine.get("R", dim="ohm")["value"] == {"num": 5.0, "dim": "ohm"}


@pytest.mark.parametrize("claim", ["volt", "degC", [2, 1, -3, -1, 0, 0, 0], ZERO])
def test_get_dim_mismatch(engine, claim):
    engine.set("R", {"num": 5, "dim": "ohm"})
    msg = refused(engine.get("R", dim=claim), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "[2,1,-3,-2,0,0,0]" in msg.replace(" ", "")
    assert "read without dim or convert in a formula" in msg


def test_get_dim_checked_per_object_field(engine):
    engine.set("o", {"object": {"a": {"num": 1, "dim": "metre"}, "b": {"num": 2, "dim": "metre"}}})
    assert engine.get("o", dim="metre")["value"] == {"object": {"a": {"num": 1.0, "dim": "metre"},
                                                                "b": {"num": 2.0, "dim": "metre"}}}
    engine.set("p", {"object": {"a": {"num": 1, "dim": "metre"}, "b": {"num": 2, "dim": "second"}}})
    msg = refused(engine.get("p", dim="metre"), "ENGINE_INCOMPATIBLE_DIMENSION")
    assert "b" in msg


def test_get_bad_dim(engine):
    engine.set("x", {"num": 1})
    refused(engine.get("x", dim="furlong"), "ENGINE_INVALID_DIMENSION")
    refused(engine.get("x", dim=[0, 0]), "ENGINE_INVALID_DIMENSION")


def test_unnamed_vector_is_spelled_as_seven_ints(engine):
    engine.set("v", {"num": 3, "dim": [1, 0, -1, 0, 0, 0, 0]})
    assert engine.get("v")["value"] == {"num": 3.0, "dim": [1, 0, -1, 0, 0, 0, 0]}


@pytest.mark.parametrize("vector, names", TABLE, ids=[names[0] for _, names in TABLE])
def test_table_row_maps_to_first_name(engine, vector, names):
    assert len(TABLE) == 24
    r = engine.set("q", {"num": 1.5, "dim": vector})
    assert r["value"]["dim"] == vector
    assert engine.get("q")["value"]["dim"] == names[0]
    for name in names:
        r = engine.set("q", {"num": 1.5, "dim": name})
        assert r["ok"], r
        assert r["value"]["dim"] == vector
        assert engine.get("q")["value"]["dim"] == names[0]
        want = 1.5 if name != "degC" else 1.5 + 273.15
        assert r["value"]["num"] == pytest.approx(want)
        # reading back through the same name returns what was written
        assert engine.get("q", dim=name)["value"]["num"] == pytest.approx(1.5)


def test_no_prefixed_names(engine):
    for name in ("kohm", "mV", "km", "ms", "Hz", "N"):
        refused(engine.set("q", {"num": 1, "dim": name}), "ENGINE_INVALID_DIMENSION")
