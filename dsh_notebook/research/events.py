"""Research event types and the authority table (spec: research.md "Roles and authorities",
"Events").

Design:

- One pydantic model per event type: the 16 core types and the 3 supplementary ones, with the
  spec's field names; enumerations are ``Literal``; unknown fields are refused
  (``extra="forbid"``). Values are never converted silently: strings and integers are strict
  (``"2015"`` or ``2015.0`` is not an integer, ``b"x"`` not a string, ``True`` not a number),
  integers fit in 64 bits, years lie in 1000..2200, NaN/Infinity are refused everywhere.
  Free-form fields (``task-delegated`` ``inputs``, ``source-verified`` ``checks`` and
  ``metadata``) must hold JSON and nothing else: objects with string keys, arrays (lists or
  tuples), strings, finite numbers, booleans and null, nested at most ``MAX_DEPTH`` levels and
  without circular references; a set, bytes, an arbitrary object, NaN or an integer too large
  for JSON readers is refused with the place named (``inputs.x``), never turned into something
  else (numpy scalars become plain numbers).
- Extension of the spec's schema: ``human-decision-recorded`` takes an optional ``revision``,
  the revision of the decision the person saw when deciding. When present the writer refuses
  the event unless it equals the decision's current revision (``LEDGER_STATE``: "decision d1 is
  at revision 2; you decided on revision 1: reload"), checked under the ledger's lock, so an
  approval can never land on a revision the person did not see. Every channel that records the
  person's decision sends it (the explorer, ``dsh-notebook ledger decide``, the server route,
  which requires it); lines without it (older ledgers) stay valid.
- ``EVENT_MODELS`` maps the short type name
  (``"claim-extracted"``) to its model; lines carry ``"research/<name>"``.
- ``AUTHORITIES`` maps an authority to the types it may write, ``ROLE_AUTHORITY`` a role to its
  authority. The table is code: the writer refuses an event outside its actor's authority.
- ``OVERREACH`` lists fields that would make an event claim more than its authority holds (a
  scout's ``verified`` flag, a verifier rewriting a claim's text): the writer refuses these as
  authority violations, not as schema errors.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    model_validator,
)

__all__ = [
    "AUTHORITIES",
    "CORE_TYPES",
    "EVENT_MODELS",
    "EVENT_PREFIX",
    "MAX_DEPTH",
    "OVERREACH",
    "ROLES",
    "ROLE_AUTHORITY",
    "SUPPLEMENTARY_TYPES",
    "json_value",
    "short_type",
]

EVENT_PREFIX = "research/"

#: the deepest nesting a free-form value may have (a circular reference is refused before)
MAX_DEPTH = 100
INT_MIN, INT_MAX = -(2**63), 2**63 - 1

Str = Annotated[str, Strict()]
Id = Annotated[str, Strict(), Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/\-]{0,127}$")]
Text = Annotated[str, Strict(), Field(min_length=1)]
Sha256 = Annotated[str, Strict(), Field(pattern=r"^[0-9a-f]{64}$")]
Int = Annotated[int, Strict(), Field(ge=INT_MIN, le=INT_MAX)]
Float = Annotated[float, Strict()]  # an int is accepted (as a float); a bool or a string is not
Number = Int | Float
Year = Annotated[int, Strict(), Field(ge=1000, le=2200)]


class _NotJson(ValueError):
    def __init__(self, message: str) -> None:
        where, sep, rest = message.partition(" is ")
        if sep and len(where) > 100:  # a deep path: keep its start and end
            message = f"{where[:50]}…{where[-40:]} is {rest}"
        super().__init__(message)


_NOT_JSON_KINDS: dict[type, str] = {set: "a set", frozenset: "a set", bytes: "bytes", bytearray: "bytes"}


def _json(value: Any, where: str, depth: int, active: set[int]) -> Any:
    if value is None or value is True or value is False or type(value) is str:
        if type(value) is str:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise _NotJson(f"{where} is a string that is not valid Unicode (a lone surrogate?)") from None
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise _NotJson(f"{where} is an integer that does not fit in 64 bits; JSON readers cannot hold it "
                           "exactly: store it as a string")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NotJson(f"{where} is {value!r}; strict JSON has no NaN or Infinity")
        return float(value)
    if isinstance(value, str):
        return _json(str(value), where, depth, active)
    if isinstance(value, (dict, list, tuple)):
        if depth >= MAX_DEPTH:
            raise _NotJson(f"{where} is nested deeper than {MAX_DEPTH} levels")
        if id(value) in active:
            raise _NotJson(f"{where} refers back to a value that contains it (a circular reference)")
        active.add(id(value))
        try:
            if isinstance(value, dict):
                out = {}
                for k, v in value.items():
                    if not isinstance(k, str):
                        raise _NotJson(f"{where} has the key {k!r} ({type(k).__name__}); JSON object keys are strings")
                    out[str(k)] = _json(v, f"{where}.{k}", depth + 1, active)
                return out
            return [_json(v, f"{where}[{i}]", depth + 1, active) for i, v in enumerate(value)]
        finally:
            active.discard(id(value))
    try:  # numpy scalars: plain numbers and booleans
        import numpy as np

        if isinstance(value, (np.bool_, np.integer, np.floating)):
            return _json(value.item(), where, depth, active)
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    kind = _NOT_JSON_KINDS.get(type(value))
    raise _NotJson(f"{where} is {kind or 'a value of type ' + type(value).__name__}; ledger data must be JSON "
                   "(objects, arrays, strings, finite numbers, true, false, null)")


def json_value(value: Any, where: str = "value") -> Any:
    """*value* as plain JSON data (lists for tuples, numbers for numpy scalars), or ``ValueError``
    naming the first place that is not JSON: a set, bytes, another object, NaN/Infinity, an
    integer beyond 64 bits, a non-string key, nesting deeper than ``MAX_DEPTH``, a cycle."""
    return _json(value, where, 0, set())


def _free_form(field: str) -> BeforeValidator:
    """A validator that makes a free-form field plain JSON (``json_value``, the place named *field*)."""
    def check(value: Any) -> Any:
        return json_value(value, field)
    return BeforeValidator(check)


#: free-form JSON objects, checked by ``json_value`` under their field's name
_Inputs = Annotated[dict[str, Any], _free_form("inputs")]
_Metadata = Annotated[dict[str, Any], _free_form("metadata")]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


# ----------------------------------------------------------------------------- nested shapes


class Route(_Event):
    """Where a task runs: ``{tier, provider, model, effort}``."""

    tier: Str
    provider: Str = ""
    model: Str = ""
    effort: Str = ""


class Span(_Event):
    """Evidence span: ``{locator, quote, fulltext_sha256}`` (hash of the linked fulltext, if any)."""

    locator: Str
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
    scope: Str = ""
    acceptance: Str | list[Str] = ""


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
    inputs: _Inputs = Field(default_factory=dict)
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
    title: Str = ""
    authors: list[Str] = Field(default_factory=list)
    year: Year | None = None
    query: Str = ""


#: ``withdrawn`` (issue 21): an arXiv withdrawal, or a title marking a withdrawn work
SourceVerdict = Literal["verified", "mismatch", "inconclusive", "retracted", "withdrawn", "corrected",
                        "expression_of_concern"]


class SourceVerified(_Event):
    source_id: Id
    verdict: SourceVerdict
    checks: Annotated[dict[str, Any] | list[Any], _free_form("checks")] = Field(default_factory=dict)
    metadata: _Metadata = Field(default_factory=dict)
    resolver: Str = ""


class FulltextLinked(_Event):
    source_id: Id
    locator: Text
    sha256: Sha256
    bytes: Annotated[Int, Field(ge=0)]
    media_type: Str = "application/octet-stream"


class ClaimExtracted(_Event):
    claim_id: Id
    source_id: Id
    text: Text
    span: Span


class ClaimVerified(_Event):
    claim_id: Id
    verdict: Literal["supported", "partially_supported", "unsupported", "contradicted", "uncertain"]
    rationale: Str = ""


Confidence = Annotated[float, Strict(), Field(ge=0, le=1)] | Literal["low", "medium", "high"]


class DecisionProposed(_Event):
    decision_id: Id
    question_id: Id
    statement: Text
    claim_ids: Annotated[list[Id], Field(min_length=1)]
    confidence: Confidence
    limitations: Str | list[Str] = ""


class DecisionRevised(_Event):
    """``revision`` counts from 1 (the proposal); the first revision is 2."""

    decision_id: Id
    revision: Annotated[Int, Field(ge=2)]
    statement: Text
    claim_ids: Annotated[list[Id], Field(min_length=1)]
    confidence: Confidence
    limitations: Str | list[Str] = ""
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
    rationale: Str = ""


class Escalated(_Event):
    subject: Subject
    reason: Literal["budget", "risk", "disagreement", "invalid_output"]
    to: Literal["human"] = "human"


class HumanDecisionRecorded(_Event):
    decision_id: Id
    verdict: Literal["approved", "rejected", "needs_revision"]
    note: Str = ""
    by: Text
    #: extension (see the module docstring): the revision the person saw; must be the current one
    revision: Annotated[Int, Field(ge=1)] | None = None
    #: extension (issue 15): the person's SSH signature (armored SSHSIG, namespace dsh-notebook) of
    #: :func:`dsh_notebook.research.ledger.decision_message` for this event
    signature: Annotated[str, Strict(), Field(min_length=1, max_length=8192)] | None = None


# ----------------------------------------------------------------------------- supplementary (3)


class ExperimentExtracted(_Event):
    experiment_id: Id
    source_id: Id
    design: Text
    population: Str = ""
    n: Annotated[Int, Field(ge=0)] | None = None
    intervention: Str = ""
    outcome: Str = ""
    effect: Number | Str | None = None
    interval: tuple[Number, Number] | None = None
    span: Span


class HumanApprovalRequested(_Event):
    decision_id: Id
    revision: Annotated[Int, Field(ge=1)]


class ReviewVerdictRecorded(_Event):
    decision_id: Id
    revision: Annotated[Int, Field(ge=1)]
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
    return type_.removeprefix(EVENT_PREFIX)
