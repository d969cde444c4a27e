"""Every recorded provider file in ``../shared/fixtures/providers/`` through the real client
over HTTP (issue 19, item 6): one test per file, named after it. Responses are parsed into the
right text, reasoning, tool calls, usage and finish state; requests are compared with the
request our client builds for the same conversation (the fields that matter, not byte order);
error bodies are mapped to our codes. Sources of every file: that folder's README."""

from __future__ import annotations

import pytest
from providers_replay import JSON, SSE, ReplayServer, fixture, fixture_json, wire

from dsh_notebook.errors import HTTP_STATUS, PROTOCOL, PROVIDER
from dsh_notebook.llm import ChatClient, LLMError
from dsh_notebook.llm.stream import StreamError

KEYS = ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
        "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY")


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path))
    for k in KEYS:
        monkeypatch.setenv(k, "test-key-not-real")
    monkeypatch.delenv("DSH_MODEL", raising=False)
    return tmp_path


def replay(monkeypatch, model: str, replies: list, **kw) -> tuple[ChatClient, ReplayServer]:
    srv = ReplayServer(replies).start()
    pid = model.split("/", 1)[0]
    # ANTHROPIC_BASE_URL is the host, as Anthropic's SDK reads it; the OpenAI-compatible ones end in /v1
    monkeypatch.setenv(f"{pid.upper()}_BASE_URL", srv.base_url + ("" if pid == "anthropic" else "/v1"))
    return ChatClient(model=model, hooks=[], backoff=0.01, **kw), srv


def run(monkeypatch, model, name, messages=None, stream=None, tools=None, **kw):
    body = fixture(name)
    sse = name.endswith(".sse")
    client, srv = replay(monkeypatch, model, [(200, SSE if sse else JSON, body)])
    try:
        result = client.complete(messages or [{"role": "user", "content": "hi"}], tools=tools,
                                 stream=sse if stream is None else stream, **kw)
    finally:
        srv.stop()
    return result, srv


TOOL = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}]

# --------------------------------------------------------------------------- DeepSeek


def test_deepseek__reasoner_stream_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "deepseek/deepseek-reasoner", "deepseek__reasoner_stream.response.sse")
    assert r.text == "Hello there! 😊 How can I help you today?"
    assert r.reasoning.startswith('Hmm, the user just said "Hello".') and len(r.reasoning) > 800
    assert r.finish_reason == "stop" and not r.truncated
    assert r.usage["completion_tokens"] == 212
    assert r.served["reasoning_tokens"] == 198 and r.served["cached_tokens"] == 0
    assert r.served["model"] == "deepseek-reasoner"


def test_deepseek__reasoner_stream_request_json(monkeypatch):
    want = fixture_json("deepseek__reasoner_stream.request.json")
    _, srv = run(monkeypatch, "deepseek/deepseek-reasoner", "deepseek__reasoner_stream.response.sse",
                 messages=[{"role": "user", "content": "Hello"}])
    got = srv.requests[0]["body"]
    for key in ("model", "stream", "stream_options"):
        assert got[key] == want[key]
    assert [wire(m) for m in got["messages"]] == [wire(m) for m in want["messages"]]
    assert srv.requests[0]["path"] == "/v1/chat/completions"
    assert srv.requests[0]["headers"]["authorization"] == "Bearer test-key-not-real"


def _thinking_tool_loop_request(monkeypatch, step):
    """``deepseek__thinking_tool_loop.step{1,2,3}.request.json``: the request we build for the
    same conversation carries every assistant tool-call message's ``reasoning_content``."""
    name = f"deepseek__thinking_tool_loop.step{step}.request.json"
    want = fixture_json(name)
    history = [dict(m) for m in want["messages"]]
    for m in history:  # as our log would give it: reasoning kept, but an empty one absent
        if m.get("role") == "assistant" and not m.get("reasoning_content"):
            m.pop("reasoning_content", None)
    client, srv = replay(monkeypatch, "deepseek/deepseek-reasoner",
                         [(200, JSON, fixture(f"deepseek__thinking_tool_loop.step{step}.response.json"))])
    try:
        client.complete(history, tools=want.get("tools"), stream=False)
    finally:
        srv.stop()
    got = srv.requests[0]["body"]
    assert got["model"] == want["model"] and got["stream"] is False
    assert [wire(m) for m in got["messages"]] == [wire(m) for m in want["messages"]]
    calls = [m for m in got["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
    assert len(calls) == {1: 0, 2: 2, 3: 3}[step]
    assert all("reasoning_content" in m for m in calls)


def test_deepseek__thinking_tool_loop_step1_request_json(monkeypatch):
    _thinking_tool_loop_request(monkeypatch, 1)


def test_deepseek__thinking_tool_loop_step2_request_json(monkeypatch):
    _thinking_tool_loop_request(monkeypatch, 2)


def test_deepseek__thinking_tool_loop_step3_request_json(monkeypatch):
    _thinking_tool_loop_request(monkeypatch, 3)


def test_deepseek__thinking_tool_loop_step1_response_json(monkeypatch):
    r, _ = run(monkeypatch, "deepseek/deepseek-reasoner", "deepseek__thinking_tool_loop.step1.response.json")
    assert r.text == "Let me load the dice rolling capability!"
    assert r.reasoning.startswith("The user wants to play a dice game.")
    assert [(c.id, c.name, c.parsed()) for c in r.tool_calls] == [
        ("call_00_sXqYgMESDht75NCLLZtt9804", "load_capability", {"id": "DICE_ROLL"})]
    assert r.finish_reason == "tool_calls" and r.served["model"] == "deepseek-v4-flash"
    assert r.served["reasoning_tokens"] == 60


def test_deepseek__thinking_tool_loop_step2_response_json(monkeypatch):
    r, _ = run(monkeypatch, "deepseek/deepseek-reasoner", "deepseek__thinking_tool_loop.step2.response.json")
    assert [(c.id, c.name) for c in r.tool_calls] == [("call_00_6edlnw3Z1MgeMfey687g8451", "get_player_name"),
                                                      ("call_01_km02sac7sHxNDPATKLZy7705", "roll_dice")]
    assert r.reasoning.startswith("Great, now I have access to the dice roll tool.")


def test_deepseek__thinking_tool_loop_step3_response_json(monkeypatch):
    r, _ = run(monkeypatch, "deepseek/deepseek-reasoner", "deepseek__thinking_tool_loop.step3.response.json")
    assert r.text.startswith("🎉 **Congratulations, Anne!** You're a winner!") and not r.tool_calls
    assert r.finish_reason == "stop" and r.served["cached_tokens"] == 896


def _deepseek_error_400(monkeypatch, name):
    client, srv = replay(monkeypatch, "deepseek/deepseek-reasoner", [(400, JSON, fixture(name))])
    try:
        with pytest.raises(LLMError) as info:
            client.complete([{"role": "user", "content": "hi"}])
    finally:
        srv.stop()
    e = info.value
    assert e.code == HTTP_STATUS and e.status == 400 and len(srv.requests) == 1  # a 400 is never retried
    assert "deepseek/deepseek-reasoner answered HTTP 400" in e.message and "reasoning_content" in e.message
    assert 'reasoning_passback = "after-tool-calls"' in e.message


def test_deepseek__error_400_missing_reasoning_content_json(monkeypatch):
    _deepseek_error_400(monkeypatch, "deepseek__error_400_missing_reasoning_content.json")


def test_deepseek__error_400_reasoning_content_must_be_passed_back_json(monkeypatch):
    _deepseek_error_400(monkeypatch, "deepseek__error_400_reasoning_content_must_be_passed_back.json")


# --------------------------------------------------------------------------- OpenAI


def test_openai__stream_include_usage_tool_call_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "openai/gpt-4o-mini", "openai__stream_include_usage_tool_call.response.sse", tools=TOOL)
    assert [(c.id, c.name, c.parsed()) for c in r.tool_calls] == [
        ("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", {"country": "UK"})]
    assert r.finish_reason == "tool_calls" and r.usage["total_tokens"] == 68 and r.text == ""


def test_openai__stream_include_usage_tool_call_request_json(monkeypatch):
    want = fixture_json("openai__stream_include_usage_tool_call.request.json")
    _, srv = run(monkeypatch, "openai/gpt-4o-mini", "openai__stream_include_usage_tool_call.response.sse",
                 messages=want["messages"], tools=want["tools"], tool_choice="auto")
    got = srv.requests[0]["body"]
    for key in ("model", "stream", "stream_options", "tools", "tool_choice"):
        assert got[key] == want[key], key
    assert [wire(m) for m in got["messages"]] == [wire(m) for m in want["messages"]]


def test_openai__stream_gpt5_usage_then_extra_empty_choices_chunk_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "openai/gpt-5", "openai__stream_gpt5_usage_then_extra_empty_choices_chunk.response.sse")
    assert r.text == "Paris." and r.finish_reason == "stop"
    assert r.usage["total_tokens"] == 24  # the later chunk's usage: null does not erase it


def test_openai__stream_gpt5_usage_then_extra_empty_choices_chunk_request_json(monkeypatch):
    """gpt-5 is a reasoning model: the output limit goes out as max_completion_tokens."""
    want = fixture_json("openai__stream_gpt5_usage_then_extra_empty_choices_chunk.request.json")
    _, srv = run(monkeypatch, "openai/gpt-5", "openai__stream_gpt5_usage_then_extra_empty_choices_chunk.response.sse",
                 messages=want["messages"], max_tokens=2000)
    got = srv.requests[0]["body"]
    for key in ("model", "stream", "stream_options"):
        assert got[key] == want[key]
    assert [wire(m) for m in got["messages"]] == [wire(m) for m in want["messages"]]
    assert got["max_completion_tokens"] == 2000 and "max_tokens" not in got


def test_openai__stream_parallel_tool_calls_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "openai/gpt-4o", "openai__stream_parallel_tool_calls.response.sse", tools=TOOL)
    assert [(c.name, c.parsed()) for c in r.tool_calls] == [
        ("GetWeatherArgs", {"city": "Edinburgh", "country": "GB", "units": "c"}),
        ("get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"})]
    assert len({c.id for c in r.tool_calls}) == 2


def test_openai__stream_finish_reason_length_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "openai/gpt-4o", "openai__stream_finish_reason_length.response.sse", max_tokens=1)
    assert r.finish_reason == "length" and r.truncated and r.text == '{"'
    assert r.limit == 1 and "cut off at the output limit of 1 tokens" in r.truncation_notice()


def test_openai__stream_refusal_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "openai/gpt-4o", "openai__stream_refusal.response.sse")
    assert r.text == "" and r.refusal == "I'm sorry, I can't assist with that request."
    assert r.finish_reason == "stop"


def test_openai__error_400_max_tokens_unsupported_json(monkeypatch):
    """A model the client does not know as a reasoning model, refused for max_tokens: the
    error names the setting that fixes it."""
    client, srv = replay(monkeypatch, "openai/my-finetune", [(400, JSON, fixture(
        "openai__error_400_max_tokens_unsupported.json"))])
    try:
        with pytest.raises(LLMError) as info:
            client.complete([{"role": "user", "content": "hi"}], max_tokens=100)
    finally:
        srv.stop()
    e = info.value
    assert e.code == HTTP_STATUS and e.status == 400
    assert "Unsupported parameter: 'max_tokens'" in e.message and "(code unsupported_parameter)" in e.message
    assert 'token_param = "max_completion_tokens"' in e.message


# --------------------------------------------------------------------------- OpenRouter


def test_openrouter__stream_midstream_error_recorded_response_sse(monkeypatch):
    """P19: the recorded in-band error (finish_reason null, after two "length" chunks)."""
    seen = []
    client, srv = replay(monkeypatch, "openrouter/minimax/minimax-m2:free",
                         [(200, SSE, fixture("openrouter__stream_midstream_error.recorded.response.sse"))])
    try:
        with pytest.raises(StreamError) as info:
            client.complete([{"role": "user", "content": "Hello there"}], max_tokens=10,
                            on_delta=lambda k, t: seen.append(k))
    finally:
        srv.stop()
    e = info.value
    assert e.code == PROVIDER and "Token limit reached" in e.message and "(code 400)" in e.message
    assert "ended without a finish reason" not in e.message
    assert e.partial.reasoning and e.shown and seen  # the reasoning that arrived is kept
    assert len(srv.requests) == 1


def test_openrouter__stream_midstream_error_recorded_request_json(monkeypatch):
    want = fixture_json("openrouter__stream_midstream_error.recorded.request.json")
    client, srv = replay(monkeypatch, "openrouter/minimax/minimax-m2:free",
                         [(200, SSE, fixture("openrouter__stream_midstream_error.recorded.response.sse"))])
    try:
        with pytest.raises(StreamError):
            client.complete(want["messages"], max_tokens=10)
    finally:
        srv.stop()
    got = srv.requests[0]["body"]
    for key in ("model", "stream", "stream_options", "max_completion_tokens"):
        assert got[key] == want[key], key
    assert "max_tokens" not in got
    assert [wire(m) for m in got["messages"]] == [wire(m) for m in want["messages"]]


def test_openrouter__stream_midstream_error_documented_sse(monkeypatch):
    """The documented form (finish_reason "error"), before any text: retried, then reported."""
    body = fixture("openrouter__stream_midstream_error.documented.sse")
    client, srv = replay(monkeypatch, "openrouter/openai/gpt-4o", [(200, SSE, body)] * 2, max_retries=1)
    try:
        with pytest.raises(StreamError) as info:
            client.complete([{"role": "user", "content": "hi"}])
    finally:
        srv.stop()
    assert "Provider disconnected unexpectedly" in info.value.message and "server_error" in info.value.message
    assert info.value.code == PROVIDER


def test_openrouter__stream_reasoning_details_claude_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "openrouter/anthropic/claude-sonnet-4.5",
               "openrouter__stream_reasoning_details_claude.response.sse")
    assert r.text == "2 + 2 = 4" and r.reasoning.startswith("This is a simple arithmetic question.")
    details = r.opaque["reasoning_details"]
    assert details[0]["type"] == "reasoning.text" and details[0]["text"] == r.reasoning
    assert details[0]["signature"]  # the signature comes back verbatim
    assert r.usage["cost"] == pytest.approx(0.000669) and r.served["cost"] == pytest.approx(0.000669)


def test_openrouter__stream_reasoning_details_claude_request_json(monkeypatch):
    want = fixture_json("openrouter__stream_reasoning_details_claude.request.json")
    _, srv = run(monkeypatch, "openrouter/anthropic/claude-sonnet-4.5",
                 "openrouter__stream_reasoning_details_claude.response.sse", messages=want["messages"],
                 reasoning=want["reasoning"])
    got = srv.requests[0]["body"]
    for key in ("model", "stream", "stream_options", "reasoning"):
        assert got[key] == want[key], key


def test_openrouter__stream_reasoning_encrypted_o3_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "openrouter/openai/o3", "openrouter__stream_reasoning_encrypted_o3.response.sse")
    assert r.text.startswith("I’m ChatGPT, a large-language-model assistant created by OpenAI.")
    enc = [d for d in r.opaque["reasoning_details"] if d["type"] == "reasoning.encrypted"]
    assert enc and enc[0]["data"].startswith("gAAAAAB") and enc[0]["format"] == "openai-responses-v1"
    assert r.reasoning == ""  # encrypted reasoning is never shown as text


def test_openrouter__stream_reasoning_encrypted_o3_request_json(monkeypatch):
    want = fixture_json("openrouter__stream_reasoning_encrypted_o3.request.json")
    _, srv = run(monkeypatch, "openrouter/openai/o3", "openrouter__stream_reasoning_encrypted_o3.response.sse",
                 messages=want["messages"])
    got = srv.requests[0]["body"]
    for key in ("model", "stream", "stream_options"):
        assert got[key] == want[key]
    assert [wire(m) for m in got["messages"]] == [wire(m) for m in want["messages"]]


# --------------------------------------------------------------------------- local servers


def test_ollama__v1_stream_reasoning_include_usage_response_sse(monkeypatch):
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    r, srv = run(monkeypatch, "ollama/nemotron-3-nano:latest", "ollama__v1_stream_reasoning_include_usage.response.sse")
    assert r.text == "51" and r.reasoning.startswith("We need to answer with the number only: 17 * 3 = 51.")
    assert r.usage["total_tokens"] == 62 and r.served["system_fingerprint"] == "fp_ollama"
    assert "authorization" not in srv.requests[0]["headers"]  # keyless: no fake key needed
    assert not r.notices  # a local server takes any model name silently


def test_ollama__v1_stream_parallel_tool_calls_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "ollama/qwen2.5-coder:7b-instruct-q8_0", "ollama__v1_stream_parallel_tool_calls.response.sse",
               tools=TOOL)
    assert [(c.id, c.parsed()) for c in r.tool_calls] == [("call_wteop8bt", {"command": "ls"}),
                                                          ("call_rk2xye1l", {"command": "ls -l"})]
    assert r.finish_reason == "tool_calls"


def test_vllm__stream_tool_call_hermes_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "vllm/Qwen2.5-7B-Instruct", "vllm__stream_tool_call_hermes.response.sse", tools=TOOL)
    assert [(c.id, c.name, c.parsed()) for c in r.tool_calls] == [
        ("chatcmpl-tool-ca99dda515524c6abe47d1ea22813507", "run_command", {"command": "ls"})]


def test_vllm__stream_tool_call_hermes_request_json(monkeypatch):
    want = fixture_json("vllm__stream_tool_call_hermes.request.json")
    _, srv = run(monkeypatch, "vllm/x", "vllm__stream_tool_call_hermes.response.sse", messages=want["messages"],
                 tools=want.get("tools"))
    got = srv.requests[0]["body"]
    assert got["stream"] is True and got.get("tools") == want.get("tools")
    assert [wire(m) for m in got["messages"]] == [wire(m) for m in want["messages"]]


def test_llamacpp__stream_gptoss_raw_usage_timings_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "llamacpp/gpt-oss-20b", "llamacpp__stream_gptoss_raw_usage_timings.response.sse")
    assert r.text == "Got it! If you have any questions or need assistance, just let me know."
    assert r.reasoning.startswith("User says") and "<|" not in r.reasoning + r.text
    assert r.served["system_fingerprint"] == "b6097-9515c613" and r.served["timings"]["predicted_n"] == 43
    assert r.usage["total_tokens"] == 125


# --------------------------------------------------------------------------- Azure, Gemini, Mistral


def test_azure__stream_async_filter_documented_sse(monkeypatch):
    monkeypatch.delenv("AZURE_BASE_URL", raising=False)
    srv = ReplayServer([(200, SSE, fixture("azure__stream_async_filter.documented.sse"))]).start()
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", srv.base_url)
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2024-10-21")
    try:
        r = ChatClient(model="azure/my-gpt4o-deployment", hooks=[]).complete([{"role": "user", "content": "What is color?"}])
    finally:
        srv.stop()
    assert r.text == "Color is a" and r.finish_reason == "stop"  # annotation frames and "... " lines pass
    req = srv.requests[0]
    assert req["path"] == "/openai/deployments/my-gpt4o-deployment/chat/completions"
    assert req["query"] == {"api-version": "2024-10-21"}
    assert req["headers"]["api-key"] == "test-key-not-real" and "authorization" not in req["headers"]
    assert any(k == "model" and "not declared" in t for k, t in r.notices)


def test_gemini__openai_compat_tool_call_empty_id_step1_response_json(monkeypatch):
    r, _ = run(monkeypatch, "gemini/gemini-2.5-pro-preview-05-06",
               "gemini__openai_compat_tool_call_empty_id.step1.response.json")
    (call,) = r.tool_calls
    assert call.name == "get_current_time" and call.id.startswith("call_") and len(call.id) > 10
    assert any(kind == "tool-id" for kind, _ in r.notices)
    assert r.opaque["extra_content"]["google"]["thought_signature"].startswith("AVSoXO4A")


def test_gemini__openai_compat_tool_call_empty_id_step1_request_json(monkeypatch):
    want = fixture_json("gemini__openai_compat_tool_call_empty_id.step1.request.json")
    _, srv = run(monkeypatch, "gemini/gemini-2.5-pro-preview-05-06",
                 "gemini__openai_compat_tool_call_empty_id.step1.response.json", messages=want["messages"],
                 tools=want["tools"], tool_choice="auto")
    got = srv.requests[0]["body"]
    for key in ("model", "stream", "tools", "tool_choice"):
        assert got[key] == want[key]
    assert srv.requests[0]["path"] == "/v1/chat/completions"


def test_gemini__openai_compat_tool_call_empty_id_step2_request_json(monkeypatch):
    """Step 2 through the agent: the generated id links call and result, and the thought
    signature Gemini sent comes back verbatim."""
    from dsh_notebook.llm.agent import Agent, Tool
    from dsh_notebook.llm.session import SessionLog

    want = fixture_json("gemini__openai_compat_tool_call_empty_id.step2.request.json")
    client, srv = replay(monkeypatch, "gemini/gemini-2.5-pro-preview-05-06", [
        (200, JSON, fixture("gemini__openai_compat_tool_call_empty_id.step1.response.json")),
        (200, JSON, fixture("gemini__openai_compat_tool_call_empty_id.step2.response.json"))])
    tool = Tool("get_current_time", "the time", {"type": "object"}, lambda a: "Noon")
    try:
        with SessionLog.create(srv_folder(monkeypatch), model=client.model.id) as log:
            res = Agent(client, log, [tool], stop_hooks=[]).run_turn("What is the current time?")
    finally:
        srv.stop()
    assert res.status == "completed" and res.text == "The current time is Noon."
    got = srv.requests[1]["body"]
    ours = [wire(m) for m in got["messages"]]
    theirs = [wire(m) for m in want["messages"]]
    generated = ours[1]["tool_calls"][0][0]
    assert ours[1]["tool_calls"][0][1:] == theirs[1]["tool_calls"][0][1:] and ours[2]["tool_call_id"] == generated
    assert [m["role"] for m in ours] == [m["role"] for m in theirs] and ours[2]["content"] == "Noon"
    assert got["messages"][1]["extra_content"]["google"]["thought_signature"].startswith("AVSoXO4A")


def srv_folder(monkeypatch):
    import os
    import tempfile

    return tempfile.mkdtemp(dir=os.environ["DSH_NOTEBOOK_HOME"])


def test_gemini__openai_compat_tool_call_empty_id_step2_response_json(monkeypatch):
    r, _ = run(monkeypatch, "gemini/gemini-2.5-pro-preview-05-06",
               "gemini__openai_compat_tool_call_empty_id.step2.response.json")
    assert r.text == "The current time is Noon." and r.usage["total_tokens"] == 100


def test_mistral__stream_magistral_thinking_content_parts_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "mistral/magistral-medium-latest", "mistral__stream_magistral_thinking_content_parts.response.sse")
    assert r.text.startswith("To cross the street safely, follow these steps:")
    assert r.reasoning.startswith("Okay, the user is asking how to cross the street.")
    assert "thinking" not in r.text[:200] and r.usage["completion_tokens"] == 232


def test_mistral__stream_magistral_thinking_content_parts_request_json(monkeypatch):
    want = fixture_json("mistral__stream_magistral_thinking_content_parts.request.json")
    _, srv = run(monkeypatch, "mistral/magistral-medium-latest",
                 "mistral__stream_magistral_thinking_content_parts.response.sse", messages=want["messages"],
                 reasoning_effort="high")
    got = srv.requests[0]["body"]
    assert got["model"] == want["model"] and got["stream"] is True and "reasoning_effort" not in got
    assert [wire(m) for m in got["messages"]] == [wire(m) for m in want["messages"]]


def test_mistral__tool_call_9char_id_step1_response_json(monkeypatch):
    r, _ = run(monkeypatch, "mistral/mistral-large-latest", "mistral__tool_call_9char_id.step1.response.json")
    assert [(c.id, c.name, c.parsed()) for c in r.tool_calls] == [("KikbB849t", "get_weather", {"city": "Paris"})]
    assert r.served["cached_tokens"] == 76


def test_mistral__tool_call_9char_id_step1_request_json(monkeypatch):
    want = fixture_json("mistral__tool_call_9char_id.step1.request.json")
    _, srv = run(monkeypatch, "mistral/mistral-large-latest", "mistral__tool_call_9char_id.step1.response.json",
                 messages=want["messages"], tools=want["tools"], stream=False)
    got = srv.requests[0]["body"]
    assert got["tools"] == want["tools"] and got["model"] == want["model"]
    assert [wire(m) for m in got["messages"]] == [wire(m) for m in want["messages"]]


def test_mistral__tool_call_9char_id_step2_request_json(monkeypatch):
    """Ids from another provider (or generated) go out as 9 letters and digits, the same for
    the call and its result; Mistral's own ids unchanged."""
    want = fixture_json("mistral__tool_call_9char_id.step2.request.json")
    _, srv = run(monkeypatch, "mistral/mistral-large-latest", "mistral__tool_call_9char_id.step2.response.json",
                 messages=want["messages"], stream=False)
    assert [wire(m) for m in srv.requests[0]["body"]["messages"]] == [wire(m) for m in want["messages"]]
    foreign = [{"role": "user", "content": "x"},
               {"role": "assistant", "content": "", "tool_calls": [
                   {"id": "2968-LWy3uasib", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
               {"role": "tool", "tool_call_id": "2968-LWy3uasib", "content": "1"}]
    _, srv = run(monkeypatch, "mistral/mistral-large-latest", "mistral__tool_call_9char_id.step2.response.json",
                 messages=foreign, stream=False)
    sent = srv.requests[0]["body"]["messages"]
    new = sent[1]["tool_calls"][0]["id"]
    assert len(new) == 9 and new.isalnum() and sent[2]["tool_call_id"] == new


def test_mistral__tool_call_9char_id_step2_response_json(monkeypatch):
    r, _ = run(monkeypatch, "mistral/mistral-large-latest", "mistral__tool_call_9char_id.step2.response.json")
    assert r.text.startswith("The current weather in **Paris** is **sunny**")


def test_mistral__error_400_tool_call_id_format_json(monkeypatch):
    client, srv = replay(monkeypatch, "mistral/mistral-large-latest",
                         [(400, JSON, fixture("mistral__error_400_tool_call_id_format.json"))])
    try:
        with pytest.raises(LLMError) as info:
            client.complete([{"role": "user", "content": "hi"}])
    finally:
        srv.stop()
    e = info.value
    assert e.code == HTTP_STATUS and "Tool call id was 2968-LWy3uasib" in e.message and "(code 3280)" in e.message
    assert 'tool_id = "alnum9"' in e.message


# --------------------------------------------------------------------------- Anthropic's Messages API (issue 20)


def _anthropic_overloaded(monkeypatch, name):
    """Overloaded mid-stream (HTTP 200): retried as a 529 while nothing was shown, then named."""
    client, srv = replay(monkeypatch, "anthropic/claude-sonnet-4-5", [(200, SSE, fixture(name))] * 2, max_retries=1)
    try:
        with pytest.raises(StreamError) as info:
            client.complete([{"role": "user", "content": "hi"}])
    finally:
        srv.stop()
    assert info.value.code == PROVIDER and "Overloaded (code 529)" in info.value.message
    assert len(srv.requests) == 2


def test_anthropic__stream_error_overloaded_documented_sse(monkeypatch):
    _anthropic_overloaded(monkeypatch, "anthropic__stream_error_overloaded.documented.sse")


def test_anthropic__stream_error_overloaded_observed_sse(monkeypatch):
    _anthropic_overloaded(monkeypatch, "anthropic__stream_error_overloaded.observed.sse")


def test_anthropic__stream_extended_thinking_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "anthropic/claude-sonnet-4-0", "anthropic__stream_extended_thinking.response.sse")
    assert r.text.startswith("Here are the basic steps for safely crossing the street:")
    assert r.text.endswith("Always prioritize safety over speed when crossing streets.")
    assert r.reasoning.startswith("This is a straightforward question about pedestrian safety.")
    [block] = r.opaque["anthropic_thinking"]
    assert block["type"] == "thinking" and block["thinking"] == r.reasoning and len(block["signature"]) > 100
    assert r.finish_reason == "stop" and r.usage["output_tokens"] == 282 and r.usage["prompt_tokens"] == 43
    assert r.served["model"] == "claude-sonnet-4-20250514"


def test_anthropic__stream_extended_thinking_request_json(monkeypatch):
    want = fixture_json("anthropic__stream_extended_thinking.request.json")
    text = want["messages"][0]["content"][0]["text"]
    _, srv = run(monkeypatch, "anthropic/claude-sonnet-4-0", "anthropic__stream_extended_thinking.response.sse",
                 messages=[{"role": "user", "content": text}], max_tokens=want["max_tokens"], reasoning_effort="minimal")
    req = srv.requests[0]
    got = req["body"]
    for key in ("model", "stream", "max_tokens", "thinking", "messages"):
        assert got[key] == want[key], key
    assert req["path"] == "/v1/messages"
    assert req["headers"]["x-api-key"] == "test-key-not-real" and req["headers"]["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req["headers"]


def test_anthropic__stream_max_tokens_padded_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "anthropic/claude-3-7-sonnet-20250219", "anthropic__stream_max_tokens_padded.response.sse",
               tools=TOOL, max_tokens=124)
    assert r.truncated and r.finish_reason == "length" and r.tool_calls == []  # the cut call is never run
    assert r.text.startswith("I'll create a comprehensive tax guide") and r.served["cut_tool_calls"]
    assert "output limit of 124 tokens" in r.truncation_notice()


def test_anthropic__stream_tool_use_response_sse(monkeypatch):
    r, _ = run(monkeypatch, "anthropic/claude-sonnet-4-5", "anthropic__stream_tool_use.response.sse", tools=TOOL)
    assert r.text == "I'll check the current weather in Paris for you."
    assert [(c.id, c.name, c.parsed()) for c in r.tool_calls] == [
        ("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"})]
    assert r.finish_reason == "tool_calls"


@pytest.mark.parametrize("name", ["anthropic__stream_extended_thinking.response.sse",
                                  "anthropic__stream_tool_use.response.sse"])
def test_an_anthropic_stream_at_an_openai_chat_provider_is_named(monkeypatch, name):
    client, srv = replay(monkeypatch, "openai/gpt-4o", [(200, SSE, fixture(name))])
    try:
        with pytest.raises(LLMError) as info:
            client.complete([{"role": "user", "content": "hi"}])
    finally:
        srv.stop()
    assert info.value.code == PROTOCOL and "Anthropic Messages" in info.value.message


def test_every_fixture_file_has_a_test():
    """One test per file in ``../shared/fixtures/providers/``, named after it."""
    from providers_replay import PROVIDERS

    if not PROVIDERS.is_dir():
        pytest.skip(f"the recorded provider responses are not at {PROVIDERS}"
                    " (kept outside the project: set DSH_SHARED_DIR to the shared folder)")
    names = {n for n in globals() if n.startswith("test_")}
    missing = []
    for f in sorted(PROVIDERS.iterdir()):
        if f.name == "README.md":
            continue
        stem = "test_" + f.name.replace(".", "_").replace("-", "_")
        if stem not in names:
            missing.append(f"{f.name} (expected {stem})")
    assert not missing, missing


def test_the_async_client_reads_the_same_streams(monkeypatch):
    import asyncio

    client, srv = replay(monkeypatch, "ollama/qwen2.5-coder:7b-instruct-q8_0",
                         [(200, SSE, fixture("ollama__v1_stream_parallel_tool_calls.response.sse")),
                          (200, SSE, fixture("openrouter__stream_midstream_error.recorded.response.sse"))])
    try:
        r = asyncio.run(client.acomplete([{"role": "user", "content": "hi"}], tools=TOOL))
        with pytest.raises(StreamError) as info:
            asyncio.run(client.acomplete([{"role": "user", "content": "hi"}]))
    finally:
        srv.stop()
    assert [c.id for c in r.tool_calls] == ["call_wteop8bt", "call_rk2xye1l"]
    assert "Token limit reached" in info.value.message
