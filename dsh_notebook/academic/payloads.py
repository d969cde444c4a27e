"""The academic-mode view's payload, defined once (issue 22, items 3 and 4; spec: academic.md
"State"): what ``%academic status``, ``dsh-notebook academic status --json``, the ``AcademicToggle``
widget, the server's ``/dsh/api/academic`` and the side panel read.
"""

from __future__ import annotations

from typing import NotRequired

from typing_extensions import TypedDict

__all__ = ["AcademicApplied", "AcademicGate", "AcademicStatus"]


class AcademicApplied(TypedDict, total=False):
    """The last request academic mode shaped (``at`` an ISO 8601 UTC time)."""

    provider: str
    model: str
    reasoningEffort: str | None
    maxTokens: int | None
    at: str


class AcademicGate(TypedDict, total=False):
    """How many replies the delivery gate sent back, and when it last did."""

    count: int
    lastAt: str | None


class AcademicStatus(TypedDict):
    """``{"ok", "enabled", "lastError", "applied", "gate"}``: the state in
    ``$DSH_NOTEBOOK_HOME/academic.json`` as every surface shows it."""

    ok: NotRequired[bool]
    enabled: bool
    title: NotRequired[str]
    lastError: NotRequired[str | None]
    applied: NotRequired[AcademicApplied | None]
    gate: NotRequired[AcademicGate | None]
