"""Explicit state predicates (spec: research.md "Fold and predicates").

Each predicate takes a ``LedgerState`` and an id and returns ``(bool, reason)``; the reason says
why, naming the ids that block. They are plain functions of the fold, never an ordering of
statuses. ``decision_status`` summarises a decision for display (it decides nothing).
"""

from __future__ import annotations

from .fold import LedgerState, Objection

__all__ = [
    "can_request_human_approval",
    "decision_status",
    "has_unresolved_objections",
    "is_eligible_for_synthesis",
    "unresolved_objections",
]

_SUPPORTING = ("supported", "partially_supported")


def is_eligible_for_synthesis(state: LedgerState, claim_id: str) -> tuple[bool, str]:
    """A claim may be used in a synthesis when its source's latest bibliographic verdict is
    ``verified`` (not retracted, withdrawn, corrected or under concern), its span's fulltext is linked with a
    matching sha256, and its latest claim verdict is ``supported`` or ``partially_supported``."""
    claim = state.claims.get(claim_id)
    if claim is None:
        return False, f"claim {claim_id!r} is not in the ledger"
    source = state.sources.get(claim.source_id)
    if source is None:
        return False, f"claim {claim_id!r}: its source {claim.source_id!r} is not in the ledger"
    if source.verdict != "verified":
        got = "has no verdict yet" if source.verdict is None else f"latest verdict is {source.verdict!r}"
        return False, f"claim {claim_id!r}: source {source.source_id!r} {got}; it must be 'verified'"
    if source.fulltext is None:
        return False, f"claim {claim_id!r}: source {source.source_id!r} has no linked fulltext"
    want = claim.span.get("fulltext_sha256")
    if want != source.fulltext["sha256"]:
        return False, (f"claim {claim_id!r}: its span's fulltext_sha256 {want!r} does not match the linked "
                       f"fulltext of {source.source_id!r} ({source.fulltext['sha256']})")
    if claim.verdict not in _SUPPORTING:
        got = "has no verdict yet" if claim.verdict is None else f"latest verdict is {claim.verdict!r}"
        return False, f"claim {claim_id!r} {got}; it must be 'supported' or 'partially_supported'"
    return True, f"claim {claim_id!r} is eligible: verified source, linked fulltext, verdict {claim.verdict!r}"


def _objections_on(state: LedgerState, decision_id: str) -> list[Objection]:
    dec = state.decisions[decision_id]
    claims = set(dec.claim_ids)
    sources = {state.claims[c].source_id for c in claims if c in state.claims}
    wanted = [("decision", decision_id)] + [("claim", c) for c in claims] + [("source", s) for s in sources]
    found = {id(o): o for kind, id_ in wanted for o in state.objections_about(kind, id_)}
    return sorted(found.values(), key=lambda o: o.seq)  # in ledger order


def unresolved_objections(state: LedgerState, decision_id: str) -> list[tuple[str, str]]:
    """``[(objection_id, why)]`` for objections on the decision, its current claims or their
    sources that have no adjudication, or were upheld with no later revision answering them."""
    if decision_id not in state.decisions:
        return []
    dec = state.decisions[decision_id]
    out = []
    for o in _objections_on(state, decision_id):
        adj = o.adjudication
        if adj is None:
            out.append((o.objection_id, "not adjudicated"))
        elif adj.verdict == "upheld":
            answered = any(r["seq"] > adj.seq and o.objection_id in r["answers"] for r in dec.revisions)
            if not answered:
                out.append((o.objection_id, "upheld and no later revision answers it"))
    return out


def has_unresolved_objections(state: LedgerState, decision_id: str) -> tuple[bool, str]:
    """True when an objection on the decision, its claims or their sources has no adjudication,
    or was upheld and no later revision (``decision-revised`` listing it in ``answers``) answers it."""
    if decision_id not in state.decisions:
        return False, f"decision {decision_id!r} is not in the ledger"
    blocking = unresolved_objections(state, decision_id)
    if blocking:
        return True, "unresolved objections: " + "; ".join(f"{oid} ({why})" for oid, why in blocking)
    return False, f"decision {decision_id!r} has no unresolved objections"


def can_request_human_approval(state: LedgerState, decision_id: str) -> tuple[bool, str]:
    """True when every claim the current revision cites is eligible, a review verdict exists for
    the current revision, no objection is unresolved, and this revision has no pending request
    and no human decision (and the decision is not closed by an approval or rejection)."""
    dec = state.decisions.get(decision_id)
    if dec is None:
        return False, f"decision {decision_id!r} is not in the ledger"
    rev = dec.revision
    closed = [h for h in state.human_decisions_for(decision_id) if h.verdict in ("approved", "rejected")]
    if closed:
        return False, f"decision {decision_id!r} was {closed[-1].verdict} by {closed[-1].by}; it is closed"
    not_eligible = [reason for c in dec.claim_ids for ok, reason in [is_eligible_for_synthesis(state, c)] if not ok]
    if not_eligible:
        return False, "not every cited claim is eligible: " + "; ".join(not_eligible)
    if not state.reviews_for(decision_id, rev):
        return False, f"decision {decision_id!r} revision {rev} has no review verdict yet"
    blocked, why = has_unresolved_objections(state, decision_id)
    if blocked:
        return False, f"decision {decision_id!r}: {why}"
    if state.human_decisions_for(decision_id, rev):
        return False, f"decision {decision_id!r} revision {rev} already has a human decision"
    if state.approvals_for(decision_id, rev):
        return False, f"decision {decision_id!r} revision {rev} already awaits the person (approval requested)"
    return True, f"decision {decision_id!r} revision {rev} may be put to the person"


def decision_status(state: LedgerState, decision_id: str) -> str:
    """For display: ``approved``, ``rejected``, ``needs_revision`` (the person asked for one and
    no revision came yet), ``awaiting_human`` (approval requested for the current revision, no
    decision yet: fail closed until the person acts), or ``provisional``."""
    dec = state.decisions[decision_id]
    rev = dec.revision
    for h in reversed(state.human_decisions_for(decision_id)):
        if h.verdict in ("approved", "rejected"):
            return h.verdict
        if h.revision == rev:
            return "needs_revision"
        break
    if state.approvals_for(decision_id, rev):
        return "awaiting_human"
    return "provisional"
