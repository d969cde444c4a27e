"""Temperature points and differences, declared result units and the working's parentheses
(issue 17; public cases P17 and P23), through ``%%reckon`` in a real IPython shell and through
the engine's tools as the model calls them."""

from __future__ import annotations

import json

import pytest

from dsh_notebook.version import ENGINE_RULES

from dsh_notebook.reckoner import Engine, replay, rerun
from dsh_notebook.reckoner.records import read_record
from dsh_notebook.reckoner.schemas import TOOL_SCHEMAS
from test_cases import refused
from test_magic import bundle, text

# ------------------------------------------------------------------ the four wrong numbers


def test_two_celsius_points_do_not_add(sh):
    msg = refused(sh.reckon("given T850 = 14.2 degC\ngiven Td850 = 9.6 degC\ns = @T850 + @Td850")[0])
    assert "ENGINE_INCOMPATIBLE_DIMENSION" in msg and "two temperature points" in msg
    assert "@T1 + (@T2 - @T1)/2" in msg  # the fix for a mean
    assert "s" not in sh.ns["_reckon"]  # nothing was written


@pytest.mark.parametrize("formula", ["2*@T", "@T/2", "0.5*@T*3", "-@T", "@T*@k", "(2*@T)/1"])
def test_a_point_scaled_by_plain_numbers_is_refused(sh, formula):
    msg = refused(sh.reckon(f"given T = 12 degC\ngiven k = 3\nx = {formula}")[0])
    assert "ENGINE_INCOMPATIBLE_DIMENSION" in msg and "temperature point" in msg
    assert "x" not in sh.ns["_reckon"]


def test_a_difference_of_points_is_not_a_reading_on_a_scale(sh):
    body = "given inside = 37 degC\ngiven outside = 21.5 degC\ndT = @inside - @outside\nshow dT in delta_degF"
    r, cap = sh.reckon(body)
    assert r.error_in_exec is None
    out = text(cap)
    assert "dT = @inside - @outside = (37 °C)-(21.5 °C) = 15.5 Δ°C" in out  # pint: degC - degC is delta_degC (issue 18)
    assert "dT = 27.9 Δ°F" in out
    assert sh.ns["_reckon"].kind("dT") == "difference"
    assert sh.ns["_reckon"]["dT"].to("K").magnitude == pytest.approx(15.5)
    msg = refused(sh.reckon(body + "\nshow dT in degF")[0])
    assert "temperature difference" in msg and "delta_degF" in msg
    assert "-431" not in text(sh.reckon(body + "\nshow dT in degF")[1])


def test_a_given_difference_is_never_shown_on_a_scale(sh):
    msg = refused(sh.reckon("given d = 4 delta_degC\nshow d in degC")[0])
    assert "temperature difference" in msg
    r, cap = sh.reckon("given d = 4 Δ°C\nshow d in K\nshow d in delta_degF")
    assert r.error_in_exec is None
    assert "d = 4 K" in text(cap) and "d = 7.2 Δ°F" in text(cap)


def test_case_P23_difference_shown_in_fahrenheit(sh):
    body = "given t1 = 80 degC\ngiven t2 = 60 degC\nd = @t1 - @t2"
    r, cap = sh.reckon(body + "\nshow d in delta_degF")
    assert r.error_in_exec is None
    assert "d = 36 Δ°F" in text(cap)
    assert sh.ns["_reckon"]["d"].to("K").magnitude == pytest.approx(20)
    msg = refused(sh.reckon(body + "\nshow d in degF")[0])
    assert "ENGINE_INCOMPATIBLE_DIMENSION" in msg
    assert "-423" not in msg
    # the same refusal through the engine's own get, as the model calls it
    e = Engine(sh.folder / "model")
    e.record_start("P23")
    e.set("t1", {"num": 80, "dim": "degC"})
    e.set("t2", {"num": 60, "dim": "degC"})
    assert e.eval("@t1 - @t2", "d")["ok"]
    assert e.get("d")["value"] == {"num": pytest.approx(20), "dim": "kelvin", "kind": "difference"}
    assert e.get("d", dim="degC")["code"] == "ENGINE_INCOMPATIBLE_DIMENSION"
    e.close()


# ------------------------------------------------------------------ what is allowed


def test_point_minus_kelvin_is_a_point_and_the_working_says_so(sh):
    r, cap = sh.reckon("given T = 80 degC\ngiven k = 5 K\nT2 = @T - @k")
    assert r.error_in_exec is None
    out = text(cap)
    assert "T2 = @T - @k = (80 °C)-(5 ΔK) = 75 °C" in out
    assert r"\left(5\,\Delta\mathrm{K}\right)" in bundle(cap).data["text/latex"]
    assert sh.ns["_reckon"].kind("T2") == "point" and sh.ns["_reckon"].scale("T2") == "degC"
    assert sh.ns["_reckon"]["T2"].to("K").magnitude == pytest.approx(348.15)


def test_heating_at_a_rate_pint_refuses(sh):
    # pint raises OffsetUnitCalculusError for 25 degC + 1.5 K/min * 40 min; it is well defined
    r, cap = sh.reckon("given T0 = 25 degC\ngiven rate = 1.5 K/min\ngiven t = 40 min\nT = @T0 + @rate*@t\n"
                       "show T in degF")
    assert r.error_in_exec is None
    assert "= 85 °C" in text(cap) and "T = 185 °F" in text(cap)


def test_thermodynamic_uses_of_a_celsius_point(sh):
    body = """given T = 15 degC
given p = 101325 Pa
given R = 287.05 J/(kg*K)
given gamma = 1.4
given sigma = 5.670374419e-8 W/(m^2*K^4)
c = $sqrt(@gamma*@R*@T)
rho = @p/(@R*@T)
q = @sigma*@T^4
given Th = 100 degC
eta = 1 - @T/@Th"""
    r, cap = sh.reckon(body)
    assert r.error_in_exec is None, r.error_in_exec
    s = sh.ns["_reckon"]
    assert s["c"].to("m/s").magnitude == pytest.approx((1.4 * 287.05 * 288.15) ** 0.5)
    assert s["rho"].to("kg/m^3").magnitude == pytest.approx(101325 / (287.05 * 288.15))
    assert s["q"].to("W/m^2").magnitude == pytest.approx(5.670374419e-8 * 288.15**4)
    assert s["eta"].magnitude == pytest.approx(1 - 288.15 / 373.15)  # Carnot on absolute temperatures
    assert s.kind("c") is None and s.kind("T") == "point"
    out = text(cap)  # the working shows a point used by its thermodynamic value in K, never "(15 °C)" in a product
    lines = {ln.split(" = ")[0].strip(): ln for ln in out.splitlines() if " = " in ln}
    assert "·(288.15 K)) = 340.29 m/s" in lines["c"] and "°C" not in lines["c"]
    assert "·(288.15 K)^4 = 390.92" in lines["q"] and "°C" not in lines["q"]
    assert "eta = 1 - @T/@Th = 1-(288.15 K)/(373.15 K) = 0.22779" in out
    assert "T = 15 °C" in out  # the given itself stays on its scale


def test_kelvin_minus_point_is_a_difference_and_unknown_kelvin_reads_as_a_point(sh):
    r, cap = sh.reckon("given Tk = 300 K\ngiven T = 20 degC\nd = @Tk - @T\nshow Tk in degC\nshow d in K")
    assert r.error_in_exec is None
    assert "Tk = 26.85 °C" in text(cap) and "d = 6.85 K" in text(cap)
    assert sh.ns["_reckon"].kind("d") == "difference" and sh.ns["_reckon"].kind("Tk") is None
    msg = refused(sh.reckon("given T = 20 degC\nshow T in delta_degF")[0])
    assert "temperature point" in msg


def test_functions_sums_and_arrays_follow_the_rules(sh):
    r, cap = sh.reckon("given a = 20 degC\ngiven b = 68 degF\ngiven T0 = 0 degC\nlo = $min(@a, @b)\n"
                       "hi = $max(@a - @T0, @b - @T0)\ngiven Ts = [10, 20, 30] degC\nrise = @Ts - @T0\n"
                       "first = @Ts[0]\nm = @T0 + $sum_{k=0}^{2}(@Ts[k] - @T0)/3\nseq = $seq_{k=1}^{2}(@T0)")
    assert r.error_in_exec is None, r.error_in_exec
    s = sh.ns["_reckon"]
    assert s.kind("lo") == "point" and s.kind("hi") == "difference" and s.kind("rise") == "difference"
    assert s.kind("first") == "point" and s.kind("m") == "point" and s.kind("seq") == "point"
    assert s["m"].to("K").magnitude == pytest.approx(293.15)
    assert "rise = @Ts - @T0 = ([10, 20, 30] °C)-(0 °C) = [10, 20, 30] Δ°C" in text(cap)
    for formula, words in [("$min(@a, @a - @T0)", "point with a temperature difference"),
                           ("$sum_{k=1}^{3}(@a)", "sums temperature points"),
                           ("$abs(@a)", "$abs of the temperature point"),
                           ("@Ts + @Ts", "two temperature points"),
                           ("(@a - @T0) - @a", "from the difference")]:
        msg = refused(sh.reckon(f"given a = 20 degC\ngiven T0 = 0 degC\ngiven Ts = [1, 2] degC\nx = {formula}")[0])
        assert words in msg, (formula, msg)


# ------------------------------------------------------------------ declared result units


def test_declared_unit_catches_a_forgotten_term_at_its_line(sh):
    body = """given w = 2 kN/m
given L = 4 m
given E = 11 GPa
given I = 8.1e-5 m^4
delta = 5*@w*@L^4/(384*@E) in mm
delta2 = 5*@w*@L^4/(384*@E*@I) in mm"""
    msg = refused(sh.reckon(body)[0])
    assert "line 5" in msg and "ENGINE_INCOMPATIBLE_DIMENSION" in msg
    assert "[5,0,0,0,0,0,0]" in msg and "[1,0,0,0,0,0,0]" in msg  # both dimensions named
    assert "delta" not in sh.ns["_reckon"]  # nothing was written
    r, cap = sh.reckon(body.replace("delta = 5*@w*@L^4/(384*@E) in mm\n", ""))
    assert r.error_in_exec is None
    assert "= 7.4822 mm" in text(cap)
    assert sh.ns["_reckon"]["delta2"].to("mm").magnitude == pytest.approx(5 * 2000 * 4**4 / (384 * 11e9 * 8.1e-5) * 1e3)
    [*_, path] = sh.records()
    rows = sh.rows(path)
    assert [r["content"]["formula"] for r in rows if r.get("tool") == "eval"] == ["5*@w*@L^4/(384*@E*@I)"]


def test_declared_unit_kinds_and_bad_units(sh):
    r, cap = sh.reckon("given a = 20 degC\ngiven b = 25 degC\nd = @b - @a in delta_degF\nT = @a + @d in degF")
    assert r.error_in_exec is None
    assert "= 9 Δ°F" in text(cap) and "= 77 °F" in text(cap)
    assert "temperature difference" in refused(sh.reckon("given a = 20 degC\ngiven b = 25 degC\nd = @b - @a in degC")[0])
    assert "pint cannot read" in refused(sh.reckon("given a = 2 m\nx = @a in furlongz")[0])
    # " in " inside brackets is not a declaration; a slot may be called "in"-something
    r, cap = sh.reckon("given inch = 2 m\nx = @inch*2")
    assert r.error_in_exec is None


# ------------------------------------------------------------------ P17: the working keeps parentheses


def test_case_P17_negative_substitutions_keep_their_parentheses(sh):
    r, cap = sh.reckon("given t = -3\nz = @t^2\nw = -@t^2\nu = 5 - @t\nv = -@t")
    assert r.error_in_exec is None
    s = sh.ns["_reckon"]
    assert (s["z"].magnitude, s["w"].magnitude, s["u"].magnitude, s["v"].magnitude) == (9, -9, 8, 3)
    data = bundle(cap).data
    plain, latex, md, html = data["text/plain"], data["text/latex"], data["text/markdown"], data["text/html"]
    for want in ("z = @t^2 = (-3)^2 = 9", "w = -@t^2 = -(-3)^2 = -9", "u = 5 - @t = 5-(-3) = 8", "v = -@t = -(-3) = 3"):
        assert want in plain
    assert r"{\left(-3\right)}^{2}" in latex and r"-{\left(-3\right)}^{2} = -9" in latex
    assert r"5 - \left(-3\right)" in latex
    for rendering in (md, html):
        assert r"\left(-3\right)}^{2}" in rendering
    assert "-3^2" not in plain and "--3" not in plain and "--3" not in latex


# ------------------------------------------------------------------ the model's tools and the record


def test_tool_schemas_offer_kind_and_the_engine_checks_it(tmp_path):
    tagged = TOOL_SCHEMAS["set"]["parameters"]["$defs"]["tagged"]["properties"]
    assert tagged["kind"]["enum"] == ["point", "difference"] and tagged["scale"]["enum"] == ["degC", "degF"]
    e = Engine(tmp_path)
    e.record_start("model")
    r = e.call("set", {"name": "d", "value": {"num": 5, "dim": "degC", "kind": "difference"}})
    assert r["value"] == {"num": 5.0, "dim": [0, 0, 0, 0, 1, 0, 0], "kind": "difference"}  # never shifted
    r = e.call("set", {"name": "T", "value": {"num": 68, "dim": [0, 0, 0, 0, 1, 0, 0], "kind": "point",
                                              "scale": "degF"}})
    assert r["ok"] and r["value"]["scale"] == "degF"
    for bad, code in [({"num": 1, "dim": "metre", "kind": "difference"}, "ENGINE_INVALID_DIMENSION"),
                      ({"num": 1, "dim": [0, 0, 0, 0, 1, 0, 0], "kind": "point"}, "ENGINE_INVALID_ARGS"),
                      ({"num": 1, "dim": "degC", "kind": "point", "scale": "degF"}, "ENGINE_INVALID_ARGS"),
                      ({"num": 1, "dim": "kelvin", "kind": "warm"}, "ENGINE_INVALID_ARGS"),
                      ({"num": 1, "dim": "kelvin", "scale": "degC"}, "ENGINE_INVALID_ARGS")]:
        got = e.call("set", {"name": "bad", "value": bad})
        assert got["code"] == code, (bad, got)
    assert "bad" not in e.slots()
    e.close()


def test_records_with_kinds_replay_and_old_records_still_read(sh, tmp_path):
    r, _ = sh.reckon("given a = 20 degC\ngiven k = 5 K\nb = @a - @k\nd = @a - @b\nend")
    assert r.error_in_exec is None
    [path] = sh.records()
    rec = read_record(path)
    assert rec.rules == ENGINE_RULES
    rows = sh.rows(path)
    assert rows[1]["content"]["rules"] == ENGINE_RULES
    assert rows[2]["content"]["value"]["kind"] == "point"
    assert replay(path)["differences"] == [] and rerun(path)["differences"] == []
    # a record written before kinds (engine rules 1): no kinds, and 14.2 °C + 9.6 °C was accepted then
    old = Engine(tmp_path / "old")
    old.rules = 1
    old.record_start("before kinds")
    old.set("T1", {"num": 287.35, "dim": [0, 0, 0, 0, 1, 0, 0]})
    old.set("T2", {"num": 282.75, "dim": [0, 0, 0, 0, 1, 0, 0], "kind": "point", "scale": "degC"})
    assert old.eval("@T1 + @T2", "s")["ok"]
    old.record_end()
    old_rec = read_record(old.last_closed)
    assert old_rec.rules == 1
    lines = [json.loads(x) for x in old.last_closed.read_text().splitlines()]
    assert "rules" not in lines[1]["content"] and "\"kind\"" not in json.dumps(lines)
    assert replay(old_rec)["differences"] == [] and rerun(old_rec)["differences"] == []
    # the same rows claiming rules 2 are caught: rerun refuses the sum of two points
    tampered = tmp_path / "tampered.jsonl"
    lines[1]["content"]["rules"] = 2
    lines[2]["content"]["value"].update(kind="point", scale="degC")
    lines[3]["content"]["value"].update(kind="point", scale="degC")
    tampered.write_text("".join(json.dumps(x) + "\n" for x in lines))
    diffs = rerun(tampered)["differences"]
    assert any((d["rerun"] or {}).get("code") == "ENGINE_INCOMPATIBLE_DIMENSION" for d in diffs), diffs


def test_a_notebook_written_before_kinds_still_reads_replays_and_verifies(tmp_path):
    """tests/data/before-kinds: made by this project before issue 17 (rules 1, renderer /1)."""
    import shutil
    from pathlib import Path

    from test_verify import cli

    src = Path(__file__).parent / "data" / "before-kinds"
    shutil.copytree(src, tmp_path / "nb")
    folder = tmp_path / "nb"
    for path in sorted((folder / "old-kinds.dsh" / "records").glob("*.jsonl")):
        rec = read_record(path)
        assert rec.rules == 1
        assert replay(rec)["differences"] == [] and rerun(rec)["differences"] == []
    spread = read_record(next((folder / "old-kinds.dsh" / "records").glob("*.jsonl")))
    assert any(r.get("content", {}).get("formula") == "@T850 + @Td850" for r in spread.steps)  # accepted then
    p = cli("verify", str(folder / "old-kinds.ipynb"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "old-kinds.ipynb: verified" in p.stdout
    assert "made by an older version (reckon-render/1)" in p.stdout
    # an edit to an old record is still found: an input changed by hand
    path = sorted((folder / "old-kinds.dsh" / "records").glob("*.jsonl"))[0]
    path.chmod(0o644)
    assert '"num":282.75' in path.read_text()
    path.write_text(path.read_text().replace('"num":282.75', '"num":283.75', 1))
    p = cli("verify", str(folder / "old-kinds.ipynb"))
    assert p.returncode != 0 and "FAIL" in p.stdout
    # lines that version refused and this one reads (ohm sign, 3.3006×10⁻⁶, givn): taken from the record
    p = cli("verify", str(folder / "old-paste.ipynb"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("the refusal is taken from the record") == 3


def test_articles_show_points_on_their_scale(tmp_path):
    from dsh_notebook.artifact.articles import write_article

    e = Engine(tmp_path / "home")
    e.record_start("Air at 850 hPa")
    e.set("T850", {"num": 14.2, "dim": "degC"})
    e.set("Td", {"num": 9.6, "dim": "degC"})
    e.eval("@T850 - @Td", "spread")
    e.set("k", {"num": 5, "dim": "kelvin"})
    e.eval("@T850 - @k", "T2")
    e.record_end("done")
    md = write_article(e.last_closed, tmp_path / "articles", "md", "en", False).path.read_text()
    assert "T850 = 14.2 °C" in md and "spread = 4.6 K" in md and "T2 = 9.2 °C" in md
    assert "287.35" not in md
    tex = write_article(e.last_closed, tmp_path / "articles", "latex", "en", False).path.read_text()
    assert r"\mathrm{T2} = 9.2\,{}^{\circ}\mathrm{C}" in tex


def test_a_notebook_with_kinds_and_declared_units_verifies_and_an_edit_is_named(tmp_path):
    from test_verify import cli, ran_notebook

    folder = ran_notebook(tmp_path, [
        "%load_ext dsh_notebook",
        "%%reckon Heating\ngiven T0 = 25 degC\ngiven rate = 1.5 K/min\ngiven t = 40 min\ngiven k = 5 K\n"
        "T = @T0 + @rate*@t in degF\nT2 = @T - @k\nd = @T - @T0 in delta_degF\nshow d in K",
        "%%reckon Squares\ngiven x = -3\ny = -@x^2",
    ])
    nb = folder / "report.ipynb"
    p = cli("verify", str(nb))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "report.ipynb: verified" in p.stdout
    text = nb.read_text(encoding="utf-8")
    assert "= 185 °F" in text and "(5 ΔK)" in text and "-(-3)^2 = -9" in text
    # the reading changed in the displayed output is named by cell 7's check
    import os
    os.chmod(nb, 0o644)
    nb.write_text(text.replace("= 185 °F", "= 186 °F"), encoding="utf-8")
    p = cli("verify", str(nb))
    assert p.returncode != 0 and "cell 2" in p.stdout


def test_records_naming_rules_this_engine_does_not_apply_are_unreadable(tmp_path):
    from dsh_notebook.reckoner.records import UnreadableRecord

    e = Engine(tmp_path / "home")
    e.record_start("rules")
    e.set("T", {"num": 20, "dim": "degC"})
    e.record_end()
    lines = [json.loads(x) for x in e.last_closed.read_text().splitlines()]
    for bad in (ENGINE_RULES + 1, "2", 0, None, 2.0):
        lines[1]["content"]["rules"] = bad
        path = tmp_path / f"r{bad}.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
        with pytest.raises(UnreadableRecord, match="engine rules"):
            read_record(path)


# ------------------------------------------------------------------ found by trying to break it


def test_a_mixing_temperature_is_a_point_and_its_difference_with_a_point_a_difference(sh):
    r, cap = sh.reckon("given T1 = 20 degC\ngiven T2 = 80 degC\ngiven m1 = 1 kg\ngiven m2 = 1 kg\n"
                       "Tmix = (@m1*@T1 + @m2*@T2)/(@m1 + @m2)\nrise = @Tmix - @T1\ndrop = @T1 - @Tmix\n"
                       "show Tmix in degC")
    assert r.error_in_exec is None, r.error_in_exec
    s = sh.ns["_reckon"]
    assert s.kind("Tmix") == "point" and s.kind("rise") == "difference" and s.kind("drop") == "difference"
    assert s["drop"].to("K").magnitude == pytest.approx(-30) and "Tmix = 50 °C" in text(cap)
    assert "two temperature points" in refused(sh.reckon(
        "given T1 = 20 degC\ngiven m = 1 kg\nTm = @m*@T1/@m\nx = @Tm + @T1")[0])


@pytest.mark.parametrize("formula", ["@a^1 + @a", "@a/@p*@p + @a", "$prod_{k=1}^{1}(@a) + @a", "$sqrt(@a^2) + @a",
                                     "$sum_{k=1}^{2}(@a^(k-k+1))"])
def test_a_point_computed_from_a_point_is_still_a_point(sh, formula):
    msg = refused(sh.reckon(f"given a = 20 degC\ngiven p = 3 m\nx = {formula}")[0])
    assert "temperature points" in msg


def test_a_point_below_absolute_zero_is_refused(sh):
    msg = refused(sh.reckon("given Tk = 300 K\ngiven T = 20 degC\nd = @Tk - @T\ne = @T - @Tk")[0])
    assert "below absolute zero (-280 °C)" in msg and sh.ns["_reckon"]["d"].to("K").magnitude == pytest.approx(6.85)
    for line in ("given T = -300 degC", "given F = -500 degF", "given Ts = [10, -290] degC"):
        assert "below absolute zero" in refused(sh.reckon(line)[0])
    assert "below absolute zero" in refused(sh.reckon("given T0 = 20 degC\ngiven d = 400 delta_degC\nx = @T0 - @d")[0])


def test_isentropic_compression_with_a_celsius_inlet(sh):
    r, cap = sh.reckon("given T1 = 15 degC\ngiven p1 = 1 bar\ngiven p2 = 10 bar\ngiven g = 1.4\n"
                       "T2 = @T1*(@p2/@p1)^((@g-1)/@g)\nshow T2 in degC")
    assert r.error_in_exec is None, r.error_in_exec
    assert sh.ns["_reckon"]["T2"].to("K").magnitude == pytest.approx(288.15 * 10 ** (0.4 / 1.4))
    assert sh.ns["_reckon"].kind("T2") == "point" and "(288.15 K)" in text(cap)


def test_a_difference_keeps_its_kind_through_a_power_of_one_and_a_ratio(sh):
    r, cap = sh.reckon("given d = 30 delta_degC\ngiven a = 2 m\nx = @d^1\ny = @d*@a/@a\nshow y in delta_degF")
    assert r.error_in_exec is None and "y = 54 Δ°F" in text(cap)
    assert sh.ns["_reckon"].kind("x") == "difference" and sh.ns["_reckon"].kind("y") == "difference"
    assert "temperature difference" in refused(sh.reckon("given d = 30 delta_degC\nx = @d^1\nshow x in degF")[0])


def test_what_the_product_shows_for_rankine_permille_and_typeset_powers_reads_back(sh):
    r, _ = sh.reckon("given x = 3.7 °R\ngiven p = 3.7 ‰\ngiven A = 3.3006 × 10⁻⁶ m²")
    assert r.error_in_exec is None, r.error_in_exec
    s = sh.ns["_reckon"]
    assert s["x"].to("K").magnitude == pytest.approx(3.7 / 1.8) and s["p"].magnitude == pytest.approx(0.0037)
    assert s["A"].to("m^2").magnitude == pytest.approx(3.3006e-6)


def test_a_compound_unit_that_is_a_temperature_is_refused_not_read_as_a_difference(sh):
    for unit in ("degC^1", "degC**1", "degC*m/m", "degF*K/K"):
        assert "alone" in refused(sh.reckon(f"given T = 20 {unit}")[0]), unit


def test_a_declared_unit_may_contain_in(sh):
    r, cap = sh.reckon("given F = 100 lbf\ngiven A = 2 in^2\np = @F/@A in lbf / in ^ 2")
    assert r.error_in_exec is None, r.error_in_exec
    assert "= 50 lbf/in²" in text(cap)


def test_pint_quantities_given_with_py_verify(tmp_path):
    from test_verify import cli, ran_notebook

    folder = ran_notebook(tmp_path, [
        "%load_ext dsh_notebook",
        "import pint\nQ_ = pint.get_application_registry().Quantity\n"
        "q1, q2, q3, q4, q5 = Q_(20, 'degC'), Q_(68, 'degF'), Q_(20, 'kelvin'), Q_(3, 'm'), Q_(2, 'mm')",
        "%%reckon py\ngiven a = py:q1\ngiven b = py:q2\ngiven c = py:q3\ngiven d = py:q4\ngiven e = py:q5",
    ])
    p = cli("verify", str(folder / "report.ipynb"))
    assert p.returncode == 0, p.stdout


def test_checking_a_formula_never_holds_the_kernel(tmp_path):
    e = Engine(tmp_path)
    e.record_start("traps")
    e.set("x", {"num": 2, "dim": "metre"})
    e.set("T", {"num": 20, "dim": "degC"})
    e.set("T0", {"num": 10, "dim": "degC"})
    nested = "$sum_{a=1}^{200}($sum_{i=1}^{200}($sum_{k=1}^{200}(@x^(k-i-a)/@x^(k-i-a))))"
    wide = "$sum_{k=1}^{2000}(" + "+".join(["(@T-@T0)*@x^(k-k)/@x^(k-k)"] * 64) + ")"
    for formula in (nested, wide):
        r = e.eval(formula, "o")
        assert r["code"] == "ENGINE_INVALID_INDEX" and "steps" in r["error"]
    assert e.eval("$sum_{k=1}^{3}(@x^k/@x^k)", "o")["ok"]
    e.close()


def test_differences_computed_through_other_quantities_stay_differences(tmp_path):
    e = Engine(tmp_path)
    e.record_start("taint")
    e.set("T1", {"num": 80, "dim": "degC"})
    e.set("T2", {"num": 60, "dim": "degC"})
    e.set("m", {"num": 2, "dim": "kilogram"})
    e.set("cp", {"num": 4186, "dim": [2, 0, -2, 0, -1, 0, 0]})
    e.set("p", {"num": 1e5, "dim": "pascal"})
    e.set("d", {"num": 5, "dim": "kelvin", "kind": "difference"})
    e.set("Ta", {"array": [80, 90], "dim": "degC"})
    e.set("Tb", {"array": [60, 70], "dim": "degC"})
    for formula, want in [("(@m*@T1 - @m*@T2)/@m", 20), ("(@m*@T2 - @m*@T1)/@m", -20),
                          ("@m*@cp*(@T1 - @T2)/(@m*@cp)", 20), ("$sqrt(@d^2)", 5), ("$sqrt(@d*@d)", 5)]:
        assert e.eval(formula, "o")["ok"], formula
        assert e.get("o")["value"] == {"num": pytest.approx(want), "dim": "kelvin", "kind": "difference"}, formula
    assert e.eval("(@m*@Ta - @m*@Tb)/@m", "o")["ok"] and e.get("o")["value"]["kind"] == "difference"
    r = e.eval("@T2 - (-@T1)*(@p/@p)", "o")  # a negated point inside a product is still refused
    assert r["code"] == "ENGINE_INCOMPATIBLE_DIMENSION" and "negates the temperature point" in r["error"]
    assert "group it: @T + (@T1 - @T2)" in e.eval("@T1 + @T2 - @T1", "o")["error"]
    assert "below absolute zero" in e.set("z", {"re": -400, "im": 0, "dim": "degC"})["error"]
    e.close()


def test_a_declared_unit_gives_a_computed_temperature_its_kind(sh, tmp_path):
    body = ("given p = 101325 Pa\ngiven rho = 1.2 kg/m^3\ngiven R = 287.05 J/(kg*K)\ngiven T1 = 80 degC\n"
            "Tg = @p/(@rho*@R) in degC\nd = @T1 - @Tg\ngiven Q = 41.8 kJ\ngiven m = 1 kg\ngiven c = 4180 J/(kg*K)\n"
            "dT = @Q/(@m*@c) in delta_degC\nshow dT in delta_degF")
    r, cap = sh.reckon(body)
    assert r.error_in_exec is None, r.error_in_exec
    s = sh.ns["_reckon"]
    assert s.kind("Tg") == "point" and s.scale("Tg") == "degC" and s.kind("d") == "difference"
    assert s["d"].to("K").magnitude == pytest.approx(353.15 - 101325 / (1.2 * 287.05))
    assert s.kind("dT") == "difference" and "dT = 18 Δ°F" in text(cap)
    assert "temperature difference" in refused(sh.reckon(body + "\nshow dT in degF")[0])
    [*_, path] = sh.records()
    assert replay(path)["differences"] == [] and rerun(path)["differences"] == []
    # the engine's own argument, as the model calls it
    e = Engine(tmp_path / "model")
    e.record_start("declared")
    e.set("E", {"num": 4e-21, "dim": "joule"})
    e.set("kB", {"num": 1.380649e-23, "dim": [2, 1, -2, 0, -1, 0, 0]})
    assert e.call("eval", {"formula": "@E/@kB", "target": "T", "kind": "point", "scale": "K"})["ok"]
    assert e.get("T")["value"]["kind"] == "point"
    e.set("d", {"num": 5, "dim": "kelvin", "kind": "difference"})
    for args, code in [({"kind": "point", "scale": "degC"}, "ENGINE_INCOMPATIBLE_DIMENSION"),
                       ({"kind": "warm"}, "ENGINE_INVALID_ARGS"), ({"kind": "point"}, "ENGINE_INVALID_ARGS")]:
        got = e.call("eval", {"formula": "@d*2", "target": "x", **args})
        assert got["code"] == code, (args, got)
    assert e.call("eval", {"formula": "@E", "target": "x", "kind": "difference"})["code"] == \
        "ENGINE_INCOMPATIBLE_DIMENSION"
    assert "x" not in e.slots()
    e.close()


def test_a_resumed_rules_1_record_takes_no_kinds_and_replay_checks_declared_points(tmp_path):
    home = tmp_path / "home"
    e = Engine(home)
    e.record_start("old")
    e.close()
    path = home / "open-record.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    del lines[1]["content"]["rules"]  # as a record started before kinds
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    e = Engine(home)
    assert e.rules == 1
    e.set("K", {"num": 293.15, "dim": "kelvin"})
    assert e.eval("@K", "P", "point", "degC")["code"] == "ENGINE_INVALID_ARGS" and "P" not in e.slots()
    assert e.eval("@K - @K", "d")["ok"]
    e.record_end()
    assert replay(e.last_closed)["differences"] == [] and rerun(e.last_closed)["differences"] == []
    # a declared point edited below absolute zero is a difference for replay too
    e = Engine(tmp_path / "new")
    e.record_start("declared")
    e.set("K", {"num": 5, "dim": "kelvin"})
    assert e.eval("@K", "P", "point", "degC")["ok"]
    e.record_end()
    text = e.last_closed.read_text()
    e.last_closed.chmod(0o644)
    e.last_closed.write_text(text.replace('"K":{"num":5.0', '"K":{"num":-5.0').replace(
        '"result":{"num":5.0', '"result":{"num":-5.0'))
    [diff] = replay(e.last_closed)["differences"]
    assert "below absolute zero" in diff["replayed"]["error"]
