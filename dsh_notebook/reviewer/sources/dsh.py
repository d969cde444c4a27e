"""DeepSeek Harness session logs as transcripts (spec: reviewer.md "Targets"; upstream-facts.md
1.2, 1.3 and 4.10; ../shared/fixtures/logs/README.md, whose format notes win where they differ).

* A log is ``.jsonl`` or zstd-framed ``.jsonl.zstd`` (independent checksummed frames). Frames
  are read with zstandard's stream reader across frames; if that fails, the bytes are scanned
  for the frame magic ``28 b5 2f fd`` and each candidate is decompressed on its own, so a
  false magic inside data or a broken frame is skipped. Undecodable lines (a torn last line)
  and unknown event types are skipped.
* Three payload generations, told apart by shape, event by event (:func:`generation` names
  the file's): g0 (header ``version: 1``, a ``usage`` event, no provenance), g1 (``content``
  and ``source`` directly in ``data``, ``steering/message``), g2 (messages wrapped in
  ``data.message`` with an ``id``; ``isError`` inside each ``tool-result`` block).
* Utterances: ``user/message`` and g1 ``steering/message`` whose ``source.kind`` is
  ``user`` (or absent) are the person's words; any other kind (``plugin`` snapshots,
  ``user-approval``) is injected context and skipped. A g2 steer is a ``user/message`` inside
  a running turn, so it is read like any prompt; ``agent/inbox/spliced`` only queues it.
  Assistant text is the ``text`` parts of ``assistant/message`` (reasoning and tool calls are
  not text); ``tool/result`` becomes a short tool utterance named after its ``tool/call``.
  Streamed chunks (``assistant/chunk``, packed ``*-chunks`` rows) are never read: the final
  text is in ``assistant/message``.
* Keys are ``seq:<n>`` (``line:<n>`` for an event without ``seq``).
* On disk (:func:`list_conversations`): ``<root>/--<cwd>--/<id>/session.jsonl[.zstd]``,
  ``<root>/cwd-<hash>/<id>.jsonl[.zstd]`` (or ``_no-cwd/``) and
  ``<root>/<bucket>/session-<id>/session.v<N>.jsonl.zstd``; the root is :func:`default_root`.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Container
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import zstandard

from ..transcript import (
    Conversation,
    Utterance,
    counts,
    iso_utc,
    number,
    short_title,
    tool_text,
)

SOURCE = "dsh"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: zstd skippable frames use the magics 0x184D2A50..0x184D2A5F (little-endian on disk)
_SKIPPABLE = re.compile(rb"[\x50-\x5f]\x2a\x4d\x18")
_SUFFIXES = (".jsonl.zstd", ".jsonl.zst", ".jsonl")
_VERSIONED = re.compile(r"session\.v(\d+)\.jsonl(?:\.zstd?)?")


def default_root() -> Path:
    """``DSH_SESSIONS_DIR``, default ``~/.dsh/sessions``."""
    return Path(os.environ.get("DSH_SESSIONS_DIR") or Path.home() / ".dsh" / "sessions").expanduser()


# --------------------------------------------------------------------------- bytes and lines


def decompress(data: bytes) -> bytes:
    """The content of zstd-framed ``data``: every frame in order, broken frames skipped."""
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
        parts = []
        while chunk := reader.read(1 << 20):
            parts.append(chunk)
        return b"".join(parts)
    except zstandard.ZstdError:
        return _scan_frames(data)


def _scan_frames(data: bytes) -> bytes:
    """Decompress frame by frame from each magic ``28 b5 2f fd``; a candidate that does not
    decode (a false magic inside data, a damaged frame) is skipped, and candidates inside a
    frame already decoded are not tried. A frame cut short at the end gives what it holds."""
    view = memoryview(data)
    parts: list[bytes] = []
    pos = data.find(ZSTD_MAGIC)
    while pos >= 0:
        d = zstandard.ZstdDecompressor().decompressobj()
        try:
            out = d.decompress(view[pos:])
        except zstandard.ZstdError:
            pos = data.find(ZSTD_MAGIC, pos + 1)
            continue
        parts.append(out)
        if not d.eof:  # cut short: the rest of the file was inside this frame
            break
        pos = data.find(ZSTD_MAGIC, len(data) - len(d.unused_data))
    return b"".join(parts)


def _is_zstd(data: bytes) -> bool:
    return data.startswith(ZSTD_MAGIC) or _SKIPPABLE.match(data[:4]) is not None


@dataclass
class SessionLog:
    """A read log: ``header`` (the ``{type: "session", ...}`` line, or ``None``), ``events``
    (each with its ``_line`` number added) and ``skipped`` (lines that did not decode)."""

    path: Path
    header: dict | None = None
    events: list[dict] = field(default_factory=list)
    skipped: int = 0


def load(path: str | os.PathLike[str]) -> SessionLog:
    """Read a session file (plain or zstd, by content, not by name). Raises ``OSError``
    only when the file cannot be read."""
    path = Path(path)
    data = path.read_bytes()
    if _is_zstd(data):
        data = decompress(data)
    log = SessionLog(path)
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw.decode("utf-8").removeprefix("\ufeff"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            log.skipped += 1  # a torn last line, or a damaged one
            continue
        if not isinstance(row, dict) or not isinstance(row.get("type"), str):
            log.skipped += 1
            continue
        if row["type"] == "session" and "seq" not in row and log.header is None and not log.events:
            log.header = row
            continue
        row["_line"] = lineno
        log.events.append(row)
    return log


# --------------------------------------------------------------------------- payload shapes


def _data(event: dict) -> dict:
    d = event.get("data")
    return d if isinstance(d, dict) else {}


def _message(data: dict) -> dict:
    """g2 wraps a message in ``data.message``; g0/g1 keep its fields in ``data``."""
    m = data.get("message")
    return m if isinstance(m, dict) else data


def _text(content: object, kinds: Container[str] = ("text",)) -> str:
    """The text parts of a content value (a string, or a list of ``{type, text}`` parts)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    out = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and part.get("type") in kinds and isinstance(part.get("text"), str):
            out.append(part["text"])
    return "\n".join(t for t in out if t)


def _output(content: object) -> str:
    """A tool result's output: text parts as they are, other parts named (``[image]``)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False)
    out = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):
                out.append(part["text"])
            elif part.get("type") == "tool-result":
                out.append(_output(part.get("content")))
            else:
                out.append(f"[{part.get('type', 'part')}]")
    return "\n".join(out)


def _is_person(data: dict) -> bool:
    """A direct human prompt: ``source.kind`` is ``user`` (a message with no source at all is
    taken as the person's too); any other kind is injected context."""
    source = data.get("source")
    if source is None:
        return True
    return isinstance(source, dict) and source.get("kind") == "user"


def _tool_result(data: dict, calls: dict[str, dict]) -> tuple[str, bool]:
    """``(text, failed)`` of a ``tool/result`` in either generation."""
    msg = _message(data)
    content = msg.get("content")
    blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool-result"] \
        if isinstance(content, list) else []
    failed = bool(data.get("isError") or data.get("error") or msg.get("isError") or any(b.get("isError") for b in blocks))
    source = msg["source"] if isinstance(msg.get("source"), dict) else {}
    call_id = data.get("callId") or source.get("callId") or next((b.get("toolCallId") for b in blocks), None)
    call = calls.get(call_id, {}) if isinstance(call_id, str) else {}
    name = data.get("name") or data.get("toolName") or call.get("name") or ""
    output = "\n".join(_output(b.get("content")) for b in blocks) if blocks else _output(content)
    if not output and isinstance(data.get("error"), dict):
        output = json.dumps(data["error"], ensure_ascii=False)
    return tool_text(name, call.get("arguments"), output, failed), failed


def _key(event: dict) -> str:
    return f"seq:{event['seq']}" if isinstance(event.get("seq"), int) else f"line:{event.get('_line', 0)}"


def items(log: SessionLog) -> list[tuple[str, str, str]]:
    """``(speaker, text, key)`` in log order, before numbering."""
    out: list[tuple[str, str, str]] = []
    calls: dict[str, dict] = {}
    for e in log.events:
        t, data = e["type"], _data(e)
        if t in ("user/message", "steering/message"):
            msg = _message(data)
            if _is_person(msg):
                out.append(("user", _text(msg.get("content"), ("text", "input_text")), _key(e)))
        elif t == "assistant/message":
            out.append(("assistant", _text(_message(data).get("content"), ("text", "output_text")), _key(e)))
        elif t == "tool/call":
            if isinstance(data.get("callId"), str):
                calls[data["callId"]] = {"name": data.get("name"), "arguments": data.get("arguments")}
        elif t == "tool/result":
            out.append(("tool", _tool_result(data, calls)[0], _key(e)))
        # every other type (chunks, packed rows, titles, headers, inbox, plugins) holds no utterance
    return out


def read(path: str | os.PathLike[str]) -> list[Utterance]:
    """The numbered utterances of a DSH session file."""
    return number(items(load(path)))


def generation(log: SessionLog) -> str | None:
    """``g0``, ``g1`` or ``g2`` from the payload shapes (the header's version is not reliable:
    g1 and g2 logs both say ``version: 0``); ``None`` when no message tells."""
    seen = None
    for e in log.events:
        t, data = e["type"], _data(e)
        if t in ("assistant/message", "tool/result") and isinstance(data.get("message"), dict):
            return "g2"
        if t == "steering/message" or (t == "assistant/message" and "provenance" in data):
            seen = "g1"
        elif t in ("assistant/message", "usage") and seen is None:
            seen = "g0"
    if seen is None and log.header and log.header.get("version") == 1:
        return "g0"
    return seen


# --------------------------------------------------------------------------- listing


def _times(log: SessionLog) -> tuple[str | None, str | None]:
    stamps = []
    for e in log.events:
        if isinstance(e.get("time"), (int, float)):
            stamps.append(e["time"])
        elif isinstance(e.get("time0"), (int, float)):  # a packed row: its last chunk's time
            dt = _data(e).get("dt")
            extra = sum(x for x in dt if isinstance(x, (int, float))) if isinstance(dt, list) else 0
            stamps.append(e["time0"] + extra)
    created = (log.header or {}).get("createdAt")
    started = iso_utc(created) or (iso_utc(stamps[0]) if stamps else None)
    updated = iso_utc(max(stamps)) if stamps else started
    return started, updated


def _path_id(path: Path) -> str:
    """The session id the path names: ``<id>.jsonl.zstd``, ``<id>/session.jsonl.zstd`` or
    ``session-<id>/session.v3.jsonl.zstd`` (directory names are percent-decoded)."""
    name = path.name
    if name.startswith("session.") or _VERSIONED.fullmatch(name):
        return unquote(path.parent.name)
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            return unquote(name[: -len(suffix)])
    return unquote(path.stem)


def _conversation(path: Path, log: SessionLog) -> Conversation:
    utterances = number(items(log))
    users, ais = counts(utterances)
    header = log.header or {}
    sid = header["id"] if isinstance(header.get("id"), str) and header.get("id") else _path_id(path)
    named = [_data(e).get("title") for e in log.events if e["type"] == "session/title"]
    titles = [t.strip() for t in named if isinstance(t, str) and t.strip()]
    if titles:
        title = titles[-1]
    else:
        first = next((u.text for u in utterances if u.speaker == "user"), "")
        title = short_title(first) or sid
    started, updated = _times(log)
    return Conversation(SOURCE, sid, path, title, started, updated, users, ais)


def conversation(path: str | os.PathLike[str]) -> Conversation:
    """One session file as a listing entry: id (the header's, else the one its path names),
    title (the last ``session/title``, else the first prompt), times (``createdAt``, else the
    first event; the last event) and message counts."""
    path = Path(path)
    return _conversation(path, load(path))


def _is_log(name: str) -> bool:
    return name.endswith(_SUFFIXES)


def _version(path: Path) -> int:
    m = _VERSIONED.fullmatch(path.name)
    return int(m.group(1)) if m else -1


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:  # gone, or not readable
        return []


def _pick(paths: list[Path]) -> Path:
    """Of several files of one session: the highest ``session.v<N>``, then the newest."""
    return max(paths, key=lambda p: (_version(p), _mtime(p), p.name))


def session_files(root: str | os.PathLike[str] | None = None) -> list[Path]:
    """The session files under ``root`` (default :func:`default_root`) in the three layouts,
    one per session: in a session folder (``session.jsonl``, ``session.jsonl.zstd``,
    ``session.v<N>.jsonl.zstd``) the highest version, then the newest file; the same for
    ``<id>.jsonl`` beside ``<id>.jsonl.zstd``."""
    root = Path(root) if root is not None else default_root()
    found: list[Path] = []
    for top in (p for p in _entries(root) if p.is_dir()):
        flat: dict[str, list[Path]] = {}
        for entry in _entries(top):
            if entry.is_file() and _is_log(entry.name):  # cwd-<hash>/<id>.jsonl.zstd, _no-cwd/<id>.jsonl
                flat.setdefault(_path_id(entry), []).append(entry)
            elif entry.is_dir():  # --<cwd>--/<id>/session.jsonl.zstd, <bucket>/session-<id>/session.v3.jsonl.zstd
                inner = [p for p in _entries(entry) if p.is_file() and _is_log(p.name)
                         and (p.name.startswith("session.jsonl") or _version(p) >= 0)]
                if inner:
                    found.append(_pick(inner))
        found.extend(_pick(group) for group in flat.values())
    return found


def _is_session(log: SessionLog) -> bool:
    """A DSH log has its header, or events numbered with ``seq`` (``seq0`` for packed rows)."""
    return log.header is not None or any(isinstance(e.get("seq", e.get("seq0")), int) for e in log.events)


def list_conversations(root: str | os.PathLike[str] | None = None, *,
                       include_subagents: bool = False) -> list[Conversation]:
    """The sessions under ``root`` (default :func:`default_root`), newest first. Files that
    hold no DSH session (no header and no numbered event) or cannot be read are left out, and so are
    subagent sessions (header ``delegationDepth`` above 0) unless ``include_subagents``."""
    out = []
    for path in session_files(root):
        try:
            log = load(path)
        except OSError:
            continue
        if not _is_session(log):
            continue
        depth = (log.header or {}).get("delegationDepth")
        if not include_subagents and isinstance(depth, int) and depth > 0:
            continue
        out.append(_conversation(path, log))
    return sorted(out, key=lambda c: (c.updated or "", c.id), reverse=True)
