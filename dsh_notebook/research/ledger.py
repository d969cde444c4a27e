"""The research ledger's writer and verifier (spec: research.md "Events", "Python API
(binding)", the writer's checks; storage.md "Writing rules": ledgers are hash-chained, locked
and fsynced per append).

Design:

- A ledger is ``<stem>.dsh/ledger/<name>.jsonl``: a header ``{seq: 0, version: 1, name,
  created}``, then one event per line ``{seq, ts, type: "research/<name>", actor: {role,
  authority, model?, prompt_version?}, prev, data}`` where ``prev`` is the sha256 of the previous
  line's bytes.
- ``Ledger.append(type, data, actor)`` never raises for bad input; it returns a receipt
  ``{"ok": True, "seq", "hash"}`` or ``{"ok": False, "code", "error"}``. Checks, in order:
  schema (``LEDGER_SCHEMA``), authority (``LEDGER_AUTHORITY``), references (``LEDGER_REFERENCE``),
  state (``LEDGER_STATE``). References and state are checked, and ``seq``/``prev`` computed,
  inside ``JsonlWriter.append_after``, under the file lock, so two processes never interleave
  or check against a stale state. A refused event writes nothing.
- The state used for the checks is cached per ``Ledger`` object with the file's last line (its
  hash and byte offset). When other writers appended after that line, only their lines are
  read, their chain checked from that line on and folded in; when that line is no longer where
  it was (or the new lines do not continue the chain), the whole file is re-read, its chain
  checked and refolded. So an append costs the lines it has not seen, not the whole file;
  ``verify()`` re-checks everything. An existing ledger is only read at the first append or fold
  (lazily).
- ``fold()`` and ``events()`` read the file once, decode line by line and (``fold``) fold each row
  as it is decoded, without copying it (nobody else holds it) and with the cyclic garbage
  collector paused meanwhile (the rows and the state form no cycles).
- ``verify()`` re-reads everything and re-checks every line: decoding, seq contiguous from 0,
  the hash chain, and each event's schema, authority, references and state in order.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Mapping

from filelock import FileLock, Timeout
from pydantic import ValidationError

from ..storage import JsonlWriter, LockedError, StorageError, lock_path
from ..storage.jsonl import TORN, decode_line
from .actors import Actor
from .events import (
    AUTHORITIES,
    EVENT_MODELS,
    EVENT_PREFIX,
    OVERREACH,
    ROLE_AUTHORITY,
    short_type,
)
from .fold import LedgerState, apply, fold_owned
from .human import is_confirmed
from .predicates import can_request_human_approval

__all__ = [
    "LEDGER_AUTHORITY",
    "LEDGER_CODES",
    "LEDGER_IO",
    "LEDGER_REFERENCE",
    "LEDGER_SCHEMA",
    "LEDGER_STATE",
    "LEDGER_VERSION",
    "Ledger",
    "ledger_path",
]

LEDGER_SCHEMA = "LEDGER_SCHEMA"
LEDGER_AUTHORITY = "LEDGER_AUTHORITY"
LEDGER_REFERENCE = "LEDGER_REFERENCE"
LEDGER_STATE = "LEDGER_STATE"
LEDGER_IO = "LEDGER_IO"  # the file could not be written (lock timeout, disk); not a refusal of the event
#: every code a receipt can carry
LEDGER_CODES: tuple[str, ...] = (LEDGER_SCHEMA, LEDGER_AUTHORITY, LEDGER_REFERENCE, LEDGER_STATE, LEDGER_IO)
LEDGER_VERSION = 1


def ledger_path(notebook: str | os.PathLike[str], name: str = "main") -> Path:
    """``report.ipynb`` -> ``report.dsh/ledger/<name>.jsonl`` (storage.md)."""
    nb = Path(notebook)
    return nb.with_name(nb.stem + ".dsh") / "ledger" / f"{name}.jsonl"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Refused(Exception):
    def __init__(self, code: str, error: str) -> None:
        super().__init__(error)
        self.code, self.error = code, error

    def receipt(self) -> dict:
        return {"ok": False, "code": self.code, "error": self.error}


class _Exists(Exception):
    pass


# --------------------------------------------------------------------------- reading


@dataclass
class _Snapshot:
    """Complete lines of a ledger file: ``(line_number, row, raw_bytes)`` and problems; *end* is
    the byte offset just after the last complete line."""

    entries: list[tuple[int, dict, bytes]]
    problems: list[tuple[int, str]]
    end: int = 0


@dataclass
class _Cache:
    """A writer's state after the file's line *line* (sha256 *head*, ``seq`` *seq*), which ends
    at byte offset *end* (``None``: unknown, the next refresh re-reads the file)."""

    head: str
    line: bytes
    seq: int
    end: int | None
    state: LedgerState


def _lines(path: Path) -> list[bytes]:
    """The file's bytes split at newlines; the last item follows the final newline (``b""``, or
    an unterminated line: torn, not written)."""
    return path.read_bytes().split(b"\n")


def _read(path: Path) -> _Snapshot:
    """Read *path* once and decode its complete lines strictly (``storage.decode_line``); an
    unterminated last line is not written (reported as torn), as the storage layer's writer
    treats it."""
    lines = _lines(path)
    entries, problems = [], []
    end = 0
    for i in range(len(lines) - 1):
        end += len(lines[i]) + 1
        raw = lines[i]
        if not raw.strip():
            continue
        row, reason = decode_line(raw, i + 1)
        if reason is None:
            entries.append((i + 1, row, raw + b"\n"))
        else:
            problems.append((i + 1, reason))
    if lines[-1].strip():
        problems.append((len(lines), TORN))
    return _Snapshot(entries, problems, end)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a whole ledger is decoded and folded.

    Reading creates many containers and frees most of them at once (reference counting); the
    ones that stay (the state, or the rows) form no cycles. While they pile up, the collector
    would walk the growing heap again and again (about a third of the time for a big ledger);
    afterwards they are collected like any object. Only re-enabled if it was enabled."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _event_rows(path: Path) -> Iterator[dict]:
    """The decodable event lines of *path* (header, torn and undecodable lines skipped), as
    ``_read`` would give them, without keeping the lines' bytes."""
    lines = _lines(path)
    del lines[-1]
    for i, raw in enumerate(lines, 1):
        if raw.strip():
            row, reason = decode_line(raw, i)
            if reason is None and "type" in row:
                yield row


# --------------------------------------------------------------------------- checks

_ID_FIELDS = {  # type -> (field, collection) that must already exist
    "plan-recorded": [("question_id", "questions")],
    "task-completed": [("task_id", "tasks")],
    "source-verified": [("source_id", "sources")],
    "fulltext-linked": [("source_id", "sources")],
    "claim-extracted": [("source_id", "sources")],
    "experiment-extracted": [("source_id", "sources")],
    "claim-verified": [("claim_id", "claims")],
    "decision-proposed": [("question_id", "questions")],
    "decision-revised": [("decision_id", "decisions")],
    "objection-answered": [("objection_id", "objections")],
    "adjudication-recorded": [("objection_id", "objections")],
    "human-approval-requested": [("decision_id", "decisions")],
    "review-verdict-recorded": [("decision_id", "decisions")],
    "human-decision-recorded": [("decision_id", "decisions")],
}
_NEW_IDS = {  # type -> (field, collection) that must not exist yet
    "question-posed": ("question_id", "questions"),
    "task-delegated": ("task_id", "tasks"),
    "source-proposed": ("source_id", "sources"),
    "claim-extracted": ("claim_id", "claims"),
    "experiment-extracted": ("experiment_id", "experiments"),
    "decision-proposed": ("decision_id", "decisions"),
    "objection-raised": ("objection_id", "objections"),
}
_KINDS = {"question": "questions", "task": "tasks", "source": "sources", "claim": "claims",
          "experiment": "experiments", "decision": "decisions", "objection": "objections"}


def _check_schema(t: str, data: Any) -> tuple[dict, list[str]]:
    """Validate *data* for type *t*; returns the normalised data and the overreach fields
    (checked as authority afterwards). Raises ``_Refused(LEDGER_SCHEMA)``."""
    if not isinstance(data, Mapping):
        raise _Refused(LEDGER_SCHEMA, f"data for {EVENT_PREFIX}{t} must be a JSON object, got {type(data).__name__}")
    over = OVERREACH.get(t, {})
    extra = [k for k in data if k in over and k not in EVENT_MODELS[t].model_fields]
    clean = {k: v for k, v in data.items() if k not in extra}
    try:
        model = EVENT_MODELS[t].model_validate(clean)
    except ValidationError as e:
        details = "; ".join(f"{'.'.join(map(str, err['loc'])) or '(data)'}: {err['msg']}" for err in e.errors())
        raise _Refused(LEDGER_SCHEMA, f"{EVENT_PREFIX}{t} data does not match its schema: {details}") from None
    return model.model_dump(mode="json"), extra


def _check_authority(t: str, data: Mapping, overreach: list[str], actor: Mapping, human_ok: bool) -> None:
    """Raise ``_Refused(LEDGER_AUTHORITY)`` unless *actor* (a line's actor dict) may write *t*."""
    role, authority = actor.get("role"), actor.get("authority")
    if ROLE_AUTHORITY.get(role) != authority:
        raise _Refused(LEDGER_AUTHORITY, f"actor role {role!r} does not carry authority {authority!r}")
    if role == "human" and not human_ok:
        raise _Refused(LEDGER_AUTHORITY, "a human actor must come from dsh_notebook.research.human.confirmed_actor "
                                         "(after the person's action); this one did not")
    if t not in AUTHORITIES[authority]:
        if t == "human-decision-recorded":
            raise _Refused(LEDGER_AUTHORITY, f"role {role!r} may not record a human decision: only the person does, "
                                             "through confirmed_actor(name, channel) from the explorer, server or terminal")
        allowed = ", ".join(sorted(AUTHORITIES[authority]))
        raise _Refused(LEDGER_AUTHORITY, f"role {role!r} (authority {authority!r}) may not write {EVENT_PREFIX}{t}; "
                                         f"it may write: {allowed}")
    if overreach:
        what = ", ".join(f"{k!r} ({OVERREACH[t][k]})" for k in overreach)
        raise _Refused(LEDGER_AUTHORITY, f"role {role!r} may not put {what} into {EVENT_PREFIX}{t}: "
                                         f"that is outside the {authority!r} authority")
    if t == "human-decision-recorded" and data.get("by") != actor.get("by"):
        raise _Refused(LEDGER_AUTHORITY, f"human decision 'by' {data.get('by')!r} is not the confirmed person "
                                         f"{actor.get('by')!r}")


def _check_references(t: str, d: dict, s: LedgerState) -> None:
    """Raise ``_Refused(LEDGER_REFERENCE)`` for any id that does not exist yet."""
    missing = []
    for f, coll in _ID_FIELDS.get(t, []):
        if d[f] not in getattr(s, coll):
            missing.append(f"{f} {d[f]!r}")
    if t in ("decision-proposed", "decision-revised"):
        missing += [f"claim_id {c!r}" for c in d["claim_ids"] if c not in s.claims]
        missing += [f"objection_id {o!r} (in answers)" for o in d.get("answers", []) if o not in s.objections]
    if t == "review-verdict-recorded":
        missing += [f"objection_id {o!r}" for o in d["objection_ids"] if o not in s.objections]
    for key in ("target", "subject"):
        if key in d and d[key]["id"] not in getattr(s, _KINDS[d[key]["kind"]]):
            missing.append(f"{key} {d[key]['kind']} {d[key]['id']!r}")
    if missing:
        raise _Refused(LEDGER_REFERENCE, f"{EVENT_PREFIX}{t} refers to what is not in the ledger: {', '.join(missing)}")


def _check_state(t: str, d: dict, s: LedgerState) -> None:
    """Raise ``_Refused(LEDGER_STATE)`` when the event is not allowed in state *s*."""
    def no(msg: str) -> None:
        raise _Refused(LEDGER_STATE, f"{EVENT_PREFIX}{t} refused: {msg}")

    if t in _NEW_IDS:
        f, coll = _NEW_IDS[t]
        if d[f] in getattr(s, coll):
            no(f"{f} {d[f]!r} already exists; ids are never reused")
    if t == "task-completed" and s.tasks[d["task_id"]].status is not None:
        no(f"task {d['task_id']!r} already completed with status {s.tasks[d['task_id']].status!r}")
    if t in ("claim-extracted", "experiment-extracted"):
        src = s.sources[d["source_id"]]
        if src.verdict != "verified" and src.fulltext is None:
            no(f"source {src.source_id!r} is not verified (latest verdict {src.verdict!r}) and has no linked "
               "fulltext: link its fulltext first")
        want = d["span"].get("fulltext_sha256")
        if src.fulltext is not None and want is not None and want != src.fulltext["sha256"]:
            no(f"span fulltext_sha256 {want} does not match the linked fulltext of {src.source_id!r} "
               f"({src.fulltext['sha256']})")
    if t in ("decision-revised", "review-verdict-recorded", "human-approval-requested", "human-decision-recorded"):
        dec = s.decisions[d["decision_id"]]
        closed = [h for h in s.human_decisions_for(dec.decision_id) if h.verdict in ("approved", "rejected")]
        if closed and t != "review-verdict-recorded":
            no(f"decision {dec.decision_id!r} was {closed[-1].verdict} by the person; it is closed")
        if t == "decision-revised" and d["revision"] != dec.revision + 1:
            no(f"decision {dec.decision_id!r} is at revision {dec.revision}; the next revision is {dec.revision + 1}, "
               f"not {d['revision']}")
        if t in ("review-verdict-recorded", "human-approval-requested") and d["revision"] != dec.revision:
            no(f"decision {dec.decision_id!r} is at revision {dec.revision}, not {d['revision']}")
        if t == "human-approval-requested":
            ok, why = can_request_human_approval(s, dec.decision_id)
            if not ok:
                no(why)
        if t == "human-decision-recorded":
            if s.human_decisions_for(dec.decision_id, dec.revision):
                no(f"decision {dec.decision_id!r} revision {dec.revision} already has a human decision")
            if not s.approvals_for(dec.decision_id, dec.revision):
                no(f"no human-approval-requested for decision {dec.decision_id!r} revision {dec.revision}: "
                   "a human decision only follows a request for the same revision")


def _check_stateful(t: str, d: dict, s: LedgerState) -> None:
    _check_references(t, d, s)
    _check_state(t, d, s)


# --------------------------------------------------------------------------- the ledger


class Ledger:
    """An append-only, hash-chained research ledger at *path* (parents and header created if new).

    >>> led = Ledger(ledger_path("report.ipynb"))                          # doctest: +SKIP
    >>> led.append("question-posed", {"question_id": "q1", "text": "..."}, Actor("lead"))  # doctest: +SKIP
    {'ok': True, 'seq': 1, 'hash': '...'}

    ``append`` returns receipts and never raises for bad input; ``fold()`` returns the
    ``LedgerState``; ``verify()`` returns ``{"ok", "problems": [{"line", "problem"}], "events",
    "head"}``; ``events()`` the event lines (header excluded).
    """

    def __init__(self, path: str | os.PathLike[str], *, lock_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.name = self.path.stem
        self.lock_timeout = lock_timeout
        self._cache: _Cache | None = None  # the state after the last line this object has seen

        def header(last: Any, last_line: bytes | None) -> dict:
            if last is not None or self.path.stat().st_size > 0:
                raise _Exists
            return {"seq": 0, "version": LEDGER_VERSION, "name": self.name, "created": _now()}

        try:
            self._append_after(header)
        except _Exists:
            pass

    def _append_after(self, build: Any) -> bytes:
        """One locked, fsynced append through the storage layer (the file is not kept open)."""
        writer = JsonlWriter(self.path, hold_lock=False, fsync_each=True, lock_timeout=self.lock_timeout)
        try:
            return writer.append_after(build)
        finally:
            writer.close(fsync=False)  # fsync_each already synced the line

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"

    # -- writing
    def append(self, type: str, data: Mapping[str, Any], actor: Actor) -> dict:
        """Append one event; returns ``{"ok": True, "seq": N, "hash": sha256-of-the-line}`` or
        ``{"ok": False, "code": "LEDGER_SCHEMA" | "LEDGER_AUTHORITY" | "LEDGER_REFERENCE" |
        "LEDGER_STATE" | "LEDGER_IO", "error": "..."}`` (nothing written). *type* is
        ``"claim-extracted"`` or ``"research/claim-extracted"``."""
        try:
            t, d, actor_dict = self._precheck(type, data, actor)
        except _Refused as r:
            return r.receipt()
        written: dict = {}

        def build(last: Any, last_line: bytes | None) -> dict:
            state = self._state_for(last, last_line)
            _check_stateful(t, d, state)
            line = {"seq": last["seq"] + 1, "ts": _now(), "type": EVENT_PREFIX + t, "actor": actor_dict,
                    "prev": _sha(last_line), "data": d}
            # the new line starts at the current end (unless a torn tail is closed off first: then
            # the offset is wrong, and the next refresh notices and re-reads the file)
            written["line"], written["state"], written["at"] = line, state, self.path.stat().st_size
            return line

        try:
            raw = self._append_after(build)
        except _Refused as r:
            return r.receipt()
        except LockedError as e:
            return {"ok": False, "code": LEDGER_IO, "error": str(e)}
        except StorageError as e:
            return {"ok": False, "code": LEDGER_SCHEMA, "error": f"data cannot be written as strict JSON: {e}"}
        except OSError as e:
            return {"ok": False, "code": LEDGER_IO, "error": f"cannot write {self.path}: {e}"}
        head, line = _sha(raw), written["line"]
        self._cache = None
        state = fold_owned([line], written["state"])  # the line's data is this call's own
        self._cache = _Cache(head, raw, line["seq"], written["at"] + len(raw), state)
        return {"ok": True, "seq": line["seq"], "hash": head}

    def _precheck(self, type_: Any, data: Any, actor: Any) -> tuple[str, dict, dict]:
        """Schema and authority (no file access)."""
        if not isinstance(type_, str) or short_type(type_) not in EVENT_MODELS:
            raise _Refused(LEDGER_SCHEMA, f"unknown event type {type_!r}: expected one of "
                                          f"{', '.join(EVENT_MODELS)} (optionally prefixed {EVENT_PREFIX!r})")
        t = short_type(type_)
        if not isinstance(actor, Actor):
            raise _Refused(LEDGER_AUTHORITY, f"actor must be an Actor (e.g. Actor('scout')), got {type(actor).__name__}")
        if t == "human-decision-recorded" and isinstance(data, Mapping) and "by" not in data and actor.by:
            data = {**data, "by": actor.by}
        d, overreach = _check_schema(t, data)
        actor_dict = actor.to_dict()
        if t == "question-posed" and actor.role == "lead":
            actor_dict["on_behalf_of"] = "person"
        _check_authority(t, d, overreach, actor_dict, human_ok=is_confirmed(actor))
        return t, d, actor_dict

    def _state_for(self, last: Any, last_line: bytes | None) -> LedgerState:
        """The state after the file's last line (called under the lock). The cached state is
        used as is when the file still ends with the line it was folded to; when other writers
        appended after that line (still at its offset), only their lines are read, their chain
        checked from that line on, and folded in; otherwise the whole file is re-read, its chain
        checked and folded."""
        if last is None or last_line is None:
            raise _Refused(LEDGER_STATE, f"{self.path} has no ledger header line; it is not a ledger")
        head = _sha(last_line)
        c = self._cache
        if c is not None and (c.head == head or self._catch_up(c, head, last_line)):
            return c.state
        self._cache = None
        with _collector_paused():
            snap = _read(self.path)
        broken = _chain_problems(snap, decoding=False)  # a torn or undecodable line is "not written"
        if broken:
            line, problem = broken[0]
            raise _Refused(LEDGER_STATE, f"ledger {self.path} is damaged at line {line} ({problem}); "
                                         "nothing more is appended until it is repaired: run verify()")
        state = fold_owned(row for _, row, _ in snap.entries)
        n, row, raw = snap.entries[-1]
        end = snap.end if raw == last_line else None
        self._cache = _Cache(head, raw, row.get("seq"), end, state)
        return state

    def _catch_up(self, c: _Cache, head: str, last_line: bytes) -> bool:
        """Fold into *c* the lines appended after its line, if that line is still where it was
        and every later line continues the chain (seq + 1, prev = sha256 of the line before; an
        undecodable line is not written) up to *last_line*. False (nothing changed): re-read."""
        if c.end is None or not isinstance(c.seq, int):
            return False
        start = c.end - len(c.line)
        with open(self.path, "rb") as f:
            f.seek(start)
            chunk = f.read()
        if not chunk.startswith(c.line):
            return False
        complete = chunk.rfind(b"\n") + 1  # an unterminated tail is not written
        prev_raw, prev_seq, rows = c.line, c.seq, []
        for raw in chunk[len(c.line):complete].split(b"\n")[:-1]:
            if not raw.strip():
                continue
            row, reason = decode_line(raw, 2)
            if reason is not None:
                continue
            raw += b"\n"
            if row.get("seq") != prev_seq + 1 or row.get("prev") != _sha(prev_raw) or type(row["seq"]) is not int:
                return False
            rows.append(row)
            prev_raw, prev_seq = raw, row["seq"]
        if prev_raw != last_line:
            return False
        self._cache = None  # until the fold is through
        fold_owned(rows, c.state)
        c.head, c.line, c.seq, c.end = head, prev_raw, prev_seq, start + complete
        self._cache = c
        return True

    # -- reading
    def events(self) -> list[dict]:
        """Every event line (header excluded) in ledger order; torn or undecodable lines are skipped."""
        if not self.path.exists():
            return []
        with _collector_paused():
            return list(_event_rows(self.path))

    def fold(self) -> LedgerState:
        """``fold(self.events())``: a fresh ``LedgerState`` (see ``research.fold``). The lines are
        decoded and folded one by one; the state keeps parts of the decoded rows, which nobody
        else holds, instead of copies (``fold_owned``)."""
        if not self.path.exists():
            return LedgerState()
        with _collector_paused():
            return fold_owned(_event_rows(self.path))

    def verify(self, expected_head: str | None = None) -> dict:
        """Re-check the whole file: ``{"ok": bool, "problems": [{"line": N, "problem": "..."}],
        "events": count, "head": sha256 of the last line}``. Finds undecodable and torn lines, a
        missing header, seq gaps or disorder, broken ``prev`` links (an edited, deleted or
        moved line), and events that fail their schema, authority, references or state when
        replayed in order. *expected_head* (e.g. from the notebook's metadata) also catches an
        edit of the last line."""
        try:
            with FileLock(lock_path(self.path), timeout=self.lock_timeout, thread_local=False):
                snap = _read(self.path)
        except Timeout:
            return {"ok": False, "problems": [{"line": 0, "problem": "ledger is locked by another writer"}],
                    "events": 0, "head": None}
        except FileNotFoundError:
            return {"ok": False, "problems": [{"line": 0, "problem": f"{self.path} does not exist"}],
                    "events": 0, "head": None}
        problems = list(snap.problems) + _chain_problems(snap, decoding=False)
        state = LedgerState()
        for n, row, _ in snap.entries[1:] if snap.entries and snap.entries[0][1].get("seq") == 0 else snap.entries:
            if "type" not in row:
                continue
            try:
                t = short_type(row["type"]) if isinstance(row["type"], str) else ""
                if t not in EVENT_MODELS or not row["type"].startswith(EVENT_PREFIX):
                    raise _Refused(LEDGER_SCHEMA, f"unknown event type {row['type']!r}")
                actor = row.get("actor")
                if not isinstance(actor, dict):
                    raise _Refused(LEDGER_SCHEMA, "the line has no actor object")
                d, overreach = _check_schema(t, row.get("data"))
                _check_authority(t, d, overreach, actor, human_ok=True)  # identity cannot be checked from a file
                _check_stateful(t, d, state)
            except _Refused as r:
                problems.append((n, f"{r.code}: {r.error}"))
                if r.code in (LEDGER_SCHEMA,):
                    continue
            apply(state, row)
        head = _sha(snap.entries[-1][2]) if snap.entries else None
        if expected_head is not None and head != expected_head:
            problems.append((snap.entries[-1][0] if snap.entries else 0,
                             f"head hash {head} is not the expected {expected_head} (last line edited or removed?)"))
        problems.sort(key=lambda p: p[0])
        return {"ok": not problems, "problems": [{"line": n, "problem": p} for n, p in problems],
                "events": state.events, "head": head}


def _chain_problems(snap: _Snapshot, decoding: bool = True) -> list[tuple[int, str]]:
    """Header, seq and ``prev`` problems of *snap* (plus its decoding problems if *decoding*)."""
    out = list(snap.problems) if decoding else []
    if not snap.entries:
        return out + [(1, "no header line")]
    n0, first, _ = snap.entries[0]
    if first.get("seq") != 0 or first.get("version") != LEDGER_VERSION or "type" in first:
        out.append((n0, f"line {n0} is not a version-{LEDGER_VERSION} ledger header {{seq: 0, version, name, created}}"))
    for (_, prev_row, prev_raw), (n, row, _) in zip(snap.entries, snap.entries[1:]):
        want = prev_row.get("seq", -1) + 1 if isinstance(prev_row.get("seq"), int) else None
        if row.get("seq") != want:
            out.append((n, f"seq {row.get('seq')!r} where {want!r} was expected (line missing or moved?)"))
        if row.get("prev") != _sha(prev_raw):
            out.append((n, "prev is not the sha256 of the previous line: the previous line was edited, "
                           "or a line was deleted or moved here"))
    return out
