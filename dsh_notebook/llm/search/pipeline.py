"""The lookup pipeline: one question in, one recorded ``search`` row, one receipt out (spec:
llm.md "Presets from the reckoner seed"; upstream-facts.md 3.13).

* :func:`lookup`: open record -> budget -> provider -> extraction route -> retrieval (the
  question verbatim) -> policy filter (tier, allow-list) -> optional enrich (page text of the
  first allowed pages) -> one tool-free extraction call -> one ``search`` row written with
  :meth:`Engine.record_lookup`. Every path writes exactly one row, except "no open record",
  which writes nothing, and :func:`lookup` never raises for what a provider, a model or the text
  they return does (only a non-text question is a ``TypeError``): an unexpected error becomes a
  ``failed`` row with code ``SEARCH_UNAVAILABLE`` and the detail in the row's ``error``. Every
  text is made safe for strict UTF-8 JSON first (:mod:`.safetext`).
* The model sees one sentence (``{"ok": true, "answer", "origin"}``) or a failure receipt
  (``{"ok": false, "code", "error"}``); queries, URLs, titles, snippets and page text never
  reach it (the record keeps them), and the answer passes :func:`~.urls.model_safe`.
* Stop is honoured: the running turn's cancel event
  (:data:`dsh_notebook.llm.agent.current_cancel`) goes to the extraction call, and the
  provider's search and the enrich fetches are waited on with it; a stopped lookup returns
  within ~50 ms with a ``failed`` row whose ``error`` is ``"cancelled"`` (the agent then ends
  the turn before its next model request).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import CANCELLED, LLMError
from ...reckoner.errors import OPEN_RECORD_NOT_FOUND, EngineError
from ...settings import api_key
from ..agent import current_cancel
from ..client import ChatClient, interruptible
from .extract import PROMPT_VERSION, extraction_messages, fit_material, parse_extraction
from .policy import SearchPolicy
from .providers import HttpSearchProvider, candidate
from .safetext import json_safe, utf8_safe
from .shapes import BUDGET_EXCEEDED, INSUFFICIENT, UNAVAILABLE, Candidate, SearchError, SearchProvider
from .urls import model_safe

if TYPE_CHECKING:
    from ...reckoner.engine import Engine

_log = logging.getLogger(__name__)


class _Cancelled(Exception):
    """The running turn's cancel event was set while the lookup waited."""


def _interruptible(fn: Callable[[], Any], cancel: threading.Event | None) -> Any:
    """``fn()``, or :class:`_Cancelled` within ~50 ms of ``cancel`` being set (see
    :func:`dsh_notebook.llm.client.interruptible`)."""
    return interruptible(fn, cancel, _Cancelled)


#: What the model is told when a lookup fails in a way the pipeline did not foresee.
_UNEXPECTED = ("the lookup failed unexpectedly, so there is no answer; treat the quantity as missing or try once "
               "more.")
_STOPPED = "the lookup was stopped before it finished, so there is no answer."


class _RowWriter(Protocol):
    """Writes the lookup's one ``search`` row and returns the receipt the model sees."""

    def __call__(self, outcome: str, candidates: list[Candidate], used: list[Candidate], *,
                 synthesis: dict[str, Any] | None = None, code: str | None = None, error: str | None = None,
                 detail: str | None = None) -> dict[str, Any]: ...


def lookup(engine: Engine, question: str, *, client: ChatClient, policy: SearchPolicy,
           provider: SearchProvider | None) -> dict[str, Any]:
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
    question = utf8_safe(question)
    if engine.open_record is None:
        return EngineError(OPEN_RECORD_NOT_FOUND, "no record is open; start one with record_start: a lookup is "
                                                  "recorded, so it needs the record it belongs to.").receipt()
    rows: list[dict] = []

    def record(outcome: str, candidates: list[Candidate], used: list[Candidate], *,
               synthesis: dict[str, Any] | None = None, code: str | None = None, error: str | None = None,
               detail: str | None = None) -> dict[str, Any]:
        fact: dict[str, Any] = {"question": question, "tier": policy.tier, "outcome": outcome, "candidates": candidates,
                      "used": used, "policy": policy.fact()}
        if synthesis is not None:
            fact["synthesis"] = synthesis
        if code is not None:
            fact["code"] = code
            fact["error"] = detail or error
        fact["durationMs"] = round((time.monotonic() - started) * 1000)
        fact = json_safe(fact)
        written = engine.record_lookup(fact)
        rows.append(written)
        if not written.get("ok"):
            _log.warning("the search row was not recorded: %s", written.get("error"))
            if written.get("code") == OPEN_RECORD_NOT_FOUND:
                return written
        if code is not None:
            return {"ok": False, "code": code, "error": utf8_safe(error or "")}
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


def _lookup(question: str, engine: Engine, client: ChatClient, policy: SearchPolicy,
            provider: SearchProvider | None, record: _RowWriter) -> dict[str, Any]:
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


def _retrieve_and_extract(question: str, policy: SearchPolicy, provider: SearchProvider, extractor: ChatClient,
                          record: _RowWriter, cancel: threading.Event | None) -> dict[str, Any]:
    def stopped(candidates: list[Candidate], used: list[Candidate]) -> dict[str, Any]:
        return record("failed", candidates, used, code=UNAVAILABLE, error=_STOPPED, detail="cancelled")

    # 5. retrieval: the question verbatim
    try:
        found = _interruptible(lambda: provider.search(question, policy.max_results), cancel)
        if not isinstance(found, (list, tuple)):
            raise SearchError(f"the provider returned {type(found).__name__}, not a list of sources")
        candidates = [c for c in (candidate(f.get("url"), f.get("title"), f.get("snippet"), f.get("publishedAt"))
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


def _enrich(provider: SearchProvider, sources: list[Candidate], policy: SearchPolicy,
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
                text = _interruptible(partial(fetch, c["url"], policy.enrich_chars_per_page, policy.allows), cancel)
            except _Cancelled:
                raise
            except Exception as exc:  # noqa: BLE001 - a page that will not load is not enriched
                _log.info("search enrich skipped a page: %s", type(exc).__name__)
                continue
            if isinstance(text, str) and text:
                texts[i] = utf8_safe(text[:policy.enrich_chars_per_page])
    finally:
        if own is not None:
            own.close()
    return texts
