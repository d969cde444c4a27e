"""ChatClient through real HTTP against the scripted server on 127.0.0.1 (spec: llm.md)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time

import pytest

from dsh_notebook.llm import ChatClient, LLMError
from dsh_notebook.llm.testing import ScriptedServer
from dsh_notebook.settings import load_settings

USER = [{"role": "user", "content": "What is 2+2?"}]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    monkeypatch.delenv("DSH_MODEL", raising=False)
    return tmp_path


def client(srv, **kw):
    os.environ["DEEPSEEK_BASE_URL"] = srv.base_url
    try:
        return ChatClient(backoff=0.01, **kw)
    finally:
        del os.environ["DEEPSEEK_BASE_URL"]


def test_streaming_text_and_reasoning(home):
    script = [{"expect": {"model": "deepseek-chat", "stream": True, "contains": "2+2"},
               "reply": {"content": "Four. 2+2 = 4.", "reasoning": "Add the numbers.", "chunk": 3}}]
    seen = []
    with ScriptedServer(script) as srv:
        r = client(srv).complete(USER, on_delta=lambda kind, t: seen.append((kind, t)))
    assert r.text == "Four. 2+2 = 4." and r.reasoning == "Add the numbers."
    assert r.finish_reason == "stop" and r.usage["total_tokens"] > 0
    assert "".join(t for k, t in seen if k == "text") == r.text and len(seen) > 5
    assert srv.requests[0]["authorized"] and "test-key-not-real" not in json.dumps(srv.requests)


def test_non_streaming(home):
    with ScriptedServer([{"expect": {"stream": False}, "reply": {"content": "4"}}]) as srv:
        r = client(srv).complete(USER, stream=False)
    assert r.text == "4" and r.finish_reason == "stop"


def test_tool_call_arguments_split_across_many_deltas(home):
    args = json.dumps({"formula": "@V/@R", "target": "I"})
    script = [{"reply": {"tool_calls": [{"id": "call_1", "name": "eval", "arguments": args},
                                        {"id": "call_2", "name": "get", "arguments": '{"name": "I"}'}],
                         "chunk": 2}}]
    tools = [{"type": "function", "function": {"name": "eval", "parameters": {"type": "object"}}}]
    with ScriptedServer(script) as srv:
        r = client(srv).complete(USER, tools=tools)
    assert [c.name for c in r.tool_calls] == ["eval", "get"]
    assert r.tool_calls[0].parsed() == {"formula": "@V/@R", "target": "I"}
    assert r.finish_reason == "tool_calls"
    assert srv.requests[0]["body"]["tools"] == tools


def test_malformed_stream_is_a_protocol_error(home):
    with ScriptedServer([{"reply": {"content": "ok", "malformed": True}}]) as srv:
        with pytest.raises(LLMError) as exc:
            client(srv).complete(USER)
    assert exc.value.code == "PROTOCOL"


def test_401_is_http_status_and_not_retried(home):
    with ScriptedServer([{"reply": {"status": 401, "message": "bad key"}}]) as srv:
        with pytest.raises(LLMError) as exc:
            client(srv).complete(USER)
    assert (exc.value.code, exc.value.status) == ("HTTP_STATUS", 401) and "bad key" in exc.value.message
    assert len(srv.requests) == 1


def test_429_then_success_is_retried_honouring_retry_after(home):
    script = [{"reply": {"status": 429, "headers": {"Retry-After": "0.05"}}}, {"reply": {"content": "ok"}}]
    with ScriptedServer(script) as srv:
        r = client(srv).complete(USER)
    assert r.text == "ok" and len(srv.requests) == 2


def test_500_three_times_gives_up_with_the_code(home):
    with ScriptedServer([{"reply": {"status": 500}}] * 3) as srv:
        with pytest.raises(LLMError) as exc:
            client(srv, max_retries=2).complete(USER)
    assert (exc.value.code, exc.value.status) == ("HTTP_STATUS", 500) and len(srv.requests) == 3


def test_a_refused_connection_is_retried_then_reported(home):
    """Connection errors (the request never reached the provider) go through the one retry policy too."""
    import httpx

    tries = []

    def refuse(request):
        tries.append(request.url)
        raise httpx.ConnectError("connection refused", request=request)

    os.environ["DEEPSEEK_BASE_URL"] = "http://127.0.0.1:9"
    try:
        c = ChatClient(backoff=0.001, max_retries=2, transport=httpx.MockTransport(refuse))
    finally:
        del os.environ["DEEPSEEK_BASE_URL"]
    with pytest.raises(LLMError) as exc:
        c.complete(USER, stream=False)
    assert exc.value.code == "HTTP_STATUS" and "could not connect" in exc.value.message and len(tries) == 3
    c.close()


def test_timeout(home):
    with ScriptedServer([{"reply": {"content": "late", "delay": 60}}]) as srv:  # held far past the timeout
        with pytest.raises(LLMError) as exc:
            client(srv, timeout=0.2).complete(USER, stream=False)
    assert exc.value.code == "TIMEOUT"


def test_missing_key_and_unknown_model(home, monkeypatch):
    monkeypatch.delenv("DEEPSEEK_API_KEY")
    with ScriptedServer([]) as srv:
        with pytest.raises(LLMError) as exc:
            client(srv).complete(USER)
        assert exc.value.code == "MISSING_CREDENTIAL" and "DEEPSEEK_API_KEY" in exc.value.message
        with pytest.raises(LLMError) as exc:
            client(srv, model="nope-9")
        assert exc.value.code == "UNKNOWN_MODEL" and "deepseek/deepseek-chat" in exc.value.message
    assert srv.requests == []


def test_cancel_mid_stream(home):
    cancel = threading.Event()
    script = [{"reply": {"content": "x" * 400, "chunk": 1, "chunk_delay": 0.002}}]
    got = []

    def on_delta(kind, text):
        got.append(text)
        if len(got) == 20:
            cancel.set()

    with ScriptedServer(script) as srv:
        with pytest.raises(LLMError) as exc:
            client(srv).complete(USER, on_delta=on_delta, cancel=cancel)
    assert exc.value.code == "CANCELLED" and len(got) < 400


def when(cond) -> None:
    """Wait until ``cond()`` holds (a server saw a request): polls, bounded at 60 s, asserts nothing
    about how long it took."""
    for _ in range(6000):
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError("the condition never held")


@pytest.mark.parametrize("stream", [True, False])
def test_cancel_while_the_model_is_silent(home, stream):
    """The stop comes while the server holds its answer back (60 s): the call ends CANCELLED,
    never with the late reply, on a machine of any load (no wall-clock assertion)."""
    cancel = threading.Event()
    with ScriptedServer([{"reply": {"content": "late", "delay": 60}}]) as srv:
        threading.Thread(target=lambda: (when(lambda: srv.requests), cancel.set()), daemon=True).start()
        c = client(srv)
        with pytest.raises(LLMError) as exc:
            c.complete(USER, cancel=cancel, stream=stream)
        assert exc.value.code == "CANCELLED" and len(srv.requests) == 1
        c.close()


class CancelWhenWaiting(threading.Event):
    """A cancel event set at the moment the client starts waiting to retry: the retry policy
    waits with ``cancel.wait(seconds)`` (:mod:`dsh_notebook.net.retry`); the seconds are kept in
    ``waits``. Shorter waits (the cancel watcher's polls) pass through."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def wait(self, timeout=None):
        if timeout is not None and timeout >= 1:
            self.waits.append(timeout)
            self.set()
        return super().wait(timeout)


def test_cancel_stops_waiting_between_retries(home):
    """The first attempt is answered 429 with ``Retry-After: 30``; the stop comes once the client
    waits those 30 s: the wait ends at once (CANCELLED) and the second attempt is never sent. Driven
    by the client's own cancel event, so it holds on a machine of any load (issue 22: it used to
    sleep 0.2 s and time the call)."""
    cancel = CancelWhenWaiting()
    script = [{"reply": {"status": 429, "headers": {"Retry-After": "30"}}}, {"reply": {"content": "never"}}]
    with ScriptedServer(script) as srv:
        with pytest.raises(LLMError) as exc:
            client(srv, max_retries=3).complete(USER, cancel=cancel)
    assert exc.value.code == "CANCELLED" and len(srv.requests) == 1
    assert cancel.waits == [30.0]  # the server's Retry-After, the one wait begun


def test_script_mismatch_is_reported(home):
    with ScriptedServer([{"expect": {"model": "deepseek-reasoner"}, "reply": {"content": "x"}}]) as srv:
        with pytest.raises(LLMError) as exc:
            client(srv).complete(USER)
    # 400, not 5xx: a mismatch is never retried into the next turn of the script
    assert exc.value.status == 400 and "expected model" in exc.value.message and srv.mismatches
    assert len(srv.requests) == 1


def test_hooks_shape_the_request_and_record_it(home):
    def more_tokens(body, ctx):
        body["max_tokens"] = ctx.model.default_max_tokens
        return [f"max_tokens set to {ctx.model.default_max_tokens}"]

    with ScriptedServer([{"expect": {"params": {"max_tokens": 4096}}, "reply": {"content": "ok"}}]) as srv:
        r = client(srv, hooks=[more_tokens]).complete(USER)
    assert r.shaping == ["max_tokens set to 4096"] and srv.requests[0]["body"]["max_tokens"] == 4096


def test_async_client(home):
    with ScriptedServer([{"reply": {"content": "async ok", "chunk": 2}}]) as srv:
        r = asyncio.run(client(srv).acomplete(USER))
    assert r.text == "async ok"


def test_settings_file_merges_and_validates(home):
    (home / "settings.toml").write_text('''
default_model = "deepseek/deepseek-reasoner"
[[providers.deepseek.models]]
id = "deepseek-reasoner"
reasoning_efforts = ["low", "medium", "high", "max"]
''', encoding="utf-8")
    s = load_settings()
    pid, prov, model = s.resolve()
    assert model.id == "deepseek-reasoner" and model.strongest_effort == "max" and model.max_tokens == 65536
    assert prov.model("deepseek-chat") is not None  # built-ins kept
    (home / "settings.toml").write_text('[[providers.deepseek.models]]\nid = "x"\nmax_tokens = -1\n', encoding="utf-8")
    with pytest.raises(LLMError) as exc:
        load_settings()
    assert exc.value.code == "SETTINGS" and "max_tokens" in exc.value.message


def test_credentials_file_must_be_private(home, monkeypatch):
    monkeypatch.delenv("DEEPSEEK_API_KEY")
    cred = home / "credentials.toml"
    cred.write_text('[deepseek]\napi_key = "from-file-not-real"\n', encoding="utf-8")
    cred.chmod(0o644)
    with ScriptedServer([{"reply": {"content": "ok"}}]) as srv:
        with pytest.raises(LLMError) as exc:
            client(srv).complete(USER)
        assert exc.value.code == "MISSING_CREDENTIAL" and "chmod 600" in exc.value.message
        cred.chmod(0o600)
        assert client(srv).complete(USER).text == "ok"


def test_serve_fake_llm_command(home, tmp_path):
    import socket
    import subprocess
    import sys

    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"reply": {"content": "scripted hello"}}]), encoding="utf-8")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "dsh_notebook.cli", "serve-fake-llm", "--script", str(script),
                             "--port", str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert "scripted" in proc.stdout.readline()
        os.environ["DEEPSEEK_BASE_URL"] = f"http://127.0.0.1:{port}"
        try:
            r = ChatClient().complete(USER)
        finally:
            del os.environ["DEEPSEEK_BASE_URL"]
        assert r.text == "scripted hello"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("script, words", [
    ([{"reply": {"status": "abc"}}], "turn 1 reply: 'status'"),
    ([{"reply": {"status": 99999}}], "turn 1 reply: 'status'"),
    ([{"reply": {"content": "ok"}}, {"reply": {"tool_calls": [{"name": "f", "arguments": "{}"}]}}],
     "turn 2 reply tool call 1: 'id' is required"),
    ([{"reply": {"tool_calls": [{"id": "c1", "arguments": "{}"}]}}], "'name' is required"),
    ([{"reply": {"tool_calls": [{"id": "c1", "name": "f", "arguments": 5}]}}], "'arguments' must be a JSON string"),
    ([{"reply": {"tool_calls": {"id": "c1"}}}], "'tool_calls' must be a list"),
    ([{"reply": {"delay": "soon"}}], "'delay' must be a number"),
    ([{"reply": {"chunk_delay": -1}}], "'chunk_delay' must be a number >= 0"),
    ([{"reply": {"chunk": 0}}], "'chunk' must be a whole number >= 1"),
    ([{"expect": "str"}], "turn 1 expect must be an object"),
    ([{"reply": "str"}], "turn 1 reply must be an object"),
    ([{"reply": {"content": 5}}], "'content' must be a string"),
    ([{"reply": {"malformed": 1}}], "'malformed' must be true or false"),
    ([{"reply": {"headers": {"Retry-After": [1]}}}], "header 'Retry-After'"),
    ([1], "turn 1 is a number"),
    (["x"], "turn 1 is a string"),
    ([{"reply": {"content": "ok"}}, None], "turn 2 is null"),
    ([{"expect": {"contain": "x"}}], "unknown key 'contain'"),
    ([{"expect": {"stream": "yes"}}], "'stream' must be true/false"),
    ([{"expect": {"tools": "search"}}], "'tools' must be a list"),
    ([{"expect": {"params": []}}], "'params' must be an object"),
    ([{"reply": {"contents": "x"}}], "unknown key 'contents'"),
    ([{"replies": {}}], "turn 1: unknown key 'replies'"),
    ("abc", "list of"),
])
def test_scripted_server_checks_the_script_when_made(script, words):
    with pytest.raises(ValueError) as exc:
        ScriptedServer(script)
    assert words in str(exc.value), str(exc.value)


def test_scripted_server_keeps_every_reply_key_and_serialises_object_arguments(home):
    full = {"content": "hi", "reasoning": "think", "finish_reason": "stop", "usage": {"prompt_tokens": 1,
            "completion_tokens": 1, "total_tokens": 2}, "delay": 0, "chunk": 2, "chunk_delay": 0, "malformed": False}
    script = [{"expect": {"model": "deepseek-chat", "stream": True, "contains": "2+2", "tools": [],
                          "params": {"model": "deepseek-chat"}}, "reply": full},
              {"reply": {"tool_calls": [{"id": "c1", "name": "f", "arguments": {"x": 1, "s": "é"}}]}},
              {"reply": {"status": 503, "message": "busy", "headers": {"Retry-After": 0}}},
              {"expect": None, "reply": {"content": None}}]
    with ScriptedServer(script) as srv:
        c = client(srv, max_retries=0)
        r = c.complete(USER, stream=True)
        assert (r.text, r.reasoning) == ("hi", "think") and srv.mismatches == []
        [call] = c.complete(USER).tool_calls
        assert (call.id, call.name, call.parsed()) == ("c1", "f", {"x": 1, "s": "é"})
        with pytest.raises(LLMError) as exc:
            c.complete(USER)
        assert "503" in exc.value.message
        assert c.complete(USER).text == ""
    assert srv.script[1]["reply"]["tool_calls"][0]["arguments"] == '{"x": 1, "s": "é"}'
    assert srv.script[3] == {"expect": {}, "reply": {}}  # null is the same as left out


def test_a_subclass_serving_its_own_reply_keys_may_use_them_and_the_example_script_is_valid():
    from pathlib import Path

    class Raw(ScriptedServer):
        def _handle(self, h) -> None:  # serves {"raw": ...} itself
            return super()._handle(h)

    script = [{"reply": {"raw": {"choices": []}}}]
    with pytest.raises(ValueError, match="unknown key 'raw'"):
        ScriptedServer(script)
    srv = Raw(script)
    srv.httpd.server_close()
    assert srv.script == [{"expect": {}, "reply": {"raw": {"choices": []}}}]
    with pytest.raises(ValueError, match="'content' must be a string"):  # the known keys are still checked
        Raw([{"reply": {"raw": 1, "content": 5}}])
    example = Path(__file__).resolve().parents[1] / "notebooks" / "chat-with-the-reckoner.script.json"
    srv = ScriptedServer(json.loads(example.read_text(encoding="utf-8")))
    srv.httpd.server_close()
    assert srv.remaining > 1


def test_a_password_in_the_base_url_never_reaches_a_message(home):
    """``http://user:password@host/v1`` (issue 14): the client's errors show ``***@host``, so neither
    the cell output nor the session log (which records the error) holds the password."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    os.environ["DEEPSEEK_BASE_URL"] = f"http://ana:s3cret-pw-0123@127.0.0.1:{port}/v1"
    try:
        c = ChatClient(backoff=0.001, max_retries=0)
    finally:
        del os.environ["DEEPSEEK_BASE_URL"]
    with pytest.raises(LLMError) as exc:
        c.complete(USER, stream=False)
    assert "could not connect to http://***@127.0.0.1" in exc.value.message
    assert "s3cret" not in str(exc.value) and "ana:" not in str(exc.value)
    c.close()
