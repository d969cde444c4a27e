"""Check 5, the signed seal (issue 15 items 2, 4 and 6): ``run`` and ``sync`` sign a seal set of
every cell and every sidecar file with the person's SSH key; ``verify`` checks the signature
(with OpenSSH's format: ``ssh-keygen -Y verify`` accepts the payload ``seal-payload`` writes),
says who sealed, and names every tamper: an edited file or cell, a file added or removed, a
removed seal, a seal re-signed by another key, edited ledger heads. CRLF line endings keep
their seal."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from dsh_notebook.artifact.seal import sync, verify
from dsh_notebook.signing import AllowedSigners

sys.path.insert(0, str(Path(__file__).parent))
from test_verify import cli, ran_notebook  # noqa: E402 - the same command-line runner

CELLS = [
    "%load_ext dsh_notebook",
    "%%reckon Copper wire\ngiven rho = 1.68e-8 ohm*m\ngiven L = 25 m\ngiven d = 2.05 mm\n"
    "A = $pi*(@d/2)^2\nR = @rho*@L/@A\nend About 127 milliohm.",
]
SSH_KEYGEN = shutil.which("ssh-keygen")


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    return ran_notebook(tmp_path_factory.mktemp("signed"), CELLS)


@pytest.fixture
def report(artifact, tmp_path):
    shutil.copytree(artifact, tmp_path / "a")
    return tmp_path / "a" / "report.ipynb"


def fails(report: Path, **kw) -> list[str]:
    return [f"{f.subject}: {f.detail}" for f in verify(report, **kw) if f.check == 5 and f.ok is False]


def record_file(report: Path) -> Path:
    f = next((report.parent / "report.dsh" / "records").glob("*.jsonl"))
    os.chmod(f, 0o644)
    return f


def test_run_signs_and_verify_says_who(report):
    found = [f for f in verify(report) if f.check == 5]
    assert all(f.ok for f in found), found
    assert "signed by SHA256:" in found[0].detail and "2 cells and" in found[-1].detail
    assert (report.parent / "report.dsh" / ".gitattributes").read_text().endswith("* -text\n")


@pytest.mark.skipif(SSH_KEYGEN is None, reason="OpenSSH's ssh-keygen is not installed (apt-get install openssh-client)")
def test_openssh_checks_the_seal_payload(report, tmp_path):
    key = cli("key").stdout.strip()
    (tmp_path / "allowed").write_text(f"author@lab {key}\n")
    payload = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "seal-payload", str(report), "--signature",
                              str(tmp_path / "sig")], capture_output=True, check=True).stdout
    done = subprocess.run([SSH_KEYGEN, "-Y", "verify", "-f", str(tmp_path / "allowed"), "-I", "author@lab", "-n",
                           "dsh-notebook", "-s", str(tmp_path / "sig")], input=payload, capture_output=True)
    assert done.returncode == 0 and b'Good "dsh-notebook" signature for author@lab' in done.stdout
    assert cli("verify", str(report), "--allowed-signers", str(tmp_path / "allowed")).returncode == 0


def test_a_key_not_in_the_allowed_signers_fails(report, tmp_path):
    from dsh_notebook.signing import ensure_key  # noqa: F401 - the test's home key exists already

    other = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl bo@lab"
    (tmp_path / "allowed").write_text(f"bo@lab {other}\n")
    assert any("does not allow" in f for f in fails(report, allowed_signers=AllowedSigners.read(tmp_path / "allowed")))
    r = cli("verify", str(report), "--allowed-signers", str(tmp_path / "allowed"))
    assert r.returncode == 1 and "does not allow" in r.stdout
    r = cli("verify", str(report), "--allowed-signers", str(tmp_path / "missing"))
    assert r.returncode == 2 and "no such allowed-signers file" in r.stderr


def _edit(report: Path, change) -> None:
    nb = json.loads(report.read_text(encoding="utf-8"))
    change(nb)
    report.write_text(json.dumps(nb), encoding="utf-8")


def test_an_edit_with_every_hash_rewritten_still_fails_the_signature(report):
    f = record_file(report)
    f.write_text(f.read_text().replace("25.0", "26.0"))
    import hashlib

    sha = hashlib.sha256(f.read_bytes()).hexdigest()

    def forge(nb):
        seal = nb["metadata"]["dsh"]["seal"]
        seal["files"][f"records/{f.name}"] = sha
        nb["metadata"]["dsh"]["records"][f.stem] = sha
    _edit(report, forge)
    assert any("signature is invalid" in x for x in fails(report))


@pytest.mark.parametrize("tamper, named", [
    (lambda r: record_file(r).write_text(record_file(r).read_text() + "\n"), "changed after sealing"),
    (lambda r: (r.parent / "report.dsh" / "records" / "1795000000000.jsonl").write_text('{"seq":0,"version":1}\n'),
     "records/1795000000000.jsonl: not covered by the seal"),
    (lambda r: (r.parent / "report.dsh" / "notes.txt").write_text("planted"), "notes.txt: not covered"),
    (lambda r: record_file(r).unlink(), "missing from the sidecar"),
    (lambda r: _edit(r, lambda nb: nb["cells"][1].update(source="%%reckon Copper wire\ngiven rho = 1 ohm*m")),
     "cell 2: differs from the sealed notebook"),
    (lambda r: _edit(r, lambda nb: nb["cells"][1]["outputs"][0]["data"].update(
        {"text/plain": "Copper wire — record closed\n  R = 0.1 Ω"})), "cell 2: differs"),
    (lambda r: _edit(r, lambda nb: nb["cells"].append(nbformat.v4.new_markdown_cell("added"))),
     "cell 3: added after sealing"),
    (lambda r: _edit(r, lambda nb: nb["cells"].insert(0, nbformat.v4.new_markdown_cell("added"))),
     "cell 1: added after sealing"),
    (lambda r: _edit(r, lambda nb: nb["metadata"]["dsh"].pop("seal")), "no signed seal"),
    (lambda r: _edit(r, lambda nb: nb["metadata"]["dsh"]["seal"].update(signature="x")), "signature is invalid"),
    (lambda r: _edit(r, lambda nb: nb["metadata"]["dsh"]["seal"]["cells"].reverse()), "signature is invalid"),
], ids=["record-edited", "record-added", "file-added", "record-deleted", "cell-source", "cell-output",
        "cell-added", "cell-inserted", "seal-removed", "signature-garbled", "seal-edited"])
def test_every_tamper_is_named(report, tamper, named):
    tamper(report)
    found = fails(report)
    assert any(named in f for f in found), found
    assert cli("verify", str(report)).returncode == 1


def test_removing_the_ledger_index_never_switches_the_ledger_check_off(tmp_path):
    from dsh_notebook.research import Actor, Ledger

    path = tmp_path / "study.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("ledgers")]), str(path))
    led = Ledger(tmp_path / "study.dsh" / "ledger" / "main.jsonl")
    assert led.append("question-posed", {"question_id": "q1", "text": "Q?"}, Actor("lead"))["ok"]
    sync(path)
    assert not fails(path)
    _edit(path, lambda nb: nb["metadata"]["dsh"].pop("ledgers"))
    assert any("metadata.dsh.ledgers: differs from the ledger heads the seal signs" in f for f in fails(path))


def test_a_reseal_by_another_key_is_reported_and_fails_an_allowed_signers_check(report, tmp_path, monkeypatch):
    first = [f for f in verify(report) if f.check == 5][0].detail
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "someone-else"))
    sync(report)
    found = [f.detail for f in verify(report) if f.check == 5]
    assert any(d.startswith("re-sealed by") and first.split()[2] in d for d in found), found
    assert not fails(report)


def test_crlf_line_endings_keep_the_seal_and_are_named(report):
    """P22: a Windows checkout that rewrites line endings."""
    for f in (report.parent / "report.dsh" / "records").glob("*.jsonl"):
        os.chmod(f, 0o644)
        f.write_bytes(f.read_bytes().replace(b"\n", b"\r\n"))
    findings = verify(report)
    assert not [f for f in findings if f.ok is False], [f for f in findings if f.ok is False]
    assert any("CRLF" in f.detail for f in findings if f.check == 5)


# ----------------------------------------------------------------------------- signed human decisions


def _decided(tmp_path, verdict="approved"):
    sys.path.insert(0, str(Path(__file__).parent))
    from test_ledger_explorer import build

    from dsh_notebook.artifact import ledgers as LG

    nb = tmp_path / "nb.ipynb"
    led = build(nb)
    receipt = LG.record_decision(led.path, "d1", verdict, "read it", by="ana", channel="terminal", revision=1)
    assert receipt["ok"], receipt
    return led


def test_a_recorded_decision_is_signed_and_checked(tmp_path):
    from dsh_notebook.artifact.seal import check_decisions

    led = _decided(tmp_path)
    found = check_decisions(led.path)
    assert [f.ok for f in found] == [True] and "by ana, signed by SHA256:" in found[0].detail


def _rechain(path: Path, lines: list[dict]) -> None:
    """What a forger does: rewrite the lines and recompute every prev link."""
    import hashlib

    out, prev = [], None
    for line in lines:
        if prev is not None:
            line["prev"] = prev
        raw = (json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        out.append(raw)
        prev = hashlib.sha256(raw).hexdigest()
    path.write_bytes(b"".join(out))


@pytest.mark.parametrize("forge, says", [
    (lambda lines: lines[-1]["data"].pop("signature"), "is not signed, in a ledger whose decisions are signed"),
    (lambda lines: lines[-1]["data"].update(verdict="rejected"), "signature is invalid"),
    (lambda lines: lines[-1]["data"].update(note="edited"), "signature is invalid"),
    (lambda lines: (lines[-1]["data"].update(by="bo"), lines[-1]["actor"].update(by="bo")), "signature is invalid"),
], ids=["unsigned", "verdict", "note", "person"])
def test_a_forged_or_edited_decision_fails_even_with_the_chain_recomputed(tmp_path, forge, says):
    from dsh_notebook.artifact.seal import check_decisions

    led = _decided(tmp_path)
    lines = [json.loads(x) for x in led.path.read_text().splitlines()]
    forge(lines)
    for i, line in enumerate(lines):
        line["seq"] = i
    _rechain(led.path, lines)
    assert led.verify()["ok"]  # the chain holds: only the signature tells
    found = [f.detail for f in check_decisions(led.path) if f.ok is False]
    assert any(says in d for d in found), found


def test_a_decision_signature_cannot_be_replayed_into_another_ledger(tmp_path):
    from dsh_notebook.artifact.seal import check_decisions

    first = _decided(tmp_path / "a")
    second = _decided(tmp_path / "b", verdict="rejected")
    lines = [json.loads(x) for x in second.path.read_text().splitlines()]
    lines[-1]["data"] = json.loads(first.path.read_text().splitlines()[-1])["data"]
    _rechain(second.path, lines)
    assert any("signature is invalid" in f.detail for f in check_decisions(second.path) if f.ok is False)


def test_an_older_unsigned_decision_is_reported_and_fails_only_with_allowed_signers(tmp_path):
    from dsh_notebook.artifact.seal import check_decisions

    led = _decided(tmp_path)
    lines = [json.loads(x) for x in led.path.read_text().splitlines()]
    lines[0].pop("decisions")  # a ledger from before signing existed
    lines[-1]["data"].pop("signature")
    _rechain(led.path, lines)
    found = check_decisions(led.path)
    assert [(f.ok, "unsigned (older version)" in f.detail) for f in found] == [(True, True)]
    strict = check_decisions(led.path, AllowedSigners.parse(f"ana@lab {cli('key').stdout}"))
    assert [f.ok for f in strict] == [False]


def test_a_decision_that_cannot_be_signed_is_not_recorded(tmp_path, monkeypatch):
    sys.path.insert(0, str(Path(__file__).parent))
    from test_ledger_explorer import build

    from dsh_notebook.artifact import ledgers as LG

    led = build(tmp_path / "nb.ipynb")
    n = len(led.events())
    monkeypatch.setenv("DSH_SIGNING_KEY", str(tmp_path / "no-such-key"))
    receipt = LG.record_decision(led.path, "d1", "approved", "", by="ana", channel="terminal", revision=1)
    assert not receipt["ok"] and "cannot be signed" in receipt["error"] and "does not exist" in receipt["error"]
    assert len(led.events()) == n


# ----------------------------------------------------------------------------- sync keeps faith with the last seal


def test_a_routine_sync_never_seals_an_edited_log_or_record(report):
    """The tamper class of issue 15: an attacker edits a sealed file and the person's next routine
    sync would have sealed the forgery. Appending (a chat or ledger that went on) is renewed;
    a rewrite or a deletion is not, until the person says so."""
    from dsh_notebook.artifact.seal import SealRefused

    f = record_file(report)
    f.write_text(f.read_text().replace("About 127", "About 128"))  # a note: the record still replays
    before = report.read_bytes()
    with pytest.raises(SealRefused, match=f"records/{f.name} was rewritten"):
        sync(report, [])
    assert report.read_bytes() == before  # nothing written: not the index either
    assert any(f"records/{f.name}: changed after sealing" in x for x in fails(report))  # still reported
    r = cli("sync", str(report))
    assert r.returncode == 1 and "--accept-changes" in r.stderr and "nothing was written" in r.stderr
    r = cli("sync", str(report), "--accept-changes")
    assert r.returncode == 0, r.stderr
    left = [f for f in verify(report) if f.ok is False]  # the outputs' hashes follow the accepted file ...
    assert [f.check for f in left] == [7]  # ... but the cell's own line still says 127: check 7 names it
    assert "the cell gives the closing 'About 127 milliohm.'" in left[0].detail
    assert "holds the closing 'About 128 milliohm.'" in left[0].detail


def test_a_file_that_only_grew_is_sealed_again(report):
    side = report.parent / "report.dsh"
    log = side / "sessions" / "s1.jsonl"
    log.parent.mkdir(exist_ok=True)
    log.write_text('{"seq":0}\n')
    sync(report, [], accept_changes=True)
    with log.open("a") as fh:
        fh.write('{"seq":1}\n')
    problems: list[str] = []
    sync(report, problems)
    assert problems == [] and not fails(report)
    log.write_text('{"seq":0,"x":1}\n{"seq":1}\n')
    from dsh_notebook.artifact.seal import SealRefused

    with pytest.raises(SealRefused, match="sessions/s1.jsonl was rewritten"):
        sync(report, [])


def test_a_deleted_sealed_file_or_a_broken_seal_is_not_renewed_silently(report):
    from dsh_notebook.artifact.seal import SealRefused

    record_file(report).unlink()
    with pytest.raises(SealRefused, match="was sealed and is gone"):
        sync(report, [])
    _edit(report, lambda nb: nb["metadata"]["dsh"]["seal"]["cells"].reverse())
    with pytest.raises(SealRefused, match="signature is invalid"):
        sync(report, [])


def test_a_signed_notebook_copied_without_its_folder_runs_and_is_sealed_afresh(report, tmp_path):
    """From CI: the README's first command signs the tour in place; a copy of the notebook alone,
    run elsewhere, said 'the seal was not renewed' and exited 1. A run that starts with no sidecar
    file beside the notebook makes every file there, and is sealed afresh, with a note."""
    for name in ("b", "c"):
        (tmp_path / name).mkdir()
    copy = tmp_path / "b" / "report.ipynb"
    shutil.copy(report, copy)
    p = cli("run", str(copy))
    assert p.returncode == 0, p.stderr
    assert "report.dsh/ held no files when this run started (a copy of the notebook without its folder" in p.stderr
    assert "sealed afresh" in p.stderr and "signed with SHA256:" in p.stdout
    assert [f for f in verify(copy) if f.ok is False] == []
    renamed = tmp_path / "c" / "mine.ipynb"  # the same under another name: its sidecar is mine.dsh/
    shutil.copy(report, renamed)
    assert cli("run", str(renamed)).returncode == 0
    assert [f for f in verify(renamed) if f.ok is False] == []


def test_a_copy_synced_without_its_folder_is_refused_and_told_what_to_do(report, tmp_path):
    from dsh_notebook.artifact.seal import SealRefused

    copy = tmp_path / "report.ipynb"
    shutil.copy(report, copy)
    before = copy.read_bytes()
    with pytest.raises(SealRefused, match=r"there is no report\.dsh/ beside the notebook \(copied without its "
                                          r"folder\? copy the folder along, or run the notebook again"):
        sync(copy, [])
    assert copy.read_bytes() == before


def test_a_removed_folder_with_cleared_outputs_is_not_sealed_afresh(report):
    """Sealed afresh only after a run made new files: deleting the folder and clearing the outputs
    makes nothing new, and a routine sync must not sign that."""
    from dsh_notebook.artifact.seal import SealRefused

    shutil.rmtree(report.parent / "report.dsh")
    _edit(report, lambda nb: [c.update(outputs=[]) for c in nb["cells"] if c["cell_type"] == "code"])
    before = report.read_bytes()
    with pytest.raises(SealRefused, match="was sealed and is gone"):
        sync(report, [])
    assert report.read_bytes() == before


def test_a_run_that_keeps_one_sealed_file_is_still_refused(report):
    """Sealed afresh only when none of the old files is there: one deleted record among others
    left, with the outputs made again, is a change the person must vouch for."""
    extra = report.parent / "report.dsh" / "sessions"
    extra.mkdir()
    (extra / "s1.jsonl").write_text('{"seq": 0}\n', encoding="utf-8")
    assert cli("sync", str(report)).returncode in (0, 1)
    nb = nbformat.read(report, as_version=4)
    assert "sessions/s1.jsonl" in nb.metadata["dsh"]["seal"]["files"]
    record_file(report).unlink()
    p = cli("run", str(report))
    assert p.returncode == 1
    assert "was sealed and is gone" in p.stderr and "sealed afresh" not in p.stderr


def test_a_seal_taken_from_another_notebook_does_not_launder_a_deletion(report, tmp_path):
    """From the attack: the owner's own valid seal of another copy, put into this notebook after a
    record and its cell were deleted, made the copy rule seal the rest afresh, and verify passed."""
    from dsh_notebook.artifact.seal import SealRefused

    other = tmp_path / "b" / "report.ipynb"
    other.parent.mkdir()
    shutil.copy(report, other)
    assert cli("run", str(other)).returncode == 0  # a valid seal, of other records
    foreign = json.loads(other.read_text(encoding="utf-8"))["metadata"]["dsh"]["seal"]
    (report.parent / "report.dsh" / "sessions").mkdir()  # the sidecar holds more than the record deleted
    (report.parent / "report.dsh" / "sessions" / "s1.jsonl").write_text('{"seq": 0}\n', encoding="utf-8")
    assert cli("sync", str(report)).returncode == 0
    record_file(report).unlink()
    _edit(report, lambda nb: nb["metadata"]["dsh"].update(seal=foreign, records={}))
    before = report.read_bytes()
    with pytest.raises(SealRefused, match="was sealed and is gone"):
        sync(report, [])
    assert report.read_bytes() == before
    p = cli("run", str(report))  # the sidecar still held files: not a copy's first run
    assert p.returncode == 1 and "sealed afresh" not in p.stderr


@pytest.mark.parametrize("seal", [{"format": "dsh-seal/0"}, "sealed", None])
def test_a_seal_this_version_cannot_read_is_not_renewed(report, seal):
    """From the attack: a seal whose format was changed or whose signature was removed let sync
    sign a deleted record away."""
    from dsh_notebook.artifact.seal import SealRefused

    def damage(nb):
        old = nb["metadata"]["dsh"]["seal"]
        if seal is None:
            old.pop("signature")
        else:
            nb["metadata"]["dsh"]["seal"] = {**old, **seal} if isinstance(seal, dict) else seal

    _edit(report, damage)
    before = report.read_bytes()
    with pytest.raises(SealRefused, match=r"metadata\.dsh\.seal is not a signed seal this version writes"):
        sync(report, [])
    assert report.read_bytes() == before
    s = cli("sync", str(report), "--accept-changes")  # the person's word renews it
    assert s.returncode == 0, s.stderr
    assert fails(report) == []


def test_a_symlinked_sidecar_is_not_sealed_empty(report):
    """From the attack: sync through a symbolic link sealed no file at all (a seal covers a
    folder's own files), so every later deletion passed."""
    from dsh_notebook.artifact.seal import SealRefused

    folder = report.parent
    (folder / "report.dsh").rename(folder / "real.dsh")
    (folder / "report.dsh").symlink_to("real.dsh")
    before = report.read_bytes()
    with pytest.raises(SealRefused, match="report.dsh is a symbolic link"):
        sync(report, [])
    assert report.read_bytes() == before


def test_a_closed_record_with_a_line_appended_is_not_renewed(report):
    from dsh_notebook.artifact.seal import SealRefused

    f = record_file(report)
    with f.open("a", encoding="utf-8") as out:
        out.write('{"seq": 99, "tool": "record_message", "ok": true, "content": {"text": "added"}}\n')
    with pytest.raises(SealRefused, match=r"records/.*\.jsonl was rewritten since it was sealed \(a closed record, which never changes\)"):
        sync(report, [])


def test_a_pipe_or_folder_in_a_sealed_files_place_is_named_never_read(report):
    """From the attack: a named pipe where a record was made sync, run and verify wait forever
    (with the notebook's lock held); a folder there gave only '[Errno 21] Is a directory'."""
    from dsh_notebook.artifact.seal import SealRefused

    f = record_file(report)
    f.unlink()
    os.mkfifo(f)
    with pytest.raises(SealRefused, match=r"records/.*\.jsonl was sealed and is now not a regular file"):
        sync(report, [])
    done = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "verify", str(report)], capture_output=True,
                          text=True, timeout=300)  # a pipe opened for reading would never return
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{f.name} is not a regular file (a folder, a pipe or a device)" in done.stderr
    f.unlink()
    f.mkdir()
    with pytest.raises(SealRefused, match="not a regular file"):
        sync(report, [])


def test_a_new_pipe_in_the_sidecar_is_sealed_without_being_opened(report):
    os.mkfifo(report.parent / "report.dsh" / "pipe")
    s = cli("sync", str(report))
    assert s.returncode == 0, s.stderr
    assert fails(report) == []


def test_an_edited_seal_history_is_said_to_be_unchecked_and_never_crashes(report):
    """From the attack: ``previous`` is outside the signature; ``previous: 5`` gave verify a
    traceback and sync 'int object is not iterable', and a made-up history showed as ok rows."""
    _edit(report, lambda nb: nb["metadata"]["dsh"]["seal"].update(previous=5))
    v = cli("verify", str(report))
    assert v.returncode == 0 and "Traceback" not in v.stderr, v.stderr
    assert cli("sync", str(report)).returncode == 0
    fake = [{"signer": {"fingerprint": "SHA256:someone-else"}, "sealed_at": "2020-01-01T00:00:00Z"}]
    _edit(report, lambda nb: nb["metadata"]["dsh"]["seal"].update(previous=fake))
    rows = [f.detail for f in verify(report) if f.check == 5]
    assert any("says it was earlier sealed by SHA256:someone-else" in r and "outside the signature: not checked" in r
               for r in rows), rows


def test_an_article_in_a_signed_notebooks_sidecar_says_how_to_vouch_for_it(report):
    rid = record_file(report).stem
    p = cli("article", rid, "--notebook", str(report), "--format", "md")
    assert p.returncode == 0, p.stderr
    assert f"report.ipynb is signed, and its seal does not cover articles/reckoner-{rid}.md as it is now" in p.stderr
    assert f"dsh-notebook sync {report}" in p.stderr
    assert any(f"articles/reckoner-{rid}.md: not covered by the seal" in f for f in fails(report))
    s = cli("sync", str(report))
    assert s.returncode == 0, s.stderr
    assert fails(report) == []
    elsewhere = cli("article", rid, "--notebook", str(report), "--format", "md", "--out", str(report.parent / "out"))
    assert elsewhere.returncode == 0 and "is signed" not in elsewhere.stderr  # outside the sidecar: nothing to vouch for
    assert fails(report) == []


def test_an_article_the_seal_already_holds_needs_no_vouching(report):
    """From an attack: writing the same article again after sync said the seal did not cover it."""
    rid = record_file(report).stem
    assert cli("article", rid, "--notebook", str(report), "--format", "md").returncode == 0
    assert cli("sync", str(report)).returncode == 0
    again = cli("article", rid, "--notebook", str(report), "--format", "md")
    assert again.returncode == 0 and "is signed" not in again.stderr
    assert fails(report) == []
