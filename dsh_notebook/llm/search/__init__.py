"""The outside lookup: the ``search`` tool of the ``reckoner-with-search`` preset (spec: llm.md
"Presets from the reckoner seed"; upstream-facts.md 3.13, written in our words).

One call takes one question and hands the model one sentence of answer (``{"ok": true,
"answer", "origin"}``) or a failure receipt (``{"ok": false, "code", "error"}``); the record
keeps the rest. One job per module:

* :mod:`.shapes`: codes, outcomes, size caps, the candidate, the provider interface and its error;
* :mod:`.safetext`: strict UTF-8 for every stored or sent text, and cuts with "…";
* :mod:`.urls`: URL safety: host matching, and :func:`model_safe` (no URL reaches the model);
* :mod:`.policy`: :class:`SearchPolicy`, where a lookup may read (tier, allow-list) and how much;
* :mod:`.pagetext`: a page's visible text (:func:`html_text`, selectolax);
* :mod:`.providers`: :class:`SearxngProvider`, :class:`WikipediaProvider` and the page fetch
  of the enrich step (through :func:`dsh_notebook.net.fetch`);
* :mod:`.extract`: the extraction prompt (:data:`PROMPT_VERSION`), the material's cap and the
  reading of the reply;
* :mod:`.pipeline`: :func:`lookup`, one question to one recorded ``search`` row;
* :mod:`.tool`: :func:`search_tool`, the agent tool.

Size caps (what a provider returns is untrusted): a candidate's title is cut to
:data:`TITLE_MAX_CHARS` (300), its snippet to :data:`SNIPPET_MAX_CHARS` (2,000), its
``publishedAt`` to 100 characters; a candidate whose URL is longer than :data:`URL_MAX_CHARS`
(2,048) is dropped; the material sent to the extraction model is at most
:data:`MATERIAL_MAX_CHARS` (60,000) characters.
"""

from .extract import EXTRACT_SYSTEM, PROMPT_VERSION, Extraction, extraction_messages, fit_material, parse_extraction
from .pagetext import html_text
from .pipeline import lookup
from .policy import SearchPolicy
from .providers import HttpSearchProvider, SearxngProvider, WikipediaProvider, provider_from_settings
from .shapes import (
    BUDGET_EXCEEDED,
    CODES,
    INSUFFICIENT,
    MATERIAL_MAX_CHARS,
    SNIPPET_MAX_CHARS,
    TITLE_MAX_CHARS,
    UNAVAILABLE,
    URL_MAX_CHARS,
    Candidate,
    SearchError,
    SearchProvider,
)
from .tool import search_tool
from .urls import host_matches, model_safe

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
