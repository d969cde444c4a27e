"""``dsh-notebook ledger show|verify|decide|export`` (spec: research.md "The explorer"; issue 7 item 6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from test_ledger_explorer import build

from dsh_notebook.research import Actor, decision_status


def cli(*args, input=None, cwd=None):
    env = {**os.environ, "LOGNAME": "ana", "USER": "ana"}
    return subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "ledger", *map(str, args)], input=input,
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def test_show_and_verify(tmp_path):
    nb = tmp_path / "nb.ipynb"
    led = build(nb)
    r = cli("show", nb)
    assert r.returncode == 0, r.stderr
    assert "decision d1 (revision 1): awaiting_human" in r.stdout and "can_request_human_approval: False" in r.stdout
    r = cli("show", tmp_path / "nb.dsh", "--json")
    assert json.loads(r.stdout)["decisions"][0]["awaiting_person"] is True
    r = cli("verify", nb)
    assert r.returncode == 0 and "intact" in r.stdout
    raw = led.path.read_bytes().replace(b"Probably yes", b"Certainly yes")
    led.path.write_bytes(raw)
    r = cli("verify", nb, "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["ok"] is False
    r = cli("show", tmp_path / "other.ipynb")
    assert r.returncode == 2 and "no ledger 'main'" in r.stderr


def test_decide_with_confirmation_on_stdin(tmp_path):
    nb = tmp_path / "nb.ipynb"
    led = build(nb)
    r = cli("decide", nb, "--decision", "d1", "--verdict", "needs_revision", "--note", "add a second cohort",
            input="d1\n")
    assert r.returncode == 0, r.stderr
    assert "recorded: decision d1 needs_revision by ana" in r.stdout and "Type the decision id" in r.stderr
    last = led.events()[-1]
    assert last["actor"] == {"role": "human", "authority": "human_adjudication", "by": "ana", "channel": "terminal"}
    assert {k: v for k, v in last["data"].items() if k != "signature"} == {
        "decision_id": "d1", "verdict": "needs_revision", "note": "add a second cohort", "by": "ana",
        "revision": 1}  # the revision shown in the confirmation prompt
    from dsh_notebook.artifact.seal import check_decisions

    assert [f.ok for f in check_decisions(led.path)] == [True]  # signed by the terminal user's key
    assert decision_status(led.fold(), "d1") == "needs_revision"
    # a second decision for the same revision is refused with the ledger's code
    r = cli("decide", nb, "--decision", "d1", "--verdict", "approved", input="yes\n")
    assert r.returncode == 1 and "LEDGER_STATE" in r.stderr
    assert led.events()[-1] == last


def test_decide_without_confirmation_is_refused(tmp_path):
    nb = tmp_path / "nb.ipynb"
    led = build(nb)
    n = len(led.events())
    r = cli("decide", nb, "--decision", "d1", "--verdict", "approved", input="")
    assert r.returncode == 1 and "no confirmation was given" in r.stderr
    r = cli("decide", nb, "--decision", "d1", "--verdict", "approved", input="no\n")
    assert r.returncode == 1 and "neither 'd1' nor 'yes'" in r.stderr
    r = cli("decide", nb, "--decision", "d9", "--verdict", "approved", input="yes\n")
    assert r.returncode == 1 and "LEDGER_REFERENCE" in r.stderr
    r = cli("decide", nb, "--decision", "d1", "--verdict", "maybe", input="yes\n")
    assert r.returncode == 2
    assert len(led.events()) == n
    r = cli("decide", nb, "--decision", "d1", "--verdict", "approved", input="yes\n")
    assert r.returncode == 0 and led.events()[-1]["data"]["verdict"] == "approved"


def test_decide_refused_before_the_request(tmp_path):
    nb = tmp_path / "nb.ipynb"
    led = build(nb, request=False)
    r = cli("decide", nb, "--decision", "d1", "--verdict", "approved", input="yes\n")
    assert r.returncode == 1 and "LEDGER_STATE" in r.stderr and "does not await the person" in r.stderr
    assert led.events()[-1]["type"] == "research/review-verdict-recorded"


def test_export(tmp_path):
    nb = tmp_path / "nb.ipynb"
    build(nb)
    r = cli("export", nb)
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "nb.dsh" / "exports" / "main-evidence.md").read_text()
    bib = (tmp_path / "nb.dsh" / "exports" / "main-sources.bib").read_text()
    assert "| d1 | c1: Aspirin lowers CRC risk |" in md
    assert bib.startswith("@article{rothwell2010,") and "10.1016/S0140-6736(10)61543-7" in bib
    r = cli("export", nb, "--format", "md", "--name", "other")
    assert r.returncode == 2 and "no ledger 'other'" in r.stderr


def test_name_is_checked_before_it_becomes_a_path(tmp_path):
    """``--name ../ledger/main`` (which joined unchecked names the real ledger through ``..``, or any
    name with a slash) is refused with exit 2, nothing read or written."""
    nb = tmp_path / "nb.ipynb"
    led = build(nb)
    before = led.path.read_bytes()
    for name in ("../ledger/main", "../../nb.dsh/ledger/main", "/etc/passwd", ".hidden", ""):
        for verb, extra in (("show", ()), ("verify", ()), ("export", ()),
                            ("decide", ("--decision", "d1", "--verdict", "approved"))):
            r = cli(verb, tmp_path / "nb.dsh", "--name", name, *extra, input="yes\n")
            assert r.returncode == 2, (verb, name, r.stdout, r.stderr)
            assert f"--name {name!r} is not a ledger name" in r.stderr and r.stdout == ""
    assert led.path.read_bytes() == before
    assert not (tmp_path / "nb.dsh" / "exports").exists()


def _synced(nb):
    import nbformat

    from dsh_notebook.artifact.seal import sync

    nbformat.write(nbformat.v4.new_notebook(), str(nb))
    return sync(nb)["ledgers"]["main"]


def test_verify_uses_the_head_sealed_by_sync(tmp_path):
    """A deleted or edited last line leaves a valid chain; the head ``sync`` sealed in the
    notebook catches it. Events appended after sync are reported, not failed."""
    nb = tmp_path / "nb.ipynb"
    led = build(nb)
    sealed = _synced(nb)
    r = cli("verify", nb)
    assert r.returncode == 0 and "is the head sealed by sync" in r.stdout, r.stdout
    good = led.path.read_bytes()
    led.path.write_bytes(b"".join(good.splitlines(keepends=True)[:-1]))
    for where in (nb, tmp_path / "nb.dsh", led.path):
        r = cli("verify", where)
        assert r.returncode == 1 and "the ledger ends before the head sealed by sync" in r.stdout, (where, r.stdout)
    led.path.write_bytes(good.replace(b'"revision":1}', b'"revision":1 }'))
    r = cli("verify", nb, "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["sealed"]["status"] == "differs"
    led.path.write_bytes(good)
    assert led.append("escalated", {"subject": {"kind": "decision", "id": "d1"}, "reason": "risk"}, Actor("runtime"))["ok"]
    r = cli("verify", nb)
    assert r.returncode == 0 and f"line {sealed['events'] + 1}; 1 event(s) were appended" in r.stdout, r.stdout


def test_a_damaged_ledger_gives_clear_errors_never_a_traceback(tmp_path):
    nb = tmp_path / "nb.ipynb"
    led = build(nb)
    with open(led.path, "ab") as f:
        f.write(b"garbage\n")
    r = cli("verify", nb)
    assert r.returncode == 1 and "line 13: invalid JSON" in r.stdout and "Traceback" not in r.stderr
    r = cli("decide", nb, "--decision", "d1", "--verdict", "approved", input="yes\n")
    assert r.returncode == 1 and "LEDGER_STATE" in r.stderr and "damaged at line 13" in r.stderr
    assert "Traceback" not in r.stderr
    import nbformat

    nbformat.write(nbformat.v4.new_notebook(), str(nb))
    env = {**os.environ, "LOGNAME": "ana", "USER": "ana"}
    r = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "verify", str(nb)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 1 and "not a readable notebook" not in r.stderr and "Traceback" not in r.stderr
    assert "ledger/main.jsonl" in r.stdout and "line 13: invalid JSON" in r.stdout, r.stdout


def test_ledger_magic_verify_uses_the_sealed_head(sh):  # noqa: F811
    nb = sh.folder / "nb.ipynb"
    led = build(nb)
    _synced(nb)
    r, cap = sh.run("%ledger verify")
    out = [o for o in cap.outputs if "application/vnd.dsh.ledger+json" in o.data][-1]
    assert r.error_in_exec is None and out.data["application/vnd.dsh.ledger+json"]["verify"]["ok"] is True
    led.path.write_bytes(b"".join(led.path.read_bytes().splitlines(keepends=True)[:-1]))
    r, cap = sh.run("%ledger verify")
    out = [o for o in cap.outputs if "application/vnd.dsh.ledger+json" in o.data][-1]
    assert out.data["application/vnd.dsh.ledger+json"]["verify"]["ok"] is False
    assert "ends before the head sealed by sync" in out.data["text/plain"]
    # a ledger path that cannot be a ledger: one clear line, no traceback
    led.path.unlink()
    led.path.mkdir()
    r, cap = sh.run("%ledger verify")
    assert r.error_in_exec is not None and "it is a folder, not a file" in str(r.error_in_exec)


def test_a_too_long_name_is_refused_cleanly(tmp_path, sh):  # noqa: F811
    """A 300-character --name exceeded the file-name limit (OSError tracebacks); the shared NAME
    caps it at 100 characters: exit 2 in the CLI, a UsageError in the magic."""
    from dsh_notebook.artifact.paths import NAME, NAME_MAX
    from dsh_notebook.notebook.ledger import LedgerUsageError, parse

    assert NAME_MAX == 100 and NAME.fullmatch("a" * 100) and not NAME.fullmatch("a" * 101)
    nb = tmp_path / "nb.ipynb"
    build(nb)
    long = "a" * 300
    for verb, extra in (("show", ()), ("verify", ()), ("export", ()),
                        ("decide", ("--decision", "d1", "--verdict", "approved"))):
        r = cli(verb, nb, "--name", long, *extra, input="yes\n")
        assert r.returncode == 2 and "is not a ledger name" in r.stderr and "at most 100" in r.stderr, (verb, r.stderr)
        assert "Traceback" not in r.stderr and long not in r.stderr
    for action in ("show", "explore", "verify", "export"):
        try:
            parse(f"{action} --name {long}")
        except LedgerUsageError as exc:
            assert "at most 100 characters" in str(exc)
        else:
            raise AssertionError(action)
    from IPython.core.error import UsageError

    for src in (f"%ledger show --name {long}", f"%ledger explore --name {long}"):
        r, _cap = sh.run(src)
        assert isinstance(r.error_in_exec, UsageError) and "not a ledger name" in str(r.error_in_exec)


def test_export_of_a_damaged_ledger_warns_and_exits_1(tmp_path):
    nb = tmp_path / "nb.ipynb"
    led = build(nb)
    with open(led.path, "ab") as f:
        f.write(b"garbage\n")
    r = cli("export", nb)
    assert r.returncode == 1 and "warning: the ledger main.jsonl does not verify" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "wrote" in r.stdout


def test_the_magic_and_the_command_line_parse_one_table(tmp_path):
    """``%ledger`` and ``dsh-notebook ledger`` take their options from one table (issue 22, item 2):
    the same choices, defaults and names for the shared actions, and an option the action does not
    take is named (nothing is read or written)."""
    import argparse

    from dsh_notebook.artifact.ledger_args import ACTIONS, CLI_ACTIONS, MAGIC_ACTIONS
    from dsh_notebook.cli import build_parser
    from dsh_notebook.notebook.ledger import LedgerUsageError, parse

    cli_parser = build_parser()
    for action in sorted(set(CLI_ACTIONS) & set(MAGIC_ACTIONS)):
        extra = ["--format", "bibtex"] if "format" in ACTIONS[action]["options"] else []
        magic = parse(" ".join([action, "--name", "other", *extra]))
        shell = cli_parser.parse_args(["ledger", action, "nb.ipynb", "--name", "other", *extra])
        assert (magic.action, magic.name, getattr(magic, "format", None)) == (
            shell.ledger_action, shell.name, getattr(shell, "format", None))
    for bad, problem in (("export --format pdf", "invalid choice: 'pdf'"), ("show --format md", "--format is for export"),
                         ("verify --json", "unrecognized arguments: --json")):
        try:
            parse(bad)
        except LedgerUsageError as exc:
            assert problem in str(exc), (bad, str(exc))
        else:
            raise AssertionError(bad)
    try:
        cli_parser.parse_args(["ledger", "export", "nb.ipynb", "--format", "pdf"])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("the command line took --format pdf")
    assert isinstance(cli_parser, argparse.ArgumentParser)
    nb = tmp_path / "nb.ipynb"
    r = cli("export", nb, "--format", "pdf")
    assert r.returncode == 2 and "invalid choice: 'pdf'" in r.stderr and not (tmp_path / "nb.dsh").exists()
