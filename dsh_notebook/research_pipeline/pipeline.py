"""``%ledger ask``: one question run through the research roles in order (spec: research.md
"Running the roles").

``ask(ledger, question, *, client_factory, sidecar, progress=None, router=None)`` runs:

0. before anything is written (``refused``, nothing in the ledger): the question must be
   non-empty and at most ``MAX_QUESTION`` (4,000) characters (:func:`check_question`), and a
   model client must be buildable for every route the run may take, with its credentials
   resolvable (:func:`preflight`: ``ChatClient.check_credentials``, so a missing API key stops
   with ``MISSING_CREDENTIAL`` instead of leaving an unanswered question behind);
1. ``question-posed`` by the lead on the person's behalf;
2. the scout (``run_role("scout")``) proposing sources;
3. the bibliographic verifier (code; a strong-tier model judgment only when the code leaves the
   metadata match undecided) on each proposed source;
4. for each ``verified`` source with a locator the scout gave (a ``locator`` or ``fulltext`` key
   beside the source in its reply, or the identifier of a ``url`` source), the full text linked
   from the local file or URL (skipped with a note when there is none);
5. the extractor on each linked source;
6. the claim verifier on each extracted claim, re-run once when its MODEL verdict is
   ``uncertain`` (the router sends the re-run to the strong tier, reason ``uncertain``); an
   ``uncertain`` from the code's quote check is not re-run, since a re-run cannot find a quote
   that is not in the text;
7. a decision proposed by the lead from the eligible claims (one short model call; a reply that
   is not a valid decision is retried once on the strong tier with the one-line reason, then the
   run stops with that reason and ``escalated`` {subject: the question, reason: invalid_output}),
   or a stop with the reason when no claim is eligible; then each claim the decision cites that has no
   verdict from the strong tier (the fold's tasks: an ``ok`` claim-verifier task whose route's
   tier is ``strong``) is re-verified once on the strong tier (reason ``cited_by_decision``);
8. the citation auditor on the decision, skipped when a re-verified claim is no longer eligible
   (the decision cannot go to the person as it stands; the lead must revise it);
9. ``human-approval-requested`` when ``can_request_human_approval`` holds, else the reason.

Re-runs, the rule: the strong tier's verdict, being the latest, stands; there is no third run and
no loop (at most one re-run per claim: a claim re-run because it was uncertain already has a
strong verdict when the decision cites it). When a strong re-run contradicts a cheap verdict
(one says the span supports the claim, supported or partially_supported, the other that it does
not, unsupported or contradicted; ``uncertain`` contradicts nothing) the runtime records
``escalated`` {subject: the claim, reason: disagreement, to: human}, so the person sees the
conflict; a cited claim the strong tier does not support blocks the approval request with the
predicate's reason. Every re-run is an ordinary ``run_role`` (``task-delegated`` and
``task-completed`` written, usage counted against the question's budget). When a role finds the
budget spent (``escalated`` {reason budget}, written once by ``run_role``, or by the runtime
before the lead's decision call, which is not a delegated role), the pipeline stops there:
``stopped``, or ``blocked`` once a decision exists.

Every write goes through ``run_role``, ``link_fulltext`` or the ledger's own checks (the
disagreement escalation under the runtime's authority); nothing here makes a human actor: the
decision is left awaiting the person. ``progress(stage, done, total)`` is called as each stage
starts (``done`` 0) and after each of its items; a re-run adds one to its stage's total, and the
stage's notes say what was re-run, on which tier and why. No IPython import.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..research.actors import Actor
from ..research.fold import LedgerState
from ..research.ledger import Ledger
from ..research.predicates import can_request_human_approval, is_eligible_for_synthesis
from .fulltext import link_fulltext
from .roles import PROMPT_VERSION, default_client_factory, run_role
from .router import Router, over_budget

__all__ = ["MAX_QUESTION", "STAGES", "ask", "check_question", "preflight"]

#: the longest question accepted (one ledger line, and part of every role's prompt)
MAX_QUESTION = 4000

STAGES: tuple[str, ...] = ("question", "scout", "bibliographic", "fulltext", "extract", "verify_claims",
                           "decision", "audit", "approval")
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


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


def check_question(question: str | None) -> str | None:
    """Why *question* cannot be posed (empty, or over ``MAX_QUESTION`` characters), or ``None``."""
    q = (question or "").strip() if isinstance(question, str) or question is None else None
    if q is None:
        return f"the question must be text, not {type(question).__name__}"
    if not q:
        return "no question: write %ledger ask \"your question\""
    if len(q) > MAX_QUESTION:
        return f"the question is {len(q):,} characters long (at most {MAX_QUESTION:,}); ask it in fewer words"
    return None


def preflight(client_factory: Callable[[dict], Any] | None = None, router: Router | None = None) -> str | None:
    """Why no model can be asked (``CODE: message``, e.g. ``MISSING_CREDENTIAL``), or ``None``:
    a client is built for each distinct route of the run (cheap, strong, the lead's) and, when it
    offers ``check_credentials()``, its key is looked up. No request is made."""
    client_factory = client_factory or default_client_factory
    router = router or Router()
    routes: dict[tuple[Any, Any], dict] = {}
    for r in (router.route("scout"), router.route("scout", escalate_reason="invalid_output"), router.route("lead")):
        routes.setdefault((r.get("provider"), r.get("model")), r)
    for route in routes.values():
        client = None
        try:
            client = client_factory(route)
            check = getattr(client, "check_credentials", None)
            if callable(check):
                check()
        except Exception as exc:  # noqa: BLE001 - LLMError or a pluggable factory's own
            code = getattr(exc, "code", type(exc).__name__)
            return f"{code}: {getattr(exc, 'message', exc)}"
        finally:
            if client is not None and hasattr(client, "close"):
                client.close()
    return None


def _one_line(exc: Exception) -> str:
    """A reply's validation failure in one line (as ``roles._parse`` words it)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"the reply is not a JSON object ({exc.msg} at position {exc.pos})"
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or '(reply)'}: {e['msg']}" for e in exc.errors())
    return " ".join(str(exc).split())


def _next_question_id(ledger: Ledger) -> str:
    have = ledger.fold().questions
    n = len(have) + 1
    while f"q{n}" in have:
        n += 1
    return f"q{n}"


_SUPPORTS = {"supported": True, "partially_supported": True, "unsupported": False, "contradicted": False}


def _contradicts(a: str | None, b: str | None) -> bool:
    """One verdict says the span supports the claim and the other that it does not."""
    return a in _SUPPORTS and b in _SUPPORTS and _SUPPORTS[a] != _SUPPORTS[b]


def _has_strong_verdict(state: LedgerState, claim_id: str) -> bool:
    """Whether a claim-verifier task on the strong tier completed ``ok`` for *claim_id*."""
    return any(t.role == "claim_verifier" and t.inputs.get("claim_id") == claim_id and t.status == "ok"
               and (t.route or {}).get("tier") == "strong" for t in state.tasks.values())


class _BudgetSpent(Exception):
    """A role found the question's budget spent (``run_role`` wrote the escalation)."""


def ask(ledger: Ledger, question: str, *, client_factory: Callable[[dict], Any] | None = None,
        sidecar: str | os.PathLike[str] | None = None,
        progress: Callable[[str, int, int], None] | None = None, router: Router | None = None) -> dict:
    """Run the pipeline (see module docstring). Returns ``{"question_id", "decision_id", "status",
    "message", "stages": [{"stage", "notes"}], "reruns": [...]}`` (each re-run ``{"claim_id", "why"
    (uncertain or cited_by_decision), "tier", "reason" (the router's), "verdict", "status"}``);
    ``status`` is ``awaiting_person`` (approval requested), ``blocked`` (a decision the predicates,
    or the spent budget, keep from the person), ``stopped`` (no decision) or ``refused`` (the
    question itself could not be recorded: empty, over ``MAX_QUESTION``, no usable model
    credentials, or the ledger refused it; nothing was written)."""
    refusal = check_question(question)
    question = question.strip() if isinstance(question, str) else ""
    client_factory = client_factory or default_client_factory
    router = router or Router()
    sidecar = Path(sidecar) if sidecar is not None else None
    lead = Actor("lead")
    tick = progress or (lambda stage, done, total: None)
    res: dict[str, Any] = {"question_id": None, "decision_id": None, "status": None, "message": "", "stages": [],
                           "reruns": []}
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

    def role(name: str, duty: str, inputs: dict, notes: list[str], factory: Callable[[dict], Any] | None = None,
             label: str = "") -> dict:
        r = run_role(ledger, name, duty, inputs, client_factory=factory or client_factory, task_id=task_id(),
                     router=router, sidecar=sidecar)
        summary = r.get("summary") or r.get("error") or r["status"]
        if label:  # a re-run: say on which tier and why
            tier, reason = (r.get("route") or {}).get("tier"), r.get("escalate_reason")
            label += (f" on the {tier} tier" if tier else "") + (f" ({reason})" if reason else "")
        notes.append(f"{label}: {summary}" if label else summary)
        if r["status"] == "over_budget":
            raise _BudgetSpent(r.get("error") or "the question's token budget is spent")
        return r

    def rerun(cid: str, why: str, duty: str, notes: list[str]) -> dict:
        """One strong-tier re-run of the claim verifier (``risk_reason`` routes it)."""
        before = ledger.fold().claims[cid].verdict
        r = role("claim_verifier", duty, {"claim_id": cid, "question_id": res["question_id"]}, notes,
                 label=f"{cid} re-run")
        tier = (r.get("route") or {}).get("tier")
        res["reruns"].append({"claim_id": cid, "why": why, "tier": tier, "reason": r.get("escalate_reason"),
                              "verdict": r.get("verdict"), "status": r["status"]})
        if r.get("verdict_by") == "model" and tier == "strong" and _contradicts(before, r.get("verdict")):
            e = ledger.append("escalated", {"subject": {"kind": "claim", "id": cid}, "reason": "disagreement",
                                            "to": "human"}, Actor("runtime"))
            notes.append(f"{cid}: the strong tier ({r['verdict']}) contradicts the earlier verdict ({before}); "
                         + ("escalated to the person (disagreement)" if e.get("ok") else
                            f"the escalation was refused ({e.get('code')}: {e.get('error')})"))
        return r

    def stages() -> dict:
        """Stages 2-9 (raises ``_BudgetSpent`` when a role finds the budget spent)."""
        # 2. the scout (its raw reply is kept for the locators it gives beside each source)
        notes = stage("scout")
        tick("scout", 0, 1)
        raw: list[str] = []

        def scout_factory(route: dict) -> Any:
            client = client_factory(route)

            class _Keep:
                def complete(self, *a: Any, **kw: Any) -> Any:
                    out = client.complete(*a, **kw)
                    raw.append(getattr(out, "text", "") or "")
                    return out

                def close(self) -> None:
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

        # 3. bibliographic verification (code; a model judgment only when the code needs one)
        notes = stage("bibliographic")
        tick("bibliographic", 0, len(proposed))
        for i, sid in enumerate(proposed, 1):
            role("bibliographic_verifier", f"Check source {sid} against the bibliographic services",
                 {"source_id": sid, "question_id": qid}, notes)
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

        # 6. claim verification, an uncertain model verdict re-run once (strong tier)
        notes = stage("verify_claims")
        total, n = len(claims), 0
        tick("verify_claims", 0, total)
        for cid in claims:
            r = role("claim_verifier", f"Judge whether the quoted span supports claim {cid}",
                     {"claim_id": cid, "question_id": qid}, notes)
            n += 1
            if r["status"] == "ok" and r.get("verdict") == "uncertain" and r.get("verdict_by") == "model":
                total += 1
                tick("verify_claims", n, total)
                rerun(cid, "uncertain", f"Judge again whether the quoted span supports claim {cid} "
                                        "(the first verdict was uncertain)", notes)
                n += 1
            tick("verify_claims", n, total)

        # 7. the lead's decision from the eligible claims
        notes = stage("decision")
        tick("decision", 0, 1)
        state = ledger.fold()
        eligible: list[str] = []
        why_not: list[str] = []
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
        spent, why = over_budget(state, qid, router.budget_tokens)
        if spent:  # the lead's call is not a delegated role, so the runner checks the budget itself
            ledger.append("escalated", {"subject": {"kind": "question", "id": qid}, "reason": "budget"},
                          Actor("runtime"))
            tick("decision", 1, 1)
            notes.append(f"not run: {why}; escalated to the person")
            raise _BudgetSpent(why)
        payload = {"question": question, "claims": [
            {"claim_id": c, "text": state.claims[c].text, "quote": state.claims[c].span.get("quote"),
             "verdict": state.claims[c].verdict, "source_id": state.claims[c].source_id,
             "source_title": state.sources[state.claims[c].source_id].title} for c in eligible]}
        messages = [{"role": "system", "content": f"{_LEAD_PROMPT}\n\n(prompt {PROMPT_VERSION})"},
                    {"role": "user", "content": json.dumps(payload, ensure_ascii=False)}]
        dec, why = None, ""
        for attempt in (1, 2):  # an invalid reply is retried once, on the strong tier
            route = router.route("lead", escalate_reason="invalid_output" if attempt == 2 else None)
            client = client_factory(route)
            try:
                out = client.complete(messages, stream=False, reasoning_effort=route.get("effort") or None,
                                      response_format={"type": "json_object"})
            except Exception as exc:  # noqa: BLE001 - LLMError, transport or a pluggable client's own
                tick("decision", 1, 1)
                return stop("stopped", f"no decision proposed: the lead's model call failed "
                                       f"({getattr(exc, 'code', type(exc).__name__)}: {getattr(exc, 'message', exc)})")
            finally:
                if hasattr(client, "close"):
                    client.close()
            text = getattr(out, "text", "") or ""
            try:
                dec = _Decision.model_validate(json.loads(_text(text)))
                break
            except (json.JSONDecodeError, ValidationError) as exc:
                why = _one_line(exc)
                notes.append(f"the lead's reply was not a valid decision ({why})"
                             + ("; retried once on the strong tier" if attempt == 1 else ""))
                messages = messages + [{"role": "assistant", "content": text},
                                       {"role": "user", "content": f"Your reply was invalid: {why}. Reply again with "
                                                                  "one JSON object {\"statement\", \"claim_ids\", "
                                                                  "\"confidence\", \"limitations\"} and nothing else."}]
        if dec is None:
            e = ledger.append("escalated", {"subject": {"kind": "question", "id": qid}, "reason": "invalid_output",
                                            "to": "human"}, Actor("runtime"))
            tick("decision", 1, 1)
            return stop("stopped", f"no decision proposed: the lead's reply was not a valid decision twice ({why})"
                        + ("; escalated to the person" if e.get("ok") else ""))
        cited = [c for c in dec.claim_ids if c in eligible] or eligible
        did = f"{qid}-d1"
        r = ledger.append("decision-proposed", {"decision_id": did, "question_id": qid, "statement": dec.statement,
                                                "claim_ids": cited, "confidence": dec.confidence,
                                                "limitations": dec.limitations}, lead)
        if not r.get("ok"):
            tick("decision", 1, 1)
            return stop("stopped", f"no decision proposed: the ledger refused it ({r.get('code')}: {r.get('error')})")
        res["decision_id"] = did
        notes.append(f"decision {did} proposed citing {', '.join(cited)}")
        # cited claims with verdicts from the cheap tier only: once more on the strong tier
        state = ledger.fold()
        recheck = [c for c in cited if not _has_strong_verdict(state, c)]
        tick("decision", 1, 1 + len(recheck))
        for i, cid in enumerate(recheck, 2):
            rerun(cid, "cited_by_decision", f"Judge again, on the strong tier, whether the quoted span supports claim "
                                            f"{cid}, which decision {did} cites", notes)
            tick("decision", i, 1 + len(recheck))
        state = ledger.fold()
        lost = [why for c in cited for ok, why in [is_eligible_for_synthesis(state, c)] if not ok]

        # 8. citation audit (not while a cited claim is no longer eligible)
        notes = stage("audit")
        tick("audit", 0, 1)
        if lost:
            notes.append(f"audit skipped: decision {did} cites a claim that is no longer eligible after its "
                         "strong-tier re-run, so it cannot go to the person as it stands (" + "; ".join(lost) + ")")
        else:
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

    # 1. the question
    notes = stage("question")
    tick("question", 0, 1)
    if refusal:
        return stop("refused", refusal)
    refusal = preflight(client_factory, router)
    if refusal:
        return stop("refused", f"no model can be asked, so nothing was recorded: {refusal}")
    qid = _next_question_id(ledger)
    r = ledger.append("question-posed", {"question_id": qid, "text": question}, lead)
    tick("question", 1, 1)
    if not r.get("ok"):
        return stop("refused", f"the question was not recorded: {r.get('code')}: {r.get('error')}")
    res["question_id"] = qid
    notes.append(f"question {qid} posed by the lead on the person's behalf")
    try:
        return stages()
    except _BudgetSpent as exc:
        status = "blocked" if res["decision_id"] else "stopped"
        what = f"decision {res['decision_id']} cannot be put to the person" if res["decision_id"] else \
            "no decision proposed"
        return stop(status, f"{what}: {exc}; the pipeline stopped and the budget was escalated to the person")
