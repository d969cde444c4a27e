"""The engine's receipts as types (issue 22, item 4; spec: reckoner.md "Tools"): what each tool
call returns, for type checkers and for the JSON Schema the side panel's types are generated from.

Design:

- At run time a receipt stays a plain ``dict`` (the binding contract and the engine's speed:
  :data:`dsh_notebook.reckoner.engine.Receipt`); these ``TypedDict`` s only describe it.
- A refusal is :class:`Refusal` for every tool: ``{"ok": False, "code", "error"}``, ``code`` one
  of the 20 error codes.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

__all__ = ["EngineReceipt", "EvalReceipt", "GetReceipt", "OkReceipt", "Refusal", "SetReceipt", "TaggedValue"]


class TaggedValue(TypedDict):
    """A stored value as the tools return it: ``{"value", "dim", "kind"?, "scale"?}`` (``dim`` 7 integers)."""

    value: Any
    dim: NotRequired[list[int]]
    kind: NotRequired[str]
    scale: NotRequired[str]


class Refusal(TypedDict):
    """A refused call: nothing changed. ``{"ok": False, "code": "ENGINE_...", "error": "..."}``."""

    ok: Literal[False]
    code: str
    error: str


class OkReceipt(TypedDict):
    """``record_start``, ``record_message``, ``record_end``: ``{"ok": True}`` (a lookup's ``seq``)."""

    ok: Literal[True]
    seq: NotRequired[int]


class SetReceipt(TypedDict):
    """``set``: ``{"ok": True, "name", "rev", "value"}``; a delete has ``rev`` and ``value`` ``None``."""

    ok: Literal[True]
    name: str
    rev: int | None
    value: TaggedValue | None


class GetReceipt(TypedDict):
    """``get``: ``{"ok": True, "name", "value"}``."""

    ok: Literal[True]
    name: str
    value: TaggedValue


class EvalReceipt(TypedDict):
    """``eval``: ``{"ok": True, "target", "rev"}``."""

    ok: Literal[True]
    target: str
    rev: int


#: Any tool's receipt.
EngineReceipt = SetReceipt | GetReceipt | EvalReceipt | OkReceipt | Refusal
