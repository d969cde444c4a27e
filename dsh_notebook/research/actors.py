"""Actors: who writes a research event (spec: research.md "Roles and authorities", "Python API").

Design:

- ``Actor(role)`` is a frozen value carrying its ``role``, the ``authority`` the table gives that
  role (never chosen by the caller) and, for model roles, ``model`` and ``prompt_version``.
- ``Actor("human")`` raises ``ValueError``: a human actor is made only by
  ``dsh_notebook.research.human.confirmed_actor(name, channel)`` after the person's action. It
  passes a module-private token; the ledger also checks, by identity, that a human actor was
  issued by ``confirmed_actor`` (a copied or patched object is refused).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .events import ROLE_AUTHORITY, ROLES

__all__ = ["HUMAN_CHANNELS", "Actor"]

#: where a person's action can come from
HUMAN_CHANNELS: tuple[str, ...] = ("explorer", "server", "terminal")

_HUMAN_TOKEN = object()  # handed only to human.confirmed_actor


@dataclass(frozen=True)
class Actor:
    """The writer of an event: ``Actor("scout")``, ``Actor("lead", model="deepseek-chat",
    prompt_version="lead-v1")``.

    ``role`` is one of ``ROLES`` (scout, bibliographic_verifier, extractor, claim_verifier, lead,
    citation_auditor, adjudicator, runtime); ``authority`` follows from it. Raises ``ValueError``
    for an unknown role and for ``"human"`` (use ``human.confirmed_actor``).
    """

    role: str
    model: str | None = None
    prompt_version: str | None = None
    by: str | None = field(default=None, kw_only=True)
    channel: str | None = field(default=None, kw_only=True)
    _token: Any = field(default=None, kw_only=True, repr=False, compare=False)
    authority: str = field(init=False)

    def __post_init__(self) -> None:
        if self.role == "human":
            if self._token is not _HUMAN_TOKEN:
                raise ValueError(
                    "Actor('human') is refused: a human actor comes only from "
                    "dsh_notebook.research.human.confirmed_actor(name, channel), called after the "
                    "person's own action (explorer button, server route, terminal confirmation)"
                )
        elif self.role not in ROLES:
            raise ValueError(f"unknown role {self.role!r}: expected one of {', '.join(ROLES)}")
        elif self.by is not None or self.channel is not None:
            raise ValueError(f"role {self.role!r} is not a person: 'by' and 'channel' are for human actors only")
        object.__setattr__(self, "authority", ROLE_AUTHORITY[self.role])
        object.__setattr__(self, "_token", None)

    @property
    def is_human(self) -> bool:
        return self.role == "human"

    def to_dict(self) -> dict[str, str]:
        """The line's ``actor`` object: ``{role, authority, model?, prompt_version?}`` (a human
        actor adds ``by`` and ``channel``)."""
        out = {"role": self.role, "authority": self.authority}
        for k in ("model", "prompt_version", "by", "channel"):
            v = getattr(self, k)
            if v is not None:
                out[k] = v
        return out
