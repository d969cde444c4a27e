"""A standard-library HTTP server on 127.0.0.1 for the project's fakes (spec: llm.md "Scripted
server for tests and demos", research.md "Running the roles": the scripted chat server, the fake
search providers, the fake bibliographic resolvers). Plain Python with no
third-party import, so every layer's test doubles can use it.

``LoopbackServer`` binds at construction (port 0 = any free port) and gives ``port``,
``base_url``, ``start()``, ``stop()`` and the context-manager protocol; a subclass supplies
its ``BaseHTTPRequestHandler`` class to :meth:`LoopbackServer.bind`.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, no request logging; ``_send(status, content_type, body, headers)``."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, ctype: str, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.write(body)


class LoopbackServer:
    """Lifecycle shared by the fakes (see the module docstring)."""

    name = "loopback"

    def bind(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        """Listen on ``127.0.0.1:port`` (0: a free port) with *handler*; a subclass calls this from
        its constructor. :meth:`start` (or ``with``) then serves on a daemon thread."""
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        if self._thread is None:
            self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            name=f"dsh-{self.name}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
