"""Edge cases every JSONL transcript source shares (spec: reviewer.md "Targets": tolerate
unknown event types and a torn last line): a line that is not UTF-8 or not JSON in the
middle of a log is skipped and the rest is read."""

from __future__ import annotations

import json

from dsh_notebook.llm.session import SessionLog
from dsh_notebook.reviewer.sources import read_target

BAD = [b"\xff\xfe not utf-8 at all \x80\n", b"{this is not json\n"]


def _with_bad_lines(lines: list[str]) -> bytes:
    head, tail = lines[:-1], lines[-1:]
    return b"".join(x.encode() + b"\n" for x in head) + b"".join(BAD) + b"".join(x.encode() + b"\n" for x in tail)


def test_claude_skips_undecodable_lines(tmp_path):
    lines = [json.dumps({"type": "user", "uuid": "1", "timestamp": "2026-01-01T00:00:00Z",
                         "message": {"role": "user", "content": "first question"}}),
             json.dumps({"type": "assistant", "uuid": "2", "timestamp": "2026-01-01T00:00:01Z",
                         "message": {"role": "assistant", "content": [{"type": "text", "text": "an answer"}]}})]
    p = tmp_path / "t.jsonl"
    p.write_bytes(_with_bad_lines(lines))
    assert [(u.marker, u.text) for u in read_target(f"claude:{p}")] == [("U1", "first question"), ("A1", "an answer")]


def test_codex_skips_undecodable_lines(tmp_path):
    lines = [json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "t", "cwd": "/x"}}),
             json.dumps({"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
                         "payload": {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": "hello"}]}})]
    p = tmp_path / "rollout-2026-01-01T00-00-00-t.jsonl"
    p.write_bytes(_with_bad_lines(lines))
    assert [u.text for u in read_target(f"codex:{p}")] == ["hello"]


def test_notebook_session_skips_undecodable_lines(tmp_path):
    log = SessionLog.create(tmp_path / "sessions", model="m", name="main")
    log.append("turn/start", turn=1)
    log.append("user/message", text="the question")
    log.close()
    raw = log.path.read_bytes()
    log.path.write_bytes(raw + b"".join(BAD) + json.dumps({"seq": 9, "ts": "2026-01-01T00:00:00Z",
                                                           "type": "assistant/message", "text": "the answer",
                                                           "tool_calls": []}).encode() + b"\n")
    assert [u.text for u in read_target(f"notebook:{log.path}")] == ["the question", "the answer"]


def test_dsh_skips_undecodable_lines(tmp_path):
    lines = [json.dumps({"type": "session", "version": 0, "id": "s1", "createdAt": 1767225600000}),
             json.dumps({"type": "turn/start", "seq": 0, "time": 1767225600000, "data": {"turn": 1}}),
             json.dumps({"type": "user/message", "seq": 1, "time": 1767225600001,
                         "data": {"content": [{"type": "text", "text": "a question"}], "source": {"kind": "user"}}})]
    p = tmp_path / "session.jsonl"
    p.write_bytes(_with_bad_lines(lines))
    assert [u.text for u in read_target(f"dsh:{p}")] == ["a question"]


def test_a_log_whose_every_row_holds_a_unicode_line_separator_is_still_read(tmp_path):
    """JSON keeps U+2028, U+2029 and U+0085 raw inside a string; only "\\n" ends a JSON Lines row.
    Recognising the log's format once cut rows at them (str.splitlines), so a log whose every row
    held one was refused as not a Claude Code log."""
    lines = [json.dumps({"type": "user", "uuid": "1", "timestamp": "2026-01-01T00:00:00Z",
                         "message": {"role": "user", "content": "line one\u2028line two"}}, ensure_ascii=False),
             json.dumps({"type": "assistant", "uuid": "2", "timestamp": "2026-01-01T00:00:01Z",
                         "message": {"role": "assistant", "content": [{"type": "text", "text": "a\u0085b\u2029c"}]}},
                        ensure_ascii=False)]
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert [(u.marker, u.text) for u in read_target(f"claude:{p}")] == [
        ("U1", "line one\u2028line two"), ("A1", "a\u0085b\u2029c")]
