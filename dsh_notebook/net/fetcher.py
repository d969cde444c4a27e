"""The one checked fetcher: every GET of a URL that came from outside (a model, a search result,
a redirect) goes through :func:`fetch` (spec: research.md "Running the roles",
``research_link_fulltext``; llm.md "Presets from the reckoner seed", the search tool's page
enrichment).

Design:

- Only ``http`` and ``https``, with one host however the URL is read (``urllib`` and httpx
  must agree). The host is resolved with ``socket.getaddrinfo`` and every address
  checked with ``ipaddress`` (:func:`address_rule`): loopback, private, link-local, unspecified,
  multicast, reserved or otherwise not globally routable addresses are refused (an IPv4-mapped
  IPv6 address is checked as its IPv4 address, and the IPv4 address inside a 6to4 or Teredo
  address is checked too).
- The connection goes to the address that was checked (the URL's host is replaced by the
  address; the name is kept for ``Host`` and the TLS SNI and certificate check), so a second DNS
  answer cannot point it elsewhere. Redirects are followed by hand, at most
  :data:`MAX_REDIRECTS`, each hop checked again (scheme, the caller's ``allow_url``, addresses).
- One deadline for the whole fetch, redirects included (default ``min(DEADLINE, 3 x timeout)``),
  besides the per-read ``timeout``: every socket operation, the status line and headers
  included, ends by it (:class:`~.transport.DeadlineTransport`), so a host trickling a byte at a
  time cannot hold it. A size cap (``max_bytes``) on the body as decoded, which fails the fetch,
  or with ``truncate=True`` cuts the body: the fetcher asks for ``identity``, reads the wire bytes
  itself and decodes a ``gzip`` or ``deflate`` answer in steps that never pass the cap (a
  compression bomb stops there); other or stacked codings are refused.
- ``allow_private=True`` (or the environment variable ``DSH_FULLTEXT_ALLOW_PRIVATE=1`` when the
  argument is left ``None``; the name is historical, it lifts the rule for every checked fetch)
  lifts the address rule, for tests and demos that serve pages from ``127.0.0.1``. It is a
  keyword of Python callers only: no model-facing tool passes it through.
- Refusals raise :class:`~.errors.FetchRefused`, everything else
  :class:`~.errors.FetchFailed`; nothing else escapes.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import httpx

from ..redact import url_without_credentials
from .errors import FetchFailed, FetchRefused
from .transport import BoundedDecoder, DeadlineTransport, UnsupportedEncoding

__all__ = ["ALLOW_PRIVATE_ENV", "DEADLINE", "MAX_BYTES", "MAX_REDIRECTS", "TIMEOUT", "Fetched", "address_rule",
           "allow_private_default", "check_host", "fetch"]

#: Set to ``1`` to lift the address rule when ``allow_private`` is left ``None`` (tests, demos).
ALLOW_PRIVATE_ENV = "DSH_FULLTEXT_ALLOW_PRIVATE"
#: The default size cap, bytes (20 MiB).
MAX_BYTES = 20 * 1024 * 1024
#: Redirects followed at most (each hop checked).
MAX_REDIRECTS = 5
#: The default per-read timeout, seconds.
TIMEOUT = 30.0
#: The longest default deadline for a whole fetch, seconds (the default is ``min(DEADLINE, 3 x timeout)``).
DEADLINE = 60.0

_REDIRECTS = (301, 302, 303, 307, 308)
_SHOWN = 200  # characters of a URL an error message repeats


def _shown(url: str | None) -> str:
    """*url* as an error message repeats it: at most 200 characters (a 1 MB URL is not copied into
    every log line and receipt)."""
    text = url_without_credentials(str(url))
    return text if len(text) <= _SHOWN else text[:_SHOWN - 1] + "…"
_IP = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Fetched:
    """What :func:`fetch` brought back: the body ``content`` (at most ``max_bytes`` bytes), the
    final ``url`` (after redirects), the declared ``content_type`` header (``None`` when absent)
    and whether the body was cut at the cap (``truncated``, only with ``truncate=True``)."""

    content: bytes
    url: str
    content_type: str | None
    truncated: bool = False
    redirects: tuple[str, ...] = field(default=())

    @property
    def media_type(self) -> str | None:
        """The declared media type, lower case, without parameters (``"text/html"``); ``None``
        when the server declared none."""
        if not self.content_type:
            return None
        return self.content_type.split(";")[0].strip().lower() or None

    @property
    def charset(self) -> str | None:
        """The ``charset`` parameter of the content type, as declared, or ``None``."""
        for param in (self.content_type or "").split(";")[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "charset" and value.strip():
                return value.strip().strip('"')
        return None


def allow_private_default(allow_private: bool | None) -> bool:
    """*allow_private* itself, or when it is ``None`` whether ``DSH_FULLTEXT_ALLOW_PRIVATE`` is ``1``."""
    if allow_private is None:
        return os.environ.get(ALLOW_PRIVATE_ENV, "").strip() == "1"
    return bool(allow_private)


def address_rule(ip: _IP) -> str | None:
    """Which rule refuses *ip* (``"loopback"``, ``"private"``, ``"link-local"``, ...), or ``None``
    for a public address. The IPv4 address inside a 6to4 or Teredo address is checked too (the
    rule then names it), an IPv4-mapped IPv6 address is checked as its IPv4 address."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = [a for a in (ip.sixtofour, ip.teredo[1] if ip.teredo else None) if a is not None]
        for inner in embedded:  # 6to4 (2002::/16) and Teredo carry an IPv4 address: checked too
            rule = address_rule(inner)
            if rule:
                return f"{rule} (an IPv4 address {inner} inside {ip})"
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
    for rule, hit in (("loopback", ip.is_loopback), ("unspecified", ip.is_unspecified),
                      ("link-local", ip.is_link_local), ("multicast", ip.is_multicast),
                      ("private", ip.is_private), ("reserved", ip.is_reserved),
                      ("non-global (not publicly routable)", not ip.is_global)):
        if hit:
            return rule
    return None


def _resolve(host: str, port: int) -> list[str]:
    """Every address *host* resolves to (``socket.getaddrinfo``), first-seen order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def check_host(host: str, port: int, allow_private: bool) -> list[str]:
    """The addresses to connect to for *host* (a name or an IP literal), every one checked.

    Raises :class:`FetchRefused` naming the address and its rule (unless *allow_private*), and
    :class:`FetchFailed` when the name does not resolve."""
    try:
        ipaddress.ip_address(host)
        addresses = [host]
    except ValueError:
        try:
            addresses = _resolve(host, port)
        except (UnicodeError, OSError) as exc:  # socket.gaierror is an OSError
            raise FetchFailed(f"cannot resolve the host {host!r} ({exc})") from None
        if not addresses:
            raise FetchFailed(f"the host {host!r} resolves to no address") from None
    if not allow_private:
        for a in addresses:
            rule = address_rule(ipaddress.ip_address(a.split("%")[0]))
            if rule:
                named = f"{host} resolves to {a}" if a != host else host
                raise FetchRefused(f"{named}, which is {'an' if rule[0] in 'aeiou' else 'a'} {rule} address: only "
                                   f"public hosts are fetched ({ALLOW_PRIVATE_ENV}=1 lifts this for local tests and "
                                   "demos)")
    return addresses


def _split_url(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an http(s) URL; :class:`FetchRefused` for anything else."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchRefused(f"{_shown(url)!r}: only http and https URLs are fetched (got {scheme or 'no'} scheme)")
    try:
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        raise FetchRefused(f"{_shown(url)!r} is not a valid URL ({exc})") from None
    if not host:
        raise FetchRefused(f"{_shown(url)!r} names no host")
    try:
        read_by_httpx = httpx.URL(url).host
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise FetchRefused(f"{_shown(url)!r} is not a valid URL ({exc})") from None
    if read_by_httpx.lower().rstrip(".") != host.lower().rstrip("."):
        raise FetchRefused(f"{_shown(url)!r} names its host ambiguously ({host!r} or {read_by_httpx!r}); such URLs are not "
                           "fetched")
    return scheme, host, port or (443 if scheme == "https" else 80)


def _check_hop(url: str, allow_private: bool,
               allow_url: Callable[[str], bool] | None) -> tuple[str, str, int, list[str]]:
    scheme, host, port = _split_url(url)
    if allow_url is not None and not allow_url(url):
        raise FetchRefused(f"{_shown(url)} is not on this caller's list of allowed sources")
    return scheme, host, port, check_host(host, port, allow_private)


def fetch(url: str, *, timeout: float = TIMEOUT, deadline: float | None = None, max_bytes: int = MAX_BYTES,
          truncate: bool = False, allow_private: bool | None = None,
          allow_url: Callable[[str], bool] | None = None, media_ok: Callable[[str], bool] | None = None,
          user_agent: str = "dsh-notebook", headers: Mapping[str, str] | None = None) -> Fetched:
    """GET *url* with every rule of the module docstring; the body of a ``200`` answer.

    *timeout* (seconds) bounds each read; *deadline* (seconds) the whole fetch, redirects
    included (``None``: ``min(DEADLINE, 3 * timeout)``). *max_bytes* caps the body: over it the
    fetch fails, or with *truncate* the body is cut there (``Fetched.truncated``).
    *allow_private* ``None`` reads ``DSH_FULLTEXT_ALLOW_PRIVATE``. *allow_url* (the caller's own
    rule, e.g. an allow-list) must accept the URL and every redirect target; *media_ok* gets the
    final answer's media type (lower case, no parameters, ``""`` when undeclared) before its body
    is read.

    Raises :class:`FetchRefused` (a scheme other than http(s), a non-public address, a hop
    *allow_url* refuses, a media type *media_ok* refuses: the message names the rule and, for a
    redirect, where it came from) or :class:`FetchFailed` (cannot resolve or connect, a status
    other than 200 with ``status`` set, more than :data:`MAX_REDIRECTS` redirects, over the size
    cap, the deadline passed, any transport error)."""
    allowed_private = allow_private_default(allow_private)
    limit = min(DEADLINE, 3 * timeout) if deadline is None else deadline
    ends = time.monotonic() + limit

    def left(where: str) -> float:
        remaining = ends - time.monotonic()
        if remaining <= 0:
            raise FetchFailed(f"{where} took longer than the {limit:g}-second deadline for the whole fetch; "
                              "the host is too slow")
        return remaining

    current, came_from = url, None
    hops: list[str] = []
    try:
        with httpx.Client(transport=DeadlineTransport(ends), timeout=timeout, follow_redirects=False) as client:
            for hop in range(MAX_REDIRECTS + 1):
                try:
                    scheme, host, port, addresses = _check_hop(current, allowed_private, allow_url)
                except FetchRefused as exc:
                    if came_from is None:
                        raise
                    raise FetchRefused(f"{_shown(came_from)} redirects to {_shown(current)}, refused: {exc}") from None
                response = _connect(client, current, scheme, host, port, addresses, user_agent, headers,
                                    min(timeout, left(f"GET {_shown(current)}")))
                try:
                    if response.status_code in _REDIRECTS:
                        location = response.headers.get("Location")
                        if not location:
                            raise FetchFailed(f"GET {_shown(current)} answered HTTP {response.status_code} without a "
                                              "Location", status=response.status_code)
                        if hop == MAX_REDIRECTS:
                            raise FetchFailed(f"{_shown(url)} redirects more than {MAX_REDIRECTS} times")
                        hops.append(current)
                        came_from, current = current, urljoin(current, location)
                        continue
                    if response.status_code != 200:
                        raise FetchFailed(f"GET {_shown(current)} answered HTTP {response.status_code}",
                                          status=response.status_code)
                    declared = response.headers.get("Content-Type")
                    if media_ok is not None:
                        media = (declared or "").split(";")[0].strip().lower()
                        if not media_ok(media):
                            raise FetchRefused(f"{_shown(current)} is {media or 'of an undeclared type'}, a media type this "
                                               "caller does not read")
                    body, cut = _read_body(response, current, max_bytes, truncate, left)
                    return Fetched(body, current, declared, cut, tuple(hops))
                finally:
                    response.close()
    except (FetchRefused, FetchFailed):
        raise
    except httpx.TimeoutException as exc:
        if time.monotonic() >= ends - 0.01:  # the transport stopped at the whole fetch's deadline
            raise FetchFailed(f"GET {_shown(current)} took longer than the {limit:g}-second deadline for the whole fetch; "
                              "the host is too slow") from None
        raise FetchFailed(f"GET {_shown(current)} timed out ({type(exc).__name__}; the read timeout is {timeout:g} s)") \
            from None
    except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise FetchFailed(f"GET {_shown(current)} failed ({type(exc).__name__}: {detail})") from None
    raise FetchFailed(f"{_shown(url)} redirects more than {MAX_REDIRECTS} times")  # not reached


def _connect(client: httpx.Client, url: str, scheme: str, host: str, port: int, addresses: list[str],
             user_agent: str, headers: Mapping[str, str] | None, timeout: float) -> httpx.Response:
    """The streamed response of GET *url* sent to the first checked address that accepts the
    connection (never to a fresh DNS answer); ``Host`` and the TLS SNI keep the name."""
    parts = urlsplit(url)
    default_port = port == (443 if scheme == "https" else 80)
    sent = {"User-Agent": user_agent, **(headers or {}), "Accept-Encoding": "identity",
            "Host": (f"[{host}]" if ":" in host else host) + ("" if default_port else f":{port}")}
    last_error: Exception | None = None
    for address in addresses:
        ip_host = f"[{address}]" if ":" in address else address
        pinned = parts._replace(netloc=f"{ip_host}:{port}").geturl()
        request = client.build_request("GET", pinned, headers=sent, timeout=timeout,
                                       extensions={"sni_hostname": host} if scheme == "https" else None)
        try:
            return client.send(request, stream=True)
        except httpx.ConnectError as exc:
            last_error = exc
    raise FetchFailed(f"cannot connect to {host} ({last_error})")


def _read_body(response: httpx.Response, url: str, max_bytes: int, truncate: bool,
               left: Callable[[str], float]) -> tuple[bytes, bool]:
    """The body, read chunk by chunk as it came over the wire (the deadline checked between
    chunks), decoded by a :class:`~.transport.BoundedDecoder` that never holds more than
    *max_bytes*; ``(bytes, cut)``."""
    coding = response.headers.get("Content-Encoding")
    try:
        decoder = BoundedDecoder(coding, max_bytes)
    except UnsupportedEncoding as exc:
        raise FetchFailed(f"{_shown(url)}: {exc}") from None
    length = response.headers.get("Content-Length")
    if (not truncate and decoder.coding == "identity" and length and length.isdigit()
            and int(length) > max_bytes):
        raise FetchFailed(f"{_shown(url)} is {int(length)} bytes, over the {max_bytes}-byte cap")
    chunks: list[bytes] = []
    for raw in response.iter_raw():
        left(f"GET {_shown(url)}")
        try:
            chunks.append(decoder.feed(raw))
        except UnsupportedEncoding as exc:
            raise FetchFailed(f"{_shown(url)}: {exc}") from None
        if decoder.over:
            if not truncate:
                raise FetchFailed(f"{_shown(url)} is over the {max_bytes}-byte cap"
                                  + (f" once decoded ({decoder.coding})" if decoder.coding != "identity" else ""))
            return b"".join(chunks), True
    try:
        decoder.finish()
    except UnsupportedEncoding as exc:
        raise FetchFailed(f"{_shown(url)}: {exc}") from None
    return b"".join(chunks), False
