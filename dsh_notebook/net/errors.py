"""The network layer's exceptions (spec: style.md "exceptions as a documented tree"; research.md
"Running the roles" for the full-text codes built on them).

Design:

- Each class has a stable ``code`` (the class attribute) and a message that says what was asked,
  which rule it broke or what failed, and how to go on. :class:`NetError` is a
  :class:`~dsh_notebook.errors.DshError`.
- :class:`FetchRefused` is a rule (a scheme, an address class, a caller's allow-list or media
  type), decided before any byte of the answer is read; :class:`FetchFailed` is everything else
  that kept the bytes from arriving (resolution, connection, status, size cap, deadline), with the
  HTTP ``status`` when a server answered and the number of ``attempts`` made.
- Callers translate them into their own codes (full text: ``FULLTEXT_REFUSED`` /
  ``FULLTEXT_FETCH``).

::

    >>> from dsh_notebook.net import fetch
    >>> fetch("ftp://x.org/p")
    Traceback (most recent call last):
    ...
    dsh_notebook.net.errors.FetchRefused: 'ftp://x.org/p': only http and https URLs are fetched (got ftp scheme)
"""

from __future__ import annotations

from ..errors import DshError
from ..redact import redact_url_credentials

__all__ = ["MAX_MESSAGE", "FetchFailed", "FetchRefused", "NetError", "RetryCancelled"]

#: The longest message a network error carries, characters.
MAX_MESSAGE = 1000


class NetError(DshError):
    """Base of the network layer's exceptions; ``code`` names the kind, ``str(exc)`` says why (at
    most :data:`MAX_MESSAGE` characters: a message that repeats a hostile URL stays short)."""

    code: str = "NET_ERROR"

    def __init__(self, message: str = "", *args: object) -> None:
        text = redact_url_credentials(str(message))  # never a user:password@ of a URL
        super().__init__(text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1] + "…", *args)


class FetchRefused(NetError):
    """The URL (or a redirect hop, or the answer's media type) breaks a rule; the message names
    the rule. Nothing was fetched from the refused address."""

    code = "NET_REFUSED"


class FetchFailed(NetError):
    """The fetch did not deliver: the host did not resolve or answer, the status was not the
    expected one (``status`` holds it), the body went over the size cap, the deadline passed, or
    retries ran out (``attempts`` counts every try, the first included)."""

    code = "NET_FETCH"

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class RetryCancelled(NetError):
    """The caller's cancel event was set before an attempt or while waiting between attempts."""

    code = "NET_CANCELLED"
