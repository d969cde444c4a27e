"""Search providers: small classes over httpx with one method, ``search(query, max_results)``,
returning candidates ``{url, title?, snippet?, publishedAt?}`` (spec: llm.md "Presets from the
reckoner seed"; upstream-facts.md 3.13).

* :class:`SearxngProvider` (a SearXNG instance's JSON API) and :class:`WikipediaProvider`
  (Wikipedia's REST search) share :class:`HttpSearchProvider`: one connection pool, a
  ``User-Agent``, JSON GETs under the network layer's retry policy that raise
  :class:`~.shapes.SearchError`, and :meth:`~HttpSearchProvider.fetch_text` for the enrich step.
* What a provider returns is untrusted: :func:`candidate` keeps a result only with a URL of at
  most :data:`~.shapes.URL_MAX_CHARS` characters and cuts its title, snippet and ``publishedAt``
  to their caps.
* The enrich step fetches pages through the network layer's checked fetcher
  (:func:`dsh_notebook.net.fetch`): public http(s) hosts only, every redirect hop checked again
  (its address, and the policy's allow-list), one deadline per page; HTML becomes its visible
  text (:func:`~.pagetext.html_text`). Only Python callers can lift the address rule, for pages
  served from ``127.0.0.1`` in tests and demos (``HttpSearchProvider(..., allow_private=True)``;
  the full texts' environment variable ``DSH_FULLTEXT_ALLOW_PRIVATE`` does not reach the search
  tool); nothing a model sends reaches it. :mod:`dsh_notebook.llm.testing` has fake servers for
  both providers.
"""

from __future__ import annotations

import codecs
import html
import json
import logging
from collections.abc import Callable
from typing import Any, Self
from urllib.parse import quote

import httpx

from ...net import FetchFailed, FetchRefused, RetryPolicy, fetch
from ...net import request as net_request
from ...settings import DEFAULT_WIKIPEDIA_URL, Settings, host_of, load_settings
from ...version import __version__
from .pagetext import html_text
from .safetext import cut_text, utf8_safe
from .shapes import PUBLISHED_MAX_CHARS, SNIPPET_MAX_CHARS, TITLE_MAX_CHARS, URL_MAX_CHARS, Candidate, SearchError

_log = logging.getLogger(__name__)


class HttpSearchProvider:
    """Shared httpx plumbing of the providers: one connection pool, a ``User-Agent``, JSON
    GETs that raise :class:`~.shapes.SearchError`, and :meth:`fetch_text` for the enrich step
    (through :func:`dsh_notebook.net.fetch`; ``allow_private=True`` lets it read pages on private
    addresses, for tests and demos only). Usable as a context manager; :meth:`close` releases
    the pool."""

    name = "http"
    max_page_bytes = 2_000_000
    user_agent = f"dsh-notebook/{__version__} (reckoner search tool)"

    def __init__(self, base_url: str, *, timeout: float = 15.0, transport: httpx.BaseTransport | None = None,
                 allow_private: bool = False) -> None:
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

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(self, query: str, max_results: int) -> list[Candidate]:  # pragma: no cover - abstract
        raise NotImplementedError

    #: The search request's retries, under the network layer's one policy (429, 5xx and connection
    #: errors; Retry-After read; short, since a person waits for the answer).
    retry_policy = RetryPolicy(attempts=2, backoff=0.5, max_wait=5.0, max_total=5.0)

    def _get_json(self, path: str, params: dict[str, Any]) -> Any:
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
                         allow_private=self.allow_private, allow_url=allow, media_ok=readable_media,
                         user_agent=self.user_agent)
        except FetchRefused as exc:
            _log.info("search enrich: %s", exc)
            return None
        except FetchFailed as exc:
            if exc.status is not None:
                return None
            raise
        kind = page.media_type or ""
        text = page.content.decode(codec_of(page.charset), errors="replace")
        if kind in ("text/html", "application/xhtml+xml", "") and "<" in text:
            text = html_text(text)
        text = text.strip()
        return text[:max_chars] if text else None


def readable_media(kind: str) -> bool:
    """Whether enrich reads a page of media type ``kind`` (``""``: none declared)."""
    return kind.startswith("text/") or kind in ("application/json", "application/xhtml+xml", "")


def codec_of(charset: str | None) -> str:
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
    :func:`candidate` says: title, snippet, a URL longer than :data:`~.shapes.URL_MAX_CHARS` drops the
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
            c = candidate(r["url"], r.get("title"), r.get("content"), r.get("publishedDate"))
            if c is not None:
                out.append(c)
        return out


class WikipediaProvider(HttpSearchProvider):
    """Wikipedia's REST search: ``GET {base}/w/rest.php/v1/search/page?q=...&limit=N``. Each
    ``pages[]`` entry becomes a candidate with the article URL ``{base}/wiki/{key}``, its
    ``title``, and a snippet from ``description`` and ``excerpt`` (its HTML highlight tags
    removed). Candidates are capped as :func:`candidate` says (title, snippet, URL)."""

    name = "wikipedia"

    def __init__(self, base_url: str = DEFAULT_WIKIPEDIA_URL, **kw: Any) -> None:
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
            c = candidate(url, p.get("title"), " — ".join(x for x in parts if x))
            if c is not None:
                out.append(c)
        return out


_WIKI_SAFE = "/:@!$&'()*+,;=-._~"


def candidate(url: object, title: object = None, snippet: object = None,
              published: object = None) -> Candidate | None:
    """One candidate, made safe and capped: ``None`` when ``url`` is not a non-empty text of
    at most :data:`~.shapes.URL_MAX_CHARS` characters; the title (entities decoded), the snippet and
    ``publishedAt`` have their whitespace collapsed and are cut to their caps."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    if not url or len(url) > URL_MAX_CHARS:
        return None
    c: Candidate = {"url": utf8_safe(url)}
    if isinstance(title, str) and title.strip():
        text = " ".join(html.unescape(utf8_safe(title[:8 * TITLE_MAX_CHARS])).split())
        if text:
            c["title"] = cut_text(text, TITLE_MAX_CHARS)
    if isinstance(snippet, str) and snippet.strip():
        text = " ".join(utf8_safe(snippet[:4 * SNIPPET_MAX_CHARS]).split())
        if text:
            c["snippet"] = cut_text(text, SNIPPET_MAX_CHARS)
    if isinstance(published, str) and published.strip():
        c["publishedAt"] = cut_text(" ".join(utf8_safe(published[:4 * PUBLISHED_MAX_CHARS]).split()), PUBLISHED_MAX_CHARS)
    return c



def provider_from_settings(settings: Settings | None = None, **kw: Any) -> HttpSearchProvider | None:
    """The provider the ``[search]`` table names, or ``None`` when none is configured (or the
    configuration is unusable: :meth:`~.policy.SearchPolicy.from_settings` reports why). ``provider =
    "searxng"`` needs ``searxng_url``; ``"wikipedia"`` uses ``wikipedia_url`` or
    ``https://en.wikipedia.org``; without ``provider``, a ``searxng_url`` picks SearXNG.
    ``kw`` goes to the provider (``timeout``, ``transport``)."""
    settings = settings if settings is not None else load_settings()
    kind, url = settings.search.provider_choice
    if url is None:  # no provider named (a named one always comes with its URL)
        return None
    if kind == "searxng":
        return SearxngProvider(url, **kw)
    if kind == "wikipedia":
        return WikipediaProvider(url, **kw)
    return None
