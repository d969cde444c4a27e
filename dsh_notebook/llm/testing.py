"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and demos (spec: llm.md
"Scripted server for tests and demos").

* A script is a list of turns ``{"expect": {...}, "reply": {...}}``, served in order. An
  expectation may name the ``model``, whether the request ``stream``\\s, text the last user
  message ``contains``, and ``tools`` (names the request must offer). A request that does
  not match gets HTTP 500 with a message saying what differed, and is kept in
  ``mismatches``; every request is kept in ``requests`` (the ``Authorization`` header only
  as a flag: keys never leave the client's memory in a test).
* A reply gives ``content``, ``reasoning``, ``tool_calls`` (``[{"id", "name", "arguments"}]``),
  ``finish_reason``, ``usage``, and for failures ``status`` (with ``headers`` such as
  ``Retry-After``), ``delay`` (seconds before answering), ``malformed`` (a broken SSE
  stream). ``chunk`` sets how many characters each streamed delta carries.
* The server is the standard library's threading HTTP server: no extra dependency.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedServer:
    """``with ScriptedServer(script) as srv: ... srv.base_url ...``"""

    def __init__(self, script: list[dict], port: int = 0):
        self.script = list(script)
        self.requests: list[dict] = []
        self.mismatches: list[str] = []
        self._lock = threading.Lock()
        self._next = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802 - http.server's naming
                server._handle(self)

            def do_GET(self):  # noqa: N802
                self._json(404, {"error": {"message": "the scripted server answers POST /chat/completions only"}})

            def _json(self, status, obj, headers=None):
                body = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, str(v))
                self.end_headers()
                self.wfile.write(body)

        self._handler = Handler
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "ScriptedServer":
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="scripted-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "ScriptedServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def remaining(self) -> int:
        return len(self.script) - self._next

    # ------------------------------------------------------------ serving

    def _handle(self, h) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        if h.path.rstrip("/") not in ("/chat/completions", "/v1/chat/completions"):
            h._json(404, {"error": {"message": f"unknown path {h.path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            h._json(400, {"error": {"message": "the request body is not JSON"}})
            return
        with self._lock:
            index = self._next
            self._next += 1
            self.requests.append({"path": h.path, "body": body,
                                  "authorized": bool(h.headers.get("Authorization"))})
        if index >= len(self.script):
            msg = f"request {index + 1} arrived but the script has only {len(self.script)} turn(s)"
            self.mismatches.append(msg)
            h._json(500, {"error": {"message": f"scripted server: {msg}"}})
            return
        turn = self.script[index]
        problem = _mismatch(turn.get("expect") or {}, body)
        if problem:
            msg = f"request {index + 1} does not match the script: {problem}"
            self.mismatches.append(msg)
            h._json(500, {"error": {"message": f"scripted server: {msg}"}})
            return
        reply = turn.get("reply") or {}
        if reply.get("delay"):
            time.sleep(float(reply["delay"]))
        status = int(reply.get("status", 200))
        if status != 200:
            h._json(status, {"error": {"message": reply.get("message", f"scripted status {status}")}},
                    reply.get("headers"))
            return
        if body.get("stream"):
            self._stream(h, body, reply)
        else:
            h._json(200, _completion(body, reply))

    def _stream(self, h, body: dict, reply: dict) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True

        def send(obj: Any) -> None:
            data = obj if isinstance(obj, str) else json.dumps(obj)
            h.wfile.write(f"data: {data}\n\n".encode())
            h.wfile.flush()

        try:
            for chunk in _chunks(body, reply):
                send(chunk)
                if reply.get("chunk_delay"):
                    time.sleep(float(reply["chunk_delay"]))
            if reply.get("malformed"):
                send("{this is not json")
            send("[DONE]")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (a cancelled stream)


def _mismatch(expect: dict, body: dict) -> str | None:
    if "model" in expect and body.get("model") != expect["model"]:
        return f"expected model {expect['model']!r}, got {body.get('model')!r}"
    if "stream" in expect and bool(body.get("stream")) != bool(expect["stream"]):
        return f"expected stream={expect['stream']}, got stream={bool(body.get('stream'))}"
    if "contains" in expect:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        last = users[-1].get("content") if users else ""
        if expect["contains"] not in str(last):
            return f"expected the last user message to contain {expect['contains']!r}, got {str(last)[:80]!r}"
    if "tools" in expect:
        names = sorted(t.get("function", {}).get("name") for t in body.get("tools") or [])
        if names != sorted(expect["tools"]):
            return f"expected tools {sorted(expect['tools'])}, got {names}"
    for key, value in (expect.get("params") or {}).items():
        if body.get(key) != value:
            return f"expected {key}={value!r}, got {body.get(key)!r}"
    return None


def _usage(reply: dict) -> dict:
    return reply.get("usage") or {"prompt_tokens": 10, "completion_tokens": max(1, len(reply.get("content", "")) // 4),
                                  "total_tokens": 10 + max(1, len(reply.get("content", "")) // 4)}


def _completion(body: dict, reply: dict) -> dict:
    msg: dict = {"role": "assistant", "content": reply.get("content", "")}
    if reply.get("reasoning"):
        msg["reasoning_content"] = reply["reasoning"]
    calls = reply.get("tool_calls") or []
    if calls:
        msg["tool_calls"] = [{"id": c["id"], "type": "function",
                              "function": {"name": c["name"], "arguments": c.get("arguments", "{}")}} for c in calls]
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "message": msg, "finish_reason": finish}], "usage": _usage(reply)}


def _pieces(text: str, n: int) -> list[str]:
    n = max(1, int(n))
    return [text[i:i + n] for i in range(0, len(text), n)]


def _chunks(body: dict, reply: dict):
    n = reply.get("chunk", 8)
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": body.get("model")}

    def delta(d, finish=None, usage=None):
        out = {**base, "choices": [{"index": 0, "delta": d, "finish_reason": finish}]}
        if usage is not None:
            out["usage"] = usage
        return out

    yield delta({"role": "assistant", "content": ""})
    for piece in _pieces(reply.get("reasoning", ""), n):
        yield delta({"reasoning_content": piece})
    for piece in _pieces(reply.get("content", ""), n):
        yield delta({"content": piece})
    calls = reply.get("tool_calls") or []
    for i, c in enumerate(calls):
        yield delta({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                     "function": {"name": c["name"], "arguments": ""}}]})
        for piece in _pieces(c.get("arguments", "{}"), n):
            yield delta({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    yield delta({}, finish, _usage(reply))
