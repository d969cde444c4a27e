"""URL safety (spec: llm.md "Presets from the reckoner seed"; upstream-facts.md 3.13).

* Hosts compare by suffix, label by label (:func:`host_matches`: ``en.wikipedia.org`` is on
  ``wikipedia.org``, ``evilwikipedia.org`` is not), punycode and Unicode spellings alike;
  :func:`httpx_host` is the host httpx would connect to (the policy asks that it agree with the
  browser's reading, :func:`dsh_notebook.settings.host_of`).
* :func:`model_safe`: the one sentence the model is handed never carries a URL. Every URL-like
  token (with or without a scheme, protocol-relative ``//host/...``, ``host/path``,
  ``host:port``, with userinfo, ``mailto:``) is reduced to its bare host name, and one on an IP
  address (or naming no host, such as ``data:``) is removed.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import httpx

from .safetext import utf8_safe


def httpx_host(url: str) -> str | None:
    """The host httpx would connect to for ``url`` (lowercase, no trailing dot), or ``None``."""
    try:
        u = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError, ValueError):
        return None
    if u.scheme not in ("http", "https") or not u.host:
        return None
    return u.host.lower().rstrip(".") or None


def unicode_host(host: str) -> str:
    """``host`` with each ``xn--`` label decoded (so punycode and Unicode spellings compare equal)."""
    if "xn--" not in host:
        return host
    labels = []
    for label in host.split("."):
        if label.startswith("xn--"):
            try:
                label = label.encode("ascii").decode("idna")
            except UnicodeError:
                pass
        labels.append(label)
    return ".".join(labels)


def host_matches(host: str, pattern: str) -> bool:
    """``host`` is ``pattern`` or a subdomain of it (``en.wikipedia.org`` matches
    ``wikipedia.org``; ``evilwikipedia.org`` does not). Punycode labels match their Unicode
    spelling."""
    if not host or not pattern:
        return False
    host, pattern = unicode_host(host), unicode_host(pattern)
    return host == pattern or host.endswith("." + pattern)


# URL-like tokens, most specific first. Hosts and paths are matched on ASCII classes so that a
# URL glued to CJK text (no space between) is still found; a path runs to whitespace, a quote,
# an angle bracket or CJK/full-width punctuation, and its trailing punctuation is given back.
_PATH = r"""[^\s<>"'`\u3000-\u303f\uff00-\uffef]*"""
_LABEL = r"[a-z0-9\u00c0-\u024f](?:[a-z0-9\u00c0-\u024f-]{0,61}[a-z0-9\u00c0-\u024f])?"
_HOST = rf"(?:{_LABEL}\.)+(?:[a-z\u00c0-\u024f]{{2,63}}|xn--[a-z0-9-]{{1,59}})(?![a-z0-9\u00c0-\u024f-])\.?"
_IPV4 = r"(?<![0-9a-z.])\d{1,3}(?:\.\d{1,3}){3}(?![0-9])"
_USERINFO = r"""(?:[^\s/\\@<>"'`]+@)?"""
_URL = re.compile(
    rf"""(?P<scheme>(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:[/\\]{{2}}{_PATH})"""  # http://..., ftp:\\...
    rf"""|(?P<opaque>(?<![a-z0-9+.-])(?:(?:data|javascript|vbscript):\S+"""
    rf"""|(?:https?|mailto|file|tel|news|urn):[^\s<>"'`]+))"""  # mailto:x@host, data:..., https:host
    rf"""|(?P<relative>(?<![a-z0-9:/\\])[/\\]{{2}}{_USERINFO}(?:\[[0-9a-f:.]+\]|{_HOST}|{_IPV4})"""
    rf"""(?::\d{{1,5}})?(?:[/\\?#]{_PATH})?)"""  # //host/path
    rf"""|(?P<ip>(?:\[[0-9a-f:.]+\]|{_IPV4})(?::\d{{1,5}}(?:[/\\?#]{_PATH})?|[/\\?#]{_PATH}))"""  # 1.2.3.4:80/x
    rf"""|(?P<host>(?<![a-z0-9\u00c0-\u024f_.~%+@-]){_USERINFO}{_HOST}"""
    rf"""(?::\d{{1,5}}(?:[/\\?#]{_PATH})?|[/\\?#]{_PATH}))""",  # host/path, host:port
    re.IGNORECASE)
_TRAILING = ".,;:!?*_~'\""
_IP_HOST = re.compile(rf"(?:{_IPV4}|[0-9a-f:.]*:[0-9a-f:.]*)", re.IGNORECASE)


def _url_host(token: str, kind: str) -> str | None:
    """The bare host a URL-like token (matched by ``_URL``'s group ``kind``) names, or
    ``None`` (an IP address, no host, or a scheme such as ``data:`` that names none)."""
    t = token.replace("\\", "/")
    m = re.match(r"([a-z][a-z0-9+.-]*):", t, re.IGNORECASE) if kind in ("scheme", "opaque") else None
    if m:
        scheme = m.group(1).lower()
        t = t[m.end():]
        if not t.startswith("//") and scheme not in ("http", "https", "mailto"):
            return None
    authority = re.split(r"[/?#]", t.lstrip("/"), maxsplit=1)[0]
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        return None
    host = unquote(hostport.partition(":")[0]).rstrip(".")  # as written: case is kept
    if not host or _IP_HOST.fullmatch(host) or not re.fullmatch(rf"{_HOST}", host, re.IGNORECASE):
        return None
    return host


def _give_back(token: str) -> tuple[str, str]:
    """``(url, trailing)``: punctuation that ends a sentence rather than the URL (and a closing
    bracket without its opening one) is given back to the text."""
    end = len(token)
    while end:
        ch = token[end - 1]
        if ch in _TRAILING or (ch in ")]}" and token[:end].count(ch) > token[:end].count({")": "(", "]": "[", "}": "{"}[ch])):
            end -= 1
        else:
            break
    return token[:end], token[end:]


def model_safe(text: str) -> str:
    """One line of text for the model: every URL-like token (``scheme://...``, ``mailto:``,
    ``//host/...``, ``host/path``, ``host:port``, with or without userinfo) reduced to its
    bare host name, one on an IP address (or naming no host) removed; lone surrogates made
    U+FFFD; whitespace collapsed."""
    def host(m: re.Match) -> str:
        url, trailing = _give_back(m.group(0))
        if not url:
            return trailing
        found = _url_host(url, m.lastgroup or "")
        return (found or "") + trailing

    text = utf8_safe(text)
    for _ in range(3):  # a replacement never makes a new URL, but be sure
        new = _URL.sub(host, text)
        if new == text:
            break
        text = new
    return " ".join(text.split())
