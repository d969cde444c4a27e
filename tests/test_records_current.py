"""Current and superseded records (issue 15 item 5): a record is current when a cell output or a
chat bundle of the notebook names it; re-runs leave the others behind as history. ``records
list``, ``%reckon list`` and the panel's route show current records first and mark the rest
superseded; a refused record is "refused", not "closed"; ``dsh-notebook prune`` deletes the
superseded records, says which, and signs the notebook again."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from dsh_notebook.artifact.records import current_records, record_list
from dsh_notebook.artifact.seal import verify

sys.path.insert(0, str(Path(__file__).parent))
from test_verify import cli, ran_notebook  # noqa: E402 - the same helpers

CELLS = [
    "%load_ext dsh_notebook",
    "%%reckon Copper wire\ngiven rho = 1.68e-8 ohm*m\ngiven L = 25 m\ngiven d = 2.05 mm\n"
    "A = $pi*(@d/2)^2\nR = @rho*@L/@A",
    "%%reckon A unit mistake\ngiven L = 2 m\ngiven t = 4 s\nx = @L + @t",
]


@pytest.fixture(scope="module")
def rerun(tmp_path_factory):
    """A notebook run twice: its outputs name the second run's two records."""
    return ran_notebook(tmp_path_factory.mktemp("rerun"), CELLS, runs=2, tags={2: ["raises-exception"]})


@pytest.fixture
def report(rerun, tmp_path):
    shutil.copytree(rerun, tmp_path / "a")
    return tmp_path / "a" / "report.ipynb"


def test_current_records_come_first_and_the_rest_are_superseded(report):
    named = current_records(nbformat.read(str(report), as_version=4))
    listed = record_list(report.parent / "report.dsh", named)
    assert len(listed) == 4 and [r["id"] for r in listed[:2]] == named
    assert [r["current"] for r in listed] == [True, True, False, False]
    assert [r["status"] for r in listed] == ["closed", "refused", "closed", "refused"]


def test_records_list_says_current_or_superseded(report):
    out = cli("records", "list", str(report)).stdout
    lines = out.splitlines()
    assert lines[1].split()[-1] == "use"
    assert [ln.split()[-1] for ln in lines[3:]] == ["current", "current", "superseded", "superseded"]
    assert "refused" in lines[4] and "closed" in lines[3]
    # the sidecar folder finds its notebook beside it
    assert "superseded" in cli("records", "list", str(report.parent / "report.dsh")).stdout


def test_a_folder_without_its_notebook_calls_nothing_superseded(report):
    report.unlink()
    out = cli("records", "list", str(report.parent / "report.dsh")).stdout
    assert "superseded" not in out and "current" not in out and "refused" in out


def test_the_panel_route_marks_them(report):
    from dsh_notebook.server import views

    listed = views.records(report, report.parent)
    assert [r["current"] for r in listed] == [True, True, False, False]


def test_prune_removes_the_superseded_and_signs_again(report):
    before = {f.stem for f in (report.parent / "report.dsh" / "records").glob("*.jsonl")}
    dry = cli("prune", str(report), "--dry-run")
    assert dry.returncode == 0 and "would remove 2 superseded record(s)" in dry.stdout
    assert {f.stem for f in (report.parent / "report.dsh" / "records").glob("*.jsonl")} == before
    done = cli("prune", str(report))
    assert done.returncode == 0, done.stderr
    assert "removed 2 superseded record(s)" in done.stdout and "signed again" in done.stdout
    left = {f.stem for f in (report.parent / "report.dsh" / "records").glob("*.jsonl")}
    assert left == set(current_records(nbformat.read(str(report), as_version=4))) and len(left) == 2
    assert all(f"{rid}" in done.stdout for rid in before - left)
    assert [f for f in verify(report) if f.ok is False] == []
    assert not list(report.parent.glob(".dsh-prune-*"))  # nothing left behind
    again = cli("prune", str(report))
    assert again.returncode == 0 and "no superseded records" in again.stdout


def test_prune_deletes_nothing_while_the_seal_does_not_hold(report):
    records = report.parent / "report.dsh" / "records"
    current = current_records(nbformat.read(str(report), as_version=4))
    f = records / f"{current[0]}.jsonl"
    f.chmod(0o644)
    f.write_text(f.read_text().replace("Copper wire", "Copper wyre"))
    before = sorted(p.name for p in records.glob("*.jsonl"))
    done = cli("prune", str(report))
    assert done.returncode == 1 and "nothing was removed" in done.stderr and f.stem in done.stderr
    assert sorted(p.name for p in records.glob("*.jsonl")) == before


def test_reckon_list_in_the_kernel_marks_a_cell_run_again(sh):  # noqa: F811 - the fixture
    sh.ip.parent_header = {"metadata": {"cellId": "cell-1"}}
    try:
        sh.reckon("given x = 1 m", "First run")
        first = sh.ns["_reckon"].record_id
        sh.reckon("given x = 2 m", "Second run")
        second = sh.ns["_reckon"].record_id
        sh.ip.parent_header = {"metadata": {"cellId": "cell-2"}}
        sh.reckon("given y = 3 s", "Another cell")
        other = sh.ns["_reckon"].record_id
        _, cap = sh.run("%reckon list")
    finally:
        del sh.ip.parent_header
    rows = {ln.split()[0]: ln.split()[-1] for ln in cap.stdout.splitlines()[3:]}
    assert rows == {second: "current", other: "current", first: "superseded"}
    assert cap.stdout.splitlines()[3].startswith(second)


def test_prune_refuses_a_notebook_that_does_not_verify(report):
    records = report.parent / "report.dsh" / "records"
    before = sorted(p.name for p in records.glob("*.jsonl"))
    # a current record's output stripped of its record mimetype: its record must not look superseded
    nb = nbformat.read(str(report), as_version=4)
    out = next(o for o in nb.cells[1].outputs if "application/vnd.dsh.record+json" in o.get("data", {}))
    del out["data"]["application/vnd.dsh.record+json"]
    del nb.metadata["dsh"]["seal"]  # and no seal to hold it
    nbformat.write(nb, str(report))
    done = cli("prune", str(report))
    assert done.returncode == 1 and "nothing was removed" in done.stderr and "does not verify" in done.stderr
    assert sorted(p.name for p in records.glob("*.jsonl")) == before


def test_prune_refuses_when_no_output_names_a_record(report):
    nb = nbformat.read(str(report), as_version=4)
    for c in nb.cells:
        c.outputs = []
    nbformat.write(nb, str(report))
    done = cli("prune", str(report))
    assert done.returncode == 1 and "no output of report.ipynb names a record" in done.stderr


def test_prune_names_a_malformed_metadata_dsh_without_a_traceback(report):
    nb = nbformat.read(str(report), as_version=4)
    nb.metadata["dsh"] = [1]
    nbformat.write(nb, str(report))
    done = cli("prune", str(report))
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr and "nothing" in done.stderr, done.stderr
