"""Strict JSONL files: storage.md "Writing rules" (encoding, strict JSON, locking, torn lines).

Design:

- ``dumps_line`` turns one object into one line of strict JSON: UTF-8 whatever the locale,
  ``ensure_ascii=False``, compact, ``\\n``-terminated. numpy scalars and arrays become plain
  numbers, booleans and lists; NaN/Infinity (cases P08/P09) and anything else JSON cannot hold
  (complex, datetime, ...) are refused with ``StorageError`` before a byte is written.
- ``JsonlWriter`` appends whole lines with one ``write`` on an ``O_APPEND`` file and flushes at
  once (nothing is buffered in Python), so a kernel crash loses nothing acknowledged. The lock
  (filelock, ``<path>.lock``) is held from open to close (``hold_lock=True``: open record, chat
  session) or taken around each append (``hold_lock=False``: ledgers, reviews), so two kernels
  never interleave lines. A torn last line left by a crash (bytes after the last newline) is
  closed off with ``\\n`` first, or, for hash-chained files (``append_after(...,
  torn="set_aside")``), moved into ``<path>.torn-<UTC time>`` and cut off the file
  (``set_aside_torn``), so the chain never passes over a fragment; a complete JSON object
  without its newline (an editor removed it) is refused instead (``UnterminatedLineError``).
- ``read_jsonl`` never raises on content: torn last lines, invalid UTF-8 (P11), non-JSON,
  non-objects and NaN/Infinity are reported as ``Problem(line, reason)`` and the rest loads.
- Nothing here knows about notebooks; the engines build ``seq``/``ts``/``type`` themselves.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Self

from filelock import FileLock, Timeout

from ..errors import DshError

__all__ = [
    "JsonlRead",
    "JsonlWriter",
    "LockedError",
    "Problem",
    "StorageError",
    "UnterminatedLineError",
    "decode_line",
    "dumps_line",
    "is_locked",
    "lock_if_free",
    "lock_path",
    "read_jsonl",
    "set_aside_torn",
]

TORN = "torn last line (incomplete write)"


class StorageError(DshError, ValueError):
    """A value or file operation the storage layer refuses (non-finite number, unserialisable type, ...)."""

    code = "STORAGE_REFUSED"


class LockedError(StorageError):
    """The file's lock is held by another writer (another kernel, process or open writer)."""

    code = "STORAGE_LOCKED"


class UnterminatedLineError(StorageError):
    """The file's last line is a complete JSON object without its newline: not a torn write (a
    writer writes the newline with the line), most likely an editor that removed it."""

    code = "STORAGE_UNTERMINATED_LINE"


# --------------------------------------------------------------------------- encoding


def _plain(obj: Any, where: str) -> Any:
    """Return *obj* as plain JSON-able Python values, refusing non-finite floats and unknown types."""
    import numpy as np  # the slow path only: importing storage stays light (issue 22, a fast load)

    if obj is None or isinstance(obj, (str, bool)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise StorageError(f"non-finite number {obj!r} at {where}: strict JSON has no NaN or Infinity")
        return float(obj)
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
                k = str(int(k))
            elif not isinstance(k, str):
                raise StorageError(f"object key {k!r} at {where} is not a string")
            out[str(k)] = _plain(v, f"{where}.{k}")
        return out
    if isinstance(obj, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist(), where)
    if isinstance(obj, (np.bool_, np.integer, np.floating)):
        return _plain(obj.item(), where)
    raise StorageError(f"value of type {type(obj).__name__} at {where} cannot be written as JSON")


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps_line(obj: Any) -> bytes:
    """Encode *obj* as one strict JSON line: UTF-8 bytes ending in ``b"\\n"`` (no other newline).

    numpy scalars become JSON numbers/booleans, numpy arrays nested lists, tuples lists.
    Raises ``StorageError`` for NaN/Infinity anywhere (message names the place, e.g. ``$.x[2]``),
    for complex numbers and other types JSON cannot hold, and for strings with lone surrogates.
    """
    try:  # fast path: plain Python data goes straight to the C encoder
        text = _ENCODER.encode(obj)
    except (TypeError, ValueError):  # numpy values, NaN/inf, odd keys: walk it to convert or name the place
        text = _ENCODER.encode(_plain(obj, "$"))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise StorageError(f"text is not valid Unicode (lone surrogate?): {e}") from None
    assert b"\n" not in data
    return data + b"\n"


# --------------------------------------------------------------------------- writing


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock file guarding *path*: ``<path>.lock``."""
    p = Path(path)
    return p.with_name(p.name + ".lock")


def is_locked(path: str | os.PathLike[str]) -> bool:
    """True when some writer (this process or another) holds the lock of *path*; never waits."""
    if not lock_path(path).exists():
        return False
    lock = FileLock(lock_path(path), thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False


@contextlib.contextmanager
def lock_if_free(path: str | os.PathLike[str]) -> Iterator[bool]:
    """Take the lock of *path* if nobody holds it, without waiting; yields True (held for
    the block) or False (another writer holds it). For moving a file no writer owns."""
    lock = FileLock(lock_path(path), thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def _last_line(path: Path) -> bytes | None:
    """The last complete line of *path* (with its newline), or ``None``; a torn tail (no
    newline yet) is not a line."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        end = f.tell()
        size = 4096
        while True:
            start = max(0, end - size)
            f.seek(start)
            chunk = f.read(end - start)
            cut = chunk.rfind(b"\n")
            if cut < 0:
                if start == 0:
                    return None
                size *= 2
                continue
            prev = chunk.rfind(b"\n", 0, cut)
            if prev >= 0:
                return chunk[prev + 1:cut + 1]
            if start == 0:
                return chunk[:cut + 1]
            size *= 2


def _ends_torn(path: Path) -> bool:
    """True when *path* is non-empty and does not end with a newline."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return False
        f.seek(-1, os.SEEK_END)
        return f.read(1) != b"\n"


def _last_newline(f: IO[bytes]) -> int:
    """Offset just after the last ``\\n`` of the open binary file *f* (0 if none)."""
    end = f.seek(0, os.SEEK_END)
    pos, size = end, 4096
    while pos > 0:
        start = max(0, pos - size)
        f.seek(start)
        chunk = f.read(pos - start)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        pos, size = start, size * 2
    return 0


def set_aside_torn(path: str | os.PathLike[str]) -> Path | None:
    """Move a torn tail of *path* (the bytes after its last newline, left by a writer that
    crashed mid-line: not written) into ``<path>.torn-<UTC time>``, written and fsynced first,
    then cut it off *path* (truncate to its last newline, fsync). The caller holds the file's
    lock. Returns the new file, or ``None`` when *path* ends with a newline (or is empty).
    Raises ``UnterminatedLineError`` (nothing changed) when the tail is a complete JSON object
    (a writer writes a line and its newline at once, so that is an edit, not a crash) or when
    the file has no newline at all (not a file of lines: never emptied)."""
    from datetime import UTC, datetime

    path = Path(path)
    with open(path, "r+b") as f:
        size = f.seek(0, os.SEEK_END)
        start = _last_newline(f)
        if start >= size:
            return None
        if start == 0:  # no complete line at all: nothing to keep writing after; leave it alone
            raise UnterminatedLineError(f"{path} has no complete line (no newline at all): it is not a file of "
                                        "lines this writer appends to; nothing was changed")
        f.seek(start)
        tail = f.read()
        _row, reason = _decode(tail, 0)
        if reason is None:
            f.seek(0)
            line = f.read(start).count(b"\n") + 1
            raise UnterminatedLineError(
                f"{path}: line {line} (the last) is a complete JSON object without the newline that ends every "
                "line (removed by an editor?); add the newline back at the end of the file")
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        aside = path.with_name(f"{path.name}.torn-{stamp}")
        n = 0
        while True:
            try:
                fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileExistsError:
                n += 1
                aside = path.with_name(f"{path.name}.torn-{stamp}-{n}")
        with os.fdopen(fd, "wb") as out:
            out.write(tail)
            out.flush()
            os.fsync(out.fileno())
        f.truncate(start)
        f.flush()
        os.fsync(f.fileno())
    return aside


class JsonlWriter:
    """Append strict JSON lines to *path* (parents created, file opened in binary append mode).

    ``hold_lock=True``: take ``<path>.lock`` now without waiting and hold it until ``close()``;
    raises ``LockedError`` if another writer holds it. ``hold_lock=False``: take the lock around
    each append, waiting up to *lock_timeout* seconds (then ``LockedError``). ``fsync_each``
    fsyncs after every append. Usable as a context manager; ``close()`` is idempotent.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        hold_lock: bool = True,
        fsync_each: bool = False,
        lock_timeout: float = 10.0,
    ) -> None:
        self.path = Path(path)
        self.hold_lock = hold_lock
        self.fsync_each = fsync_each
        self.lock_timeout = lock_timeout
        self._mutex = threading.Lock()
        self._fh: io.FileIO | None = None
        self.set_aside: Path | None = None  # the torn tail the last append_after set aside
        self.stat_after: os.stat_result | None = None  # the file after the last append_after
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(lock_path(self.path), thread_local=False)
        if hold_lock:
            self._acquire(0)
        try:
            self._fh = open(self.path, "ab", buffering=0)  # noqa: SIM115 - the writer owns the file until close()
            if hold_lock and _ends_torn(self.path):
                self._write(b"\n")
        except BaseException:
            self._release()
            if self._fh is not None:
                self._fh.close()
            raise

    # -- locking
    def _acquire(self, timeout: float) -> None:
        try:
            self._lock.acquire(timeout=timeout)
        except Timeout:
            waited = f" after waiting {timeout:g} s" if timeout > 0 else ""
            raise LockedError(
                f"cannot write {self.path}: another writer (e.g. another kernel) holds its lock "
                f"{lock_path(self.path)}{waited}; close that writer or kernel first"
            ) from None

    def _release(self) -> None:
        if self._lock.is_locked:
            self._lock.release(force=True)

    # -- writing
    def _file(self) -> io.FileIO:
        """The open file; ``StorageError`` once the writer is closed."""
        fh = self._fh
        if fh is None or fh.closed:
            raise StorageError(f"writer for {self.path} is closed")
        return fh

    def _write(self, data: bytes) -> None:
        """Append *data*; when the disk refuses part of it (ENOSPC, EFBIG, EIO) the file is cut
        back to where it ended, so no partial line is left, and the ``OSError`` is raised."""
        fh = self._file()
        start = os.fstat(fh.fileno()).st_size
        view = memoryview(data)
        try:
            while view:  # one write call in practice; loop only on a (rare) short write
                n = fh.write(view)
                if not n:
                    raise OSError(f"no progress writing {self.path}")
                view = view[n:]
            if self.fsync_each:
                os.fsync(fh.fileno())
        except OSError:
            try:
                if os.fstat(fh.fileno()).st_size > start:
                    os.ftruncate(fh.fileno(), start)
            except OSError:
                pass  # the tail is torn; readers skip a torn last line and the next writer closes it off
            raise

    def _append_bytes(self, data: bytes) -> None:
        with self._mutex:
            if self.closed:
                raise StorageError(f"writer for {self.path} is closed")
            if self.hold_lock:
                self._write(data)
                return
            self._acquire(self.lock_timeout)
            try:
                if _ends_torn(self.path):
                    data = b"\n" + data
                self._write(data)
            finally:
                self._lock.release()

    def append(self, obj: Any) -> bytes:
        """Write *obj* as one line (see ``dumps_line``) and flush; returns the exact bytes written
        (with the trailing ``\\n``; hash them for a chain). Raises ``StorageError`` for a refused
        value (the file is left unchanged), ``LockedError`` on lock timeout."""
        line = dumps_line(obj)
        self._append_bytes(line)
        return line

    def sync(self) -> None:
        """fsync the file now (the writer stays open and keeps its lock)."""
        with self._mutex:
            fh = self._fh
            if fh is not None and not fh.closed:
                os.fsync(fh.fileno())

    def append_encoded(self, line: bytes) -> bytes:
        """Append a line already encoded by the caller (hot paths build strict JSON from
        cached pieces). It must be one UTF-8 JSON object ending in ``b"\\n"`` with no other
        newline; ``StorageError`` otherwise. The caller guarantees strictness (no NaN)."""
        if line.count(b"\n") != 1 or not line.endswith(b"\n") or not line.startswith(b"{"):
            raise StorageError("append_encoded needs exactly one JSON object line ending in a newline")
        self._append_bytes(line)
        return line

    def append_after(self, build: Callable[[Any, bytes | None], Any], *, torn: str = "close") -> bytes:
        """Append ``build(last_row, last_line)``: the object is computed from the file's last
        complete line, read under the same lock as the write, so no other writer can append in
        between. For sequence numbers (``seq`` = last + 1) and hash chains (``prev`` = sha256 of
        ``last_line``) in files several kernels share. ``last_line`` is ``None`` for a file with
        no complete line; ``last_row`` is its strict decoding (``decode_line``), ``None`` when
        there is none or it is not a JSON object (never an exception: check ``last_line``).

        A torn tail is closed off with a newline first (``torn="close"``), or set aside
        (``torn="set_aside"``: ``set_aside_torn``, the new file's path kept in
        ``self.set_aside``; ``UnterminatedLineError`` when the tail is a whole JSON object).
        Returns the bytes written; a refused value writes nothing. After the write, still under
        the lock, ``self.stat_after`` holds the file's ``os.stat_result``."""
        if torn not in ("close", "set_aside"):
            raise ValueError(f"torn={torn!r}: expected 'close' or 'set_aside'")
        with self._mutex:
            if self.closed:
                raise StorageError(f"writer for {self.path} is closed")
            if not self.hold_lock:
                self._acquire(self.lock_timeout)
            try:
                self.set_aside = set_aside_torn(self.path) if torn == "set_aside" else None
                last_line = _last_line(self.path)
                last = _decode(last_line.rstrip(b"\n"), 0)[0] if last_line else None
                data = dumps_line(build(last, last_line))
                if torn == "close" and _ends_torn(self.path):
                    data = b"\n" + data
                self._write(data)
                self.stat_after = os.fstat(self._file().fileno())
                return data.lstrip(b"\n")
            finally:
                if not self.hold_lock:
                    self._lock.release()

    def append_many(self, objs: Iterable[Any]) -> list[bytes]:
        """Append several objects in one write; all are encoded first, so a refused value writes nothing."""
        lines = [dumps_line(o) for o in objs]
        if lines:
            self._append_bytes(b"".join(lines))
        return lines

    @property
    def closed(self) -> bool:
        """True once ``close()`` ran (the writer then refuses appends with ``StorageError``)."""
        return self._fh is None or self._fh.closed

    def close(self, fsync: bool = True) -> None:
        """fsync (unless ``fsync=False``), close the file and release the lock. Idempotent."""
        with self._mutex:
            if self._fh is not None and not self._fh.closed:
                try:
                    if fsync:
                        os.fsync(self._fh.fileno())
                finally:
                    self._fh.close()
                    self._release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"JsonlWriter({str(self.path)!r}, hold_lock={self.hold_lock}, {state})"


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Problem:
    """A line that could not be loaded: 1-based *line* number and a human *reason*."""

    line: int
    reason: str


@dataclass
class JsonlRead:
    """Result of ``read_jsonl``: ``rows[i]`` came from 1-based line ``line_numbers[i]``;
    ``problems`` lists the lines that were skipped (in file order)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    line_numbers: list[int] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every non-blank line loaded."""
        return not self.problems


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name} is not strict JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} overflows to infinity")
    return value


# one strict decoder for every line (``json.loads`` with hooks builds a decoder per call)
_RAW = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float).raw_decode


def _decode(raw: bytes, lineno: int) -> tuple[Any, str | None]:
    """Return ``(value, None)`` or ``(None, reason)`` for one line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, f"invalid UTF-8 at byte {e.start} of the line"
    if lineno == 1:
        text = text.removeprefix("\ufeff")
    try:
        try:  # fast path: a line as our writers write it (no surrounding whitespace)
            obj, end = _RAW(text)
        except ValueError:
            end = -1
        if end != len(text):  # anything else: json.loads decides (and words the error)
            obj = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except (ValueError, RecursionError) as e:
        return None, f"invalid JSON: {e}"
    if not isinstance(obj, dict):
        return None, f"not a JSON object (got {type(obj).__name__})"
    return obj, None


def decode_line(raw: bytes, lineno: int = 0) -> tuple[Any, str | None]:
    """One line as ``read_jsonl`` decodes it (strict UTF-8 and JSON, an object, no NaN/Infinity;
    a BOM is dropped on line 1): ``(row, None)`` or ``(None, reason)``; never raises for content.
    For readers that need the line's bytes too (hash chains) and read the file only once."""
    return _decode(raw, lineno)


class NotARegularFile(DshError, OSError):
    """A path that names a folder, a pipe, a socket or a device where a file was expected (an
    ``OSError``, so callers that name an unreadable file name this one too)."""

    code = "STORAGE_NOT_A_FILE"


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file *path* (a symbolic link is followed). Opened without
    blocking and checked before reading, so a named pipe or a device put where a record or log
    was is never waited on: raises :class:`NotARegularFile` (an ``OSError``) naming it, and
    ``FileNotFoundError`` when there is nothing there."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile(f"{Path(path).name} is not a regular file (a folder, a pipe or a device)")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def read_jsonl(path: str | os.PathLike[str]) -> JsonlRead:
    """Load every line of *path* that is a strict JSON object; never raises for content.

    Blank lines are skipped silently. Invalid UTF-8, invalid JSON, NaN/Infinity, a non-object
    and a torn last line (no final newline and undecodable: ``"torn last line (incomplete
    write)"``) become ``Problem`` entries. Raises ``FileNotFoundError`` if *path* does not exist
    and :class:`NotARegularFile` for a folder, a pipe or a device (:func:`read_regular`).
    """
    data = read_regular(path)
    result = JsonlRead()
    lines = data.split(b"\n")
    complete = len(lines) - 1  # the last element follows the final "\n" (or is an unterminated line)
    for i, raw in enumerate(lines):
        lineno = i + 1
        if not raw.strip():
            continue
        row, reason = _decode(raw, lineno)
        if reason is None:
            result.rows.append(row)
            result.line_numbers.append(lineno)
        else:
            result.problems.append(Problem(lineno, TORN if i == complete else reason))
    return result
