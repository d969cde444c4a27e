"""The network layer (issue 13): the one checked fetcher (``dsh_notebook.net.fetch``) and the one
retry policy (``dsh_notebook.net.RetryPolicy``), against real servers on 127.0.0.1. Waits are
injected (recorded, never slept), so no test depends on how long anything takes."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from dsh_notebook.loopback import LoopbackServer, QuietHandler
from dsh_notebook.net import (
    FetchFailed,
    FetchRefused,
    RetryCancelled,
    RetryPolicy,
    address_rule,
    fetch,
    request,
    retry_after_seconds,
)
from dsh_notebook.net import fetcher as NF

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


class Server(LoopbackServer):
    """Routes ``path -> (status, headers, body)`` (``{port}`` in a header is this server's port),
    one-shot answers queued per path before them, every request kept as ``(path, Host)``.
    ``/trickle`` sends one byte at a time for as long as the client reads."""

    name = "net-test"

    def __init__(self, routes: dict | None = None):
        self.routes = dict(routes or {})
        self.queued: dict[str, list] = {}
        self.requests: list[tuple[str, str]] = []
        server = self

        class Handler(QuietHandler):
            def do_GET(self):  # noqa: N802 - http.server's naming
                server.requests.append((self.path, self.headers.get("Host")))
                if self.path == "/trickle":
                    return server._trickle(self)
                if self.path == "/slow-headers":
                    return server._slow_headers(self)
                if self.path == "/unsized":  # no Content-Length: the body runs until the connection closes
                    self.protocol_version = "HTTP/1.0"
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.end_headers()
                    self.wfile.write(b"y" * 5000)
                    self.close_connection = True
                    return None
                queue = server.queued.get(self.path)
                status, headers, body = queue.pop(0) if queue else server.routes.get(self.path, (404, {}, b"no"))
                headers = {k: str(v).replace("{port}", str(server.port)) for k, v in headers.items()}
                ctype = headers.pop("Content-Type", "text/plain")
                self._send(status, ctype, body, headers)
                return None

        self.bind(Handler)

    @staticmethod
    def _trickle(h) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", "100000")
        h.end_headers()
        for _ in range(400):
            try:
                h.wfile.write(b"x")
                h.wfile.flush()
            except OSError:  # the client gave up: stop
                return
            time.sleep(0.05)

    @staticmethod
    def _slow_headers(h) -> None:
        """A status line, then header lines one byte at a time, never ending the header block."""
        h.wfile.write(b"HTTP/1.1 200 OK\r\n")
        for _ in range(400):
            try:
                h.wfile.write(b"X")
                h.wfile.flush()
            except OSError:
                return
            time.sleep(0.05)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def paths(self) -> list[str]:
        return [p for p, _ in self.requests]


@pytest.fixture
def server(monkeypatch):
    monkeypatch.delenv("DSH_FULLTEXT_ALLOW_PRIVATE", raising=False)
    with Server({"/paper": (200, {"Content-Type": "text/html; charset=ISO-8859-1"}, b"caf\xe9"),
                 "/secret": (200, {}, b"internal admin page"),
                 "/to-secret": (302, {"Location": "http://127.0.0.1:{port}/secret"}, b""),
                 "/to-metadata": (302, {"Location": "http://169.254.169.254/latest/meta-data/"}, b""),
                 "/to-ftp": (302, {"Location": "ftp://example.org/x"}, b""),
                 "/big": (200, {}, b"z" * 5000),
                 "/pdf": (200, {"Content-Type": "application/pdf"}, b"%PDF-1.7"),
                 "/gone": (404, {}, b"not here")}) as s:
        yield s


@pytest.fixture
def public(monkeypatch):
    """``public.test`` stands for a public host (it is served by the local server): its check
    passes and gives 127.0.0.1; every other host is checked for real."""
    real = NF.check_host

    def fake(host, port, allow_private):
        return ["127.0.0.1"] if host == "public.test" else real(host, port, allow_private)

    monkeypatch.setattr(NF, "check_host", fake)


# ----------------------------------------------------------------------------- the checked fetcher


def test_loopback_and_private_hosts_are_refused_without_the_override(server):
    with pytest.raises(FetchRefused) as exc:
        fetch(server.url("/paper"))
    assert exc.value.code == "NET_REFUSED"
    err = str(exc.value)
    assert "127.0.0.1, which is a loopback address" in err and "DSH_FULLTEXT_ALLOW_PRIVATE=1" in err
    with pytest.raises(FetchRefused, match="localhost resolves to .*loopback"):
        fetch(server.url("/paper", "localhost"))
    with pytest.raises(FetchRefused, match="loopback"):
        fetch(server.url("/paper", "[::ffff:127.0.0.1]"))  # IPv4-mapped: checked as its IPv4 address
    assert server.requests == []  # refused before any connection
    for url, rule in (("http://10.1.2.3/x", "private"), ("http://169.254.169.254/", "link-local"),
                      ("http://0.0.0.0:8080/", "unspecified"), ("http://[ff02::1]/", "multicast"),
                      ("http://[2002:7f00:1::]/", "loopback"), ("http://100.64.0.1/", "not publicly routable")):
        with pytest.raises(FetchRefused, match=rule):
            fetch(url)
    assert address_rule(ipaddress.ip_address("93.184.215.14")) is None


def test_the_override_fetches_from_127_0_0_1(server, monkeypatch):
    page = fetch(server.url("/paper"), allow_private=True)
    assert (page.content, page.url, page.media_type, page.charset) == (b"caf\xe9", server.url("/paper"), "text/html",
                                                                        "ISO-8859-1")
    assert not page.truncated and page.redirects == ()
    monkeypatch.setenv("DSH_FULLTEXT_ALLOW_PRIVATE", "1")  # the environment, when the argument is left None
    assert fetch(server.url("/paper")).content == b"caf\xe9"
    with pytest.raises(FetchRefused):
        fetch(server.url("/paper"), allow_private=False)  # an explicit False wins over the environment


def test_a_redirect_to_a_private_address_is_refused_and_never_requested(server, public):
    page = fetch(server.url("/paper", "public.test"))
    assert page.content == b"caf\xe9"
    assert server.requests[-1] == ("/paper", f"public.test:{server.port}")  # pinned to the address, Host kept
    with pytest.raises(FetchRefused) as exc:
        fetch(server.url("/to-secret", "public.test"))
    assert "public.test" in str(exc.value) and "redirects to http://127.0.0.1" in str(exc.value)
    assert "loopback" in str(exc.value)
    with pytest.raises(FetchRefused, match="redirects to http://169.254.169.254/.*link-local"):
        fetch(server.url("/to-metadata", "public.test"))
    with pytest.raises(FetchRefused, match="only http and https"):
        fetch(server.url("/to-ftp", "public.test"))
    assert "/secret" not in server.paths()


def test_the_callers_own_rules_apply_to_every_hop(server):
    with pytest.raises(FetchRefused, match="not on this caller's list of allowed sources"):
        fetch(server.url("/to-secret"), allow_private=True, allow_url=lambda u: u.endswith("/to-secret"))
    assert "/secret" not in server.paths()
    with pytest.raises(FetchRefused, match="application/pdf, a media type this caller does not read"):
        fetch(server.url("/pdf"), allow_private=True, media_ok=lambda media: media.startswith("text/"))


def test_schemes_other_than_http_and_https_are_refused(server):
    for url in ("ftp://example.org/x", "file:///etc/passwd", "javascript:alert(1)", "gopher://127.0.0.1:70/",
                "example.org/paper"):
        with pytest.raises(FetchRefused, match="only http and https URLs are fetched"):
            fetch(url, allow_private=True)
    with pytest.raises(FetchRefused, match="names no host"):
        fetch("http:///paper", allow_private=True)
    assert server.requests == []


def test_the_size_cap(server):
    with pytest.raises(FetchFailed, match="5000 bytes, over the 1000-byte cap"):  # the declared length
        fetch(server.url("/big"), allow_private=True, max_bytes=1000)
    with pytest.raises(FetchFailed, match="over the 1000-byte cap"):  # no length declared: counted as read
        fetch(server.url("/unsized"), allow_private=True, max_bytes=1000)
    page = fetch(server.url("/big"), allow_private=True, max_bytes=1000, truncate=True)
    assert page.content == b"z" * 1000 and page.truncated


def test_one_deadline_for_the_whole_fetch_stops_a_trickling_host(server):
    """Each byte comes well within the read timeout; the whole fetch still ends, with the error."""
    with pytest.raises(FetchFailed) as exc:
        fetch(server.url("/trickle"), allow_private=True, timeout=5, deadline=0.3)
    assert exc.value.code == "NET_FETCH" and "0.3-second deadline for the whole fetch" in str(exc.value)


def test_the_deadline_also_stops_a_host_trickling_its_headers(server):
    """A header block sent a byte at a time (each byte well within the read timeout) is stopped by
    the whole fetch's deadline too, not only a trickling body."""
    with pytest.raises(FetchFailed) as exc:
        fetch(server.url("/slow-headers"), allow_private=True, timeout=5, deadline=0.3)
    assert "0.3-second deadline for the whole fetch" in str(exc.value)


def _gzip(data: bytes, times: int = 1) -> bytes:
    import gzip

    for _ in range(times):
        data = gzip.compress(data, compresslevel=9)
    return data


def test_a_compression_bomb_stops_at_the_cap_as_decoded(server):
    """A few hundred bytes of gzip that expand to 50 MB: the cap counts decoded bytes, and the
    decoder never holds more than the cap; stacked codings are refused."""
    bomb = _gzip(b"\0" * 50_000_000)
    assert len(bomb) < 60_000
    server.routes["/bomb"] = (200, {"Content-Encoding": "gzip"}, bomb)
    with pytest.raises(FetchFailed, match="over the 1000000-byte cap once decoded"):
        fetch(server.url("/bomb"), allow_private=True, max_bytes=1_000_000)
    cut = fetch(server.url("/bomb"), allow_private=True, max_bytes=1_000_000, truncate=True)
    assert cut.truncated and cut.content == b"\0" * 1_000_000
    server.routes["/stacked"] = (200, {"Content-Encoding": "gzip, gzip"}, _gzip(b"hello", 2))
    with pytest.raises(FetchFailed, match="several content codings"):
        fetch(server.url("/stacked"), allow_private=True)
    server.routes["/br"] = (200, {"Content-Encoding": "br"}, b"\x0b\x02\x80hello\x03")
    with pytest.raises(FetchFailed, match="content coding 'br' is not read"):
        fetch(server.url("/br"), allow_private=True)
    server.routes["/small"] = (200, {"Content-Encoding": "gzip"}, _gzip("café".encode()))
    assert fetch(server.url("/small"), allow_private=True).content == "café".encode()
    assert all(h == f"127.0.0.1:{server.port}" for _, h in server.requests)


def test_the_bounded_decoder_never_yields_more_than_its_limit():
    import zlib

    from dsh_notebook.net.transport import BoundedDecoder

    for coding, payload in (("gzip", _gzip(b"a" * 10_000_000)), ("deflate", zlib.compress(b"a" * 10_000_000)),
                            ("deflate", zlib.compress(b"a" * 10_000_000)[2:-4])):  # raw deflate too
        d = BoundedDecoder(coding, 4096)
        got = b"".join(d.feed(payload[i:i + 512]) for i in range(0, len(payload), 512))
        assert got == b"a" * 4096 and d.over and d.size == 4096
    ok = BoundedDecoder("gzip", 4096)
    assert ok.feed(_gzip(b"short")) == b"short" and not ok.over


def test_statuses_redirect_loops_and_dead_hosts_fail_with_the_reason(server):
    with pytest.raises(FetchFailed) as exc:
        fetch(server.url("/gone"), allow_private=True)
    assert exc.value.status == 404 and "answered HTTP 404" in str(exc.value)
    server.routes["/loop"] = (302, {"Location": "/loop"}, b"")
    with pytest.raises(FetchFailed, match="redirects more than 5 times"):
        fetch(server.url("/loop"), allow_private=True)
    assert server.paths().count("/loop") == 6
    with pytest.raises(FetchFailed, match="cannot connect to 127.0.0.1"):
        fetch(f"http://127.0.0.1:{_closed_port()}/x", allow_private=True)


# ----------------------------------------------------------------------------- the retry policy


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    return port


def test_retry_after_is_read_as_seconds_and_as_an_http_date():
    def now():
        return NOW

    assert retry_after_seconds("120", now=now) == 120.0 and retry_after_seconds(" 0.5 ", now=now) == 0.5
    assert retry_after_seconds(format_datetime(NOW + timedelta(seconds=7), usegmt=True), now=now) == 7.0
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Thu, 01 Jan 2026 11:00:00 GMT", now=now) == 0.0  # in the past: now
    for bad in (None, "", "soon", "-3", "inf", "nan", "Thu, 99 Foo 2026"):
        assert retry_after_seconds(bad, now=now) is None


def test_429_and_503_then_success_honours_retry_after_seconds_and_date():
    date = format_datetime(NOW + timedelta(seconds=7), usegmt=True)
    waits: list[float] = []
    with Server({"/api": (200, {}, b"ok")}) as srv:
        srv.queued["/api"] = [(429, {"Retry-After": "3"}, b"slow down"), (503, {"Retry-After": date}, b"busy")]
        with httpx.Client() as client:
            resp = request(client, "GET", srv.url("/api"), sleep=waits.append, now=lambda: NOW)
    assert resp.status_code == 200 and resp.text == "ok"
    assert waits == [3.0, 7.0] and srv.paths() == ["/api"] * 3


def test_without_retry_after_the_backoff_is_exponential_with_jitter_and_attempts_are_bounded():
    seen, waits = [], []
    with Server({"/api": (503, {}, b"busy")}) as srv, httpx.Client() as client:
        resp = request(client, "GET", srv.url("/api"), policy=RetryPolicy(attempts=4, backoff=0.5, max_wait=30),
                       sleep=waits.append, rand=lambda: 0.0, on_retry=seen.append)
        assert len(srv.requests) == 4
    assert resp.status_code == 503  # the policy gave up: the last answer stands
    assert waits == [0.25, 0.5, 1.0]  # 0.5 * 2**(n-1) * (0.5 + 0.0)
    assert [(a.number, a.reason, a.retry_after) for a in seen] == [(1, "HTTP 503", None), (2, "HTTP 503", None),
                                                                   (3, "HTTP 503", None)]
    upper = [RetryPolicy(backoff=0.5).backoff_wait(n, rand=lambda: 0.999999) for n in (1, 2, 3)]
    assert upper == pytest.approx([0.75, 1.5, 3.0])


def test_a_huge_retry_after_is_capped_and_the_total_wait_is_bounded():
    """Documented bound: a wait is at most ``max_wait`` (a day's Retry-After included); when the
    next wait would take the call past ``max_total`` the policy gives up and the answer stands."""
    waits: list[float] = []
    with Server({"/api": (503, {"Retry-After": "86400"}, b"come back tomorrow")}) as srv, httpx.Client() as client:
        resp = request(client, "GET", srv.url("/api"), policy=RetryPolicy(attempts=10, max_wait=10, max_total=15),
                       sleep=waits.append)
        assert len(srv.requests) == 2
    assert resp.status_code == 503 and waits == [10.0]


def test_other_statuses_are_not_retried():
    for status in (400, 404, 501):
        with Server({"/api": (status, {}, b"no")}) as srv, httpx.Client() as client:
            assert request(client, "GET", srv.url("/api"), sleep=pytest.fail).status_code == status
            assert len(srv.requests) == 1


def test_cancel_stops_the_wait_at_once():
    """The wait is the cancel event's own wait: set during it (here from on_retry, just before a
    30-second Retry-After wait), the call ends with RetryCancelled instead of waiting it out."""
    cancel = threading.Event()
    with Server({"/api": (429, {"Retry-After": "30"}, b"")}) as srv, httpx.Client() as client:
        with pytest.raises(RetryCancelled) as exc:
            request(client, "GET", srv.url("/api"), cancel=cancel, on_retry=lambda a: cancel.set())
        assert exc.value.code == "NET_CANCELLED" and "waiting 30.0 s" in str(exc.value)
        assert len(srv.requests) == 1
        with pytest.raises(RetryCancelled, match="before the request was sent"):  # already set: nothing is sent
            request(client, "GET", srv.url("/api"), cancel=cancel)
        assert len(srv.requests) == 1


def test_connection_refused_is_retried_then_reported_clearly():
    url = f"http://127.0.0.1:{_closed_port()}/api"
    seen, waits = [], []
    with httpx.Client() as client, pytest.raises(FetchFailed) as exc:
        request(client, "GET", url, params={"mailto": "secret@example.org"}, sleep=waits.append, rand=lambda: 0.0,
                on_retry=seen.append)
    err = exc.value
    assert err.code == "NET_FETCH" and err.attempts == 3 and isinstance(err.__cause__, httpx.ConnectError)
    assert str(err).startswith(f"GET {url} could not connect (ConnectError: ") and str(err).endswith("after 3 attempts")
    assert "secret@example.org" not in str(err)  # query parameters stay out of the message
    assert [a.reason.split(":")[0] for a in seen] == ["ConnectError", "ConnectError"] and waits == [0.25, 0.5]


def test_exceptions_carrying_a_status_and_retry_after_are_retried():
    class ProviderError(Exception):
        def __init__(self, status, retry_after=None):
            super().__init__(f"HTTP {status}")
            self.status, self.retry_after = status, retry_after

    outcomes = [ProviderError(429, "2"), ProviderError(502), "done"]
    waits: list[float] = []

    def attempt():
        got = outcomes.pop(0)
        if isinstance(got, Exception):
            raise got
        return got

    assert RetryPolicy().call(attempt, sleep=waits.append, rand=lambda: 0.0) == "done" and waits == [2.0, 0.5]
    with pytest.raises(ProviderError):  # a 401 is the caller's problem: raised at once
        RetryPolicy().call(lambda: (_ for _ in ()).throw(ProviderError(401)), sleep=pytest.fail)
    with pytest.raises(ValueError):  # an unrelated exception is never retried
        RetryPolicy().call(lambda: int("x"), sleep=pytest.fail)


def test_the_async_twin_uses_the_same_policy():
    answers = [httpx.Response(503, headers={"Retry-After": "4"}), httpx.Response(200)]
    waits: list[float] = []

    async def attempt():
        return answers.pop(0)

    async def sleep(seconds):
        waits.append(seconds)

    resp = asyncio.run(RetryPolicy().acall(attempt, sleep=sleep))
    assert resp.status_code == 200 and waits == [4.0]


def test_a_policy_out_of_range_is_refused():
    for bad in ({"attempts": 0}, {"attempts": 1.5}, {"backoff": -1}, {"max_wait": float("inf")}):
        with pytest.raises(ValueError):
            RetryPolicy(**bad)
    assert RetryPolicy(attempts=1).call(lambda: httpx.Response(503), sleep=pytest.fail).status_code == 503


def test_a_hostile_url_is_not_copied_whole_into_the_error():
    """A 1 MB URL is refused with a message of a few hundred characters naming the rule."""
    with pytest.raises(FetchRefused) as exc:
        fetch("ftp://example.org/" + "a" * 1_000_000)
    assert len(str(exc.value)) < 400 and "only http and https" in str(exc.value)


def test_url_credentials_are_never_repeated():
    from dsh_notebook.redact import redact_url_credentials, url_without_credentials

    assert url_without_credentials("https://ana:pw@example.org:8443/v1?q=1") == "https://***@example.org:8443/v1?q=1"
    assert url_without_credentials("https://example.org/a@b") == "https://example.org/a@b"
    assert redact_url_credentials("GET http://u:p@h/x failed; see ftp://me@files/y") == \
        "GET http://***@h/x failed; see ftp://***@files/y"
    for url in ("http://ana:s3cret@127.0.0.1/x", "ftp://ana:s3cret@example.org/x"):
        with pytest.raises(FetchRefused) as exc:
            fetch(url)
        assert "s3cret" not in str(exc.value)
    assert "'ftp://***@example.org/x'" in str(exc.value)


@pytest.mark.parametrize("text", ["a" * 1_000_000, "ftp://example.org/" + "a" * 1_000_000, "http://" + "a@" * 500_000,
                                  "a://" * 250_000, "http://u:p@h/ " * 70_000])
def test_redaction_is_linear_on_a_megabyte(text):
    """The credential pattern is bounded: these took minutes with an unbounded scheme or userinfo
    (a regression would hang here, not pass slowly)."""
    from dsh_notebook.redact import redact_url_credentials, url_without_credentials

    out = redact_url_credentials(text)
    assert "u:p@" not in out and len(url_without_credentials(text)) <= len(text)


def test_a_compressed_body_must_be_whole(server):
    """A gzip body cut short (the Content-Length matching what was sent) is a failure, never a
    shorter full text; a body of several gzip members is read whole; junk after a member fails."""
    import gzip

    data = bytes(range(256)) * 400
    whole = gzip.compress(data)
    server.routes["/cut"] = (200, {"Content-Encoding": "gzip"}, whole[:len(whole) // 2])
    with pytest.raises(FetchFailed, match="cut short"):
        fetch(server.url("/cut"), allow_private=True)
    server.routes["/members"] = (200, {"Content-Encoding": "gzip"}, gzip.compress(b"a" * 1000) * 50)
    assert fetch(server.url("/members"), allow_private=True).content == b"a" * 50_000
    server.routes["/junk"] = (200, {"Content-Encoding": "gzip"}, whole + b"not gzip at all")
    with pytest.raises(FetchFailed, match="damaged"):
        fetch(server.url("/junk"), allow_private=True)
    assert fetch(server.url("/paper"), allow_private=True).content == b"caf\xe9"  # identity is unchanged
