"""The record card and the chat session row, defined once (issue 22, items 3 and 4; spec:
storage.md "Routes for the side panel"): what ``dsh-notebook records list``, ``%reckon list``,
the server's ``/dsh/api/records`` and ``/dsh/api/sessions`` and the side panel read.
"""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict

__all__ = ["GraphBox", "GraphEdge", "LedgerGraph", "RecordDetail", "RecordProblem", "RecordRow", "RecordSummary", "SessionRow"]


class RecordSummary(TypedDict):
    """The record card: ``status`` closed, refused, open, set aside or unreadable (with ``error``);
    times in ms since the epoch; ``current`` true when the notebook names the record, false when
    a re-run superseded it, ``None`` when unknown."""

    id: str
    title: str | None
    status: str
    opened: int | None
    closed: int | None
    steps: int | None
    refused: int | None
    ended_in_refusal: NotRequired[bool]
    current: NotRequired[bool | None]
    error: NotRequired[str]


class RecordRow(TypedDict):
    """One trace row of a record file (upstream's row shape; ``at`` ms since the epoch)."""

    seq: int
    at: NotRequired[int]
    tool: str
    ok: bool
    content: NotRequired[dict[str, Any]]


class RecordProblem(TypedDict):
    line: int
    problem: str


class RecordDetail(RecordSummary):
    """One record: its card, the header line and every row as stored, and unreadable lines."""

    header: NotRequired[dict[str, Any] | None]
    rows: list[RecordRow]
    problems: NotRequired[list[RecordProblem]]


class SessionRow(TypedDict, total=False):
    """One chat session as ``%chat list`` shows it (``file`` relative to the sidecar)."""

    id: str
    name: str | None
    title: str | None
    preset: str | None
    model: str | None
    turns: int
    last: str | None
    started: str | None
    updated: str | None
    file: str


class GraphBox(TypedDict):
    """One box of the ledger graph: ``kind`` decision, claim or source; ``x``, ``y`` its top left
    corner in pixels; ``label`` the statement, claim text or source title (``title`` the whole
    of it, ``label`` cut to fit); ``sub`` its state (status, eligibility, verdict); ``tone`` ok,
    warn, bad, accent or muted."""

    kind: str
    ident: str
    x: int
    y: int
    title: str
    label: str
    short_ident: str
    sub: str
    tone: str


class GraphEdge(TypedDict):
    """A line from the right edge of one box to the left edge of another, in pixels."""

    x1: int
    y1: int
    x2: int
    y2: int


class LedgerGraph(TypedDict):
    """Decisions -> claims -> sources laid out in three columns: the picture's ``width`` and
    ``height`` in pixels, each box's ``box_width`` and ``box_height``, the column headings' ``x``."""

    width: int
    height: int
    box_width: int
    box_height: int
    columns: list[int]
    boxes: list[GraphBox]
    edges: list[GraphEdge]
