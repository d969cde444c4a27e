"""Codex CLI rollouts as transcripts (spec: reviewer.md "Targets"; upstream-facts.md 4.10;
../shared/fixtures/logs/README.md "Codex" notes, which win where they differ from 4.10).

Design, in a few lines:

- **Where.** ``default_root()`` is ``$CODEX_HOME`` or ``~/.codex``; rollouts are
  ``sessions/**/rollout-*.jsonl`` and ``archived_sessions/**``, plain or ``.jsonl.zst``
  (zstd; the plain file wins when both exist, as in ``codex-rs/rollout/src/compression.rs``).
- **One conversation = one thread.** The thread id is the first id after the timestamp in
  ``rollout-<ts>-<thread>[_<rollout_id>].jsonl``; every file of a thread is read, oldest
  file first, and summed. :func:`read` given any one of them reads the whole thread.
- **Lines.** ``{timestamp, type, payload}`` envelopes, and the bare pre-September-2025 form
  (first line ``{id, timestamp, instructions, git}``, ``{"record_type":"state"}`` markers,
  bare items). Unknown kinds, non-JSON lines and a torn last line are skipped.
- **User text** comes from ``response_item`` user messages, ``event_msg`` ``user_message``
  and ``item_completed`` ``UserMessage``; injected context is dropped per content part
  (:data:`INJECTED_PREFIXES`, role ``developer``), and of the IDE / desktop wrappers only the
  text after ``## My request for Codex:`` is kept.
- **Assistant text** comes from ``event_msg`` ``agent_message``, ``response_item`` assistant
  ``output_text``, ``item_completed`` ``AgentMessage`` and ``task_complete.last_agent_message``.
  The copies of one message are folded into one utterance: a text equal (whitespace
  ignored) to an earlier utterance of the same speaker in the same turn that came from a
  different form is dropped (each utterance absorbs at most one copy per form); for the user,
  only while no AI reply came between. ``last_agent_message`` is kept only if no assistant
  utterance of its turn already says it.
- **Resumed, forked and compacted histories** (issue 21, case P20). A later rollout file of
  a thread that begins by replaying the history read before it (same speakers and texts in the
  same order: Codex writes the earlier records again when a thread is resumed) has that
  prefix left out and one ``[replayed history]`` note in its place, so each utterance is read
  once. A run that is only a few items long counts as a replay only when it starts at the
  thread's first utterance (or covers it all); otherwise a person repeating an earlier prompt
  is read as said. A forked thread (``session_meta.forked_from_id``, or the parent's own
  ``session_meta`` copied into the file) gets a ``[forked]`` note where the copy of the
  parent's history ends (found by the parent's texts and order when its rollout is under the
  same home or folder), or at the start when the parent is not there. A ``compacted`` record
  (and the ``context_compacted`` event) becomes one ``[compacted history]`` note with the
  summary; its ``replacement_history`` is not read as conversation. Notes are
  :mod:`..transcript` ``note`` utterances (``N3``), never user turns.
- **Tools.** A call and its output become one tool utterance at the output's line: the call
  on one line (``name: arguments``, cut to 300 characters; a shell command as its command
  line), then the output cut to 2,000 characters with a note (shell JSON outputs as
  ``(exit N)`` and the text; ``exec_command``'s bookkeeping lines dropped). A call with no
  output yet stands at its own line. A ``write_stdin`` is named after the command it feeds,
  and an empty poll that saw nothing new is left out. Reasoning, token counts, turn
  contexts and ``*_end`` events (copies of the outputs) are skipped.
- **Keys** are ``line:<n>`` (1-based line of the decompressed file); when a thread spans
  several files, ``<file name>:line:<n>``.
- **Titles**: ``project / name`` where the project comes from ``.codex-global-state.json``
  and the name from ``session_index.jsonl`` (newest non-empty entry wins), else the first
  real user prompt cut to 80 characters; else the cwd's folder name; else the id's prefix.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..transcript import (
    ARGS_CHARS,
    Conversation,
    Utterance,
    arguments_text,
    clip,
    counts,
    cut,
    iso_utc,
    loads_lenient,
    modified_utc,
    note_text,
    number,
    short_title,
    tool_text,
)

SOURCE = "codex"

#: Content parts of role ``user`` that the app wrote, not the person (checked per part,
#: after leading whitespace).
INJECTED_PREFIXES = (
    "<environment_context",
    "<user_instructions",
    "# AGENTS.md instructions for",
    "<permissions instructions",
    "<collaboration_mode",
    "<skills_instructions",
    "<plugins_instructions",
    "<plugin",
    "<external_codex_apps",
    "<send_user_message_question_reply",
    "<in-app-browser-context",
    "<turn_aborted",
    "<subagent_notification",
    ">>> RETAINED USER INSTRUCTIONS",
    ">>> TRANSCRIPT",
    "Host notice:",
    "Retained source order:",
    "The following is the Codex agent history",
)
#: Wrappers around the person's words (VS Code extension, desktop app).
WRAPPER_PREFIXES = ("# Context from my IDE setup:", "# Files mentioned by the user:")
REQUEST_MARKER = "## My request for Codex:"

_RUNNING = re.compile(r"^\(running, session (\d+)\)$", re.MULTILINE)
_HISTORY_LINE = re.compile(r"^\[\d+\] (user|assistant):")
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_ROLLOUT_NAME = re.compile(
    r"^rollout-(?P<ts>\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)-(?P<thread>" + _UUID + r")(?:_(?P<rollout>" + _UUID + r"))?"
    r"\.jsonl(?:\.zst)?$"
)
_ENVELOPE_TYPES = {
    "session_meta",
    "response_item",
    "compacted",
    "turn_context",
    "event_msg",
    "world_state",
    "inter_agent_communication",
    "inter_agent_communication_metadata",
}
_ZSTD_SUFFIX = ".zst"


def default_root() -> Path:
    """``$CODEX_HOME`` if set, else ``~/.codex``."""
    home = os.environ.get("CODEX_HOME")
    return Path(home).expanduser() if home else Path.home() / ".codex"


def read(path: str | Path) -> list[Utterance]:
    """The numbered utterances of the thread ``path`` belongs to (all its rollout files,
    oldest first)."""
    return _read_thread(thread_files(Path(path))).utterances


def conversation(path: str | Path) -> Conversation:
    """The listing entry of the thread ``path`` belongs to (titles looked up in the Codex
    home the file lives under, if any)."""
    path = Path(path)
    files = thread_files(path)
    home = _home_of(path)
    names, projects = (_session_index(home), _project_map(home)) if home else ({}, {})
    return _conversation(files, _read_thread(files), names, projects)


def list_conversations(root: str | Path | None = None) -> list[Conversation]:
    """Every thread under ``root`` (a Codex home with ``sessions/`` and
    ``archived_sessions/``, or any folder of rollouts; default :func:`default_root`),
    newest first. Threads with neither a user nor an AI message are left out."""
    root = Path(root).expanduser() if root is not None else default_root()
    dirs = [d for d in (root / "sessions", root / "archived_sessions") if d.is_dir()]
    home = root if dirs else _home_of(root / "x")
    files = [f for d in (dirs or [root]) if d.is_dir() for f in _rollout_files(d)]
    names, projects = (_session_index(home), _project_map(home)) if home else ({}, {})
    groups: dict[str, list[Path]] = {}
    for f in files:
        groups.setdefault(_thread_id(f) or str(f), []).append(f)
    out = []
    for group in groups.values():
        group = _ordered(group)
        try:
            thread = _read_thread(group)
        except OSError:
            continue
        conv = _conversation(group, thread, names, projects)
        if conv.user_messages or conv.ai_messages:
            out.append(conv)
    out.sort(key=lambda c: c.updated or c.started or "", reverse=True)
    return out


def thread_files(path: Path) -> list[Path]:
    """The rollout files of ``path``'s thread, oldest first: ``path`` itself and the files
    with the same thread id under the same Codex home (``sessions/`` and
    ``archived_sessions/``) or, outside one, in the same folder. A compressed file whose
    plain twin exists is replaced by the twin."""
    path = Path(path)
    if path.name.endswith(".jsonl" + _ZSTD_SUFFIX):
        plain = path.with_name(path.name[: -len(_ZSTD_SUFFIX)])
        if plain.exists():
            path = plain
    thread = _thread_id(path)
    if thread is None:
        return [path]
    return _ordered(_prefer_plain(sorted({path, *_find_thread(thread, path)})))


def _find_thread(thread: str, near: Path) -> list[Path]:
    """The rollout files of ``thread`` under the Codex home ``near`` lives in (or, outside one,
    in ``near``'s folder), oldest first."""
    thread = thread.lower()
    home = _home_of(near)
    dirs = [d for d in ((home / "sessions", home / "archived_sessions") if home else (near.parent,)) if d.is_dir()]
    found = set()
    for d in dirs:
        pattern = f"rollout-*{thread}*.jsonl*"
        for f in d.rglob(pattern) if home else d.glob(pattern):
            if f.is_file() and _thread_id(f) == thread:
                found.add(f)
    return _ordered(_prefer_plain(sorted(found)))


# --- files -------------------------------------------------------------------------------


def _rollout_files(folder: Path) -> list[Path]:
    return _prefer_plain(
        sorted(
            f
            for f in folder.rglob("rollout-*.jsonl*")
            if f.is_file() and (f.name.endswith(".jsonl") or f.name.endswith(".jsonl" + _ZSTD_SUFFIX))
        )
    )


def _prefer_plain(files: list[Path]) -> list[Path]:
    present = set(files)
    return [
        f
        for f in files
        if not (
            f.name.endswith(_ZSTD_SUFFIX)
            and (f.with_name(f.name[: -len(_ZSTD_SUFFIX)]) in present or f.with_name(f.name[: -len(_ZSTD_SUFFIX)]).exists())
        )
    ]


def _ordered(files: list[Path]) -> list[Path]:
    def key(f: Path) -> tuple[str, str]:
        m = _ROLLOUT_NAME.match(f.name)
        return (m.group("ts") if m else "", f.name)

    return sorted(files, key=key)


def _thread_id(path: Path) -> str | None:
    m = _ROLLOUT_NAME.match(path.name)
    return m.group("thread").lower() if m else None


def _home_of(path: Path) -> Path | None:
    for parent in path.parents:
        if parent.name in ("sessions", "archived_sessions"):
            return parent.parent
    return None


def _lines(path: Path) -> list[str]:
    """The text lines of a plain or zstd-compressed file; a damaged or unfinished zstd tail
    keeps what decompressed before it."""
    if path.name.endswith(_ZSTD_SUFFIX):
        from .dsh import decompress

        data = decompress(path.read_bytes())
    else:
        data = path.read_bytes()
    return data.decode("utf-8", errors="replace").split("\n")


# --- titles ------------------------------------------------------------------------------


def _session_index(home: Path) -> dict[str, str]:
    names: dict[str, str] = {}
    try:
        lines = (home / "session_index.jsonl").read_bytes().decode("utf-8", errors="replace").split("\n")
    except OSError:
        return names
    for line in lines:
        entry = loads_lenient(line)
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            name = entry.get("thread_name")
            if isinstance(name, str) and name.strip():
                names[entry["id"].lower()] = name.strip()  # append-only: the newest entry wins
    return names


def _project_map(home: Path) -> dict[str, str]:
    try:
        state = json.loads((home / ".codex-global-state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(state, dict):
        return {}
    projects = state["local-projects"] if isinstance(state.get("local-projects"), dict) else {}
    assignments = state.get("thread-project-assignments")
    out: dict[str, str] = {}
    for thread, value in (assignments.items() if isinstance(assignments, dict) else ()):
        pid = value.get("projectId") if isinstance(value, dict) else value
        project = projects.get(pid) if isinstance(pid, str) else None
        name = project.get("name") if isinstance(project, dict) else None
        if isinstance(name, str) and name.strip():
            out[str(thread).lower()] = name.strip()
    return out


def _conversation(files: list[Path], thread: _Thread, names: dict[str, str], projects: dict[str, str]) -> Conversation:
    newest = files[-1]
    tid = _thread_id(newest) or (thread.session_id or "").lower() or newest.name.split(".")[0]
    name = names.get(tid) or names.get((thread.session_id or "").lower()) or short_title(thread.first_prompt)
    project = projects.get(tid)
    if name and project:
        title = f"{project} / {name}"
    else:
        title = name or project or (Path(thread.cwd).name if thread.cwd else "") or tid[:8]
    if thread.subagent:
        title += " (subagent)"
    users, ais = counts(thread.utterances)
    return Conversation(SOURCE, tid, newest, title, thread.started, thread.updated or modified_utc(newest), users, ais)


# --- reading -----------------------------------------------------------------------------


@dataclass
class _Item:
    speaker: str
    text: str
    key: str
    forms: set[str] = field(default_factory=set)


@dataclass
class _Thread:
    utterances: list[Utterance]
    session_id: str | None = None
    cwd: str | None = None
    started: str | None = None
    updated: str | None = None
    first_prompt: str | None = None
    subagent: bool = False
    forked_from: str | None = None


def _read_thread(files: list[Path], *, parent: bool = True) -> _Thread:
    reader = _read_items(files)
    if parent and reader.meta.forked_from:
        reader.mark_fork(files[0])
    return reader.finish()


def _read_items(files: list[Path]) -> _Reader:
    reader = _Reader()
    for f in files:
        reader.read_file(f, prefix=f"{f.name}:" if len(files) > 1 else "")
    return reader


class _Reader:
    def __init__(self) -> None:
        self.items: list[_Item] = []
        self.meta = _Thread([])
        self.processes: dict[str, str] = {}  # exec_command session id -> command

    def finish(self) -> _Thread:
        self.meta.utterances = number([(i.speaker, i.text, i.key) for i in self.items])
        return self.meta

    # one file ----------------------------------------------------------------------------

    def read_file(self, path: Path, prefix: str) -> None:
        start = len(self.items)
        records: list[tuple[str, str, dict]] = []  # (key, kind, payload)
        for n, line in enumerate(_lines(path), 1):
            d = loads_lenient(line)
            if not isinstance(d, dict):
                continue
            kind, payload = self._classify(d, first=not records)
            stamp = d["timestamp"] if isinstance(d.get("timestamp"), str) else None
            if stamp and kind:
                self._stamp(stamp)
            if kind:
                records.append((f"{prefix}line:{n}", kind, payload))
        answered = {
            p.get("call_id")
            for k, p in (r[1:] for r in records)
            if k == "response_item" and str(p.get("type", "")).endswith("_call_output")
        }
        item_calls = {p.get("call_id") for k, p in (r[1:] for r in records) if k == "response_item" and p.get("call_id")}
        calls: dict[Any, dict] = {}  # by call_id, as the JSON gives it
        for key, kind, payload in records:
            if kind == "session_meta":
                self._session_meta(payload)
            elif kind == "response_item":
                self._response_item(key, payload, calls, answered)
            elif kind == "event_msg":
                self._event(key, payload, item_calls)
            elif kind == "compacted":
                self._compacted(key, payload)
        if start:
            self._drop_replay(start, path.name)

    # resumed, forked and compacted histories -----------------------------------------------

    def _compacted(self, key: str, p: dict) -> None:
        """A ``compacted`` record: the history before it was replaced by a summary (and, in
        newer builds, a ``replacement_history``). Labelled with a note; the replacement items
        are copies, not new words, and are not read as conversation."""
        summary = p["message"] if isinstance(p.get("message"), str) else ""
        history = p.get("replacement_history")
        kept = f", keeping {len(history)} items of it" if isinstance(history, list) else ""
        text = f"Codex compacted the conversation here{kept}; from here on the model worked from a summary"
        text += f". The summary:\n{cut(summary.strip())}" if summary.strip() else "."
        if self.items and self.items[-1].speaker == "note" and self.items[-1].text.startswith("[compacted history]"):
            self.items.pop()  # the context_compacted event of the same compaction
        self._add(key, "note", note_text("compacted history", text), "note")

    def _drop_replay(self, start: int, name: str) -> None:
        """A later rollout file of the same thread that begins by replaying the history read
        before it (P20: Codex writes the earlier messages again at the start of a resumed
        rollout): the replayed items (the same speakers and texts, in the same order as
        earlier ones) are dropped and one note says so. Notes in between are kept."""
        old, new = self.items[:start], self.items[start:]
        drop, matched = _replayed_prefix(new, old)
        if not drop:
            return
        earlier = [k for k, i in enumerate(old) if i.speaker != "note"]
        speakers = {new[k].speaker for k in drop}
        # a replay repeats a request and what answered it: a person typing an earlier request again
        # (and a command giving the same output) is not one
        from_the_start = matched[0] == earlier[0] and {"user", "assistant"} <= speakers
        long_run = len(drop) >= 4 and {"user", "assistant"} <= speakers  # a replay of a compacted, shorter history
        if not (len(drop) == len(earlier) or from_the_start or long_run):
            return  # a few new words that happen to repeat earlier ones are new words
        first, last = _turn_of(old, matched[0]), _turn_of(old, matched[-1])
        turns = f"turn {first}" if first == last else f"turns {first}-{last}"
        note = _Item("note", note_text(
            "replayed history",
            f"{name} begins by repeating {len(drop)} utterances of {turns} above (Codex replays the earlier history "
            "when a thread is resumed); they are read once, above, and left out here."), new[drop[0]].key, {"note"})
        dropped = set(drop)
        rest = [item for k, item in enumerate(new) if k not in dropped]
        self.items = [*old, *rest[: drop[0]], note, *rest[drop[0]:]]

    def mark_fork(self, near: Path) -> None:
        """A forked thread (``session_meta.forked_from_id``, or the parent's own
        ``session_meta`` copied into the file) begins with the parent's history: a note marks
        where the copy ends (found by the parent's texts and order when its rollout is under
        the same Codex home or folder), or, without the parent, that the opening is copied."""
        parent = str(self.meta.forked_from)
        files = [f for f in _find_thread(parent, near) if f != near]
        drop: list[int] = []
        if files:
            try:
                parent_items = _read_items(files).items
            except OSError:
                parent_items = []
            drop, _ = _replayed_prefix(self.items, parent_items)
        if drop:
            at = drop[-1] + 1
            text = (f"This thread was forked from thread {parent}: the {len(drop)} utterances above were copied from "
                    "it when the fork was made; what follows is this thread's own.")
            key = self.items[drop[-1]].key
        else:
            at = 0
            text = (f"This thread was forked from thread {parent}; its opening utterances are copied from that thread"
                    + (" (its rollout is not here, so where the copy ends is not known)." if not files else "."))
            key = self.items[0].key if self.items else "line:1"
        self.items.insert(at, _Item("note", note_text("forked", text), key, {"note"}))

    def _classify(self, d: dict, first: bool) -> tuple[str | None, dict]:
        kind = d.get("type")
        if kind in _ENVELOPE_TYPES and "payload" in d:
            return kind, d["payload"] if isinstance(d["payload"], dict) else {}
        if "record_type" in d:
            return None, {}
        if first and "id" in d and "timestamp" in d and "type" not in d:
            return "session_meta", d  # bare header of a pre-September-2025 rollout
        if isinstance(kind, str) and "payload" not in d:
            return "response_item", d  # bare item
        return None, {}

    def _stamp(self, stamp: str) -> None:
        iso = iso_utc(stamp)  # always milliseconds, so the strings sort as times
        if iso:
            if self.meta.started is None or iso < self.meta.started:
                self.meta.started = iso
            if self.meta.updated is None or iso > self.meta.updated:
                self.meta.updated = iso

    def _session_meta(self, p: dict) -> None:
        m = self.meta
        if m.session_id is None and isinstance(p.get("id"), str):
            m.session_id = p["id"]
        if m.cwd is None and isinstance(p.get("cwd"), str):
            m.cwd = p["cwd"]
        stamp = iso_utc(p.get("timestamp")) if isinstance(p.get("timestamp"), str) else None
        if stamp and (m.started is None or stamp < m.started):
            m.started = stamp
        if isinstance(p.get("source"), dict) and "subagent" in p["source"] and not m.subagent:
            m.subagent = True
            spawn = p["source"]["subagent"]
            spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
            parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
            self.items.insert(0, _Item("note", note_text("sub-agent", (
                f"This thread is a sub-agent{f' started by thread {parent}' if isinstance(parent, str) else ''}: "
                "its 'user' messages were written by the agent that started it, not by the person.")), "line:1",
                {"note"}))
        if m.forked_from is None:
            if isinstance(p.get("forked_from_id"), str) and p["forked_from_id"].strip():
                m.forked_from = p["forked_from_id"].strip().lower()
            elif isinstance(p.get("id"), str) and m.session_id and p["id"].lower() != m.session_id.lower():
                m.forked_from = p["id"].lower()  # the parent's own session_meta, copied into a fork

    # items -------------------------------------------------------------------------------

    def _response_item(self, key: str, p: dict, calls: dict[Any, dict], answered: set) -> None:
        t = p.get("type")
        if t == "message":
            role = p.get("role")
            parts = p["content"] if isinstance(p.get("content"), list) else [p.get("content")]
            if role == "user":
                self._add_user(key, _user_text(parts), "response")
            elif role == "assistant":
                self._add_assistant(key, _joined(parts), "response")
            return  # developer / system: harness instructions
        if not isinstance(t, str):
            return
        if t.endswith("_call_output"):
            call = calls.pop(p.get("call_id"), None) or {}
            output = _output_text(p.get("output"))
            args = loads_lenient(call.get("arguments"))
            if call.get("name") == "exec_command" and isinstance(args, dict):
                running = _RUNNING.search(output)
                if running:  # later write_stdin calls name this session
                    self.processes[running.group(1)] = _command(args.get("cmd"))
            elif call.get("name") == "write_stdin" and isinstance(args, dict):
                if not args.get("chars") and not _RUNNING.sub("", output).strip():
                    return  # a poll that saw nothing new
                process = self.processes.get(str(args.get("session_id")))
                if process:
                    chars = f" <- {args['chars']!r}" if args.get("chars") else ""
                    head = f"write_stdin: session {args.get('session_id')} ({clip(process, ARGS_CHARS)}){chars}"
                    self._add(key, "tool", tool_text(head, None, output), "tool")
                    return
            head = _call_head(call) if call else "tool output"
            self._add(key, "tool", tool_text(head, None, output), "tool")
        elif t.endswith("_call"):
            call_id = p.get("call_id")
            if call_id and call_id in answered:
                calls[call_id] = p
            else:
                status = p.get("status")
                tail = f"({status})" if t == "web_search_call" and status else "(no output recorded)"
                self._add(key, "tool", tool_text(_call_head(p), None, tail), "tool")

    def _event(self, key: str, p: dict, item_calls: set) -> None:
        t = p.get("type")
        if t == "user_message":
            text = p.get("message")
            if isinstance(text, str):
                self._add_user(key, _user_part(text), "event")
        elif t == "agent_message":
            if isinstance(p.get("message"), str):
                self._add_assistant(key, p["message"], "event")
        elif t == "context_compacted":
            if not (self.items and self.items[-1].speaker == "note"
                    and self.items[-1].text.startswith("[compacted history]")):
                self._add(key, "note", note_text("compacted history", "Codex compacted the conversation here; "
                                                 "from here on the model worked from a summary."), "note")
        elif t == "task_complete":
            last = p.get("last_agent_message")
            if isinstance(last, str) and last.strip():
                norm = _norm(last)
                if not any(i.speaker == "assistant" and _norm(i.text) == norm for i in self._current_turn()):
                    self._add(key, "assistant", last, "task_complete")
        elif t == "item_completed" and isinstance(p.get("item"), dict):
            item = p["item"]
            kind = str(item.get("type", "")).lower()
            parts = item["content"] if isinstance(item.get("content"), list) else [item.get("text")]
            if kind == "usermessage":
                self._add_user(key, _user_text(parts), "item")
            elif kind == "agentmessage":
                self._add_assistant(key, _joined(parts), "item")
            elif kind in ("commandexecution", "mcptoolcall") and not ({item.get("call_id"), item.get("id")} & item_calls):
                self._add(key, "tool", tool_text(_item_head(item), None, _output_text(item.get("result") or item.get("output"))), "tool")

    # folding copies ----------------------------------------------------------------------

    def _current_turn(self) -> list[_Item]:
        out = []
        for item in reversed(self.items):
            if item.speaker == "user":
                break
            out.append(item)
        return out

    def _add_user(self, key: str, text: str | None, form: str) -> None:
        if not text or not text.strip():
            return
        norm = _norm(text)
        for item in reversed(self.items):
            if item.speaker == "tool":
                continue
            if item.speaker == "user" and _norm(item.text) == norm and form not in item.forms:
                item.forms.add(form)
                return
            break
        if self.meta.first_prompt is None:
            self.meta.first_prompt = text
        self._add(key, "user", text, form)

    def _add_assistant(self, key: str, text: str | None, form: str) -> None:
        if not text or not text.strip():
            return
        norm = _norm(text)
        for item in self._current_turn():  # newest first
            if item.speaker == "assistant" and form not in item.forms and _norm(item.text) == norm:
                item.forms.add(form)
                return
        self._add(key, "assistant", text, form)

    def _add(self, key: str, speaker: str, text: str, form: str) -> None:
        if text and text.strip():
            self.items.append(_Item(speaker, text.strip("\n"), key, {form}))


def _replayed_prefix(new: list[_Item], old: list[_Item]) -> tuple[list[int], list[int]]:
    """The items at the start of ``new`` that repeat items of ``old`` in the same order (same
    speaker, same text with whitespace ignored): ``(indexes in new, indexes in old)``. Notes
    in ``new`` are passed over; the first item that repeats nothing ends the prefix."""
    drop: list[int] = []
    matched: list[int] = []
    pending: list[int] = []  # tool outputs that differ from the earlier ones (a replay may shorten them)
    j = 0
    for k, item in enumerate(new):
        if item.speaker == "note":
            continue
        want = (item.speaker, _norm(item.text))
        i = j
        while i < len(old) and (old[i].speaker, _norm(old[i].text)) != want:
            i += 1
        if i == len(old):
            if item.speaker == "tool" and drop:
                pending.append(k)  # kept out of the prefix unless what follows is replayed too
                continue
            break
        drop.extend(pending)
        pending = []
        drop.append(k)
        matched.append(i)
        j = i + 1
    return drop, matched


def _turn_of(items: list[_Item], index: int) -> int:
    return sum(1 for i in items[: index + 1] if i.speaker == "user")


# --- text helpers ------------------------------------------------------------------------


def _user_part(text: str) -> str | None:
    """The person's words in one content part, or ``None`` for injected context."""
    s = text.lstrip()
    if s.startswith(WRAPPER_PREFIXES):
        i = s.find(REQUEST_MARKER)
        return (s[i + len(REQUEST_MARKER) :].strip() or None) if i >= 0 else None
    if s.startswith(INJECTED_PREFIXES) or _HISTORY_LINE.match(s):
        return None
    return text.strip() or None


def _user_text(parts: list) -> str | None:
    kept = [_user_part(t) for t in _texts(parts)]
    return "\n\n".join(t for t in kept if t) or None


def _joined(parts: list) -> str:
    return "\n".join(t for t in _texts(parts) if t)


def _texts(parts: list) -> list[str]:
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str) \
                and str(part.get("type", "text")).lower().endswith("text"):
            out.append(part["text"])
    return out


def _norm(text: str) -> str:
    return "".join(text.split())


def _call_head(p: dict) -> str:
    t = p.get("type")
    if t == "web_search_call":
        action = p["action"] if isinstance(p.get("action"), dict) else {}
        return f"web_search: {clip(str(action.get('query') or action.get('url') or ''), ARGS_CHARS)}".rstrip()
    if t == "local_shell_call":
        action = p["action"] if isinstance(p.get("action"), dict) else {}
        return f"shell: {clip(_command(action.get('command')), ARGS_CHARS)}"
    name = p.get("name") or t or "tool"
    raw = p.get("arguments") if "arguments" in p else p.get("input")
    return f"{name}: {clip(_args(raw), ARGS_CHARS)}".rstrip(": ")


def _item_head(item: dict) -> str:
    if str(item.get("type", "")).lower() == "commandexecution":
        return f"shell: {clip(_command(item.get('command')), ARGS_CHARS)}"
    return f"{item.get('server', '')}.{item.get('tool', '')}: {clip(_args(item.get('arguments')), ARGS_CHARS)}"


def _args(raw: object) -> str:
    """A shell command as its command line, a ``write_stdin`` and a plan in short, anything
    else as :func:`~dsh_notebook.reviewer.transcript.arguments_text` shows it (free-form
    input such as ``apply_patch``'s as it is)."""
    value = loads_lenient(raw) if isinstance(raw, str) else raw
    if isinstance(value, dict):
        for k in ("cmd", "command"):
            if k in value:
                return _command(value[k])
        if "chars" in value and "session_id" in value:
            return f"session {value['session_id']} <- {value['chars']!r}"
        if isinstance(value.get("plan"), list):
            return "; ".join(
                f"{s.get('step', '')} [{s.get('status', '')}]" for s in value["plan"] if isinstance(s, dict)
            )
    return arguments_text(raw)


def _command(command: object) -> str:
    if isinstance(command, list):
        parts = [str(c) for c in command]
        if len(parts) == 3 and parts[1] in ("-lc", "-c"):
            return parts[2]
        return " ".join(parts)
    return str(command or "")


def _output_text(output: object) -> str:
    if isinstance(output, list):
        return "\n".join(_texts(output))
    if isinstance(output, dict):
        content = output.get("content")
        text = "\n".join(_texts(content)) if isinstance(content, list) else str(content or "")
        return ("(error) " if output.get("isError") or output.get("success") is False else "") + text
    text = str(output or "")
    data = loads_lenient(text) if text.startswith("{") else None
    if isinstance(data, dict) and "output" in data:  # shell: {"output":…, "metadata":{"exit_code":…}}
        meta = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
        code = meta.get("exit_code")
        return (f"(exit {code})\n" if code is not None else "") + str(data["output"])
    if text.startswith("Chunk ID:"):  # exec_command / write_stdin: drop the bookkeeping lines
        lines = []
        for i, line in enumerate(text.split("\n")):
            if line == "Output:":
                lines.extend(text.split("\n")[i + 1 :])
                break
            if line.startswith("Process running with session ID"):
                lines.append(f"(running, session {line.rsplit(' ', 1)[-1]})")
            elif not line.startswith(("Chunk ID:", "Wall time:", "Original token count:")):
                lines.append(line)
        return "\n".join(lines)
    return text

