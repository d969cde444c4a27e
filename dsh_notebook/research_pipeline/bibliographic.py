"""The bibliographic verifier, code first (spec: research.md "Running the roles"; issue 21: verdicts
as curators give them, PubMed books, DataCite).

``check_source(identifier, claimed=None, *, cache_dir=None, settings=None) -> dict`` normalises
the identifier, resolves it with httpx, compares the claimed metadata and reads the notices:

* **Identifiers** (:func:`normalize`): the text is NFKC-normalised first (so a full-width
  ``１`` is the digit ``1`` and ``ｄｏｉ:`` the prefix ``doi:``), then read with ASCII-only digit
  rules (a digit of another script, or an invisible control or format character such as a
  zero-width space, is refused); an identifier over ``MAX_IDENTIFIER`` (2,000) characters is
  refused before any request. DOI (bare, ``doi:`` prefix, ``doi.org`` URLs, percent-encoded
  slashes; kept lower case, DOIs are case-insensitive), arXiv ids new style (``1605.08386``,
  ``2104.12255v1``) and old style (``astro-ph/0601001v2``), with or without ``arXiv:`` or an
  ``arxiv.org/abs|pdf`` URL, PMID (``pmid:123``, ``pubmed.ncbi.nlm.nih.gov/123``, or 1-9 bare
  digits), ISBN-10/13 (checksum checked, kept as ISBN-13) and other http(s) URLs. arXiv's own
  DataCite DOIs, ``10.48550/arXiv.<id>`` in any case and any of the DOI forms (an id is
  required after the prefix), are normalised to the arXiv id (kind ``arxiv``, with ``doi`` and ``datacite`` kept) and resolved on arXiv, since
  Crossref does not hold DataCite DOIs and would answer a false "not found"; the result's checks
  say so (``datacite_doi``). Anything else raises :class:`IdentifierError` (a ``ValueError``)
  with one line saying why.
* **Resolvers**: Crossref ``GET {crossref_url}/works/{doi}`` (the polite ``mailto`` from the
  settings goes in the query and the User-Agent), the arXiv API ``GET {arxiv_url}/api/query?id_list=``
  and PubMed E-utilities ``efetch.fcgi`` (``esearch.fcgi`` turns a DOI Crossref does not know into
  a PMID), and DataCite's REST API ``GET {datacite_url}/dois/{doi}`` (datasets and software:
  Zenodo, figshare, Dryad). A DOI Crossref answers 404 for is tried on DataCite, then on PubMed,
  before it is called not found. Each resolver sits behind one interface (:data:`RESOLVERS`:
  resolve, then read the record) and fetches through :class:`_Fetcher`. PubMed
  ``PubmedBookArticle`` records (Bookshelf books and chapters, e.g. GeneReviews) resolve with
  title, authors, year and book.
  Timeouts. A 429, 500, 502, 503 or 504, a connection failure and a read timeout are retried
  ``retries`` times under the network layer's one retry policy (:class:`dsh_notebook.net.RetryPolicy`:
  ``Retry-After`` as seconds or a date, else jittered exponential backoff from 0.5 s, each wait at
  most ``max_retry_wait``); a network failure is logged once per lookup, with the number of attempts.
* **Verdicts**: ``verified`` (resolves, no notices, claimed metadata agrees or none was
  claimed), ``mismatch`` (title, authors or year disagree), ``inconclusive`` (not found, a
  service error, a network failure, an ISBN or plain URL: no resolver), ``retracted``,
  ``withdrawn``, ``expression_of_concern``, ``corrected``; the most severe finding wins, in that
  order (retracted > withdrawn > expression_of_concern > corrected > mismatch > verified).
* **Titles** (:func:`title_notice`, case P21): a title that marks a notice or a retracted work,
  in anchored forms and any case (``Retracted:`` at the start, ``[Retracted]``, ``(Retracted
  article)``, ``Retraction notice``, ``Withdrawn:``, ``Expression of concern:``), gives the
  retraction, withdrawal or concern verdict with a ``title_notice`` check citing the title, on
  every resolver; a paper merely about retractions is not caught.
* **arXiv withdrawals**: a comment or abstract that is a withdrawal note ("This paper has been
  withdrawn ...") gives ``withdrawn``; a cited version is compared with the latest (a second
  lookup without the version), and an older one is reported with both versions' dates. ``needs_judgment`` is set
  when the claimed metadata's match is left undecided (a title similarity from ``TITLE_JUDGE`` to
  below ``TITLE_OK``, or a record without the title or authors to compare) and no other check
  failed outright; the runner then asks a model whether it is the same work (``roles``), whose
  answer never overrides a notice.
* **Notices**: Crossref ``updated-by`` (notices that update this work, publisher and Retraction
  Watch entries, de-duplicated by notice DOI, the Retraction Watch ``record-id`` named), the
  ``relation`` object (relation types naming a retraction, withdrawal, concern or correction) and ``update-to`` (this record *is* a notice for
  other works; it is flagged with the notice's verdict and a ``notice_of`` check, since a citation
  of a notice nearly always meant the work). Entries pointing at the work's own DOI, and
  ``new_version`` entries, are not notices. PubMed: ``PublicationType`` "Retracted Publication",
  "Retraction of Publication", "Expression of Concern", "Published Erratum" (case-insensitive)
  and ``CommentsCorrections`` ``RetractionIn``/``RetractionOf``, ``ExpressionOfConcernIn``/``For``,
  ``ErratumIn``/``For``.
* **Cache**: with ``cache_dir``, every definitive answer (HTTP 200 or 404) is written to
  ``<cache_dir>/<service>-<sha256 of the URL>.json`` with the UTC time it was fetched
  (``{"url", "fetched", "status", "content_type", "body"}``) and reused while it is younger than
  ``cache_max_age`` seconds (default 86400: a day). Errors and network failures are never cached.
* **Settings**: defaults, then the ``[research.bibliographic]`` table of ``settings.toml`` in
  ``DSH_NOTEBOOK_HOME`` (keys ``crossref_url``, ``arxiv_url``, ``pubmed_url``, ``datacite_url``, ``mailto``,
  ``timeout``, ``retries``, ``max_retry_wait``, ``cache_max_age``), then the environment
  (``DSH_CROSSREF_URL``, ``DSH_ARXIV_URL``, ``DSH_PUBMED_URL``, ``DSH_DATACITE_URL``), then the
  ``settings`` argument.
  The file and the environment are read and checked by :mod:`dsh_notebook.settings`
  (:class:`~dsh_notebook.settings.BibliographicSettings`): a bad value is logged and its default
  used.

It imports httpx and :mod:`dsh_notebook.net`; the ledger core (:mod:`dsh_notebook.research`) never
imports it.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import os
import re
import time
import unicodedata
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import httpx

from ..errors import SettingsError
from ..formats import utc_now
from ..net import CONNECTION_ERRORS, Attempt, FetchFailed, RetryPolicy, request
from ..research.ledger import ResearchError
from ..settings import BibliographicSettings, default_settings, load_settings

log = logging.getLogger(__name__)

VERDICTS = ("verified", "mismatch", "inconclusive", "retracted", "withdrawn", "corrected", "expression_of_concern")
KINDS = ("doi", "arxiv", "pmid", "isbn", "url")
#: most severe first: the first one found wins
SEVERITY = ("retracted", "withdrawn", "expression_of_concern", "corrected", "mismatch", "verified")

#: the ``[research.bibliographic]`` defaults (:class:`~dsh_notebook.settings.BibliographicSettings`)
DEFAULTS: dict[str, Any] = BibliographicSettings().model_dump()
_URL_KEYS = ("crossref_url", "arxiv_url", "pubmed_url", "datacite_url")
_warned: set[str] = set()
TITLE_OK = 90  # rapidfuzz score (0-100) at or above which titles agree
TITLE_JUDGE = 70  # between this and TITLE_OK the title needs judgment (a model or a person)


class IdentifierError(ResearchError, ValueError):
    """A malformed identifier: the message is one line saying why."""

    code = "IDENTIFIER_INVALID"


#: the longest identifier accepted (a DOI has no length limit, but no real one comes near this)
MAX_IDENTIFIER = 2000


# --------------------------------------------------------------------------- identifiers

_DOI = re.compile(r"^10\.\d{4,9}/\S+$", re.ASCII)
_ARXIV_NEW = re.compile(r"^(\d{4}\.\d{4,5})(v\d+)?$", re.ASCII)
_ARXIV_OLD = re.compile(r"^([a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})(v\d+)?$", re.IGNORECASE | re.ASCII)
_PREFIX = re.compile(r"^(doi|arxiv|pmid|isbn)(?:\s*:\s*|\s+)(.*)$", re.IGNORECASE)
#: arXiv's DataCite DOIs, ``10.48550/arXiv.<arXiv id>`` (any case; the id may be missing: refused)
_DATACITE_ARXIV = re.compile(r"^10\.48550/arxiv(?:\.(.*))?$", re.IGNORECASE)


def _doi(text: str, original: str) -> dict:
    doi = unquote(text.strip())
    if not _DOI.match(doi):
        prefix, slash, suffix = doi.partition("/")
        if not prefix.startswith("10."):
            why = "a DOI starts with '10.'"
        elif not re.fullmatch(r"10\.\d{4,9}", prefix, re.ASCII):
            why = "the registrant code after '10.' must be 4 to 9 digits (0-9)"
        elif not slash or not suffix:
            why = "the suffix after '/' is missing"
        else:
            why = "the suffix after '/' contains a space"
        raise IdentifierError(f"{original!r} is not a DOI (10.<registrant>/<suffix>): {why}")
    m = _DATACITE_ARXIV.match(doi)
    if m:  # arXiv's own DOI, registered with DataCite: Crossref does not hold it, arXiv does
        if not (m.group(1) or "").strip():
            raise IdentifierError(f"{original!r} is an arXiv DOI prefix (10.48550/arXiv.<id>) with no arXiv id "
                                  "after it (like 10.48550/arXiv.1605.08386)")
        try:
            out = _arxiv(m.group(1), original)
        except IdentifierError:
            raise IdentifierError(f"{original!r} is an arXiv DOI (10.48550/arXiv.<id>), but {m.group(1)!r} is not "
                                  "an arXiv id (like 1605.08386, 2104.12255v1 or astro-ph/0601001)") from None
        return {**out, "doi": f"10.48550/arxiv.{out['identifier']}".lower(), "datacite": True}
    return {"kind": "doi", "identifier": doi.lower()}


def _arxiv(text: str, original: str) -> dict:
    t = text.strip()
    if t.lower().endswith(".pdf"):
        t = t[:-4]
    m = _ARXIV_NEW.match(t) or _ARXIV_OLD.match(t)
    if not m:
        raise IdentifierError(f"{original!r} is not an arXiv id (like 1605.08386, 2104.12255v1 or astro-ph/0601001)")
    base = m.group(1)
    if "/" in base:
        archive, num = base.split("/")
        name, _, sub = archive.partition(".")
        base = f"{name.lower()}{'.' + sub.upper() if sub else ''}/{num}"
    version = m.group(2)
    return {"kind": "arxiv", "identifier": base + (version or ""), "base": base,
            "version": int(version[1:]) if version else None}


def _pmid(text: str, original: str) -> dict:
    t = text.strip()
    if not re.fullmatch(r"\d{1,9}", t, re.ASCII) or int(t) == 0:
        raise IdentifierError(f"{original!r} is not a PMID (a positive whole number)")
    return {"kind": "pmid", "identifier": str(int(t))}


def _isbn(text: str, original: str) -> dict:
    t = re.sub(r"[\s\-]", "", text).upper()
    if re.fullmatch(r"\d{9}[\dX]", t, re.ASCII):
        total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(t))
        if total % 11:
            raise IdentifierError(f"{original!r}: the ISBN-10 check digit is wrong")
        core = "978" + t[:9]
    elif re.fullmatch(r"97[89]\d{10}", t, re.ASCII):
        core = t[:12]
        if _isbn13_check(core) != t[12]:
            raise IdentifierError(f"{original!r}: the ISBN-13 check digit is wrong")
    else:
        raise IdentifierError(f"{original!r} is not an ISBN (10 digits, the last may be X, or 13 digits from 978/979)")
    return {"kind": "isbn", "identifier": core + _isbn13_check(core)}


def _isbn13_check(core12: str) -> str:
    return str((10 - sum((1 if i % 2 == 0 else 3) * int(c) for i, c in enumerate(core12)) % 10) % 10)


def _url(text: str, original: str) -> dict:
    parts = urlsplit(text)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host or " " in text:
        raise IdentifierError(f"{original!r} is not an http(s) URL")
    path = unquote(parts.path)
    if host in ("doi.org", "dx.doi.org", "www.doi.org"):
        return _doi(path.lstrip("/"), original)
    if host in ("arxiv.org", "www.arxiv.org", "export.arxiv.org"):
        m = re.match(r"^/(?:abs|pdf)/(.+?)/?$", path)
        if m:
            return _arxiv(m.group(1), original)
    if host in ("pubmed.ncbi.nlm.nih.gov", "www.ncbi.nlm.nih.gov"):
        m = re.match(r"^/(?:pubmed/)?(\d+)/?$", path)
        if m:
            return _pmid(m.group(1), original)
    return {"kind": "url", "identifier": text}


def normalize(identifier: str, kind: str | None = None) -> dict:
    """``{"kind", "identifier", ...}`` (canonical form; arXiv adds ``base`` and ``version``).
    ``kind`` forces one of :data:`KINDS`. Raises :class:`IdentifierError` for malformed input."""
    if not isinstance(identifier, str) or not identifier.strip():
        raise IdentifierError("the identifier is empty")
    if len(identifier) > MAX_IDENTIFIER:
        raise IdentifierError(f"the identifier is {len(identifier):,} characters long (at most {MAX_IDENTIFIER:,}); "
                              f"it starts {identifier[:40]!r}")
    original = identifier
    text = unicodedata.normalize("NFKC", identifier).strip()
    if len(text) > MAX_IDENTIFIER:
        raise IdentifierError(f"the identifier is {len(text):,} characters long once normalised (at most "
                              f"{MAX_IDENTIFIER:,}); it starts {text[:40]!r}")
    hidden = next((c for c in text if unicodedata.category(c)[0] == "C"), None)
    if hidden is not None:
        raise IdentifierError(f"{original!r} contains an invisible control or format character "
                              f"(U+{ord(hidden):04X}); type the identifier again without it")
    if kind is not None and kind not in KINDS:
        raise IdentifierError(f"unknown identifier kind {kind!r} (one of {', '.join(KINDS)})")
    m = _PREFIX.match(text)
    if m:
        named, rest = m.group(1).lower(), m.group(2)
        if kind and kind != named:
            raise IdentifierError(f"{original!r} is a {named} identifier, not {kind}")
        kind, text = named, rest
    parsers = {"doi": _doi, "arxiv": _arxiv, "pmid": _pmid, "isbn": _isbn, "url": _url}
    if kind == "doi" and re.match(r"^https?://", text, re.IGNORECASE):
        out = _url(text, original)
        if out["kind"] != "doi" and not out.get("datacite"):
            raise IdentifierError(f"{original!r} is not a DOI or a doi.org URL")
        return out
    if kind == "arxiv" and re.match(r"^https?://", text, re.IGNORECASE):
        out = _url(text, original)
        if out["kind"] != "arxiv":
            raise IdentifierError(f"{original!r} is not an arXiv id or an arxiv.org URL")
        return out
    if kind:
        return parsers[kind](text, original)
    if re.match(r"^https?://", text, re.IGNORECASE):
        return _url(text, original)
    if text.startswith("10."):
        return _doi(text, original)
    if _ARXIV_NEW.match(text) or _ARXIV_OLD.match(text):
        return _arxiv(text, original)
    if re.fullmatch(r"\d{1,9}", text, re.ASCII):
        return _pmid(text, original)
    if re.fullmatch(r"[\d\-\s]{9,}[\dXx]", text, re.ASCII):
        return _isbn(text, original)
    raise IdentifierError(f"{original!r} is not a DOI, arXiv id, PMID, ISBN or URL")


# --------------------------------------------------------------------------- settings


def bibliographic_settings(settings: dict | None = None) -> dict:
    """Defaults < ``[research.bibliographic]`` of settings.toml < environment (both from
    :func:`~dsh_notebook.settings.load_settings`, which checks the values: a bad one is logged
    and its default used) < ``settings``. A settings file that cannot be read is logged and
    ignored (the defaults and the environment still apply)."""
    try:
        table = load_settings().research.bibliographic
    except (SettingsError, OSError) as exc:
        log.warning("bibliographic: ignoring settings.toml (%s)", getattr(exc, "message", exc))
        table = default_settings().research.bibliographic
    for problem in table.problems:
        if problem not in _warned:
            _warned.add(problem)
            log.warning("bibliographic: %s", problem)
    out = table.model_dump()
    if settings:
        out.update({k: v for k, v in dict(settings).items() if k in DEFAULTS})
    for key in _URL_KEYS:
        out[key] = str(out[key]).rstrip("/")
    return out


# --------------------------------------------------------------------------- fetching


class _Fetcher:
    """GET under the one retry policy (429, 5xx, connection errors and read timeouts; ``retries``,
    ``max_retry_wait``), timeouts, and the dated response cache."""

    def __init__(self, conf: dict, cache_dir: Path | None):
        self.conf = conf
        self.cache_dir = Path(cache_dir) if cache_dir else None
        from ..version import __version__

        agent = f"dsh-notebook/{__version__} (bibliographic verifier"
        agent += f"; mailto:{conf['mailto']})" if conf.get("mailto") else ")"
        self.client = httpx.Client(timeout=httpx.Timeout(float(conf["timeout"])), follow_redirects=True,
                                   headers={"User-Agent": agent})
        retries, most = max(0, int(conf["retries"])), max(0.0, float(conf["max_retry_wait"]))
        self.policy = RetryPolicy(attempts=retries + 1, backoff=0.5, max_wait=most, max_total=most * max(1, retries),
                                  exceptions=(*CONNECTION_ERRORS, httpx.ReadTimeout))
        self.calls: list[dict] = []

    def close(self) -> None:
        self.client.close()

    def _cache_file(self, service: str, url: str) -> Path | None:
        if not self.cache_dir:
            return None
        return self.cache_dir / f"{service}-{hashlib.sha256(url.encode()).hexdigest()[:32]}.json"

    def get(self, service: str, url: str, params: dict | None = None, secret: dict | None = None) -> dict:
        """``{"status", "content_type", "body", "url", "fetched", "cached"}`` or, when the
        network failed, ``{"status": None, "error": "..."}``. ``secret`` params (mailto) are
        sent but kept out of the cache key and the reported URL."""
        shown = str(httpx.URL(url, params=params or {}))
        cache = self._cache_file(service, shown)
        if cache and cache.is_file():
            try:
                rec = json.loads(cache.read_text(encoding="utf-8"))
                age = time.time() - datetime.fromisoformat(rec["fetched"]).timestamp()
                if 0 <= age < float(self.conf["cache_max_age"]):
                    log.info("%s %s: cached %s (fetched %s)", service, shown, rec["status"], rec["fetched"])
                    out = {**rec, "cached": True}
                    self.calls.append({k: out.get(k) for k in ("url", "status", "fetched", "cached")})
                    return out
            except (OSError, ValueError, KeyError, TypeError):
                pass
        attempts = self.policy.attempts

        def on_retry(a: Attempt) -> None:
            if a.response is not None:
                retried = {"url": shown, "status": a.response.status_code, "fetched": _now(), "cached": False}
                log.info("%s %s: HTTP %s", service, shown, a.response.status_code)
                log.info("%s: HTTP %s, retrying in %.1f s", service, a.response.status_code, a.wait)
                self.calls.append(retried)
            else:
                log.info("%s %s: %s (attempt %d of %d, retrying)", service, shown, _error_text(a.error), a.number,
                         attempts)

        try:
            resp = request(self.client, "GET", url, params={**(params or {}), **(secret or {})},
                           policy=self.policy, on_retry=on_retry)
        except FetchFailed as exc:
            out = {"url": shown, "status": None, "error": _error_text(exc.__cause__ or exc), "cached": False}
            tries = f"{exc.attempts} attempt{'s' if exc.attempts != 1 else ''}"
            log.warning("%s %s: %s (after %s)", service, shown, out["error"], tries)
        else:
            out = {"url": shown, "status": resp.status_code, "content_type": resp.headers.get("content-type", ""),
                   "body": resp.text, "fetched": _now(), "cached": False}
            log.info("%s %s: HTTP %s", service, shown, resp.status_code)
        if cache and out.get("status") in (200, 404):
            try:
                cache.parent.mkdir(parents=True, exist_ok=True)
                tmp = cache.with_suffix(".tmp")
                tmp.write_text(json.dumps({k: out[k] for k in ("url", "fetched", "status", "content_type", "body")},
                                          ensure_ascii=False), encoding="utf-8")
                os.replace(tmp, cache)
            except OSError as exc:
                log.warning("bibliographic: cannot write the cache %s (%s)", cache, exc)
        self.calls.append({k: out.get(k) for k in ("url", "status", "fetched", "cached", "error") if k in out})
        return out


def _now() -> str:
    return utc_now()


def _error_text(exc: BaseException | None) -> str:
    return f"{type(exc).__name__}: {exc}".strip(": ") if exc is not None else "unknown error"


def _failure(resp: dict, service: str) -> str:
    if resp.get("status") is None:
        return f"{service} could not be reached ({resp.get('error')})"
    body = (resp.get("body") or "").strip()
    detail = body[:200]
    if "json" in (resp.get("content_type") or ""):
        try:
            msg = json.loads(body).get("message")
            if isinstance(msg, list):
                detail = "; ".join(str(m.get("message", m)) if isinstance(m, dict) else str(m) for m in msg)
        except (ValueError, AttributeError):
            pass
    return f"{service} answered HTTP {resp['status']}" + (f": {detail}" if detail else "")


# --------------------------------------------------------------------------- text helpers


def _clean(text: Any) -> str:
    """Markup, PubMed's ``[corrected]`` marker, accents, case and punctuation removed."""
    if text is None:
        return ""
    t = html.unescape(re.sub(r"<[^>]+>", " ", str(text)))
    t = re.sub(r"\[corrected\]", " ", t, flags=re.IGNORECASE)
    t = unicodedata.normalize("NFKD", t)
    t = "".join(c for c in t if not unicodedata.combining(c)).casefold()
    t = re.sub(r"[^\w\s]", " ", t)
    return " ".join(t.split())


def _family(name: str) -> str:
    name = str(name).strip()
    if "," in name:
        return _clean(name.split(",")[0])
    parts = _clean(name).split()
    return parts[-1] if parts else ""


def split_authors(authors: Any) -> list[str]:
    """Claimed or recorded authors as a list of names: a string is split on ``;``, ``and`` or
    ``&`` (one name when it has none of them), a list of strings or of ``{"given", "family"}``
    dicts joined per author; empty parts and "et al."/"others" dropped; ``None`` is ``[]``."""
    if authors is None:
        return []
    if isinstance(authors, str):
        parts = re.split(r";|\band\b|&", authors) if (";" in authors or " and " in authors or "&" in authors) \
            else [authors]
    else:
        parts = [a if isinstance(a, str) else " ".join(str(v) for v in (a.get("given"), a.get("family")) if v)
                 for a in authors]
    out = [p.strip() for p in parts if p and p.strip()]
    return [p for p in out if _clean(p) not in ("et al", "et al.", "others")]


def _title_score(claimed: str, found: str) -> float:
    from rapidfuzz import fuzz

    a, b = _clean(claimed), _clean(found)
    if not a or not b:
        return 0.0
    score = fuzz.ratio(a, b)
    shorter = min(a, b, key=len)
    if len(shorter.split()) >= 4:  # a title given without its subtitle
        score = max(score, fuzz.token_set_ratio(a, b) - 5)
    return round(float(score), 1)


# --------------------------------------------------------------------------- comparison


def _compare(claimed: dict | None, meta: dict, checks: list[dict]) -> tuple[bool, bool]:
    """Append title/authors/year checks; ``(mismatch, needs_judgment)``.

    ``needs_judgment`` is true when a check is left undecided (a title whose similarity falls
    between ``TITLE_JUDGE`` and ``TITLE_OK``, a record without a title or authors to compare) and
    no other check failed outright: a definite failure already decides ``mismatch``, and no
    judgment could turn it into ``verified``."""
    if not claimed:
        return False, False
    mismatch = judge = definite = False
    title = claimed.get("title")
    if title is not None and str(title).strip() != "":
        found = meta.get("title")
        if found is None:
            checks.append({"name": "title", "ok": None, "detail": "the resolved record has no title"})
            judge = True
        else:
            score = _title_score(str(title), found)
            ok = score >= TITLE_OK
            grey = TITLE_JUDGE <= score < TITLE_OK
            checks.append({"name": "title", "ok": ok,
                           "detail": f"similarity {score:g}/100 (at least {TITLE_OK} agrees"
                                     + (f"; from {TITLE_JUDGE} it needs judgment" if grey else "") + f"): {found!r}"})
            mismatch |= not ok
            judge |= grey
            definite |= score < TITLE_JUDGE
    authors = split_authors(claimed.get("authors"))
    if authors:
        have = [_family(a) for a in meta.get("authors") or []]
        if not have:
            checks.append({"name": "authors", "ok": None, "detail": "the resolved record lists no authors"})
            judge = True
        else:
            from rapidfuzz import fuzz

            missing = [a for a in authors if not any(fuzz.ratio(_family(a), h) >= 85 for h in have if h)]
            ok = not missing
            checks.append({"name": "authors", "ok": ok,
                           "detail": (f"all {len(authors)} claimed author(s) found" if ok else
                                      f"not among the {len(have)} resolved author(s): {', '.join(missing)}")})
            mismatch |= not ok
            definite |= not ok
    year = claimed.get("year")
    if year not in (None, ""):
        years = sorted({y for y in meta.get("years") or [] if y})
        try:
            y = int(str(year).strip())
        except ValueError:
            checks.append({"name": "year", "ok": False, "detail": f"claimed year {year!r} is not a year"})
            return True, False
        ok = y in years
        checks.append({"name": "year", "ok": ok if years else None,
                       "detail": (f"{y} matches" if ok else f"claimed {y}, record has {', '.join(map(str, years))}")
                       if years else "the resolved record has no year"})
        mismatch |= bool(years) and not ok
        definite |= bool(years) and not ok
    return mismatch, judge and not definite


# --------------------------------------------------------------------------- titles that mark a notice

#: what follows a marker word: a colon or semicolon (also full-width), a spaced dash, or the end;
#: never a bare hyphen or a full stop ("WITHDRAWN--a resource for withdrawn drugs" is a paper)
_SEP = r"\s*(?:[:;\uff1a\uff1b]|\s[\-\u2013\u2014]+\s|$)"
#: (pattern, verdict, what the title marks, this record is the notice itself); anchored forms only,
#: so a paper *about* retractions ("Retractions in science: ...") is not caught
TITLE_MARKERS: tuple[tuple[re.Pattern, str, str, bool], ...] = tuple(
    (re.compile(p, re.IGNORECASE), verdict, what, is_notice) for p, verdict, what, is_notice in (
        (r"^\s*(?:notice\s+of\s+retraction|statement\s+of\s+retraction|retraction\s+(?:notice|note|statement))\b",
         "retracted", "a retraction notice", True),
        (r"^\s*retraction(?:\s+(?:of|to|for))?\s*(?:[:.\-\u2013\u2014\"\u201c\u2018']|$)", "retracted",
         "a retraction notice", True),
        (r"^\s*retracted(?:\s+(?:article|paper|publication))?" + _SEP, "retracted", "a retracted work", False),
        (r"[\[(]\s*retracted(?:\s+(?:article|paper|publication))?\s*[\])]", "retracted", "a retracted work", False),
        (r"^\s*(?:notice\s+of\s+withdrawal|statement\s+of\s+withdrawal|withdrawal\s+(?:notice|note))\b",
         "withdrawn", "a withdrawal notice", True),
        (r"^\s*withdrawal" + _SEP, "withdrawn", "a withdrawal notice", True),
        (r"^\s*withdrawn(?:\s+(?:article|paper|publication))?" + _SEP, "withdrawn", "a withdrawn work", False),
        (r"[\[(]\s*withdrawn(?:\s+(?:article|paper|publication))?\s*[\])]", "withdrawn", "a withdrawn work", False),
        (r"^\s*(?:editorial\s+)?expression\s+of\s+concern(?:\s*[:.\-\u2013\u2014]|\s*$|\s+(?:for|to|on|regarding|about)\b)",
         "expression_of_concern", "an expression of concern", True),
    ))


def title_notice(title: Any) -> dict | None:
    """``{"verdict", "marks", "is_notice", "title"}`` when the title itself marks a retraction,
    a withdrawal or an expression of concern (publishers that retract by renaming, case P21),
    else ``None``. Markup and entities are removed first; any case."""
    if title is None:
        return None
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", str(title))).split())
    for pattern, verdict, what, is_notice in TITLE_MARKERS:
        if pattern.search(text):
            return {"verdict": verdict, "marks": what, "is_notice": is_notice, "title": text}
    return None


def _title_check(meta: dict, checks: list[dict], found: list[str]) -> None:
    """Add the title-marker check (and its verdict) to a resolved record's checks."""
    hit = title_notice(meta.get("title"))
    if hit is None:
        return
    found.append(hit["verdict"])
    meta["title_marks"] = hit["marks"]
    detail = f"the title marks {hit['marks']}: {hit['title']!r}"
    if hit["is_notice"]:
        detail += "; this record is the notice, not the work"
    checks.append({"name": "title_notice", "ok": False, "detail": detail})


# --------------------------------------------------------------------------- Crossref

_CROSSREF_TYPES = {
    "retraction": "retracted", "withdrawal": "retracted", "removal": "retracted", "partial_retraction": "retracted",
    "expression_of_concern": "expression_of_concern",
    "correction": "corrected", "erratum": "corrected", "corrigendum": "corrected", "addendum": "corrected",
    "clarification": "corrected",
}


def _date_of(entry: dict) -> str | None:
    upd = entry.get("updated") or {}
    if upd.get("date-time"):
        return str(upd["date-time"])[:10]
    parts = (upd.get("date-parts") or [[None]])[0]
    return "-".join(f"{p:02d}" if i else str(p) for i, p in enumerate(parts) if p) or None


def _bare_doi(value: Any) -> str:
    """A DOI as compared: lower case, without a resolver prefix (``https://doi.org/``, ``doi:``)."""
    text = str(value or "").strip().lower()
    return re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)", "", text)


def _relation_entries(message: dict) -> tuple[list[dict], list[dict]]:
    """Crossref's ``relation`` object (``{"<relation type>": [{"id-type", "id", "asserted-by"}]}``)
    read for notices: a relation type naming a retraction, withdrawal, concern, correction or
    erratum. ``is-...-by``/``has-...`` types say this work is updated (``updated-by``); ``...-of``
    and the verb forms (``retracts``) say this record is the notice (``update-to``)."""
    rel = message.get("relation")
    by: list[dict] = []
    to: list[dict] = []
    if not isinstance(rel, dict):
        return by, to
    kinds = (("retract", "retraction"), ("withdr", "withdrawal"), ("concern", "expression_of_concern"),
             ("correct", "correction"), ("errat", "erratum"), ("corrig", "corrigendum"))
    own = _bare_doi(message.get("DOI"))
    for name, items in rel.items():
        key = str(name).lower().replace("_", "-")
        typ = next((t for stem, t in kinds if stem in key), None)
        if typ is None or not isinstance(items, list):
            continue
        for it in items:
            if not isinstance(it, dict) or str(it.get("id-type") or "doi").lower() != "doi" or not it.get("id"):
                continue
            if own and _bare_doi(it["id"]) == own:
                continue  # a relation of the work to itself names no notice
            entry = {"DOI": str(it["id"]), "type": typ, "source": f"relation {name}", "label": name}
            (to if key.endswith("-of") or not key.startswith(("is-", "has-")) else by).append(entry)
    return by, to


def crossref_notices(message: dict) -> dict:
    """``{"updated_by": [...], "update_to": [...], "ignored": [...]}`` from a Crossref work message:
    notice entries as ``{"doi", "type", "verdict", "source", "date", "label"}``, de-duplicated by
    (notice DOI, type); self references and types that are not notices are ``ignored``. Entries
    come from ``updated-by``/``update-to`` (publisher and Retraction Watch, ``record-id`` kept) and
    from the ``relation`` object (:func:`_relation_entries`)."""
    own = str(message.get("DOI") or "").lower()
    out: dict[str, list] = {"updated_by": [], "update_to": [], "ignored": []}
    rel_by, rel_to = _relation_entries(message)
    for field, key, extra in (("updated-by", "updated_by", rel_by), ("update-to", "update_to", rel_to)):
        seen: dict[tuple, dict] = {}
        raw = [e for e in (message.get(field) or []) if isinstance(e, dict)] + extra
        for e in raw:
            doi = str(e.get("DOI") or "").lower()
            typ = str(e.get("type") or "").lower()
            item = {"doi": doi, "type": typ, "verdict": _CROSSREF_TYPES.get(typ), "source": e.get("source"),
                    "date": _date_of(e), "label": e.get("label")}
            if e.get("record-id"):
                item["record_id"] = str(e["record-id"])
            if doi == own or item["verdict"] is None:
                out["ignored"].append({**item, "field": field,
                                       "why": "points at the work itself" if doi == own else f"type {typ!r} is not a notice"})
                continue
            k = (doi, typ)
            if k in seen:
                sources = {seen[k]["source"], item["source"]} - {None}
                seen[k]["source"] = ", ".join(sorted(sources))
                if item.get("record_id") and not seen[k].get("record_id"):
                    seen[k]["record_id"] = item["record_id"]
                seen[k]["date"] = seen[k]["date"] or item["date"]
                continue
            seen[k] = item
        out[key] = list(seen.values())
    return out


def crossref_metadata(message: dict) -> dict:
    years = []
    for f in ("issued", "published", "published-print", "published-online"):
        parts = ((message.get(f) or {}).get("date-parts") or [[None]])[0]
        if parts and parts[0]:
            years.append(int(parts[0]))
    titles = message.get("title") or []
    authors = []
    for a in message.get("author") or []:
        name = " ".join(str(v) for v in (a.get("given"), a.get("family")) if v) or a.get("name")
        if name:
            authors.append(name)
    container = message.get("container-title") or []
    return {
        "title": html.unescape(re.sub(r"<[^>]+>", "", titles[0])).strip() if titles else None,
        "authors": authors,
        "year": years[0] if years else None,
        "years": sorted(set(years)),
        "container": container[0] if container else None,
        "doi": str(message.get("DOI") or "").lower() or None,
        "type": message.get("type"),
        "publisher": message.get("publisher"),
    }


def _resolve_crossref(doi: str, fetch: _Fetcher, conf: dict) -> dict:
    url = f"{conf['crossref_url']}/works/{quote(doi, safe='')}"
    secret = {"mailto": conf["mailto"]} if conf.get("mailto") else None
    resp = fetch.get("crossref", url, secret=secret)
    res = {"service": "crossref", "url": resp.get("url"), "status": resp.get("status"),
           "fetched": resp.get("fetched"), "cached": resp.get("cached", False)}
    if resp.get("status") == 404:
        return {**res, "found": False, "why": f"Crossref has no work {doi} (HTTP 404: {(resp.get('body') or '').strip()[:80]})"}
    if resp.get("status") != 200:
        return {**res, "found": None, "why": _failure(resp, "Crossref")}
    try:
        message = json.loads(resp["body"])["message"]
        if not isinstance(message, dict):
            raise ValueError("message is not an object")  # noqa: TRY004 - caught below with the other body errors
    except (ValueError, KeyError, TypeError) as exc:
        return {**res, "found": None, "why": f"Crossref answered with an unreadable body ({exc})"}
    return {**res, "found": True, "message": message}


def _crossref_result(message: dict) -> tuple[dict, list[dict], list[str]]:
    meta = crossref_metadata(message)
    notes = crossref_notices(message)
    meta["notices"] = notes["updated_by"]
    meta["notice_of"] = notes["update_to"]
    checks, found = [], []
    for n in notes["updated_by"]:
        found.append(n["verdict"])
        rw = f", Retraction Watch record {n['record_id']}" if n.get("record_id") else ""
        checks.append({"name": "notice", "ok": False,
                       "detail": f"{n['type']} {n['doi']} ({n['source']}{rw}, {n['date']}) updates this work"})
    for n in notes["update_to"]:
        found.append(n["verdict"])
        checks.append({"name": "notice_of", "ok": False,
                       "detail": f"this record is a {n['type']} notice for {n['doi']} ({n['date']}), not the work itself"})
    _title_check(meta, checks, found)
    if not found:
        detail = "no retraction, correction or concern notice in update-to, updated-by or relation"
        if notes["ignored"]:
            detail += f" ({len(notes['ignored'])} entr{'y' if len(notes['ignored']) == 1 else 'ies'} not notices: " + \
                ", ".join(f"{i['type']}: {i['why']}" for i in notes["ignored"]) + ")"
        checks.append({"name": "notices", "ok": True, "detail": detail})
    return meta, checks, found


# --------------------------------------------------------------------------- arXiv

_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV_NS = "{http://arxiv.org/schemas/atom}"
_OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"


def parse_arxiv_feed(body: str) -> dict:
    """``{"entries": [...], "errors": [...], "total": int|None}``; an entry whose id is under
    ``/api/errors`` is an error, never a paper."""
    root = ET.fromstring(body.encode("utf-8") if isinstance(body, str) else body)
    total = root.findtext(f"{_OPENSEARCH}totalResults")
    entries, errors = [], []
    for e in root.findall(f"{_ATOM}entry"):
        eid = (e.findtext(f"{_ATOM}id") or "").strip()
        if "/api/errors" in eid:
            errors.append(" ".join((e.findtext(f"{_ATOM}summary") or e.findtext(f"{_ATOM}title") or eid).split()))
            continue
        m = re.search(r"/abs/(.+?)(v(\d+))?$", eid)
        title = e.findtext(f"{_ATOM}title")
        published = (e.findtext(f"{_ATOM}published") or "").strip()
        updated = (e.findtext(f"{_ATOM}updated") or "").strip()
        entries.append({
            "id": m.group(1) if m else eid,
            "version": int(m.group(3)) if m and m.group(3) else None,
            "title": " ".join(title.split()) if title is not None else None,
            "authors": [" ".join((a.findtext(f"{_ATOM}name") or "").split()) for a in e.findall(f"{_ATOM}author")],
            "published": published or None,
            "updated": updated or None,
            "doi": (e.findtext(f"{_ARXIV_NS}doi") or "").strip().lower() or None,
            "journal_ref": (e.findtext(f"{_ARXIV_NS}journal_ref") or "").strip() or None,
            "comment": " ".join((e.findtext(f"{_ARXIV_NS}comment") or "").split()) or None,
            "summary": " ".join((e.findtext(f"{_ATOM}summary") or "").split()) or None,
        })
    return {"entries": entries, "errors": errors, "total": int(total) if total and total.strip().isdigit() else None}


def _resolve_arxiv(norm: dict, fetch: _Fetcher, conf: dict) -> dict:
    url = f"{conf['arxiv_url']}/api/query"
    resp = fetch.get("arxiv", url, params={"id_list": norm["identifier"], "max_results": "1"})
    res = {"service": "arxiv", "url": resp.get("url"), "status": resp.get("status"),
           "fetched": resp.get("fetched"), "cached": resp.get("cached", False)}
    if resp.get("status") is None:
        return {**res, "found": None, "why": _failure(resp, "arXiv")}
    try:
        feed = parse_arxiv_feed(resp.get("body") or "")
    except ET.ParseError as exc:
        return {**res, "found": None, "why": f"arXiv answered HTTP {resp['status']} with a body that is not XML ({exc})"}
    if feed["errors"]:
        return {**res, "found": None, "why": f"arXiv answered HTTP {resp['status']}: {'; '.join(feed['errors'])}"}
    if resp["status"] != 200:
        return {**res, "found": None, "why": _failure(resp, "arXiv")}
    match = [e for e in feed["entries"] if e["id"].lower() == norm["base"].lower()]
    if not match:
        return {**res, "found": False, "why": f"arXiv has no paper {norm['identifier']} (empty feed)"}
    return {**res, "found": True, "entry": match[0]}


#: a withdrawal note in an arXiv comment or abstract ("This paper has been withdrawn by the author(s)
#: ...", "Withdrawn: ...", "This submission was withdrawn ..."); a passing mention is not one
_ARXIV_WITHDRAWN_ANYWHERE = re.compile(
    r"\b(?:this|the)\s+(?:paper|article|submission|manuscript|preprint|work|version)\s+(?:has\s+been|is|was|have\s+been)"
    r"\s+(?:\w+\s+)?withdrawn\b"
    r"|\bwithdrawn\s+by\s+(?:the\s+)?(?:authors?|submitter|arxiv)"
    r"|\b(?:the\s+authors?|we|i)\s+(?:have\s+|has\s+)?(?:withdraw|withdrew|withdrawn)\s+(?:this|the|our|my)\s+"
    r"(?:paper|article|submission|manuscript|preprint|work)", re.IGNORECASE)
#: "Withdrawn.", "Withdrawn: ...", "Paper withdrawn due to ...": at the start, followed by what a note
#: says next; never "Withdrawn from NeurIPS" nor "Withdrawn drugs ..."
_ARXIV_WITHDRAWN_START = re.compile(
    r"^\s*(?:this\s+)?(?:paper\s+|article\s+|submission\s+)?withdrawn\s*(?:$|[:;.,!(\uff1a]|by\b|due\b|because\b|as\b"
    r"|for\s+(?:revision|now)\b|pending\b|until\b)", re.IGNORECASE)


def arxiv_withdrawal(text: str | None) -> bool:
    """Whether an arXiv comment or abstract is a withdrawal note: "This paper has been withdrawn
    by the author ...", "arXiv admin note: This submission has been withdrawn ...", "The authors
    withdraw this paper ...", or a note starting "Withdrawn: ..."; a passing mention ("Withdrawn
    from NeurIPS 2021", an abstract on withdrawn drugs) is not one."""
    if not text:
        return False
    t = " ".join(str(text).split())
    return bool(_ARXIV_WITHDRAWN_ANYWHERE.search(t) or _ARXIV_WITHDRAWN_START.match(t))


def _day(stamp: str | None) -> str:
    return (stamp or "")[:10] or "no date"


def _arxiv_result(norm: dict, entry: dict, latest: dict | None = None) -> tuple[dict, list[dict], list[str]]:
    """``latest`` is the answer for the id without a version, when a version was cited."""
    years = [int(d[:4]) for d in (entry["published"], entry["updated"]) if d and d[:4].isdigit()]
    meta = {"title": entry["title"], "authors": entry["authors"], "year": years[0] if years else None,
            "years": sorted(set(years)), "arxiv_id": entry["id"], "version": entry["version"],
            "published": entry["published"], "updated": entry["updated"], "doi": entry["doi"],
            "journal_ref": entry["journal_ref"], "comment": entry["comment"], "notices": [], "notice_of": []}
    checks: list[dict] = []
    found: list[str] = []
    newest = latest if latest is not None and (latest.get("version") or 0) >= (entry["version"] or 0) else entry
    if norm.get("version"):
        ok = entry["version"] == norm["version"]
        checks.append({"name": "version", "ok": ok,
                       "detail": f"v{norm['version']} requested, arXiv answered v{entry['version']}"})
        if newest is not entry and (newest.get("version") or 0) > (entry["version"] or 0):
            meta["latest_version"] = newest["version"]
            meta["latest_updated"] = newest["updated"]
            checks.append({"name": "latest_version", "ok": None,
                           "detail": f"v{entry['version']} is cited (dated {_day(entry['updated'])}); the latest is "
                                     f"v{newest['version']} (dated {_day(newest['updated'])}, first version "
                                     f"{_day(newest['published'])})"})
    else:
        checks.append({"name": "version", "ok": True, "detail": f"no version requested; latest is v{entry['version']}"})
    notes = []
    for which in ([entry, newest] if newest is not entry else [entry]):
        label = f"v{which['version']}" if which["version"] else "the paper"
        if arxiv_withdrawal(which.get("comment")):
            notes.append(f"{label} comment: {which['comment']!r}")
        elif arxiv_withdrawal(which.get("summary")):
            notes.append(f"{label} abstract is a withdrawal note: {which['summary'][:300]!r}")
    if notes:
        found.append("withdrawn")
        meta["withdrawal"] = notes
        checks.append({"name": "withdrawn", "ok": False, "detail": "arXiv withdrawal: " + "; ".join(notes)})
    _title_check(meta, checks, found)
    if not found:
        checks.append({"name": "notices", "ok": True,
                       "detail": "no withdrawal note in the comment or abstract"
                                 + (f"; comment: {entry['comment']!r}" if entry["comment"] else "")})
    return meta, checks, found


# --------------------------------------------------------------------------- PubMed

_PUBTYPES = {"retracted publication": "retracted", "retraction of publication": "retracted",
             "expression of concern": "expression_of_concern", "published erratum": "corrected",
             "corrected and republished article": "corrected"}
#: CommentsCorrections RefType -> (verdict, this record is the notice)
_REFTYPES = {"RetractionIn": ("retracted", False), "RetractionOf": ("retracted", True),
             "ExpressionOfConcernIn": ("expression_of_concern", False),
             "ExpressionOfConcernFor": ("expression_of_concern", True),
             "ErratumIn": ("corrected", False), "ErratumFor": ("corrected", True),
             "CorrectedandRepublishedIn": ("corrected", False), "CorrectedandRepublishedFrom": ("corrected", True)}


def _pubmed_book(a: ET.Element) -> dict | None:
    """A ``PubmedBookArticle`` (a Bookshelf book or chapter, e.g. GeneReviews): the chapter's
    ``ArticleTitle`` or, for a whole book, its ``BookTitle``; the chapter's authors, else the
    book's; the book's year; the book, publisher and ``kind`` (``chapter`` or ``book``)."""
    doc = a.find("BookDocument")
    if doc is None:
        return None
    book = doc.find("Book")

    def text(el: ET.Element | None) -> str | None:
        return " ".join("".join(el.itertext()).split()) or None if el is not None else None

    book_title = text(book.find("BookTitle")) if book is not None else None
    chapter = text(doc.find("ArticleTitle"))

    def names(parent: ET.Element | None) -> list[str]:
        """The authors of ``parent``'s author lists; a list of editors is not its authors."""
        out = []
        lists = [al for al in (parent.findall("AuthorList") if parent is not None else [])
                 if (al.get("Type") or "authors").lower() != "editors"]
        for au in (x for al in lists for x in al.findall("Author")):
            last, fore = au.findtext("LastName"), au.findtext("ForeName") or au.findtext("Initials")
            name = " ".join(v for v in (fore, last) if v) or au.findtext("CollectiveName")
            if name:
                out.append(" ".join(name.split()))
        return out

    authors = names(doc) or names(book)
    years = []
    for path in ("PubDate/Year", "BeginningDate/Year"):
        y = ((book.findtext(path) if book is not None else None) or "").strip()
        if y.isascii() and y.isdigit():
            years.append(int(y))
    for tag in ("ContributionDate", "DateRevised"):  # a chapter cited as "[Updated 2023]" is its revision
        for cd in doc.findall(tag):
            cy = (cd.findtext("Year") or "").strip()
            if cy.isascii() and cy.isdigit():
                years.append(int(cy))
    ids = {i.get("IdType"): (i.text or "").strip() for i in doc.findall("ArticleIdList/ArticleId")}
    if book is not None:
        for loc in book.findall("ELocationID"):
            if loc.get("EIdType") == "doi" and "doi" not in ids:
                ids["doi"] = (loc.text or "").strip()
    pubtypes = [" ".join((p.text or "").split()) for p in doc.findall("PublicationType")]
    return {"pmid": (doc.findtext("PMID") or "").strip(), "title": chapter or book_title, "authors": authors,
            "years": sorted(set(years)), "journal": None, "book": book_title,
            "publisher": (book.findtext("Publisher/PublisherName") if book is not None else None),
            "kind": "chapter" if chapter else "book", "bookaccession": ids.get("bookaccession"),
            "pubtypes": pubtypes, "comments": [], "doi": (ids.get("doi") or "").lower() or None}


def parse_pubmed(body: str) -> list[dict]:
    """Every ``PubmedArticle`` and ``PubmedBookArticle`` of an efetch body (a bare
    ``PubmedArticle`` or ``PubmedBookArticle`` root is accepted)."""
    root = ET.fromstring(body.encode("utf-8") if isinstance(body, str) else body)
    arts = [root] if root.tag == "PubmedArticle" else root.findall(".//PubmedArticle")
    books = [root] if root.tag == "PubmedBookArticle" else root.findall(".//PubmedBookArticle")
    out = [b for b in (_pubmed_book(x) for x in books) if b is not None]
    for a in arts:
        cit = a.find("MedlineCitation")
        if cit is None:
            continue
        art = cit.find("Article")
        title_el = art.find("ArticleTitle") if art is not None else None
        title = " ".join("".join(title_el.itertext()).split()) if title_el is not None else None
        authors = []
        for au in (art.findall("AuthorList/Author") if art is not None else []):
            last, fore = au.findtext("LastName"), au.findtext("ForeName") or au.findtext("Initials")
            name = " ".join(v for v in (fore, last) if v) or au.findtext("CollectiveName")
            if name:
                authors.append(name)
        years = []
        if art is not None:
            y = art.findtext("Journal/JournalIssue/PubDate/Year")
            md = art.findtext("Journal/JournalIssue/PubDate/MedlineDate")
            if y and y.strip().isdigit():
                years.append(int(y))
            elif md and re.match(r"\d{4}", md.strip()):
                years.append(int(md.strip()[:4]))
            for ad in art.findall("ArticleDate"):
                ay = ad.findtext("Year") or ""
                if ay.isdigit():
                    years.append(int(ay))
        pubtypes = [" ".join((p.text or "").split()) for p in (art.findall("PublicationTypeList/PublicationType")
                                                               if art is not None else [])]
        comments = []
        for c in cit.findall("CommentsCorrectionsList/CommentsCorrections"):
            comments.append({"reftype": c.get("RefType"), "pmid": (c.findtext("PMID") or "").strip() or None,
                             "source": " ".join((c.findtext("RefSource") or "").split()) or None})
        ids = {i.get("IdType"): (i.text or "").strip() for i in a.findall("PubmedData/ArticleIdList/ArticleId")}
        out.append({"pmid": (cit.findtext("PMID") or "").strip(), "title": title, "authors": authors,
                    "years": sorted(set(years)), "journal": art.findtext("Journal/Title") if art is not None else None,
                    "pubtypes": pubtypes, "comments": comments, "doi": (ids.get("doi") or "").lower() or None})
    return out


def _resolve_pubmed(pmid: str, fetch: _Fetcher, conf: dict) -> dict:
    url = f"{conf['pubmed_url']}/entrez/eutils/efetch.fcgi"
    secret = {"tool": "dsh-notebook", "email": conf["mailto"]} if conf.get("mailto") else None
    resp = fetch.get("pubmed", url, params={"db": "pubmed", "id": pmid, "retmode": "xml"}, secret=secret)
    res = {"service": "pubmed", "url": resp.get("url"), "status": resp.get("status"),
           "fetched": resp.get("fetched"), "cached": resp.get("cached", False)}
    if resp.get("status") != 200:
        return {**res, "found": None, "why": _failure(resp, "PubMed")}
    body = resp.get("body") or ""
    if not re.search(r"<Pubmed(?:Book)?Article(?:Set)?\b", body if isinstance(body, str) else body.decode("utf-8", "replace")):
        # an HTML page or another document answered with 200: not PubMed saying it has no record
        return {**res, "found": None, "why": "PubMed's answer is not a PubMed record set (an error page?); "
                                             f"whether it holds {pmid} is not known"}
    try:
        arts = parse_pubmed(body)
    except ET.ParseError as exc:
        return {**res, "found": None, "why": f"PubMed answered with a body that is not XML ({exc})"}
    match = [a for a in arts if a["pmid"] == pmid]
    if not match:
        return {**res, "found": False, "why": f"PubMed has no record {pmid}"}
    return {**res, "found": True, "article": match[0]}


def _pubmed_pmid_for_doi(doi: str, fetch: _Fetcher, conf: dict) -> tuple[str | None, str | None]:
    url = f"{conf['pubmed_url']}/entrez/eutils/esearch.fcgi"
    secret = {"tool": "dsh-notebook", "email": conf["mailto"]} if conf.get("mailto") else None
    resp = fetch.get("pubmed", url, params={"db": "pubmed", "retmode": "json", "field": "aid", "term": doi},
                     secret=secret)
    if resp.get("status") != 200:
        return None, _failure(resp, "PubMed esearch")
    try:
        ids = json.loads(resp["body"])["esearchresult"].get("idlist") or []
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return None, f"PubMed esearch answered with an unreadable body ({exc})"
    return (str(ids[0]), None) if len(ids) == 1 else (None, f"PubMed esearch found {len(ids)} records for {doi}")


def _pubmed_result(art: dict) -> tuple[dict, list[dict], list[str]]:
    meta = {"title": art["title"], "authors": art["authors"], "year": art["years"][0] if art["years"] else None,
            "years": art["years"], "container": art["journal"] or art.get("book"), "pmid": art["pmid"],
            "doi": art["doi"], "publication_types": art["pubtypes"], "notices": [], "notice_of": []}
    if art.get("book") is not None or art.get("kind"):
        meta.update({"book": art.get("book"), "publisher": art.get("publisher"), "type": f"book-{art.get('kind')}",
                     "bookaccession": art.get("bookaccession")})
    checks, found = [], []
    for p in art["pubtypes"]:
        v = _PUBTYPES.get(p.casefold())
        if v:
            found.append(v)
            checks.append({"name": "publication_type", "ok": False, "detail": f"PubMed publication type {p!r}"})
    for c in art["comments"]:
        notice = _REFTYPES.get(c["reftype"] or "")
        if not notice:
            continue
        verdict, is_notice = notice
        found.append(verdict)
        item = {"pmid": c["pmid"], "type": c["reftype"], "verdict": verdict, "source": c["source"]}
        (meta["notice_of"] if is_notice else meta["notices"]).append(item)
        ref = f"PMID {c['pmid']}" if c["pmid"] else (c["source"] or "a notice")
        checks.append({"name": "notice_of" if is_notice else "notice", "ok": False,
                       "detail": f"{c['reftype']} {ref}" + (f" ({c['source']})" if c["source"] and c["pmid"] else "")
                       + (": this record is the notice, not the work" if is_notice else "")})
    _title_check(meta, checks, found)
    if not found:
        checks.append({"name": "notices", "ok": True,
                       "detail": "no retraction, correction or concern in PublicationType or CommentsCorrections"})
    return meta, checks, found


# --------------------------------------------------------------------------- DataCite


def datacite_metadata(body: str) -> dict:
    """The record of a DataCite REST API ``GET /dois/{doi}`` body (``{"data": {"attributes": ...}}``):
    title, creators, ``publicationYear``, publisher, resource type. Raises ``ValueError`` (or a
    ``KeyError``/``TypeError``) for a body that is not one."""
    data = json.loads(body)["data"]
    attrs = data["attributes"]
    if not isinstance(attrs, dict):
        raise ValueError("data.attributes is not an object")  # noqa: TRY004 - documented: ValueError for a bad body
    titles = [t.get("title") for t in attrs.get("titles") or [] if isinstance(t, dict) and t.get("title")]
    main = next((t.get("title") for t in attrs.get("titles") or []
                 if isinstance(t, dict) and t.get("title") and not t.get("titleType")), titles[0] if titles else None)
    authors = []
    for c in attrs.get("creators") or []:
        if not isinstance(c, dict):
            continue
        if c.get("givenName") and c.get("familyName"):
            authors.append(f"{c['givenName']} {c['familyName']}")
        elif c.get("name"):
            authors.append(str(c["name"]))
    years = []
    y = attrs.get("publicationYear")
    if str(y or "").strip().isdigit():
        years.append(int(str(y).strip()))
    publisher = attrs.get("publisher")
    if isinstance(publisher, dict):
        publisher = publisher.get("name")
    types = attrs.get("types") or {}
    return {"title": " ".join(str(main).split()) if main else None, "authors": authors,
            "year": years[0] if years else None, "years": years, "container": publisher, "publisher": publisher,
            "doi": str(attrs.get("doi") or data.get("id") or "").lower() or None,
            "type": types.get("resourceTypeGeneral") or types.get("resourceType"),
            "state": attrs.get("state"), "registry": "DataCite"}


def _resolve_datacite(doi: str, fetch: _Fetcher, conf: dict) -> dict:
    url = f"{conf['datacite_url']}/dois/{quote(doi, safe='/')}"
    resp = fetch.get("datacite", url)
    res = {"service": "datacite", "url": resp.get("url"), "status": resp.get("status"),
           "fetched": resp.get("fetched"), "cached": resp.get("cached", False)}
    if resp.get("status") == 404:
        return {**res, "found": False, "why": f"DataCite has no DOI {doi} (HTTP 404)"}
    if resp.get("status") != 200:
        return {**res, "found": None, "why": _failure(resp, "DataCite")}
    try:
        record = datacite_metadata(resp.get("body") or "")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return {**res, "found": None, "why": f"DataCite answered with an unreadable body ({type(exc).__name__}: {exc})"}
    return {**res, "found": True, "record": record}


def _datacite_result(record: dict) -> tuple[dict, list[dict], list[str]]:
    meta = {**record, "notices": [], "notice_of": []}
    checks: list[dict] = [{"name": "registry", "ok": True,
                           "detail": f"DataCite DOI ({record.get('type') or 'resource'}"
                                     + (f", {record['publisher']}" if record.get("publisher") else "") + ")"}]
    found: list[str] = []
    _title_check(meta, checks, found)
    if not found:
        checks.append({"name": "notices", "ok": True, "detail": "DataCite records carry no retraction notices; "
                                                                "the title marks none"})
    return meta, checks, found


# --------------------------------------------------------------------------- resolvers, one interface

#: service -> (resolve(key, fetch, conf) -> {"service", "url", "status", "fetched", "cached", "found",
#: "why"?, "record"?}, result(record) -> (metadata, checks, verdicts found)). Every resolver fetches
#: through :class:`_Fetcher` (the network layer's retry policy and the dated cache).
RESOLVERS: dict[str, tuple[Any, Any]] = {}


def _as_record(resolve: Any, field: str) -> Any:
    def run(key: Any, fetch: _Fetcher, conf: dict) -> dict:
        res = resolve(key, fetch, conf)
        if field in res:
            res["record"] = res.pop(field)
        return res
    return run


RESOLVERS.update({
    "crossref": (_as_record(_resolve_crossref, "message"), _crossref_result),
    "datacite": (_resolve_datacite, _datacite_result),
    "pubmed": (_as_record(_resolve_pubmed, "article"), _pubmed_result),
})


# --------------------------------------------------------------------------- the check


def _verdict(found: list[str], mismatch: bool) -> str:
    have = set(found) | ({"mismatch"} if mismatch else set())
    return next((v for v in SEVERITY if v in have), "verified")


def check_source(identifier: str, claimed: dict | None = None, *, cache_dir: str | Path | None = None,
                 settings: dict | None = None, kind: str | None = None) -> dict:
    """Resolve ``identifier`` and return ``{"identifier", "kind", "verdict", "checks", "metadata",
    "resolver", "needs_judgment"}`` (plus ``doi`` for a DataCite arXiv DOI). ``claimed`` is an
    optional ``{title, authors, year}`` (authors a list or a ``;``-separated string).
    ``needs_judgment`` says the claimed metadata's match was left undecided (see
    :func:`_compare`); the verdict is then the code's own (``mismatch`` for a grey-zone title),
    which the bibliographic verifier's runner puts to a model. Raises :class:`IdentifierError`
    only for a malformed identifier; every service or network failure is an ``inconclusive``
    verdict."""
    norm = normalize(identifier, kind)
    conf = bibliographic_settings(settings)
    result: dict[str, Any] = {"identifier": norm["identifier"], "kind": norm["kind"], "input": identifier,
                              "verdict": "inconclusive", "checks": [], "metadata": {}, "resolver": {},
                              "needs_judgment": False}
    checks = result["checks"]
    checks.append({"name": "identifier", "ok": True, "detail": f"{norm['kind']} {norm['identifier']}"})
    if norm.get("datacite"):
        checks.append({"name": "datacite_doi", "ok": True,
                       "detail": f"DOI {norm['doi']} is a DataCite arXiv DOI: resolved through arXiv as "
                                 f"{norm['identifier']} (Crossref does not hold DataCite DOIs)"})
        result["doi"] = norm["doi"]
    if norm["kind"] == "isbn":
        checks.append({"name": "resolver", "ok": None,
                       "detail": "ISBN checksum is valid, but no bibliographic resolver for ISBNs is configured"})
        result["resolver"] = {"service": None}
        return result
    if norm["kind"] == "url":
        checks.append({"name": "resolver", "ok": None,
                       "detail": "a plain URL names no bibliographic record to resolve; cite its DOI, arXiv id or PMID"})
        result["resolver"] = {"service": None}
        return result
    fetch = _Fetcher(conf, Path(cache_dir) if cache_dir else None)
    unknown_latest = False
    try:
        if norm["kind"] == "doi":
            res = RESOLVERS["crossref"][0](norm["identifier"], fetch, conf)
            if res["found"] is False:  # not a Crossref DOI: DataCite (datasets, software), then PubMed
                crossref = res
                checks.append({"name": "crossref", "ok": None, "detail": res["why"]})
                res = RESOLVERS["datacite"][0](norm["identifier"], fetch, conf)
                if res["found"] is not True:
                    checks.append({"name": "datacite", "ok": None, "detail": res["why"]})
                    pmid, why = _pubmed_pmid_for_doi(norm["identifier"], fetch, conf)
                    if pmid:
                        res = RESOLVERS["pubmed"][0](pmid, fetch, conf)
                    else:
                        if why:
                            checks.append({"name": "pubmed", "ok": None, "detail": why})
                        if res["found"] is False:  # no service holds it: Crossref's answer stands
                            res = crossref
        elif norm["kind"] == "arxiv":
            res = _resolve_arxiv(norm, fetch, conf)
            if res.get("entry") is not None and norm.get("version"):  # the latest version, for withdrawals
                latest = _resolve_arxiv({**norm, "identifier": norm["base"], "version": None}, fetch, conf)
                res["latest"] = latest.get("entry") if latest.get("found") else None
                if not latest.get("found"):  # a withdrawal may be in the latest version: not known
                    checks.append({"name": "latest_version", "ok": None,
                                   "detail": f"the latest version of {norm['base']} could not be read "
                                             f"({latest.get('why') or 'no answer'}); a withdrawal cannot be ruled out"})
                    unknown_latest = True
        else:
            res = RESOLVERS["pubmed"][0](norm["identifier"], fetch, conf)
        try:
            if res.get("record") is not None:
                meta, more, found = RESOLVERS[res["service"]][1](res.pop("record"))
            elif res.get("entry") is not None:
                meta, more, found = _arxiv_result(norm, res.pop("entry"), res.pop("latest", None))
        except (TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError) as exc:
            # a record of a shape the service does not document: not read, so not verified
            res = {**res, "found": False, "why": f"{res.get('service', 'the service')}'s record has an unexpected "
                                                 f"shape and was not read ({type(exc).__name__}: "
                                                 f"{' '.join(str(exc).split())[:160]})"}
    finally:
        fetch.close()
    result["resolver"] = {**{k: v for k, v in res.items() if k not in ("found", "why", "latest")},
                          "requests": fetch.calls}
    if not res.get("found"):
        checks.append({"name": "resolved", "ok": False, "detail": res.get("why") or "not found"})
        return result
    checks.append({"name": "resolved", "ok": True, "detail": f"found by {res['service']}"})
    checks.extend(more)
    mismatch, judge = _compare(claimed, meta, checks)
    result["metadata"] = meta
    result["needs_judgment"] = judge
    result["verdict"] = _verdict(found, mismatch)
    if unknown_latest and result["verdict"] == "verified":
        result["verdict"] = "inconclusive"
    return result


def checks_table(result: dict) -> str:
    """The checks as a text table (for the terminal)."""
    rows = [(c["name"], {True: "ok", False: "FAIL", None: "?"}[c["ok"]], c["detail"]) for c in result["checks"]]
    widths = [max(len(str(r[i])) for r in rows + [("check", "ok", "detail")]) for i in range(2)]
    lines = [f"{'check'.ljust(widths[0])}  {'ok'.ljust(widths[1])}  detail"]
    lines.append(f"{'-' * widths[0]}  {'-' * widths[1]}  ------")
    lines += [f"{a.ljust(widths[0])}  {b.ljust(widths[1])}  {c}" for a, b, c in rows]
    return "\n".join(lines)
