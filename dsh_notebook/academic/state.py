"""Academic mode's state: one JSON file every surface shares (spec: academic.md "State and
surface"; upstream-facts.md 2.5).

``$DSH_NOTEBOOK_HOME/academic.json`` holds ``{"enabled", "title", "lastError", "applied",
"gate"}``. It is written atomically under a file lock (a kernel, the command line and the
server may all change it), read back on every request (cached on the file's mtime), and
restored on restart. :func:`status` is the status object of the spec::

    {"ok": True, "enabled": bool, "lastError": str | None,
     "applied": {"provider", "model", "reasoningEffort", "maxTokens", "at"} | None,
     "gate": {"count": int, "lastAt": str | None}}

A file that cannot be read counts as "off" and says why in ``lastError``; it is never
overwritten by a reader.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout

from ..formats import utc_now
from ..storage import atomic_write_text, home, lock_path
from .payloads import AcademicStatus

TITLE = "学术模式"
_DEFAULT = {"enabled": False, "title": TITLE, "lastError": None, "applied": None, "gate": {"count": 0, "lastAt": None}}
_cache: dict = {"key": None, "state": None}


def state_path() -> Path:
    """``$DSH_NOTEBOOK_HOME/academic.json`` (home default ``~/.dsh-notebook``)."""
    return home() / "academic.json"


def now() -> str:
    return utc_now()


def _normalise(raw: object) -> dict:
    state = json.loads(json.dumps(_DEFAULT))
    if not isinstance(raw, dict):
        raise ValueError("the file does not hold a JSON object")  # noqa: TRY004 - a malformed file: ValueError
    if "enabled" in raw and not isinstance(raw["enabled"], bool):
        raise ValueError(f"'enabled' is {raw['enabled']!r}, not true or false")
    state["enabled"] = raw.get("enabled", False)
    if isinstance(raw.get("title"), str):
        state["title"] = raw["title"]
    if isinstance(raw.get("lastError"), str):
        state["lastError"] = raw["lastError"]
    if isinstance(raw.get("applied"), dict):
        state["applied"] = raw["applied"]
    gate = raw.get("gate")
    if isinstance(gate, dict) and type(gate.get("count")) is int and gate["count"] >= 0:
        state["gate"] = {"count": gate["count"], "lastAt": gate.get("lastAt") if isinstance(gate.get("lastAt"), str)
                         else None}
    return state


def read_state(path: Path | None = None) -> dict:
    """The current state (defaults when the file does not exist). A malformed file reads
    as off, with ``lastError`` naming the problem."""
    path = path or state_path()
    try:
        st = path.stat()
    except FileNotFoundError:
        return json.loads(json.dumps(_DEFAULT))
    except OSError as exc:  # DSH_NOTEBOOK_HOME is a file, a folder cannot be read, ...
        state = json.loads(json.dumps(_DEFAULT))
        state["lastError"] = f"{path} cannot be read ({exc.strerror or exc}); academic mode is off"
        return state
    key = (str(path), st.st_mtime_ns, st.st_size)
    if _cache["key"] == key:
        return json.loads(json.dumps(_cache["state"]))
    try:
        state = _normalise(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        state = json.loads(json.dumps(_DEFAULT))
        state["lastError"] = f"{path} cannot be read ({exc}); academic mode is off until it is fixed or switched again"
        return state
    _cache["key"], _cache["state"] = key, state
    return json.loads(json.dumps(state))


def update(change: Callable[[dict], None], path: Path | None = None) -> dict:
    """Apply ``change(state) -> None`` under the file's lock and write the result atomically.
    A malformed file is replaced by a fresh state (the change says what it is)."""
    path = path or state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_path(path)), timeout=10):
        try:
            state = _normalise(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            state = json.loads(json.dumps(_DEFAULT))
        except (OSError, ValueError):
            state = json.loads(json.dumps(_DEFAULT))
        change(state)
        atomic_write_text(path, json.dumps(state, ensure_ascii=False, indent=2) + "\n")
    return state


def status(path: Path | None = None) -> AcademicStatus:
    """The status object (see the module docstring; its type :class:`~.payloads.AcademicStatus`)."""
    s = read_state(path)
    return {"ok": True, "enabled": bool(s["enabled"]), "lastError": s["lastError"], "applied": s["applied"],
            "gate": s["gate"]}


def set_enabled(enabled: bool, path: Path | None = None) -> AcademicStatus:
    """Switch academic mode on or off (from the next request on); returns the status.
    Raises ``TypeError`` for anything but a bool."""
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be true or false, not {enabled!r}")

    def change(s: dict) -> None:
        s["enabled"] = enabled
        s["lastError"] = None

    update(change, path)
    return status(path)


def is_enabled(path: Path | None = None) -> bool:
    return bool(read_state(path)["enabled"])


def record_applied(applied: dict | None, error: str | None, path: Path | None = None) -> None:
    """Remember the last request whose parameters academic mode changed, and the last
    capability-lookup error (``None`` clears it). Writes only when something differs; a
    state file that cannot be written never stops a request (the write is skipped)."""
    current = read_state(path)
    same_applied = applied is None or (current["applied"] or {}) == applied
    if same_applied and current["lastError"] == error:
        return

    def change(s: dict) -> None:
        if applied is not None:
            s["applied"] = applied
        s["lastError"] = error

    try:
        update(change, path)
    except (OSError, Timeout):
        pass


def record_gate(path: Path | None = None) -> dict:
    """Count one firing of the delivery gate; returns the new ``gate`` object."""
    out: dict = {}

    def change(s: dict) -> None:
        s["gate"] = {"count": int(s["gate"]["count"]) + 1, "lastAt": now()}
        out.update(s["gate"])

    try:
        update(change, path)
    except (OSError, Timeout):  # the count is lost, the gate still works
        pass
    return out


def status_text(st: AcademicStatus | None = None) -> str:
    """The status object as a few lines for people (``%academic status``, the CLI)."""
    st = st or status()
    lines = [f"Academic mode: {'on' if st['enabled'] else 'off'}"]
    a = st.get("applied")
    if a:
        effort = a.get("reasoningEffort")
        lines.append(f"Last shaped request: {a.get('provider')}/{a.get('model')}, "
                     f"reasoning effort {effort or 'none (the model declares none)'}, "
                     f"max_tokens {a.get('maxTokens')}, at {a.get('at')}")
    else:
        lines.append("Last shaped request: none yet")
    g = st.get("gate") or {}
    lines.append(f"Delivery gate: sent {g.get('count', 0)} long repl{'y' if g.get('count') == 1 else 'ies'} back "
                 f"for a verification log" + (f" (last at {g['lastAt']})" if g.get("lastAt") else ""))
    if st.get("lastError"):
        lines.append(f"Last error: {st['lastError']}")
    return "\n".join(lines)
