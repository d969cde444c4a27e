"""``%%reckon`` through a real IPython shell (spec: reckoner.md section 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.utils.capture import capture_output

MIME = "application/vnd.dsh.record+json"

COPPER = """given rho = 1.68e-8 ohm*m
given L = 25 m
given d = 2.05 mm
note A 12 AWG copper conductor.
A = $pi*(@d/2)^2
R = @rho*@L/@A
show R in mohm
end The conductor's resistance is about 127 milliohm."""


def bundle(cap) -> dict:
    outs = [o for o in cap.outputs if MIME in o.data]
    assert outs, "no record output displayed"
    return outs[-1]


def text(cap) -> str:
    return bundle(cap).data["text/plain"]


# --------------------------------------------------------------- the first example


def test_copper_example_values_and_record(sh):
    r, cap = sh.reckon(COPPER, "Copper wire resistance at 20 °C")
    assert r.error_in_exec is None
    R = sh.ns["_reckon"]["R"]
    assert R.to("mohm").magnitude == pytest.approx(127.248, rel=1e-5)
    assert str(R.dimensionality) == str(R._REGISTRY.ohm.dimensionality)
    out = text(cap)
    assert "R = 127.25 mΩ" in out
    # the values in the units the person gave them, results composed from them (issue 18)
    assert "A = $pi*(@d/2)^2 = π·((2.05 mm)/2)^2 = 3.3006 mm²" in out
    assert "R = @rho*@L/@A = (1.68×10⁻⁸ Ω·m)·(25 m)/(3.3006 mm²) = 0.12725 Ω" in out
    [path] = sh.records()
    rows = sh.rows(path)
    assert rows[0] == {"seq": 0, "version": 1}
    tools = [row["tool"] for row in rows[1:]]
    assert tools == ["record_start", "set", "set", "set", "record_message", "eval", "eval", "get", "record_end"]
    assert rows[-1]["content"]["text"] == "The conductor's resistance is about 127 milliohm."
    assert sh.ns["_reckon"].record_id == rows[1]["content"]["record"]
    assert Path(sh.ns["_reckon"].path) == path


def test_bundle_has_every_rendering_and_volatile_values_only_in_metadata(sh):
    _, cap = sh.reckon(COPPER)
    b = bundle(cap)
    for mime in ("text/plain", "text/markdown", "text/html", "text/latex", MIME):
        assert mime in b.data
    rec = b.data[MIME]
    assert rec["title"] == "Test" and rec["status"] == "closed"
    meta = b.metadata["dsh"]
    [path] = sh.records()
    assert meta["record_id"] == path.stem
    import hashlib

    assert meta["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert meta["sidecar"] == str(Path("nb.dsh") / "records" / path.name)
    visible = json.dumps(b.data, ensure_ascii=False)
    assert meta["record_id"] not in visible and meta["sha256"] not in visible
    # a second run shows exactly the same visible output
    _, cap2 = sh.reckon(COPPER)
    assert bundle(cap2).data == b.data
    assert r"\frac" in b.data["text/latex"] and r"\pi" in b.data["text/markdown"]


# --------------------------------------------------------------- line forms


def test_given_forms_complex_array_and_python_variables(sh):
    import numpy as np
    import pint

    ureg = pint.get_application_registry()
    sh.ns["f"] = 50 * ureg.Hz
    sh.ns["arr"] = np.array([1.0, 2.0, 4.0])
    sh.ns["k"] = 3
    r, _ = sh.reckon("""given Z = 3+4j ohm
given V = [1, 2, 3] V
given f = py:f
given I = py:arr A
given k = py:k
given T = 20 degC
given dT = 5 delta_degC
given x = -2.5e-3""")
    assert r.error_in_exec is None
    q = sh.ns["_reckon"]
    assert q["Z"].magnitude == 3 + 4j
    assert list(q["V"].magnitude) == [1, 2, 3]
    assert q["f"].to("Hz").magnitude == 50
    assert list(q["I"].to("A").magnitude) == [1, 2, 4]
    assert q["k"].magnitude == 3
    assert q["T"].to("kelvin").magnitude == pytest.approx(293.15)
    assert q["dT"].to("kelvin").magnitude == 5
    assert q["x"].magnitude == -2.5e-3


def test_show_note_delete_end_and_comments(sh):
    r, cap = sh.reckon("""# a comment is not recorded
given a = 2 m
given b = 3 m
A = @a*@b
show A in cm^2 digits 3
note visible note
note! hidden note
delete b
end closing words""")
    assert r.error_in_exec is None
    out = text(cap)
    assert "A = 6×10⁴ cm²" in out
    assert "visible note" in out and "hidden note" not in out  # note! is for the article writer only
    assert "b" not in sh.ns["_reckon"] and "a" in sh.ns["_reckon"]
    rows = sh.rows(sh.records()[0])
    msgs = [row["content"] for row in rows if row.get("tool") == "record_message"]
    assert msgs == [{"text": "visible note"}, {"text": "hidden note", "hide": True}]
    assert not any("comment" in json.dumps(row) for row in rows)
    assert rows[-1]["content"]["text"] == "closing words"


def test_keywords_followed_by_equals_are_slot_names(sh):
    r, _ = sh.reckon("given x = 2\nend = @x*2\nshow = @end + 1\ngiven given = 1")
    assert r.error_in_exec is None
    assert sh.ns["_reckon"]["end"].magnitude == 4
    assert sh.ns["_reckon"]["show"].magnitude == 5
    assert sh.ns["_reckon"]["given"].magnitude == 1


def test_no_title_means_untitled(sh):
    _, cap = sh.run("%%reckon\ngiven x = 1")
    assert bundle(cap).data[MIME]["title"] == "Untitled calculation"


# --------------------------------------------------------------- options


def test_continue_keeps_one_record_across_cells(sh):
    r1, cap1 = sh.reckon("given V = 12 V\ngiven R = 4 ohm", "--continue Ohm's law")
    assert r1.error_in_exec is None
    assert sh.records() == []  # still open
    assert (sh.sidecar / "open-record.jsonl").exists()
    assert bundle(cap1).data[MIME]["status"] == "open"
    assert sh.ns["_reckon"]["V"].magnitude == 12
    r2, cap2 = sh.reckon("I = @V/@R\nshow I in A", "")
    assert r2.error_in_exec is None
    [path] = sh.records()
    rows = sh.rows(path)
    assert [row["content"].get("title") for row in rows if row.get("tool") == "record_start"] == ["Ohm's law"]
    assert sh.ns["_reckon"]["I"].magnitude == 3
    assert not (sh.sidecar / "open-record.jsonl").exists()
    r3, _ = sh.reckon("given y = 1", "Next")
    assert len(sh.records()) == 2


def test_continue_then_refusal_closes_the_record(sh):
    sh.reckon("given V = 12 V", "--continue Chain")
    r, _ = sh.reckon("x = @V + 1")
    assert type(r.error_in_exec).__name__ == "ReckonRefused"
    assert len(sh.records()) == 1
    r, _ = sh.reckon("given z = 1", "Fresh")
    assert r.error_in_exec is None and len(sh.records()) == 2


def test_quiet_digits_and_export(sh):
    r, cap = sh.reckon("given x = 3.14159265 m", "--quiet Q")
    assert r.error_in_exec is None and not [o for o in cap.outputs if MIME in o.data]
    r, cap = sh.reckon("given x = 3.14159265 m\nshow x", "--digits 3 --export calc D")
    assert "x = 3.14 m" in text(cap)
    assert sh.ns["calc"]["x"].magnitude == pytest.approx(3.14159265)


def test_bad_options_and_lines_after_end_are_usage_errors_and_write_nothing(sh):
    r, _ = sh.run("%%reckon --bogus T\ngiven x = 1")
    assert type(r.error_in_exec).__name__ == "UsageError"
    r, _ = sh.run("%%reckon T\ngiven x = 1\nend\ngiven y = 2")
    assert type(r.error_in_exec).__name__ == "UsageError"
    assert "after 'end'" in str(r.error_in_exec)
    assert sh.records() == [] and not (sh.sidecar / "open-record.jsonl").exists()


# --------------------------------------------------------------- refusals


def test_refused_line_stops_the_cell_closes_the_record_and_raises(sh):
    r, cap = sh.reckon("given V = 12 V\ngiven R = 4.7 ohm\nI = @V + @R\nshow I in A", "A unit mistake")
    err = r.error_in_exec
    assert type(err).__name__ == "ReckonRefused"
    assert "ENGINE_INCOMPATIBLE_DIMENSION" in str(err) and "line 3" in str(err)
    b = bundle(cap)
    assert b.data[MIME]["status"] == "refused"
    assert "color:#c62828" in b.data["text/html"]
    assert "show I" not in b.data["text/plain"]  # the cell stopped at line 3
    [path] = sh.records()
    rows = sh.rows(path)
    assert rows[-2]["ok"] is False and rows[-2]["content"]["code"] == "ENGINE_INCOMPATIBLE_DIMENSION"
    assert rows[-1]["tool"] == "record_end"
    assert set(sh.ns["_reckon"]) == {"V", "R"}  # the slots as they were when the record closed
    assert sh.ns["_reckon"].status == "refused"


def test_refusal_shows_no_python_traceback(sh):
    err = sh.reckon("x = 1 +")[0].error_in_exec
    rendered = err._render_traceback_()
    assert len(rendered) == 1 and "Traceback" not in rendered[0] and "ENGINE_INVALID_FORMULA" in rendered[0]


def test_unknown_unit_is_recorded_as_a_refused_set_row(sh):
    r, cap = sh.reckon("given x = 3 furlongz")
    assert type(r.error_in_exec).__name__ == "ReckonRefused"
    rows = sh.rows(sh.records()[0])
    bad = rows[-2]
    assert bad["tool"] == "set" and bad["ok"] is False
    assert bad["content"]["code"] == "ENGINE_INVALID_DIMENSION"
    assert "furlongz" in bad["content"]["error"]


def test_show_in_unit_of_other_dimension_is_refused(sh):
    r, _ = sh.reckon("given L = 2 m\nshow L in s")
    assert "ENGINE_INCOMPATIBLE_DIMENSION" in str(r.error_in_exec)
    rows = sh.rows(sh.records()[0])
    assert rows[-2]["tool"] == "get" and rows[-2]["ok"] is False


def test_unrecognised_line_is_refused_with_the_line_forms(sh):
    r, _ = sh.reckon("given x = 1\nfrobnicate the slot")
    assert "not a %%reckon line" in str(r.error_in_exec)


# --------------------------------------------------------------- line magics


def test_reckon_list_and_show(sh):
    sh.reckon(COPPER, "Copper")
    rid = sh.ns["_reckon"].record_id
    r, cap = sh.run("%reckon list")
    assert r.error_in_exec is None and "Copper" in cap.stdout and rid in cap.stdout
    r, cap = sh.run(f"%reckon show {rid}")
    assert "R = @rho*@L/@A" in cap.stdout and "end: The conductor" in cap.stdout
    r, _ = sh.run("%reckon show nope")
    assert type(r.error_in_exec).__name__ == "UsageError"


def test_open_record_left_by_a_crash_is_set_aside_and_recovered(sh):
    from dsh_notebook.reckoner import Engine

    sh.sidecar.mkdir(parents=True, exist_ok=True)
    crashed = Engine(sh.sidecar)
    crashed.record_start("Interrupted")
    crashed.set("x", {"num": 1, "dim": "metre"})
    crashed.close()  # the kernel died: lock released, record still open on disk
    sh.ip.extension_manager.reload_extension("dsh_notebook")  # a new kernel starts
    assert not (sh.sidecar / "open-record.jsonl").exists()
    r, cap = sh.reckon("given y = 2", "After restart")  # never blocked
    assert r.error_in_exec is None
    assert "set aside" in text(cap)
    _, cap = sh.run("%reckon recover")
    assert "Interrupted" in cap.stdout
    _, cap = sh.run("%reckon recover close")
    assert "Closed" in cap.stdout
    titles = sorted(json.loads(p.read_text().splitlines()[1])["content"]["title"] for p in sh.records())
    assert titles == ["After restart", "Interrupted"]
    rows = sh.rows(next(p for p in sh.records() if "Interrupted" in p.read_text()))
    assert rows[-1]["tool"] == "record_end" and "recovery" in rows[-1]["content"]["text"]


def test_recover_discard(sh):
    from dsh_notebook.reckoner import Engine

    sh.sidecar.mkdir(parents=True, exist_ok=True)
    e = Engine(sh.sidecar)
    e.record_start("Junk")
    e.close()
    sh.ip.extension_manager.reload_extension("dsh_notebook")
    _, cap = sh.run("%reckon recover discard")
    assert "Discarded" in cap.stdout
    assert not list((sh.sidecar / "stale").glob("*.jsonl"))


def test_unknown_notebook_writes_to_unsaved_folder(tmp_path, monkeypatch, new_kernel):
    monkeypatch.delenv("DSH_NOTEBOOK_PATH", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    from IPython.testing import globalipapp

    globalipapp.start_ipython()
    globalipapp.get_ipython().user_ns.pop("__vsc_ipynb_file__", None)
    ip = new_kernel()  # a kernel that knows no notebook
    with capture_output() as cap:
        ip.run_cell("%%reckon U\ngiven x = 1")
    meta = [o for o in cap.outputs if MIME in o.data][-1].metadata["dsh"]
    assert meta["notebook_known"] is False
    files = list((tmp_path / "home" / "unsaved").glob("*.dsh/records/*.jsonl"))
    assert len(files) == 1
    assert "unsaved" not in json.dumps([o.data for o in cap.outputs], ensure_ascii=False)


def test_import_does_not_import_ipython():
    import subprocess
    import sys

    code = "import sys, dsh_notebook, dsh_notebook.reckoner, dsh_notebook.storage; print('IPython' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_python_values_keep_their_numbers_or_are_refused(sh):
    import numpy as np

    sh.ns["c"] = np.clongdouble(1 + 2j)
    sh.ns["tiny"] = np.longdouble("1e-4000")
    sh.ns["td"] = np.timedelta64(5, "s")
    sh.ns["flags"] = [True, 1]
    r, _ = sh.reckon("given x = py:c m")
    assert r.error_in_exec is None and sh.ns["_reckon"]["x"].magnitude == 1 + 2j
    for line in ("given x = py:tiny m", "given x = py:td m", "given x = py:flags", "given x = 1e-400j m"):
        err = sh.reckon(line)[0].error_in_exec
        assert type(err).__name__ == "ReckonRefused" and "ENGINE_INVALID_ARGS" in str(err), (line, err)


def test_markdown_and_html_never_pass_markup_through(sh):
    _, cap = sh.reckon("note [link](javascript:alert(3)) <img src=x onerror=alert(1)>\ngiven x = 1",
                       "<script>alert(1)</script> $x$")
    b = bundle(cap)
    md, htm = b.data["text/markdown"], b.data["text/html"]
    assert "<script>" not in md and "<img" not in md and "[link](javascript" not in md
    assert "<script>" not in htm and "<img" not in htm
