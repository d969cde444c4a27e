"""The reviewer's views' payload, defined once (issue 22, items 3 and 4; spec: reviewer.md
"Insights"): a stored review and its insights, as ``%review``, the ``ReviewerPanel`` widget, the
server's ``/dsh/api/reviews`` and the side panel read them.
"""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict

__all__ = ["Evidence", "Insight", "Review", "ReviewQuestion", "ReviewTarget"]


class Evidence(TypedDict, total=False):
    """One quote backing an insight: its utterance ``marker`` (``U3``, ``A3``, ``T3``), the quote,
    whether it was found verbatim, and ``why`` not."""

    marker: str
    quote: str
    verified: bool
    why: str | None


class Insight(TypedDict, total=False):
    """One insight: a title, verbatim evidence, why it matters, a next step and how to tell it worked."""

    title: str
    confidence: str | float | None
    verified: bool
    evidence: list[Evidence]
    why: str
    suggestion: str
    check: str


class ReviewQuestion(TypedDict, total=False):
    """A follow-up question about a review, with its answer or the error it met."""

    seq: int
    ts: str
    question: str
    answer: str | None
    error: str | None


class ReviewTarget(TypedDict, total=False):
    """What was reviewed: ``source`` (notebook, dsh, codex, claude, chat) and ``path``."""

    source: str
    path: str
    name: str | None


class Review(TypedDict, total=False):
    """A stored review (with the history line's ``file``, ``seq``, ``ts`` and its ``questions``
    when the server lists it)."""

    id: str
    status: str
    verdict: str | None
    headline: str | None
    summary: str | None
    focus: str
    generation: int
    at: str
    model: str | None
    prompt_version: str | None
    error: str | None
    coverage: dict[str, Any] | None
    target: ReviewTarget | None
    insights: list[Insight]
    questions: list[ReviewQuestion]
    file: str
    seq: int | None
    ts: str | None
    superseded: NotRequired[bool]
