"""The network layer: what every HTTP caller of dsh-notebook shares (spec: llm.md "Client" and
"Presets from the reckoner seed"; research.md "Running the roles").

Layer: below everything that talks HTTP (:mod:`dsh_notebook.llm`, :mod:`dsh_notebook.research_pipeline`);
it imports the standard library, httpx and tenacity, and nothing of dsh_notebook above
:mod:`dsh_notebook.storage`.

- :mod:`.fetcher`: :func:`fetch`, the one checked fetcher for URLs that came from outside (public
  http(s) hosts only, every resolved address and redirect hop checked, the connection pinned to
  the checked address, one deadline, a size cap);
- :mod:`.retry`: :class:`RetryPolicy`, the one retry policy (429/5xx and connection errors,
  ``Retry-After`` as seconds or a date, bounded, jittered, cancellable) and :func:`request`;
- :mod:`.errors`: :class:`FetchRefused`, :class:`FetchFailed`, :class:`RetryCancelled`, each with
  a ``code``.
"""

from __future__ import annotations

from .errors import FetchFailed, FetchRefused, NetError, RetryCancelled
from .fetcher import (
    ALLOW_PRIVATE_ENV,
    DEADLINE,
    MAX_BYTES,
    MAX_REDIRECTS,
    TIMEOUT,
    Fetched,
    address_rule,
    allow_private_default,
    check_host,
    fetch,
)
from .retry import CONNECTION_ERRORS, RETRY_STATUSES, Attempt, RetryPolicy, request, retry_after_seconds

__all__ = [
    "ALLOW_PRIVATE_ENV",
    "CONNECTION_ERRORS",
    "DEADLINE",
    "MAX_BYTES",
    "MAX_REDIRECTS",
    "RETRY_STATUSES",
    "TIMEOUT",
    "Attempt",
    "FetchFailed",
    "FetchRefused",
    "Fetched",
    "NetError",
    "RetryCancelled",
    "RetryPolicy",
    "address_rule",
    "allow_private_default",
    "check_host",
    "fetch",
    "request",
    "retry_after_seconds",
]
