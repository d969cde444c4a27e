"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and demos (spec: llm.md
"Scripted server for tests and demos").

* A script is a list of turns ``{"expect": {...}, "reply": {...}}``, served in order. An
  expectation may name the ``model``, whether the request ``stream``\\s, text the last user
  message ``contains``, ``tools`` (names the request must offer, exactly) and ``params``
  (request fields and the values they must have, e.g. ``{"max_tokens": 4096}``). A request that does
  not match gets HTTP 400 (never retried) with a message saying what differed, and is kept in
  ``mismatches``; every request is kept in ``requests`` (the ``Authorization`` header only
  as a flag: keys never leave the client's memory in a test).
* A reply gives ``content``, ``reasoning`` (strings), ``tool_calls`` (``[{"id", "name",
  "arguments"}]``: ``id`` and ``name`` required; ``arguments`` a JSON string, or a JSON object
  which is serialised to one; default ``"{}"``), ``finish_reason``, ``usage`` (an object), and
  for failures ``status`` (an HTTP status; with ``message`` and ``headers`` such as
  ``Retry-After``), ``delay`` (seconds before answering), ``malformed`` (true, or a non-empty
  string: the stream ends with a line that is not JSON). ``chunk`` sets how many characters
  each streamed delta carries, ``chunk_delay`` the seconds between deltas.
* The script is checked when the server is made (:func:`validate_script`): turns hold only
  ``expect`` and ``reply``, each only the keys above with the types above (a key given as null
  counts as left out); anything else raises ``ValueError`` naming the turn, so a script error
  never surfaces as a failing request. (A subclass that overrides ``_handle`` may read reply
  keys of its own; those are let through.)
* ``POST /v1/messages`` is answered in Anthropic's Messages shape (a whole message, or the
  ``message_start`` ... ``message_stop`` events; reasoning as a thinking block with a scripted
  signature), so the ``anthropic`` provider can be pointed at the same script.
* The server is the standard library's threading HTTP server: no extra dependency.
* :class:`FakeSearxng` and :class:`FakeWikipedia` are fake search providers on the same
  footing (the JSON shapes :mod:`.search` reads), for the ``search`` tool's tests.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..loopback import LoopbackServer, QuietHandler


class _JSONHandler(QuietHandler):
    """A request handler that answers with JSON: ``_json(status, obj, headers)``."""

    def _json(self, status: int, obj: object, headers: dict | None = None) -> None:
        self._send(status, "application/json", json.dumps(obj).encode(), headers)


class ScriptedServer(LoopbackServer):
    """``with ScriptedServer(script) as srv: ... srv.base_url ...``"""

    name = "scripted-llm"

    def __init__(self, script: list[dict], port: int = 0):
        # ValueError naming the turn, before any port is taken. A subclass that serves turns itself
        # (overrides _handle) may read reply keys of its own: those pass; the known keys are checked.
        own_keys = type(self)._handle is not ScriptedServer._handle
        self.script = validate_script(script, other_reply_keys=own_keys)
        self.requests: list[dict] = []
        self.mismatches: list[str] = []
        self._lock = threading.Lock()
        self._next = 0
        server = self

        class Handler(_JSONHandler):
            def do_POST(self) -> None:
                server._handle(self)

            def do_GET(self) -> None:
                self._json(404, {"error": {"message": "the scripted server answers POST /chat/completions only"}})

        self._handler = Handler
        self.bind(Handler, port)

    @property
    def remaining(self) -> int:
        return len(self.script) - self._next

    # ------------------------------------------------------------ serving

    def _handle(self, h: _JSONHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        anthropic = h.path.rstrip("/") == "/v1/messages"
        if h.path.rstrip("/") not in ("/chat/completions", "/v1/chat/completions") and not anthropic:
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
        if anthropic:
            if body.get("stream"):
                self._stream(h, body, reply, events=_anthropic_events)
            else:
                h._json(200, _anthropic_message(body, reply))
        elif body.get("stream"):
            self._stream(h, body, reply)
        else:
            h._json(200, _completion(body, reply))

    def _stream(self, h: _JSONHandler, body: dict, reply: dict,
                events: Callable[[dict, dict], Iterator[dict]] | None = None) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True

        def send(obj: Any) -> None:
            data = obj if isinstance(obj, str) else json.dumps(obj)
            name = f"event: {obj['type']}\n" if isinstance(obj, dict) and events is not None else ""
            h.wfile.write(f"{name}data: {data}\n\n".encode())
            h.wfile.flush()

        try:
            for chunk in (events or _chunks)(body, reply):
                send(chunk)
                if reply.get("chunk_delay"):
                    time.sleep(float(reply["chunk_delay"]))
            if reply.get("malformed"):  # True: broken JSON; a string: that exact data line
                send(reply["malformed"] if isinstance(reply["malformed"], str) else "{this is not json")
            if events is None:
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
        names = sorted(t.get("function", {}).get("name") or t.get("name") for t in body.get("tools") or [])
        if names != sorted(expect["tools"]):
            return f"expected tools {sorted(expect['tools'])}, got {names}"
    for key, value in (expect.get("params") or {}).items():
        if body.get(key) != value:
            return f"expected {key}={value!r}, got {body.get(key)!r}"
    return None


def _usage(reply: dict, body: dict | None = None) -> dict:
    """The reply's scripted usage, or counts estimated as a provider would report them (four
    characters a token), so a client that learns from reported usage sees plausible numbers."""
    if reply.get("usage"):
        return reply["usage"]
    prompt = max(1, len(json.dumps((body or {}).get("messages", []), ensure_ascii=False)) // 4)
    completion = max(1, len(reply.get("content", "")) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


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
            "choices": [{"index": 0, "message": msg, "finish_reason": finish}], "usage": _usage(reply, body)}


def _pieces(text: str, n: int) -> list[str]:
    n = max(1, int(n))
    return [text[i:i + n] for i in range(0, len(text), n)]


def _chunks(body: dict, reply: dict) -> Iterator[dict]:
    n = reply.get("chunk", 8)
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": body.get("model")}

    def delta(d: dict, finish: str | None = None, usage: dict | None = None) -> dict:
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
    yield delta({}, finish, _usage(reply, body))


_ANTHROPIC_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal"}


def _anthropic_usage(reply: dict, body: dict) -> dict:
    u = _usage(reply, body)
    return {"input_tokens": u.get("prompt_tokens", 0), "output_tokens": u.get("completion_tokens", 0)}


def _anthropic_message(body: dict, reply: dict) -> dict:
    """A whole Messages reply (Anthropic's shape) for a scripted reply."""
    content: list[dict] = []
    if reply.get("reasoning"):
        content.append({"type": "thinking", "thinking": reply["reasoning"], "signature": "scripted-signature"})
    if reply.get("content"):
        content.append({"type": "text", "text": reply["content"]})
    calls = reply.get("tool_calls") or []
    for c in calls:
        content.append({"type": "tool_use", "id": c["id"], "name": c["name"],
                        "input": json.loads(c.get("arguments") or "{}")})
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    return {"id": "msg_scripted", "type": "message", "role": "assistant", "model": body.get("model"),
            "content": content, "stop_reason": _ANTHROPIC_STOP.get(finish, finish), "stop_sequence": None,
            "usage": _anthropic_usage(reply, body)}


def _anthropic_events(body: dict, reply: dict) -> Iterator[dict]:
    """The streamed events of a Messages reply (Anthropic's event types) for a scripted reply."""
    n = reply.get("chunk", 8)
    whole = _anthropic_message(body, reply)
    yield {"type": "message_start", "message": {**whole, "content": [], "stop_reason": None,
                                                "usage": {**whole["usage"], "output_tokens": 1}}}
    for i, block in enumerate(whole["content"]):
        kind = block["type"]
        if kind == "thinking":
            yield {"type": "content_block_start", "index": i,
                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
            yield {"type": "ping"}
            for piece in _pieces(block["thinking"], n):
                yield {"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": piece}}
            yield {"type": "content_block_delta", "index": i,
                   "delta": {"type": "signature_delta", "signature": block["signature"]}}
        elif kind == "text":
            yield {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}
            for piece in _pieces(block["text"], n):
                yield {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": piece}}
        else:
            yield {"type": "content_block_start", "index": i,
                   "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}
            for piece in _pieces(json.dumps(block["input"]), n):
                yield {"type": "content_block_delta", "index": i,
                       "delta": {"type": "input_json_delta", "partial_json": piece}}
        yield {"type": "content_block_stop", "index": i}
    yield {"type": "message_delta", "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
           "usage": whole["usage"]}
    yield {"type": "message_stop"}


# ---------------------------------------------------------------- the script's shape

_TURN_KEYS = ("expect", "reply")
_EXPECT_KEYS = ("model", "stream", "contains", "tools", "params")
#: The finish reasons a script may give (OpenAI's, and ``error`` as OpenRouter ends a failed stream).
FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "error")
_REPLY_KEYS = ("content", "reasoning", "tool_calls", "finish_reason", "usage", "status", "message", "headers",
               "delay", "malformed", "chunk", "chunk_delay")
_CALL_KEYS = ("id", "name", "arguments")


def _kind(value: object) -> str:
    return {bool: "true/false", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)


def _show(value: object, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _unknown(where: str, obj: dict, allowed: tuple) -> None:
    extra = [k for k in obj if k not in allowed]
    if extra:
        raise ValueError(f"{where}: unknown key {extra[0]!r} (allowed: {', '.join(allowed)})")


def _number(where: str, key: str, value: Any, *, minimum: float = 0.0, integer: bool = False) -> None:
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or not math.isfinite(value) or value < minimum:
        what = "a whole number" if integer else "a number"
        raise ValueError(f"{where}: {key!r} must be {what} >= {minimum:g}, not {_show(value)}")


def validate_script(script: object, other_reply_keys: bool = False) -> list[dict]:
    """The script checked and normalised, or ``ValueError`` naming the turn (from 1) and the
    problem. Each turn is an object with only ``expect`` and ``reply`` (either may be left
    out or null); the types of their keys are checked (the module docstring lists them);
    a key given as null counts as left out; a tool call's ``arguments`` given as a JSON
    object or list is serialised to its JSON string. ``other_reply_keys`` lets reply keys
    other than the known ones through (for a subclass that reads them)."""
    if isinstance(script, (str, bytes, dict)) or not hasattr(script, "__iter__"):
        raise ValueError(f"the script is a list of {{\"expect\", \"reply\"}} turns, not {_kind(script)}")
    out = []
    for n, turn in enumerate(script, 1):
        where = f"turn {n}"
        if not isinstance(turn, dict):
            raise ValueError(  # noqa: TRY004 - a bad script is a ValueError (documented)
                f"{where} is {_kind(turn)} ({_show(turn, 40)}), not an object "
                f"{{\"expect\": {{...}}, \"reply\": {{...}}}}")
        _unknown(where, turn, _TURN_KEYS)
        expect = _expect(f"{where} expect", turn.get("expect"))
        reply = _reply(f"{where} reply", turn.get("reply"), other_reply_keys)
        out.append({"expect": expect, "reply": reply})
    return out


def _expect(where: str, expect: object) -> dict:
    if expect is None:
        return {}
    if not isinstance(expect, dict):
        raise ValueError(f"{where} must be an object, not {_kind(expect)}")  # noqa: TRY004 - a bad script
    _unknown(where, expect, _EXPECT_KEYS)
    expect = {k: v for k, v in expect.items() if v is not None}
    for key, kind in (("model", str), ("stream", bool), ("contains", str), ("params", dict)):
        if key in expect and not isinstance(expect[key], kind):
            raise ValueError(f"{where}: {key!r} must be {_kind(kind())}, not {_kind(expect[key])}")
    tools = expect.get("tools")
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)):
        raise ValueError(f"{where}: 'tools' must be a list of tool names (strings), not {_show(tools)}")
    return expect


def _reply(where: str, reply: object, other_keys: bool = False) -> dict:
    if reply is None:
        return {}
    if not isinstance(reply, dict):
        raise ValueError(f"{where} must be an object, not {_kind(reply)}")  # noqa: TRY004 - a bad script
    if not other_keys:
        _unknown(where, reply, _REPLY_KEYS)
    reply = {k: v for k, v in reply.items() if v is not None}
    for key in ("content", "reasoning", "finish_reason", "message"):
        if key in reply and not isinstance(reply[key], str):
            raise ValueError(f"{where}: {key!r} must be a string, not {_kind(reply[key])}")
    if "finish_reason" in reply and reply["finish_reason"] not in FINISH_REASONS:
        raise ValueError(f"{where}: finish_reason {_show(reply['finish_reason'])} is not one a provider sends "
                         f"({', '.join(FINISH_REASONS)})")
    if "malformed" in reply and not isinstance(reply["malformed"], (bool, str)):  # a string counts as true
        raise ValueError(f"{where}: 'malformed' must be true or false, not {_kind(reply['malformed'])}")
    for key in ("usage", "headers"):
        if key in reply and not isinstance(reply[key], dict):
            raise ValueError(f"{where}: {key!r} must be an object, not {_kind(reply[key])}")
    for name, value in (reply.get("headers") or {}).items():
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ValueError(  # noqa: TRY004 - a bad script is a ValueError
                f"{where}: header {name!r} must be a string or a number, not {_kind(value)}")
    status = reply.get("status", 200)
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise ValueError(f"{where}: 'status' must be an HTTP status (a whole number from 100 to 599), "
                         f"not {_show(status)}")
    for key in ("delay", "chunk_delay"):
        if key in reply:
            _number(where, key, reply[key])
    if "chunk" in reply:
        _number(where, "chunk", reply["chunk"], minimum=1, integer=True)
    if "tool_calls" in reply:
        calls = reply["tool_calls"]
        if not isinstance(calls, list):
            raise ValueError(f"{where}: 'tool_calls' must be a list, not {_kind(calls)}")
        reply["tool_calls"] = [_call(f"{where} tool call {i}", c) for i, c in enumerate(calls, 1)]
    return reply


def _call(where: str, call: object) -> dict:
    if not isinstance(call, dict):
        raise ValueError(  # noqa: TRY004 - a bad script is a ValueError
            f"{where} must be an object {{\"id\", \"name\", \"arguments\"}}, not {_kind(call)}")
    _unknown(where, call, _CALL_KEYS)
    for key in ("id", "name"):
        if not isinstance(call.get(key), str) or not call[key]:
            raise ValueError(f"{where}: {key!r} is required and must be a non-empty string")
    args = call.get("arguments")
    if args is None:
        args = "{}"
    elif isinstance(args, (dict, list)):
        args = json.dumps(args, ensure_ascii=False)  # given as JSON: sent as its string, as a provider does
    elif not isinstance(args, str):
        raise ValueError(f"{where}: 'arguments' must be a JSON string (or an object), not {_kind(args)}")
    return {"id": call["id"], "name": call["name"], "arguments": args}


# ---------------------------------------------------------------- fake search providers


class _FakeJsonServer(LoopbackServer):
    """Base of the fake search servers: a standard-library HTTP server on 127.0.0.1 that
    answers GET requests, records each one in ``requests`` (``{"method", "path", "query",
    "user_agent"}``; ``query`` maps each parameter to its first value) and serves
    ``documents`` (path -> HTML text, or ``(status, content type, body)``, or ``(status, content
    type, body, headers)`` such as a redirect's ``Location``) for the enrich step.
    ``status`` (changeable at any time) other than 200 makes the search endpoint fail with it;
    ``fail_next`` (a list of statuses) makes the next searches fail once each, in order, with
    ``Retry-After: 0``, before the standing answer."""

    search_path = "/search"
    name = "fake"

    def __init__(self, results_by_query: dict[str, list[dict]] | Callable[[str], list[dict]] | None,
                 status: int = 200, port: int = 0, documents: dict | None = None):
        self.results_by_query = results_by_query
        self.status = status
        self.fail_next: list[int] = []
        self.documents = dict(documents or {})
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                server._handle(self)

            def do_POST(self) -> None:
                self._send(405, "application/json", json.dumps({"error": "GET only"}).encode())

        self.bind(Handler, port)

    @property
    def searches(self) -> list[dict]:
        """The recorded requests to the search endpoint."""
        return [r for r in self.requests if r["path"] == self.search_path]

    def results_for(self, query: str) -> list[dict]:
        """The scripted results of a query (a callable gets the query); unknown: ``[]``."""
        src = self.results_by_query
        got = src(query) if callable(src) else (src or {}).get(query)
        return list(got or [])

    def _handle(self, h: QuietHandler) -> None:
        from urllib.parse import parse_qs, urlsplit

        parts = urlsplit(h.path)
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        with self._lock:
            self.requests.append({"method": "GET", "path": parts.path, "query": query,
                                  "user_agent": h.headers.get("User-Agent")})
        if parts.path == self.search_path:
            with self._lock:
                once = self.fail_next.pop(0) if self.fail_next else None
            if once is not None:
                h._send(once, "application/json", json.dumps({"error": f"scripted status {once}"}).encode(),
                        {"Retry-After": "0"})
                return
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
        status, ctype, body, *headers = doc if isinstance(doc, tuple) else (200, "text/html; charset=utf-8", doc)
        h._send(status, ctype, body.encode() if isinstance(body, str) else body, headers[0] if headers else None)

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
