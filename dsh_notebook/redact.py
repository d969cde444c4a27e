"""Credentials in URLs are never shown or logged (spec: style.md "No secrets in artifacts";
issue 14 item 3): ``http://user:password@host/v1`` is shown as ``http://***@host/v1``.

- :func:`url_without_credentials` for one URL (a provider's ``base_url``, a search instance, a
  fetched page) before it goes into a message, an output or a log;
- :func:`redact_url_credentials` for free text that may quote such a URL (an httpx error, a
  provider's error body);
- :data:`URL_CREDENTIALS` is the pattern, also used by ``verify``'s secret scan.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["URL_CREDENTIALS", "redact_url_credentials", "url_without_credentials"]

#: ``scheme://userinfo@`` in text: a scheme, ``://`` (or ``:\/\/`` as JSON may escape it), then the
#: userinfo: everything up to the ``@`` before the host, that is the last ``@`` before the next
#: ``/``, ``?``, ``#`` or white space (a password may hold ``@``, quotes or other odd characters);
#: failing that, ``user:`` and everything (up to 256 characters) up to the next ``@``, when what
#: follows the colon is not a port (a pasted password may hold ``/``, ``?`` or ``#`` unencoded:
#: ``http://user:pa/ss@host``; a URL with a port and an ``@`` in its query is then over-hidden,
#: never under-hidden).
URL_CREDENTIALS = re.compile(
    r"(?P<scheme>(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,31}:(?:\\?/){2})"
    r"(?P<userinfo>[^\s/?#]{0,1024}?"
    r"|[^\s/?#@:]{1,256}+:(?!\d{1,5}(?:[/?#\s]|$))[^\s@]{0,256}+)"   # a password holding / ? or # unencoded
    r"@(?=[^\s@/?#\\]{0,255}(?:[/?#\s\\]|$))")
# Bounded (a scheme of at most 32 characters that starts a word, a userinfo of at most 1,024, a
# host of at most 255) so that a megabyte of letters, or of "a@a@...", is scanned in linear time.


def url_without_credentials(url: str) -> str:
    """*url* with any user name and password replaced by ``***`` (the host, port and path kept)."""
    text = str(url)
    try:
        parts = urlsplit(text)
    except ValueError:
        return redact_url_credentials(text)
    if "@" not in parts.netloc:
        return redact_url_credentials(text)
    host = parts.netloc.rsplit("@", 1)[1]
    return redact_url_credentials(urlunsplit(parts._replace(netloc=f"***@{host}")))  # and any URL inside it


def redact_url_credentials(text: str) -> str:
    """*text* with the userinfo of every ``scheme://user:pass@host`` in it replaced by ``***``."""
    return URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}***@", str(text))
