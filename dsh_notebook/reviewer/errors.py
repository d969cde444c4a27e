"""The reviewer layer's exceptions (spec: reviewer.md "Surface", "Sources"): one root,
:class:`ReviewerError`, a :class:`~dsh_notebook.errors.DshError`. Its subclasses live with the code
that raises them (:class:`~dsh_notebook.reviewer.sources.TargetError`,
:class:`~dsh_notebook.reviewer.targets.ReviewUsageError`)."""

from __future__ import annotations

from ..errors import DshError

__all__ = ["ReviewerError"]


class ReviewerError(DshError):
    """The root of the reviewer layer's exceptions: a conversation that cannot be read or a
    target or option that cannot be used; the message is one line for the person."""

    code = "REVIEWER"
