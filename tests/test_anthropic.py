"""Anthropic's Messages API through the client, the agent loop and ``%%chat`` (issue 20,
item 1): the request shape Anthropic documents (system hoisted, tool_use and tool_result
blocks, thinking blocks with their signatures sent back, ``max_tokens`` always, an
extended-thinking budget for academic mode), its errors, and a cut at ``max_tokens``. The
recorded Anthropic streams are replayed in ``test_providers.py``."""

from __future__ import annotations

import json

import pytest
from providers_replay import JSON, ReplayServer
from test_chat import MIME, answer, call

from dsh_notebook.errors import HTTP_STATUS
from dsh_notebook.llm import ChatClient, LLMError
from dsh_notebook.llm.agent import Agent, Tool
from dsh_notebook.llm.anthropic import request
from dsh_notebook.llm.session import SessionLog
from dsh_notebook.llm.testing import ScriptedServer


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    monkeypatch.delenv("DSH_MODEL", raising=False)
    return tmp_path


def test_a_tool_loop_sends_thinking_blocks_with_their_signatures_back(home, monkeypatch):
    from dsh_notebook.academic import state

    tool = Tool("get_weather", "weather", {"type": "object"}, lambda a: {"temp_c": 22})
    script = [{"reply": {"reasoning": "I need the weather.", "content": "Let me look.",
                         "tool_calls": [{"id": "toolu_01", "name": "get_weather", "arguments": '{"city": "Paris"}'}]}},
              {"reply": {"reasoning": "22 C is mild.", "content": "It is 22 °C in Paris."}}]
    with ScriptedServer(script) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        state.set_enabled(True)
        try:
            with SessionLog.create(home, model="claude-sonnet-4-5") as log:
                res = Agent(ChatClient(model="anthropic/claude-sonnet-4-5"), log, [tool], stop_hooks=[]).run_turn(
                    "Weather in Paris?")
        finally:
            state.set_enabled(False)
    assert res.status == "completed" and res.text == "It is 22 °C in Paris." and srv.mismatches == []
    first, second = (r["body"] for r in srv.requests)
    assert first["max_tokens"] == 16384 and first["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert "Verification log" in first["system"]  # the academic sections, hoisted into system
    assert [t["name"] for t in first["tools"]] == ["get_weather"] and "input_schema" in first["tools"][0]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    blocks = second["messages"][1]["content"]
    assert blocks == [{"type": "thinking", "thinking": "I need the weather.", "signature": "scripted-signature"},
                      {"type": "text", "text": "Let me look."},
                      {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}]
    assert second["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_01",
                                                 "content": json.dumps({"temp_c": 22})}]
    assert not any(m["role"] == "system" for m in second["messages"])


def test_without_thinking_no_thinking_blocks_are_sent():
    body = {"model": "m", "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "anthropic_thinking": [{"type": "thinking", "thinking": "t",
                                                                      "signature": "s"}],
         "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "not json"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "system", "content": "Steering: add the verification log."},
        {"role": "user", "content": "more"}]}
    out = request(body, 1000)
    assert out["max_tokens"] == 1000 and "thinking" not in out
    assert out["messages"][1]["content"] == [{"type": "tool_use", "id": "a", "name": "f",
                                              "input": {"arguments": "not json"}}]
    # a notice inside the conversation goes into the user's turn (no system role there)
    assert out["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "a", "content": "1"},
                                             {"type": "text", "text": "Steering: add the verification log."},
                                             {"type": "text", "text": "more"}]


def test_chat_with_anthropic_and_the_reckoner_preset(sh, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    srv = ScriptedServer([
        {"expect": {"model": "claude-haiku-4-5"},
         "reply": {"tool_calls": [call(1, "record_start", {"title": "Kettle"}),
                                  call(2, "set", {"name": "P", "value": {"num": 2000, "dim": "watt"}}),
                                  call(3, "set", {"name": "V", "value": {"num": 230, "dim": "volt"}}),
                                  call(4, "eval", {"formula": "@P/@V", "target": "I"}),
                                  call(5, "record_end", {"text": "I = 8.7 A"})]}},
        {"reply": {"content": "The kettle draws 8.7 A."}}]).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
    try:
        r, cap = sh.chat("A 2 kW kettle on 230 V: what current?", "--preset reckoner --model anthropic/claude-haiku-4-5")
    finally:
        srv.stop()
    assert r.error_in_exec is None, r.error_in_exec
    out = answer(cap)
    assert out.data[MIME]["status"] == "completed" and out.data[MIME]["records"][0]["title"] == "Kettle"
    assert "The kettle draws 8.7 A." in out.data["text/plain"]
    results = [b for m in srv.requests[1]["body"]["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert len(results) == 5 and json.loads(results[3]["content"])["ok"] is True


@pytest.mark.parametrize("status, body, words", [
    (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
     ["HTTP 529", "Overloaded", "overloaded_error"]),
    (400, {"type": "error", "error": {"type": "invalid_request_error",
                                      "message": "messages: roles must alternate between \"user\" and \"assistant\""}},
     ["HTTP 400", "roles must alternate", "invalid_request_error"]),
])
def test_anthropic_error_bodies_are_named(home, monkeypatch, status, body, words):
    srv = ReplayServer([(status, JSON, json.dumps(body).encode())] * 2).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
    try:
        with pytest.raises(LLMError) as info:
            ChatClient(model="anthropic/claude-sonnet-4-5", hooks=[], max_retries=1, backoff=0.01).complete(
                [{"role": "user", "content": "hi"}])
    finally:
        srv.stop()
    assert info.value.code == HTTP_STATUS and info.value.status == status
    for w in words:
        assert w in info.value.message
    assert len(srv.requests) == (2 if status == 529 else 1)  # an overloaded server is tried again


def test_a_reply_cut_at_max_tokens_ends_the_turn_truncated(home, monkeypatch):
    with ScriptedServer([{"reply": {"content": "The resistance is R = 26.4", "finish_reason": "length"}}]) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        with SessionLog.create(home, model="claude-sonnet-4-5") as log:
            res = Agent(ChatClient(model="anthropic/claude-sonnet-4-5", hooks=[]), log, stop_hooks=[]).run_turn("R?")
    assert res.status == "truncated" and "output limit of 16384 tokens" in res.notice
    assert srv.requests[0]["body"]["max_tokens"] == 16384  # always sent: Anthropic requires it


# --------------------------------------------------------------------------- from the attack on issue 20


def _call(cid: str, args: str) -> dict:
    return {"id": cid, "type": "function", "function": {"name": "f", "arguments": args}}


def test_thinking_switched_on_inside_a_tool_loop_waits_for_the_next_turn():
    body = {"model": "m", "reasoning_effort": "high", "max_tokens": 32000, "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [_call("toolu_1", "{}")]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "1"}]}
    out = request(body, 1000)
    assert "thinking" not in out  # the loop began without thinking: Anthropic refuses to mix
    body["messages"][1]["anthropic_thinking"] = [{"type": "thinking", "thinking": "t", "signature": "s"}]
    out = request(body, 1000)
    assert out["thinking"] == {"type": "enabled", "budget_tokens": 16000}
    assert out["messages"][1]["content"][0] == {"type": "thinking", "thinking": "t", "signature": "s"}


def test_arguments_json_cannot_carry_and_foreign_ids_are_made_sendable():
    body = {"model": "m", "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [_call("functions.get_weather:0",
                                                                    '{"n": 1e999, "s": "\\ud800"}')]},
        {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "1"},
        {"role": "system", "content": "  \n"},
        {"role": "user", "content": "more"}]}
    out = request(body, 1000)
    json.dumps(out, allow_nan=False).encode("utf-8")  # sendable as strict JSON
    use = out["messages"][1]["content"][0]
    assert use["input"] == {"n": None, "s": "\ufffd"}
    assert use["id"].startswith("toolu_") and out["messages"][2]["content"][0]["tool_use_id"] == use["id"]
    assert all(b.get("text", "x").strip() for m in out["messages"] for b in m["content"])


def _events(*events: dict) -> bytes:
    return b"".join(f"event: {e.get('type')}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


START = {"type": "message_start", "message": {"model": "claude", "usage": {"input_tokens": 3, "output_tokens": 1}}}
USE = {"type": "content_block_start", "index": 0,
       "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}}
ARGS = {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"a":1}'}}
STOP = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}


@pytest.mark.parametrize("events, calls", [
    ((START, USE, USE, ARGS, STOP), [("toolu_1", {"a": 1})]),  # a block started twice
    ((START, ARGS, USE, STOP), [("toolu_1", {"a": 1})]),  # its delta before its start
])
def test_odd_event_orders_give_one_call(home, monkeypatch, events, calls):
    srv = ReplayServer([(200, "text/event-stream", _events(*events))]).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
    try:
        r = ChatClient(model="anthropic/claude-sonnet-4-5", hooks=[]).complete([{"role": "user", "content": "q"}])
    finally:
        srv.stop()
    assert [(c.id, c.parsed()) for c in r.tool_calls] == calls


@pytest.mark.parametrize("raw, words", [
    (b'event: x\ndata: {"type":"content_block_delta","index":1e999,"delta":{}}\n\n', "unexpected shape"),
    (b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n', "check the provider's base_url and protocol"),
])
def test_odd_anthropic_streams_are_protocol_errors(home, monkeypatch, raw, words):
    srv = ReplayServer([(200, "text/event-stream", raw)]).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
    try:
        with pytest.raises(LLMError) as info:
            ChatClient(model="anthropic/claude-sonnet-4-5", hooks=[]).complete([{"role": "user", "content": "q"}])
    finally:
        srv.stop()
    assert info.value.code == "PROTOCOL" and words in info.value.message


def test_usage_that_sums_past_a_float_is_not_logged_as_infinite(home, monkeypatch):
    big = {"type": "message_start", "message": {"model": "c", "usage": {"input_tokens": 1e308,
                                                                         "cache_read_input_tokens": 1e308}}}
    text = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "ok"}}
    end = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}
    srv = ReplayServer([(200, "text/event-stream", _events(big, text, end))]).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
    try:
        with SessionLog.create(home, model="claude-sonnet-4-5") as log:
            res = Agent(ChatClient(model="anthropic/claude-sonnet-4-5", hooks=[]), log, stop_hooks=[]).run_turn("q")
    finally:
        srv.stop()
    assert res.status == "completed" and res.text == "ok"
    assert "prompt_tokens" not in next(e for e in log.events if e["type"] == "step/end")["usage"]
