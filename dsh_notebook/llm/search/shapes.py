"""The search tool's vocabulary: failure codes, outcomes, size caps, the candidate a provider
returns, the provider interface and its error (spec: llm.md "Presets from the reckoner seed";
upstream-facts.md 3.13).
"""

from __future__ import annotations

from typing import Protocol, TypedDict

from ...errors import DshError

#: The record already holds its budget of lookups; the provider was not called.
BUDGET_EXCEEDED = "SEARCH_BUDGET_EXCEEDED"
#: No provider, no extraction model, a provider failure or an unreadable extraction reply.
UNAVAILABLE = "SEARCH_UNAVAILABLE"
#: No allowed source holds the fact.
INSUFFICIENT = "SEARCH_INSUFFICIENT"
CODES = (BUDGET_EXCEEDED, UNAVAILABLE, INSUFFICIENT)

OUTCOMES = ("answered", "insufficient", "refused", "failed")

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
    """What :func:`~.pipeline.lookup` needs from a provider. ``search`` returns at most ``max_results``
    candidates, best first, and raises :class:`SearchError` (or anything else) on failure.
    A provider may also have ``fetch_text(url, max_chars, allow)`` (used by enrich) and
    ``close()``."""

    name: str

    def search(self, query: str, max_results: int) -> list[Candidate]: ...
