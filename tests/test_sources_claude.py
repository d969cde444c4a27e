"""Claude Code transcripts (dsh_notebook.reviewer.sources.claude): every real fixture in
../shared/fixtures/logs/claude, then synthetic transcripts for joined text blocks, copies,
sidechains, titles, errors, a torn last line and listing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dsh_notebook.reviewer.sources import claude


def _logs_dir() -> Path:
    shared = os.environ.get("DSH_SHARED_DIR")
    base = Path(shared) if shared else Path(__file__).resolve().parents[2] / "shared"
    return base / "fixtures" / "logs"


CLAUDE_DIR = _logs_dir() / "claude"
needs_fixtures = pytest.mark.skipif(
    not CLAUDE_DIR.is_dir(), reason=f"shared fixtures not found at {CLAUDE_DIR} (set DSH_SHARED_DIR to the shared folder)"
)

CLEAR = "claude-2.0.29-injected-clear-command-askuserquestion-pending-plan.jsonl"
THREE = "claude-2.0.64-three-turns-write-edit-bash.jsonl"
THINK = "claude-2.1.7-thinking-summaries-stop-hook.jsonl"

#: per fixture: markers in order, title, session id
EXPECTED = {
    CLEAR: (
        ["U1", "A1", "T1", "A1", "T1", "A1", "T1"],
        "Let's explore scrolling, scroll to bottom, scrolling when new messages are added",
        "06381696-0074-49f8-863e-6ad4fac507f9",
    ),
    THREE: (
        ["U1", "A1", "T1", "T1", "T1", "A1", "U2", "T2", "T2", "A2", "U3", "T3", "A3"],
        "create hello.py, md and js",
        "4c2ddfdc-b619-4525-8d03-1950fb1b0257",
    ),
    THINK: (
        ["U1", "A1", "U2", "A2", "U3", "A3", "T3", "A3", "U4", "A4", "T4", "A4"],
        "Claude Code Tools Overview",
        "3fb74381-1bf4-475e-8c6f-442d872b1bcf",
    ),
}
INJECTED_MARKS = ("Caveat: The messages below", "<command-name>", "<command-message>", "<local-command-stdout>")


def fixture(name: str) -> Path:
    return CLAUDE_DIR / name


def texts(utterances, speaker=None) -> list[str]:
    return [u.text for u in utterances if speaker is None or u.speaker == speaker]


def raw_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------- every fixture


@needs_fixtures
def test_every_fixture_file_has_expectations():
    names = sorted(p.name for p in CLAUDE_DIR.iterdir() if p.is_file())
    assert names == sorted(EXPECTED), "a Claude fixture was added or removed: give it its expectations here"


@needs_fixtures
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_markers_title_and_counts(name):
    markers, title, sid = EXPECTED[name]
    us = claude.read(fixture(name))
    assert [u.marker for u in us] == markers
    conv = claude.conversation(fixture(name))
    assert (conv.source, conv.id, conv.title) == ("claude", sid, title)
    assert (conv.user_messages, conv.ai_messages) == (sum(m[0] == "U" for m in markers), sum(m[0] == "A" for m in markers))
    assert conv.started and conv.updated and conv.started <= conv.updated


@needs_fixtures
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_tool_results_are_tool_utterances_never_user_turns(name):
    rows = raw_rows(fixture(name))
    result_lines = {
        f"line:{i}"
        for i, r in enumerate(rows, 1)
        if r.get("type") == "user"
        and isinstance(r["message"]["content"], list)
        and any(b.get("type") == "tool_result" for b in r["message"]["content"])
    }
    us = claude.read(fixture(name))
    assert result_lines <= {u.key for u in us if u.speaker == "tool"}
    assert not result_lines & {u.key for u in us if u.speaker == "user"}
    for text in texts(us, "user"):
        assert not any(mark in text for mark in INJECTED_MARKS)


@needs_fixtures
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_assistant_text_block_is_read_once_and_no_thinking(name):
    rows = raw_rows(fixture(name))
    blocks = [
        b["text"]
        for r in rows
        if r.get("type") == "assistant"
        for b in r["message"]["content"]
        if b.get("type") == "text" and b["text"].strip()
    ]
    thinking = [b["thinking"] for r in rows if r.get("type") == "assistant" for b in r["message"]["content"] if b.get("type") == "thinking"]
    us = claude.read(fixture(name))
    assert texts(us, "assistant") == [b.strip("\n") for b in blocks]  # one text block per message in these files
    for t in thinking:
        assert not any(t[:60] in u.text for u in us)


@needs_fixtures
def test_clear_command_injection_skipped_and_pending_exit_plan_mode():
    us = claude.read(fixture(CLEAR))
    first = us[0]
    assert (first.marker, first.key) == ("U1", "line:6")
    assert first.text.startswith("Let's explore scrolling, scroll to bottom, scrolling when new messages are added.")
    assert "/clear" not in first.text
    ask = next(u for u in us if u.text.startswith("AskUserQuestion"))
    assert ask.speaker == "tool" and "User has answered your questions" in ask.text and ask.key == "line:12"
    task = next(u for u in us if u.text.startswith("Task: "))
    assert task.key == "line:9" and "subagent_type=Plan" in task.text
    last = us[-1]
    assert (last.marker, last.speaker, last.key) == ("T1", "tool", "line:14")
    assert last.text.startswith("ExitPlanMode\n## Plan: Implement AI Elements Scrolling Components")
    assert last.text.endswith("(no result yet)")


@needs_fixtures
def test_three_turns_user_words_and_tool_shapes():
    us = claude.read(fixture(THREE))
    assert texts(us, "user") == ["create hello.py, md and js", "update py with one liner comment", "delete js"]
    tools = texts(us, "tool")
    assert tools[0].startswith("Write: file_path=/tmp/private/hello.py; content=#!/usr/bin/env python3")
    assert tools[0].endswith("File created successfully at: /tmp/private/hello.py")
    assert tools[3].startswith("Read: file_path=/tmp/private/hello.py\n")
    assert tools[-1] == "Bash: command=rm hello.js; description=Delete hello.js file\n(no output)"
    assert [u.key for u in us if u.speaker == "tool"] == ["line:8", "line:10", "line:12", "line:17", "line:19", "line:24"]


@needs_fixtures
def test_summary_lines_system_lines_and_thinking_hold_no_text():
    us = claude.read(fixture(THINK))
    assert texts(us, "user") == ["show tools", "hi", "expore current repo and provide highlevel information", "tell me more about agent module"]
    assert not any("Conversation Cleared" in u.text or "stop_hook_summary" in u.text for u in us)
    assert texts(us, "assistant")[0].startswith("# Available Tools")


# --------------------------------------------------------------------------- synthetic


def row(kind: str, content, n: int, mid: str | None = None, **extra) -> str:
    message = {"role": kind, "content": content}
    if mid:
        message["id"] = mid
    return json.dumps(
        {"type": kind, "uuid": f"u-{n}", "sessionId": "s-1", "timestamp": f"2026-01-01T10:00:{n:02d}.000Z", "message": message, **extra}
    )


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def summary(us) -> list[tuple[str, str]]:
    return [(u.marker, u.text) for u in us]


def test_text_blocks_of_one_message_are_joined_copies_skipped_and_sidechains_labelled(tmp_path):
    lines = [
        row("user", "do it", 1),
        row("assistant", [{"type": "thinking", "thinking": "hmm", "signature": "x"}], 2, "m1"),
        row("assistant", [{"type": "text", "text": "First part."}], 3, "m1"),
        row("assistant", [{"type": "text", "text": "Second part."}], 4, "m1"),
        row("assistant", [{"type": "text", "text": "Second part."}], 4, "m1"),  # the same line written twice
        row("user", "sub-agent prompt", 5, isSidechain=True),
        row("assistant", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "false"}}], 6, "m1"),
        row("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True}], 7),
        row("assistant", [{"type": "text", "text": "It failed."}], 8, "m2"),
        row("assistant", [{"type": "text", "text": "Trying again."}], 9, "m3"),
        row("user", [{"type": "text", "text": "<system-reminder>x</system-reminder>"}, {"type": "text", "text": "thanks"}, {"type": "image", "source": {}}], 10),
        row("user", "[Request interrupted by user]", 11),
        row("user", "meta words", 12, isMeta=True),
        row("user", "<local-command-stderr>oops</local-command-stderr>", 13),
        json.dumps({"type": "system", "subtype": "turn_duration", "content": "x"}),
        '{"type":"assistant","message":{"content":[{"type":"text","text":"torn',
    ]
    us = claude.read(write(tmp_path / "t.jsonl", lines))
    assert summary(us) == [
        ("U1", "do it"),
        ("A1", "First part.\n\nSecond part."),
        ("N1", "[sub-agent] 1 line(s) of a sub-agent's own transcript (Claude Code sidechain) stand here; they are "
               "not part of this conversation: the sub-agent's result is the tool output that follows."),
        ("T1", "Bash: command=false\n(error) boom"),
        ("A1", "It failed."),
        ("A1", "Trying again."),
        ("U2", "thanks"),
    ]
    assert [u.key for u in us] == ["line:1", "line:3", "line:6", "line:8", "line:9", "line:10", "line:11"]


def test_titles_custom_then_ai_then_summary_of_this_file_then_last_summary(tmp_path):
    base = [row("user", "a first prompt", 1), row("assistant", [{"type": "text", "text": "ok"}], 2, "m")]
    other = json.dumps({"type": "summary", "summary": "About another file", "leafUuid": "elsewhere"})
    mine = json.dumps({"type": "summary", "summary": "About this file", "leafUuid": "u-2"})
    last = json.dumps({"type": "summary", "summary": "Newest summary line", "leafUuid": "elsewhere-2"})
    assert claude.conversation(write(tmp_path / "a.jsonl", base)).title == "a first prompt"
    assert claude.conversation(write(tmp_path / "b.jsonl", [other, last, *base])).title == "Newest summary line"
    assert claude.conversation(write(tmp_path / "c.jsonl", [other, mine, last, *base])).title == "About this file"
    titled = [
        other,
        *base,
        json.dumps({"type": "ai-title", "aiTitle": "AI title"}),
        json.dumps({"type": "custom-title", "customTitle": "My name"}),
        json.dumps({"type": "ai-title", "aiTitle": "Later AI title"}),
    ]
    assert claude.conversation(write(tmp_path / "d.jsonl", titled)).title == "My name"
    assert claude.conversation(write(tmp_path / "e.jsonl", [json.dumps({"type": "ai-title", "aiTitle": "AI title"}), *base])).title == "AI title"
    long = claude.conversation(write(tmp_path / "f.jsonl", [row("user", "word " * 40, 1)]))
    assert long.title == ("word " * 16).strip() and len(long.title) == 79


def test_listing_with_config_dir_projects_and_agent_files(tmp_path, monkeypatch):
    config = tmp_path / "claude-config"
    proj = config / "projects" / "-home-me-proj"
    write(proj / "s-old.jsonl", [row("user", "older", 1), row("assistant", [{"type": "text", "text": "ok"}], 2, "m")])
    later = [json.dumps({"type": "user", "uuid": "x", "sessionId": "s-new", "timestamp": "2026-03-01T00:00:00.000Z", "message": {"role": "user", "content": "newer"}})]
    write(config / "projects" / "-home-me-web" / "s-new.jsonl", later)
    write(proj / "agent-1234.jsonl", [row("user", "a sub-agent's own file", 1)])
    write(proj / "empty.jsonl", [json.dumps({"type": "summary", "summary": "only a summary", "leafUuid": "x"})])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    assert claude.default_root() == config
    convs = claude.list_conversations()
    assert [(c.id, c.title, c.user_messages, c.ai_messages) for c in convs] == [("s-new", "newer", 1, 0), ("s-1", "older", 1, 1)]
    assert [c.id for c in claude.list_conversations(config / "projects")] == ["s-new", "s-1"]
    assert [c.id for c in claude.list_conversations(proj)] == ["s-1"]
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert claude.default_root() == Path.home() / ".claude"


def test_long_tool_result_is_cut(tmp_path):
    lines = [
        row("user", "read it", 1),
        row("assistant", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/big"}}], 2, "m"),
        row("user", [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "y" * 5000}]}], 3),
    ]
    [_, tool] = claude.read(write(tmp_path / "t.jsonl", lines))
    assert tool.text.startswith("Read: file_path=/big\nyyy") and tool.text.endswith("[… 3,000 more characters not shown]")
