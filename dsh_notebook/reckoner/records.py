"""Record files: header, trace rows, the version gate, listing and replay
(spec: reckoner.md section 1; upstream-facts.md 3.11; storage.md).

* A record file is JSONL: a header ``{"seq": 0, "version": 1}`` then one trace row per
  engine call ``{"seq", "at", "tool", "ok", "content"}``, the same shape upstream writes,
  so files move between dsh-reckoner and dsh-notebook unchanged.
* ``<home>/open-record.jsonl`` is the record being written; closing renames it atomically
  to ``<home>/records/<id>.jsonl`` (read-only from then on). A record left open by a crash
  is either resumed by replay (the engine's default, as upstream) or set aside into
  ``<home>/stale/`` for the person to close or discard (the notebook's choice).
* Readers apply the version gate: a file whose first line is not a header, or whose
  version is not one this engine writes, or whose start row names engine rules this engine
  does not apply (``"rules": 3``), is unreadable and never served or replayed.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..storage import JsonlWriter, atomic_rename, lock_if_free, read_jsonl
from ..version import ENGINE_RULES
from .errors import ReckonerError

VERSION = 1
OPEN_FILE = "open-record.jsonl"
RECORDS_DIR = "records"
STALE_DIR = "stale"
UNREADABLE_DIR = "unreadable"
HEADER = {"seq": 0, "version": VERSION}


class UnreadableRecord(ReckonerError, ValueError):
    """A record file that fails the version gate or lacks its start row."""

    code = "RECORD_UNREADABLE"


@dataclass
class Record:
    """One record file, read.

    ``rows`` are the trace rows (header excluded) in file order; ``problems`` lists
    ``(line, reason)`` for lines that could not be read (a torn last line, bad UTF-8).
    Times are milliseconds since the epoch.
    """

    id: str
    path: Path
    version: int
    title: str
    rows: list[dict[str, Any]]
    problems: list[tuple[int, str]] = field(default_factory=list)
    opened: int | None = None
    ended: int | None = None
    closed: bool = False
    #: the engine-rules version named in the record_start row (1 when absent: written before
    #: temperature kinds, issue 17)
    rules: int = 1

    @property
    def steps(self) -> list[dict[str, Any]]:
        """Accepted ``eval`` rows."""
        return [r for r in self.rows if r.get("tool") == "eval" and r.get("ok")]

    @property
    def refused(self) -> list[dict[str, Any]]:
        """Engine calls that were refused. A lookup that did not answer (``search`` row with
        ``ok: false``) is an outcome of the lookup, not a refused call: see :attr:`lookups`."""
        return [r for r in self.rows if r.get("ok") is False and r.get("tool") != "search"]

    @property
    def lookups(self) -> list[dict[str, Any]]:
        """``search`` rows (every outcome), in order."""
        return [r for r in self.rows if r.get("tool") == "search"]

    @property
    def closing_text(self) -> str | None:
        """The text of the accepted ``record_end`` row, or ``None``."""
        text = None
        for r in self.rows:
            if r.get("tool") == "record_end" and r.get("ok"):
                text = (r.get("content") or {}).get("text")
        return text

    @property
    def ended_in_refusal(self) -> bool:
        """Whether the calculation stopped at a refusal: its last engine call before the close
        (notes and lookups aside) was refused, as a ``%%reckon`` cell's record is when a line
        is refused."""
        return self.stopping_refusal is not None

    @property
    def stopping_refusal(self) -> dict[str, Any] | None:
        """The refused row the calculation stopped at (see :attr:`ended_in_refusal`): the last
        engine call, notes and lookups aside, when it was refused; a refused closing (the record
        could not be closed whole: ``ENGINE_IO``) counts as such a call."""
        calls = [r for r in self.rows if r.get("tool") not in ("record_start", "record_message", "search")
                 and not (r.get("tool") == "record_end" and r.get("ok"))]
        return calls[-1] if calls and calls[-1].get("ok") is False else None

    def summary(self) -> dict[str, Any]:
        """``{"id", "title", "status": "closed"|"open", "opened", "closed", "steps", "refused",
        "ended_in_refusal", "path"}`` (times in ms since the epoch, ``closed`` ``None`` while
        open)."""
        return {
            "id": self.id,
            "title": self.title,
            "status": "closed" if self.closed else "open",
            "opened": self.opened,
            "closed": self.ended if self.closed else None,
            "steps": len(self.steps),
            "refused": len(self.refused),
            "ended_in_refusal": self.ended_in_refusal,
            "path": str(self.path),
        }


def now_ms() -> int:
    """The clock in milliseconds since the epoch (trace rows' ``at``)."""
    return time.time_ns() // 1_000_000


def read_record(path: str | os.PathLike[str]) -> Record:
    """Read one record file (open, closed or set aside).

    Raises :class:`UnreadableRecord` when the version gate or the start row fails, and
    ``FileNotFoundError`` when there is no such file.
    """
    path = Path(path)
    data = read_jsonl(path)
    rows = data.rows
    if not rows or data.line_numbers[0] != 1 or rows[0].get("seq") != 0 or ("version" in rows[0] and not isinstance(rows[0].get("version"), int)):
        raise UnreadableRecord(f"{path.name}: the first line is not a record header {{\"seq\": 0, \"version\": {VERSION}}}")
    version = rows[0].get("version")
    if version != VERSION:
        raise UnreadableRecord(
            f"{path.name}: record version {version!r} is not readable by this engine (it reads version {VERSION})"
        )
    body = rows[1:]
    start = next((r for r in body if r.get("tool") == "record_start" and r.get("ok")), None)
    content = (start or {}).get("content") or {}
    title, rid = content.get("title"), content.get("record")
    if start is None or not isinstance(title, str) or not title or not isinstance(rid, str) or not rid:
        why = "".join(f"; line {p.line}: {p.reason}" for p in data.problems[:3])
        raise UnreadableRecord(f"{path.name}: no accepted record_start row with a title and a record id{why}")
    rules = content.get("rules", 1)  # absent: written before the field (rules 1)
    if type(rules) is not int or not 1 <= rules <= ENGINE_RULES:
        raise UnreadableRecord(
            f"{path.name}: written under engine rules {rules!r}; this engine applies rules 1 to {ENGINE_RULES}, so it "
            "cannot replay or check the record (a newer dsh-notebook can)"
        )
    ended = None
    closed = False
    for r in body:
        if r.get("tool") == "record_end" and r.get("ok"):
            ended = r.get("at")
            closed = True
    if ended is None and body:
        ended = body[-1].get("at")
    return Record(
        id=rid,
        path=path,
        version=version,
        title=title,
        rows=body,
        problems=[(p.line, p.reason) for p in data.problems],
        opened=start.get("at"),
        ended=ended,
        closed=closed,
        rules=rules if type(rules) is int else 1,
    )


def list_records(home: str | os.PathLike[str]) -> dict[str, Any]:
    """Everything in an engine folder.

    Returns ``{"closed": [summary...], "open": summary | None, "set_aside": [summary...],
    "unreadable": [{"id", "path", "reason"}...]}``, closed records oldest first.
    """
    home = Path(home)
    out: dict[str, Any] = {"closed": [], "open": None, "set_aside": [], "unreadable": []}
    for sub, key in ((RECORDS_DIR, "closed"), (STALE_DIR, "set_aside")):
        d = home / sub
        if not d.is_dir():
            continue
        for p in sorted(d.glob("*.jsonl")):
            try:
                rec = read_record(p)
            except (UnreadableRecord, OSError) as exc:
                out["unreadable"].append({"id": p.stem, "path": str(p), "reason": str(exc)})
                continue
            s = rec.summary()
            if key == "set_aside":
                s["status"] = "set aside"
            out[key].append(s)
    out["closed"].sort(key=lambda s: (s["opened"] or 0, s["id"]))
    op = home / OPEN_FILE
    if op.exists():
        try:
            out["open"] = read_record(op).summary()
        except (UnreadableRecord, OSError) as exc:
            out["unreadable"].append({"id": OPEN_FILE, "path": str(op), "reason": str(exc)})
    return out


def find_record(home: str | os.PathLike[str], record_id: str) -> Path:
    """The file of a record id in ``home`` (closed, open or set aside); ``FileNotFoundError`` if none."""
    home = Path(home)
    if not isinstance(record_id, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", record_id) or ".." in record_id:
        raise FileNotFoundError(f"{record_id!r} is not a record id (ids look like 1795969445532)")
    for p in (home / RECORDS_DIR / f"{record_id}.jsonl", home / STALE_DIR / f"{record_id}.jsonl"):
        if p.exists():
            return p
    op = home / OPEN_FILE
    if op.exists():
        try:
            if read_record(op).id == record_id:
                return op
        except UnreadableRecord:
            pass
    raise FileNotFoundError(f"no record {record_id!r} in {home}")


def new_record_id(home: Path, ms: int) -> str:
    """Upstream's id: the clock in ms as a string, suffixed -2, -3, ... if taken."""
    base = str(ms)
    rid = base
    n = 1
    while any((home / d / f"{rid}.jsonl").exists() for d in (RECORDS_DIR, STALE_DIR)):
        n += 1
        rid = f"{base}-{n}"
    return rid


def _move_aside(path: Path, dest_dir: Path, stem: str) -> Path:
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / f"{stem}.jsonl"
    n = 1
    while dest.exists():
        n += 1
        dest = dest_dir / f"{stem}-{n}.jsonl"
    atomic_rename(path, dest)
    return dest


def set_aside_open_record(home: str | os.PathLike[str]) -> Path | None:
    """Move an abandoned ``open-record.jsonl`` (no live writer holds it) into ``stale/``.

    Returns the new path, or ``None`` when there is nothing to set aside (no file, or a
    live engine holds its lock). A file failing the version gate goes to ``unreadable/``.
    """
    home = Path(home)
    op = home / OPEN_FILE
    if not op.exists():
        return None
    # Move it only while holding its lock, so no engine can be creating or closing it meanwhile.
    with lock_if_free(op) as free:
        if not free or not op.exists():
            return None
        try:
            rid = read_record(op).id
        except UnreadableRecord:
            return _move_aside(op, home / UNREADABLE_DIR, f"open-record-{now_ms()}")
        return _move_aside(op, home / STALE_DIR, rid)


def finish_close(home: str | os.PathLike[str], path: str | os.PathLike[str], record_id: str) -> Path:
    """Move a record file that already holds its closing row (an engine stopped between writing
    it and the move, issue 16) into ``records/<id>.jsonl``, read-only, without appending
    anything. An existing file of that name is never overwritten: ``FileExistsError``."""
    home, path = Path(home), Path(path)
    dest = home / RECORDS_DIR / f"{record_id}.jsonl"
    if dest.exists():
        raise FileExistsError(f"a closed record {dest.name} already exists; {path.name} is left where it is")
    dest.parent.mkdir(parents=True, exist_ok=True)
    atomic_rename(path, dest, make_read_only=True)
    _drop_lock_file(path)
    return dest


def close_set_aside(home: str | os.PathLike[str], record_id: str, text: str | None = None) -> Path:
    """Close a set-aside record: append a ``record_end`` row and move it into ``records/``. A
    record that already holds its closing row (its engine stopped before moving it, or could not
    make it durable: ``ENGINE_IO``) is moved as it is: no row ever follows a closing row.

    Raises ``FileNotFoundError`` or :class:`UnreadableRecord`.
    """
    home = Path(home)
    path = home / STALE_DIR / f"{record_id}.jsonl"
    rec = read_record(path)
    if rec.closed:
        return finish_close(home, path, rec.id)
    last = max([r.get("seq", 0) for r in rec.rows if isinstance(r.get("seq"), int)] or [1])
    content: dict[str, Any] = {"record": rec.id}
    content["text"] = text or "Closed by recovery after the kernel stopped with this record open."
    if not os.access(path, os.W_OK):  # left read-only by a stop between chmod and rename
        os.chmod(path, 0o644)
    w = JsonlWriter(path)
    try:
        w.append({"seq": last + 1, "at": now_ms(), "tool": "record_end", "ok": True, "content": content})
    finally:
        w.close(fsync=True)
    return finish_close(home, path, rec.id)


def discard_set_aside(home: str | os.PathLike[str], record_id: str) -> None:
    """Delete a set-aside record (``FileNotFoundError`` if there is none)."""
    path = Path(home) / STALE_DIR / f"{record_id}.jsonl"
    path.unlink()
    _drop_lock_file(path)


def _drop_lock_file(path: Path) -> None:
    try:
        os.unlink(str(path) + ".lock")
    except OSError:
        pass
