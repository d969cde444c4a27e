"""Codex CLI rollouts as transcripts (dsh_notebook.reviewer.sources.codex): every real fixture
in ../shared/fixtures/logs/codex, then synthetic homes for the rest (``.jsonl.zst``, the plain
file winning, continuation files, the bare pre-September-2025 form, a torn last line,
listing with titles and counts)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import zstandard

from dsh_notebook.reviewer.sources import codex


def _logs_dir() -> Path:
    shared = os.environ.get("DSH_SHARED_DIR")
    base = Path(shared) if shared else Path(__file__).resolve().parents[2] / "shared"
    return base / "fixtures" / "logs"


CODEX_DIR = _logs_dir() / "codex"
needs_fixtures = pytest.mark.skipif(
    not CODEX_DIR.is_dir(), reason=f"shared fixtures not found at {CODEX_DIR} (set DSH_SHARED_DIR to the shared folder)"
)

V125 = "codex-0.125-tui-two-turns-both-assistant-forms.jsonl"
V040 = "codex-0.40-vscode-excerpt-abort-patch-rejected-multiturn.jsonl"
V077 = "codex-0.77-exec-unanswered-shell-ghost-snapshot.jsonl"

#: per fixture: (user, AI, tool) counts, the user prompts in order, title, thread id
EXPECTED = {
    V125: (
        (2, 13, 99),
        ["show tools", "let's update the defailt context compart to 90 in env var"],
        "show tools",
        "019e1625-789d-76c0-80ab-3724b5ddb799",
    ),
    V040: (
        (3, 2, 28),
        [
            "Updating a team to assign a lead or change from viewer to contributor is VERY\n  slow.",
            "Why do we need stats for the team?",
            "Is this done?",
        ],
        "Updating a team to assign a lead or change from viewer to contributor is VERY sl",
        "01997e76-d124-7592-9cac-2ec05abbca08",
    ),
    V077: (
        (1, 0, 3),
        ["what is current repository about? summarize purpuse and explain goals"],
        "what is current repository about? summarize purpuse and explain goals",
        "019b7f94-51b4-7593-922e-ba12b5b73b52",
    ),
}
INJECTED_MARKS = (
    "<environment_context>",
    "# AGENTS.md instructions for",
    "<INSTRUCTIONS>",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<skills_instructions>",
    "<plugins_instructions>",
    "# Context from my IDE setup:",
    "## My request for Codex:",
    "## Open tabs:",
)


def fixture(name: str) -> Path:
    return CODEX_DIR / name


def texts(utterances, speaker=None) -> list[str]:
    return [u.text for u in utterances if speaker is None or u.speaker == speaker]


def raw_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------- every fixture


@needs_fixtures
def test_every_fixture_file_has_expectations():
    names = sorted(p.name for p in CODEX_DIR.iterdir() if p.is_file())
    assert names == sorted(EXPECTED), "a Codex fixture was added or removed: give it its expectations here"


@needs_fixtures
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_counts_prompts_and_listing_entry(name):
    (n_user, n_ai, n_tool), prompts, title, thread = EXPECTED[name]
    us = codex.read(fixture(name))
    assert (len(texts(us, "user")), len(texts(us, "assistant")), len(texts(us, "tool"))) == (n_user, n_ai, n_tool)
    for got, want in zip(texts(us, "user"), prompts, strict=True):
        assert got.startswith(want)
    conv = codex.conversation(fixture(name))
    assert (conv.source, conv.id, conv.title) == ("codex", thread, title)
    assert (conv.user_messages, conv.ai_messages) == (n_user, n_ai)
    assert conv.started and conv.updated and conv.started <= conv.updated and conv.updated.endswith("Z")


@needs_fixtures
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_injected_context_in_user_utterances(name):
    for text in texts(codex.read(fixture(name)), "user"):
        assert not any(mark in text for mark in INJECTED_MARKS), text[:200]


@needs_fixtures
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_assistant_message_read_once(name):
    """Every assistant message is written as an ``agent_message`` event and again as a
    ``response_item``; each one is read exactly once, in the event's order and place."""
    records = raw_records(fixture(name))
    events = [r["payload"]["message"] for r in records if r["type"] == "event_msg" and r["payload"]["type"] == "agent_message"]
    items = [
        "".join(c["text"] for c in r["payload"]["content"])
        for r in records
        if r["type"] == "response_item" and r["payload"].get("role") == "assistant"
    ]
    assert events == items  # the fixture really has both forms, same text
    us = codex.read(fixture(name))
    assert texts(us, "assistant") == events
    event_lines = [f"line:{i}" for i, r in enumerate(records, 1) if r["payload"].get("type") == "agent_message"]
    assert [u.key for u in us if u.speaker == "assistant"] == event_lines


@needs_fixtures
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_keys_point_at_lines_of_the_file(name):
    n_lines = len(fixture(name).read_text(encoding="utf-8").splitlines())
    for u in codex.read(fixture(name)):
        m = re.fullmatch(r"line:(\d+)", u.key)
        assert m and 1 <= int(m.group(1)) <= n_lines


@needs_fixtures
def test_0125_thirteen_pairs_are_thirteen_utterances_and_final_answer_not_repeated():
    us = codex.read(fixture(V125))
    ai = [u for u in us if u.speaker == "assistant"]
    assert len(ai) == 13 and len({u.text for u in ai}) == 13
    assert [u.marker for u in ai].count("A1") == 1 and [u.marker for u in ai].count("A2") == 12
    # task_complete.last_agent_message repeats both turns' final answers: not read again
    finals = [r["payload"]["last_agent_message"] for r in raw_records(fixture(V125)) if r["payload"].get("type") == "task_complete"]
    assert len(finals) == 2
    for final in finals:
        assert texts(us, "assistant").count(final) == 1
    assert us[-1].speaker == "assistant" and us[-1].text.startswith("Implemented the default context compaction")


@needs_fixtures
def test_0125_injected_context_parts_and_developer_message_skipped():
    us = codex.read(fixture(V125))
    assert us[0].marker == "U1" and us[0].text == "show tools" and us[0].key == "line:6"
    assert not any("sandbox_mode" in u.text for u in us if u.speaker != "tool")


@needs_fixtures
def test_0125_tool_utterances():
    us = codex.read(fixture(V125))
    tools = texts(us, "tool")
    assert all(len(t) < 2400 for t in tools)  # call line (~300) + output (2,000) + note
    assert tools[0].startswith("exec_command: sed -n '1,180p'")
    # the poll that finished that command is named after it, and its output follows
    assert tools[1].startswith("write_stdin: session 48230 (sed -n '1,180p'") and "name: using-superpowers" in tools[1]
    assert any(t.startswith("apply_patch: *** Begin Patch") and "Success. Updated the following files" in t for t in tools)
    assert sum(t.startswith("web_search: ") for t in tools) == 3
    assert not any("Chunk ID:" in t or "Wall time:" in t for t in tools)


@needs_fixtures
def test_040_vscode_wrapper_keeps_only_the_request_and_tools_read():
    us = codex.read(fixture(V040))
    assert [u.marker for u in us if u.speaker != "tool"] == ["U1", "U2", "A2", "U3", "A3"]
    first = texts(us, "user")[0]
    assert first.endswith("Can we simplify this and speed it up?")
    tools = texts(us, "tool")
    assert tools[0].startswith('shell: rg "TeamSheet"\n(exit 0)\n')
    assert any("failed in sandbox" in t for t in tools)  # the sandbox denial
    assert tools[-1].startswith("shell: apply_patch <<'PATCH'") and tools[-1].endswith("patch rejected by user")
    assert any(t.startswith("update_plan: Add backend support") for t in tools)


@needs_fixtures
def test_077_unanswered_has_no_assistant_utterance_after_the_last_user_one():
    us = codex.read(fixture(V077))
    assert [u.marker for u in us] == ["U1", "T1", "T1", "T1"]
    last_user = max(i for i, u in enumerate(us) if u.speaker == "user")
    assert not any(u.speaker == "assistant" for u in us[last_user:])
    assert us[1].text.startswith("shell: ls\n(exit 0)\n")


# --------------------------------------------------------------------------- synthetic helpers

THREAD = "019a0000-0000-7000-8000-000000000001"
THREAD2 = "019a0000-0000-7000-8000-000000000002"
ROLLOUT2 = "019a0000-0000-7000-8000-0000000000ff"


def line(kind: str, payload: dict, ts: str = "2026-01-01T10:00:00.000Z") -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload})


def meta(thread: str = THREAD, cwd: str = "/home/me/proj", ts: str = "2026-01-01T10:00:00.000Z", **extra) -> str:
    return line("session_meta", {"id": thread, "timestamp": ts, "cwd": cwd, **extra}, ts)


def user(text: str, ts: str = "2026-01-01T10:00:01.000Z") -> list[str]:
    return [
        line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}, ts),
        line("event_msg", {"type": "user_message", "message": text}, ts),
    ]


def ai(text: str, ts: str = "2026-01-01T10:00:02.000Z") -> list[str]:
    return [
        line("event_msg", {"type": "agent_message", "message": text}, ts),
        line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}, ts),
    ]


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rollout(home: Path, day: str, stamp: str, thread: str = THREAD, suffix: str = "", folder: str = "sessions") -> Path:
    y, m, d = day.split("-")
    base = home / folder if folder == "archived_sessions" else home / folder / y / m / d
    return base / f"rollout-{day}T{stamp}-{thread}{suffix}.jsonl"


def summary(us) -> list[tuple[str, str]]:
    return [(u.marker, u.text) for u in us]


# --------------------------------------------------------------------------- compressed files


@needs_fixtures
def test_zst_copy_reads_like_the_plain_file(tmp_path):
    plain = fixture(V125)
    target = rollout(tmp_path, "2026-05-11", "11-26-55", "019e1625-789d-76c0-80ab-3724b5ddb799").with_suffix(".jsonl.zst")
    target.parent.mkdir(parents=True)
    target.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    got, want = codex.read(target), codex.read(plain)
    assert [(u.marker, u.text, u.key) for u in got] == [(u.marker, u.text, u.key) for u in want]
    [conv] = codex.list_conversations(tmp_path)
    assert (conv.path, conv.title, conv.user_messages, conv.ai_messages) == (target, "show tools", 2, 13)


def test_zst_in_several_frames_and_cut_short(tmp_path):
    lines = [meta(), *user("first"), *ai("one"), *user("second"), *ai("two")]
    data = ("\n".join(lines) + "\n").encode()
    half = data.index(b"\n", len(data) // 2) + 1
    c = zstandard.ZstdCompressor()
    framed = c.compress(data[:half]) + c.compress(data[half:])
    path = write(rollout(tmp_path, "2026-01-01", "10-00-00"), [])
    zst = path.with_name(path.name + ".zst")
    path.unlink()
    zst.write_bytes(framed)
    assert summary(codex.read(zst)) == [("U1", "first"), ("A1", "one"), ("U2", "second"), ("A2", "two")]
    zst.write_bytes(framed[:-7])  # the last frame cut short: what came before is still read
    got = summary(codex.read(zst))
    assert got[:2] == [("U1", "first"), ("A1", "one")]


def test_plain_file_wins_over_its_zst_twin(tmp_path):
    plain = write(rollout(tmp_path, "2026-01-01", "10-00-00"), [meta(), *user("from the plain file"), *ai("plain")])
    zst = plain.with_name(plain.name + ".zst")
    zst.write_bytes(zstandard.ZstdCompressor().compress("\n".join([meta(), *user("from the zst")]).encode()))
    assert texts(codex.read(zst), "user") == ["from the plain file"]
    assert codex.thread_files(zst) == [plain]
    [conv] = codex.list_conversations(tmp_path)
    assert (conv.path, conv.title) == (plain, "from the plain file")


# --------------------------------------------------------------------------- threads over several files


def test_continuation_files_of_one_thread_are_read_oldest_first(tmp_path):
    first = write(rollout(tmp_path, "2026-01-01", "10-00-00"), [meta(), *user("start here"), *ai("started")])
    later = write(
        rollout(tmp_path, "2026-01-02", "09-00-00", suffix=f"_{ROLLOUT2}"),
        [meta(ts="2026-01-02T09:00:00.000Z"), *user("go on", "2026-01-02T09:00:01.000Z"), *ai("went on", "2026-01-02T09:00:02.000Z")],
    )
    other = write(rollout(tmp_path, "2026-01-01", "11-00-00", THREAD2), [meta(THREAD2), *user("another thread")])
    want = [("U1", "start here"), ("A1", "started"), ("U2", "go on"), ("A2", "went on")]
    assert codex.thread_files(later) == [first, later]
    assert summary(codex.read(first)) == want and summary(codex.read(later)) == want
    keys = [u.key for u in codex.read(first)]
    assert keys[0] == f"{first.name}:line:2" and keys[-1] == f"{later.name}:line:4"
    convs = {c.id: c for c in codex.list_conversations(tmp_path)}
    assert set(convs) == {THREAD, THREAD2}
    c = convs[THREAD]
    assert (c.path, c.user_messages, c.ai_messages, c.title) == (later, 2, 2, "start here")
    assert (c.started, c.updated) == ("2026-01-01T10:00:00.000Z", "2026-01-02T09:00:02.000Z")
    assert summary(codex.read(other)) == [("U1", "another thread")]


def test_a_file_outside_a_codex_home_finds_its_siblings_in_the_same_folder(tmp_path):
    a = write(tmp_path / f"rollout-2026-01-01T10-00-00-{THREAD}.jsonl", [meta(), *user("one")])
    b = write(tmp_path / f"rollout-2026-01-03T10-00-00-{THREAD}_{ROLLOUT2}.jsonl", [meta(), *user("two")])
    assert codex.thread_files(b) == [a, b]
    assert texts(codex.read(a), "user") == ["one", "two"]


# --------------------------------------------------------------------------- line forms


def test_bare_pre_september_2025_log(tmp_path):
    header = {"id": THREAD, "timestamp": "2025-08-20T13:20:47.060Z", "instructions": None, "git": {"branch": "main"}}
    lines = [
        json.dumps(header),
        '{"record_type":"state"}',
        json.dumps({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"}]}),
        json.dumps({"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": "list the files"}]}),
        json.dumps({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"}),
        json.dumps({"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["bash", "-lc", "ls"]}), "call_id": "c1"}),
        '{"record_type":"state"}',
        json.dumps({"type": "function_call_output", "call_id": "c1", "output": json.dumps({"output": "README.md\n", "metadata": {"exit_code": 0}})}),
        json.dumps({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One file: README.md."}]}),
    ]
    path = write(tmp_path / f"rollout-2025-08-20T13-20-47-{THREAD}.jsonl", lines)
    us = codex.read(path)
    assert summary(us) == [("U1", "list the files"), ("T1", "shell: ls\n(exit 0)\nREADME.md"), ("A1", "One file: README.md.")]
    assert [u.key for u in us] == ["line:4", "line:8", "line:9"]
    conv = codex.conversation(path)
    assert (conv.title, conv.started, conv.user_messages, conv.ai_messages) == ("list the files", "2025-08-20T13:20:47.060Z", 1, 1)


def test_torn_last_line_unknown_kinds_and_junk_lines_are_skipped(tmp_path):
    full = [meta(), *user("hello"), *ai("hi there")]
    lines = [
        *full,
        "",
        "[1, 2]",
        '"a string"',
        "not json at all",
        line("world_state", {"anything": 1}),
        line("inter_agent_communication", {"text": "x"}),
        line("something_new", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "nope"}]}),
        line("event_msg", {"type": "brand_new_event", "message": "nope"}),
        line("response_item", {"type": "brand_new_item", "text": "nope"}),
        line("compacted", {"message": "summary", "replacement_history": []}),
        line("event_msg", {"type": "agent_message", "message": "cut sho"})[:40],
    ]
    path = write(rollout(tmp_path, "2026-01-01", "10-00-00"), lines)
    got = summary(codex.read(path))
    assert got[:2] == [("U1", "hello"), ("A1", "hi there")]
    # the compaction record is labelled (a note, not conversation); nothing else is read
    assert len(got) == 3 and got[2][0] == "N1" and got[2][1].startswith("[compacted history] Codex compacted")


@needs_fixtures
def test_torn_copy_of_a_real_fixture(tmp_path):
    raw = fixture(V040).read_bytes()
    cut = raw[: raw.rindex(b'"type":"message","role":"assistant"') + 20]  # inside the last line
    path = tmp_path / V040
    path.write_bytes(cut)
    us = codex.read(path)
    assert [u.marker for u in us if u.speaker != "tool"] == ["U1", "U2", "A2", "U3", "A3"]  # the event copy was whole


def test_injected_context_is_skipped_per_content_part(tmp_path):
    mixed = {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>be nice</INSTRUCTIONS>"},
            {"type": "input_text", "text": "<environment_context>\n<cwd>/x</cwd>\n</environment_context>"},
            {"type": "input_text", "text": "the real question"},
            {"type": "input_image", "image_url": "data:..."},
        ],
    }
    lines = [
        meta(),
        line("response_item", {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions instructions>…"}]}),
        line("response_item", mixed),
        line("event_msg", {"type": "user_message", "message": "the real question"}),
        *ai("answer"),
        *user("# Files mentioned by the user:\n\n## a.py: /x/a.py\n\n## My request for Codex:\nfix a.py please\n"),
        *user("# Context from my IDE setup:\n\n## Open tabs:\n- a.py\n"),  # no request marker: all context
        *user("<user_instructions>\nalways test\n</user_instructions>"),
        *user("[3] user: an old line of a retold history"),
    ]
    us = codex.read(write(rollout(tmp_path, "2026-01-01", "10-00-00"), lines))
    assert summary(us) == [("U1", "the real question"), ("A1", "answer"), ("U2", "fix a.py please")]


def test_assistant_forms_are_folded_but_repeats_are_kept(tmp_path):
    lines = [
        meta(),
        *user("go"),
        *ai("Working on it."),
        line("response_item", {"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"ls"}', "call_id": "c1"}),
        line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "a.txt"}),
        *ai("Working on it."),  # said again, both forms: a second utterance
        line("event_msg", {"type": "task_complete", "last_agent_message": "Working on it."}),
        *user("again"),
        line("event_msg", {"type": "task_complete", "last_agent_message": "Only in task_complete."}),
        *user("again"),  # same words as the previous prompt, in a new turn: kept
        line("event_msg", {"type": "item_completed", "item": {"type": "AgentMessage", "id": "a1", "content": [{"type": "Text", "text": "paginated reply"}]}}),
        *ai("paginated reply"),
    ]
    us = codex.read(write(rollout(tmp_path, "2026-01-01", "10-00-00"), lines))
    assert summary(us) == [
        ("U1", "go"),
        ("A1", "Working on it."),
        ("T1", "exec_command: ls\na.txt"),
        ("A1", "Working on it."),
        ("U2", "again"),
        ("A2", "Only in task_complete."),
        ("U3", "again"),
        ("A3", "paginated reply"),
    ]


def test_paginated_user_message_and_pending_call(tmp_path):
    lines = [
        meta(history_mode="paginated"),
        line(
            "event_msg",
            {"type": "item_completed", "item": {"type": "UserMessage", "id": "u1", "content": [{"type": "text", "text": "Fix the parser"}, {"type": "local_image", "path": "/x.png"}]}},
        ),
        line("response_item", {"type": "function_call", "name": "shell", "arguments": '{"command":["bash","-lc","make"]}', "call_id": "c9"}),
    ]
    us = codex.read(write(rollout(tmp_path, "2026-01-01", "10-00-00"), lines))
    assert summary(us) == [("U1", "Fix the parser"), ("T1", "shell: make\n(no output recorded)")]


def test_long_tool_output_is_cut(tmp_path):
    lines = [
        meta(),
        *user("dump it"),
        line("response_item", {"type": "function_call", "name": "shell", "arguments": '{"command":["cat","big"]}', "call_id": "c1"}),
        line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "x" * 10_000}),
    ]
    [_, tool] = codex.read(write(rollout(tmp_path, "2026-01-01", "10-00-00"), lines))
    assert tool.text.startswith("shell: cat big\n") and len(tool.text) < 2100
    assert tool.text.endswith("[… 8,000 more characters not shown]")


# --------------------------------------------------------------------------- listing


def test_listing_titles_counts_archived_and_codex_home(tmp_path, monkeypatch):
    home = tmp_path / "codex-home"
    write(rollout(home, "2026-02-01", "10-00-00", THREAD), [meta(THREAD), *user("a prompt that is replaced by the index name"), *ai("ok")])
    write(
        rollout(home, "2026-02-03", "10-00-00", THREAD2, folder="archived_sessions"),
        [meta(THREAD2, cwd="/home/me/web", ts="2026-02-03T10:00:00.000Z"), *user("x" * 200, "2026-02-03T10:00:01.000Z")],
    )
    third = "019a0000-0000-7000-8000-000000000003"
    write(rollout(home, "2026-02-02", "10-00-00", third), [meta(third, cwd="/home/me/empty")])  # nothing said: left out
    sub = "019a0000-0000-7000-8000-000000000004"
    write(
        rollout(home, "2026-02-02", "11-00-00", sub),
        [meta(sub, source={"subagent": {"thread_spawn": {"parent_thread_id": THREAD}}}, ts="2026-02-02T11:00:00.000Z"), *user("look around")],
    )
    write(
        home / "session_index.jsonl",
        [
            json.dumps({"id": THREAD, "thread_name": "old name", "updated_at": "2026-02-01T10:00:00Z"}),
            json.dumps({"id": THREAD, "thread_name": "Fix the login button", "updated_at": "2026-02-01T11:00:00Z"}),
            json.dumps({"id": THREAD, "thread_name": "  ", "updated_at": "2026-02-01T12:00:00Z"}),
            "{torn",
        ],
    )
    (home / ".codex-global-state.json").write_text(
        json.dumps({"local-projects": {"p1": {"name": "webapp"}}, "thread-project-assignments": {THREAD: {"projectId": "p1"}}}),
        encoding="utf-8",
    )
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert codex.default_root() == home
    convs = codex.list_conversations()
    assert [(c.id, c.title, c.user_messages, c.ai_messages) for c in convs] == [
        (THREAD2, "x" * 80, 1, 0),
        (sub, "look around (subagent)", 1, 0),
        (THREAD, "webapp / Fix the login button", 1, 1),
    ]
    assert all(c.source == "codex" and c.as_dict()["path"].endswith(".jsonl") for c in convs)
    assert codex.conversation(convs[-1].path).title == "webapp / Fix the login button"
    assert codex.list_conversations(home / "sessions")[0].title == "look around (subagent)"


def test_default_root_without_codex_home(monkeypatch):
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert codex.default_root() == Path.home() / ".codex"


def test_listing_a_missing_folder_is_empty(tmp_path):
    assert codex.list_conversations(tmp_path / "nope") == []


def test_a_zst_rollout_with_garbage_appended_keeps_what_decompressed(tmp_path):
    import zstandard

    from dsh_notebook.reviewer.sources import codex

    lines = ['{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"t1","cwd":"/x"}}',
             '{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user",'
             '"content":[{"type":"input_text","text":"hello there"}]}}']
    path = tmp_path / "rollout-2026-01-01T00-00-00-t1.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode()) + b"\x00garbage\xff" * 50)
    assert [u.text for u in codex.read(path)] == ["hello there"]
