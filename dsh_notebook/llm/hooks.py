"""Hooks that features register with the model client (spec: llm.md "The client", academic.md
"What the switch changes", "The pre-delivery gate").

The client knows no feature. A feature that must act on every model call gives the client
hooks instead of the client importing it:

- a **request hook** ``hook(body, ctx) -> [notes]`` may change a request's parameters and its
  system prompt before it is sent (academic mode's request shaping);
- a **stop hook** ``hook(turn_events, answer) -> notice | None`` may send a final answer back
  once per turn (academic mode's delivery gate).

A :class:`~dsh_notebook.llm.ChatClient` built with ``hooks=None``, and an
:class:`~dsh_notebook.llm.agent.Agent` built with ``stop_hooks=None``, get the registered
defaults. Features register them with :func:`register`; the package's own features declare
a registering function as an entry point in the group :data:`GROUP` (``pyproject.toml``), loaded
once when defaults are first asked for, so every client gets academic mode however it was made,
and ``llm`` never imports ``academic``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import RequestContext

__all__ = ["GROUP", "RequestHook", "StopHook", "default_request_hooks", "default_stop_hooks", "register"]

#: The entry-point group whose functions (no arguments) call :func:`register`.
GROUP = "dsh_notebook.llm_hooks"

#: ``hook(body, ctx) -> [notes]``: may change the body's parameters and ``ctx.system``; returns
#: what it changed, one note per change (kept in ``ChatResult.shaping``).
RequestHook = Callable[[dict[str, Any], "RequestContext"], list[str]]
#: ``hook(turn_events, answer) -> notice | None``: a notice sends the answer back to the model.
StopHook = Callable[[list[dict[str, Any]], str], "str | None"]

_log = logging.getLogger(__name__)
_lock = threading.Lock()  # the two lists
_load_lock = threading.Lock()  # loading the entry points (a hook's loader calls register, which takes _lock)
_request: list[RequestHook] = []
_stop: list[StopHook] = []
_loaded: set[str] = set()  # entry points loaded; one that failed is tried again next time
_warned: set[str] = set()


def register(*, request: RequestHook | None = None, stop: StopHook | None = None) -> None:
    """Add a default request hook and/or stop hook (registering the same function twice adds it
    once). Hooks run in the order they were registered."""
    with _lock:
        if request is not None and request not in _request:
            _request.append(request)
        if stop is not None and stop not in _stop:
            _stop.append(stop)


def _load_entry_points() -> None:
    """Load every entry point of :data:`GROUP` not loaded yet, under one lock, so a client made
    while another thread loads them waits and gets them all; one that fails is logged once and
    tried again when defaults are next asked for."""
    with _load_lock:
        for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
            if ep.name in _loaded:
                continue
            try:
                ep.load()()
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not stop model access
                if ep.name not in _warned:
                    _warned.add(ep.name)
                    _log.warning("the model-client hook %r (%s) could not be loaded: %s", ep.name, ep.value, exc)
                continue
            _loaded.add(ep.name)


def default_request_hooks() -> list[RequestHook]:
    """The request hooks a client gets unless it is given its own."""
    _load_entry_points()
    with _lock:
        return list(_request)


def default_stop_hooks() -> list[StopHook]:
    """The stop hooks an agent gets unless it is given its own."""
    _load_entry_points()
    with _lock:
        return list(_stop)
