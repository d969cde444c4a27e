"""Running one research role end to end (spec: research.md "Roles and authorities", "Running
the roles").

Design:

- Role prompts are ours, versioned ``PROMPT_VERSION`` (``research-roles/2``: /2 added the
  bibliographic verifier's judgment prompt, the other prompts are unchanged since /1); each
  model role has a pydantic output schema (``OUTPUT_MODELS``) whose JSON Schema is sent with the
  prompt.
- ``run_role(ledger, role, duty, inputs, *, client_factory, task_id)``:
  1. over the question's token budget (``inputs.question_id``): ``escalated`` {reason budget}
     by the runtime, nothing delegated, no model call;
  2. ``task-delegated`` under the lead's authority, with the router's route (the strong tier
     when the ledger gives a risk reason, see ``router.risk_reason``);
  3. the role's work: the bibliographic verifier is code (``check_source``), see below; the
     claim verifier first checks in code that the quote is in the stored fulltext and records
     ``uncertain`` with the reason, without a model call, when it is not; the model roles get one
     request (no tools, a JSON reply), validated with pydantic and retried once on the strong
     tier when invalid;
  4. the role's events written by the runner under the ROLE's authority (the model never writes);
  5. ``task-completed`` by the runtime with ``ok``, ``invalid_output`` (plus ``escalated``
     {reason invalid_output}) or ``failed``, and the provider-reported usage summed over requests.
- The bibliographic verifier runs the code check before it is delegated, so the delegation
  carries the route it really takes: tier ``code`` when the code decided, the strong tier with
  reason ``needs_judgment`` when ``check_source`` left the claimed metadata's match undecided
  (no other reason routes it: it asks no model otherwise).
  Then the model is asked, with the claimed metadata, the resolved metadata and the code's
  checks, only whether they describe the same work (``BibliographicJudgment``: verified,
  mismatch or inconclusive, and a rationale). The code's notices always win: the model's answer
  becomes the verdict only when the code's verdict is ``verified`` or ``mismatch``; a
  ``retracted``, ``withdrawn``, ``corrected`` or ``expression_of_concern`` verdict stands. ONE
  ``source-verified`` is written, its checks the code's plus ``model_judgment`` (the model's
  verdict and rationale), its actor carrying the model and prompt version. A model that answers
  invalidly twice (or cannot be reached) leaves the code's verdict, ``inconclusive`` when the
  match was undecided, with ``invalid_output`` and ``escalated`` (or ``failed``).
- The result reports ``verdict`` and ``verdict_by`` (``code`` or ``model``) for the two
  verifiers, and ``escalate_reason`` (why the route is strong, or ``None``), so the pipeline can
  tell an uncertain model verdict from a failed quote check.
- ``client_factory(route) -> client`` with ``complete(messages, stream=False, **params)``
  returning a result with ``.text`` and ``.usage`` (``ChatClient`` by default).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..llm.client import ChatClient
from ..research.actors import Actor
from ..research.claims import fulltext_path, quote_in_fulltext, sidecar_of, stored_text
from ..research.fold import LedgerState, Source
from ..research.ledger import Ledger
from .router import Router, over_budget, risk_reason

__all__ = ["MODEL_ROLES", "NOTICE_VERDICTS", "OUTPUT_MODELS", "PROMPT_VERSION", "ROLE_PROMPTS",
           "default_client_factory", "run_role"]

PROMPT_VERSION = "research-roles/2"
CONTEXT_CHARS = 60_000  # fulltext handed to the extractor / claim verifier


# ----------------------------------------------------------------------------- output schemas


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


class ProposedSource(_Out):
    kind: Literal["doi", "arxiv", "pmid", "isbn", "url"]
    identifier: str = Field(min_length=1)
    title: str = ""
    authors: list[str] = Field(default_factory=list)
    year: int | None = None


class ScoutOutput(_Out):
    sources: list[ProposedSource]


class ExtractedClaim(_Out):
    text: str = Field(min_length=1)
    quote: str = Field(min_length=1)
    locator: str = ""


class ExtractorOutput(_Out):
    claims: list[ExtractedClaim]


class ClaimVerdict(_Out):
    verdict: Literal["supported", "partially_supported", "unsupported", "contradicted", "uncertain"]
    rationale: str = Field(min_length=1)


class AuditTarget(_Out):
    kind: Literal["decision", "claim", "source"]
    id: str = Field(min_length=1)


class AuditObjection(_Out):
    target: AuditTarget
    reason: str = Field(min_length=1)
    severity: Literal["minor", "major", "critical"] = "major"


class AuditOutput(_Out):
    verdict: Literal["pass", "objections"]
    objections: list[AuditObjection] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> AuditOutput:
        if self.verdict == "pass" and self.objections:
            raise ValueError("verdict 'pass' lists no objections")
        if self.verdict == "objections" and not self.objections:
            raise ValueError("verdict 'objections' needs at least one objection")
        return self


class BibliographicJudgment(_Out):
    """Whether the claimed and the resolved metadata describe the same work."""

    verdict: Literal["verified", "mismatch", "inconclusive"]
    rationale: str = Field(min_length=1)


OUTPUT_MODELS: dict[str, type[_Out]] = {
    "scout": ScoutOutput,
    "extractor": ExtractorOutput,
    "claim_verifier": ClaimVerdict,
    "citation_auditor": AuditOutput,
    "bibliographic_verifier": BibliographicJudgment,  # asked only when the code needs judgment
}
#: roles that are a model call (the bibliographic verifier is code that may ask for a judgment)
MODEL_ROLES = ("scout", "extractor", "claim_verifier", "citation_auditor")
#: bibliographic verdicts read from notices: a model's judgment never changes them
NOTICE_VERDICTS = ("retracted", "withdrawn", "expression_of_concern", "corrected")
_JUDGMENT_OK = {"verified": True, "mismatch": False, "inconclusive": None}

_COMMON = """\
You are one role in an evidence review. You do not write to the evidence ledger: you return one \
JSON object, matching the JSON Schema below exactly, and nothing else (no prose, no code fence). \
The runner checks it and records it under your role's authority. Never invent identifiers, \
quotes or numbers; when you cannot do the duty, return what the schema allows for "nothing found" \
or "uncertain"."""

ROLE_PROMPTS: dict[str, str] = {
    "scout": """\
Role: scout (authority: discovery). Propose candidate sources for the duty: each with its \
identifier kind (doi, arxiv, pmid, isbn, url), the identifier exactly as published, and the title, \
authors and year as you believe them, and, when you know one, a "locator": the URL (or local \
path) of the full text. You only propose; a verifier checks every source against the \
bibliographic services, so do not claim a source is verified, correct or retracted.""",
    "extractor": """\
Role: extractor (authority: evidence_extraction). From the source's full text given below, \
extract the claims relevant to the duty. Each claim has a short text in your words, a quote \
copied VERBATIM from the full text (one or two sentences, no ellipsis) and a locator (section, \
page or paragraph). A quote that is not in the text will be rejected by code. Give no verdicts.""",
    "claim_verifier": """\
Role: claim verifier (authority: claim_verification). Judge whether the quoted span, read in the \
context given, supports the claim: supported, partially_supported, unsupported, contradicted or \
uncertain, with a short rationale naming what in the span decides it. Do not rewrite the claim or \
the quote.""",
    "citation_auditor": """\
Role: citation auditor (authority: review). Audit the decision below: does every sentence of its \
statement follow from the claims it cites, with their verdicts and spans? Are limitations stated? \
Return verdict "pass", or "objections" with one objection per problem (target: the decision, a \
claim or a source by id; the reason; severity minor, major or critical). You raise objections; \
you never accept or reject the decision.""",
    "bibliographic_verifier": """\
Role: bibliographic verifier (authority: bibliographic_verification). Code has already resolved \
the identifier and compared it with what was claimed, but could not decide whether the two \
describe the same work (for example a title that is close but not the same, or a record without \
authors). You get the claimed metadata, the resolved record and the code's checks. Answer only \
this: are they the same work? "verified" if they are (a reworded, translated or abbreviated \
title of the same paper counts), "mismatch" if they are different works (another paper, a \
different edition or a notice instead of the work), "inconclusive" if the metadata cannot tell. \
Give a short rationale naming what decides it. Retraction, correction and concern notices are \
read by code and are not yours to judge.""",
}


def _system(role: str) -> str:
    schema = json.dumps(OUTPUT_MODELS[role].model_json_schema(), ensure_ascii=False)
    return f"{_COMMON}\n\n{ROLE_PROMPTS[role]}\n\nJSON Schema of your reply:\n{schema}\n\n(prompt {PROMPT_VERSION})"


# ----------------------------------------------------------------------------- helpers


def default_client_factory(route: dict) -> ChatClient:
    """A ``ChatClient`` for the route's model, without academic mode's hooks."""
    return ChatClient(model=f"{route['provider']}/{route['model']}" if route.get("provider") else route.get("model"),
                      hooks=[])


def _flat_usage(usage: Any, into: dict) -> dict:
    for k, v in (usage or {}).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            into[k] = into.get(k, 0) + v
    return into


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _parse(role: str, text: str) -> tuple[_Out | None, str]:
    m = _FENCE.match(text or "")
    raw = m.group(1) if m else (text or "")
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"the reply is not a JSON object ({exc.msg} at position {exc.pos})"
    try:
        return OUTPUT_MODELS[role].model_validate(obj), ""
    except ValidationError as exc:
        return None, "; ".join(f"{'.'.join(map(str, e['loc'])) or '(reply)'}: {e['msg']}" for e in exc.errors())


def _fulltext_of(state: LedgerState, source_id: str, sidecar: Path) -> str:
    src = state.sources.get(source_id)
    if src is None or src.fulltext is None:
        return ""
    path = fulltext_path(sidecar, src.fulltext["sha256"])
    if path is None:
        return ""
    text, _ = stored_text(path, src.fulltext.get("media_type") or "")
    return (text or "")[:CONTEXT_CHARS]


def _context(role: str, state: LedgerState, inputs: dict, sidecar: Path) -> dict:
    """What the role sees besides its duty and inputs (read from the fold, never from the model)."""
    if role == "extractor":
        return {"fulltext": _fulltext_of(state, str(inputs.get("source_id", "")), sidecar)}
    if role == "claim_verifier":
        c = state.claims[inputs["claim_id"]]
        return {"claim": c.text, "span": {"locator": c.span.get("locator"), "quote": c.span.get("quote")},
                "fulltext": _fulltext_of(state, c.source_id, sidecar)[:20_000]}
    if role == "citation_auditor":
        d = state.decisions[inputs["decision_id"]]
        cur = d.current
        claims = [{"claim_id": c, "text": state.claims[c].text, "quote": state.claims[c].span.get("quote"),
                   "verdict": state.claims[c].verdict, "source_id": state.claims[c].source_id,
                   "source_verdict": state.sources[state.claims[c].source_id].verdict}
                  for c in cur["claim_ids"] if c in state.claims]
        return {"decision": {"decision_id": d.decision_id, "revision": d.revision, "statement": cur["statement"],
                             "confidence": cur["confidence"], "limitations": cur["limitations"]}, "claims": claims}
    return {}


def _precondition(role: str, state: LedgerState, inputs: dict) -> str | None:
    need = {"extractor": ("source_id", "sources"), "claim_verifier": ("claim_id", "claims"),
            "citation_auditor": ("decision_id", "decisions"), "bibliographic_verifier": ("source_id", "sources")}
    if role in need:
        key, coll = need[role]
        if str(inputs.get(key, "")) not in getattr(state, coll):
            return f"role {role} needs inputs.{key} naming one of the ledger's {coll}; got {inputs.get(key)!r}"
    return None


def _events_for(role: str, out: _Out, state: LedgerState, inputs: dict, task_id: str) -> list[tuple[str, dict]]:
    """The role's events built by the runner from the validated output."""
    if role == "scout":
        assert isinstance(out, ScoutOutput)  # OUTPUT_MODELS[role] validated it
        return [("source-proposed", {"source_id": f"{task_id}-s{i}", "kind": s.kind, "identifier": s.identifier,
                                     "title": s.title, "authors": s.authors, "year": s.year,
                                     "query": str(inputs.get("query") or "")})
                for i, s in enumerate(out.sources, 1)]
    if role == "extractor":
        assert isinstance(out, ExtractorOutput)
        src = state.sources[inputs["source_id"]]
        sha = src.fulltext["sha256"] if src.fulltext else None
        return [("claim-extracted", {"claim_id": f"{task_id}-c{i}", "source_id": src.source_id, "text": c.text,
                                     "span": {"locator": c.locator, "quote": c.quote, "fulltext_sha256": sha}})
                for i, c in enumerate(out.claims, 1)]
    if role == "claim_verifier":
        assert isinstance(out, ClaimVerdict)
        return [("claim-verified", {"claim_id": inputs["claim_id"], "verdict": out.verdict,
                                    "rationale": out.rationale})]
    if role == "citation_auditor":
        assert isinstance(out, AuditOutput)
        dec = state.decisions[inputs["decision_id"]]
        evs: list[tuple[str, dict[str, Any]]]
        evs = [("objection-raised", {"objection_id": f"{task_id}-o{i}", "target": o.target.model_dump(),
                                     "reason": o.reason, "severity": o.severity})
               for i, o in enumerate(out.objections, 1)]
        evs.append(("review-verdict-recorded", {"decision_id": dec.decision_id, "revision": dec.revision,
                                                "verdict": out.verdict,
                                                "objection_ids": [d["objection_id"] for _, d in evs]}))
        return evs
    raise ValueError(role)


def _judgment_payload(duty: str, inputs: dict, src: Source, found: dict) -> dict:
    """What the model sees for a bibliographic judgment (claimed, resolved, the code's checks)."""
    meta = found.get("metadata") or {}
    keep = ("title", "authors", "year", "years", "container", "doi", "type", "publisher", "arxiv_id", "version",
            "journal_ref", "comment", "pmid", "publication_types")
    return {"duty": duty, "inputs": inputs,
            "claimed": {"kind": src.kind, "identifier": src.identifier, "title": src.title, "authors": src.authors,
                        "year": src.year},
            "resolved": {"service": (found.get("resolver") or {}).get("service"), "kind": found.get("kind"),
                         "identifier": found.get("identifier"),
                         **{k: meta[k] for k in keep if meta.get(k) not in (None, "", [])}},
            "checks": found.get("checks") or [],
            "code_verdict": found.get("verdict")}


# ----------------------------------------------------------------------------- the runner


def run_role(ledger: Ledger, role: str, duty: str, inputs: dict | None = None, *,
             client_factory: Callable[[dict], Any] | None = None, task_id: str, router: Router | None = None,
             sidecar: str | os.PathLike[str] | None = None, escalate_reason: str | None = None) -> dict:
    """Run *role* once for *duty* (see module docstring). Returns ``{"task_id", "role", "status",
    "route", "usage", "receipts": [...], "escalated": reason|None, "escalate_reason", "error"?,
    "summary"}`` (the verifiers add ``verdict`` and ``verdict_by``); ``status`` is ``ok``,
    ``invalid_output``, ``failed``, ``over_budget`` or ``refused`` (the delegation itself was
    refused; nothing else written)."""
    inputs = dict(inputs or {})
    client_factory = client_factory or default_client_factory
    router = router or Router()
    sidecar = Path(sidecar) if sidecar is not None else sidecar_of(ledger)
    lead, runtime = Actor("lead"), Actor("runtime")
    state = ledger.fold()
    res: dict[str, Any] = {"task_id": task_id, "role": role, "status": None, "route": None, "usage": {},
                           "receipts": [], "escalated": None, "escalate_reason": None}

    def done(summary: str) -> dict:
        res["summary"] = summary
        return res

    qid = inputs.get("question_id")
    if qid is not None:
        over, why = over_budget(state, str(qid), router.budget_tokens)
        if over:
            r = ledger.append("escalated", {"subject": {"kind": "question", "id": str(qid)}, "reason": "budget"},
                              runtime)
            res.update(status="over_budget", escalated="budget", error=why)
            res["receipts"].append(r)
            return done(f"not run: {why}; escalated to the person")
    if role not in MODEL_ROLES and role != "bibliographic_verifier":
        res.update(status="refused", error=f"role {role!r} cannot be delegated; delegate one of "
                                           f"{', '.join(('bibliographic_verifier',) + MODEL_ROLES)}")
        return done(res["error"])
    problem = _precondition(role, state, inputs)
    if problem:
        res.update(status="refused", error=problem)
        return done(problem)

    # -- the bibliographic verifier: the code check first; its result decides the route
    found: dict | None = None
    failure = ""
    if role == "bibliographic_verifier":
        from .bibliographic import check_source

        src = state.sources[inputs["source_id"]]
        claimed = {"title": src.title, "authors": src.authors, "year": src.year}
        try:
            found = check_source(src.identifier, claimed, kind=src.kind, cache_dir=sidecar / "cache" / "bibliographic")
        except Exception as exc:  # noqa: BLE001 - IdentifierError or anything unexpected: the task fails
            failure = f"{type(exc).__name__}: {exc}"
        reason = "needs_judgment" if found and found.get("needs_judgment") else None
    else:
        reason = escalate_reason or risk_reason(state, role, inputs)
    route = router.route(role, escalate_reason=reason)
    res.update(route=route, escalate_reason=reason)
    r = ledger.append("task-delegated", {"task_id": task_id, "role": role, "duty": duty, "inputs": inputs,
                                         "route": route, "budget": {"tokens": router.budget_tokens}}, lead)
    res["receipts"].append(r)
    if not r.get("ok"):
        res.update(status="refused", error=f"{r['code']}: {r['error']}")
        return done(f"delegation refused: {res['error']}")

    def complete(status: str) -> None:
        res["status"] = status
        res["receipts"].append(ledger.append("task-completed", {"task_id": task_id, "status": status,
                                                                "usage": res["usage"]}, runtime))

    def escalate_invalid() -> None:
        res["receipts"].append(ledger.append("escalated", {"subject": {"kind": "task", "id": task_id},
                                                           "reason": "invalid_output"}, runtime))
        res["escalated"] = "invalid_output"

    def write(events: list[tuple[str, dict]], actor: Actor) -> list[dict]:
        out = []
        for t, d in events:
            rec = ledger.append(t, d, actor)
            out.append({"type": t, **{k: v for k, v in d.items() if k.endswith("_id") or k == "verdict"}, **rec})
        res["receipts"].extend(out)
        return out

    def ask_model(messages: list[dict]) -> tuple[_Out | None, str, dict, str]:
        """One request, validated; one retry on the strong tier. ``(output, why_invalid, route,
        transport_error)``; usage is summed into ``res`` whatever happens."""
        out, why, cur = None, "", route
        for attempt in (1, 2):
            if attempt == 2:
                cur = router.route(role, escalate_reason="invalid_output")
                res["retry_route"] = cur
            client = client_factory(cur)
            try:
                result = client.complete(messages, stream=False, reasoning_effort=cur.get("effort") or None,
                                         response_format={"type": "json_object"})
            except Exception as exc:  # noqa: BLE001 - LLMError, transport failures or a pluggable client's own
                return None, "", cur, f"{getattr(exc, 'code', type(exc).__name__)}: {getattr(exc, 'message', exc)}"
            finally:
                if hasattr(client, "close"):
                    client.close()
            _flat_usage(getattr(result, "usage", None), res["usage"])
            out, why = _parse(role, result.text or "")
            if out is None and getattr(result, "truncated", False):
                why = f"{result.truncation_notice()} ({why})"
            if out is not None:
                break
            messages = messages + [{"role": "assistant", "content": result.text or ""},
                                   {"role": "user", "content": f"Your reply was invalid: {why}. Reply again with one "
                                                              "JSON object matching the schema, and nothing else."}]
        return out, why, cur, ""

    # -- the bibliographic verifier: code, and a model judgment only when the code needs one
    if role == "bibliographic_verifier":
        src = state.sources[inputs["source_id"]]
        if found is None:
            res["error"] = failure
            complete("failed")
            return done(f"bibliographic check of {src.source_id} failed: {failure}")
        svc = str(found.get("resolver", {}).get("service") or "")
        code_verdict = found["verdict"]

        def verified(verdict: str, checks: list[dict], actor: Actor, by: str) -> bool:
            res.update(verdict=verdict, verdict_by=by)
            written = write([("source-verified", {"source_id": src.source_id, "verdict": verdict, "checks": checks,
                                                  "metadata": found["metadata"], "resolver": svc})], actor)
            return all(w["ok"] for w in written)

        if not found.get("needs_judgment"):
            ok = verified(code_verdict, found["checks"], Actor("bibliographic_verifier"), "code")
            complete("ok" if ok else "failed")
            return done(f"source {src.source_id}: {code_verdict}")
        fallback = code_verdict if code_verdict in NOTICE_VERDICTS else "inconclusive"
        messages = [{"role": "system", "content": _system(role)},
                    {"role": "user", "content": json.dumps(_judgment_payload(duty, inputs, src, found),
                                                           ensure_ascii=False)}]
        out, why, cur, err = ask_model(messages)
        if out is None:
            res["error"] = err or why
            what = f"the model could not be asked ({err})" if err else f"the model's reply was invalid twice ({why})"
            check: dict[str, Any] = {"name": "model_judgment", "ok": None,
                     "detail": f"{what}; the code's verdict stands: {fallback}"
                               + (" (the match was left undecided)" if fallback != code_verdict else "")}
            verified(fallback, found["checks"] + [check], Actor("bibliographic_verifier"), "code")
            if err:
                complete("failed")
                return done(f"source {src.source_id}: {fallback}; the judgment failed: {err}")
            complete("invalid_output")
            escalate_invalid()
            return done(f"source {src.source_id}: {fallback}; the model's judgment was invalid twice ({why}); "
                        "escalated to the person")
        assert isinstance(out, BibliographicJudgment)  # OUTPUT_MODELS[role] validated it
        final = code_verdict if code_verdict in NOTICE_VERDICTS else out.verdict
        check = {"name": "model_judgment", "ok": _JUDGMENT_OK[out.verdict],
                 "detail": f"{out.verdict} (same work? asked of {cur['model']}, prompt {PROMPT_VERSION}): "
                           f"{out.rationale}"
                           + (f"; the notices' verdict {code_verdict!r} stands" if final != out.verdict else "")}
        ok = verified(final, found["checks"] + [check],
                      Actor(role, model=cur["model"] or None, prompt_version=PROMPT_VERSION), "model")
        complete("ok" if ok else "failed")
        return done(f"source {src.source_id}: {final} (the code needed judgment; the model on the {cur['tier']} "
                    f"tier judged {out.verdict})")

    # -- the claim verifier's code check
    if role == "claim_verifier":
        ok, why = quote_in_fulltext(state, inputs["claim_id"], sidecar=sidecar)
        res["quote_check"] = why
        if not ok:
            write([("claim-verified", {"claim_id": inputs["claim_id"], "verdict": "uncertain",
                                       "rationale": f"quote check (code): {why}"})],
                  Actor("claim_verifier", prompt_version=PROMPT_VERSION))
            res.update(verdict="uncertain", verdict_by="code")
            complete("ok")
            return done(f"claim {inputs['claim_id']}: uncertain without a model call ({why})")

    # -- model roles
    payload = {"duty": duty, "inputs": inputs, **_context(role, state, inputs, sidecar)}
    messages = [{"role": "system", "content": _system(role)},
                {"role": "user", "content": json.dumps(payload, ensure_ascii=False)}]
    out, why, cur, err = ask_model(messages)
    if err:  # the task failed, nothing else written
        res["error"] = err
        complete("failed")
        return done(f"{role} failed: {err}")
    if out is None:
        res["error"] = why
        complete("invalid_output")
        escalate_invalid()
        return done(f"{role}: invalid output twice ({why}); escalated to the person")
    actor = Actor(role, model=cur["model"] or None, prompt_version=PROMPT_VERSION)
    written = write(_events_for(role, out, state, inputs, task_id), actor)
    refused = [w for w in written if not w["ok"]]
    if refused:
        res["error"] = "; ".join(f"{w['type']}: {w['code']}: {w['error']}" for w in refused)
    elif role == "claim_verifier":
        assert isinstance(out, ClaimVerdict)
        res.update(verdict=out.verdict, verdict_by="model")
    complete("failed" if refused else "ok")
    return done(_summary(role, out, written))


def _summary(role: str, out: _Out, written: list[dict]) -> str:
    ok = [w for w in written if w["ok"]]
    refused = len(written) - len(ok)
    tail = f"; {refused} refused by the ledger" if refused else ""
    if role == "scout":
        return f"{len(ok)} source(s) proposed: " + ", ".join(w["source_id"] for w in ok) + tail
    if role == "extractor":
        return f"{len(ok)} claim(s) extracted: " + ", ".join(w["claim_id"] for w in ok) + tail
    if role == "claim_verifier":
        assert isinstance(out, ClaimVerdict)
        return f"claim verdict {out.verdict}: {out.rationale}" + tail
    assert isinstance(out, AuditOutput)
    return f"review {out.verdict}" + (f" with {len(out.objections)} objection(s)" if out.objections else "") + tail
