"""Transcript sources (spec: reviewer.md "Targets"; upstream-facts.md 1.3 and 4.10;
../shared/fixtures/logs/README.md). Each module reads one kind of log into numbered
utterances (:mod:`..transcript`) and lists the conversations a folder holds."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from ..errors import ReviewerError
from ..transcript import Conversation, Utterance

#: The sources, as written before the colon of a target (``codex:PATH``) and after ``--source``.
SOURCES = ("notebook", "dsh", "codex", "claude", "chat")
#: The module that reads each source (imported only when it is used).
MODULES = {"notebook": "notebook", "dsh": "dsh", "codex": "codex", "claude": "claude", "chat": "jupyter_chat"}
#: What each source's PATH names, for messages.
WHAT = {
    "notebook": "a %%chat session file (<stem>.dsh/sessions/<id>.jsonl)",
    "dsh": "a DeepSeek Harness session log (.jsonl or .jsonl.zstd)",
    "codex": "a Codex CLI rollout (rollout-*.jsonl or .jsonl.zst)",
    "claude": "a Claude Code transcript (~/.claude/projects/*/<id>.jsonl)",
    "chat": "a jupyterlab-chat document (.chat)",
}


class TargetError(ReviewerError, ValueError):
    """A target or a listing that cannot be served; the message is one line for the person."""

    code = "REVIEW_TARGET"


def _allowed() -> str:
    return ", ".join(f"{s}:PATH" for s in SOURCES)


def _check_source(source: str) -> str:
    if source not in SOURCES:
        raise TargetError(f"unknown source {source!r}; the sources are {', '.join(SOURCES)}")
    return source


def module(source: str) -> ModuleType:
    """The reader module of ``source`` (``chat`` is :mod:`.jupyter_chat`), imported now."""
    return importlib.import_module(f".{MODULES[_check_source(source)]}", __name__)


def _exists_note(path: Path) -> str:
    if path.is_file():
        return f"the file {path} exists"
    if path.exists():
        return f"{path} exists but is not a file"
    return f"the file {path} does not exist"


def parse_target(target: str) -> tuple[str, Path]:
    """``"codex:PATH"`` -> ``("codex", Path(PATH))``. Raises :class:`TargetError` (a
    ``ValueError``) when the prefix is not one of :data:`SOURCES` (naming them, and saying
    whether the file exists) or when PATH is not an existing file."""
    source, sep, rest = str(target).partition(":")
    if not sep or source not in SOURCES:
        guess = Path(rest if sep and len(source) > 1 else str(target)).expanduser()
        why = f"unknown source {source!r}" if sep and len(source) > 1 else "no source prefix"
        raise TargetError(f"{target!r}: {why}; a target is one of {_allowed()} ({_exists_note(guess)})")
    if not rest.strip():
        raise TargetError(f"{target!r}: no path after {source}:; a target is one of {_allowed()}")
    path = Path(rest).expanduser()
    if not path.exists():
        raise TargetError(f"{target!r}: no such file: {path} ({source}: expects {WHAT[source]})")
    if not path.is_file():
        hint = " (list its sessions with `dsh-notebook review list --source notebook --root " + str(path) + "`)" \
            if source == "notebook" else ""
        raise TargetError(f"{target!r}: {path} is not a file; {source}: expects {WHAT[source]}{hint}")
    if source == "notebook" and path.suffix == ".ipynb":
        raise TargetError(f"{target!r}: {path} is a notebook, not one of its chat sessions; list them with "
                          f"`dsh-notebook review list --source notebook --root {path}`")
    return source, path


def _json_objects(lines: Iterable[str | bytes]) -> list[dict]:
    out = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(row, dict):
            out.append(row)
    return out


def _text_lines(path: Path) -> list[str]:
    # JSON Lines end at "\n" only: str.splitlines() would also cut a row at a U+2028, U+0085 or
    # \x1c that JSON keeps raw inside a string
    return path.read_bytes().decode("utf-8", errors="replace").split("\n")


_CODEX_TYPES = {"session_meta", "response_item", "compacted", "turn_context", "event_msg", "world_state",
                "inter_agent_communication", "inter_agent_communication_metadata"}
_CLAUDE_TYPES = {"summary", "file-history-snapshot", "system", "custom-title", "ai-title"}


def _looks_like(source: str, path: Path) -> bool:
    """Whether ``path`` has the shapes of a ``source`` log (so an empty session is told apart
    from some other file, and another format's log is not half-read as this one)."""
    if source == "dsh":
        from . import dsh

        log = dsh.load(path)  # a header, or events {seq, time, data} / packed rows {seq0, ...}
        return log.header is not None or any(
            (isinstance(e.get("seq"), int) and isinstance(e.get("data"), dict)) or isinstance(e.get("seq0"), int)
            for e in log.events)
    if source == "notebook":
        from ...llm.session import EVENT_TYPES

        return any(r.get("type") in EVENT_TYPES and isinstance(r.get("ts"), str)
                   for r in _json_objects(_text_lines(path)))
    if source == "chat":
        try:
            doc = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            return False
        return isinstance(doc, dict) and isinstance(doc.get("messages"), list)
    if source == "codex":
        if path.name.endswith(".zst"):
            return True  # the reader decompressed it without complaint; its lines are its own business
        rows = _json_objects(_text_lines(path))
        return any(r.get("type") in _CODEX_TYPES or "record_type" in r for r in rows) or bool(
            rows and {"id", "timestamp"} <= rows[0].keys())
    if source == "claude":
        return any(r.get("type") in _CLAUDE_TYPES or (r.get("type") in ("user", "assistant")
                                                      and isinstance(r.get("message"), dict))
                   for r in _json_objects(_text_lines(path)))
    return True


def read_target(target: str) -> list[Utterance]:
    """The numbered utterances of a target (``codex:PATH``, ``dsh:PATH``, ``claude:PATH``,
    ``chat:PATH``, ``notebook:PATH``). Raises :class:`TargetError` for a bad target, a missing
    file, or a file that cannot be read as that source (none of its lines has the format's
    shape: a text file passed as ``dsh:``, a Codex rollout passed as ``claude:``)."""
    source, path = parse_target(target)
    reader = module(source)
    try:
        utterances = reader.read(path)
        readable = _looks_like(source, path)
    except Exception as exc:  # the readers tolerate damage; anything that escapes means "not this format"
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise TargetError(f"cannot read {path} as {WHAT[source]} ({' '.join(detail.split())})") from exc
    if not readable:
        raise TargetError(f"{path} is not {WHAT[source]}: no line of it has that format's shape")
    return utterances


def root_of(source: str, root: str | os.PathLike[str] | None = None) -> Path:
    """The folder a listing of ``source`` reads: ``root`` (for ``notebook``, a notebook or a
    sidecar folder, given as its sessions folder), else the source's default root."""
    if _check_source(source) == "notebook":
        if root is None:
            raise TargetError("the notebook source needs --root: a notebook (x.ipynb) or its sidecar folder (x.dsh)")
        return module("notebook").sessions_folder(Path(root).expanduser())
    return Path(root).expanduser() if root is not None else Path(module(source).default_root())


def list_source(source: str, root: str | os.PathLike[str] | None = None) -> list[Conversation]:
    """The conversations ``source`` holds under ``root`` (default: the source's own root;
    required for ``notebook``: a notebook path or its sidecar folder), newest first. Raises
    :class:`TargetError` for an unknown source, a missing notebook root, or a given root
    that does not exist."""
    folder = root_of(source, root)
    if root is not None:
        given = Path(root).expanduser()
        if not given.exists() and not folder.exists():
            what = "notebook or sidecar folder" if source == "notebook" else "folder"
            raise TargetError(f"no such {what}: {given}")
    return module(source).list_conversations(folder)


def transcript_text(utterances: list[Utterance]) -> str:
    """The transcript as the reviewer sends it, before the tail window: one block per
    utterance, ``[U3] text`` (the text as read, line breaks kept), a blank line between
    blocks. Pure: the same utterances give the same text."""
    return "\n\n".join(f"[{u.marker}] {u.text}" for u in utterances)
