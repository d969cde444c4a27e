"""An httpx transport whose every socket operation ends by one deadline (spec: research.md
"Running the roles", the full-text fetch's "one deadline for the whole fetch"), and bounded
decoding of a compressed body.

Design:

- httpx's ``timeout`` bounds each read, so a host that sends its status line or headers one byte
  at a time, each byte inside the read timeout, is never stopped by it. :class:`DeadlineTransport`
  hands httpcore's connection pool a network backend whose streams clamp every read, write,
  connect and TLS handshake to the time left before ``ends`` (a ``time.monotonic()`` value), and
  refuse to start one once it has passed: the headers, the body and every redirect hop share the
  one deadline.
- The transport maps httpcore's errors onto httpx's (a timeout is ``httpx.ReadTimeout`` and so
  on), as ``httpx.HTTPTransport`` does.
- :class:`BoundedDecoder` decodes ``gzip`` or ``deflate`` (one coding; the checked fetcher asks
  for ``identity`` and refuses stacked or other codings) without ever holding more than the cap:
  zlib is asked for at most the bytes still allowed, so a 300-byte "gzip bomb" that would expand
  to gigabytes stops at the cap.
"""

from __future__ import annotations

import ssl
import time
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

from .errors import NetError

__all__ = ["BoundedDecoder", "DeadlineTransport", "UnsupportedEncoding"]

_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
)


def _mapped(exc: Exception) -> Exception:
    for core, mapped in _ERRORS:
        if isinstance(exc, core):
            return mapped(str(exc) or type(exc).__name__)
    return exc


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, ends: float) -> None:
        self._inner, self._ends = inner, ends

    def _left(self, timeout: float | None, kind: type[Exception]) -> float:
        remaining = self._ends - time.monotonic()
        if remaining <= 0:
            raise kind("the deadline for the whole fetch passed")
        return remaining if timeout is None else min(timeout, remaining)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, self._left(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(inner, self._ends)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, ends: float) -> None:
        self._inner, self._ends = httpcore.SyncBackend(), ends

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        remaining = self._ends - time.monotonic()
        if remaining <= 0:
            raise httpcore.ConnectTimeout("the deadline for the whole fetch passed")
        budget = remaining if timeout is None else min(timeout, remaining)
        return _DeadlineStream(self._inner.connect_tcp(host, port, budget, local_address, socket_options), self._ends)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("the checked fetcher connects over TCP only")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _Body(httpx.SyncByteStream):
    def __init__(self, response: httpcore.Response) -> None:
        self._response = response

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._response.iter_stream()
        except Exception as exc:  # noqa: BLE001 - mapped onto httpx's errors, as httpx's own transport does
            raise _mapped(exc) from None

    def close(self) -> None:
        self._response.close()


class DeadlineTransport(httpx.BaseTransport):
    """``DeadlineTransport(ends)``: HTTP/1.1 over TCP (TLS verified with the system's CAs, the SNI
    from the request's ``sni_hostname`` extension) where no socket operation outlives ``ends``
    (seconds on the ``time.monotonic()`` clock). No proxies, no environment, no keep-alive
    beyond the client that owns it."""

    def __init__(self, ends: float) -> None:
        self._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(), max_connections=4,
                                             network_backend=_DeadlineBackend(ends))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not isinstance(request.stream, httpx.SyncByteStream):
            raise TypeError("DeadlineTransport sends synchronous requests only")
        core = httpcore.Request(method=request.method,
                                url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                                                 port=request.url.port, target=request.url.raw_path),
                                headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        try:
            response = self._pool.handle_request(core)
        except Exception as exc:  # noqa: BLE001 - mapped onto httpx's errors, as httpx's own transport does
            raise _mapped(exc) from None
        return httpx.Response(status_code=response.status, headers=response.headers, stream=_Body(response),
                              extensions=response.extensions)

    def close(self) -> None:
        self._pool.close()


class UnsupportedEncoding(NetError, ValueError):
    """The answer's ``Content-Encoding`` is not one the bounded decoder reads (the checked fetcher
    reports it as a :class:`~.errors.FetchFailed`)."""

    code = "NET_ENCODING"


class BoundedDecoder:
    """``BoundedDecoder(content_encoding, limit)``: ``feed(raw) -> bytes`` decodes at most the bytes
    still allowed under *limit* (bytes); ``over`` is true once the decoded body would pass it.
    ``identity`` (or no header) passes bytes through; ``gzip``/``x-gzip`` and ``deflate`` (zlib or
    raw) are decoded; anything else, or several codings, raises :class:`UnsupportedEncoding`."""

    def __init__(self, content_encoding: str | None, limit: int) -> None:
        codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1:
            raise UnsupportedEncoding(f"several content codings ({content_encoding}) are not read")
        self.coding = codings[0] if codings else "identity"
        if self.coding not in ("identity", "gzip", "x-gzip", "deflate"):
            raise UnsupportedEncoding(f"the content coding {self.coding!r} is not read (identity, gzip, deflate)")
        self.limit, self.size, self.over = limit, 0, False
        self._raw_deflate = False
        self._z: Any = None
        if self.coding in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.coding == "deflate":
            self._z = zlib.decompressobj()

    def _take(self, out: bytes) -> bytes:
        room = self.limit - self.size
        if len(out) > room:
            self.over = True
            out = out[:room]
        self.size += len(out)
        return out

    def feed(self, raw: bytes) -> bytes:
        if self.over:
            return b""
        if self._z is None:
            return self._take(raw)
        try:
            out = self._z.decompress(raw, self.limit - self.size + 1)
        except zlib.error:
            if self.coding == "deflate" and not self._raw_deflate and self.size == 0:
                self._raw_deflate, self._z = True, zlib.decompressobj(-zlib.MAX_WBITS)  # deflate sent raw
                return self.feed(raw)
            raise UnsupportedEncoding(f"the {self.coding} body is damaged") from None
        if self._z.unconsumed_tail:  # more output waits than is allowed: the body is over the limit
            self.over = True
        out = self._take(out)
        if self._z.eof and self._z.unused_data and not self.over:  # the next gzip member (RFC 1952)
            rest = self._z.unused_data
            if self.coding == "deflate":
                raise UnsupportedEncoding("the deflate body has data after its end")
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out += self.feed(rest)
        return out

    def finish(self) -> None:
        """The body ended: raise :class:`UnsupportedEncoding` when a compressed body was cut short
        (its stream never reached its end), unless it was already over the limit."""
        if self._z is not None and not self.over and not self._z.eof:
            raise UnsupportedEncoding(f"the {self.coding} body was cut short (its stream does not end)")
