"""The only way to a human actor (spec: research.md "Python API", "The explorer").

``confirmed_actor(name, channel)`` is called by the explorer's buttons, the server's decision
route and the terminal's ``dsh-notebook ledger decide`` after the person's action; it returns an
``Actor`` with role ``human`` and authority ``human_adjudication``. Each actor it issues is
remembered by identity, and the ledger writes ``human-decision-recorded`` only for such an actor.
"""

from __future__ import annotations

import threading
import weakref

from . import actors as _actors
from .actors import HUMAN_CHANNELS, Actor

__all__ = ["confirmed_actor", "is_confirmed"]

_ISSUED: dict[int, weakref.ref[Actor]] = {}
_LOCK = threading.Lock()


def confirmed_actor(name: str, channel: str) -> Actor:
    """A human actor for the person *name*, acting through *channel* (``explorer``, ``server``
    or ``terminal``). Raises ``ValueError`` for an empty name or another channel."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"confirmed_actor needs the person's name, got {name!r}")
    if channel not in HUMAN_CHANNELS:
        raise ValueError(f"channel {channel!r} is not a person's channel: expected one of {', '.join(HUMAN_CHANNELS)}")
    actor = Actor("human", by=name.strip(), channel=channel, _token=_actors._HUMAN_TOKEN)
    key = id(actor)

    def forget(_ref: weakref.ref[Actor]) -> None:
        _ISSUED.pop(key, None)

    with _LOCK:
        _ISSUED[key] = weakref.ref(actor, forget)
    return actor


def is_confirmed(actor: object) -> bool:
    """True only for an actor object issued by ``confirmed_actor`` (checked by identity)."""
    ref = _ISSUED.get(id(actor))
    return ref is not None and ref() is actor and getattr(actor, "role", None) == "human"
