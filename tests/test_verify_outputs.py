"""Check 7 (issue 15 item 4): ``verify`` runs each ``%%reckon`` cell's lines again and renders
its record with the code the magic uses. An edited number in any displayed mimetype, an edited
cell source, a line added or removed, a py: Quantity shown with another value: each is named by
cell and line. An output made by another renderer version is compared in SI and reported as
"made by an older version", never as tampering, unless a value itself differs."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from dsh_notebook.artifact.seal import verify

sys.path.insert(0, str(Path(__file__).parent))
from test_verify import cli, ran_notebook, write_notebook  # noqa: E402 - the same helpers

CELLS = [
    "%load_ext dsh_notebook",
    "%%reckon Copper wire\ngiven rho = 1.68e-8 ohm*m\ngiven L = 25 m\ngiven d = 2.05 mm\n"
    "A = $pi*(@d/2)^2\nR = @rho*@L/@A\nshow R in mohm\nend About 127 milliohm.",
    "import pint\nureg = pint.get_application_registry()\nf = 50 * ureg.Hz\nI = [1.0, 2.5]",
    "%%reckon --continue --quiet Heating\ngiven f = py:f\ngiven I = py:I A\ngiven R = 10 ohm",
    "%%reckon --digits 4\nP = @I^2*@R\nw = 2*$pi*@f\nshow P in W",
    "%%reckon Angular frequency\ngiven f = py:f\nomega = 2*$pi*@f",
]


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    return ran_notebook(tmp_path_factory.mktemp("outputs"), CELLS)


@pytest.fixture
def report(artifact, tmp_path):
    shutil.copytree(artifact, tmp_path / "a")
    return tmp_path / "a" / "report.ipynb"


def check7(report: Path) -> list:
    return [f for f in verify(report) if f.check == 7]


def failing(report: Path) -> list[str]:
    return [f"{f.subject}: {f.detail}" for f in check7(report) if f.ok is False]


def edit(report: Path, change) -> None:
    nb = nbformat.read(str(report), as_version=4)
    change(nb)
    nbformat.write(nb, str(report))


def output(nb, cell: int) -> dict:
    return next(o for o in nb.cells[cell].outputs if "application/vnd.dsh.record+json" in o.get("data", {}))


def test_every_cell_that_ran_shows_what_its_record_renders(report):
    found = check7(report)
    assert [f.subject for f in found] == ["cell 2", "cell 5", "cell 6"]
    assert all(f.ok for f in found), found
    assert "shows what the record renders (renderer reckon-render/4)" in found[0].detail


def test_the_command_line_names_check_7(report):
    done = cli("verify", str(report), "--json")
    assert done.returncode == 0, done.stdout
    assert '"check": 7' in done.stdout


@pytest.mark.parametrize("mime", ["text/plain", "text/html", "text/markdown", "text/latex"])
def test_a_number_changed_in_any_displayed_form_is_named(report, mime):
    def change(nb):
        data = output(nb, 1)["data"]
        text = data[mime]
        assert "0.12725" in text
        data[mime] = text.replace("0.12725", "0.11725")
    edit(report, change)
    found = failing(report)
    assert len(found) == 1 and found[0].startswith("cell 2:"), found
    if mime == "text/plain":
        assert "shows 'R = @rho*@L/@A = " in found[0] and "0.11725 Ω'" in found[0] and "0.12725 Ω'" in found[0]
    else:
        assert f"its {mime} output differs from what record" in found[0]


def test_the_record_mimetype_is_compared_too(report):
    edit(report, lambda nb: output(nb, 1)["data"]["application/vnd.dsh.record+json"]["steps"][4].__setitem__(
        "text", "A = 1 m²"))
    assert "its application/vnd.dsh.record+json output differs" in failing(report)[0]


def test_a_mimetype_the_magic_never_displays_is_named(report):
    edit(report, lambda nb: output(nb, 1)["data"].__setitem__("text/html+evil", "<script>alert(1)</script>"))
    assert "carries text/html+evil, which %%reckon never displays" in failing(report)[0]


def test_an_edited_cell_source_is_named_by_line_with_both_values(report):
    edit(report, lambda nb: setattr(nb.cells[1], "source", nb.cells[1].source.replace("given L = 25 m",
                                                                                          "given L = 26 m")))
    found = failing(report)
    assert found[0].startswith("cell 2: cell 2, line 3 (given L = 26 m): the cell gives L = 26 m, but record ")
    assert "holds L = 25 m (seq 3)" in found[0]


def test_a_line_added_or_removed_or_a_new_title_is_named(report):
    edit(report, lambda nb: setattr(nb.cells[1], "source", nb.cells[1].source.replace("show R in mohm\n", "")))
    assert any("show R" in f for f in failing(report)), failing(report)
    edit(report, lambda nb: setattr(nb.cells[1], "source", nb.cells[1].source.replace("Copper wire", "Aluminium")))
    assert any("the title 'Aluminium'" in f and "the title 'Copper wire'" in f for f in failing(report))


def test_a_continued_record_checks_the_quiet_cell_too(report):
    edit(report, lambda nb: setattr(nb.cells[3], "source", nb.cells[3].source.replace("10 ohm", "12 ohm")))
    found = failing(report)
    assert found and found[0].startswith("cells 4-5: cell 4, line 4 (given R = 12 ohm)"), found


def test_a_python_quantity_shown_with_another_value_is_named(report):
    # the py: line's value comes from the record; its display must read back to that value
    nb = nbformat.read(str(report), as_version=4)
    text = output(nb, 4)["data"]["text/plain"]
    assert "w = 2*$pi*@f" in text
    edit(report, lambda nb: output(nb, 4)["data"].__setitem__(
        "text/plain", output(nb, 4)["data"]["text/plain"].replace("314.2", "377")))
    assert "cell 5: shows 'w = " in failing(report)[0]


def test_an_older_renderer_is_compared_in_si_not_as_tampering(report):
    def older(nb):
        out = output(nb, 1)
        del out["metadata"]["dsh"]["renderer"]
        out["data"]["text/plain"] = out["data"]["text/plain"].replace("127.25 mΩ", "0.12725 Ω").replace(
            "3.3006×10⁻⁶ m²", "3.30064×10⁻⁶ m²")
        out["data"]["text/html"] = "<p>an older layout</p>"
    edit(report, older)
    found = [f for f in check7(report) if f.subject == "cell 2"]
    assert found[0].ok is True and "made by an older version" in found[0].detail, found

    edit(report, lambda nb: output(nb, 1)["data"].__setitem__(
        "text/plain", output(nb, 1)["data"]["text/plain"].replace("0.12725 Ω", "0.13725 Ω")))
    bad = failing(report)
    assert bad and "made by an older version" in bad[0] and "the value or dimension itself differs" in bad[0]
    assert "0.13725 Ω" in bad[0]


def test_a_refused_cell_is_checked_as_it_ran(tmp_path):
    path = write_notebook(tmp_path / "refused.ipynb", [
        "%load_ext dsh_notebook",
        "%%reckon Wrong\ngiven L = 2 m\ngiven t = 4 s\nx = @L + @t\ny = 2",
    ])
    assert cli("run", str(path)).returncode == 1  # a refused cell fails the run; its outputs are saved
    found = check7(path)
    assert found and all(f.ok for f in found), found
    edit(path, lambda nb: setattr(nb.cells[1], "source", nb.cells[1].source.replace("@L + @t", "@L*@t")))
    assert "cell 2, line 4 (x = @L*@t): the cell gives x = @L*@t = 8 m·s" in failing(path)[0]


# --------------------------------------------------------------- what an attacker tried (issue 15)


def test_an_older_renderer_claim_still_compares_every_mimetype(report):
    def older(nb):
        out = output(nb, 1)
        out["metadata"]["dsh"]["renderer"] = "reckon-render/0"
        for mime in ("text/html", "text/latex", "text/markdown"):
            out["data"][mime] = out["data"][mime].replace("127.25", "999.99")
    edit(report, older)
    bad = failing(report)
    assert bad and "shows 999.99, a number record" in bad[0] and "made by an older version" in bad[0], bad


@pytest.mark.parametrize("shown", ["R = 999 kΩ (approx)", "R = １２８.25 mΩ"])
def test_an_older_renderer_claim_cannot_hide_an_unreadable_or_foreign_value(report, shown):
    def older(nb):
        out = output(nb, 1)
        del out["metadata"]["dsh"]["renderer"]
        out["data"]["text/plain"] = out["data"]["text/plain"].replace("R = 127.25 mΩ", shown)
    edit(report, older)
    assert failing(report), check7(report)


@pytest.mark.parametrize("strip", ["mimetype", "metadata"])
def test_a_rendering_stripped_of_its_record_marker_fails(report, strip):
    def change(nb):
        out = output(nb, 1)
        if strip == "mimetype":
            del out["data"]["application/vnd.dsh.record+json"]
        else:
            del out["metadata"]["dsh"]
        out["data"]["text/plain"] = out["data"]["text/plain"].replace("127.25", "999.99")
    edit(report, change)
    assert any(f.startswith("cell 2: shows a rendering that names no record") for f in failing(report))


def test_a_second_record_output_is_named_and_scanned_for_secrets(report):
    def change(nb):
        extra = nbformat.from_dict({**output(nb, 1), "data": {
            "application/vnd.dsh.record+json": {},
            "text/plain": "aws_access_key_id = AKIAIOSFODNN7EXAMPLQ"}})
        nb.cells[1].outputs.append(extra)
    edit(report, change)
    found = [f for f in verify(report) if f.ok is False]
    assert any(f.check == 7 and "shows 2 record outputs" in f.detail for f in found)
    assert any(f.check == 4 and "AWS" in f.detail for f in found), found


def test_a_set_aside_notice_must_name_a_set_aside_record(report):
    notice = "  (a record left open by an earlier kernel was set aside: AKIAIOSFODNN7EXAMPLQ; see %reckon recover)"
    edit(report, lambda nb: output(nb, 1)["data"].__setitem__(
        "text/plain", output(nb, 1)["data"]["text/plain"].replace(" — record closed", " — record closed\n" + notice)))
    found = [f for f in verify(report) if f.ok is False]
    assert any(f.check == 7 for f in found) and any(f.check == 4 for f in found), found


def test_a_malformed_record_output_is_a_finding_not_a_crash(report):
    edit(report, lambda nb: output(nb, 4)["data"]["application/vnd.dsh.record+json"].__setitem__("steps", 5))
    done = cli("verify", str(report))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "cell 5" in done.stdout


def test_a_python_quantity_display_says_the_record_does_not_hold_its_unit(report):
    found = {f.subject: f for f in check7(report)}
    assert found["cell 6"].ok and "f = 50 Hz is shown in the unit of the kernel's pint Quantity" in found["cell 6"].detail
    # the display must still convert to the recorded value
    edit(report, lambda nb: output(nb, 5)["data"]["application/vnd.dsh.record+json"]["steps"][0].__setitem__(
        "text", "f = 60 Hz"))
    assert any(f.startswith("cell 6:") for f in failing(report))


def test_printed_text_or_a_record_rendering_in_another_cell_is_named(report):
    edit(report, lambda nb: nb.cells[1].outputs.append(nbformat.v4.new_output(
        "stream", name="stdout", text="R = 0.2 Ω (corrected)\n")))
    assert any(f.startswith("cell 2: shows printed text that %%reckon never prints") for f in failing(report))


def test_a_record_rendering_copied_into_a_python_cell_fails(report):
    edit(report, lambda nb: nb.cells[2].outputs.append(nbformat.from_dict(dict(output(nb, 1)))))
    assert any(f.startswith("cell 3: shows a record rendering, but the cell does not run %%reckon")
               for f in failing(report))


def test_an_older_renderer_claim_cannot_round_a_value_away_or_add_a_script(report):
    def older(nb):
        out = output(nb, 1)
        out["metadata"]["dsh"]["renderer"] = "reckon-render/0"
        out["data"]["text/plain"] = out["data"]["text/plain"].replace("R = 127.25 mΩ", "R = 0.1 Ω")
    edit(report, older)
    assert failing(report)  # 0.1 is not 0.12725 to within half a percent

    def script(nb):
        out = output(nb, 1)
        out["data"]["text/plain"] = out["data"]["text/plain"].replace("R = 0.1 Ω", "R = 127.25 mΩ")
        out["data"]["text/html"] += "<script>document.body.innerHTML='x'</script>"
    edit(report, script)
    assert any("script" in f for f in failing(report)), failing(report)


def test_the_error_a_refused_cell_shows_must_be_its_records_refusal(tmp_path):
    path = write_notebook(tmp_path / "refused.ipynb", [
        "%load_ext dsh_notebook", "%%reckon Wrong\ngiven L = 2 m\ngiven t = 4 s\nx = @L + @t"])
    cli("run", str(path))
    assert not failing(path)

    def forge(nb):
        err = next(o for o in nb.cells[1].outputs if o.get("output_type") == "error")
        err["evalue"] = "line 3: x = @L + @t -> ENGINE_IO: the disk was full"
    edit(path, forge)
    assert any("its error says" in f and "ENGINE_INCOMPATIBLE_DIMENSION" in f for f in failing(path))
