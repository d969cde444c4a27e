"""The one retry policy for every HTTP caller (spec: llm.md "Client": "429 and 5xx are retried with
backoff and jitter a bounded number of times"; research.md "Running the roles", the bibliographic
verifier's resolvers).

Design:

- :class:`RetryPolicy` is a frozen value: ``attempts`` (every try, the first included),
  ``backoff`` (seconds), ``max_wait`` (the longest single wait, seconds), ``max_total`` (the most
  waiting in one call, seconds), ``statuses`` (default :data:`RETRY_STATUSES`: 429, 500, 502,
  503, 504) and ``exceptions`` (default: connection errors, where the request never reached the
  server, so retrying is safe even for a POST).
- An outcome is retried when it is an ``httpx.Response`` with a status in ``statuses``, an
  exception with such a status (an ``int`` ``status`` attribute, or an ``httpx.Response`` in
  ``response``), or an instance of ``exceptions``. The wait is the server's ``Retry-After``
  (delta-seconds or an HTTP date, RFC 9110 section 10.2.3, :func:`retry_after_seconds`) when it
  sent one, else jittered exponential backoff ``backoff * 2**(n-1) * (0.5 + random())`` after
  try *n*.
- Bounded: a wait (``Retry-After`` included, however large) is capped at ``max_wait``; when the
  next wait would take the call's waiting past ``max_total``, or ``attempts`` tries were made,
  the policy gives up and the last outcome stands (a response is returned, an exception
  re-raised).
- Cancellable: with a ``threading.Event`` the wait is ``cancel.wait(seconds)``, so setting it
  ends the wait at once with :class:`~.errors.RetryCancelled` (also raised before a try when it
  is already set). The async twin :meth:`RetryPolicy.acall` is cancelled the asyncio way.
- Clock, sleep and jitter are injectable (``now``, ``sleep``, ``rand``), so tests never wait.
- Built on tenacity (``Retrying``/``AsyncRetrying`` with this module's ``retry``, ``wait``,
  ``stop`` and ``sleep``): it runs the loop, sync and async alike; what it does not have
  (``Retry-After`` parsing, the cancel-aware sleep, giving up on a total wait) is the code here.
- :func:`request` is one ``httpx.Client`` request under a policy, for callers that want a
  response or a :class:`~.errors.FetchFailed` naming what failed and after how many tries.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx
import tenacity

from .errors import FetchFailed, RetryCancelled

__all__ = ["CONNECTION_ERRORS", "RETRY_STATUSES", "Attempt", "RetryPolicy", "request", "retry_after_seconds"]

T = TypeVar("T")

#: Statuses retried by default: too many requests, and the server errors that say "try later"
#: (500 Internal Server Error, 502 Bad Gateway, 503 Service Unavailable, 504 Gateway Timeout);
#: 501 Not Implemented and 505 HTTP Version Not Supported will not change on a retry.
RETRY_STATUSES: frozenset[int] = frozenset({429, 500, 502, 503, 504})
#: Exceptions retried by default: the connection was never made, so the request was not sent.
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (httpx.ConnectError, httpx.ConnectTimeout)


def _utcnow() -> datetime:
    return datetime.now(UTC)


def retry_after_seconds(value: str | None, *, now: Callable[[], datetime] = _utcnow) -> float | None:
    """Seconds to wait that a ``Retry-After`` header value asks for, or ``None`` when there is
    none or it cannot be read.

    Delta-seconds (``"120"``; a decimal such as ``"0.5"`` is accepted too) are taken as they
    are; an HTTP date (``"Wed, 21 Oct 2015 07:28:00 GMT"``) gives its distance from *now()*
    (a timezone-aware datetime), at least 0 (a date in the past means "now"). Negative, infinite
    or otherwise unreadable values give ``None``. Never raises."""
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:  # some Python versions return None instead of raising
        return None
    if when.tzinfo is None:  # "-0000": UTC by RFC 5322
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now()).total_seconds())


@dataclass(frozen=True)
class Attempt:
    """One failed try the policy will retry, as ``on_retry`` sees it: the try's ``number``
    (1-based), the ``wait`` before the next one (seconds, after the caps), a one-line ``reason``
    (``"HTTP 503"``, ``"ConnectError: ..."``), the server's ``retry_after`` (seconds, before the
    cap; ``None`` without one), and the ``response`` or ``error`` the try ended with."""

    number: int
    wait: float
    reason: str
    retry_after: float | None = None
    response: httpx.Response | None = None
    error: BaseException | None = None


def _response_of(outcome: object) -> httpx.Response | None:
    if isinstance(outcome, httpx.Response):
        return outcome
    inner = getattr(outcome, "response", None)
    return inner if isinstance(inner, httpx.Response) else None


def _status_of(outcome: object) -> int | None:
    response = _response_of(outcome)
    if response is not None:
        return response.status_code
    status = getattr(outcome, "status", None) if isinstance(outcome, BaseException) else None
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _retry_after_of(outcome: object) -> str | None:
    response = _response_of(outcome)
    if response is not None:
        header: str | None = response.headers.get("Retry-After")
        return header
    value = getattr(outcome, "retry_after", None) if isinstance(outcome, BaseException) else None
    return None if value is None else str(value)


def _reason(outcome: object) -> str:
    status = _status_of(outcome)
    if status is not None:
        return f"HTTP {status}"
    if isinstance(outcome, BaseException):
        detail = " ".join(str(outcome).split())
        return f"{type(outcome).__name__}: {detail}" if detail else type(outcome).__name__
    return type(outcome).__name__


def _outcome(state: tenacity.RetryCallState) -> object:
    fut = state.outcome
    if fut is None:  # pragma: no cover - tenacity asks only after a try
        return None
    return fut.exception() if fut.failed else fut.result()


@dataclass(frozen=True)
class RetryPolicy:
    """``RetryPolicy(attempts=3, backoff=0.5, max_wait=30.0, max_total=60.0, statuses=RETRY_STATUSES,
    exceptions=CONNECTION_ERRORS)``; see the module docstring. Seconds throughout. Raises
    ``ValueError`` for ``attempts < 1`` or a negative or non-finite time."""

    attempts: int = 3
    backoff: float = 0.5
    max_wait: float = 30.0
    max_total: float = 60.0
    statuses: frozenset[int] = RETRY_STATUSES
    exceptions: tuple[type[BaseException], ...] = field(default=CONNECTION_ERRORS)

    def __post_init__(self) -> None:
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int) or self.attempts < 1:
            raise ValueError(f"attempts is {self.attempts!r}; it must be a whole number >= 1 (1: no retry)")
        for name in ("backoff", "max_wait", "max_total"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} is {value!r}; it must be a finite number of seconds >= 0")
        object.__setattr__(self, "statuses", frozenset(self.statuses))
        object.__setattr__(self, "exceptions", tuple(self.exceptions))

    def retryable(self, outcome: object) -> bool:
        """Whether a try that ended with *outcome* (a result or an exception) is retried."""
        if isinstance(outcome, BaseException) and isinstance(outcome, self.exceptions):
            return True
        if not isinstance(outcome, (httpx.Response, BaseException)):
            return False
        status = _status_of(outcome)
        return status is not None and status in self.statuses

    def backoff_wait(self, number: int, rand: Callable[[], float] = random.random) -> float:
        """The wait after try *number* (1-based) when the server asked for none: exponential
        with jitter, ``backoff * 2**(number-1) * (0.5 + rand())``, at most ``max_wait``."""
        grown: float = self.backoff * 2.0 ** (number - 1) * (0.5 + rand())
        return min(float(self.max_wait), grown)

    def wait_after(self, outcome: object, number: int, *, now: Callable[[], datetime] = _utcnow,
                   rand: Callable[[], float] = random.random) -> tuple[float, float | None]:
        """``(wait, retry_after)`` after try *number* ended with *outcome*: the server's
        ``Retry-After`` (seconds, before the cap; ``None`` without one) capped at ``max_wait``,
        or :meth:`backoff_wait`."""
        asked = retry_after_seconds(_retry_after_of(outcome), now=now)
        if asked is not None:
            return min(asked, self.max_wait), asked
        return self.backoff_wait(number, rand), None

    # ------------------------------------------------------------ running

    def _strategies(self, cancel: threading.Event | None, now: Callable[[], datetime], rand: Callable[[], float],
                    on_retry: Callable[[Attempt], None] | None) -> dict[str, Any]:
        asked: dict[int, float | None] = {}

        def retry(state: tenacity.RetryCallState) -> bool:
            return self.retryable(_outcome(state))

        def wait(state: tenacity.RetryCallState) -> float:
            seconds, asked[state.attempt_number] = self.wait_after(_outcome(state), state.attempt_number,
                                                                   now=now, rand=rand)
            return seconds

        def stop(state: tenacity.RetryCallState) -> bool:
            over = state.idle_for + state.upcoming_sleep > self.max_total + 1e-9
            return state.attempt_number >= self.attempts or over

        def before(state: tenacity.RetryCallState) -> None:
            if cancel is not None and cancel.is_set():
                raise RetryCancelled("cancelled before the request was sent")

        def before_sleep(state: tenacity.RetryCallState) -> None:
            if on_retry is None:
                return
            outcome = _outcome(state)
            error = outcome if isinstance(outcome, BaseException) else None
            response = outcome if isinstance(outcome, httpx.Response) else None
            on_retry(Attempt(state.attempt_number, state.upcoming_sleep, _reason(outcome),
                             asked.get(state.attempt_number), response, error))

        def give_up(state: tenacity.RetryCallState) -> Any:
            assert state.outcome is not None
            return state.outcome.result()  # the last response, or the last exception raised

        return {"retry": retry, "wait": wait, "stop": stop, "before": before, "before_sleep": before_sleep,
                "retry_error_callback": give_up}

    def call(self, fn: Callable[[], T], *, cancel: threading.Event | None = None,
             sleep: Callable[[float], None] | None = None, now: Callable[[], datetime] = _utcnow,
             rand: Callable[[], float] = random.random, on_retry: Callable[[Attempt], None] | None = None) -> T:
        """``fn()`` under the policy: its result (the last one when the policy gave up on a
        retryable response), or the exception of the last try.

        *cancel* set before a try or during a wait raises :class:`RetryCancelled` (the wait is
        ``cancel.wait``, so it ends at once). *sleep* replaces the wait (tests: record the
        seconds; *cancel* is then checked after it), *now* the clock ``Retry-After`` dates are
        read against, *rand* the jitter (a float in [0, 1)). *on_retry* is called with an
        :class:`Attempt` before each wait."""

        def wait_or_cancel(seconds: float) -> None:
            if sleep is not None:
                sleep(seconds)
                if cancel is not None and cancel.is_set():
                    raise RetryCancelled(f"cancelled while waiting {seconds:.1f} s to retry")
            elif cancel is not None:
                if cancel.wait(seconds):
                    raise RetryCancelled(f"cancelled while waiting {seconds:.1f} s to retry")
            elif seconds > 0:
                time.sleep(seconds)

        retrying = tenacity.Retrying(sleep=wait_or_cancel, **self._strategies(cancel, now, rand, on_retry))
        return retrying(fn)

    async def acall(self, fn: Callable[[], Awaitable[T]], *,
                    sleep: Callable[[float], Awaitable[None]] | None = None, now: Callable[[], datetime] = _utcnow,
                    rand: Callable[[], float] = random.random,
                    on_retry: Callable[[Attempt], None] | None = None) -> T:
        """The async twin of :meth:`call`: ``await fn()`` under the policy, waiting with
        ``asyncio.sleep`` (or *sleep*); cancel it by cancelling its task."""
        import asyncio

        retrying = tenacity.AsyncRetrying(sleep=sleep or asyncio.sleep,
                                          **self._strategies(None, now, rand, on_retry))
        result: T = await retrying(fn)
        return result


def request(client: httpx.Client, method: str, url: str, *, policy: RetryPolicy | None = None,
            cancel: threading.Event | None = None, on_retry: Callable[[Attempt], None] | None = None,
            sleep: Callable[[float], None] | None = None, now: Callable[[], datetime] = _utcnow,
            rand: Callable[[], float] = random.random, **kwargs: Any) -> httpx.Response:
    """``client.request(method, url, **kwargs)`` under *policy* (default ``RetryPolicy()``).

    Returns the final response, which may still have a retryable status when the policy gave up
    (the caller reads ``status_code``). A transport failure (after its retries, when it is one
    the policy retries) raises :class:`FetchFailed` whose message names the method, the URL (its
    query parameters given in ``params`` are left out), the error and the number of tries, with
    ``attempts`` set and the httpx exception as ``__cause__``. Cancellation raises
    :class:`RetryCancelled`; the other keywords are :meth:`RetryPolicy.call`'s."""
    policy = policy or RetryPolicy()
    tries = 0

    def attempt() -> httpx.Response:
        nonlocal tries
        tries += 1
        return client.request(method, url, **kwargs)

    try:
        return policy.call(attempt, cancel=cancel, sleep=sleep, now=now, rand=rand, on_retry=on_retry)
    except httpx.HTTPError as exc:
        what = "could not connect" if isinstance(exc, CONNECTION_ERRORS) else "failed"
        detail = " ".join(str(exc).split()) or "no detail"
        raise FetchFailed(f"{method} {url} {what} ({type(exc).__name__}: {detail}) after {tries} "
                          f"attempt{'s' if tries != 1 else ''}", attempts=tries) from exc
