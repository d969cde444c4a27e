"""Our own ``%%chat`` session logs as transcripts (spec: reviewer.md "Targets": this notebook's
chat and another notebook's chat; the log format is llm.md "Session log", see
:mod:`dsh_notebook.llm.session`).

* A session is ``<stem>.dsh/sessions/<id>.jsonl``, read with the shared JSONL reader without
  taking its lock (a torn last line of a session being written is skipped).
* ``user/message`` is the person's words; the ``text`` of ``assistant/message`` is the AI's
  (reasoning and tool calls are not text); ``tool/result`` becomes a short tool utterance
  (its JSON content, cut) named after its call. A ``notice`` (the academic gate's steer and
  the like) is the harness talking, never the person: it is skipped.
* Keys are ``seq:<n>``. Listing: title is the first user message (cut to 80 characters),
  else the session's name, else its id; times are ``session/start`` and the last event
  (ISO 8601 UTC, ``...Z``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...artifact.paths import sidecar_for
from ...storage import read_jsonl
from ..transcript import (
    Conversation,
    Utterance,
    counts,
    iso_utc,
    number,
    short_title,
    tool_text,
)

SOURCE = "notebook"


def _key(event: dict, line: int) -> str:
    return f"seq:{event['seq']}" if isinstance(event.get("seq"), int) else f"line:{line}"


def _events(path: str | os.PathLike[str]) -> list[tuple[dict, int]]:
    read = read_jsonl(path)
    return list(zip(read.rows, read.line_numbers))


def _items(events: list[tuple[dict, int]]) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    calls: dict[str, dict] = {}
    for e, line in events:
        t = e.get("type")
        if t == "user/message":
            out.append(("user", e["text"] if isinstance(e.get("text"), str) else "", _key(e, line)))
        elif t == "assistant/message":
            out.append(("assistant", e["text"] if isinstance(e.get("text"), str) else "", _key(e, line)))
            for c in e.get("tool_calls") or []:
                if isinstance(c, dict) and isinstance(c.get("id"), str):
                    calls[c["id"]] = c
        elif t == "tool/call" and isinstance(e.get("id"), str):
            calls[e["id"]] = e
        elif t == "tool/result":
            call = calls.get(e["id"], {}) if isinstance(e.get("id"), str) else {}
            content = e.get("content")
            output = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            out.append(("tool", tool_text(e.get("name") or call.get("name") or "", call.get("arguments"), output,
                                          e.get("ok") is False), _key(e, line)))
        # notice, session/start, turn/*, step/* and anything unknown hold no utterance
    return out


def read(path: str | os.PathLike[str]) -> list[Utterance]:
    """The numbered utterances of a ``%%chat`` session file."""
    return number(_items(_events(path)))


def _conversation(path: Path, events: list[tuple[dict, int]]) -> Conversation:
    utterances = number(_items(events))
    users, ais = counts(utterances)
    start = next((e for e, _ in events if e.get("type") == "session/start"), {})
    first = next((u.text for u in utterances if u.speaker == "user"), "")
    name = start["name"] if isinstance(start.get("name"), str) else ""
    title = short_title(first) or name or path.stem
    stamps = [s for s in (iso_utc(e["ts"]) for e, _ in events if isinstance(e.get("ts"), str)) if s]
    started = iso_utc(start["ts"] if isinstance(start.get("ts"), str) else None) or (stamps[0] if stamps else None)
    return Conversation(SOURCE, path.stem, path, title, started, stamps[-1] if stamps else started, users, ais)


def conversation(path: str | os.PathLike[str]) -> Conversation:
    """One session file as a listing entry."""
    path = Path(path)
    return _conversation(path, _events(path))


def sessions_folder(notebook_or_sidecar: str | os.PathLike[str]) -> Path:
    """``x.ipynb`` -> ``x.dsh/sessions``; a sidecar folder -> its ``sessions``; a folder
    that is itself a sessions folder (or holds the logs directly) -> itself."""
    p = Path(notebook_or_sidecar)
    if p.suffix == ".ipynb":
        return sidecar_for(p) / "sessions"
    if (p / "sessions").is_dir() or (p.suffix == ".dsh" and not p.is_dir()):
        return p / "sessions"
    return p


def list_conversations(notebook_or_sidecar: str | os.PathLike[str]) -> list[Conversation]:
    """The ``%%chat`` sessions of a notebook (``x.ipynb``) or a sidecar folder, newest
    first; a missing folder holds none."""
    folder = sessions_folder(notebook_or_sidecar)
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        try:
            events = _events(path)
        except OSError:
            continue
        out.append(_conversation(path, events))
    return sorted(out, key=lambda c: (c.updated or "", c.id), reverse=True)
