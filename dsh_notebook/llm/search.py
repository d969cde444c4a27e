"""The outside lookup: the ``search`` tool of the ``reckoner-with-search`` preset (spec: llm.md
"Presets from the reckoner seed"; upstream-facts.md 3.13, written in our words).

* One call takes one question and hands the model one sentence of answer (``{"ok": true,
  "answer", "origin"}``) or a failure receipt (``{"ok": false, "code", "error"}``). Queries,
  URLs, titles, snippets and page text never reach the model; the record keeps them. The
  answer sentence is the extractor's own text, so every URL-like token in it (with or without
  a scheme, protocol-relative ``//host/...``, ``host/path``, ``host:port``, with userinfo,
  ``mailto:``) is reduced to its bare host name, and one on an IP address (or naming no
  host, such as ``data:``) is removed (:func:`model_safe`).
* :func:`lookup` is the pipeline: open record -> budget -> provider -> extraction route ->
  retrieval (the question verbatim) -> policy filter (tier, allow-list) -> optional enrich
  (page text of the first allowed pages) -> one tool-free extraction call (prompt
  :data:`PROMPT_VERSION`) -> one ``search`` row written with :meth:`Engine.record_lookup`.
  Every path writes exactly one row, except "no open record", which writes nothing, and
  :func:`lookup` never raises for what a provider, a model or the text they return does
  (only a non-text question is a ``TypeError``): an unexpected error becomes a ``failed``
  row with code ``SEARCH_UNAVAILABLE`` and the detail in the row's ``error``. Every text is
  made safe for strict UTF-8 JSON first (lone surrogates become U+FFFD; a valid surrogate
  pair becomes its character), so a row is never lost to a stray ``\\ud800``.
* Stop is honoured: the running turn's cancel event (:data:`.agent.current_cancel`) goes to
  the extraction call, and the provider's search and the enrich fetches are waited on with
  it; a stopped lookup returns within ~50 ms with a ``failed`` row whose ``error`` is
  ``"cancelled"`` (the agent then ends the turn before its next model request).
* Size caps (what a provider returns is untrusted): a candidate's title is cut to
  :data:`TITLE_MAX_CHARS` (300), its snippet to :data:`SNIPPET_MAX_CHARS` (2,000), its
  ``publishedAt`` to :data:`PUBLISHED_MAX_CHARS` (100); a candidate whose URL is longer than
  :data:`URL_MAX_CHARS` (2,048) is dropped. The material sent to the extraction model (every
  item's lines together, page text included) is at most :data:`MATERIAL_MAX_CHARS` (60,000):
  later items' text is cut, and items that no longer fit are left out (and out of ``used``).
* :class:`SearchPolicy` is configuration: the ``[search]`` table of the one settings object
  (:class:`dsh_notebook.settings.SearchSettings`, which validates it) with the tool's rules
  on top. A value out of range is replaced by its default and reported in ``problems``, never refused;
  a ``search`` key that is not a table switches search off and is reported the same way. An
  allow-list entry is a host suffix; a single label (a whole top-level domain such as
  ``org``) is accepted but reported as too broad.
* Hosts are read the way a browser reads them (:func:`host_of`, defined with the settings so
  that a configured URL and a source's URL are read alike): for http(s) a backslash is
  a path separator and userinfo is ignored, so ``https://evil.com\\@en.wikipedia.org/`` is on
  ``evil.com``. A strict-tier source must also be on an allowed host as httpx reads the URL
  (the enrich step fetches with httpx), so a URL the two read differently is refused.
* The enrich step fetches pages through the network layer's checked fetcher
  (:func:`dsh_notebook.net.fetch`): public http(s) hosts only, every redirect hop checked again
  (its address, and the policy's allow-list), one deadline per page. Only Python callers can
  lift the address rule, for pages served from ``127.0.0.1`` in tests and demos
  (``HttpSearchProvider(..., allow_private=True)``; the full texts' environment variable
  ``DSH_FULLTEXT_ALLOW_PRIVATE`` does not reach the search tool); nothing a model sends reaches it.
* Providers are small classes over httpx with one method, ``search(query, max_results)``
  returning candidates ``{url, title?, snippet?, publishedAt?}``: :class:`SearxngProvider`
  (a SearXNG instance's JSON API) and :class:`WikipediaProvider` (Wikipedia's REST search).
  :mod:`.testing` has fake servers for both.
"""

from __future__ import annotations

import codecs
import html
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from html.parser import HTMLParser
from typing import Any, ClassVar, Protocol, TypedDict
from urllib.parse import quote, unquote

import httpx
from pydantic import BaseModel, ValidationError, field_validator

from ..errors import CANCELLED, DshError, LLMError
from ..net import FetchFailed, FetchRefused, RetryPolicy, fetch
from ..net import request as net_request
from ..reckoner.errors import OPEN_RECORD_NOT_FOUND, EngineError
from ..settings import (
    DEFAULT_WIKIPEDIA_URL,
    SearchSettings,
    Settings,
    api_key,
    host_of,
    load_settings,
)
from ..version import __version__
from .agent import Tool, current_cancel
from .client import ChatClient, interruptible

_log = logging.getLogger(__name__)

# ---------------------------------------------------------------- vocabulary

#: The version of the extraction prompt, recorded with every synthesis.
PROMPT_VERSION = "search-extract/1"

#: The record already holds its budget of lookups; the provider was not called.
BUDGET_EXCEEDED = "SEARCH_BUDGET_EXCEEDED"
#: No provider, no extraction model, a provider failure or an unreadable extraction reply.
UNAVAILABLE = "SEARCH_UNAVAILABLE"
#: No allowed source holds the fact.
INSUFFICIENT = "SEARCH_INSUFFICIENT"
CODES = (BUDGET_EXCEEDED, UNAVAILABLE, INSUFFICIENT)

OUTCOMES = ("answered", "insufficient", "refused", "failed")
#: An answer whose every source is on one of these is of origin ``github``.
GITHUB_HOSTS: tuple[str, ...] = ("github.com", "githubusercontent.com", "github.io")

#: Longest candidate title kept (longer ones are cut, ending in "…").
TITLE_MAX_CHARS = 300
#: Longest candidate snippet kept (longer ones are cut, ending in "…").
SNIPPET_MAX_CHARS = 2_000
#: Longest candidate ``publishedAt`` kept.
PUBLISHED_MAX_CHARS = 100
#: Longest candidate URL; a candidate with a longer URL is dropped.
URL_MAX_CHARS = 2_048
#: Most characters of material (all items' lines together) sent to the extraction model.
MATERIAL_MAX_CHARS = 60_000

#: The extraction step's system message (prompt version :data:`PROMPT_VERSION`).
EXTRACT_SYSTEM = """\
You read retrieved reference material and write the single factual answer a calculation \
assistant asked for. You have no tools and no other context.

Rules, most important first:
1. Answer from the numbered material only. Do not add anything you know yourself and do not \
guess: a number without a source in the material is worse than no answer.
2. If the material does not hold the answer, set "insufficient" to true and use "answer" to say, \
in one sentence, what is missing.
3. Copy each number together with its unit exactly as the material writes it. Do not convert \
units, round, or compute anything derived from it; the assistant does that with a checked \
calculator.
4. If the sources disagree, say so and give both values, naming each source by its site or \
title (never by its web address).
5. Write in the language of the question, at most 120 words, with no preamble and no heading.

Reply with exactly one JSON object and nothing around it:
{"answer": string, "used": number[], "insufficient": boolean}
"used" holds the 1-based numbers of the material items you relied on, and is empty when \
"insufficient" is true."""

# ---------------------------------------------------------------- shapes


class Candidate(TypedDict, total=False):
    """One source as a provider returned it (``url`` is always present)."""

    url: str
    title: str
    snippet: str
    publishedAt: str


class SearchError(DshError):
    """A provider could not answer: the message says which provider and what failed (an HTTP
    status, a reply that is not JSON, a JSON reply of the wrong shape, a transport error)."""

    code = UNAVAILABLE


class SearchProvider(Protocol):
    """What :func:`lookup` needs from a provider. ``search`` returns at most ``max_results``
    candidates, best first, and raises :class:`SearchError` (or anything else) on failure.
    A provider may also have ``fetch_text(url, max_chars, allow)`` (used by enrich) and
    ``close()``."""

    name: str

    def search(self, query: str, max_results: int) -> list[Candidate]: ...


# ---------------------------------------------------------------- hosts


def _httpx_host(url: str) -> str | None:
    """The host httpx would connect to for ``url`` (lowercase, no trailing dot), or ``None``."""
    try:
        u = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError, ValueError):
        return None
    if u.scheme not in ("http", "https") or not u.host:
        return None
    return u.host.lower().rstrip(".") or None


def _unicode_host(host: str) -> str:
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
    host, pattern = _unicode_host(host), _unicode_host(pattern)
    return host == pattern or host.endswith("." + pattern)


# ---------------------------------------------------------------- policy

_warned: set[str] = set()


class SearchPolicy(SearchSettings):
    """Where a lookup may read, how much, and how it answers (upstream-facts.md 3.13): the
    ``[search]`` table of the settings (:class:`~dsh_notebook.settings.SearchSettings`, which
    checks every value: a wrong one is replaced by its default and described in ``problems``,
    never raised) with the tool's rules on top.

    Defaults: ``tier="strict"``, ``allowed_hosts=DEFAULT_ALLOWED_HOSTS``, ``max_results=12``
    (1-50), ``max_searches_per_record=4`` (1-50), ``answer_max_chars=1200`` (120-10000),
    ``enrich_pages=0`` (0-10), ``enrich_chars_per_page=4000`` (200-50000),
    ``synthesis_model=None`` (the chat client's model), ``synthesis_max_tokens=800``
    (128-8192). Equality compares the values, not the problems.
    """

    @classmethod
    def from_config(cls, table: Mapping[str, Any] | None) -> SearchPolicy:
        """The policy of a ``[search]`` table as written (``None`` or missing keys mean the
        defaults; a value that is not a mapping gives the default policy with the problem
        ``[search] must be a table``, and no provider)."""
        return cls._reported(cls.model_validate(table))

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> SearchPolicy:
        """The policy of ``settings.search`` (``settings`` defaults to :func:`load_settings`)."""
        settings = settings if settings is not None else load_settings()
        return cls._reported(cls.from_table(settings.search))

    @staticmethod
    def _reported(policy: SearchPolicy) -> SearchPolicy:
        for p in policy.problems:
            if p not in _warned:
                _warned.add(p)
                _log.warning("search settings: %s", p)
        return policy

    def allows(self, url: str) -> bool:
        """Whether a source may be read: every source in the open tier; in the strict tier an
        http(s) URL whose host matches an allowed host both as a browser reads it
        (:func:`host_of`) and as httpx does (the host the enrich step would connect to)."""
        if self.tier == "open":
            return True
        hosts = (host_of(url), _httpx_host(url) if isinstance(url, str) else None)
        return all(h is not None and any(host_matches(h, p) for p in self.allowed_hosts) for h in hosts)

    def origin(self, used: list[Candidate]) -> str:
        """``web`` (open tier), ``github`` (every source on a GitHub host) or ``allowlist``."""
        if self.tier == "open":
            return "web"
        hosts = [host_of(c.get("url", "")) for c in used]
        if hosts and all(h is not None and any(host_matches(h, g) for g in GITHUB_HOSTS) for h in hosts):
            return "github"
        return "allowlist"

    def fact(self) -> dict:
        """The policy as the row records it (camelCase keys, as upstream)."""
        return {"tier": self.tier, "allowedHosts": list(self.allowed_hosts), "maxResults": self.max_results,
                "maxSearchesPerRecord": self.max_searches_per_record, "answerMaxChars": self.answer_max_chars,
                "enrichPages": self.enrich_pages, "enrichCharsPerPage": self.enrich_chars_per_page}


# ---------------------------------------------------------------- providers


class _TextOfHtml(HTMLParser):
    _SKIP: ClassVar[frozenset[str]] = frozenset({"script", "style", "noscript", "template", "svg", "head"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self._SKIP:
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in self._SKIP and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def html_text(markup: str) -> str:
    """The visible text of an HTML fragment or page, whitespace collapsed (scripts, styles
    and the head dropped; entities decoded)."""
    p = _TextOfHtml()
    try:
        p.feed(markup)
        p.close()
    except AssertionError:  # html.parser's complaint about broken markup: keep what was read
        _log.debug("html_text: the markup is broken; keeping the text read so far")
    return " ".join(" ".join(p.parts).split())


class HttpSearchProvider:
    """Shared httpx plumbing of the providers: one connection pool, a ``User-Agent``, JSON
    GETs that raise :class:`SearchError`, and :meth:`fetch_text` for the enrich step (through
    :func:`dsh_notebook.net.fetch`; ``allow_private=True`` lets it read pages on private
    addresses, for tests and demos only). Usable as a context manager; :meth:`close` releases
    the pool."""

    name = "http"
    max_page_bytes = 2_000_000
    user_agent = f"dsh-notebook/{__version__} (reckoner search tool)"

    def __init__(self, base_url: str, *, timeout: float = 15.0, transport: httpx.BaseTransport | None = None,
                 allow_private: bool = False):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.allow_private = bool(allow_private)  # never None: fetch would read the environment
        self._transport = transport
        self._http: httpx.Client | None = None

    def _client(self) -> httpx.Client:
        if self._http is None or self._http.is_closed:
            self._http = httpx.Client(timeout=self.timeout, transport=self._transport,
                                      headers={"User-Agent": self.user_agent})
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def search(self, query: str, max_results: int) -> list[Candidate]:  # pragma: no cover - abstract
        raise NotImplementedError

    #: The search request's retries, under the network layer's one policy (429, 5xx and connection
    #: errors; Retry-After read; short, since a person waits for the answer).
    retry_policy = RetryPolicy(attempts=2, backoff=0.5, max_wait=5.0, max_total=5.0)

    def _get_json(self, path: str, params: dict) -> Any:
        try:
            resp = net_request(self._client(), "GET", self.base_url + path, policy=self.retry_policy, params=params,
                               headers={"Accept": "application/json"})
        except FetchFailed as exc:
            raise SearchError(f"{self.name}: the request failed ({exc})") from None
        if resp.status_code != 200:
            raise SearchError(f"{self.name}: the search answered HTTP {resp.status_code}")
        try:
            return resp.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise SearchError(f"{self.name}: the search reply is not JSON") from None

    def fetch_text(self, url: str, max_chars: int, allow: Callable[[str], bool] | None = None) -> str | None:
        """The text of one page (HTML reduced to its visible text; ``text/*`` and JSON as
        they are), cut to ``max_chars``; ``None`` for an answer other than 200, another content
        type, an empty body, a URL or redirect target that ``allow`` refuses, or a URL the
        network layer refuses (not http(s), or a host on a loopback, private or otherwise
        non-public address: :func:`dsh_notebook.net.fetch` checks every redirect hop). The body
        is read up to ``max_page_bytes``. Other failures raise
        :class:`dsh_notebook.net.FetchFailed`."""
        if host_of(url) is None:
            return None
        try:
            page = fetch(url, timeout=self.timeout, max_bytes=self.max_page_bytes, truncate=True,
                         allow_private=self.allow_private, allow_url=allow, media_ok=_readable_media,
                         user_agent=self.user_agent)
        except FetchRefused as exc:
            _log.info("search enrich: %s", exc)
            return None
        except FetchFailed as exc:
            if exc.status is not None:
                return None
            raise
        kind = page.media_type or ""
        text = page.content.decode(_codec(page.charset), errors="replace")
        if kind in ("text/html", "application/xhtml+xml", "") and "<" in text:
            text = html_text(text)
        text = text.strip()
        return text[:max_chars] if text else None


def _readable_media(kind: str) -> bool:
    """Whether enrich reads a page of media type ``kind`` (``""``: none declared)."""
    return kind.startswith("text/") or kind in ("application/json", "application/xhtml+xml", "")


def _codec(charset: str | None) -> str:
    """The codec for a declared charset; UTF-8 when none is declared or Python does not know it."""
    if charset:
        try:
            return codecs.lookup(charset).name
        except LookupError:
            pass
    return "utf-8"


class SearxngProvider(HttpSearchProvider):
    """A SearXNG instance's JSON API: ``GET {base}/search?q=...&format=json`` (the instance
    must enable the ``json`` format). Each ``results[]`` entry's ``url``, ``title``,
    ``content`` and ``publishedDate`` become a candidate's ``url``, ``title``, ``snippet`` and
    ``publishedAt``; the first ``max_results`` with a usable URL are kept (capped as
    :func:`lookup` says: title, snippet, a URL longer than :data:`URL_MAX_CHARS` drops the
    result)."""

    name = "searxng"

    def search(self, query: str, max_results: int) -> list[Candidate]:
        data = self._get_json("/search", {"q": query, "format": "json"})
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise SearchError(f"{self.name}: the search reply has no results list")
        out: list[Candidate] = []
        for r in results:
            if len(out) >= max_results:
                break
            if not isinstance(r, dict) or not isinstance(r.get("url"), str) or not r["url"].strip():
                continue
            c = _candidate(r["url"], r.get("title"), r.get("content"), r.get("publishedDate"))
            if c is not None:
                out.append(c)
        return out


class WikipediaProvider(HttpSearchProvider):
    """Wikipedia's REST search: ``GET {base}/w/rest.php/v1/search/page?q=...&limit=N``. Each
    ``pages[]`` entry becomes a candidate with the article URL ``{base}/wiki/{key}``, its
    ``title``, and a snippet from ``description`` and ``excerpt`` (its HTML highlight tags
    removed). Candidates are capped as :func:`lookup` says (title, snippet, URL)."""

    name = "wikipedia"

    def __init__(self, base_url: str = DEFAULT_WIKIPEDIA_URL, **kw):
        super().__init__(base_url, **kw)

    def search(self, query: str, max_results: int) -> list[Candidate]:
        data = self._get_json("/w/rest.php/v1/search/page", {"q": query, "limit": max(1, min(100, max_results))})
        pages = data.get("pages") if isinstance(data, dict) else None
        if not isinstance(pages, list):
            raise SearchError(f"{self.name}: the search reply has no pages list")
        out: list[Candidate] = []
        for p in pages:
            if len(out) >= max_results:
                break
            if not isinstance(p, dict) or not isinstance(p.get("key"), str) or not p["key"].strip():
                continue
            url = f"{self.base_url}/wiki/{quote(p['key'].strip(), safe=_WIKI_SAFE)}"
            parts = [html_text(x[:4 * SNIPPET_MAX_CHARS]) for x in (p.get("description"), p.get("excerpt"))
                     if isinstance(x, str)]
            c = _candidate(url, p.get("title"), " — ".join(x for x in parts if x))
            if c is not None:
                out.append(c)
        return out


_WIKI_SAFE = "/:@!$&'()*+,;=-._~"


def _candidate(url, title=None, snippet=None, published=None) -> Candidate | None:
    """One candidate, made safe and capped: ``None`` when ``url`` is not a non-empty text of
    at most :data:`URL_MAX_CHARS` characters; the title (entities decoded), the snippet and
    ``publishedAt`` have their whitespace collapsed and are cut to their caps."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    if not url or len(url) > URL_MAX_CHARS:
        return None
    c: Candidate = {"url": _utf8(url)}
    if isinstance(title, str) and title.strip():
        text = " ".join(html.unescape(_utf8(title[:8 * TITLE_MAX_CHARS])).split())
        if text:
            c["title"] = _cut(text, TITLE_MAX_CHARS)
    if isinstance(snippet, str) and snippet.strip():
        text = " ".join(_utf8(snippet[:4 * SNIPPET_MAX_CHARS]).split())
        if text:
            c["snippet"] = _cut(text, SNIPPET_MAX_CHARS)
    if isinstance(published, str) and published.strip():
        c["publishedAt"] = _cut(" ".join(_utf8(published[:4 * PUBLISHED_MAX_CHARS]).split()), PUBLISHED_MAX_CHARS)
    return c


# ---------------------------------------------------------------- safe text

_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> str:
    """``text`` as strict UTF-8 can hold it: a valid surrogate pair becomes its character, a
    lone surrogate U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _safe(value: Any) -> Any:
    """``value`` with every text (keys too) passed through :func:`_utf8`; lists, tuples and
    dicts are rebuilt, anything else is kept."""
    if isinstance(value, str):
        return _utf8(value)
    if isinstance(value, dict):
        return {(_utf8(k) if isinstance(k, str) else k): _safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_safe(v) for v in value]
    return value


def _cut(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its start ending in "…"."""
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def provider_from_settings(settings: Settings | None = None, **kw) -> HttpSearchProvider | None:
    """The provider the ``[search]`` table names, or ``None`` when none is configured (or the
    configuration is unusable: :meth:`SearchPolicy.from_settings` reports why). ``provider =
    "searxng"`` needs ``searxng_url``; ``"wikipedia"`` uses ``wikipedia_url`` or
    ``https://en.wikipedia.org``; without ``provider``, a ``searxng_url`` picks SearXNG.
    ``kw`` goes to the provider (``timeout``, ``transport``)."""
    settings = settings if settings is not None else load_settings()
    kind, url = settings.search.provider_choice
    if kind == "searxng":
        return SearxngProvider(url, **kw)
    if kind == "wikipedia":
        return WikipediaProvider(url, **kw)
    return None


# ---------------------------------------------------------------- extraction


class Extraction(BaseModel):
    """A readable extraction reply: ``answer`` (non-empty), ``used`` (1-based numbers as the
    extractor wrote them), ``insufficient``."""

    model_config = {"extra": "ignore"}

    answer: str
    used: list[Any] = []
    insufficient: bool = False

    @field_validator("answer")
    @classmethod
    def _non_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the answer is empty")
        return v.strip()


def _item_head(n: int, m: dict) -> list[str]:
    head = [f"[{n}] {m.get('title') or m['url']}", f"url: {m['url']}"]
    if m.get("publishedAt"):
        head.append(f"published: {m['publishedAt']}")
    return head


def extraction_messages(question: str, material: list[dict]) -> list[dict]:
    """The extraction request: :data:`EXTRACT_SYSTEM` and a user message ``Question: ...``,
    ``Material:``, then per item ``[n] title-or-url``, ``url: ...``, optional
    ``published: ...`` and its page text or snippet (see :func:`fit_material` for the cap)."""
    lines = [f"Question: {question}", "", "Material:"]
    for n, m in enumerate(material, 1):
        lines += _item_head(n, m)
        body = m.get("text") or m.get("snippet")
        if body:
            lines.append(body.strip())
        lines.append("")
    return [{"role": "system", "content": EXTRACT_SYSTEM}, {"role": "user", "content": "\n".join(lines).rstrip()}]


#: An item whose text would have fewer characters than this is left out instead of cut.
_MIN_ITEM_TEXT = 200


def fit_material(material: list[dict], limit: int = MATERIAL_MAX_CHARS) -> list[dict]:
    """The first items of ``material`` whose lines, as :func:`extraction_messages` writes
    them, take at most ``limit`` characters together: an item's page text (or snippet) is cut
    to what is left, and the items after the first one that no longer fits with at least
    200 characters of its text are left out (the first item is always kept)."""
    out: list[dict] = []
    left = limit
    for n, m in enumerate(material, 1):
        head = sum(len(line) + 1 for line in _item_head(n, m)) + 2  # + the blank line between items
        key = "text" if m.get("text") else "snippet" if m.get("snippet") else None
        body = m[key].strip() if key else ""
        room = left - head - 1
        if out and (room < min(len(body), _MIN_ITEM_TEXT) or room < 0):
            break
        if key and len(body) > max(room, 0):
            m = {**m, key: _cut(body, max(room, _MIN_ITEM_TEXT))}
        out.append(m)
        left -= head + (len(m[key].strip()) + 1 if key else 0)
    return out


def parse_extraction(text: str, n_material: int) -> tuple[str, list[int], bool] | None:
    """``(answer, used, insufficient)`` from an extraction reply, or ``None`` when it is not
    readable (or not a text). The JSON object is taken from the first ``{`` to the last
    ``}``; ``used`` becomes 0-based, de-duplicated, in range (non-integers dropped), and
    empty when ``insufficient``; the answer is made safe for strict UTF-8 JSON."""
    if not isinstance(text, str):
        return None
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        reply = Extraction.model_validate(json.loads(text[start:end + 1]))
    except (json.JSONDecodeError, ValidationError, TypeError, ValueError, RecursionError):
        return None
    used: list[int] = []
    if not reply.insufficient:
        for u in reply.used:
            if isinstance(u, float) and u.is_integer():
                u = int(u)
            if isinstance(u, bool) or not isinstance(u, int) or not 1 <= u <= n_material or u - 1 in used:
                continue
            used.append(u - 1)
    return _utf8(reply.answer), used, reply.insufficient


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

    text = _utf8(text)
    for _ in range(3):  # a replacement never makes a new URL, but be sure
        new = _URL.sub(host, text)
        if new == text:
            break
        text = new
    return " ".join(text.split())


_model_safe = model_safe


# ---------------------------------------------------------------- cancellation


class _Cancelled(Exception):
    """The running turn's cancel event was set while the lookup waited."""


def _interruptible(fn: Callable[[], Any], cancel: threading.Event | None) -> Any:
    """``fn()``, or :class:`_Cancelled` within ~50 ms of ``cancel`` being set (see
    :func:`~.client.interruptible`)."""
    return interruptible(fn, cancel, _Cancelled)


# ---------------------------------------------------------------- lookup

#: What the model is told when a lookup fails in a way the pipeline did not foresee.
_UNEXPECTED = ("the lookup failed unexpectedly, so there is no answer; treat the quantity as missing or try once "
               "more.")
_STOPPED = "the lookup was stopped before it finished, so there is no answer."


def lookup(engine, question: str, *, client: ChatClient, policy: SearchPolicy,
           provider: SearchProvider | None) -> dict:
    """Look one question up and record it in ``engine``'s open record.

    ``engine`` is a :class:`~dsh_notebook.reckoner.Engine`; ``client`` the chat client whose
    model runs the extraction (unless ``policy.synthesis_model`` names another); ``provider``
    ``None`` means search is not configured. Returns the receipt the model sees:
    ``{"ok": True, "answer", "origin"}`` (``origin`` ``web``/``github``/``allowlist``) or
    ``{"ok": False, "code", "error"}`` with one sentence and no URL or page text. Codes:
    ``ENGINE_OPEN_RECORD_NOT_FOUND`` (nothing recorded), ``SEARCH_BUDGET_EXCEEDED``,
    ``SEARCH_UNAVAILABLE``, ``SEARCH_INSUFFICIENT``. Every other path writes one ``search``
    row (:meth:`Engine.record_lookup`) whose content is the fact ``{question, tier,
    outcome, candidates, used, policy, synthesis?, code?, error?, durationMs}``, every text
    in it made safe for strict UTF-8 JSON (the question too). Never raises for a provider or
    model failure, an unreadable reply or an unexpected error (a ``failed`` row,
    ``SEARCH_UNAVAILABLE``, the detail in the row's ``error``); ``TypeError`` for a non-text
    question. The running turn's cancel event (:data:`.agent.current_cancel`) stops the
    provider search, the enrich fetches and the extraction call: a ``failed`` row with
    ``error`` ``"cancelled"`` and a ``SEARCH_UNAVAILABLE`` receipt.
    """
    if not isinstance(question, str):
        raise TypeError(f"the question is {type(question).__name__}; it must be a text")
    started = time.monotonic()
    question = _utf8(question)
    if engine.open_record is None:
        return EngineError(OPEN_RECORD_NOT_FOUND, "no record is open; start one with record_start: a lookup is "
                                                  "recorded, so it needs the record it belongs to.").receipt()
    rows: list[dict] = []

    def record(outcome: str, candidates: list, used: list, *, synthesis: dict | None = None,
               code: str | None = None, error: str | None = None, detail: str | None = None) -> dict:
        fact: dict = {"question": question, "tier": policy.tier, "outcome": outcome, "candidates": candidates,
                      "used": used, "policy": policy.fact()}
        if synthesis is not None:
            fact["synthesis"] = synthesis
        if code is not None:
            fact["code"] = code
            fact["error"] = detail or error
        fact["durationMs"] = round((time.monotonic() - started) * 1000)
        fact = _safe(fact)
        written = engine.record_lookup(fact)
        rows.append(written)
        if not written.get("ok"):
            _log.warning("the search row was not recorded: %s", written.get("error"))
            if written.get("code") == OPEN_RECORD_NOT_FOUND:
                return written
        if code is not None:
            return {"ok": False, "code": code, "error": _utf8(error)}
        return {"ok": True, "answer": fact["synthesis"]["answer"], "origin": policy.origin(used)}

    try:
        return _lookup(question, engine, client, policy, provider, record)
    except KeyboardInterrupt:
        if not rows:
            try:
                record("failed", [], [], code=UNAVAILABLE, error=_STOPPED, detail="cancelled")
            except Exception:  # noqa: BLE001 - the interrupt matters more than the row
                _log.exception("search: the row of an interrupted lookup was not written")
        raise
    except Exception as exc:  # noqa: BLE001 - a lookup never raises: an unforeseen fault is a failed lookup
        _log.exception("search: the lookup failed unexpectedly")
        receipt = {"ok": False, "code": UNAVAILABLE, "error": _UNEXPECTED}
        if rows:
            return receipt
        try:
            return record("failed", [], [], code=UNAVAILABLE, error=_UNEXPECTED,
                          detail=f"the lookup failed unexpectedly: {type(exc).__name__}: {exc}")
        except Exception:  # noqa: BLE001
            _log.exception("search: the row of a failed lookup was not written")
            return receipt


def _lookup(question: str, engine, client: ChatClient, policy: SearchPolicy, provider, record) -> dict:
    # 2. the budget
    budget = policy.max_searches_per_record
    if engine.lookup_count() >= budget:
        return record("refused", [], [], code=BUDGET_EXCEEDED,
                      error=f"this record has used all {budget} of its lookups, so the question was not searched; "
                            "name the quantity that is still missing, or close the record and start a new one.")
    # 3. a provider
    if provider is None:
        problems = "; ".join(policy.problems)
        return record("failed", [], [], code=UNAVAILABLE,
                      error="no search provider is configured, so nothing can be looked up; treat the quantity "
                            "as missing.",
                      detail="no search provider is configured: set [search] provider and searxng_url (or "
                             "wikipedia_url) in settings.toml" + (f" (settings problems: {problems})" if problems
                                                                  else ""))
    # 4. the extraction route, before anything is paid for
    extractor, own = client, False
    try:
        want = policy.synthesis_model
        if want and want not in (client.model.id, f"{client.provider_id}/{client.model.id}"):
            extractor, own = ChatClient(model=want, settings=client.settings, timeout=client.timeout,
                                        max_retries=client.max_retries, backoff=client.backoff), True
        api_key(extractor.provider_id, extractor.provider)
    except LLMError as exc:
        return record("failed", [], [], code=UNAVAILABLE,
                      error="no model is available to read search results, so nothing was looked up.",
                      detail=f"no extraction model: {exc}")
    try:
        return _retrieve_and_extract(question, policy, provider, extractor, record, current_cancel.get())
    finally:
        if own:
            extractor.close()


def _retrieve_and_extract(question, policy: SearchPolicy, provider, extractor: ChatClient, record,
                          cancel: threading.Event | None) -> dict:
    def stopped(candidates: list, used: list) -> dict:
        return record("failed", candidates, used, code=UNAVAILABLE, error=_STOPPED, detail="cancelled")

    # 5. retrieval: the question verbatim
    try:
        found = _interruptible(lambda: provider.search(question, policy.max_results), cancel)
        if not isinstance(found, (list, tuple)):
            raise SearchError(f"the provider returned {type(found).__name__}, not a list of sources")
        candidates = [c for c in (_candidate(f.get("url"), f.get("title"), f.get("snippet"), f.get("publishedAt"))
                                  for f in found if isinstance(f, dict)) if c is not None]
        candidates = candidates[:policy.max_results]
    except _Cancelled:
        return stopped([], [])
    except Exception as exc:  # noqa: BLE001 - any provider fault is a failed lookup, never a crash
        return record("failed", [], [], code=UNAVAILABLE,
                      error="the search provider could not be reached or answered wrongly, so nothing was looked "
                            "up; treat the quantity as missing or try once more.",
                      detail=f"the search provider failed: {type(exc).__name__}: {exc}")
    # 6. the policy, then the optional enrich
    used = [c for c in candidates if policy.allows(c["url"])]
    texts: dict[int, str] = {}
    if policy.enrich_pages > 0 and used:
        try:
            texts = _enrich(provider, used[:policy.enrich_pages], policy, cancel)
        except _Cancelled:
            return stopped(candidates, used)
    # 7. no material
    if not used:
        why = ("no source was found" if not candidates else
               f"none of the {len(candidates)} sources found is on the allowed list")
        return record("insufficient", candidates, [], code=INSUFFICIENT,
                      error="no source the policy allows answers this question; state which quantity is missing "
                            "instead of estimating it.",
                      detail=f"{why}; state which quantity is missing instead of estimating it")
    # 8. the extraction (what does not fit in MATERIAL_MAX_CHARS is neither sent nor counted as used)
    material = fit_material([{**c, **({"text": texts[i]} if i in texts else {})} for i, c in enumerate(used)])
    used = used[:len(material)]
    try:
        reply = extractor.complete(extraction_messages(question, material), stream=False,
                                   max_tokens=policy.synthesis_max_tokens, cancel=cancel)
        text = reply.text
        if getattr(reply, "truncated", False):
            raise ValueError(f"the extraction {reply.truncation_notice()}")
        parsed = parse_extraction(text, len(used))
    except LLMError as exc:
        if exc.code == CANCELLED or (cancel is not None and cancel.is_set()):
            return stopped(candidates, used)
        return record("failed", candidates, used, code=UNAVAILABLE,
                      error="the search results could not be read (the extraction model failed), so there is no "
                            "answer; treat the quantity as missing or try once more.",
                      detail=f"the extraction call failed: {exc}")
    except Exception as exc:  # noqa: BLE001 - a reply of a shape nobody foresaw is a failed lookup
        if cancel is not None and cancel.is_set():
            return stopped(candidates, used)
        return record("failed", candidates, used, code=UNAVAILABLE,
                      error="the search results could not be read (the extraction step failed), so there is no "
                            "answer; treat the quantity as missing or try once more.",
                      detail=f"the extraction step failed: {type(exc).__name__}: {exc}")
    # 9. the reply
    if parsed is None:
        shown = text[:500] if isinstance(text, str) else text
        return record("failed", candidates, used, code=UNAVAILABLE,
                      error="the search results could not be read (the extraction reply was not usable), so "
                            "there is no answer; treat the quantity as missing.",
                      detail=f"the extraction reply is not readable: {shown!r}")
    answer, cited, insufficient = parsed
    answer = model_safe(answer)
    synthesis = {"provider": extractor.provider_id, "model": extractor.model.id, "promptVersion": PROMPT_VERSION,
                 "answer": answer, "used": cited}
    # 10. the sources do not hold it
    if insufficient:
        sentence = _trim(answer, policy.answer_max_chars)
        error = f"no source the policy allows answers this question: {sentence}"
        return record("insufficient", candidates, used, synthesis=synthesis, code=INSUFFICIENT, error=error)
    # 11. the answer
    synthesis["answer"] = _trim(answer, policy.answer_max_chars)
    return record("answered", candidates, used, synthesis=synthesis)


def _trim(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def _enrich(provider, sources: list[Candidate], policy: SearchPolicy,
            cancel: threading.Event | None = None) -> dict[int, str]:
    """Page text of ``sources`` by index; a page that fails or is empty is skipped. Raises
    :class:`_Cancelled` when ``cancel`` is set while a page loads."""
    fetch = getattr(provider, "fetch_text", None)
    own = None
    if fetch is None:
        own = HttpSearchProvider("")
        fetch = own.fetch_text
    texts: dict[int, str] = {}
    try:
        for i, c in enumerate(sources):
            try:
                text = _interruptible(lambda u=c["url"]: fetch(u, policy.enrich_chars_per_page, policy.allows),
                                      cancel)
            except _Cancelled:
                raise
            except Exception as exc:  # noqa: BLE001 - a page that will not load is not enriched
                _log.info("search enrich skipped a page: %s", type(exc).__name__)
                continue
            if isinstance(text, str) and text:
                texts[i] = _utf8(text[:policy.enrich_chars_per_page])
    finally:
        if own is not None:
            own.close()
    return texts


# ---------------------------------------------------------------- the tool

SEARCH_PARAMETERS = {"type": "object", "properties": {"question": {"type": "string", "minLength": 1}},
                     "required": ["question"], "additionalProperties": False}

SEARCH_DESCRIPTION = (
    "Look up one fact you do not have (a material property, a standard value, device data) in "
    "allowed reference sources. Ask one plain question, as you would ask a colleague; you get back "
    "one short answer text (and its origin), or a failure with a code. Never ask it to compute, "
    "convert, round or derive anything, or for something the record already holds. Store the "
    "answer's number with set, copying number and unit exactly. If it finds nothing, the quantity "
    "is missing."
)


def search_tool(engine, client: ChatClient, policy: SearchPolicy | None = None,
                provider: SearchProvider | None = None) -> Tool:
    """The ``search`` agent tool on ``engine`` (arguments ``{"question": text}``).

    With ``policy``/``provider`` left ``None`` both are read from ``settings.toml`` at every
    call, so a settings change takes effect on the next lookup (an unreadable settings file
    falls back to ``client.settings``). The tool's result is :func:`lookup`'s receipt.
    """

    def run(args: dict) -> dict:
        settings = None
        if policy is None or provider is None:
            try:
                settings = load_settings()
            except LLMError as exc:
                _log.warning("search: settings.toml is unreadable (%s); using the chat client's settings", exc)
                settings = client.settings
        pol = policy if policy is not None else SearchPolicy.from_settings(settings)
        prov, own = (provider, False) if provider is not None else (provider_from_settings(settings), True)
        try:
            return lookup(engine, args["question"], client=client, policy=pol, provider=prov)
        finally:
            if own and prov is not None:
                prov.close()

    return Tool("search", SEARCH_DESCRIPTION, SEARCH_PARAMETERS, run)


__all__ = [
    "BUDGET_EXCEEDED",
    "CODES",
    "EXTRACT_SYSTEM",
    "INSUFFICIENT",
    "MATERIAL_MAX_CHARS",
    "PROMPT_VERSION",
    "SNIPPET_MAX_CHARS",
    "TITLE_MAX_CHARS",
    "UNAVAILABLE",
    "URL_MAX_CHARS",
    "Candidate",
    "Extraction",
    "HttpSearchProvider",
    "SearchError",
    "SearchPolicy",
    "SearchProvider",
    "SearxngProvider",
    "WikipediaProvider",
    "extraction_messages",
    "fit_material",
    "host_matches",
    "html_text",
    "lookup",
    "model_safe",
    "parse_extraction",
    "provider_from_settings",
    "search_tool",
]
