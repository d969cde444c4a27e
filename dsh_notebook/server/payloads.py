"""The server's route payloads as types (issue 22, item 4; spec: storage.md "Routes for the
side panel"): what each ``/dsh/api/`` route answers, built from the views' payloads of the lower
layers. :class:`Routes` names every route's payload once; :mod:`dsh_notebook.server.schema`
turns it into the JSON Schema the panel's TypeScript types are generated from.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from ..academic.payloads import AcademicStatus
from ..artifact.payloads import RecordDetail, RecordSummary, SessionRow
from ..research.payloads import LedgerReceipt, LedgerSummary
from ..reviewer.payloads import Review

__all__ = ["DecisionRequest", "LedgerBrief", "LedgerFold", "RouteErrorPayload", "Routes", "TimelineEntry"]


class LedgerBrief(TypedDict):
    """One row of ``GET /dsh/api/ledgers``: the event count (``None`` when the ledger cannot be
    folded, with ``error``), the sha256 of its last line, whether it verifies, the decisions
    awaiting the person."""

    name: str
    events: int | None
    head: NotRequired[str | None]
    intact: NotRequired[bool]
    awaiting: NotRequired[list[str]]
    error: NotRequired[str]


class TimelineEntry(TypedDict):
    seq: int | None
    ts: str
    type: str
    role: str
    authority: str
    by: str
    channel: str
    subject: str


class LedgerFold(LedgerSummary):
    """``GET /dsh/api/ledgers/NAME``: the brief, the fold's summary, the timeline and the verify result."""

    name: NotRequired[str]
    head: NotRequired[str | None]
    intact: NotRequired[bool]
    awaiting: NotRequired[list[str]]
    timeline: NotRequired[list[TimelineEntry]]
    verify: NotRequired[dict[str, Any]]
    error: NotRequired[str]


class DecisionRequest(TypedDict):
    """``POST /dsh/api/ledgers/NAME/decision``'s body."""

    decision_id: str
    revision: int
    verdict: Literal["approved", "rejected", "needs_revision"]
    note: NotRequired[str]


class RouteErrorPayload(TypedDict):
    """Any refusal: ``{"error"}`` (a refused decision adds the ledger's ``ok`` and ``code``)."""

    error: str
    ok: NotRequired[bool]
    code: NotRequired[str]


class Routes(TypedDict):
    """Every route's payload, by route."""

    academic: AcademicStatus
    records: list[RecordSummary]
    record: RecordDetail
    sessions: list[SessionRow]
    reviews: list[Review]
    ledgers: list[LedgerBrief]
    ledger: LedgerFold
    decision_request: DecisionRequest
    decision: LedgerReceipt
    error: RouteErrorPayload
