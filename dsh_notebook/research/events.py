"""Research event types and the authority table (spec: research.md "Roles and authorities",
"Events").

Design:

- One pydantic model per event type: the 16 core types and the 3 supplementary ones, with the
  spec's field names; enumerations are ``Literal``; unknown fields are refused
  (``extra="forbid"``), NaN/Infinity too. ``EVENT_MODELS`` maps the short type name
  (``"claim-extracted"``) to its model; lines carry ``"research/<name>"``.
- ``AUTHORITIES`` maps an authority to the types it may write, ``ROLE_AUTHORITY`` a role to its
  authority. The table is code: the writer refuses an event outside its actor's authority.
- ``OVERREACH`` lists fields that would make an event claim more than its authority holds (a
  scout's ``verified`` flag, a verifier rewriting a claim's text): the writer refuses these as
  authority violations, not as schema errors.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "AUTHORITIES",
    "EVENT_MODELS",
    "EVENT_PREFIX",
    "OVERREACH",
    "ROLE_AUTHORITY",
    "ROLES",
    "CORE_TYPES",
    "SUPPLEMENTARY_TYPES",
    "short_type",
]

EVENT_PREFIX = "research/"

Id = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/\-]{0,127}$")]
Text = Annotated[str, Field(min_length=1)]
Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Number = Union[int, float]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


# ----------------------------------------------------------------------------- nested shapes


class Route(_Event):
    """Where a task runs: ``{tier, provider, model, effort}``."""

    tier: str
    provider: str = ""
    model: str = ""
    effort: str = ""


class Span(_Event):
    """Evidence span: ``{locator, quote, fulltext_sha256}`` (hash of the linked fulltext, if any)."""

    locator: str
    quote: Text
    fulltext_sha256: Sha256 | None = None


class Target(_Event):
    """What an objection is about: ``{kind, id}``."""

    kind: Literal["decision", "claim", "source", "experiment"]
    id: Id


class Subject(_Event):
    """What an escalation is about: ``{kind, id}``."""

    kind: Literal["question", "task", "source", "claim", "experiment", "decision", "objection"]
    id: Id


# ----------------------------------------------------------------------------- core (16)


class QuestionPosed(_Event):
    question_id: Id
    text: Text
    scope: str = ""
    acceptance: str | list[str] = ""


class PlanRecorded(_Event):
    question_id: Id
    plan: Text | list[Text]


TaskRole = Literal[
    "scout", "bibliographic_verifier", "extractor", "claim_verifier", "lead", "citation_auditor",
    "adjudicator", "runtime",
]


class TaskDelegated(_Event):
    task_id: Id
    role: TaskRole
    duty: Text
    inputs: dict[str, Any] = Field(default_factory=dict)
    route: Route
    budget: dict[str, Annotated[Number, Field(ge=0)]] = Field(default_factory=dict)


class TaskCompleted(_Event):
    task_id: Id
    status: Literal["ok", "invalid_output", "failed", "cancelled"]
    usage: dict[str, Annotated[Number, Field(ge=0)]] = Field(default_factory=dict)


class SourceProposed(_Event):
    source_id: Id
    kind: Literal["doi", "arxiv", "pmid", "isbn", "url"]
    identifier: Text
    title: str = ""
    authors: list[str] = Field(default_factory=list)
    year: int | None = None
    query: str = ""


SourceVerdict = Literal["verified", "mismatch", "inconclusive", "retracted", "corrected", "expression_of_concern"]


class SourceVerified(_Event):
    source_id: Id
    verdict: SourceVerdict
    checks: dict[str, Any] | list[Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    resolver: str = ""


class FulltextLinked(_Event):
    source_id: Id
    locator: Text
    sha256: Sha256
    bytes: Annotated[int, Field(ge=0)]
    media_type: str = "application/octet-stream"


class ClaimExtracted(_Event):
    claim_id: Id
    source_id: Id
    text: Text
    span: Span


class ClaimVerified(_Event):
    claim_id: Id
    verdict: Literal["supported", "partially_supported", "unsupported", "contradicted", "uncertain"]
    rationale: str = ""


Confidence = Union[Annotated[float, Field(ge=0, le=1)], Literal["low", "medium", "high"]]


class DecisionProposed(_Event):
    decision_id: Id
    question_id: Id
    statement: Text
    claim_ids: Annotated[list[Id], Field(min_length=1)]
    confidence: Confidence
    limitations: str | list[str] = ""


class DecisionRevised(_Event):
    """``revision`` counts from 1 (the proposal); the first revision is 2."""

    decision_id: Id
    revision: Annotated[int, Field(ge=2)]
    statement: Text
    claim_ids: Annotated[list[Id], Field(min_length=1)]
    confidence: Confidence
    limitations: str | list[str] = ""
    answers: list[Id] = Field(default_factory=list)


class ObjectionRaised(_Event):
    objection_id: Id
    target: Target
    reason: Text
    severity: Literal["minor", "major", "critical"] = "major"


class ObjectionAnswered(_Event):
    objection_id: Id
    response: Text


class AdjudicationRecorded(_Event):
    objection_id: Id
    verdict: Literal["upheld", "dismissed"]
    rationale: str = ""


class Escalated(_Event):
    subject: Subject
    reason: Literal["budget", "risk", "disagreement", "invalid_output"]
    to: Literal["human"] = "human"


class HumanDecisionRecorded(_Event):
    decision_id: Id
    verdict: Literal["approved", "rejected", "needs_revision"]
    note: str = ""
    by: Text


# ----------------------------------------------------------------------------- supplementary (3)


class ExperimentExtracted(_Event):
    experiment_id: Id
    source_id: Id
    design: Text
    population: str = ""
    n: Annotated[int, Field(ge=0)] | None = None
    intervention: str = ""
    outcome: str = ""
    effect: Number | str | None = None
    interval: tuple[Number, Number] | None = None
    span: Span


class HumanApprovalRequested(_Event):
    decision_id: Id
    revision: Annotated[int, Field(ge=1)]


class ReviewVerdictRecorded(_Event):
    decision_id: Id
    revision: Annotated[int, Field(ge=1)]
    verdict: Literal["pass", "objections"]
    objection_ids: list[Id] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> ReviewVerdictRecorded:
        if self.verdict == "pass" and self.objection_ids:
            raise ValueError("verdict 'pass' lists no objection_ids; use verdict 'objections'")
        if self.verdict == "objections" and not self.objection_ids:
            raise ValueError("verdict 'objections' needs the objection_ids raised for this revision")
        return self


# ----------------------------------------------------------------------------- registry

CORE_TYPES: tuple[str, ...] = (
    "question-posed", "plan-recorded", "task-delegated", "task-completed", "source-proposed",
    "source-verified", "fulltext-linked", "claim-extracted", "claim-verified", "decision-proposed",
    "decision-revised", "objection-raised", "objection-answered", "adjudication-recorded",
    "escalated", "human-decision-recorded",
)
SUPPLEMENTARY_TYPES: tuple[str, ...] = ("experiment-extracted", "human-approval-requested", "review-verdict-recorded")

#: short type name -> pydantic model
EVENT_MODELS: dict[str, type[_Event]] = {
    "question-posed": QuestionPosed,
    "plan-recorded": PlanRecorded,
    "task-delegated": TaskDelegated,
    "task-completed": TaskCompleted,
    "source-proposed": SourceProposed,
    "source-verified": SourceVerified,
    "fulltext-linked": FulltextLinked,
    "claim-extracted": ClaimExtracted,
    "claim-verified": ClaimVerified,
    "decision-proposed": DecisionProposed,
    "decision-revised": DecisionRevised,
    "objection-raised": ObjectionRaised,
    "objection-answered": ObjectionAnswered,
    "adjudication-recorded": AdjudicationRecorded,
    "escalated": Escalated,
    "human-decision-recorded": HumanDecisionRecorded,
    "experiment-extracted": ExperimentExtracted,
    "human-approval-requested": HumanApprovalRequested,
    "review-verdict-recorded": ReviewVerdictRecorded,
}
assert set(EVENT_MODELS) == set(CORE_TYPES) | set(SUPPLEMENTARY_TYPES)

#: authority -> event types it may write (research.md "Roles and authorities")
AUTHORITIES: dict[str, frozenset[str]] = {
    "discovery": frozenset({"source-proposed"}),
    "bibliographic_verification": frozenset({"source-verified"}),
    "evidence_extraction": frozenset({"claim-extracted", "experiment-extracted"}),
    "claim_verification": frozenset({"claim-verified"}),
    "synthesis": frozenset({
        "question-posed", "plan-recorded", "task-delegated", "fulltext-linked", "decision-proposed",
        "decision-revised", "objection-answered", "human-approval-requested",
    }),
    "review": frozenset({"objection-raised", "review-verdict-recorded"}),
    "adjudication": frozenset({"adjudication-recorded"}),
    "human_adjudication": frozenset({"human-decision-recorded"}),
    "runtime": frozenset({"task-completed", "escalated"}),
}
assert set().union(*AUTHORITIES.values()) == set(EVENT_MODELS)

#: role -> authority; ``human`` is only reachable through ``human.confirmed_actor``
ROLE_AUTHORITY: dict[str, str] = {
    "scout": "discovery",
    "bibliographic_verifier": "bibliographic_verification",
    "extractor": "evidence_extraction",
    "claim_verifier": "claim_verification",
    "lead": "synthesis",
    "citation_auditor": "review",
    "adjudicator": "adjudication",
    "runtime": "runtime",
    "human": "human_adjudication",
}
#: roles an ``Actor(role)`` may be built for (all but ``human``)
ROLES: tuple[str, ...] = tuple(r for r in ROLE_AUTHORITY if r != "human")

_VERDICT_KEYS = {"verified": "a verification flag", "verdict": "a verdict", "approved": "an approval",
                 "status": "a status"}
#: type -> {field: what it would claim}; present in ``data`` = authority violation
OVERREACH: dict[str, dict[str, str]] = {
    "source-proposed": _VERDICT_KEYS,
    "claim-extracted": _VERDICT_KEYS,
    "experiment-extracted": _VERDICT_KEYS,
    "source-verified": {"claims": "claims", "conclusion": "a conclusion", "claim_ids": "claims"},
    "claim-verified": {"text": "a new claim text", "span": "a new evidence span", "quote": "a new quote"},
    "decision-proposed": {**_VERDICT_KEYS, "span": "an evidence span"},
    "decision-revised": {**_VERDICT_KEYS, "span": "an evidence span"},
    "fulltext-linked": {"span": "an evidence span", "quote": "an evidence quote", **_VERDICT_KEYS},
    "objection-raised": {"verdict": "a verdict on the decision", "rejected": "a rejection"},
    "adjudication-recorded": {"decision_id": "a decision on the decision itself", "by": "a person's name"},
}


def short_type(type_: str) -> str:
    """``"research/claim-extracted"`` or ``"claim-extracted"`` -> ``"claim-extracted"``."""
    return type_[len(EVENT_PREFIX):] if type_.startswith(EVENT_PREFIX) else type_
