"""``dsh-notebook verify`` and ``sync`` on a real artifact, with a tamper corpus
(spec: storage.md "Verification" and "What goes into the notebook")."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from dsh_notebook.artifact.seal import sync, verify

CELLS = [
    "%load_ext dsh_notebook",
    "%%reckon Copper wire\ngiven rho = 1.68e-8 ohm*m\ngiven L = 25 m\ngiven d = 2.05 mm\n"
    "A = $pi*(@d/2)^2\nR = @rho*@L/@A\nend About 127 milliohm.",
    "%%reckon Ohm's law\ngiven V = 12 V\ngiven R = 4.7 ohm\nI = @V/@R\nP = @V*@I",
]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "dsh_notebook.cli", *args], capture_output=True, text=True,
                          timeout=300)


def write_notebook(path: Path, cells: list[str], tags: dict[int, list[str]] | None = None) -> Path:
    """A notebook of code *cells* (with cell *tags* by index) for the current kernel, at *path*."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, t in (tags or {}).items():
        nb.cells[i].metadata["tags"] = t
    nbformat.write(nb, str(path))
    return path


def ran_notebook(folder: Path, cells: list[str], *, runs: int = 1, tags: dict[int, list[str]] | None = None) -> Path:
    """*folder* after ``dsh-notebook run`` of ``report.ipynb`` made of *cells*, *runs* times."""
    path = write_notebook(folder / "report.ipynb", cells, tags)
    for _ in range(runs):
        done = cli("run", str(path))
        assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    return ran_notebook(tmp_path_factory.mktemp("artifact"), CELLS)


@pytest.fixture
def report(artifact, tmp_path):
    shutil.copytree(artifact, tmp_path / "a")
    return tmp_path / "a" / "report.ipynb"


def records(report: Path) -> list[Path]:
    return sorted((report.parent / "report.dsh" / "records").glob("*.jsonl"))


def writable(path: Path) -> Path:
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    return path


def failures(report: Path, check: int | None = None) -> list[str]:
    return [f"{f.subject}: {f.detail}" for f in verify(report) if f.ok is False and (check is None or f.check == check)]


def test_untouched_artifact_verifies_clean(report):
    assert failures(report) == []
    p = cli("verify", str(report))
    assert p.returncode == 0 and "verified" in p.stdout
    data = json.loads(cli("verify", str(report), "--json").stdout)
    assert data["ok"] is True and {f["check"] for f in data["findings"]} == {1, 2, 3, 4, 5, 6, 7}


def test_edited_number_is_caught_by_hash_and_replay(report):
    f = writable(records(report)[0])
    rows = f.read_text(encoding="utf-8").splitlines()
    i = next(k for k, r in enumerate(rows) if '"tool":"eval"' in r and '"target":"R"' in r)
    row = json.loads(rows[i])
    row["content"]["result"]["num"] = 0.2
    rows[i] = json.dumps(row, separators=(",", ":"))
    f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    found = failures(report)
    rid = f.stem
    assert any(s.startswith(rid) and "sha256" in s for s in found)
    replay = [s for s in failures(report, 2) if s.startswith(rid)]
    assert replay and "R = @rho*@L/@A" in replay[0] and '"num": 0.2' in replay[0] and "0.1272" in replay[0]
    assert cli("verify", str(report)).returncode == 1


@pytest.mark.parametrize("how", ["delete", "reorder"])
def test_deleted_or_reordered_row_is_caught(report, how):
    f = writable(records(report)[1])
    rows = f.read_text(encoding="utf-8").splitlines()
    if how == "delete":
        del rows[3]
    else:
        rows[2], rows[3] = rows[3], rows[2]
    f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert any("out of sequence" in s for s in failures(report, 2))
    assert any("sha256" in s for s in failures(report, 1))


def test_deleted_record_file_is_named(report):
    gone = records(report)[0]
    gone.unlink()
    found = failures(report, 1)
    assert any(s.startswith(gone.stem) and "missing" in s for s in found)


def test_record_file_replaced_by_another_is_caught(report):
    a, b = records(report)
    writable(a).write_bytes(b.read_bytes())
    assert any("replaced by another" in s for s in failures(report, 2))
    assert any(s.startswith(a.stem) and "sha256" in s for s in failures(report, 1))


def test_changed_output_hash_is_caught(report):
    nb = json.loads(report.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            meta = o.get("metadata", {}).get("dsh")
            if meta and meta.get("sha256"):
                meta["sha256"] = "0" * 64
    report.write_text(json.dumps(nb), encoding="utf-8")
    assert len(failures(report, 1)) == 2


def test_torn_last_line_is_reported_with_its_line_number(report):
    f = writable(records(report)[1])
    with open(f, "ab") as fh:
        fh.write(b'{"seq":99,"at":1,"tool":"ev')
    found = failures(report, 2)
    assert any("torn last line" in s and "line " in s for s in found)


def test_secrets_in_notebook_or_sidecar_fail_check_4(report):
    fake = "sk-" + "abcdefghijklmnopqrstuvwx"
    nb = nbformat.read(str(report), as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell(f"key: {fake}"))
    nbformat.write(nb, str(report))
    found = failures(report, 4)
    assert found and "looks like a secret" in found[0] and fake not in found[0]


def test_sync_writes_the_index_and_keeps_the_notebook_valid(report):
    index = sync(report)
    nb = nbformat.read(str(report), as_version=4)
    nbformat.validate(nb)
    assert set(index["records"]) == {p.stem for p in records(report)}
    assert nb.metadata["dsh"]["records"] == index["records"]
    assert [c.metadata.get("dsh", {}).get("records") for c in nb.cells][1:] == [[p.stem] for p in records(report)]
    assert failures(report) == []
    # tampering after sync is caught through the index too
    writable(records(report)[0]).write_bytes(records(report)[0].read_bytes() + b"\n")
    assert failures(report, 1)


def test_case_P15_nbformat_4_4_notebook_still_validates_after_sync(report):
    nb = json.loads(report.read_text(encoding="utf-8"))
    nb["nbformat_minor"] = 4
    for cell in nb["cells"]:
        cell.pop("id", None)
    report.write_text(json.dumps(nb), encoding="utf-8")
    sync(report)
    saved = json.loads(report.read_text(encoding="utf-8"))
    assert saved["nbformat_minor"] == 4 and all("id" not in c for c in saved["cells"])
    nbformat.validate(nbformat.reads(json.dumps(saved), as_version=nbformat.NO_CONVERT))


def test_records_list_and_show_from_the_command_line(report):
    p = cli("records", "list", str(report))
    assert p.returncode == 0 and "Copper wire" in p.stdout and "Ohm's law" in p.stdout
    rid = records(report)[0].stem
    p = cli("records", "show", rid, "--notebook", str(report))
    assert p.returncode == 0 and "R = @rho*@L/@A" in p.stdout
    assert cli("records", "show", "../x", "--notebook", str(report)).returncode == 2
    assert cli("verify", str(report.parent / "nope.ipynb")).returncode == 2


def reseal(report: Path) -> None:
    """What a forger does after editing a record: rewrite every hash the notebook holds."""
    import hashlib

    nb = json.loads(report.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            meta = o.get("metadata", {}).get("dsh")
            if meta and meta.get("record_id"):
                f = report.parent / "report.dsh" / "records" / f"{meta['record_id']}.jsonl"
                meta["sha256"] = hashlib.sha256(f.read_bytes()).hexdigest()
    report.write_text(json.dumps(nb), encoding="utf-8")
    sync(report, accept_changes=True)  # the forger vouches for the forged files with a key of their own


def _edit_rows(path: Path, edit) -> None:
    rows = [json.loads(x) for x in writable(path).read_text(encoding="utf-8").splitlines()]
    rows = edit(rows)
    for i, r in enumerate(rows):
        r["seq"] = i  # renumber, as a careful forger would
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize("forgery", ["input value", "input unit", "deleted step"])
def test_resealed_forgeries_are_caught_by_rerunning_the_record(report, forgery):
    f = records(report)[0]  # Copper wire: sets rho, L, d; A = ...; R = @rho*@L/@A

    def edit(rows):
        if forgery == "deleted step":
            return [r for r in rows if not (r.get("tool") == "eval" and r["content"]["target"] == "A")]
        for r in rows:
            if r.get("tool") == "set" and r["content"]["name"] == "L":
                if forgery == "input value":
                    r["content"]["value"]["num"] = 26.0
                else:
                    r["content"]["value"]["dim"] = [2, 0, 0, 0, 0, 0, 0]
        return rows

    _edit_rows(f, edit)
    reseal(report)  # the forger re-seals every hash; only re-running the record can tell
    assert failures(report, 1) == []
    found = failures(report, 2)
    assert found, forgery
    if forgery == "deleted step":
        assert any("ENGINE_SLOT_NOT_FOUND" in s for s in found)
    else:
        assert any("input @L" in s for s in found)


def test_sync_after_clearing_outputs_keeps_the_seals_and_verify_notices(report):
    sync(report)
    sealed = nbformat.read(str(report), as_version=4).metadata["dsh"]["records"]
    nb = nbformat.read(str(report), as_version=4)
    for cell in nb.cells:
        cell.outputs = []
    nbformat.write(nb, str(report))
    assert sync(report)["records"] == sealed  # never re-sealed unseen records
    f = records(report)[0]
    writable(f).write_bytes(f.read_bytes().replace(b'"num":25.0', b'"num":26.0'))
    assert any("sha256" in s for s in failures(report, 1))
    skipped = [x for x in verify(report) if x.ok is None and x.check == 1]
    assert skipped and "names no record" in skipped[0].detail


@pytest.mark.parametrize("bad", ["lol", [1, 2], {"x": 5}, 0, [], ""])
def test_malformed_metadata_is_a_finding_not_a_crash(report, bad):
    nb = json.loads(report.read_text(encoding="utf-8"))
    nb["metadata"]["dsh"] = {"records": bad}
    report.write_text(json.dumps(nb), encoding="utf-8")
    assert any("malformed" in s for s in failures(report, 1))
    assert cli("verify", str(report)).returncode == 1


def test_index_and_outputs_must_agree(report):
    sync(report)
    nb = json.loads(report.read_text(encoding="utf-8"))
    rid = next(iter(nb["metadata"]["dsh"]["records"]))
    del nb["metadata"]["dsh"]["records"][rid]
    report.write_text(json.dumps(nb), encoding="utf-8")
    assert any(s.startswith(rid) and "missing from metadata.dsh" in s for s in failures(report, 1))


@pytest.mark.parametrize("token", ["ghp_" + "a1B2c3D4" * 5, "AKIA" + "ABCDEFGHIJKLMNOP", "xoxb-" + "1234567890-abc"])
def test_common_token_formats_are_secrets(report, token):
    (report.parent / "report.dsh" / "notes.txt").write_text(f"saved {token} here", encoding="utf-8")
    assert failures(report, 4)


def test_run_after_sync_keeps_the_notebook_verifiable(report):
    sync(report)
    assert cli("run", str(report)).returncode == 0
    assert failures(report) == []


def test_ledgers_are_sealed_by_sync_and_checked_by_verify(tmp_path):
    from dsh_notebook.research import Actor, Ledger

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("a ledger only")])
    path = tmp_path / "study.ipynb"
    nbformat.write(nb, str(path))
    led = Ledger(tmp_path / "study.dsh" / "ledger" / "main.jsonl")
    assert led.append("question-posed", {"question_id": "q1", "text": "Does aspirin prevent colorectal cancer?"},
                      Actor("lead"))["ok"]
    index = sync(path)
    assert index["ledgers"]["main"]["events"] == 1 and len(index["ledgers"]["main"]["head"]) == 64
    found = [f for f in verify(path) if f.check == 3]
    assert [f.ok for f in found] == [True] and "chain intact" in found[0].detail
    # an edit of the last line keeps the chain (nothing follows it) but not the sealed head
    f = tmp_path / "study.dsh" / "ledger" / "main.jsonl"
    f.write_text(f.read_text(encoding="utf-8").replace("aspirin", "coffee"), encoding="utf-8")
    bad = [x for x in verify(path) if x.check == 3 and x.ok is False]
    assert bad and "main.jsonl" in bad[0].subject


def _study_with_ledgers(tmp_path, *names):
    from dsh_notebook.research import Actor, Ledger

    path = tmp_path / "study.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("ledgers")]), str(path))
    for name in names:
        led = Ledger(tmp_path / "study.dsh" / "ledger" / f"{name}.jsonl")
        assert led.append("question-posed", {"question_id": "q1", "text": "Q?"}, Actor("lead"))["ok"]
        assert led.append("question-posed", {"question_id": "q2", "text": "Q2?"}, Actor("lead"))["ok"]
    return path


def test_a_sealed_ledger_deleted_or_renamed_fails_verify(tmp_path):
    path = _study_with_ledgers(tmp_path, "main", "second")
    sync(path)
    assert failures(path) == []
    folder = tmp_path / "study.dsh" / "ledger"
    (folder / "second.jsonl").unlink()
    assert failures(path) == ["ledger/second.jsonl: sealed in the notebook's metadata.dsh but "
                              "study.dsh/ledger/second.jsonl is missing (deleted or renamed?)",
                              "ledger/second.jsonl: sealed, but missing from the sidecar (deleted or renamed after "
                              "sealing)"]
    (folder / "main.jsonl").rename(folder / "main2.jsonl")
    got = failures(path, 1)
    assert any(g.startswith("ledger/main.jsonl: sealed") and "missing" in g for g in got)
    assert "ledger/main2.jsonl: not sealed in the notebook's metadata.dsh (created or renamed after sync: run " \
           "dsh-notebook sync)" in got
    r = cli("verify", str(path))
    assert r.returncode == 1 and "verified" not in r.stdout.splitlines()[-1]
    # the whole folder gone
    shutil.rmtree(folder)
    assert len(failures(path, 1)) == 2 and cli("verify", str(path)).returncode == 1


def test_a_ledger_made_after_sync_is_reported_not_sealed_and_sync_seals_it(tmp_path):
    path = _study_with_ledgers(tmp_path, "main")
    sync(path)
    from dsh_notebook.research import Actor, Ledger

    led = Ledger(tmp_path / "study.dsh" / "ledger" / "other.jsonl")
    assert led.append("question-posed", {"question_id": "q1", "text": "Q?"}, Actor("lead"))["ok"]
    assert failures(path) == ["ledger/other.jsonl: not sealed in the notebook's metadata.dsh (created or renamed "
                              "after sync: run dsh-notebook sync)",
                              "ledger/other.jsonl: not covered by the seal (added to the sidecar after sealing); "
                              "nothing vouches for it (if you do: dsh-notebook sync study.ipynb, which seals it with your key)"]
    sync(path)
    assert failures(path) == []


def test_sync_never_reseals_a_ledger_that_lost_its_sealed_head(tmp_path):
    path = _study_with_ledgers(tmp_path, "main")
    r = cli("sync", str(path))
    assert r.returncode == 0, r.stderr
    sealed = json.loads(path.read_text())["metadata"]["dsh"]["ledgers"]["main"]
    f = tmp_path / "study.dsh" / "ledger" / "main.jsonl"
    f.write_text("".join(f.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    r = cli("sync", str(path))
    # the signed seal refuses first (a sealed file lost lines); nothing is written
    assert r.returncode == 1 and "ledger/main.jsonl was rewritten" in r.stderr and "nothing was written" in r.stderr
    assert json.loads(path.read_text())["metadata"]["dsh"]["ledgers"]["main"] == sealed
    assert any("ends before the head sealed by sync" in x for x in failures(path, 3))
    assert cli("verify", str(path)).returncode == 1
    # even when the person accepts the files as they are, the ledger's old seal is kept
    r = cli("sync", str(path), "--accept-changes")
    assert r.returncode == 1 and "ledger main" in r.stderr and "the old seal is kept" in r.stderr
    assert json.loads(path.read_text())["metadata"]["dsh"]["ledgers"]["main"] == sealed
    # a missing ledger keeps its seal too
    f.unlink()
    problems: list[str] = []
    index = sync(path, problems, accept_changes=True)
    assert index["ledgers"]["main"] == sealed and "is missing" in problems[0]


def test_sync_seals_a_ledger_that_only_grew(tmp_path):
    from dsh_notebook.research import Actor, Ledger

    path = _study_with_ledgers(tmp_path, "main")
    sync(path)
    led = Ledger(tmp_path / "study.dsh" / "ledger" / "main.jsonl")
    assert led.append("question-posed", {"question_id": "q3", "text": "Q3?"}, Actor("lead"))["ok"]
    problems: list[str] = []
    assert sync(path, problems)["ledgers"]["main"]["events"] == 3 and problems == []
    assert failures(path) == []


def test_pre_save_hook_keeps_the_old_seal_and_logs(tmp_path, caplog):
    from dsh_notebook import server

    path = _study_with_ledgers(tmp_path, "main")
    sync(path)
    content = json.loads(path.read_text())
    sealed = content["metadata"]["dsh"]["ledgers"]["main"]
    f = tmp_path / "study.dsh" / "ledger" / "main.jsonl"
    f.write_text("".join(f.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")

    class CM:
        root_dir = str(tmp_path)

        def _get_os_path(self, p):
            return str(tmp_path / p)

    model = {"type": "notebook", "content": content}
    with caplog.at_level("WARNING"):
        server.pre_save_hook(model, "study.ipynb", CM())
    assert model["content"]["metadata"]["dsh"]["ledgers"]["main"] == sealed
    assert "the seal is not renewed" in caplog.text


def test_verify_finds_a_password_in_a_url(tmp_path):
    """verify's secret scan (check 4) names a user:password@ in a URL that landed in a notebook."""
    import nbformat

    from dsh_notebook.artifact.seal import verify

    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x = 1", outputs=[nbformat.v4.new_output(
        "stream", name="stdout", text="connecting to http://ana:s3cret-pw@10.0.0.5/v1\n")]))
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    bad = [f for f in verify(path) if f.check == 4 and f.ok is False]
    assert bad and "URL with a password" in bad[0].detail and "s3cret" not in bad[0].detail


def test_sync_names_a_metadata_dsh_that_is_not_an_object(tmp_path):
    """A metadata.dsh that is a list (hand edit, another tool) is named and left as it is, never a
    crash and never overwritten."""
    import nbformat

    from dsh_notebook.artifact.seal import MetadataError, sync

    nb = nbformat.v4.new_notebook()
    nb.metadata["dsh"] = ["not", "an", "object"]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    before = path.read_bytes()
    with pytest.raises(MetadataError) as exc:
        sync(path, [])
    assert exc.value.code == "METADATA_DSH" and "metadata.dsh is a list, not an object" in str(exc.value)
    assert path.read_bytes() == before


def _edited(report: Path, edit) -> Path:
    nb = json.loads(report.read_text(encoding="utf-8"))
    edit(nb)
    report.write_text(json.dumps(nb), encoding="utf-8")
    return report


def _record_output(nb) -> dict:
    return next(o for c in nb["cells"] for o in c.get("outputs", []) if "dsh" in o.get("metadata", {}))


@pytest.mark.parametrize(("edit", "named"), [
    (lambda nb: nb["metadata"].setdefault("dsh", {}).update(sessions=5), "metadata.dsh.sessions is malformed"),
    (lambda nb: nb["metadata"].setdefault("dsh", {}).update(reviews="x"), "metadata.dsh.reviews is malformed"),
    (lambda nb: nb["metadata"].setdefault("dsh", {}).update(sessions=[{"id": [1]}, {"id": "s", "sha256": 5}]), "session s"),
    (lambda nb: _record_output(nb)["metadata"].update(dsh=5), "metadata.dsh is not an object (int)"),
    (lambda nb: _record_output(nb).update(metadata=[1]), "metadata.dsh is not an object (list)"),
    (lambda nb: _record_output(nb)["metadata"]["dsh"].update(record_id=[1]), "metadata.dsh.record_id is not a string (list)"),
    (lambda nb: _record_output(nb)["metadata"]["dsh"].update(sha256=5), "metadata.dsh.sha256 is not a string (int)"),
    (lambda nb: _record_output(nb)["metadata"]["dsh"].update(record_id="a" * 300), "is not a record id"),
    (lambda nb: _record_output(nb)["metadata"]["dsh"].update(record_id="../../etc/passwd"), "is not a record id"),
], ids=["sessions-int", "reviews-str", "session-id-list", "output-dsh-int", "output-metadata-list",
        "record-id-list", "sha256-int", "record-id-300", "record-id-path"])
def test_odd_types_deep_in_the_metadata_are_findings_and_sync_never_crashes(report, edit, named):
    """Issue 14 item 4: any shape a hand or a tool leaves in the notebook's or an output's
    metadata.dsh is a check-1 finding naming it, never a TypeError; sync either writes a valid
    notebook or names the problem and writes nothing."""
    from dsh_notebook.artifact.seal import MetadataError, UnreadableNotebook

    _edited(report, edit)
    found = failures(report, 1)
    assert any(named in f for f in found), found
    assert cli("verify", str(report)).returncode == 1
    before = report.read_bytes()
    try:
        sync(report, [])
    except (MetadataError, UnreadableNotebook) as exc:
        assert report.read_bytes() == before and str(exc)
    else:
        nbformat.validate(nbformat.read(str(report), as_version=4))


def test_a_notebook_of_the_wrong_shape_is_named_not_a_traceback(report):
    from dsh_notebook.artifact.seal import UnreadableNotebook

    _edited(report, lambda nb: nb["cells"][1].update(outputs=0))
    with pytest.raises(UnreadableNotebook) as exc:
        verify(report)
    assert "cells[1].outputs: 0 is not of type 'array'" in str(exc.value)
    r = cli("verify", str(report))
    assert r.returncode == 2 and "cells[1].outputs" in r.stderr and "Traceback" not in r.stderr
    _edited(report, lambda nb: nb["cells"][1].update(outputs=""))
    before = report.read_bytes()
    with pytest.raises(UnreadableNotebook) as exc:
        sync(report, [])
    assert "cells[1].outputs" in str(exc.value) and "nothing was written" in str(exc.value)
    assert report.read_bytes() == before


def test_verify_of_scalar_records_makes_no_reference_cycles_and_leaves_the_collector_as_it_was(tmp_path):
    """verify pauses Python's cyclic collector while it runs (issue 23's speed): that holds memory
    only as long as it makes no cycles (scalar records make none, clean or failing; the recursive
    helpers that read array values make a few dozen objects), and the collector must come back
    as it was."""
    import gc

    ran_notebook(tmp_path, ["%load_ext dsh_notebook", "%%reckon Wire\ngiven L = 25 m\ngiven A = 2 mm^2\n"
                            "given rho = 1.68e-8 ohm*m\nR = @rho*@L/@A\nshow R in mohm\nend done"])
    nb = tmp_path / "report.ipynb"
    assert not [f for f in verify(nb) if f.ok is False]
    rec = next((tmp_path / "report.dsh" / "records").glob("*.jsonl"))
    os.chmod(rec, 0o644)
    assert gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        assert not [f for f in verify(nb) if f.ok is False]
        assert gc.collect() == 0  # nothing unreachable: no cycle was made
        rec.write_text(rec.read_text(encoding="utf-8").replace('"num":25', '"num":26'), encoding="utf-8")
        assert [f for f in verify(nb) if f.ok is False]
        assert gc.collect() == 0
        assert not gc.isenabled()  # off before: still off
    finally:
        gc.enable()
    verify(nb)
    assert gc.isenabled()  # on before: on again


def test_a_title_with_braces_and_dollars_is_recorded_as_written_and_verifies(tmp_path):
    """IPython expands ``{expr}`` and ``$name`` in a magic's line: the record held the title
    'Price 49 in dollars' while the cell says 'Price {7*7} in $USD', so ``verify`` failed the
    notebook ``run`` had just written."""
    ran_notebook(tmp_path, ["%load_ext dsh_notebook", "USD = 'dollars'",
                            "%%reckon Price {7*7} in $USD\ngiven x = 2 m\ny = @x*2\nend done"])
    nb = tmp_path / "report.ipynb"
    from dsh_notebook.reckoner import read_record

    (rec,) = (tmp_path / "report.dsh" / "records").glob("*.jsonl")
    assert read_record(rec).title == "Price {7*7} in $USD"
    assert [f"{f.subject}: {f.detail}" for f in verify(nb) if f.ok is False] == []
