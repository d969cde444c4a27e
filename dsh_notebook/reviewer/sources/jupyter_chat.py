"""jupyterlab-chat ``.chat`` documents, as written by jupyter-ai (spec: reviewer.md
"Targets"; ../shared/fixtures/logs/README.md "jupyterlab-chat" notes).

Design, in a few lines:

- **Where.** A ``.chat`` file is one JSON document ``{messages, users, attachments,
  metadata}``. ``list_conversations(root)`` walks ``root`` (default: the current folder,
  like the Jupyter server's root) for ``*.chat``, skipping hidden folders and
  ``node_modules``. ``default_root()`` is the current folder.
- **Who speaks.** A message is the AI's when its ``sender`` is a user with ``bot: true``
  (or, with no ``users`` entry, a ``jupyter-ai-personas::`` id); any other sender is the
  person. Deleted messages and messages of another ``type`` than ``msg`` are skipped.
- **Tool-only messages.** An AI message with an empty body lists what it ran in
  ``metadata.tool_calls``; each call becomes one tool utterance (title, kind, status and a
  short ``raw_output``, cut to about 2,000 characters). An AI message with a body and tool
  calls gives the tool utterances first, then the text.
- **Interrupted replies.** A streamed reply that was cut short stays in the file beside
  its complete resend. Rule: an AI message is dropped when a later AI message of the same
  turn (no user message between) is longer and begins with the earlier body up to its last
  whitespace (the cut-off word removed), and that shared part is at least 80% of the
  earlier body. So an exact prefix is always dropped, and so is a draft whose last word
  was re-tokenised in the resend; a short reply like ``hi.`` is never taken for a draft.
- **Attachments** of a user message are named after its text
  (``[attached: file inheritance/Untitled.ipynb]``).
- **Keys** are ``message:<id>`` (``message:<id>:tool:<tool_call_id>`` for a tool call).
  ``time`` (float seconds) becomes ISO 8601 UTC.
- **Title**: the file name, unless it is ``untitled…``; then the first prompt cut to 80
  characters.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..transcript import (
    Conversation,
    Utterance,
    counts,
    iso_utc,
    modified_utc,
    number,
    short_title,
    tool_text,
)

SOURCE = "chat"
DRAFT_SHARE = 0.8
PERSONA_PREFIX = "jupyter-ai-personas::"
_SKIP_DIRS = {"node_modules", "__pycache__"}


def default_root() -> Path:
    """The current folder (where a Jupyter server started here keeps its documents)."""
    return Path.cwd()


def read(path: str | Path) -> list[Utterance]:
    """The numbered utterances of one ``.chat`` document."""
    return number(_items(_load(Path(path)))[0])


def conversation(path: str | Path) -> Conversation:
    """The listing entry of one ``.chat`` document."""
    path = Path(path)
    doc = _load(path)
    items, first_prompt, times = _items(doc)
    utterances = number(items)
    meta = doc["metadata"] if isinstance(doc.get("metadata"), dict) else {}
    cid = meta["id"] if isinstance(meta.get("id"), str) and meta["id"] else path.stem
    if path.stem.lower().startswith("untitled") and first_prompt:
        title = short_title(first_prompt)
    else:
        title = path.stem
    started = iso_utc(min(times)) if times else None
    updated = (iso_utc(max(times)) if times else None) or modified_utc(path)
    users, ais = counts(utterances)
    return Conversation(SOURCE, cid, path, title, started, updated, users, ais)


def list_conversations(root: str | Path | None = None) -> list[Conversation]:
    """Every readable ``.chat`` document under ``root`` (default :func:`default_root`),
    newest first. Documents with neither a user nor an AI message are left out."""
    root = Path(root).expanduser() if root is not None else default_root()
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(names):
            if not name.endswith(".chat"):
                continue
            try:
                conv = conversation(Path(folder) / name)
            except (OSError, ValueError):
                continue
            if conv.user_messages or conv.ai_messages:
                out.append(conv)
    out.sort(key=lambda c: c.updated or c.started or "", reverse=True)
    return out


# --- reading -----------------------------------------------------------------------------


def _load(path: Path) -> dict:
    text = path.read_bytes().decode("utf-8", errors="replace")
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise ValueError(f"{path} is not a jupyterlab-chat document: not JSON ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("messages", []), list):
        raise ValueError(  # noqa: TRY004 - documented: ValueError for a file that is no chat document
            f"{path} is not a jupyterlab-chat document: expected an object with a 'messages' list")
    return doc


def _items(doc: dict) -> tuple[list[tuple[str, str, str]], str | None, list[float]]:
    """``(speaker, text, key)`` items, the first prompt and the message times."""
    users = doc["users"] if isinstance(doc.get("users"), dict) else {}
    attachments = doc["attachments"] if isinstance(doc.get("attachments"), dict) else {}
    messages = [
        m
        for m in doc.get("messages", [])
        if isinstance(m, dict) and not m.get("deleted") and m.get("type", "msg") == "msg"
    ]
    ai = [_is_ai(m.get("sender"), users) for m in messages]
    dropped = _drafts(messages, ai)
    items: list[tuple[str, str, str]] = []
    first_prompt = None
    times = [float(m["time"]) for m in messages if isinstance(m.get("time"), (int, float))]
    for i, m in enumerate(messages):
        if i in dropped:
            continue
        key = f"message:{m.get('id') or i}"
        body = m["body"] if isinstance(m.get("body"), str) else ""
        if not ai[i]:
            text = body.strip("\n") + _attached(m.get("attachments"), attachments)
            if text.strip():
                first_prompt = first_prompt or body.strip() or None
                items.append(("user", text, key))
            continue
        meta = m["metadata"] if isinstance(m.get("metadata"), dict) else {}
        calls = meta["tool_calls"] if isinstance(meta.get("tool_calls"), list) else []
        for j, call in enumerate(c for c in calls if isinstance(c, dict)):
            items.append(("tool", _tool_text(call), f"{key}:tool:{call.get('tool_call_id') or j}"))
        if body.strip():
            items.append(("assistant", body.strip("\n"), key))
    return items, first_prompt, times


def _is_ai(sender: object, users: dict) -> bool:
    user = users.get(sender) if isinstance(sender, str) else None
    if isinstance(user, dict) and "bot" in user:
        return bool(user["bot"])
    return isinstance(sender, str) and sender.startswith(PERSONA_PREFIX)


def _drafts(messages: list[dict], ai: list[bool]) -> set[int]:
    """Indexes of AI messages that are interrupted drafts of a later AI message of the same
    turn (see the module docstring)."""
    out = set()
    for i, m in enumerate(messages):
        body = m["body"] if isinstance(m.get("body"), str) else ""
        if not ai[i] or not body.strip():
            continue
        stem = body.rstrip()
        space = max(stem.rfind(" "), stem.rfind("\n"), stem.rfind("\t"))
        shared = stem if space < 0 else stem[: space + 1]
        shared = shared if len(shared) >= DRAFT_SHARE * len(stem) else stem
        for j in range(i + 1, len(messages)):
            if not ai[j]:
                break  # a user message starts a new turn
            later = messages[j]["body"] if isinstance(messages[j].get("body"), str) else ""
            if len(later) > len(body) and later.startswith(shared):
                out.add(i)
                break
    return out


def _tool_text(call: dict) -> str:
    """``title (kind, status)`` and the call's ``raw_output``, as
    :func:`~dsh_notebook.reviewer.transcript.tool_text` writes them (``(error)`` for status
    ``failed``)."""
    title = " ".join(str(call.get("title") or call.get("kind") or "tool call").split())
    tags = ", ".join(str(t) for t in (call.get("kind"), call.get("status")) if t)
    output = call.get("raw_output")
    shown = "" if output is None else output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    return tool_text(f"{title} ({tags})" if tags else title, None, shown, call.get("status") == "failed")


def _attached(ids: object, attachments: dict) -> str:
    if not isinstance(ids, list):
        return ""
    names = []
    for a in ids:
        entry = attachments.get(a) if isinstance(a, str) else a
        if isinstance(entry, dict):
            names.append(f"{entry.get('type', 'file')} {entry.get('value', '')}".strip())
    return "".join(f"\n[attached: {n}]" for n in names)

