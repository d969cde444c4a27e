"""The session log: model-visible means logged (spec: llm.md "Session log").

* A session is one JSONL file (``<stem>.dsh/sessions/<session-id>.jsonl``) written with the
  shared writer, its lock held while the session is open. Each line has ``seq``, ``ts`` and
  ``type``: ``session/start``, ``turn/start``, ``user/message``, ``step/start``,
  ``assistant/message``, ``tool/call``, ``tool/result``, ``notice``, ``step/end``, ``turn/end``.
* :func:`history` derives the messages sent to the model from the events alone, so a
  session rebuilt from its file sends exactly the same request.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

from ..formats import utc_now
from ..storage import JsonlWriter, read_jsonl

EVENT_TYPES = ("session/start", "turn/start", "user/message", "step/start", "assistant/message", "tool/call",
               "tool/result", "notice", "step/end", "turn/end")


#: The fields a provider sends with a reply that go back to it verbatim (the only ones read from
#: ``assistant/message.opaque``): OpenRouter's reasoning details, Gemini's thought signatures,
#: Anthropic's thinking blocks.
OPAQUE_MESSAGE_FIELDS = ("reasoning_details", "extra_content", "thought_signature", "anthropic_thinking")
OPAQUE_CALL_FIELDS = ("extra_content", "thought_signature")


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


class SessionLog:
    """An open session file. ``SessionLog.create(folder, model=..., preset=..., tools=[...],
    system=None, **extra)`` starts one (``extra`` fields such as ``name`` go into
    ``session/start``); ``SessionLog.open(path)`` continues one (its events are read
    back first). ``append(type, **fields)`` writes one event and returns it."""

    def __init__(self, path: Path, events: list[dict]):
        if any(e.get("type") not in EVENT_TYPES for e in events):
            bad = next(e.get("type") for e in events if e.get("type") not in EVENT_TYPES)
            raise ValueError(f"{path}: unknown event type {bad!r}")
        self.path = Path(path)
        self.events = events
        #: callables given each event after it is written (a live view follows the turn this way)
        self.listeners: list = []
        self._writer = JsonlWriter(self.path)

    @classmethod
    def create(cls, folder: str | os.PathLike[str], *, model: str, preset: str = "plain", tools: Sequence[str] = (),
               system: str | None = None, session_id: str | None = None, **extra: Any) -> Self:
        path = Path(folder) / f"{session_id or new_session_id()}.jsonl"
        log = cls(path, [])
        start = {"model": model, "preset": preset, "tools": list(tools), **extra}
        if system:
            start["system"] = system
        log.append("session/start", **start)
        return log

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Self:
        return cls(Path(path), read_jsonl(path).rows)

    @property
    def id(self) -> str:
        return self.path.stem

    def append(self, type: str, **fields: Any) -> dict:
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {type!r}")
        event = {"seq": len(self.events) + 1, "ts": utc_now(),
                 "type": type, **fields}
        self._writer.append(event)
        self.events.append(event)
        for listen in self.listeners:
            listen(event)
        return event

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_events(path: str | os.PathLike[str]) -> list[dict]:
    """A session's events, read without taking its lock (for viewers and the reviewer)."""
    return read_jsonl(path).rows


def history(events: list[dict], provider: str | None = None) -> list[dict]:
    """The chat messages the model is sent, derived from the events only.

    ``session/start.system`` becomes the system message; ``user/message`` a user message;
    ``assistant/message`` an assistant message with its tool calls and its reasoning as
    ``reasoning_content`` (the client sends it back only where the provider requires it, and
    drops it elsewhere) and, when the reply came from ``provider``, the fields that provider
    sent to be returned verbatim (``opaque``: OpenRouter's ``reasoning_details``, Gemini's
    ``extra_content`` with its thought signature); ``tool/result`` a tool message; a ``notice``
    a system message (steering, never user input), except notices of ``form`` ``info``, which
    are for the person only (a model not declared, history left out to fit the window).
    Cancelled or failed turns keep what was said before they stopped.
    """
    out: list[dict] = []
    for e in events:
        t = e.get("type")
        if t == "session/start" and e.get("system"):
            out.append({"role": "system", "content": e["system"]})
        elif t == "user/message":
            out.append({"role": "user", "content": e.get("text", "")})
        elif t == "assistant/message":
            msg: dict = {"role": "assistant", "content": e.get("text", "")}
            raw = e.get("opaque")
            opaque: dict = raw if isinstance(raw, dict) else {}
            same = provider is not None and opaque.get("provider") == provider
            if isinstance(e.get("reasoning"), str):
                msg["reasoning_content"] = e["reasoning"]
            if same and isinstance(opaque.get("message"), dict):
                for k, v in opaque["message"].items():
                    if k in OPAQUE_MESSAGE_FIELDS:  # a log edited by hand changes nothing else
                        msg.setdefault(k, v)
            calls = [c for c in e.get("tool_calls") or [] if isinstance(c, dict) and isinstance(c.get("id"), str)
                     and isinstance(c.get("name"), str)] if isinstance(e.get("tool_calls"), list) else []
            if calls:
                given = opaque.get("tool_calls")
                extras: dict = given if same and isinstance(given, dict) else {}
                msg["tool_calls"] = []
                for c in calls:
                    extra = extras.get(c["id"])
                    args = c.get("arguments", "")
                    msg["tool_calls"].append({
                        **{k: v for k, v in (extra if isinstance(extra, dict) else {}).items()
                           if k in OPAQUE_CALL_FIELDS},
                        "id": c["id"], "type": "function",
                        "function": {"name": c["name"], "arguments": args if isinstance(args, str) else ""}})
            out.append(msg)
        elif t == "tool/result":
            content = e.get("content")
            out.append({"role": "tool", "tool_call_id": e.get("id") if isinstance(e.get("id"), str) else "",
                        "content": content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)})
        elif t == "notice" and e.get("text") and e.get("form") != "info":
            out.append({"role": "system", "content": e["text"]})
    # A tool call without its result (a cancelled step) must not reach the provider, nor a result
    # without its call. Calls and results are matched within one step (the results right after
    # their assistant message): a provider may use the same id again in a later reply.
    kept: list[dict] = []
    step: dict[str, dict] | None = None  # the open step's calls by id
    for m in out:
        if m["role"] == "tool":
            if step is not None and m.get("tool_call_id") in step:
                step[m["tool_call_id"]]["answered"] = True
                kept.append(m)
            continue
        if m["role"] == "assistant" and m.get("tool_calls"):
            step = {c["id"]: {"answered": False} for c in m["tool_calls"]}
            m["_calls"] = step
        elif m["role"] != "system":
            step = None
        kept.append(m)
    for m in kept:
        answered = m.pop("_calls", None)
        if answered is not None:
            m["tool_calls"] = [c for c in m["tool_calls"] if answered.get(c["id"], {}).get("answered")]
            if not m["tool_calls"]:
                del m["tool_calls"]
    return kept


def sessions_table(folder: Path) -> list[dict]:
    """The chat sessions logged in ``folder``, oldest first: id, name, title (the first user
    message, on one line, at most 80 characters), preset, model, turns, last turn's status,
    path, started and updated (the first and last events' ``ts``)."""
    out = []
    for p in Path(folder).glob("*.jsonl"):
        try:
            events = read_events(p)
        except (OSError, ValueError):
            continue
        start = next((e for e in events if e.get("type") == "session/start"), {})
        ends = [e for e in events if e.get("type") == "turn/end"]
        first = next((e.get("text") for e in events if e.get("type") == "user/message"), None)
        title = " ".join(first.split()) if isinstance(first, str) else ""
        out.append({"id": p.stem, "name": start.get("name", ""),
                    "title": title if len(title) <= 80 else title[:79] + "…", "preset": start.get("preset", ""),
                    "model": start.get("model", ""), "turns": sum(1 for e in events if e.get("type") == "turn/start"),
                    "last": ends[-1].get("status") if ends else "", "path": str(p),
                    "started": start.get("ts", ""), "updated": events[-1].get("ts", "") if events else ""})
    return sorted(out, key=lambda r: (r["started"], r["id"]))
