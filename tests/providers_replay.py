"""Replaying recorded provider responses over real HTTP on 127.0.0.1 (issue 19, item 6).

``ReplayServer(replies)`` answers each POST with the next ``(status, content_type, body)``
(bytes sent as they were recorded) and keeps every request: path, query, headers and JSON body.
A reply may also be a callable ``fn(request) -> (status, content_type, body)`` for a server that
checks a rule (DeepSeek's reasoning_content rule). The recorded files are in
``../shared/fixtures/providers/`` (each with its source in that folder's README); tests that need
them skip, saying so, where ``../shared`` is absent.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from dsh_notebook.loopback import LoopbackServer, QuietHandler

_SHARED = os.environ.get("DSH_SHARED_DIR") or str(Path(__file__).resolve().parents[2] / "shared")
PROVIDERS = Path(_SHARED) / "fixtures" / "providers"


def fixture(name: str) -> bytes:
    """The bytes of one recorded file; skips the test when the recordings are absent."""
    path = PROVIDERS / name
    if not path.is_file():
        pytest.skip(f"the recorded provider responses are not at {PROVIDERS}"
                    " (kept outside the project: set DSH_SHARED_DIR to the shared folder)")
    return path.read_bytes()


def fixture_json(name: str):
    return json.loads(fixture(name))


SSE = "text/event-stream"
JSON = "application/json"


class ReplayServer(LoopbackServer):
    name = "replay"

    def __init__(self, replies: list, port: int = 0):
        self.replies = list(replies)
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(QuietHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = None
                parts = urlsplit(self.path)
                request = {"path": parts.path, "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
                           "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                with server._lock:
                    server.requests.append(request)
                    reply = server.replies.pop(0) if server.replies else (500, JSON, b'{"error": "no reply left"}')
                if callable(reply):
                    reply = reply(request)
                status, ctype, data = reply
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.bind(Handler, port)


def wire(message: dict) -> dict:
    """The fields of a chat message that matter to a provider, normalised (no byte order,
    ``null``/``""``/``[]`` content alike, tool-call arguments as JSON values)."""
    out: dict = {"role": message.get("role")}
    content = message.get("content")
    out["content"] = content if content not in (None, [], "") else ""
    if "reasoning_content" in message:
        out["reasoning_content"] = message["reasoning_content"] or ""
    if message.get("tool_calls"):
        out["tool_calls"] = [(c.get("id"), c["function"]["name"], json.loads(c["function"].get("arguments") or "{}"))
                             for c in message["tool_calls"]]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    return out
