"""The research evidence ledger (spec: research.md): an append-only, hash-chained log of
``research/*`` events whose writer enforces the authority table in code, a pure fold into
``LedgerState``, and explicit predicates over it.

Public API (binding, research.md "Python API"):

- ``Ledger(path)``: ``append(type, data, actor)`` -> receipt, ``fold()``, ``verify()``, ``events()``;
- ``Actor(role)`` for the eight model and runtime roles; a human actor only from
  ``dsh_notebook.research.human.confirmed_actor(name, channel)``;
- ``fold(events) -> LedgerState``;
- ``is_eligible_for_synthesis``, ``has_unresolved_objections``, ``can_request_human_approval``,
  each ``(state, id) -> (bool, reason)``.

Pure Python: no IPython, ipywidgets, httpx or model client here. The parts of the research
feature that call a model or the network (roles, router, ``%ledger ask``'s pipeline, the
bibliographic verifier, full texts, the lead's tools) live in :mod:`dsh_notebook.research_pipeline`,
a layer above :mod:`dsh_notebook.llm` that this package never imports.
"""

from .actors import HUMAN_CHANNELS, Actor
from .events import AUTHORITIES, EVENT_MODELS, ROLE_AUTHORITY, ROLES
from .fold import LedgerState, fold
from .ledger import (
    LEDGER_AUTHORITY,
    LEDGER_CODES,
    LEDGER_IO,
    LEDGER_REFERENCE,
    LEDGER_SCHEMA,
    LEDGER_STATE,
    SIGNED_DECISIONS,
    Ledger,
    LedgerPathError,
    decision_message,
    ledger_path,
)
from .predicates import (
    can_request_human_approval,
    decision_status,
    has_unresolved_objections,
    is_eligible_for_synthesis,
)

__all__ = [
    "AUTHORITIES",
    "EVENT_MODELS",
    "HUMAN_CHANNELS",
    "LEDGER_AUTHORITY",
    "LEDGER_CODES",
    "LEDGER_IO",
    "LEDGER_REFERENCE",
    "LEDGER_SCHEMA",
    "LEDGER_STATE",
    "ROLES",
    "ROLE_AUTHORITY",
    "SIGNED_DECISIONS",
    "Actor",
    "Ledger",
    "LedgerPathError",
    "LedgerState",
    "can_request_human_approval",
    "decision_message",
    "decision_status",
    "fold",
    "has_unresolved_objections",
    "is_eligible_for_synthesis",
    "ledger_path",
]
