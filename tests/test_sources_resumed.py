"""Resumed, forked and compacted histories, and sub-agent transcripts (issue 21, item 3; case P20).

Every log here is built in the test from a real one in ../shared/fixtures/logs/ (named in each
test), the way the tool writes it:

- a resumed Codex thread: Codex starts a new rollout file of the same thread
  (``rollout-<ts>-<thread>_<rollout id>.jsonl``) with a new ``session_meta`` and replays the
  earlier records at its start, then goes on (openai/codex#29531);
- a forked Codex thread: a new thread id whose ``session_meta`` carries ``forked_from_id`` and
  whose file begins with the parent's records;
- a compacted Codex history: a ``compacted`` record (summary and ``replacement_history``) and
  a ``context_compacted`` event;
- Claude Code: a sub-agent's lines written into the main transcript with ``isSidechain:
  true`` between the ``Task`` call and its result (and the same lines alone, as the sub-agent's
  own ``agent-*.jsonl``); a ``/compact``: a ``system`` ``compact_boundary`` line and the
  ``isCompactSummary`` user line holding the summary.

The person sees each utterance once, in order, and a note (``N`` marker) where the log holds
something that is neither side's words.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from dsh_notebook.reviewer.sources import claude, codex, transcript_text


def _logs_dir() -> Path:
    shared = os.environ.get("DSH_SHARED_DIR")
    base = Path(shared) if shared else Path(__file__).resolve().parents[2] / "shared"
    return base / "fixtures" / "logs"


LOGS = _logs_dir()
needs_fixtures = pytest.mark.skipif(
    not (LOGS / "codex").is_dir() or not (LOGS / "claude").is_dir(),
    reason=f"shared fixtures not found at {LOGS} (set DSH_SHARED_DIR to the shared folder)",
)
pytestmark = needs_fixtures

#: codemie-ai/codemie-code, src/agents/plugins/codex/__tests__/fixtures/rollout-2026-05-11T11-26-55-…jsonl,
#: commit 8e8d4ce5 (../shared/fixtures/logs/README.md)
V125 = "codex/codex-0.125-tui-two-turns-both-assistant-forms.jsonl"
THREAD = "019e1625-789d-76c0-80ab-3724b5ddb799"
ROLLOUT = "019e2000-0000-7000-8000-0000000000aa"
FORK = "019e3000-0000-7000-8000-0000000000bb"
#: jnarowski/agentcmd, packages/agent-cli-sdk/tests/fixtures/claude/full/06381696-….jsonl, commit 565661e8
CLEAR = "claude/claude-2.0.29-injected-clear-command-askuserquestion-pending-plan.jsonl"
#: codemie-ai/codemie-code, tests/integration/session/fixtures/claude/-tmp-private/4c2ddfdc-….jsonl, commit 8e8d4ce5
THREE = "claude/claude-2.0.64-three-turns-write-edit-bash.jsonl"

NEW_PROMPT = "now document the new threshold in the README"
NEW_ANSWER = "Documented `threshold: 0.9` in the README's compaction section."


def real_lines(name: str) -> list[str]:
    return [ln for ln in (LOGS / name).read_text(encoding="utf-8").split("\n") if ln.strip()]


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def envelope(kind: str, payload: dict, ts: str = "2026-05-12T09:00:05.000Z") -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload})


def new_meta(thread: str = THREAD, **extra) -> str:
    """The real ``session_meta`` line, as a new rollout of ``thread`` writes it."""
    first = json.loads(real_lines(V125)[0])
    first["timestamp"] = first["payload"]["timestamp"] = "2026-05-12T09:00:00.000Z"
    first["payload"]["id"] = thread
    first["payload"].update(extra)
    return json.dumps(first)


def new_turn() -> list[str]:
    """One more turn in the 0.125 shapes (user in both forms, the answer in both forms)."""
    return [
        envelope("response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": NEW_PROMPT}]}),
        envelope("event_msg", {"type": "user_message", "message": NEW_PROMPT, "images": []}),
        envelope("event_msg", {"type": "agent_message", "message": NEW_ANSWER, "phase": "final_answer"}),
        envelope("response_item", {"type": "message", "role": "assistant", "phase": "final_answer",
                                   "content": [{"type": "output_text", "text": NEW_ANSWER}]}),
    ]


def codex_home(tmp_path: Path) -> tuple[Path, Path]:
    """A Codex home holding the real rollout where Codex puts it; returns (home, original)."""
    home = tmp_path / ".codex"
    original = write(home / "sessions/2026/05/11" / f"rollout-2026-05-11T11-26-55-{THREAD}.jsonl", real_lines(V125))
    return home, original


def resumed(home: Path, replay: list[str], lines: list[str] | None = None) -> Path:
    body = [new_meta(), *replay, *(new_turn() if lines is None else lines)]
    return write(home / "sessions/2026/05/12" / f"rollout-2026-05-12T09-00-00-{THREAD}_{ROLLOUT}.jsonl", body)


def pairs(us) -> list[tuple[str, str]]:
    return [(u.marker, u.text) for u in us]


# --------------------------------------------------------------------------- Codex: resumed


def test_case_P20_resumed_codex_thread_replaying_its_history_is_read_once(tmp_path):
    home, original = codex_home(tmp_path)
    before = pairs(codex.read(original))
    later = resumed(home, real_lines(V125)[1:])  # every earlier record replayed, as Codex does
    for path in (original, later):
        got = pairs(codex.read(path))
        assert got[: len(before)] == before  # the earlier turns once, in order, where they were
        note, *rest = got[len(before):]
        assert rest == [("U3", NEW_PROMPT), ("A3", NEW_ANSWER)]  # the new request is turn 3, not turn 5
        assert note[0] == "N2" and note[1].startswith("[replayed history] " + later.name)
        assert "turns 1-2" in note[1]
    users = [u.text for u in codex.read(later) if u.speaker == "user"]
    assert users == ["show tools", "let's update the defailt context compart to 90 in env var", NEW_PROMPT]
    [conv] = codex.list_conversations(home)
    assert (conv.user_messages, conv.ai_messages, conv.path) == (3, 14, later)
    assert transcript_text(codex.read(later)).count("[U1] show tools") == 1


def test_a_resume_that_replays_only_the_messages_is_read_once(tmp_path):
    home, original = codex_home(tmp_path)
    before = pairs(codex.read(original))
    messages = [ln for ln in real_lines(V125)
                if json.loads(ln)["type"] == "response_item" and json.loads(ln)["payload"].get("type") == "message"]
    got = pairs(codex.read(resumed(home, messages)))
    assert got[: len(before)] == before
    assert [m for m, _ in got[len(before):]] == ["N2", "U3", "A3"]


def test_a_new_prompt_that_repeats_an_earlier_one_is_not_taken_for_a_replay(tmp_path):
    home, original = codex_home(tmp_path)
    before = pairs(codex.read(original))
    lines = [envelope("response_item", {"type": "message", "role": "user",
                                        "content": [{"type": "input_text", "text": "show tools"}]}),
             envelope("event_msg", {"type": "user_message", "message": "show tools"}),
             envelope("event_msg", {"type": "agent_message", "message": "The same tools as before."})]
    got = pairs(codex.read(resumed(home, [], lines)))
    assert got == [*before, ("U3", "show tools"), ("A3", "The same tools as before.")]


def test_a_compacted_history_in_the_resumed_file_is_labelled_once(tmp_path):
    home, original = codex_home(tmp_path)
    before = pairs(codex.read(original))
    kept = [json.loads(ln)["payload"] for ln in real_lines(V125)
            if json.loads(ln)["type"] == "response_item" and json.loads(ln)["payload"].get("role") == "user"]
    lines = [envelope("compacted", {"message": "The user asked for the tool list, then for a 90% threshold.",
                                    "replacement_history": kept}),
             envelope("event_msg", {"type": "context_compacted"}), *new_turn()]
    got = pairs(codex.read(resumed(home, [], lines)))
    assert got[: len(before)] == before
    (marker, note), *rest = got[len(before):]
    assert marker == "N2" and note.startswith("[compacted history] Codex compacted the conversation here, keeping")
    assert "The user asked for the tool list" in note
    assert rest == [("U3", NEW_PROMPT), ("A3", NEW_ANSWER)]


# --------------------------------------------------------------------------- Codex: forked


def fork_lines() -> list[str]:
    return [new_meta(FORK, forked_from_id=THREAD), *real_lines(V125)[1:], *new_turn()]


def test_a_forked_thread_is_read_once_with_the_fork_point_labelled(tmp_path):
    home, original = codex_home(tmp_path)
    before = pairs(codex.read(original))
    fork = write(home / "sessions/2026/05/12" / f"rollout-2026-05-12T10-00-00-{FORK}.jsonl", fork_lines())
    got = pairs(codex.read(fork))
    assert got[: len(before)] == before
    (marker, note), *rest = got[len(before):]
    assert marker == "N2" and note.startswith(f"[forked] This thread was forked from thread {THREAD}: the ")
    assert rest == [("U3", NEW_PROMPT), ("A3", NEW_ANSWER)]
    assert pairs(codex.read(original)) == before  # the parent is not changed by its fork
    convs = {c.id: c for c in codex.list_conversations(home)}
    assert (convs[FORK].user_messages, convs[THREAD].user_messages) == (3, 2)


def test_a_fork_without_its_parent_says_its_opening_is_copied(tmp_path):
    fork = write(tmp_path / f"rollout-2026-05-12T10-00-00-{FORK}.jsonl", fork_lines())
    got = pairs(codex.read(fork))
    assert got[0][0] == "N0" and got[0][1].startswith("[forked] This thread was forked from thread " + THREAD)
    assert "not known" in got[0][1]
    assert [t for m, t in got if m.startswith("U")][-1] == NEW_PROMPT


# --------------------------------------------------------------------------- Claude Code


def sidechain(prompt: str, answer: str, template: dict) -> list[str]:
    """A sub-agent's lines as Claude Code wrote them into the main transcript (``isSidechain``)."""
    out = []
    for n, (role, content) in enumerate((("user", prompt), ("assistant", [{"type": "text", "text": answer}]))):
        d = copy.deepcopy(template)
        d.update({"type": role, "isSidechain": True, "uuid": f"side-{n}", "agentId": "a1b2c3",
                  "parentUuid": f"side-{n - 1}" if n else None, "message": {"role": role, "content": content}})
        out.append(json.dumps(d))
    return out


def task_parts() -> tuple[list[str], int, str, str, dict]:
    """The real transcript, the line index of its ``Task`` call, the call's real prompt, the
    first part of its real result, and a real line to copy the envelope from."""
    lines = real_lines(CLEAR)
    at = next(i for i, ln in enumerate(lines) if '"name":"Task"' in ln)
    call = json.loads(lines[at])
    prompt = next(b for b in call["message"]["content"] if b.get("type") == "tool_use")["input"]["prompt"]
    result = json.loads(lines[at + 1])["message"]["content"][0]["content"][0]["text"]
    return lines, at, prompt, result.split("\n\n")[0], call


def test_claude_sidechain_lines_are_labelled_not_mixed_into_the_conversation(tmp_path):
    lines, at, prompt, answer, call = task_parts()
    before = pairs(claude.read(write(tmp_path / "plain.jsonl", lines)))
    mixed = [*lines[: at + 1], *sidechain(prompt, answer, call), *lines[at + 1:]]
    got = pairs(claude.read(write(tmp_path / "with-sidechain.jsonl", mixed)))
    notes = [(m, t) for m, t in got if m.startswith("N")]
    assert [(m, t) for m, t in got if not m.startswith("N")] == before
    assert len(notes) == 1 and notes[0][1].startswith("[sub-agent] 2 line(s) of a sub-agent's own transcript")
    i = got.index(notes[0])
    assert got[i + 1][0].startswith("T") and got[i + 1][1].startswith("Task:")  # its result follows the note
    assert not any(prompt[:60] in t for m, t in got if m.startswith("U"))


def test_a_sub_agent_transcript_read_alone_says_whose_words_they_are(tmp_path):
    _, _, prompt, answer, call = task_parts()
    got = pairs(claude.read(write(tmp_path / "agent-a1b2c3.jsonl", sidechain(prompt, answer, call))))
    assert [m for m, _ in got] == ["N0", "U1", "A1"]
    assert got[0][1].startswith("[sub-agent] This is the transcript of a sub-agent (a1b2c3)")
    assert "not by the person" in got[0][1]


def test_claude_compaction_summary_is_labelled_not_a_user_turn(tmp_path):
    lines = real_lines(THREE)
    before = pairs(claude.read(write(tmp_path / "plain.jsonl", lines)))
    at = next(i for i, ln in enumerate(lines) if "update py with one liner comment" in ln)
    template = json.loads(lines[at])
    previous_uuid = next(json.loads(ln)["uuid"] for ln in reversed(lines[:at]) if '"uuid"' in ln)
    boundary = {k: template[k] for k in ("sessionId", "cwd", "version", "gitBranch", "userType")}
    boundary.update({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                     "isMeta": False, "isSidechain": False, "level": "info", "uuid": "compact-1", "parentUuid": None,
                     "logicalParentUuid": previous_uuid, "timestamp": template["timestamp"],
                     "compactMetadata": {"trigger": "manual", "preTokens": 21345}})
    summary_line = copy.deepcopy(template)
    text = ("This session is being continued from a previous conversation that ran out of context. The "
            "conversation is summarized below:\nThe user asked for hello.py, hello.md and hello.js; all three "
            "were written.")
    summary_line.update({"uuid": "compact-2", "parentUuid": "compact-1", "isCompactSummary": True,
                         "isVisibleInTranscriptOnly": True, "message": {"role": "user", "content": text}})
    got = pairs(claude.read(write(tmp_path / "compacted.jsonl",
                                  [*lines[:at], json.dumps(boundary), json.dumps(summary_line), *lines[at:]])))
    notes = [(m, t) for m, t in got if m.startswith("N")]
    assert [(m, t) for m, t in got if not m.startswith("N")] == before  # still three user turns
    assert len(notes) == 1 and notes[0][0] == "N1"
    assert notes[0][1].startswith("[compacted history] Claude Code compacted the conversation here "
                                  "(trigger manual, 21,345 tokens before).\n[compaction summary]")
    assert "all three were written" in notes[0][1]


def test_a_codex_sub_agent_thread_says_whose_words_its_user_messages_are(tmp_path):
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": THREAD, "depth": 1}}}
    sub = write(tmp_path / f"rollout-2026-05-12T10-00-00-{FORK}.jsonl", [new_meta(FORK, source=spawn), *new_turn()])
    got = pairs(codex.read(sub))
    assert [m for m, _ in got] == ["N0", "U1", "A1"]
    assert got[0][1] == (f"[sub-agent] This thread is a sub-agent started by thread {THREAD}: its 'user' messages "
                         "were written by the agent that started it, not by the person.")
    [conv] = codex.list_conversations(tmp_path)
    assert (conv.user_messages, conv.ai_messages) == (1, 1)


# --------------------------------------------------------------------------- from the attack on issue 21


def _git_status_turn(prompt: str, cid: str, out: str, answer: str) -> list[str]:
    E = envelope
    return [E("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
            E("event_msg", {"type": "user_message", "message": prompt}),
            E("response_item", {"type": "function_call", "name": "shell", "call_id": cid,
                                "arguments": json.dumps({"command": ["bash", "-lc", "git status --short"]})}),
            E("response_item", {"type": "function_call_output", "call_id": cid,
                                "output": json.dumps({"output": out, "metadata": {"exit_code": 0}})}),
            E("event_msg", {"type": "agent_message", "message": answer})]


def test_a_repeated_first_request_with_the_same_output_and_a_new_answer_is_kept(tmp_path):
    """The person starts a resumed session (no replay) with the thread's first request again; the
    command gives the same output, the answer is new: that is new work, not a replay."""
    home = tmp_path / ".codex"
    write(home / "sessions/2026/05/11" / f"rollout-2026-05-11T11-26-55-{THREAD}.jsonl",
          [new_meta(), *_git_status_turn("git status", "c1", "", "The tree is clean."),
           *_git_status_turn("run the tests", "c2", "ok", "All pass.")])
    later = resumed(home, [], _git_status_turn("git status", "c3", "", "Still clean; nothing changed."))
    us = codex.read(later)
    texts = [u.text for u in us if u.speaker in ("user", "assistant")]
    assert texts == ["git status", "The tree is clean.", "run the tests", "All pass.", "git status",
                     "Still clean; nothing changed."]
    assert not any("replayed history" in u.text for u in us)
