"""``%ledger ask``: one question run through the research roles in order (spec: research.md
"Running the roles").

``ask(ledger, question, *, client_factory, sidecar, progress=None, router=None)`` runs:

1. ``question-posed`` by the lead on the person's behalf;
2. the scout (``run_role("scout")``) proposing sources;
3. the bibliographic verifier (code) on each proposed source;
4. for each ``verified`` source with a locator the scout gave (a ``locator`` or ``fulltext`` key
   beside the source in its reply, or the identifier of a ``url`` source), the full text linked
   from the local file or URL (skipped with a note when there is none);
5. the extractor on each linked source;
6. the claim verifier on each extracted claim;
7. a decision proposed by the lead from the eligible claims (one short model call), or a stop
   with the reason when no claim is eligible;
8. the citation auditor on the decision;
9. ``human-approval-requested`` when ``can_request_human_approval`` holds, else the reason.

Every write goes through ``run_role``, ``link_fulltext`` or the ledger's own checks; nothing here
makes a human actor: the decision is left awaiting the person. ``progress(stage, done, total)``
is called as each stage starts (``done`` 0) and after each of its items. No IPython import.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .actors import Actor
from .fulltext import link_fulltext
from .ledger import Ledger
from .predicates import can_request_human_approval, is_eligible_for_synthesis
from .roles import PROMPT_VERSION, default_client_factory, run_role
from .router import Router

__all__ = ["STAGES", "ask"]

STAGES: tuple[str, ...] = ("question", "scout", "bibliographic", "fulltext", "extract", "verify_claims",
                           "decision", "audit", "approval")
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


class _Decision(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)
    statement: str = Field(min_length=1)
    claim_ids: list[str] = Field(default_factory=list)
    confidence: Literal["low", "medium", "high"] = "low"
    limitations: str | list[str] = ""


_LEAD_PROMPT = """\
Role: research lead (authority: synthesis). Propose a decision answering the question from the \
eligible claims below only: a statement of one to three sentences that follows from the cited \
claims' quotes, the ids of the claims it cites (only ids listed below), a confidence (low, medium \
or high) and the limitations. Return one JSON object {"statement", "claim_ids", "confidence", \
"limitations"} and nothing else. The person decides; you only propose."""


def _text(raw: str) -> str:
    m = _FENCE.match(raw or "")
    return m.group(1) if m else (raw or "")


def _scout_locators(raw: str, task_id: str) -> dict[str, str]:
    """``{source_id: locator}`` from the scout's raw reply (the role's schema ignores the key)."""
    try:
        obj = json.loads(_text(raw))
    except (json.JSONDecodeError, TypeError):
        return {}
    out: dict[str, str] = {}
    sources = obj.get("sources") if isinstance(obj, dict) else None
    for i, s in enumerate(sources if isinstance(sources, list) else [], 1):
        if isinstance(s, dict):
            loc = s.get("locator") or s.get("fulltext") or ""
            if isinstance(loc, str) and loc.strip():
                out[f"{task_id}-s{i}"] = loc.strip()
    return out


def _next_question_id(ledger: Ledger) -> str:
    have = ledger.fold().questions
    n = len(have) + 1
    while f"q{n}" in have:
        n += 1
    return f"q{n}"


def ask(ledger: Ledger, question: str, *, client_factory: Callable[[dict], Any] | None = None,
        sidecar: str | os.PathLike[str] | None = None,
        progress: Callable[[str, int, int], None] | None = None, router: Router | None = None) -> dict:
    """Run the pipeline (see module docstring). Returns ``{"question_id", "decision_id", "status",
    "message", "stages": [{"stage", "notes"}]}``; ``status`` is ``awaiting_person`` (approval
    requested), ``blocked`` (a decision the predicates keep from the person), ``stopped`` (no
    decision) or ``refused`` (the question itself could not be recorded)."""
    question = (question or "").strip()
    client_factory = client_factory or default_client_factory
    router = router or Router()
    sidecar = Path(sidecar) if sidecar is not None else None
    lead = Actor("lead")
    tick = progress or (lambda stage, done, total: None)
    res: dict[str, Any] = {"question_id": None, "decision_id": None, "status": None, "message": "", "stages": []}
    counter = {"n": 0}

    def stage(name: str) -> list[str]:
        notes: list[str] = []
        res["stages"].append({"stage": name, "notes": notes})
        return notes

    def task_id() -> str:
        counter["n"] += 1
        return f"{res['question_id']}-t{counter['n']}"

    def stop(status: str, message: str) -> dict:
        res.update(status=status, message=message)
        return res

    def role(name: str, duty: str, inputs: dict, notes: list[str], factory=None) -> dict:
        r = run_role(ledger, name, duty, inputs, client_factory=factory or client_factory, task_id=task_id(),
                     router=router, sidecar=sidecar)
        notes.append(r.get("summary") or r.get("error") or r["status"])
        return r

    # 1. the question
    notes = stage("question")
    tick("question", 0, 1)
    if not question:
        return stop("refused", "no question: write %ledger ask \"your question\"")
    qid = _next_question_id(ledger)
    r = ledger.append("question-posed", {"question_id": qid, "text": question}, lead)
    tick("question", 1, 1)
    if not r.get("ok"):
        return stop("refused", f"the question was not recorded: {r.get('code')}: {r.get('error')}")
    res["question_id"] = qid
    notes.append(f"question {qid} posed by the lead on the person's behalf")

    # 2. the scout (its raw reply is kept for the locators it gives beside each source)
    notes = stage("scout")
    tick("scout", 0, 1)
    raw: list[str] = []

    def scout_factory(route: dict):
        client = client_factory(route)

        class _Keep:
            def complete(self, *a, **kw):
                out = client.complete(*a, **kw)
                raw.append(getattr(out, "text", "") or "")
                return out

            def close(self):
                if hasattr(client, "close"):
                    client.close()

        return _Keep()

    r = role("scout", f"Find sources that answer: {question}", {"query": question, "question_id": qid}, notes,
             factory=scout_factory)
    tick("scout", 1, 1)
    if r["status"] != "ok":
        return stop("stopped", f"the scout did not finish ({r['status']}): {r.get('error') or r.get('summary')}")
    locators = _scout_locators(raw[-1] if raw else "", r["task_id"])
    proposed = [w["source_id"] for w in r["receipts"] if w.get("type") == "source-proposed" and w.get("ok")]
    if not proposed:
        return stop("stopped", "the scout proposed no source, so there is nothing to verify or cite")

    # 3. bibliographic verification (code)
    notes = stage("bibliographic")
    tick("bibliographic", 0, len(proposed))
    for i, sid in enumerate(proposed, 1):
        role("bibliographic_verifier", f"Check source {sid} against the bibliographic services",
             {"source_id": sid}, notes)
        tick("bibliographic", i, len(proposed))
    state = ledger.fold()
    verified = [s for s in proposed if state.sources[s].verdict == "verified"]
    for s in proposed:
        if s not in verified:
            notes.append(f"{s} is {state.sources[s].verdict or 'unverified'}; it is not used further")

    # 4. full text
    notes = stage("fulltext")
    tick("fulltext", 0, len(verified))
    linked = []
    for i, sid in enumerate(verified, 1):
        src = state.sources[sid]
        loc = locators.get(sid) or (src.identifier if src.kind == "url" else "")
        if not loc:
            notes.append(f"{sid}: skipped, the scout gave no local file or URL for its full text")
        else:
            lr = link_fulltext(ledger, sid, loc, actor=lead, sidecar=sidecar)
            if lr.get("ok"):
                linked.append(sid)
                notes.append(f"{sid}: full text linked ({lr.get('bytes')} bytes, sha256 {lr['sha256'][:12]})")
            else:
                notes.append(f"{sid}: skipped, {lr.get('error')}")
        tick("fulltext", i, len(verified))

    # 5. extraction
    notes = stage("extract")
    tick("extract", 0, len(linked))
    claims: list[str] = []
    for i, sid in enumerate(linked, 1):
        r = role("extractor", f"Extract the claims of {sid} relevant to: {question}",
                 {"source_id": sid, "question_id": qid}, notes)
        claims += [w["claim_id"] for w in r["receipts"] if w.get("type") == "claim-extracted" and w.get("ok")]
        tick("extract", i, len(linked))

    # 6. claim verification
    notes = stage("verify_claims")
    tick("verify_claims", 0, len(claims))
    for i, cid in enumerate(claims, 1):
        role("claim_verifier", f"Judge whether the quoted span supports claim {cid}",
             {"claim_id": cid, "question_id": qid}, notes)
        tick("verify_claims", i, len(claims))

    # 7. the lead's decision from the eligible claims
    notes = stage("decision")
    tick("decision", 0, 1)
    state = ledger.fold()
    eligible, why_not = [], []
    for cid in claims:
        ok, why = is_eligible_for_synthesis(state, cid)
        (eligible if ok else why_not).append(cid if ok else why)
    if not eligible:
        if not verified:
            reason = "no proposed source was verified"
        elif not linked:
            reason = "no verified source had a full text to link"
        elif not claims:
            reason = "the extractor found no claim in the linked full text"
        else:
            reason = "no claim is eligible for synthesis: " + "; ".join(why_not)
        tick("decision", 1, 1)
        return stop("stopped", f"no decision proposed: {reason}")
    payload = {"question": question, "claims": [
        {"claim_id": c, "text": state.claims[c].text, "quote": state.claims[c].span.get("quote"),
         "verdict": state.claims[c].verdict, "source_id": state.claims[c].source_id,
         "source_title": state.sources[state.claims[c].source_id].title} for c in eligible]}
    route = router.route("lead")
    client = client_factory(route)
    try:
        out = client.complete([{"role": "system", "content": f"{_LEAD_PROMPT}\n\n(prompt {PROMPT_VERSION})"},
                               {"role": "user", "content": json.dumps(payload, ensure_ascii=False)}],
                              stream=False, reasoning_effort=route.get("effort") or None,
                              response_format={"type": "json_object"})
    except Exception as exc:  # LLMError and transport failures
        tick("decision", 1, 1)
        return stop("stopped", f"no decision proposed: the lead's model call failed "
                               f"({getattr(exc, 'code', type(exc).__name__)}: {getattr(exc, 'message', exc)})")
    finally:
        if hasattr(client, "close"):
            client.close()
    try:
        dec = _Decision.model_validate(json.loads(_text(getattr(out, "text", "") or "")))
    except (json.JSONDecodeError, ValidationError) as exc:
        tick("decision", 1, 1)
        return stop("stopped", f"no decision proposed: the lead's reply was not a valid decision ({exc})")
    cited = [c for c in dec.claim_ids if c in eligible] or eligible
    did = f"{qid}-d1"
    r = ledger.append("decision-proposed", {"decision_id": did, "question_id": qid, "statement": dec.statement,
                                            "claim_ids": cited, "confidence": dec.confidence,
                                            "limitations": dec.limitations}, lead)
    tick("decision", 1, 1)
    if not r.get("ok"):
        return stop("stopped", f"no decision proposed: the ledger refused it ({r.get('code')}: {r.get('error')})")
    res["decision_id"] = did
    notes.append(f"decision {did} proposed citing {', '.join(cited)}")

    # 8. citation audit
    notes = stage("audit")
    tick("audit", 0, 1)
    role("citation_auditor", f"Audit decision {did}", {"decision_id": did, "question_id": qid}, notes)
    tick("audit", 1, 1)

    # 9. approval request
    notes = stage("approval")
    tick("approval", 0, 1)
    state = ledger.fold()
    ok, why = can_request_human_approval(state, did)
    if not ok:
        tick("approval", 1, 1)
        notes.append(why)
        return stop("blocked", f"decision {did} cannot be put to the person yet: {why}")
    r = ledger.append("human-approval-requested", {"decision_id": did, "revision": state.decisions[did].revision},
                      lead)
    tick("approval", 1, 1)
    if not r.get("ok"):
        return stop("blocked", f"the approval request was refused: {r.get('code')}: {r.get('error')}")
    notes.append(f"approval requested for decision {did}")
    return stop("awaiting_person", f"decision {did} awaits the person: use %ledger explore to decide")
