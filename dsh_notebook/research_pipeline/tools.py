"""The research lead's five tools for ``%%chat --preset research`` (spec: research.md "Running
the roles").

* ``research_delegate`` {role, duty, inputs}: runs one role end to end (``research_pipeline.roles.run_role``)
  and returns a short summary; the role's events are written by the runner under the role's
  authority.
* ``research_ledger_query`` {kind, filter}: a projection of the fold (questions, tasks, sources,
  claims with their eligibility, decisions with their status, objections, escalations, usage).
* ``research_propose_decision`` {decision_id, question_id, statement, claim_ids, confidence,
  limitations, answers}: a proposal (or the next revision of an existing decision) under the
  lead's ``synthesis`` authority; every cited claim must be eligible for synthesis.
* ``research_request_approval`` {decision_id}: ``human-approval-requested`` for the current
  revision (the writer refuses it while objections are open).
* ``research_link_fulltext`` {source_id, locator}: stores the bytes under the sidecar folder
  (``research_pipeline.fulltext.link_fulltext``: public http(s) URLs and files inside the notebook's
  folder only; the tool has no way to lift those rules, ``allow_private`` is not an argument).

Nothing here can make a human actor: the model-facing tools only ever write as the lead or
through ``run_role``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..llm.agent import Tool
from ..research import Actor, Ledger, LedgerState, decision_status, is_eligible_for_synthesis
from ..research.predicates import can_request_human_approval
from .fulltext import link_fulltext
from .roles import MODEL_ROLES, run_role
from .router import Router, tokens_used

__all__ = ["RESEARCH_TOOL_NAMES", "research_tools"]

RESEARCH_TOOL_NAMES = ("research_delegate", "research_ledger_query", "research_propose_decision",
                       "research_request_approval", "research_link_fulltext")
_KINDS = ("questions", "tasks", "sources", "claims", "decisions", "objections", "escalations", "usage")
_ROLES = ("bibliographic_verifier",) + MODEL_ROLES


def _match(row: dict, flt: dict) -> bool:
    return all(row.get(k) == v for k, v in (flt or {}).items())


def _project(state: LedgerState, kind: str) -> list[dict] | dict:
    if kind == "questions":
        return [{"question_id": q.question_id, "text": q.text} for q in state.questions.values()]
    if kind == "tasks":
        return [{"task_id": t.task_id, "role": t.role, "duty": t.duty, "status": t.status,
                 "tier": t.route.get("tier"), "usage": t.usage} for t in state.tasks.values()]
    if kind == "sources":
        return [{"source_id": s.source_id, "kind": s.kind, "identifier": s.identifier, "title": s.title,
                 "year": s.year, "verdict": s.verdict, "fulltext": bool(s.fulltext)} for s in state.sources.values()]
    if kind == "claims":
        out = []
        for c in state.claims.values():
            ok, why = is_eligible_for_synthesis(state, c.claim_id)
            out.append({"claim_id": c.claim_id, "source_id": c.source_id, "text": c.text,
                        "quote": c.span.get("quote"), "verdict": c.verdict, "eligible": ok, "reason": why})
        return out
    if kind == "decisions":
        return [{"decision_id": d.decision_id, "question_id": d.question_id, "revision": d.revision,
                 "statement": d.current["statement"], "claim_ids": d.claim_ids,
                 "status": decision_status(state, d.decision_id)} for d in state.decisions.values()]
    if kind == "objections":
        return [{"objection_id": o.objection_id, "target": o.target, "reason": o.reason, "severity": o.severity,
                 "answers": len(o.answers), "adjudication": o.adjudication.verdict if o.adjudication else None}
                for o in state.objections.values()]
    if kind == "escalations":
        return [{"subject": e.subject, "reason": e.reason, "to": e.to} for e in state.escalations]
    return {"total": state.usage_total(), "by_question": {q: tokens_used(state, q) for q in state.questions}}


def research_tools(ledger: Ledger, *, sidecar: str | Path | None = None,
                   client_factory: Callable[[dict], Any] | None = None, router: Router | None = None) -> list[Tool]:
    """The five lead tools on *ledger* (see module docstring)."""
    lead = Actor("lead")

    def delegate(a: dict) -> dict:
        task_id = f"t{len(ledger.fold().tasks) + 1}-{uuid.uuid4().hex[:6]}"
        res = run_role(ledger, a["role"], a["duty"], a.get("inputs") or {}, client_factory=client_factory,
                       task_id=task_id, router=router, sidecar=sidecar)
        return {k: res.get(k) for k in ("task_id", "role", "status", "summary", "escalated", "error") if
                res.get(k) is not None} | {"ok": res["status"] == "ok"}

    def query(a: dict) -> dict:
        state = ledger.fold()
        rows = _project(state, a["kind"])
        if isinstance(rows, list):
            rows = [r for r in rows if _match(r, a.get("filter") or {})]
            return {"ok": True, "kind": a["kind"], "count": len(rows), "rows": rows[:200]}
        return {"ok": True, "kind": a["kind"], **rows}

    def propose(a: dict) -> dict:
        state = ledger.fold()
        blocked = [why for c in a["claim_ids"] for ok, why in [is_eligible_for_synthesis(state, c)] if not ok]
        if blocked:
            return {"ok": False, "code": "NOT_ELIGIBLE", "error": "; ".join(blocked)}
        data = {k: a[k] for k in ("statement", "claim_ids", "confidence") if k in a}
        data["limitations"] = a.get("limitations", "")
        dec = state.decisions.get(a["decision_id"])
        if dec is None:
            return ledger.append("decision-proposed", {"decision_id": a["decision_id"],
                                                       "question_id": a.get("question_id", ""), **data}, lead)
        return ledger.append("decision-revised", {"decision_id": dec.decision_id, "revision": dec.revision + 1,
                                                  "answers": a.get("answers", []), **data}, lead)

    def request(a: dict) -> dict:
        state = ledger.fold()
        dec = state.decisions.get(a["decision_id"])
        if dec is None:
            return {"ok": False, "code": "LEDGER_REFERENCE", "error": f"no decision {a['decision_id']!r}"}
        ok, why = can_request_human_approval(state, dec.decision_id)
        if not ok:
            return {"ok": False, "code": "LEDGER_STATE", "error": why}
        return ledger.append("human-approval-requested", {"decision_id": dec.decision_id, "revision": dec.revision},
                             lead)

    def link(a: dict) -> dict:
        r = link_fulltext(ledger, a["source_id"], a["locator"], actor=lead, sidecar=sidecar)
        return {k: v for k, v in r.items() if k != "path"}

    s = {"type": "string", "minLength": 1}
    return [
        Tool("research_delegate", "Run one research role end to end (its events are written under the role's "
             "authority) and get a short summary. Inputs by role: scout {query, question_id}; "
             "bibliographic_verifier {source_id}; extractor {source_id, question_id}; claim_verifier {claim_id}; "
             "citation_auditor {decision_id}.",
             {"type": "object", "properties": {"role": {"type": "string", "enum": list(_ROLES)}, "duty": s,
                                               "inputs": {"type": "object"}},
              "required": ["role", "duty"], "additionalProperties": False}, delegate),
        Tool("research_ledger_query", "Read a projection of the ledger: questions, tasks, sources, claims (with "
             "eligibility for synthesis and the reason), decisions (with status), objections, escalations or "
             "usage; filter keeps rows whose fields equal the given values.",
             {"type": "object", "properties": {"kind": {"type": "string", "enum": list(_KINDS)},
                                               "filter": {"type": "object"}},
              "required": ["kind"], "additionalProperties": False}, query),
        Tool("research_propose_decision", "Propose a decision answering a question (or revise an existing one, "
             "listing the objection ids it answers). Every cited claim must be eligible for synthesis.",
             {"type": "object", "properties": {
                 "decision_id": s, "question_id": s, "statement": s,
                 "claim_ids": {"type": "array", "items": s, "minItems": 1},
                 "confidence": {"type": "string", "enum": ["low", "medium", "high"]},
                 "limitations": {"type": "string"}, "answers": {"type": "array", "items": s}},
              "required": ["decision_id", "statement", "claim_ids", "confidence"], "additionalProperties": False},
             propose),
        Tool("research_request_approval", "Ask the person to approve the decision's current revision (refused "
             "while objections are open). Only the person decides.",
             {"type": "object", "properties": {"decision_id": s}, "required": ["decision_id"],
              "additionalProperties": False}, request),
        Tool("research_link_fulltext", "Store a source's full text (a public http(s) URL, or a file inside the "
             "notebook's folder) beside the notebook and record its sha256.",
             {"type": "object", "properties": {"source_id": s, "locator": s}, "required": ["source_id", "locator"],
              "additionalProperties": False}, link),
    ]
