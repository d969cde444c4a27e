"""The ledger's views and receipts, defined once (issue 22, items 3 and 4; spec: research.md
"The explorer"): the decision card and the fold's other views as ``%ledger show``, the
``LedgerExplorer`` widget, the server's ``/dsh/api/ledgers`` and the side panel read them, and the
receipt of :meth:`dsh_notebook.research.Ledger.append`.

At run time these are plain dicts (built by :mod:`dsh_notebook.artifact.ledgers`); the types
describe them for type checkers and the JSON Schema the panel's types are generated from.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

__all__ = ["ClaimView", "DecisionCard", "Escalation", "HumanDecisionView", "LedgerAccepted", "LedgerReceipt",
           "LedgerRefused", "LedgerSummary", "ObjectionView", "Predicate", "QuestionView", "SourceView"]


class LedgerAccepted(TypedDict):
    """An appended event: ``{"ok": True, "seq", "hash"}`` (``hash`` the sha256 of its line)."""

    ok: Literal[True]
    seq: int
    hash: str


class LedgerRefused(TypedDict):
    """A refused event (nothing written): ``{"ok": False, "code": "LEDGER_...", "error"}``."""

    ok: Literal[False]
    code: str
    error: str


#: What ``Ledger.append`` (and a recorded decision) returns.
LedgerReceipt = LedgerAccepted | LedgerRefused


class Predicate(TypedDict):
    """A predicate's result and the reason for it."""

    value: bool
    reason: str


class DecisionPredicates(TypedDict):
    can_request_human_approval: Predicate
    has_unresolved_objections: Predicate


class DecisionClaim(TypedDict):
    claim_id: str
    eligible: bool
    reason: str


class HumanDecisionView(TypedDict):
    """A person's decision on one revision."""

    revision: int
    verdict: str
    note: NotRequired[str]
    by: NotRequired[str]
    channel: NotRequired[str]
    seq: NotRequired[int]


class RevisionReview(TypedDict):
    revision: int
    verdict: str


class UnresolvedObjection(TypedDict):
    objection_id: str
    why: str


class DecisionCard(TypedDict):
    """The ledger decision card: the current revision's statement, its status, the predicates
    with reasons, the claims it cites and the person's decisions."""

    decision_id: str
    question_id: NotRequired[str | None]
    revision: int
    statement: str
    claim_ids: NotRequired[list[str]]
    confidence: NotRequired[float | str | None]
    limitations: NotRequired[str]
    status: str
    awaiting_person: bool
    predicates: DecisionPredicates
    claims: list[DecisionClaim]
    reviews: NotRequired[list[RevisionReview]]
    unresolved_objections: NotRequired[list[UnresolvedObjection]]
    human_decisions: list[HumanDecisionView]


class ClaimVerdict(TypedDict):
    verdict: str
    rationale: NotRequired[str]


class ClaimView(TypedDict):
    """A claim with its quote, verdicts and whether it may be used in a synthesis (and why)."""

    claim_id: str
    source_id: str
    text: str
    quote: NotRequired[str]
    locator: NotRequired[str]
    verdict: NotRequired[str | None]
    verdicts: NotRequired[list[ClaimVerdict]]
    eligible: bool
    reason: str


class FulltextView(TypedDict, total=False):
    locator: str | None
    sha256: str | None
    bytes: int | None


class SourceView(TypedDict):
    """A source as the fold shows it: identifiers, the latest verdict and notices."""

    source_id: str
    kind: NotRequired[str]
    identifier: NotRequired[str]
    title: NotRequired[str | None]
    authors: NotRequired[list[Any]]
    year: NotRequired[int | str | None]
    verdict: NotRequired[str | None]
    retracted: NotRequired[bool]
    withdrawn: NotRequired[bool]
    notices: NotRequired[list[str]]
    resolver: NotRequired[str | None]
    fulltext: NotRequired[FulltextView | None]


class ObjectionTarget(TypedDict, total=False):
    kind: str
    id: str


class Adjudication(TypedDict):
    verdict: str
    rationale: str


class ObjectionView(TypedDict):
    """An objection, its answers, its adjudication and whether it is still open."""

    objection_id: str
    target: ObjectionTarget
    reason: str
    severity: NotRequired[str | None]
    answers: NotRequired[list[str]]
    adjudication: NotRequired[Adjudication | None]
    state: str


class QuestionView(TypedDict):
    question_id: str
    text: str


class Escalation(TypedDict):
    subject: str
    reason: str
    to: str


class LedgerSummary(TypedDict):
    """The fold's projection (``artifact.ledgers.summary``): what ``%ledger show`` and the explorer show."""

    questions: NotRequired[list[QuestionView]]
    decisions: list[DecisionCard]
    claims: list[ClaimView]
    sources: list[SourceView]
    objections: list[ObjectionView]
    escalations: NotRequired[list[Escalation]]
    events: int
