"""The research ledger's writer and verifier (spec: research.md "Events", "Python API
(binding)", the writer's checks; storage.md "Writing rules": ledgers are hash-chained, locked
and fsynced per append).

Design:

- A ledger is ``<stem>.dsh/ledger/<name>.jsonl``: a header ``{seq: 0, version: 1, name,
  created}``, then one event per line ``{seq, ts, type: "research/<name>", actor: {role,
  authority, model?, prompt_version?}, prev, data}`` where ``prev`` is the sha256 of the previous
  line's bytes.
- ``Ledger(path)`` writes the header when the file is new or empty and otherwise only looks at
  the file (an existing ledger is read at the first append or fold, lazily). It never raises
  for a damaged file: the damage is reported by ``verify()`` and refused by ``append``. A path
  that cannot be a ledger file (empty, holding a NUL, a folder, a device, a folder that is a
  file, a folder that cannot be created) raises ``LedgerPathError`` (an ``OSError`` and a
  ``ValueError``) with a one-line message.
- ``Ledger.append(type, data, actor)`` never raises for bad input; it returns a receipt
  ``{"ok": True, "seq", "hash"}`` or ``{"ok": False, "code", "error"}``. Checks, in order:
  schema (``LEDGER_SCHEMA``), authority (``LEDGER_AUTHORITY``), references (``LEDGER_REFERENCE``),
  state (``LEDGER_STATE``). References and state are checked, and ``seq``/``prev`` computed,
  inside ``JsonlWriter.append_after``, under the file lock, so two processes never interleave
  or check against a stale state. A refused event writes nothing.
- Damage is never chained onto. Unless the file verifies up to its end, ``append`` refuses
  with ``LEDGER_STATE`` naming the first bad line: an undecodable, blank or typeless line, a
  broken header, seq or ``prev`` link, or an event that fails its schema, authority,
  references or state when replayed (what ``verify()`` reports). The one exception is a torn
  last line (bytes after the last newline, left by a writer that crashed mid-line: not
  written, says storage.md): the writer moves it into ``<name>.jsonl.torn-<UTC time>`` and
  cuts it off before appending (``storage.set_aside_torn``; the receipt then names the file
  under ``set_aside``), so the chain stays verifiable. A last line that is a whole JSON object
  without its newline is not a crash (a writer writes both at once) and is refused.
- The state used for the checks is cached per ``Ledger`` object with the file's last line (its
  hash and byte offset) and the file's identity (device and inode, size and modification time
  after the last look, the sha256 of its first 4 KB). When other writers appended after that
  line, only their lines are read, checked as above (chain, decoding, replay) and folded in;
  when the file was replaced, shrank, changed without growing, or its first 4 KB or the cached
  line changed, the whole file is re-read and re-checked. A writer also remembers the last
  line it saw (seq and hash): if a re-read file no longer holds it, the file was truncated or
  rewritten behind its back and it refuses (a new ``Ledger`` accepts the file as it is).
  Limit: an edit of an earlier line beyond the first 4 KB that keeps the file's length,
  made while other writers keep appending, is not seen by a cached writer (only a full check
  would see it; ``verify()`` and a new ``Ledger`` do). So an append costs the lines it has not
  seen, not the whole file.
- ``fold()`` and ``events()`` read the file once, decode line by line and (``fold``) fold each row
  as it is decoded, without copying it (nobody else holds it) and with the cyclic garbage
  collector paused meanwhile (the rows and the state form no cycles). They skip what they
  cannot read (readers never crash); ``verify()`` says what.
- ``verify()`` re-reads everything and re-checks every line: decoding (blank lines included),
  seq contiguous from 0, the hash chain (Windows line endings and a byte-order mark, which
  break every hash, are named as such), and each event's schema, authority, references and
  state in order. With ``expected_head`` (the head ``dsh-notebook sync`` sealed in the
  notebook) it also tells a ledger that ends before the sealed head (last lines deleted), one
  whose last line differs (edited), and one that goes on after it (appended since sync: a
  problem unless ``appended_ok``).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import stat as stat_
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from pydantic import ValidationError
from pydantic_core import ErrorDetails, PydanticSerializationError

from ..errors import DshError
from ..formats import utc_now
from ..storage import JsonlWriter, LockedError, StorageError, lock_path
from ..storage.jsonl import TORN, UnterminatedLineError, decode_line
from .actors import Actor
from .events import (
    AUTHORITIES,
    EVENT_MODELS,
    EVENT_PREFIX,
    OVERREACH,
    ROLE_AUTHORITY,
    short_type,
)
from .fold import LedgerState, fold_owned
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
    "LedgerPathError",
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
PREFIX_BYTES = 4096  # the start of the file a cached writer re-hashes before each append
BOM = b"\xef\xbb\xbf"
BLANK = "blank line: a ledger writer never writes one (edited by hand?)"
REPAIR = ("`dsh-notebook ledger verify` lists the damage; restore the file from a copy (the lines after the "
          "damage can only be re-recorded)")


class ResearchError(DshError):
    """The root of the research layer's exceptions (the ledger core and the pipeline above it).
    The ledger's writer itself never raises for bad input: ``append`` returns receipts."""

    code = "RESEARCH"


class LedgerPathError(ResearchError, OSError, ValueError):
    """A path that cannot be a ledger file (one-line message naming the path and why)."""

    code = "LEDGER_PATH"


def ledger_path(notebook: str | os.PathLike[str], name: str = "main") -> Path:
    """``report.ipynb`` -> ``report.dsh/ledger/<name>.jsonl`` (storage.md)."""
    nb = Path(notebook)
    return nb.with_name(nb.stem + ".dsh") / "ledger" / f"{name}.jsonl"


def _now() -> str:
    return utc_now()


#: The header field of ledgers whose human decisions are signed (issue 15): in such a ledger an
#: unsigned ``human-decision-recorded`` fails ``verify``.
SIGNED_DECISIONS = "ssh-signed"


def decision_message(ledger_name: str, header_sha256: str, prev: str, data: Mapping[str, Any]) -> bytes:
    """The bytes a person signs for a ``human-decision-recorded`` event: canonical JSON of the
    ledger's name and header hash, the event's ``prev``, and the decision's id, revision,
    verdict, note and person, so the signature cannot be replayed in another ledger, at another
    place in this one, or for another decision."""
    import json

    fields = {"format": "dsh-decision/1", "ledger": ledger_name, "header": header_sha256, "prev": prev,
              **{k: data.get(k) for k in ("decision_id", "revision", "verdict", "note", "by")}}
    return json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


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


def _checked_path(path: Any) -> Path:
    """*path* as a ``Path``, or ``LedgerPathError`` for what can never name a ledger file."""
    try:
        raw = os.fspath(path)
    except TypeError:
        raise LedgerPathError(f"a ledger path must be a str or os.PathLike, not {type(path).__name__}") from None
    if isinstance(raw, bytes):
        raw = os.fsdecode(raw)
    if not raw.strip():
        raise LedgerPathError("the ledger path is empty: give the ledger file, e.g. report.dsh/ledger/main.jsonl")
    if "\x00" in raw:
        raise LedgerPathError(f"the ledger path {raw!r} holds a NUL character")
    p = Path(raw)
    if not p.name or p.name in (".", ".."):
        raise LedgerPathError(f"the ledger path {raw!r} names a folder, not a file")
    return p


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


# --------------------------------------------------------------------------- reading


@dataclass
class _Snapshot:
    """Complete lines of a ledger file: ``(line_number, row, raw_bytes)`` and problems
    (undecodable and blank lines, a torn tail); *end* is the byte offset just after the last
    complete line."""

    entries: list[tuple[int, dict, bytes]]
    problems: list[tuple[int, str]]
    end: int = 0


@dataclass
class _Cache:
    """A writer's state after the file's line *line* (sha256 *head*, ``seq`` *seq*), which ends
    at byte offset *end* (``None``: unknown, the next refresh re-reads the file); and what the
    file looked like then: device, inode, size, mtime and the sha256 of its first *prefix_len*
    bytes (``ident``)."""

    head: str
    line: bytes
    seq: int
    end: int | None
    state: LedgerState
    ident: tuple | None = None


def _lines(path: Path) -> list[bytes]:
    """The file's bytes split at newlines; the last item follows the final newline (``b""``, or
    an unterminated line: torn, not written)."""
    return path.read_bytes().split(b"\n")


def _read(path: Path) -> _Snapshot:
    """Read *path* once and decode its complete lines strictly (``storage.decode_line``); an
    unterminated last line is not written (reported as torn), a blank line is reported."""
    lines = _lines(path)
    entries, problems = [], []
    end = 0
    for i in range(len(lines) - 1):
        end += len(lines[i]) + 1
        raw = lines[i]
        if not raw.strip():
            problems.append((i + 1, BLANK))
            continue
        row, reason = decode_line(raw, i + 1)
        if reason is None:
            entries.append((i + 1, row, raw + b"\n"))
        else:
            problems.append((i + 1, reason))
    if lines[-1]:
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


def _identity(path: Path, end: int) -> tuple:
    """What a cached writer compares before trusting its cache: ``(dev, ino, size, mtime_ns,
    prefix_len, sha256 of the first prefix_len bytes)`` with ``prefix_len = min(4096, end)``."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        n = min(PREFIX_BYTES, end)
        prefix = f.read(n)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, n, _sha(prefix))


def _unchanged(path: Path, ident: tuple | None, end: int) -> bool:
    """False when the file at *path* is not the one *ident* describes, or changed other than
    by appends (see the module docstring)."""
    if ident is None:
        return False
    dev, ino, size, mtime, n, prefix = ident
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if (st.st_dev, st.st_ino) != (dev, ino) or st.st_size < end:
                return False
            if st.st_size == size and st.st_mtime_ns != mtime:  # rewritten in place without growing
                return False
            return _sha(f.read(n)) == prefix
    except OSError:
        return False


# --------------------------------------------------------------------------- checks

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
        out = model.model_dump(mode="json")
    except ValidationError as e:
        details = "; ".join(_error_text(err) for err in e.errors())
        raise _Refused(LEDGER_SCHEMA, f"{EVENT_PREFIX}{t} data does not match its schema: {details}") from None
    except (PydanticSerializationError, ValueError, TypeError, RecursionError) as e:  # not JSON after all
        raise _Refused(LEDGER_SCHEMA, f"{EVENT_PREFIX}{t} data cannot be written as JSON: "
                                      f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    if t == "human-decision-recorded" and out.get("revision") is None:
        out.pop("revision", None)  # the optional extension: absent, not null (older lines stay as they were)
    return out, extra


def _error_text(err: ErrorDetails) -> str:
    where = ".".join(map(str, err["loc"])) or "(data)"
    msg = str(err["msg"]).removeprefix("Value error, ")
    got = ""
    if str(err.get("type", "")).endswith("_type") and "input" in err:
        got = f" (got {type(err['input']).__name__})"
    if msg.startswith((where + " ", where + ".")):  # the message names the place itself
        return msg + got
    return f"{where}: {msg}{got}"


def _check_authority(t: str, data: Mapping, overreach: list[str], actor: Mapping, human_ok: bool) -> None:
    """Raise ``_Refused(LEDGER_AUTHORITY)`` unless *actor* (a line's actor dict) may write *t*."""
    role, authority = actor.get("role"), actor.get("authority")
    if not isinstance(role, str) or role not in ROLE_AUTHORITY or ROLE_AUTHORITY[role] != authority:
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
            seen = d.get("revision")
            if seen is not None and seen != dec.revision:
                no(f"decision {dec.decision_id} is at revision {dec.revision}; you decided on revision {seen}: reload")
            if s.human_decisions_for(dec.decision_id, dec.revision):
                no(f"decision {dec.decision_id!r} revision {dec.revision} already has a human decision")
            if not s.approvals_for(dec.decision_id, dec.revision):
                no(f"no human-approval-requested for decision {dec.decision_id!r} revision {dec.revision}: "
                   "a human decision only follows a request for the same revision")


def _check_stateful(t: str, d: dict, s: LedgerState) -> None:
    _check_references(t, d, s)
    _check_state(t, d, s)



def _replay(row: dict, state: LedgerState) -> str | None:
    """Check one event line (not the header) as the writer would have, against *state*, and
    fold it in: the problem (``"CODE: why"``), or ``None``. An event that fails its schema is
    not folded; one that fails another check is (what the file says happened), so later
    lines are checked against it. Never raises."""
    try:
        if "type" not in row:
            return "the line has no event type: it is not a ledger event (a second header, or edited by hand?)"
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
            if r.code != LEDGER_SCHEMA:
                fold_owned([row], state)
            return f"{r.code}: {r.error}"
        fold_owned([row], state)
        return None
    except Exception as exc:  # noqa: BLE001 - a line nobody foresaw is damage, never a crash
        return f"the line cannot be replayed ({type(exc).__name__}: {exc})"


# --------------------------------------------------------------------------- the ledger


class Ledger:
    """An append-only, hash-chained research ledger at *path* (parents and header created if new).

    >>> led = Ledger(ledger_path("report.ipynb"))                          # doctest: +SKIP
    >>> led.append("question-posed", {"question_id": "q1", "text": "..."}, Actor("lead"))  # doctest: +SKIP
    {'ok': True, 'seq': 1, 'hash': '...'}

    ``append`` returns receipts and never raises for bad input; ``fold()`` returns the
    ``LedgerState``; ``verify()`` returns ``{"ok", "problems": [{"line", "problem"}], "events",
    "head"}`` (and ``"sealed"`` with *expected_head*); ``events()`` the event lines (header
    excluded). The constructor raises ``LedgerPathError`` only for a path that cannot be a
    ledger file, never for a damaged ledger (see the module docstring for what a cached
    writer notices and what it does not).
    """

    _cache: _Cache | None = None  # the state after the last line this object has seen
    _seen: tuple[int, str] | None = None  # (seq, sha256) of the last line this object has seen

    def __init__(self, path: str | os.PathLike[str], *, lock_timeout: float = 30.0, create: bool = True) -> None:
        """``create=False`` opens a ledger for reading (``events``, ``fold``, ``verify``): a missing
        or empty file is left as it is, with no folder or header made (``append`` still writes)."""
        self.path = _checked_path(path)
        self.name = self.path.stem
        self.lock_timeout = lock_timeout
        self._cache = None
        self._seen = None
        where = self.path
        try:
            st = os.stat(where)
        except FileNotFoundError:
            st = None
        except NotADirectoryError:
            raise LedgerPathError(f"cannot open the ledger {where}: a folder on its path is a file") from None
        except OSError as exc:
            raise LedgerPathError(f"cannot open the ledger {where}: {_why(exc)}") from None
        if st is not None:
            if stat_.S_ISDIR(st.st_mode):
                raise LedgerPathError(f"cannot open the ledger {where}: it is a folder, not a file")
            if not stat_.S_ISREG(st.st_mode):
                raise LedgerPathError(f"cannot open the ledger {where}: it is not a regular file (a device or pipe?)")
            if st.st_size > 0:
                return  # an existing ledger: read lazily, checked at the first append or verify()
        if not create:
            return
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise LedgerPathError(f"cannot create the ledger {where}: a folder on its path is a file") from None
        except OSError as exc:
            raise LedgerPathError(f"cannot create the ledger {where}: {_why(exc)}") from None

        def header(last: Any, last_line: bytes | None) -> dict:
            if last_line is not None or self.path.stat().st_size > 0:
                raise _Exists
            return {"seq": 0, "version": LEDGER_VERSION, "name": self.name, "created": _now(),
                    "decisions": SIGNED_DECISIONS}

        try:
            self._append_after(header, torn="close")
        except _Exists:
            pass
        except LockedError:
            raise
        except OSError as exc:
            raise LedgerPathError(f"cannot create the ledger {where}: {_why(exc)}") from None

    def _append_after(self, build: Callable[[Any, bytes | None], dict[str, Any]],
                      torn: str = "set_aside") -> tuple[bytes, JsonlWriter]:
        """One locked, fsynced append through the storage layer (the file is not kept open);
        a torn tail is set aside first (``storage.set_aside_torn``)."""
        writer = JsonlWriter(self.path, hold_lock=False, fsync_each=True, lock_timeout=self.lock_timeout)
        try:
            return writer.append_after(build, torn=torn), writer
        finally:
            writer.close(fsync=False)  # fsync_each already synced the line

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"

    # -- writing
    def append(self, type: str, data: Mapping[str, Any], actor: Actor, *,
               sign: Callable[[bytes], str] | None = None) -> dict:
        """Append one event; returns ``{"ok": True, "seq": N, "hash": sha256-of-the-line}`` (and
        ``"set_aside"``: the file a torn last line was moved to, when there was one) or
        ``{"ok": False, "code": "LEDGER_SCHEMA" | "LEDGER_AUTHORITY" | "LEDGER_REFERENCE" |
        "LEDGER_STATE" | "LEDGER_IO", "error": "..."}`` (nothing written). *type* is
        ``"claim-extracted"`` or ``"research/claim-extracted"``. *sign* (for
        ``human-decision-recorded``) is called under the ledger's lock with
        :func:`decision_message` and returns the person's signature, stored in the event's
        ``signature``; if it raises, nothing is written (``LEDGER_STATE``, naming why)."""
        try:
            t, d, actor_dict = self._precheck(type, data, actor)
        except _Refused as r:
            return r.receipt()
        except Exception as exc:  # noqa: BLE001 - never raise for bad input
            return {"ok": False, "code": LEDGER_SCHEMA, "error": f"the event cannot be checked: "
                                                                 f"{_type_name(exc)}: {exc}"}
        written: dict = {}

        def build(last: Any, last_line: bytes | None) -> dict:
            state = self._state_for(last_line)
            cache = self._cache
            # _state_for refuses a file without a complete line and leaves the cache it folded to
            assert cache is not None and last_line is not None
            _check_stateful(t, d, state)
            data_out = d
            if sign is not None and t == "human-decision-recorded":
                message = decision_message(self.name, _sha(self._header_line()), _sha(last_line), d)
                try:
                    data_out = {**d, "signature": sign(message)}
                except Exception as exc:  # noqa: BLE001 - a decision that cannot be signed is not recorded
                    raise _Refused(LEDGER_STATE, f"the decision cannot be signed: {exc}; nothing was recorded") \
                        from None
            line = {"seq": cache.seq + 1, "ts": _now(), "type": EVENT_PREFIX + t, "actor": actor_dict,
                    "prev": _sha(last_line), "data": data_out}
            # the new line starts at the current end: a torn tail was set aside, the file is appended to
            written["line"], written["state"], written["at"] = line, state, self.path.stat().st_size
            return line

        try:
            raw, writer = self._append_after(build)
        except _Refused as r:
            return r.receipt()
        except LockedError as e:
            return {"ok": False, "code": LEDGER_IO, "error": str(e)}
        except UnterminatedLineError as e:
            return {"ok": False, "code": LEDGER_STATE, "error": f"{e}; nothing was written"}
        except StorageError as e:
            return {"ok": False, "code": LEDGER_SCHEMA, "error": f"data cannot be written as strict JSON: {e}"}
        except OSError as e:
            return {"ok": False, "code": LEDGER_IO, "error": f"cannot write {self.path}: {_why(e)}"}
        head, line = _sha(raw), written["line"]
        self._cache = None
        state = fold_owned([line], written["state"])  # the line's data is this call's own
        end = written["at"] + len(raw)
        st = writer.stat_after
        try:
            ident = _identity(self.path, end)
            if st is not None:
                ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) + ident[4:]
        except OSError:
            ident = None
        self._cache = _Cache(head, raw, line["seq"], end, state, ident)
        self._seen = (line["seq"], head)
        receipt = {"ok": True, "seq": line["seq"], "hash": head}
        if writer.set_aside is not None:
            receipt["set_aside"] = writer.set_aside.name
        return receipt

    def _header_line(self) -> bytes:
        """The ledger's first line, as written (its header)."""
        with self.path.open("rb") as f:
            return f.readline()

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

    def _damaged(self, line: int, problem: str) -> _Refused:
        return _Refused(LEDGER_STATE, f"ledger {self.path} is damaged at line {line} ({problem}); nothing is "
                                      f"appended until it is repaired: {REPAIR}")

    def _state_for(self, last_line: bytes | None) -> LedgerState:
        """The state after the file's last line (called under the lock, after a torn tail was
        set aside). The cached state is used as is when the file is the one it was folded from
        and still ends with the line it was folded to; when other writers appended after that
        line, only their lines are read, checked and folded in; otherwise the whole file is
        re-read and re-checked (``_reload``). Raises ``_Refused(LEDGER_STATE)`` unless the file
        verifies up to its end."""
        if last_line is None:
            raise _Refused(LEDGER_STATE, f"{self.path} has no complete line, so no ledger header: it is not a "
                                         f"ledger (line 1); {REPAIR}")
        head = _sha(last_line)
        c = self._cache
        if c is not None and c.end is not None and _unchanged(self.path, c.ident, c.end):
            if c.head == head and c.line == last_line:
                return c.state
            if self._catch_up(c, head, last_line):
                return c.state  # _catch_up made c the cache again
        self._cache = None
        return self._reload(last_line)

    def _reload(self, last_line: bytes) -> LedgerState:
        with _collector_paused():
            snap = _read(self.path)
            problems = list(snap.problems) + _chain_problems(snap)
            if problems:
                raise self._damaged(*min(problems, key=lambda p: p[0]))
            state = LedgerState()
            for n, row, _ in snap.entries[1:]:
                problem = _replay(row, state)
                if problem is not None:
                    raise self._damaged(n, problem)
        if self._seen is not None:
            seq, head = self._seen
            entry = snap.entries[seq] if 0 <= seq < len(snap.entries) else None
            if entry is None or entry[1].get("seq") != seq or _sha(entry[2]) != head:
                raise _Refused(LEDGER_STATE, f"ledger {self.path} no longer holds the line seq {seq} (sha256 "
                                             f"{head[:12]}…) this writer saw: the file was truncated or rewritten "
                                             "since; nothing is appended: compare it with a copy, or open a new "
                                             "Ledger on it to accept its present content")
        n, row, raw = snap.entries[-1]
        end = snap.end if raw == last_line else None
        ident = _identity(self.path, end) if end is not None else None
        self._cache = _Cache(_sha(raw), raw, row["seq"], end, state, ident)
        self._seen = (row["seq"], self._cache.head)
        return state

    def _catch_up(self, c: _Cache, head: str, last_line: bytes) -> bool:
        """Fold into *c* the lines appended after its line, if that line is still where it was
        and every later line continues the chain (seq + 1, prev = sha256 of the line before)
        and passes the replay checks, up to *last_line*. False: the caller re-reads the file
        (which names the bad line); *c* may then be half-updated and is dropped."""
        if c.end is None:  # where its line ends is unknown: nothing to catch up from
            return False
        start = c.end - len(c.line)
        with open(self.path, "rb") as f:
            f.seek(start)
            chunk = f.read()
        if not chunk.startswith(c.line):
            return False
        complete = chunk.rfind(b"\n") + 1
        self._cache = None  # until the fold is through
        prev_raw, prev_seq = c.line, c.seq
        for raw in chunk[len(c.line):complete].split(b"\n")[:-1]:
            if not raw.strip():
                return False
            row, reason = decode_line(raw, 2)
            if reason is not None:
                return False
            raw += b"\n"
            if type(row.get("seq")) is not int or row["seq"] != prev_seq + 1 or row.get("prev") != _sha(prev_raw):
                return False
            if _replay(row, c.state) is not None:
                return False
            prev_raw, prev_seq = raw, row["seq"]
        if prev_raw != last_line:
            return False
        c.head, c.line, c.seq, c.end = head, prev_raw, prev_seq, start + complete
        c.ident = _identity(self.path, c.end)
        self._cache = c
        self._seen = (c.seq, head)
        return True

    # -- reading
    def events(self) -> list[dict]:
        """Every event line (header excluded) in ledger order; torn or undecodable lines are skipped."""
        if not self.path.is_file():
            return []
        with _collector_paused():
            return list(_event_rows(self.path))

    def fold(self) -> LedgerState:
        """``fold(self.events())``: a fresh ``LedgerState`` (see ``research.fold``). The lines are
        decoded and folded one by one; the state keeps parts of the decoded rows, which nobody
        else holds, instead of copies (``fold_owned``)."""
        if not self.path.is_file():
            return LedgerState()
        with _collector_paused():
            return fold_owned(_event_rows(self.path))

    def verify(self, expected_head: str | None = None, *, expected_events: int | None = None,
               appended_ok: bool = False) -> dict:
        """Re-check the whole file: ``{"ok": bool, "problems": [{"line": N, "problem": "..."}],
        "events": count, "head": sha256 of the last line}``. Finds undecodable, blank and torn
        lines, a missing header, seq gaps or disorder, broken ``prev`` links (an edited, deleted
        or moved line; Windows line endings or a byte-order mark are named as such), and events
        that fail their schema, authority, references or state when replayed in order.

        *expected_head* (and *expected_events*), the head ``dsh-notebook sync`` sealed in the
        notebook's metadata, also catch an edit or a removal of the last lines, which leaves
        the chain intact. The result then has ``"sealed": {"head", "events", "line", "status",
        "appended"}`` where status is ``matches``, ``appended`` (the sealed head is an earlier
        line: events were appended since sync, a problem unless *appended_ok*), ``ends before``
        (no line has the sealed hash and fewer events are left: lines deleted) or ``differs``
        (no line has it: the last sealed line was edited or replaced)."""
        try:
            with FileLock(lock_path(self.path), timeout=self.lock_timeout, thread_local=False):
                snap = _read(self.path)
        except Timeout:
            return {"ok": False, "problems": [{"line": 0, "problem": "ledger is locked by another writer"}],
                    "events": 0, "head": None}
        except FileNotFoundError:
            return {"ok": False, "problems": [{"line": 0, "problem": f"{self.path} does not exist"}],
                    "events": 0, "head": None}
        except OSError as exc:
            return {"ok": False, "problems": [{"line": 0, "problem": f"cannot read {self.path}: {_why(exc)}"}],
                    "events": 0, "head": None}
        with _collector_paused():
            problems = list(snap.problems) + _chain_problems(snap)
            state = LedgerState()
            entries = snap.entries[1:] if snap.entries and snap.entries[0][1].get("seq") == 0 else snap.entries
            for n, row, _ in entries:
                problem = _replay(row, state)
                if problem is not None:
                    problems.append((n, problem))
        head = _sha(snap.entries[-1][2]) if snap.entries else None
        result: dict = {}
        if expected_head is not None:
            sealed = _sealed(snap, head, state.events, expected_head, expected_events)
            result["sealed"] = sealed
            last_line = snap.entries[-1][0] if snap.entries else 0
            if sealed["status"] == "ends before":
                problems.append((last_line, (f"the ledger ends before the head sealed by sync: sync sealed "
                                             f"{expected_events} event(s) ending in {expected_head[:12]}…, the file "
                                             f"holds {state.events} and no line has that hash (its last line(s) "
                                             "deleted?)")))
            elif sealed["status"] == "differs":
                problems.append((last_line, (f"no line has the head sealed by sync ({expected_head[:12]}…): the "
                                             "last sealed line was edited or replaced since sync (head now "
                                             f"{(head or '')[:12]}…)")))
            elif sealed["status"] == "appended" and not appended_ok:
                problems.append((sealed["line"] + 1, (f"the ledger goes on after the head sealed by sync (line "
                                                      f"{sealed['line']}): {sealed['appended']} event(s) appended "
                                                      "since; run `dsh-notebook sync` to seal the new head")))
        problems.sort(key=lambda p: p[0])
        return {"ok": not problems, "problems": [{"line": n, "problem": p} for n, p in problems],
                "events": state.events, "head": head, **result}


def _type_name(exc: BaseException) -> str:
    return type(exc).__name__


def _sealed(snap: _Snapshot, head: str | None, events: int, expected: str, expected_events: int | None) -> dict:
    """Where the sealed head *expected* is in *snap* (see ``Ledger.verify``)."""
    out = {"head": expected, "events": expected_events, "line": None, "status": "differs", "appended": 0}
    if head == expected:
        return {**out, "line": snap.entries[-1][0], "status": "matches"}
    for i, (n, _row, raw) in enumerate(snap.entries[:-1]):
        nxt = snap.entries[i + 1][1]
        if nxt.get("prev") == expected and _sha(raw) == expected:
            return {**out, "line": n, "status": "appended", "appended": len(snap.entries) - 1 - i}
    if expected_events is not None and events < expected_events:
        out["status"] = "ends before"
    return out


def _explained(prev: Any, prev_raw: bytes, n_prev: int) -> str | None:
    """Why ``prev`` does not match *prev_raw* when the bytes were only converted: the previous
    line ends in CRLF (Windows line endings) or starts with a byte-order mark (line 1)."""
    if not isinstance(prev, str):
        return None
    raw = prev_raw
    causes = []
    if n_prev == 1 and raw.startswith(BOM):
        raw = raw[len(BOM):]
        causes.append("bom")
    if raw.endswith(b"\r\n"):
        raw = raw[:-2] + b"\n"
        causes.append("crlf")
    if causes and _sha(raw) == prev:
        return "+".join(causes)
    return None


def _chain_problems(snap: _Snapshot) -> list[tuple[int, str]]:
    """Header, seq and ``prev`` problems of *snap*. A broken link explained by converted bytes
    (Windows line endings, a byte-order mark) is reported once per cause, saying so."""
    out: list[tuple[int, str]] = []
    if not snap.entries:
        return out + [(1, "no header line: the file is not a ledger (or its header was removed)")]
    n0, first, raw0 = snap.entries[0]
    if first.get("seq") != 0 or first.get("version") != LEDGER_VERSION or "type" in first:
        out.append((n0, f"line {n0} is not a version-{LEDGER_VERSION} ledger header {{seq: 0, version, name, created}}"))
    crlf = [n for n, _, raw in snap.entries if raw.endswith(b"\r\n")]
    if crlf:
        out.append((crlf[0], (f"the file has Windows line endings (CRLF) on {len(crlf)} line(s) from line {crlf[0]} "
                              "on (git core.autocrlf or an editor converted it): every hash covers the exact bytes, so "
                              "the chain breaks at each such line; restore LF endings (e.g. dos2unix, or "
                              "`git config core.autocrlf false` and check the file out again)")))
    if raw0.startswith(BOM):
        out.append((n0, ("line 1 starts with a byte-order mark (BOM) that an editor added: the hash chain covers the "
                         "exact bytes, so the next line's prev no longer matches; remove the BOM")))
    for (n_prev, prev_row, prev_raw), (n, row, _) in zip(snap.entries, snap.entries[1:]):
        want = prev_row.get("seq", -1) + 1 if type(prev_row.get("seq")) is int else None
        if type(row.get("seq")) is not int or row.get("seq") != want:
            out.append((n, f"seq {row.get('seq')!r} where {want!r} was expected (line missing or moved?)"))
        if row.get("prev") != _sha(prev_raw) and _explained(row.get("prev"), prev_raw, n_prev) is None:
            out.append((n, ("prev is not the sha256 of the previous line: the previous line was edited, "
                            "or a line was deleted or moved here")))
    return out
