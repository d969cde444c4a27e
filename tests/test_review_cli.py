"""``dsh-notebook review list`` and ``review transcript`` (spec: reviewer.md "Surface"), and the
source registry behind them (dsh_notebook.reviewer.sources): every fixture kind listed and
printed, ``--json`` exactly ``{marker, speaker, turn, text}`` items, errors as one line and
exit 2. Real logs come from ../shared/fixtures/logs (DSH_SHARED_DIR overrides)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_notebook.cli import main
from dsh_notebook.llm.session import SessionLog
from dsh_notebook.reviewer import sources
from dsh_notebook.reviewer.transcript import Utterance


def _logs_dir() -> Path:
    shared = os.environ.get("DSH_SHARED_DIR")
    base = Path(shared) if shared else Path(__file__).resolve().parents[2] / "shared"
    return base / "fixtures" / "logs"


LOGS = _logs_dir()
needs_fixtures = pytest.mark.skipif(not LOGS.is_dir(), reason=f"shared fixtures not found at {LOGS} "
                                    "(set DSH_SHARED_DIR to the shared folder)")

CODEX_NAME = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"


def _dsh_root(tmp: Path) -> tuple[Path, Path]:
    """A harness session root in the current layout: ``--<cwd>--/<id>/session.jsonl``."""
    target = tmp / "dsh" / "--home-user-proj--" / "8c1d42ba-5f00-44bb-aaa1-0832fae5c24a" / "session.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copy(LOGS / "dsh" / "dsh-g0-2026-06-tool-call-turn.jsonl", target)
    return tmp / "dsh", target


def _codex_root(tmp: Path) -> tuple[Path, Path]:
    """A Codex home: ``sessions/YYYY/MM/DD/rollout-<ts>-<thread>.jsonl``."""
    target = tmp / "codex" / "sessions" / "2026" / "05" / "11" / CODEX_NAME
    target.parent.mkdir(parents=True)
    shutil.copy(LOGS / "codex" / "codex-0.125-tui-two-turns-both-assistant-forms.jsonl", target)
    return tmp / "codex", target


def _claude_root(tmp: Path) -> tuple[Path, Path]:
    target = tmp / "claude" / "projects" / "-tmp-private" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copy(LOGS / "claude" / "claude-2.0.64-three-turns-write-edit-bash.jsonl", target)
    return tmp / "claude", target


def _chat_root(tmp: Path) -> tuple[Path, Path]:
    target = tmp / "chats" / "notes" / "jupyter-ai-acp-claude-tool-calls-fr.chat"
    target.parent.mkdir(parents=True)
    shutil.copy(LOGS / "jupyter-chat" / target.name, target)
    return tmp / "chats", target


def _notebook_root(tmp: Path) -> tuple[Path, Path]:
    """A notebook whose sidecar holds one ``%%chat`` session written by SessionLog."""
    nb = tmp / "report.ipynb"
    nb.write_text("{}", encoding="utf-8")
    with SessionLog.create(tmp / "report.dsh" / "sessions", model="deepseek-v4-flash", name="units") as log:
        log.append("turn/start", turn=1)
        log.append("user/message", text="How long does 3 km take at 5 km/h?\nShow the units.")
        call = {"id": "call_1", "name": "eval", "arguments": '{"formula": "3 km / (5 km/h)"}'}
        log.append("assistant/message", text="", tool_calls=[call])
        log.append("tool/call", **call)
        log.append("tool/result", id="call_1", name="eval", ok=True, content={"ok": True, "value": "0.6 h"})
        log.append("assistant/message", text="It takes 0.6 h (36 min).", tool_calls=[])
        log.append("turn/end", status="completed")
    return nb, log.path


# kind -> (builder, conversation id or None (the file's stem), (user, AI) counts, start of the first utterance)
KINDS = {
    "dsh": (_dsh_root, "8c1d42ba-5f00-44bb-aaa1-0832fae5c24a", (1, 1),
            "[U1] Use the bash tool to run exactly: echo SNAPSHOT_OK."),
    "codex": (_codex_root, "019e1625-789d-76c0-80ab-3724b5ddb799", (2, 13), "[U1] show tools\n\n[T1] exec_command:"),
    "claude": (_claude_root, "4c2ddfdc-b619-4525-8d03-1950fb1b0257", (3, 4), "[U1] create hello.py, md and js\n\n[A1] "),
    "chat": (_chat_root, "c59a1c4d-5365-4a3c-9ee4-2accf4b63aea", (2, 4), "[U1] hi\n\n[A1] hi. ready.\n\n[U2] donne moi"),
    "notebook": (_notebook_root, None, (1, 1),
                 "[U1] How long does 3 km take at 5 km/h?\nShow the units.\n\n[T1] eval: formula=3 km / (5 km/h)\n"),
}


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def expect_error(capsys, *argv, says: str) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert says in err, err
    return err


@needs_fixtures
@pytest.mark.parametrize("kind", list(KINDS))
def test_list_every_source(kind, tmp_path, capsys):
    build, cid, (users, ais), _ = KINDS[kind]
    root, path = build(tmp_path)
    cid = cid or path.stem
    code, out, err = run(capsys, "review", "list", "--source", kind, "--root", str(root), "--json")
    assert code == 0, err
    items = json.loads(out)
    assert [c["id"] for c in items] == [cid]
    c = items[0]
    assert set(c) == {"source", "id", "path", "title", "started", "updated", "user_messages", "ai_messages"}
    assert (c["source"], Path(c["path"]).resolve(), c["user_messages"], c["ai_messages"]) == \
        (kind, path.resolve(), users, ais)
    assert c["started"] and c["updated"] and c["started"] <= c["updated"]

    code, out, err = run(capsys, "review", "list", "--source", kind, "--root", str(root))
    assert code == 0, err
    lines = out.splitlines()
    title50 = c["title"] if len(c["title"]) <= 50 else c["title"][:49] + "…"
    assert lines[0] == f"1 {kind} conversation(s) under {sources.root_of(kind, root)}:"
    assert re.split(r"\s{2,}", lines[1]) == ["id", "title", "started (UTC)", "updated (UTC)", "user", "AI", "target"]
    assert set(lines[2]) == {"-", " "}
    assert re.split(r"\s{2,}", lines[3]) == [cid, title50, c["started"][:16].replace("T", " "),
                                             c["updated"][:16].replace("T", " "), str(users), str(ais),
                                             f"{kind}:{c['path']}"]


@needs_fixtures
@pytest.mark.parametrize("kind", list(KINDS))
def test_transcript_every_source(kind, tmp_path, capsys):
    build, _, (users, ais), start = KINDS[kind]
    _, path = build(tmp_path)
    target = f"{kind}:{path}"
    expected = sources.module(kind).read(path)

    code, out, err = run(capsys, "review", "transcript", target)
    assert code == 0, err
    assert out == sources.transcript_text(expected) + "\n"
    assert out.startswith(start)

    code, out, err = run(capsys, "review", "transcript", target, "--json")
    assert code == 0, err
    items = json.loads(out)  # only the array: nothing before or after it
    assert isinstance(items, list) and len(items) == len(expected)
    assert all(set(i) == {"marker", "speaker", "turn", "text"} for i in items)
    assert items == [u.as_dict() for u in expected]
    assert all(i["marker"] == {"user": "U", "assistant": "A", "tool": "T"}[i["speaker"]] + str(i["turn"])
               for i in items)
    assert (sum(i["speaker"] == "user" for i in items), sum(i["speaker"] == "assistant" for i in items)) == \
        (users, ais)
    assert [i["turn"] for i in items] == sorted(i["turn"] for i in items)


@needs_fixtures
def test_every_fixture_reads_as_its_own_kind_only(capsys):
    """The whole fixture folder: each file is a transcript of its own kind and an error as any other."""
    folders = {"dsh": "dsh", "codex": "codex", "claude": "claude", "jupyter-chat": "chat"}
    for folder, kind in folders.items():
        for f in sorted((LOGS / folder).iterdir()):
            code, out, err = run(capsys, "review", "transcript", f"{kind}:{f}", "--json")
            assert code == 0 and json.loads(out), (f, err)
            for other in sources.SOURCES:
                if other != kind:
                    expect_error(capsys, "review", "transcript", f"{other}:{f}", says=str(f))


@needs_fixtures
def test_zstd_session_and_multiline_text(capsys):
    f = LOGS / "dsh" / "dsh-g2-2026-08-desktop-turns1-2.jsonl.zstd"
    code, out, err = run(capsys, "review", "transcript", f"dsh:{f}", "--json")
    items = json.loads(out)
    assert code == 0 and items[0] == {"marker": "U1", "speaker": "user", "turn": 1, "text": "测一下有没有写入权限"}
    assert "\\u" not in out  # ensure_ascii=False
    code, out, _ = run(capsys, "review", "transcript", f"dsh:{f}")
    assert out.startswith("[U1] 测一下有没有写入权限\n\n[T1] write: ")


def test_transcript_text_is_the_numbered_blocks():
    u = [Utterance("U1", "user", 1, "first line\nsecond line", "seq:1"),
         Utterance("A1", "assistant", 1, "answer", "seq:2"),
         Utterance("T1", "tool", 1, "eval: x=1\n1", "seq:3")]
    text = sources.transcript_text(u)
    assert text == "[U1] first line\nsecond line\n\n[A1] answer\n\n[T1] eval: x=1\n1"
    assert sources.transcript_text(u) == text and sources.transcript_text([]) == ""


def test_registry():
    assert sources.SOURCES == ("notebook", "dsh", "codex", "claude", "chat")
    assert sources.module("chat").__name__.endswith(".jupyter_chat")
    assert sources.module("dsh").SOURCE == "dsh"
    with pytest.raises(ValueError, match="notebook, dsh, codex, claude, chat"):
        sources.module("slack")


def test_parse_target(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text("{}\n", encoding="utf-8")
    assert sources.parse_target(f"codex:{f}") == ("codex", f)
    with pytest.raises(ValueError, match=r"codex:PATH.*claude:PATH.*chat:PATH.*the file .* exists"):
        sources.parse_target(f"slack:{f}")
    with pytest.raises(ValueError, match="no source prefix.*does not exist"):
        sources.parse_target(str(tmp_path / "nope.jsonl"))
    with pytest.raises(ValueError, match="no such file"):
        sources.parse_target(f"dsh:{tmp_path / 'nope.jsonl'}")
    with pytest.raises(ValueError, match="not a file"):
        sources.parse_target(f"claude:{tmp_path}")
    with pytest.raises(ValueError, match="notebook:PATH"):
        sources.parse_target("notebook:")


def test_list_source_needs_a_notebook_root(tmp_path):
    with pytest.raises(ValueError, match="--root"):
        sources.list_source("notebook")
    with pytest.raises(ValueError, match="no such notebook or sidecar folder"):
        sources.list_source("notebook", tmp_path / "gone.dsh")
    (tmp_path / "empty.dsh").mkdir()
    assert sources.list_source("notebook", tmp_path / "empty.dsh") == []


def test_errors_are_one_line(tmp_path, capsys):
    text = tmp_path / "notes.txt"
    text.write_text("just some notes\nnot a log\n", encoding="utf-8")
    err = expect_error(capsys, "review", "transcript", f"slack:{text}", says="unknown source 'slack'")
    assert "dsh:PATH" in err and "codex:PATH" in err and "exists" in err
    expect_error(capsys, "review", "transcript", str(text), says="no source prefix")
    expect_error(capsys, "review", "transcript", f"dsh:{tmp_path / 'gone.jsonl'}", says="no such file")
    expect_error(capsys, "review", "transcript", f"dsh:{text}", says="is not a DeepSeek Harness session log")
    expect_error(capsys, "review", "transcript", f"chat:{text}", says="jupyterlab-chat")
    expect_error(capsys, "review", "transcript", f"notebook:{tmp_path}", says="not a file")
    expect_error(capsys, "review", "list", "--source", "slack", says="unknown source 'slack'")
    expect_error(capsys, "review", "list", "--source", "notebook", says="needs --root")
    expect_error(capsys, "review", "list", "--source", "codex", "--root", str(tmp_path / "gone"), says="no such folder")


def test_notebook_target_is_a_session_not_the_notebook(tmp_path, capsys):
    nb, _ = _notebook_root(tmp_path)
    err = expect_error(capsys, "review", "transcript", f"notebook:{nb}", says="is a notebook")
    assert "review list --source notebook --root" in err
    # the sidecar folder is a root as good as the notebook
    code, out, _ = run(capsys, "review", "list", "--source", "notebook", "--root", str(tmp_path / "report.dsh"))
    assert code == 0 and "How long does 3 km take at 5 km/h? Show the units." in out


def test_empty_listings(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    for kind in ("dsh", "codex", "claude", "chat"):
        code, out, err = run(capsys, "review", "list", "--source", kind, "--root", str(tmp_path / "empty"))
        assert (code, err) == (0, "")
        assert out == f"no {kind} conversations found under {tmp_path / 'empty'}\n"
        code, out, _ = run(capsys, "review", "list", "--source", kind, "--root", str(tmp_path / "empty"), "--json")
        assert (code, json.loads(out)) == (0, [])
    nb = tmp_path / "fresh.ipynb"
    nb.write_text("{}", encoding="utf-8")
    code, out, _ = run(capsys, "review", "list", "--source", "notebook", "--root", str(nb))
    assert code == 0 and out == f"no notebook conversations found under {tmp_path / 'fresh.dsh' / 'sessions'}\n"


def test_default_source_is_dsh(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DSH_SESSIONS_DIR", str(tmp_path / "sessions"))
    code, out, _ = run(capsys, "review", "list")
    assert code == 0 and out == f"no dsh conversations found under {tmp_path / 'sessions'}\n"


def test_a_long_title_is_cut_to_50(tmp_path, capsys):
    long = "word " * 30
    with SessionLog.create(tmp_path / "x.dsh" / "sessions", model="m") as log:
        log.append("user/message", text=long)
    code, out, _ = run(capsys, "review", "list", "--source", "notebook", "--root", str(tmp_path / "x.dsh"))
    row = out.splitlines()[3]
    title = row[len(log.id):].strip().split("  ")[0]
    assert code == 0 and len(title) == 50 and title.endswith("…")


@needs_fixtures
def test_subprocess_transcript_json(tmp_path):
    f = LOGS / "claude" / "claude-2.0.64-three-turns-write-edit-bash.jsonl"
    p = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "review", "transcript", f"claude:{f}", "--json"],
                       capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert p.returncode == 0, p.stderr
    items = json.loads(p.stdout)
    assert items[0] == {"marker": "U1", "speaker": "user", "turn": 1, "text": "create hello.py, md and js"}
    p = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "review", "transcript", f"dsh:{f}"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1
    assert "Traceback" not in p.stderr
