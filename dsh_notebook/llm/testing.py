"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and demos (spec: llm.md
"Scripted server for tests and demos").

* A script is a list of turns ``{"expect": {...}, "reply": {...}}``, served in order. An
  expectation may name the ``model``, whether the request ``stream``\\s, text the last user
  message ``contains``, and ``tools`` (names the request must offer). A request that does
  not match gets HTTP 400 (never retried) with a message saying what differed, and is kept in
  ``mismatches``; every request is kept in ``requests`` (the ``Authorization`` header only
  as a flag: keys never leave the client's memory in a test).
* A reply gives ``content``, ``reasoning``, ``tool_calls`` (``[{"id", "name", "arguments"}]``),
  ``finish_reason``, ``usage``, and for failures ``status`` (with ``headers`` such as
  ``Retry-After``), ``delay`` (seconds before answering), ``malformed`` (a broken SSE
  stream). ``chunk`` sets how many characters each streamed delta carries.
* The server is the standard library's threading HTTP server: no extra dependency.
* :class:`FakeSearxng` and :class:`FakeWikipedia` are fake search providers on the same
  footing (the JSON shapes :mod:`.search` reads), for the ``search`` tool's tests.
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
            h._json(400, {"error": {"message": f"scripted server: {msg}"}})
            return
        turn = self.script[index]
        problem = _mismatch(turn.get("expect") or {}, body)
        if problem:
            msg = f"request {index + 1} does not match the script: {problem}"
            self.mismatches.append(msg)
            h._json(400, {"error": {"message": f"scripted server: {msg}"}})  # 4xx: a client never retries it
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
            if reply.get("malformed"):  # True: broken JSON; a string: that exact data line
                send(reply["malformed"] if isinstance(reply["malformed"], str) else "{this is not json")
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


# ---------------------------------------------------------------- fake search providers


class _FakeJsonServer:
    """Base of the fake search servers: a standard-library HTTP server on 127.0.0.1 that
    answers GET requests, records each one in ``requests`` (``{"method", "path", "query",
    "user_agent"}``; ``query`` maps each parameter to its first value) and serves
    ``documents`` (path -> HTML text, or ``(status, content type, body)``) for the enrich step.
    ``status`` (changeable at any time) other than 200 makes the search endpoint fail with it."""

    search_path = "/search"
    name = "fake"

    def __init__(self, results_by_query, status: int = 200, port: int = 0, documents: dict | None = None):
        self.results_by_query = results_by_query
        self.status = status
        self.documents = dict(documents or {})
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                server._handle(self)

            def do_POST(self):
                self._send(405, "application/json", json.dumps({"error": "GET only"}).encode())

            def _send(self, status, ctype, body: bytes):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def searches(self) -> list[dict]:
        """The recorded requests to the search endpoint."""
        return [r for r in self.requests if r["path"] == self.search_path]

    def results_for(self, query: str) -> list[dict]:
        """The scripted results of a query (a callable gets the query); unknown: ``[]``."""
        src = self.results_by_query
        got = src(query) if callable(src) else (src or {}).get(query)
        return list(got or [])

    def _handle(self, h) -> None:
        from urllib.parse import parse_qs, urlsplit

        parts = urlsplit(h.path)
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        with self._lock:
            self.requests.append({"method": "GET", "path": parts.path, "query": query,
                                  "user_agent": h.headers.get("User-Agent")})
        if parts.path == self.search_path:
            if self.status != 200:
                h._send(self.status, "application/json",
                        json.dumps({"error": f"scripted status {self.status}"}).encode())
                return
            status, obj = self._answer(query)
            h._send(status, "application/json", json.dumps(obj).encode())
            return
        doc = self.documents.get(parts.path)
        if doc is None:
            h._send(404, "text/plain", b"not found")
            return
        status, ctype, body = doc if isinstance(doc, tuple) else (200, "text/html; charset=utf-8", doc)
        h._send(status, ctype, body.encode() if isinstance(body, str) else body)

    def _answer(self, query: dict) -> tuple[int, Any]:  # pragma: no cover - overridden
        raise NotImplementedError


class FakeSearxng(_FakeJsonServer):
    """A SearXNG instance's JSON API on 127.0.0.1: ``GET /search?q=...&format=json`` answers
    ``{"query", "number_of_results", "results": [...], ...}``; each scripted result needs a
    ``url`` and may give ``title``, ``content``, ``publishedDate`` (filled with ``None``/``""``
    when missing). ``format`` other than ``json`` gets 403, as on an instance without JSON.

    ``with FakeSearxng({"resistivity of copper": [{"url": ..., "title": ..., "content": ...}]}) as sx:``
    """

    search_path = "/search"
    name = "searxng"

    def _answer(self, query: dict) -> tuple[int, Any]:
        if query.get("format") != "json":
            return 403, {"error": "the json format is not enabled on this fake instance"}
        q = query.get("q", "")
        results = [{"title": "", "content": "", "engine": "fake", "publishedDate": None, **r}
                   for r in self.results_for(q)]
        return 200, {"query": q, "number_of_results": len(results), "results": results, "answers": [],
                     "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}


class FakeWikipedia(_FakeJsonServer):
    """Wikipedia's REST search on 127.0.0.1: ``GET /w/rest.php/v1/search/page?q=...&limit=N``
    answers ``{"pages": [...]}`` (at most ``limit``, default 50); each scripted page gives
    ``key`` or ``title`` and may give ``excerpt`` (HTML with ``<span class="searchmatch">``),
    ``description``. Article pages for enrich go in ``documents`` (``/wiki/<key>``)."""

    search_path = "/w/rest.php/v1/search/page"
    name = "wikipedia"

    def _answer(self, query: dict) -> tuple[int, Any]:
        try:
            limit = int(query.get("limit", 50))
        except ValueError:
            return 400, {"error": "limit must be an integer"}
        pages = []
        for i, p in enumerate(self.results_for(query.get("q", ""))):
            title = p.get("title") or str(p.get("key", "")).replace("_", " ")
            pages.append({"id": 1000 + i, "key": p.get("key") or title.replace(" ", "_"), "title": title,
                          "excerpt": p.get("excerpt", ""), "matched_title": None,
                          "description": p.get("description"), "thumbnail": None})
        return 200, {"pages": pages[:max(1, min(100, limit))]}
