"""The outside lookup: the ``search`` tool of the ``reckoner-with-search`` preset (spec: llm.md
"Presets from the reckoner seed"; upstream-facts.md 3.13, written in our words).

* One call takes one question and hands the model one sentence of answer (``{"ok": true,
  "answer", "origin"}``) or a failure receipt (``{"ok": false, "code", "error"}``). Queries,
  URLs, titles, snippets and page text never reach the model; the record keeps them.
* :func:`lookup` is the pipeline: open record -> budget -> provider -> extraction route ->
  retrieval (the question verbatim) -> policy filter (tier, allow-list) -> optional enrich
  (page text of the first allowed pages) -> one tool-free extraction call (prompt
  :data:`PROMPT_VERSION`) -> one ``search`` row written with :meth:`Engine.record_lookup`.
  Every path writes exactly one row, except "no open record", which writes nothing.
* :class:`SearchPolicy` is configuration (the ``[search]`` table of ``settings.toml``): a
  value out of range is replaced by its default and reported in ``problems``, never refused.
* Providers are small classes over httpx with one method, ``search(query, max_results)``
  returning candidates ``{url, title?, snippet?, publishedAt?}``: :class:`SearxngProvider`
  (a SearXNG instance's JSON API) and :class:`WikipediaProvider` (Wikipedia's REST search).
  :mod:`.testing` has fake servers for both.
"""

from __future__ import annotations

import html
import json
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, ClassVar, Protocol, TypedDict
from urllib.parse import quote, urlsplit

import httpx
from pydantic import BaseModel, ValidationError, field_validator

from .. import __version__
from ..reckoner.errors import OPEN_RECORD_NOT_FOUND, EngineError
from .agent import Tool
from .client import ChatClient
from .errors import LLMError
from .settings import Settings, api_key, load_settings

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
TIERS = ("strict", "open")
PROVIDERS = ("searxng", "wikipedia")

#: Reference hosts a strict lookup may read when the settings name none.
DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = (
    "wikipedia.org", "github.com", "githubusercontent.com", "stackoverflow.com", "stackexchange.com",
    "developer.mozilla.org", "docs.python.org", "nist.gov", "iso.org", "ietf.org", "rfc-editor.org", "arxiv.org",
)
#: An answer whose every source is on one of these is of origin ``github``.
GITHUB_HOSTS: tuple[str, ...] = ("github.com", "githubusercontent.com", "github.io")
DEFAULT_WIKIPEDIA_URL = "https://en.wikipedia.org"

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


class SearchError(Exception):
    """A provider could not answer: the message says which provider and what failed (an HTTP
    status, a reply that is not JSON, a JSON reply of the wrong shape, a transport error)."""


class SearchProvider(Protocol):
    """What :func:`lookup` needs from a provider. ``search`` returns at most ``max_results``
    candidates, best first, and raises :class:`SearchError` (or anything else) on failure.
    A provider may also have ``fetch_text(url, max_chars, allow)`` (used by enrich) and
    ``close()``."""

    name: str

    def search(self, query: str, max_results: int) -> list[Candidate]: ...


# ---------------------------------------------------------------- hosts


def normalize_host_pattern(value: str) -> str:
    """One allow-list entry as matching uses it: trimmed, lowercase, without scheme, path,
    port or a leading ``*.``/``.`` (``"https://*.NIST.gov:443/x"`` -> ``"nist.gov"``); ``""``
    when nothing is left."""
    v = value.strip().lower()
    v = re.sub(r"^[a-z][a-z0-9+.-]*://", "", v)
    v = re.split(r"[/?#]", v, maxsplit=1)[0]
    v = v.rsplit("@", 1)[-1]
    v = re.sub(r":\d*$", "", v)
    while v.startswith(("*.", ".")):
        v = v[2:] if v.startswith("*.") else v[1:]
    return v.rstrip(".")


def host_of(url: str) -> str | None:
    """The lowercase host of an ``http``/``https`` URL, without port or trailing dot; ``None``
    for any other scheme (``ftp://``, ``mailto:``...) or a URL that cannot be read."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    return host.rstrip(".") or None


def host_matches(host: str, pattern: str) -> bool:
    """``host`` is ``pattern`` or a subdomain of it (``en.wikipedia.org`` matches
    ``wikipedia.org``; ``evilwikipedia.org`` does not)."""
    return bool(pattern) and (host == pattern or host.endswith("." + pattern))


# ---------------------------------------------------------------- policy

_RANGES: dict[str, tuple[int, int]] = {
    "max_results": (1, 50),
    "max_searches_per_record": (1, 50),
    "answer_max_chars": (120, 10_000),
    "enrich_pages": (0, 10),
    "enrich_chars_per_page": (200, 50_000),
    "synthesis_max_tokens": (128, 8192),
}
_PROVIDER_KEYS = ("provider", "searxng_url", "wikipedia_url")
_warned: set[str] = set()


@dataclass(frozen=True)
class SearchPolicy:
    """Where a lookup may read, how much, and how it answers (upstream-facts.md 3.13).

    Defaults: ``tier="strict"``, ``allowed_hosts=DEFAULT_ALLOWED_HOSTS``, ``max_results=12``
    (1-50), ``max_searches_per_record=4`` (1-50), ``answer_max_chars=1200`` (120-10000),
    ``enrich_pages=0`` (0-10), ``enrich_chars_per_page=4000`` (200-50000),
    ``synthesis_model=None`` (the chat client's model), ``synthesis_max_tokens=800``
    (128-8192). A value of the wrong type or out of range is replaced by its default and
    described in ``problems`` (never raised); host patterns are normalised with
    :func:`normalize_host_pattern`, and an explicitly empty list is kept (a strict lookup
    then allows nothing).
    """

    tier: str = "strict"
    allowed_hosts: tuple[str, ...] = DEFAULT_ALLOWED_HOSTS
    max_results: int = 12
    max_searches_per_record: int = 4
    answer_max_chars: int = 1200
    enrich_pages: int = 0
    enrich_chars_per_page: int = 4000
    synthesis_model: str | None = None
    synthesis_max_tokens: int = 800
    problems: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        problems = list(self.problems)
        fix = object.__setattr__
        tier = self.tier.strip().lower() if isinstance(self.tier, str) else self.tier
        if tier not in TIERS:
            problems.append(f"tier is {self.tier!r}; it must be \"strict\" or \"open\"; using \"strict\"")
            tier = "strict"
        fix(self, "tier", tier)
        hosts = self.allowed_hosts
        if isinstance(hosts, (list, tuple)):
            kept = [normalize_host_pattern(h) for h in hosts if isinstance(h, str)]
            kept = list(dict.fromkeys(h for h in kept if h))
            if len(kept) != len(hosts):
                dropped = [h for h in hosts if not isinstance(h, str) or not normalize_host_pattern(h)]
                if dropped:
                    problems.append(f"allowed_hosts keeps only non-empty host names; dropped {dropped!r}")
            fix(self, "allowed_hosts", tuple(kept))
        else:
            problems.append(f"allowed_hosts is {hosts!r}; it must be a list of host names; using the default list")
            fix(self, "allowed_hosts", DEFAULT_ALLOWED_HOSTS)
        for key, (lo, hi) in _RANGES.items():
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                default = _DEFAULTS[key]
                problems.append(f"{key} is {value!r}; it must be a whole number from {lo} to {hi}; using {default}")
                fix(self, key, default)
        model = self.synthesis_model
        if model is not None and (not isinstance(model, str) or not model.strip()):
            problems.append(f"synthesis_model is {model!r}; it must be a non-empty model name; using the chat model")
            fix(self, "synthesis_model", None)
        elif isinstance(model, str):
            fix(self, "synthesis_model", model.strip())
        fix(self, "problems", tuple(problems))

    @classmethod
    def from_config(cls, table: Mapping[str, Any] | None) -> SearchPolicy:
        """The policy of a ``[search]`` table (a mapping with the keys of
        :class:`~dsh_notebook.llm.settings.SearchSettings`; ``None`` or missing keys mean the
        defaults). Unknown keys and provider problems are reported in ``problems`` too."""
        problems: list[str] = []
        if table is None:
            table = {}
        elif not isinstance(table, Mapping):
            return cls(problems=(f"the [search] table is {table!r}, not a table; using every default",))
        known = set(_RANGES) | {"tier", "allowed_hosts", "synthesis_model"}
        kwargs = {k: v for k, v in table.items() if k in known and v is not None}
        unknown = sorted(k for k in table if k not in known and k not in _PROVIDER_KEYS)
        if unknown:
            problems.append(f"[search] has unknown key(s) {', '.join(unknown)}; they are ignored")
        problems += _provider_choice(table)[2]
        policy = cls(**kwargs, problems=tuple(problems))
        for p in policy.problems:
            if p not in _warned:
                _warned.add(p)
                _log.warning("search settings: %s", p)
        return policy

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> SearchPolicy:
        """The policy of ``settings.search`` (``settings`` defaults to :func:`load_settings`)."""
        settings = settings if settings is not None else load_settings()
        return cls.from_config(_table(settings))

    def allows(self, url: str) -> bool:
        """Whether a source may be read: every source in the open tier; in the strict tier an
        http(s) URL whose host matches an allowed host."""
        if self.tier == "open":
            return True
        host = host_of(url)
        return host is not None and any(host_matches(host, p) for p in self.allowed_hosts)

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


_DEFAULTS = {"max_results": 12, "max_searches_per_record": 4, "answer_max_chars": 1200, "enrich_pages": 0,
             "enrich_chars_per_page": 4000, "synthesis_max_tokens": 800}


def _table(settings: Settings) -> dict:
    s = settings.search
    if s is None:
        return {}
    return {**{k: v for k, v in s.model_dump().items() if v is not None}, **(s.model_extra or {})}


def _provider_choice(table: Mapping[str, Any]) -> tuple[str | None, str | None, list[str]]:
    """``(provider kind, base URL, problems)`` from a ``[search]`` table."""
    kind, searxng, wiki = table.get("provider"), table.get("searxng_url"), table.get("wikipedia_url")
    if kind is None:
        kind = "searxng" if searxng is not None else "wikipedia" if wiki is not None else None
        if kind is None:
            return None, None, []
    if kind not in PROVIDERS:
        return None, None, [f"provider is {kind!r}; it must be one of {', '.join(PROVIDERS)}; search is off"]
    url = searxng if kind == "searxng" else (wiki if wiki is not None else DEFAULT_WIKIPEDIA_URL)
    key = f"{kind}_url"
    if not isinstance(url, str) or urlsplit(url.strip()).scheme not in ("http", "https") or not host_of(url):
        why = "is missing" if url is None else f"is {url!r}, not an http(s) URL"
        return None, None, [f"provider {kind} needs {key}, which {why}; search is off"]
    return kind, url.strip(), []


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
    GETs that raise :class:`SearchError`, and :meth:`fetch_text` for the enrich step.
    Usable as a context manager; :meth:`close` releases the pool."""

    name = "http"
    max_page_bytes = 2_000_000

    def __init__(self, base_url: str, *, timeout: float = 15.0, transport: httpx.BaseTransport | None = None):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._transport = transport
        self._http: httpx.Client | None = None

    def _client(self) -> httpx.Client:
        if self._http is None or self._http.is_closed:
            self._http = httpx.Client(timeout=self.timeout, transport=self._transport,
                                      headers={"User-Agent": f"dsh-notebook/{__version__} (reckoner search tool)"})
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

    def _get_json(self, path: str, params: dict) -> Any:
        try:
            resp = self._client().get(self.base_url + path, params=params, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise SearchError(f"{self.name}: the request failed ({type(exc).__name__}: {exc})") from None
        if resp.status_code != 200:
            raise SearchError(f"{self.name}: the search answered HTTP {resp.status_code}")
        try:
            return resp.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise SearchError(f"{self.name}: the search reply is not JSON") from None

    def fetch_text(self, url: str, max_chars: int, allow: Callable[[str], bool] | None = None) -> str | None:
        """The text of one page (HTML reduced to its visible text; ``text/*`` and JSON as
        they are), cut to ``max_chars``; ``None`` for a non-2xx answer, another content
        type, an empty body, a redirect to a URL ``allow`` refuses, or a non-http(s) URL.
        Transport errors raise ``httpx.HTTPError``."""
        if host_of(url) is None:
            return None
        with self._client().stream("GET", url, follow_redirects=True) as resp:
            if not 200 <= resp.status_code < 300 or (allow is not None and not allow(str(resp.url))):
                return None
            kind = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
            if not (kind.startswith("text/") or kind in ("application/json", "application/xhtml+xml", "")):
                return None
            body = bytearray()
            for piece in resp.iter_bytes():
                body += piece
                if len(body) >= self.max_page_bytes:
                    break
            text = bytes(body).decode(resp.encoding or "utf-8", errors="replace")
        if kind in ("text/html", "application/xhtml+xml", "") and "<" in text:
            text = html_text(text)
        text = text.strip()
        return text[:max_chars] if text else None


class SearxngProvider(HttpSearchProvider):
    """A SearXNG instance's JSON API: ``GET {base}/search?q=...&format=json`` (the instance
    must enable the ``json`` format). Each ``results[]`` entry's ``url``, ``title``,
    ``content`` and ``publishedDate`` become a candidate's ``url``, ``title``, ``snippet`` and
    ``publishedAt``; the first ``max_results`` with a URL are kept."""

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
            out.append(_candidate(r["url"], r.get("title"), r.get("content"), r.get("publishedDate")))
        return out


class WikipediaProvider(HttpSearchProvider):
    """Wikipedia's REST search: ``GET {base}/w/rest.php/v1/search/page?q=...&limit=N``. Each
    ``pages[]`` entry becomes a candidate with the article URL ``{base}/wiki/{key}``, its
    ``title``, and a snippet from ``description`` and ``excerpt`` (its HTML highlight tags
    removed)."""

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
            parts = [html_text(x) for x in (p.get("description"), p.get("excerpt")) if isinstance(x, str)]
            out.append(_candidate(url, p.get("title"), " — ".join(x for x in parts if x)))
        return out


_WIKI_SAFE = "/:@!$&'()*+,;=-._~"


def _candidate(url: str, title=None, snippet=None, published=None) -> Candidate:
    c: Candidate = {"url": url.strip()}
    if isinstance(title, str) and title.strip():
        c["title"] = " ".join(html.unescape(title).split())
    if isinstance(snippet, str) and snippet.strip():
        c["snippet"] = " ".join(snippet.split())
    if isinstance(published, str) and published.strip():
        c["publishedAt"] = published.strip()
    return c


def provider_from_settings(settings: Settings | None = None, **kw) -> HttpSearchProvider | None:
    """The provider the ``[search]`` table names, or ``None`` when none is configured (or the
    configuration is unusable: :meth:`SearchPolicy.from_settings` reports why). ``provider =
    "searxng"`` needs ``searxng_url``; ``"wikipedia"`` uses ``wikipedia_url`` or
    ``https://en.wikipedia.org``; without ``provider``, a ``searxng_url`` picks SearXNG.
    ``kw`` goes to the provider (``timeout``, ``transport``)."""
    settings = settings if settings is not None else load_settings()
    kind, url, _ = _provider_choice(_table(settings))
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


def extraction_messages(question: str, material: list[dict]) -> list[dict]:
    """The extraction request: :data:`EXTRACT_SYSTEM` and a user message ``Question: ...``,
    ``Material:``, then per item ``[n] title-or-url``, ``url: ...``, optional
    ``published: ...`` and its page text or snippet."""
    lines = [f"Question: {question}", "", "Material:"]
    for n, m in enumerate(material, 1):
        lines.append(f"[{n}] {m.get('title') or m['url']}")
        lines.append(f"url: {m['url']}")
        if m.get("publishedAt"):
            lines.append(f"published: {m['publishedAt']}")
        body = m.get("text") or m.get("snippet")
        if body:
            lines.append(body.strip())
        lines.append("")
    return [{"role": "system", "content": EXTRACT_SYSTEM}, {"role": "user", "content": "\n".join(lines).rstrip()}]


def parse_extraction(text: str, n_material: int) -> tuple[str, list[int], bool] | None:
    """``(answer, used, insufficient)`` from an extraction reply, or ``None`` when it is not
    readable. The JSON object is taken from the first ``{`` to the last ``}``; ``used``
    becomes 0-based, de-duplicated, in range (non-integers dropped), and empty when
    ``insufficient``."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        reply = Extraction.model_validate(json.loads(text[start:end + 1]))
    except (json.JSONDecodeError, ValidationError, TypeError):
        return None
    used: list[int] = []
    if not reply.insufficient:
        for u in reply.used:
            if isinstance(u, float) and u.is_integer():
                u = int(u)
            if isinstance(u, bool) or not isinstance(u, int) or not 1 <= u <= n_material or u - 1 in used:
                continue
            used.append(u - 1)
    return reply.answer, used, reply.insufficient


_URL = re.compile(r"\b(?:[a-z][a-z0-9+.-]*://|www\.)[^\s<>\"')\]]+", re.IGNORECASE)


def _model_safe(text: str) -> str:
    """One line of text for the model: any URL replaced by its host, whitespace collapsed."""
    def host(m: re.Match) -> str:
        u = m.group(0)
        return host_of(u if "://" in u else "http://" + u) or "a source"
    return " ".join(_URL.sub(host, text).split())


# ---------------------------------------------------------------- lookup


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
    outcome, candidates, used, policy, synthesis?, code?, error?, durationMs}``. Never
    raises for a provider or model failure; ``TypeError`` for a non-text question.
    """
    if not isinstance(question, str):
        raise TypeError(f"the question is {type(question).__name__}; it must be a text")
    started = time.monotonic()
    if engine.open_record is None:
        return EngineError(OPEN_RECORD_NOT_FOUND, "no record is open; start one with record_start: a lookup is "
                                                  "recorded, so it needs the record it belongs to.").receipt()

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
        written = engine.record_lookup(fact)
        if not written.get("ok"):
            _log.warning("the search row was not recorded: %s", written.get("error"))
            if written.get("code") == OPEN_RECORD_NOT_FOUND:
                return written
        if code is not None:
            return {"ok": False, "code": code, "error": error}
        return {"ok": True, "answer": synthesis["answer"], "origin": policy.origin(used)}

    # 2. the budget
    budget = policy.max_searches_per_record
    if engine.lookup_count() >= budget:
        return record("refused", [], [], code=BUDGET_EXCEEDED,
                      error=f"this record has used all {budget} of its lookups, so the question was not searched; "
                            "name the quantity that is still missing, or close the record and start a new one.")
    # 3. a provider
    if provider is None:
        return record("failed", [], [], code=UNAVAILABLE,
                      error="no search provider is configured, so nothing can be looked up; treat the quantity "
                            "as missing.",
                      detail="no search provider is configured: set [search] provider and searxng_url (or "
                             "wikipedia_url) in settings.toml")
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
        return _retrieve_and_extract(question, policy, provider, extractor, record)
    finally:
        if own:
            extractor.close()


def _retrieve_and_extract(question, policy: SearchPolicy, provider, extractor: ChatClient, record) -> dict:
    # 5. retrieval: the question verbatim
    try:
        found = provider.search(question, policy.max_results)
        candidates = [_candidate(c["url"], c.get("title"), c.get("snippet"), c.get("publishedAt"))
                      for c in found if isinstance(c, dict) and isinstance(c.get("url"), str) and c["url"].strip()]
        candidates = candidates[:policy.max_results]
    except Exception as exc:  # noqa: BLE001 - any provider fault is a failed lookup, never a crash
        return record("failed", [], [], code=UNAVAILABLE,
                      error="the search provider could not be reached or answered wrongly, so nothing was looked "
                            "up; treat the quantity as missing or try once more.",
                      detail=f"the search provider failed: {type(exc).__name__}: {exc}")
    # 6. the policy, then the optional enrich
    used = [c for c in candidates if policy.allows(c["url"])]
    texts: dict[int, str] = {}
    if policy.enrich_pages > 0 and used:
        texts = _enrich(provider, used[:policy.enrich_pages], policy)
    # 7. no material
    if not used:
        why = ("no source was found" if not candidates else
               f"none of the {len(candidates)} sources found is on the allowed list")
        return record("insufficient", candidates, [], code=INSUFFICIENT,
                      error="no source the policy allows answers this question; state which quantity is missing "
                            "instead of estimating it.",
                      detail=f"{why}; state which quantity is missing instead of estimating it")
    # 8. the extraction
    material = [{**c, **({"text": texts[i]} if i in texts else {})} for i, c in enumerate(used)]
    try:
        reply = extractor.complete(extraction_messages(question, material), stream=False,
                                   max_tokens=policy.synthesis_max_tokens)
    except LLMError as exc:
        return record("failed", candidates, used, code=UNAVAILABLE,
                      error="the search results could not be read (the extraction model failed), so there is no "
                            "answer; treat the quantity as missing or try once more.",
                      detail=f"the extraction call failed: {exc}")
    # 9. the reply
    parsed = parse_extraction(reply.text, len(used))
    if parsed is None:
        return record("failed", candidates, used, code=UNAVAILABLE,
                      error="the search results could not be read (the extraction reply was not usable), so "
                            "there is no answer; treat the quantity as missing.",
                      detail=f"the extraction reply is not readable: {reply.text[:500]!r}")
    answer, cited, insufficient = parsed
    answer = _model_safe(answer)
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


def _enrich(provider, sources: list[Candidate], policy: SearchPolicy) -> dict[int, str]:
    """Page text of ``sources`` by index; a page that fails or is empty is skipped."""
    fetch = getattr(provider, "fetch_text", None)
    own = None
    if fetch is None:
        own = HttpSearchProvider("")
        fetch = own.fetch_text
    texts: dict[int, str] = {}
    try:
        for i, c in enumerate(sources):
            try:
                text = fetch(c["url"], policy.enrich_chars_per_page, policy.allows)
            except Exception as exc:  # noqa: BLE001 - a page that will not load is not enriched
                _log.info("search enrich skipped a page: %s", type(exc).__name__)
                continue
            if text:
                texts[i] = text[:policy.enrich_chars_per_page]
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


__all__ = ["BUDGET_EXCEEDED", "CODES", "DEFAULT_ALLOWED_HOSTS", "EXTRACT_SYSTEM", "INSUFFICIENT", "PROMPT_VERSION",
           "UNAVAILABLE", "Candidate", "Extraction", "HttpSearchProvider", "SearchError", "SearchPolicy",
           "SearchProvider", "SearxngProvider", "WikipediaProvider", "extraction_messages", "host_matches",
           "host_of", "html_text", "lookup", "normalize_host_pattern", "parse_extraction", "provider_from_settings",
           "search_tool"]
