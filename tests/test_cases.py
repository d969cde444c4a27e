"""Regression tests for the public cases of the reckoner issue (``shared/cases/README.md``:
P01-P08, P12, P13), each through ``%%reckon`` in a real IPython shell. Each test covers
the case's whole kind, not only its one input."""

from __future__ import annotations

import json

import pytest

from test_magic import MIME, bundle, text


def refused(result) -> str:
    err = result.error_in_exec
    assert type(err).__name__ == "ReckonRefused", f"expected a refusal, got {err!r}"
    return str(err)


def test_case_P01_rpm_is_radians_per_second_and_never_shown_as_hz(sh):
    r, cap = sh.reckon("given n = 1800 rpm\nshow n in rad/s\nw = @n*1\nshow n in rpm")
    assert r.error_in_exec is None
    assert sh.ns["_reckon"]["n"].to("1/s").magnitude == pytest.approx(188.4956, rel=1e-6)
    out = text(cap)
    assert "n = 1800 rpm" in out
    assert "n = 188.5 rad/s" in out
    assert "w = @n*1 = (1800 rpm)·1 = 188.5 s⁻¹" in out  # the input as given; the result never in rpm or Hz
    assert "Hz" not in out
    assert "n = 1800 rpm" in out.splitlines()[-1]
    msg = refused(sh.reckon("given n = 1800 rpm\nshow n in Hz")[0])
    assert "cycles" in msg and "2π" in msg and "@n/(2*$pi)" in msg
    # the kind: any angular quantity given in radians, and any cycle count shown in radians
    assert "cycles" in refused(sh.reckon("given w = 100 rad/s\nshow w in Hz")[0])
    assert "radians" in refused(sh.reckon("given f = 50 Hz\nshow f in rad/s")[0])
    # a computed frequency may be shown in Hz (its origin is not angular)
    r, cap = sh.reckon("given R = 1 kohm\ngiven C = 1 uF\nf = 1/(2*$pi*@R*@C)\nshow f in Hz")
    assert r.error_in_exec is None and "f = 159.15 Hz" in text(cap)


def test_case_P02_implicit_product_after_slash_is_refused(sh):
    msg = refused(sh.reckon("given rate = 450 mg/12 h")[0])
    assert "parentheses" in msg and "mg/(12 h)" in msg
    r, _ = sh.reckon("given rate = 450 mg/(12 h)\nshow rate in mg/h")
    assert r.error_in_exec is None
    q = sh.ns["_reckon"]["rate"]
    assert q.to("kg/s").magnitude == pytest.approx(1.0416667e-8, rel=1e-7)
    assert q.to("mg/h").magnitude == pytest.approx(37.5)
    rows = [json.loads(x) for x in sh.records()[0].read_text().splitlines()]
    assert rows[2]["content"]["code"] == "ENGINE_INVALID_DIMENSION"


@pytest.mark.parametrize("line", ["given r = 3 m/4 m", "given k = 7 kg/2 m", "given v = 10 m/2 s", "given q = 1 kg/m s"])
def test_case_P03_quotients_of_quantities_need_parentheses(sh, line):
    assert "parentheses" in refused(sh.reckon(line)[0])


def test_case_P03_parenthesised_quotients_are_right(sh):
    r, _ = sh.reckon("given r = 3 m/(4 m)\ngiven k = 7 kg/(2 m)")
    assert r.error_in_exec is None
    q = sh.ns["_reckon"]
    assert q["r"].magnitude == pytest.approx(0.75) and q["r"].dimensionless
    assert q["k"].to("kg/m").magnitude == pytest.approx(3.5)


def test_case_P04_Nm_is_refused_not_read_as_a_yarn_count(sh):
    msg = refused(sh.reckon("given M = 35 Nm")[0])
    assert "textile" in msg and "N*m" in msg
    assert "textile" in refused(sh.reckon("given M = 2 kNm")[0])
    r, _ = sh.reckon("given M = 35 N*m\ngiven x = 35 nm")
    assert r.error_in_exec is None
    rows = [json.loads(x) for x in sh.records()[-1].read_text().splitlines()]
    sets = {row["content"]["name"]: row["content"]["value"] for row in rows if row.get("tool") == "set"}
    assert sets["M"] == {"num": 35.0, "dim": [2, 1, -2, 0, 0, 0, 0]}
    assert sets["x"]["num"] == pytest.approx(3.5e-8) and sets["x"]["dim"] == [1, 0, 0, 0, 0, 0, 0]


def test_case_P05_micro_prefix_in_every_spelling(sh):
    r, _ = sh.reckon("given a = 7.5 \u03bcm\ngiven b = 7.5 \u00b5m\ngiven c = 7.5 um\ngiven C = 4.7 \u00b5F")
    assert r.error_in_exec is None
    q = sh.ns["_reckon"]
    for name in "abc":
        assert q[name].to("m").magnitude == pytest.approx(7.5e-6, rel=1e-12)
    assert q["C"].to("F").magnitude == pytest.approx(4.7e-6)


@pytest.mark.parametrize("unit", ["dBm", "dB", "dBW"])
def test_case_P06_logarithmic_units_are_refused(sh, unit):
    msg = refused(sh.reckon(f"given a = 3 {unit}")[0])
    assert "logarithmic" in msg
    assert "W²" not in msg


def test_case_P07_percent_to_ppm_and_no_ratio_as_solid_angle(sh):
    r, cap = sh.reckon("given s = 0.25 percent\nshow s in ppm")
    assert r.error_in_exec is None and "s = 2500 ppm" in text(cap)
    msg = refused(sh.reckon("given p = 2 percent\nshow p in sr")[0])
    assert "solid angle" in msg
    refused(sh.reckon("given p = 2 percent\nshow p in rad")[0])


@pytest.mark.parametrize("line", ["given x = nan kg", "given y = inf m", "given z = -inf", "given w = 1e999 m",
                                  "given v = [1, nan] V"])
def test_case_P08_non_finite_inputs_are_refused(sh, line):
    msg = refused(sh.reckon(line)[0])
    assert "finite" in msg or "infinity" in msg


def test_case_P08_overflowing_formula_is_refused_and_nothing_non_finite_is_written(sh):
    for formula in ("@y*1e300", "$exp(1000)*@y", "@y^2", "1/(1/@z)"):
        r, _ = sh.reckon(f"given y = 1e300 m\ngiven z = 0 m\nr = {formula}")
        assert "ENGINE_UNDEFINED_RESULT" in refused(r)
        assert "r" not in sh.ns["_reckon"]
    for path in sh.records():
        raw = path.read_text(encoding="utf-8")
        assert "NaN" not in raw and "Infinity" not in raw
        for line in raw.splitlines():
            json.loads(line, parse_constant=lambda c: pytest.fail(f"non-finite constant {c} in {path}"))


@pytest.mark.parametrize("body", ["", "   \n\t\n", "# only a comment\n   # and another", "\r\n\r\n"])
def test_case_P12_empty_cell_prints_usage_and_writes_nothing(sh, body):
    r, cap = sh.run("%%reckon Nothing\n" + body)
    if body == "":
        # IPython answers a magic with no body at all itself, with a one-line UsageError
        assert type(r.error_in_exec).__name__ == "UsageError" and "body is empty" in str(r.error_in_exec)
    else:
        assert r.error_in_exec is None
        assert "no lines to run" in cap.stdout and "given NAME = VALUE" in cap.stdout
    assert not [o for o in cap.outputs if MIME in o.data]
    assert sh.records() == [] and not (sh.sidecar / "open-record.jsonl").exists()


def test_case_P13_crlf_cell_equals_lf_cell(sh):
    body = "given rho = 1.68e-8 ohm*m\ngiven L = 25 m\ngiven d = 2.05 mm\nA = $pi*(@d/2)^2\nR = @rho*@L/@A\nshow R in mohm\nend done"
    _, cap_lf = sh.reckon(body, "Same")
    lf = dict(sh.ns["_reckon"])
    _, cap_crlf = sh.reckon(body.replace("\n", "\r\n") + "\r\n", "Same")
    crlf = dict(sh.ns["_reckon"])
    assert bundle(cap_lf).data == bundle(cap_crlf).data
    assert {k: v.magnitude for k, v in lf.items()} == {k: v.magnitude for k, v in crlf.items()}
    for path in sh.records():
        assert "\\r" not in path.read_text(encoding="utf-8")
