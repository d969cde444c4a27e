"""The engine: six calls, receipts, the slot table and the open record
(spec: reckoner.md section 1; upstream-facts.md 3.1-3.4, 3.9, 3.11).

* Every public call returns a receipt dict and never raises: ``{"ok": True, ...}`` or
  ``{"ok": False, "code", "error"}``. A refused call changes no slot and no rev.
* While a record is open every call appends one trace row, written and flushed before
  the call returns (deliberate difference 5); ``record_end`` fsyncs and renames the file
  atomically into ``records/`` and clears the table.
* ``Engine(home)`` owns one folder (deliberate difference 4). Its open record is locked
  (filelock); a second engine on the same folder gets ``ENGINE_OPEN_RECORD_FOUND`` rather
  than a shared file.
* Formulas are parsed once (``grammar.parse``) and their dimension check is cached on the
  signatures of the slots they read (``evaluate.compile_formula``).
* ``Engine.rules`` is the engine-rules version a record is written under, named in its
  ``record_start`` row (``"rules": 2``; absent means 1, the rules before temperature kinds,
  issue 17). Replay, rerun, recovery and ``verify`` apply the rules the record names, so an
  old record replays as it was written and a tampered one does not.
"""

from __future__ import annotations

import json as _json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np

from ..storage import (
    JsonlWriter,
    LockedError,
    StorageError,
    atomic_rename,
    dumps_line,
    home,
    is_locked,
    lock_if_free,
)
from . import dims as D
from . import records as R
from . import shown_units as SU
from .errors import (
    INCOMPATIBLE_DIMENSION,
    INVALID_ARGS,
    IO_ERROR,
    OPEN_RECORD_FOUND,
    OPEN_RECORD_NOT_FOUND,
    SLOT_NOT_FOUND,
    UNDEFINED_RESULT,
    UNKNOWN_ERROR,
    EngineError,
)
from .evaluate import BoundVars, Compiled, compile_formula
from .grammar import Formula, parse
from .kinds import RULES, below_absolute_zero, declare
from .values import (
    DELTA,
    OBJECT,
    DimOut,
    Form,
    Sig,
    Value,
    check_finite,
    check_get_dim,
    check_name,
    intern_sig,
    is_finite_fast,
    parse_tagged,
    render,
    short,
    stored,
    stored_json,
)

TOOLS = ("set", "get", "eval", "record_start", "record_message", "record_end")
#: A receipt: a JSON object, ``{"ok": True, ...}`` or ``{"ok": False, "code", "error"}``.
Receipt: TypeAlias = dict[str, Any]
#: what a call's body returns: its receipt and the trace row's content (``None``: it writes its own row)
_Outcome: TypeAlias = tuple[Receipt, dict[str, Any] | None]
#: formula text -> {signature ids -> Compiled}. Shared by every engine in the process: a
#: compiled check depends only on the formula and the (interned, immortal) signatures.
_CHECK_CACHE: dict[str, dict[tuple[int, ...], Compiled]] = {}
_NO_BOUND: BoundVars = {}


def _formula_json(text: str, _cache: dict[str, str] = {}) -> str:  # noqa: B006 - a deliberate memo
    j = _cache.get(text)
    if j is None:
        if len(_cache) > 4096:
            _cache.clear()
        j = _cache[text] = _json.dumps(text, ensure_ascii=False)
    return j


def default_home() -> Path:
    """``$DSH_NOTEBOOK_HOME/reckoner`` (``~/.dsh-notebook/reckoner``): for plain-Python use."""
    return home() / "reckoner"


class _Slot:
    __slots__ = ("_json", "rev", "value")

    def __init__(self, value: Value, rev: int) -> None:
        self.value = value
        self.rev = rev
        self._json: str | None = None

    @property
    def json(self) -> str:
        """The stored form as JSON text, computed once (a slot's value never changes)."""
        j = self._json
        if j is None:
            j = self._json = stored_json(self.value)
        return j


class _Open:
    __slots__ = ("id", "lookups", "opened", "seq", "title", "unwritten", "writer")

    def __init__(self, rid: str, title: str, writer: JsonlWriter, seq: int, opened: int | None,
                 lookups: int = 0) -> None:
        self.id = rid
        self.title = title
        self.writer = writer
        self.seq = seq
        self.opened = opened
        self.lookups = lookups  # ``search`` rows in this record (the lookup budget counts them)
        self.unwritten = 0  # calls refused with ENGINE_IO: their rows are not in the file


def _fail(code: str, message: str) -> EngineError:
    return EngineError(code, message)


class _NotWritten(EngineError):
    """A trace row the disk refused: the call is rolled back and answers ``ENGINE_IO``
    (deliberate difference 6; upstream counts the failure and answers ok)."""

    def __init__(self, tool: str, exc: BaseException) -> None:
        import errno as _errno

        what = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        code = _errno.errorcode.get(getattr(exc, "errno", None) or 0)
        super().__init__(
            IO_ERROR,
            f"the record's row for {tool} could not be written ({code + ': ' if code else ''}{what}); the call "
            "changed nothing: free space or fix the disk and repeat it (in a notebook, %reckon recover closes "
            "the record with what is on disk).",
        )


def _check_text(text: object, what: str) -> None:
    """A marker text must be a non-empty string of valid Unicode (it is written as UTF-8)."""
    if not isinstance(text, str) or not text.strip():
        raise _fail(INVALID_ARGS, f"{what} is {short(text)}; it must be a non-empty text.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise _fail(
            INVALID_ARGS,
            f"{what} contains U+{ord(bad):04X} at character {exc.start + 1}, a lone surrogate that is not valid "
            "Unicode; remove it or encode the text properly.",
        ) from None


class Engine:
    """A deterministic, units-checked calculator with a slot table and one open record.

    ``Engine(home)`` keeps its records in ``home`` (``open-record.jsonl``, ``records/``).
    With ``recover=True`` (upstream's behaviour) a record left open by a crash is resumed
    by replaying its accepted ``set`` and ``eval`` rows; with ``recover=False`` it is set
    aside into ``home/stale/`` (see :func:`close_set_aside`, :func:`discard_set_aside`).
    """

    def __init__(self, home: str | os.PathLike[str] | None = None, *, recover: bool = True) -> None:
        self.home = Path(home) if home is not None else default_home()
        self.home.mkdir(parents=True, exist_ok=True)
        self._init_state()
        if recover:
            self._recover()
        else:
            p = R.set_aside_open_record(self.home)
            if p is not None:
                self.set_aside.append(p)

    def _init_state(self) -> None:
        """The slot table, the (absent) open record and the counters every engine starts with."""
        self._slots: dict[str, _Slot] = {}
        self._mags: dict[str, Any] = {}
        self._sigs: dict[str, Sig] = {}
        self._open: _Open | None = None
        self._cache = _CHECK_CACHE
        self._lock = threading.RLock()
        #: paths of records set aside by this engine (recover=False, or found at record_start)
        self.set_aside: list[Path] = []
        #: id of a record resumed at start, if any
        self.recovered: str | None = None
        #: trace rows that could not be written; each made its call fail with ENGINE_IO and roll
        #: back (upstream swallows such failures and answers ok)
        self.trace_failures = 0
        self._undo: list[Any] | None = None  # (slot name, slot before) or a callable, during a call
        #: the engine-rules version of the records this engine writes (2: temperature kinds)
        self.rules = RULES

    def _clear_slots(self) -> None:
        self._slots.clear()
        self._mags.clear()
        self._sigs.clear()

    def _need_closed(self) -> None:
        """``ENGINE_OPEN_RECORD_FOUND`` while a record is open here."""
        if self._open is not None:
            raise _fail(
                OPEN_RECORD_FOUND,
                f"the record {self._open.title!r} ({self._open.id}) is still open; close it with record_end first.",
            )

    # ------------------------------------------------------------ properties

    @property
    def open_record(self) -> dict[str, Any] | None:
        """``{"id", "title", "path", "opened"}`` of the open record, or ``None``."""
        o = self._open
        if o is None:
            return None
        return {"id": o.id, "title": o.title, "path": str(self.home / R.OPEN_FILE), "opened": o.opened}

    def slots(self) -> dict[str, tuple[Value, int]]:
        """A snapshot of the table: name -> (value, rev). Values are immutable."""
        with self._lock:
            return {n: (s.value, s.rev) for n, s in self._slots.items()}

    def slot(self, name: str) -> tuple[Value, int] | None:
        """One slot's ``(value, rev)``, or ``None`` when the table has no slot ``name``.

        The cheap read for one name: :meth:`slots` copies the whole table, which made a cell
        of n lines cost n copies (issue 23's corpus benchmark).
        """
        with self._lock:
            s = self._slots.get(name)
            return None if s is None else (s.value, s.rev)

    # ------------------------------------------------------------ boundary

    def _guard(self, tool: str, fn: Callable[..., _Outcome], *args: Any) -> Receipt:
        with self._lock:
            self._undo = []  # what _write and _delete replace, to roll the call back
            try:
                try:
                    receipt, content = fn(*args)
                    if content is not None:
                        self._trace(tool, True, content)
                except _NotWritten as exc:
                    self._roll_back()
                    return exc.receipt()
                except EngineError as exc:
                    self._roll_back()
                    return self._refused(tool, exc)
                except OSError as exc:  # the disk refused a file operation of the call itself
                    self._roll_back()
                    return _NotWritten(tool, exc).receipt()
                except Exception as exc:  # noqa: BLE001 - never let a fault escape: upstream's UNKNOWN_ERROR
                    self._roll_back()
                    return self._refused(tool, EngineError(UNKNOWN_ERROR, f"internal error: {type(exc).__name__}: {exc}"))
                return receipt
            finally:
                self._undo = None

    def _refused(self, tool: str, exc: EngineError) -> Receipt:
        """The failure receipt of a refused call, after its refused row is written (``ENGINE_IO``
        instead, naming both, when that row cannot be written)."""
        try:
            self._trace(tool, False, {"code": exc.code, "error": exc.message})
        except _NotWritten as io:
            return EngineError(IO_ERROR, f"{exc.code}: {exc.message} And {io.message}").receipt()
        return exc.receipt()

    def _roll_back(self) -> None:
        """Undo the slot writes and deletes of the call being guarded, newest first."""
        for entry in reversed(self._undo or []):
            if callable(entry):
                entry()
                continue
            name, slot = entry
            if slot is None:
                self._slots.pop(name, None)
                self._mags.pop(name, None)
                self._sigs.pop(name, None)
            else:  # a slot's value holds the interned signature _write stored beside it
                self._slots[name], self._mags[name], self._sigs[name] = slot, slot.value.mag, slot.value.sig
        if self._undo is not None:
            self._undo.clear()

    def _trace(self, tool: str, ok: bool, content: dict[str, Any]) -> None:
        """Append one trace row to the open record. Raises :class:`_NotWritten` (nothing kept:
        the writer cuts a partial line) when the disk refuses it."""
        o = self._open
        if o is None:
            return
        row = {"seq": o.seq + 1, "at": R.now_ms(), "tool": tool, "ok": ok, "content": content}
        try:
            o.writer.append(row)
        except (OSError, StorageError) as exc:
            self.trace_failures += 1
            o.unwritten += 1
            raise _NotWritten(tool, exc) from None
        o.seq += 1

    def _need_open(self) -> _Open:
        if self._open is None:
            raise _fail(
                OPEN_RECORD_NOT_FOUND,
                "no record is open; start one with record_start (in %%reckon every cell opens one).",
            )
        return self._open

    # ------------------------------------------------------------ the six calls

    def set(self, name: str, value: dict[str, Any] | None, unit: list[Any] | SU.Unit | None = None) -> Receipt:
        """Write (or with ``value=None`` delete) a slot.

        ``value`` is a tagged value (see :func:`values.parse_tagged`). Receipt:
        ``{"ok": True, "name", "rev", "value"}`` with the stored value (``dim`` as 7
        integers); delete: ``{"ok": True, "name", "rev": None, "value": None}``.
        ``unit`` (engine rules 3, issue 18; not a tool argument): the display unit the value was
        written in, ``[[symbol, exponent, factor, vector], ...]`` or a :data:`.shown_units.Unit`, of
        the value's vector; recorded in the row as ``unit``. A malformed one is ``ENGINE_INVALID_ARGS``.
        """
        return self._guard("set", self._set, name, value, unit)

    def _set(self, name: str, value: dict[str, Any] | None, unit: list[Any] | None = None) -> _Outcome:
        self._need_open()
        check_name(name, "slot name")
        if value is None:
            if unit is not None:
                raise _fail(INVALID_ARGS, "a deleted slot has no unit; leave unit out.")
            self._delete(name)
            return {"ok": True, "name": name, "rev": None, "value": None}, {"name": name, "value": None}
        v = parse_tagged(value, self.rules >= 2)
        shown = self._display_unit(unit, v)
        self._write(name, v)
        rev = self._slots[name].rev
        out = stored(v)
        content: dict[str, Any] = {"name": name, "value": out}
        if shown is not None:
            content["unit"] = SU.to_json(shown)
        return {"ok": True, "name": name, "rev": rev, "value": out}, content

    def _display_unit(self, unit: object, v: Value) -> SU.Unit | None:
        """A display unit for *v* (row form or :data:`.shown_units.Unit`), checked (engine rules 3),
        or None."""
        if unit is None:
            return None
        if self.rules < 3:
            raise _fail(INVALID_ARGS, f"this record was started under engine rules {self.rules}, which record no "
                                      "display units; leave unit out, or start a new record.")
        if v.sig.kind == "object":
            raise _fail(INVALID_ARGS, "an object has no display unit of its own; leave unit out.")
        return SU.check(unit, v.sig.dim, lambda m: _fail(INVALID_ARGS, m))

    def get(self, name: str, form: Form | None = None, digits: int | None = None,
            dim: DimOut | None = None, unit: list[Any] | SU.Unit | None = None) -> Receipt:
        """Read a slot: ``{"ok": True, "name", "value"}``.

        ``form``: ``"rect"`` or ``"polar"`` (radians); ``digits``: significant digits
        (rounded half toward +inf, never padded); ``dim``: a table name (values mapped out
        of SI through its affine map, e.g. ``degC``) or 7 integers (checked, not converted).
        A mismatched ``dim`` is ``ENGINE_INCOMPATIBLE_DIMENSION``. ``unit`` (engine rules 3, not a
        tool argument): the display unit the value is shown in, recorded in the row (see :meth:`set`).
        """
        return self._guard("get", self._get, name, form, digits, dim, unit)

    def _get(self, name: str, form: Form | None, digits: int | None, dim: DimOut | None,
             unit: list[Any] | None = None) -> _Outcome:
        self._need_open()
        check_name(name, "slot name")
        slot = self._slots.get(name)
        if slot is None:
            raise _fail(SLOT_NOT_FOUND, f"there is no slot {name!r}; the slots are {self._names()}.")
        if form not in (None, "rect", "polar"):
            raise _fail(INVALID_ARGS, f"form {short(form)} is not a rendering; use 'rect', 'polar' or leave it out.")
        if digits is not None and (isinstance(digits, bool) or not isinstance(digits, int) or digits < 1):
            raise _fail(INVALID_ARGS, f"digits {short(digits)} is not a positive integer; give e.g. 4.")
        if dim is not None:
            target = check_get_dim(slot.value, dim)
            out = render(slot.value, form, digits, "as", target)
        else:
            out = render(slot.value, form, digits, "name")
        shown = self._display_unit(unit, slot.value)
        content: dict[str, Any] = {"name": name, "value": out}
        if shown is not None:
            content["unit"] = SU.to_json(shown)
            if isinstance(out, dict) and "dim" in out:  # beside a display unit, the vector itself (not its name)
                out["dim"] = [int(x) for x in slot.value.sig.dim]
        return {"ok": True, "name": name, "value": out}, content

    def eval(self, formula: str, target: str | None, kind: str | None = None, scale: str | None = None,
             unit: list[Any] | SU.Unit | Callable[[Value], Any] | None = None) -> Receipt:
        """Evaluate ``formula`` and write the result into slot ``target``: ``{"ok": True, "target", "rev"}``.

        ``kind`` (``"point"`` with ``scale`` ``"degC"``/``"degF"``/``"K"``, or ``"difference"``)
        declares a temperature result's kind (issue 17): a temperature computed without one
        (``@p/(@rho*@R)``) becomes that kind; a result of another kind, or not a temperature, is
        refused. The row names the declared kind, and replay applies it. ``unit`` (engine rules 3,
        not a tool argument): the result's display unit, recorded in the row (see :meth:`set`), or a
        function of the computed :class:`Value` returning it (or None), called before anything is
        written.

        The value is not returned (read it with :meth:`get`). Refusals: the grammar codes,
        ``ENGINE_SLOT_NOT_FOUND``, ``ENGINE_INCOMPATIBLE_DIMENSION`` (including a
        fractional vector into a slot), ``ENGINE_UNDEFINED_RESULT`` (including a
        non-finite result: deliberate difference 3), ``ENGINE_INVALID_ARGS`` (a formula that is not a
        string, no target), and the others of ``ERROR_CODES``.
        """
        return self._guard("eval", self._eval, formula, target, kind, scale, unit)

    def _eval(self, formula: str, target: str | None, kind: str | None = None, scale: str | None = None,
              unit: Any = None) -> _Outcome:
        o = self._need_open()
        if type(formula) is not str:
            raise _fail(INVALID_ARGS, f"formula is {short(formula)}; it must be a string holding one expression.")
        if target is None:
            raise _fail(INVALID_ARGS, "target is missing; eval writes its result into the slot named by target.")
        if type(target) is not str or target not in self._slots:  # an unhashable target must not reach the dict
            check_name(target, "target")
        value, f = self.evaluate(formula)
        declared = ""
        if kind is not None or scale is not None:
            if self.rules < 2:  # a record started before kinds continues without them: it replays as written
                raise _fail(INVALID_ARGS, f"this record was started under engine rules {self.rules}, which have no "
                                          "temperature kinds; leave kind and scale out, or start a new record.")
            value = declare(value, kind, scale)
            self._check_point(value, formula)
            declared = ',"kind":' + _json.dumps(kind) + (',"scale":' + _json.dumps(scale) if scale is not None else "")
        if callable(unit):  # the front end's display unit for the value computed here (issue 18)
            unit = unit(value)
        if unit is not None:
            shown = self._display_unit(unit, value)
            if shown:
                declared += ',"unit":' + SU.row_json(shown)
        slots = self._slots
        vars_json = ",".join(['"' + n + '":' + slots[n].json for n in f.slots])  # values read, before the write
        result_json = stored_json(value)  # anything that can fail happens before the write
        self._write(target, value)
        slot = slots[target]
        slot._json = result_json
        rev = slot.rev
        line = (
            '{"seq":' + str(o.seq + 1) + ',"at":' + str(R.now_ms()) + ',"tool":"eval","ok":true,"content":{"formula":'
            + _formula_json(formula) + ',"target":"' + target + '"' + declared + ',"rev":' + str(rev) + ',"vars":{'
            + vars_json
            + '},"result":' + result_json + "}}\n"
        )
        try:
            o.writer.append_encoded(line.encode("utf-8"))
        except (OSError, StorageError) as exc:
            self.trace_failures += 1
            o.unwritten += 1
            raise _NotWritten("eval", exc) from None  # _guard rolls the write back
        o.seq += 1
        return {"ok": True, "target": target, "rev": rev}, None

    def evaluate(self, formula: str) -> tuple[Value, Formula]:
        """Evaluate without writing: returns ``(Value, Formula)``; raises :class:`EngineError`.

        This is the evaluation core used by :meth:`eval`, :func:`replay` and the benchmark:
        the parse cache, the dimension-check cache, the compiled closure, the finiteness
        check.
        """
        f = parse(formula)
        try:
            # constant sub-expressions are folded while compiling, so a domain fault can surface here too
            compiled = self._compiled(f)
        except (OverflowError, ZeroDivisionError, ValueError, FloatingPointError) as exc:
            raise _fail(UNDEFINED_RESULT, f"the formula has no finite value ({exc}).") from None
        try:
            if compiled.arrays:
                with np.errstate(all="ignore"):
                    mag = compiled.fn(self._mags, _NO_BOUND)
            else:
                mag = compiled.fn(self._mags, _NO_BOUND)
        except (OverflowError, ZeroDivisionError, ValueError, FloatingPointError) as exc:
            raise _fail(UNDEFINED_RESULT, f"the formula has no finite value ({exc}).") from None
        if type(mag) is not float:
            if isinstance(mag, np.generic):
                mag = mag.item()
            elif type(mag) is np.ndarray:
                mag.setflags(write=False)
        value = Value(mag, compiled.sig)
        if not is_finite_fast(mag):
            check_finite(value, f"the result of {formula!r}")
        self._check_point(value, formula)
        return value, f

    @staticmethod
    def _check_point(value: Value, formula: str) -> None:
        """A point (issue 17) is never below absolute zero."""
        temp, mag = value.sig.temp, value.mag
        if temp and temp != DELTA:
            low = float(np.min(np.real(mag))) if type(mag) is np.ndarray and mag.size else \
                (mag.real if type(mag) is complex else mag) if type(mag) is not np.ndarray else 0.0
            if low < 0:
                raise below_absolute_zero(low, temp, f"the result of {formula!r}")

    def _compiled(self, f: Formula) -> Compiled:
        sigs = self._sigs
        key = tuple(map(id, map(sigs.get, f.slots)))
        per = self._cache.get(f.text)
        if per is not None:
            c = per.get(key)
            if c is not None:
                return c
        c = compile_formula(f, sigs, self._mags)
        _check_integral(c.sig, f.text)
        c = Compiled(intern_sig(c.sig), c.fn, c.cacheable, c.arrays, c.roles)
        if c.cacheable:
            if per is None:
                if len(self._cache) > 4096:
                    self._cache.clear()
                per = self._cache[f.text] = {}
            per[key] = c
        return c

    def record_start(self, title: str, units: dict[str, Any] | None = None) -> Receipt:
        """Open a record titled ``title`` (non-empty string): ``{"ok": True}``.

        ``units`` (engine rules 3, issue 18; not a tool argument): the notebook's preferred display
        units, ``{quantity: [[symbol, exponent, factor, vector], ...]}`` (quantity names of
        :data:`.shown_units.QUANTITIES`), recorded in the start row so re-renders agree.

        ``ENGINE_OPEN_RECORD_FOUND`` when one is open here, or another engine (another
        kernel) holds this folder's open record.
        """
        return self._guard("record_start", self._record_start, title, units)

    def _record_start(self, title: str, units: dict[str, Any] | None = None) -> _Outcome:
        self._need_closed()
        _check_text(title, "the title of record_start")
        prefs = self._preferences(units)
        path = self.home / R.OPEN_FILE
        if path.exists():
            if is_locked(path):
                raise _fail(
                    OPEN_RECORD_FOUND,
                    f"another engine (another kernel or process) holds the open record in {self.home}; "
                    "close it there, or give this engine its own folder.",
                )
            moved = R.set_aside_open_record(self.home)
            if moved is not None:
                self.set_aside.append(moved)
        (self.home / R.RECORDS_DIR).mkdir(parents=True, exist_ok=True)
        for _attempt in range(3):
            try:
                writer = JsonlWriter(path)
            except LockedError:
                raise _fail(
                    OPEN_RECORD_FOUND,
                    f"another engine (another kernel or process) holds the open record in {self.home}; "
                    "close it there, or give this engine its own folder.",
                ) from None
            if os.path.getsize(path) == 0:
                break
            # An abandoned open record appeared between the check and the lock: set it aside.
            writer.close(fsync=False)
            moved = R.set_aside_open_record(self.home)
            if moved is not None:
                self.set_aside.append(moved)
        else:  # pragma: no cover - three abandoned files in a row
            raise _fail(OPEN_RECORD_FOUND, f"the open record in {self.home} keeps changing; try again.")
        # The id is chosen while this engine holds the lock, so two engines on one folder
        # can never pick the same id and overwrite each other's closed record.
        opened = R.now_ms()
        rid = R.new_record_id(self.home, opened)
        try:
            writer.append(R.HEADER)
        except (OSError, StorageError) as exc:
            self._drop_new_record(writer)
            raise _NotWritten("record_start", exc) from None
        self._open = _Open(rid, title, writer, 0, opened)
        if self._undo is not None:  # the start row may still fail: then the record was never opened
            self._undo.append(lambda: self._drop_new_record(writer))
        self._clear_slots()
        return {"ok": True}, self._start_content(title, rid, prefs)

    def _start_content(self, title: str, rid: str, prefs: dict[str, Any] | None = None) -> dict[str, Any]:
        """The record_start row: title, id, (from rules 2 on) the engine-rules version and (rules
        3) the preferred display units."""
        content: dict[str, Any] = {"title": title, "record": rid}
        if self.rules >= 2:
            content["rules"] = self.rules
        if prefs:
            content["units"] = prefs
        return content

    def _preferences(self, units: object) -> dict[str, Any] | None:
        """The preferred display units of record_start, checked: their row form, or None."""
        if units is None or units == {}:
            return None
        if self.rules < 3:
            raise _fail(INVALID_ARGS, f"this engine writes records under engine rules {self.rules}, which record no "
                                      "display units; leave units out.")
        if not isinstance(units, dict) or len(units) > 64:
            raise _fail(INVALID_ARGS, "units must be an object {quantity: unit} of at most 64 quantities.")
        out = {}
        for name, raw in units.items():
            if name not in SU.QUANTITIES:
                raise _fail(INVALID_ARGS, f"{short(name)} is not a quantity a display unit is preferred for; the "
                                          f"quantities are {', '.join(SU.QUANTITIES)}.")
            out[name] = SU.to_json(SU.check(raw, SU.QUANTITIES[name],
                                            lambda m, n=name: _fail(INVALID_ARGS, f"{n}: {m}")))  # type: ignore[misc]
        return out

    def _drop_new_record(self, writer: Any) -> None:
        """Undo a record_start whose header or start row the disk refused: the file (nothing
        but what this call wrote) is removed and its lock released."""
        self._open = None
        try:
            (self.home / R.OPEN_FILE).unlink()
        except OSError:
            pass  # best effort: an unremovable file is set aside by the next record_start
        writer.close(fsync=False)

    def record_message(self, text: str, hide: bool = False) -> Receipt:
        """Add an explanation to the open record; ``hide=True`` keeps it for the article
        writer only. ``{"ok": True}``."""
        return self._guard("record_message", self._record_message, text, hide)

    def _record_message(self, text: str, hide: bool) -> _Outcome:
        self._need_open()
        _check_text(text, "the text of record_message")
        if not isinstance(hide, bool):
            raise _fail(INVALID_ARGS, f"hide is {short(hide)}; it must be true or false.")
        content = {"text": text, "hide": True} if hide else {"text": text}
        return {"ok": True}, content

    def record_end(self, text: str | None = None) -> Receipt:
        """Close the open record (optional closing ``text``), fsync it, move it to
        ``records/<id>.jsonl`` and clear the table: ``{"ok": True}``."""
        with self._lock:
            receipt = self._guard("record_end", self._record_end_row, text)
            if receipt.get("ok"):
                try:
                    self._close_file()
                except OSError as exc:  # the end row is written; the file stays to be set aside and recovered
                    return EngineError(
                        IO_ERROR,
                        f"the record's closing row is written, but the record could not be made durable or moved "
                        f"into records/ ({type(exc).__name__}: {exc}); it is set aside when the next record starts "
                        "(in a notebook, %reckon recover closes it with what is on disk).",
                    ).receipt()
                except Exception as exc:  # noqa: BLE001 - the end row is on disk; the file stays to be set aside
                    return EngineError(
                        UNKNOWN_ERROR,
                        f"internal error: the record could not be moved into records/ ({type(exc).__name__}: {exc}); "
                        "it will be set aside when the next record starts.",
                    ).receipt()
            return receipt

    def _record_end_row(self, text: str | None) -> _Outcome:
        o = self._need_open()
        if text is not None and not isinstance(text, str):
            raise _fail(INVALID_ARGS, f"text is {short(text)}; the closing text must be a string or absent.")
        if o.unwritten:  # a record missing rows is never closed as if it were whole (issue 16)
            raise _fail(IO_ERROR, f"{o.unwritten} call(s) of this record were refused because their rows could not "
                                  "be written, so the record is not whole; it stays open (in a notebook it is set "
                                  "aside: %reckon recover closes it with what is on disk).")
        content: dict[str, Any] = {"record": o.id}
        if text is not None and text.strip():
            _check_text(text, "the closing text of record_end")
            content = {"text": text, "record": o.id}
        return {"ok": True}, content

    def _close_file(self) -> None:
        o = self._open
        assert o is not None  # called by record_end after its end row, with the record open
        self._open = None
        self._clear_slots()
        dest = self.home / R.RECORDS_DIR / f"{o.id}.jsonl"
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            # Renamed while the lock is still held: no other engine can see an unlocked
            # open-record.jsonl that is really being closed (and set it aside or append to it).
            o.writer.sync()
            if dest.exists():  # cannot happen while ids are chosen under the lock; never overwrite
                raise FileExistsError(f"a closed record {dest.name} already exists")
            atomic_rename(self.home / R.OPEN_FILE, dest, make_read_only=True, synced=True)  # synced just above
        finally:
            o.writer.close(fsync=False)
        self.last_closed = dest

    def refuse(self, tool: str, code: str, message: str) -> Receipt:
        """Record a refusal decided by a front end (a unit pint cannot read, a line the
        magic cannot parse): appends a refused trace row for ``tool`` when a record is open
        and returns the failure receipt. Changes no slot."""
        if tool not in TOOLS:
            raise ValueError(f"unknown tool {tool!r}")
        with self._lock:
            return self._refused(tool, EngineError(code, message))

    def record_lookup(self, fact: dict[str, Any]) -> Receipt:
        """Append one outside-lookup row ``{"seq", "at", "tool": "search", "ok", "content": fact}``
        to the open record (upstream-facts.md 3.13; written by :mod:`dsh_notebook.llm.search`).

        ``fact`` is the search fact (``question``, ``tier``, ``outcome``, ``candidates``,
        ``used``, ...); ``ok`` is ``fact["outcome"] == "answered"``. Returns ``{"ok": True,
        "seq"}``, or a failure receipt: ``ENGINE_OPEN_RECORD_NOT_FOUND`` when no record is open,
        ``ENGINE_INVALID_ARGS`` when ``fact`` is not a dict with a string ``outcome`` or is not
        strict JSON (NaN, infinities, non-JSON types). Nothing is written on failure. Lookup
        rows change no slot and are skipped by replay, rerun and recovery.
        """
        with self._lock:
            try:
                o = self._need_open()
                if not isinstance(fact, dict) or not isinstance(fact.get("outcome"), str):
                    raise _fail(INVALID_ARGS, f"the lookup fact is {short(fact)}; it must be an object with an "
                                              "'outcome' text.")
                try:
                    dumps_line(fact)
                except (StorageError, TypeError, ValueError) as exc:
                    raise _fail(INVALID_ARGS, f"the lookup fact is not strict JSON ({exc}); give plain "
                                              "strings, finite numbers, lists and objects.") from None
            except EngineError as exc:
                return exc.receipt()
            try:
                self._trace("search", fact["outcome"] == "answered", fact)
            except _NotWritten as exc:
                return exc.receipt()
            o.lookups += 1
            return {"ok": True, "seq": o.seq}

    def lookup_count(self) -> int:
        """How many ``search`` rows the open record holds (0 when none is open)."""
        with self._lock:
            return self._open.lookups if self._open is not None else 0

    def call(self, tool: str, args: dict[str, Any] | None) -> Receipt:
        """Run one JSON tool call (the model's entry point): ``tool`` is one of
        ``set, get, eval, record_start, record_message, record_end``; ``args`` the JSON
        object described by :data:`TOOL_SCHEMAS`. Returns the receipt."""
        spec = _ARG_SPEC.get(tool) if isinstance(tool, str) else None
        if spec is None:
            return EngineError(
                INVALID_ARGS, f"{short(tool)} is not a tool; the tools are {', '.join(TOOLS)}."
            ).receipt()
        if args is None:
            args = {}
        if not isinstance(args, dict):
            with self._lock:
                err = EngineError(INVALID_ARGS, f"the arguments of {tool} are {short(args)}; give a JSON object.")
                return self._refused(tool, err)
        required, optional = spec
        unknown = [k for k in args if k not in required and k not in optional]
        missing = [k for k in required if k not in args]
        if unknown or missing:
            what = f"the unknown argument {unknown[0]!r}" if unknown else f"no {missing[0]!r}"
            with self._lock:
                err = EngineError(
                    INVALID_ARGS,
                    f"{tool} was given {what}; it takes {', '.join(required + optional) or 'no arguments'}"
                    f"{' (required: ' + ', '.join(required) + ')' if required else ''}.",
                )
                return self._refused(tool, err)
        return getattr(self, tool)(**args)

    # ------------------------------------------------------------ internals

    def _names(self) -> str:
        return ", ".join(sorted(self._slots)) or "(none)"

    def _write(self, name: str, v: Value) -> None:
        old = self._slots.get(name)
        undo = self._undo
        if undo is not None:
            undo.append((name, old))
        rev = old.rev + 1 if old is not None else 1
        if isinstance(v.mag, np.ndarray) and v.mag.flags.writeable:
            v.mag.setflags(write=False)
        sig = intern_sig(v.sig)
        if sig is not v.sig:
            v = Value(v.mag, sig)
        self._slots[name] = _Slot(v, rev)
        self._mags[name] = v.mag
        self._sigs[name] = sig

    def _delete(self, name: str) -> None:
        if self._undo is not None and name in self._slots:
            self._undo.append((name, self._slots[name]))
        self._slots.pop(name, None)
        self._mags.pop(name, None)
        self._sigs.pop(name, None)

    def _recover(self) -> None:
        """Resume an open record left by a crash (upstream's recovery by replay).

        The file's lock is taken first, so the record cannot be closed or set aside by
        another engine while it is read and replayed."""
        path = self.home / R.OPEN_FILE
        if not path.exists():
            return
        if not os.access(path, os.W_OK) or not os.stat(path).st_mode & 0o200:
            # read-only: an engine stopped between making it read-only and moving it
            with lock_if_free(path) as free:
                if not free:
                    return
                try:
                    rec = R.read_record(path)
                except (R.UnreadableRecord, OSError):
                    rec = None
                if rec is not None and rec.closed:
                    try:
                        self.last_closed = R.finish_close(self.home, path, rec.id)
                    except FileExistsError:
                        pass  # the next record_start sets it aside
                    return
                os.chmod(path, 0o644)  # not closed: resumed below like any open record
        try:
            writer = JsonlWriter(path)
        except LockedError:  # a live engine owns it
            return
        try:
            rec = R.read_record(path)
        except (R.UnreadableRecord, FileNotFoundError):
            if path.exists() and path.stat().st_size == 0:
                path.unlink()  # it vanished before the lock was ours and opening re-created it empty
                writer.close(fsync=False)
            else:
                writer.close(fsync=False)
                R.set_aside_open_record(self.home)  # moves it to unreadable/
            return
        if rec.closed:  # it holds its closing row: finish the close, never append after it
            writer.close(fsync=False)
            try:
                self.last_closed = R.finish_close(self.home, path, rec.id)
            except FileExistsError:
                R.set_aside_open_record(self.home)
            return
        self.rules = rec.rules  # an open record continues under the rules it was started with
        kinds = rec.rules >= 2
        for row in rec.rows:
            if not row.get("ok"):
                continue
            c = row.get("content") or {}
            try:
                if row.get("tool") == "set":
                    if c.get("value") is None:
                        self._delete(c["name"])
                    else:
                        self._write(c["name"], parse_tagged(c["value"], kinds))
                elif row.get("tool") == "eval":
                    self._write(c["target"], parse_tagged(c["result"], kinds))
            except (EngineError, KeyError, TypeError):
                continue
        seqs: list[int] = [r["seq"] for r in rec.rows if isinstance(r.get("seq"), int)]
        lookups = sum(1 for r in rec.rows if r.get("tool") == "search")
        self._open = _Open(rec.id, rec.title, writer, max(seqs or [0]), rec.opened, lookups)
        self.recovered = rec.id

    def close(self) -> None:
        """Release the open record's lock without closing the record (it stays open on
        disk, to be resumed or set aside by the next engine)."""
        with self._lock:
            if self._open is not None:
                try:
                    self._open.writer.close(fsync=True)
                except OSError:  # a disk that cannot fsync: still release the file and its lock
                    self._open.writer.close(fsync=False)
                self._open = None
                self._clear_slots()


def _check_integral(sig: Sig, formula: str, path: str = "") -> None:
    if sig.kind == OBJECT:
        for n, s in sig.fields:
            _check_integral(s, formula, f"{path}.{n}")
        return
    if D.is_integral(sig.dim) and any(not -D.MAX_EXPONENT <= x <= D.MAX_EXPONENT for x in sig.dim):
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"the result of {formula!r} has the vector {D.fmt(sig.dim)}, with an exponent beyond +-{D.MAX_EXPONENT}; "
            "no physical quantity has it: check the powers in the formula.",
        )
    if not D.is_integral(sig.dim):
        where = f" (field {path[1:]})" if path else ""
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"the result of {formula!r}{where} has the fractional vector {D.fmt(sig.dim)}; only whole-number "
            "vectors can be written into a slot: check the powers and roots in the formula.",
        )


_ARG_SPEC: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "set": (("name", "value"), ()),
    "get": (("name",), ("form", "digits", "dim")),
    "eval": (("formula", "target"), ("kind", "scale")),
    "record_start": (("title",), ()),
    "record_message": (("text",), ("hide",)),
    "record_end": ((), ("text",)),
}


def replay(path: str | os.PathLike[str] | R.Record) -> dict[str, Any]:
    """Re-evaluate every accepted ``eval`` row of a record from its recorded inputs.

    ``path`` is a record file or an already read :class:`records.Record`. Returns
    ``{"record", "title", "checked", "differences": [...]}``; each difference is
    ``{"seq", "formula", "target", "recorded", "replayed"}`` (``replayed`` is the new
    stored value, or ``{"code", "error"}`` when the formula is now refused). Raises
    :class:`records.UnreadableRecord` for a file that fails the version gate.
    """
    rec = path if isinstance(path, R.Record) else R.read_record(path)
    diffs: list[dict[str, Any]] = []
    checked = 0
    scratch = _Scratch(rec.rules)  # one engine per record: its check cache serves every row
    kinds = rec.rules >= 2
    for row in rec.steps:
        c = row.get("content") or {}
        checked += 1
        scratch._slots.clear()
        scratch._mags.clear()
        scratch._sigs.clear()
        try:
            for name, val in (c.get("vars") or {}).items():
                scratch._write(check_name(name, "slot name"), parse_tagged(val, kinds))
            formula = c.get("formula")
            value, _ = scratch.evaluate(formula if isinstance(formula, str) else "")
            if "kind" in c or "scale" in c:  # the kind the eval declared (issue 17)
                value = declare(value, c.get("kind"), c.get("scale"))
                Engine._check_point(value, formula if isinstance(formula, str) else "")
            got = stored(value)
        except EngineError as exc:
            got = {"code": exc.code, "error": exc.message}
        except Exception as exc:  # noqa: BLE001 - a malformed row: report it as a difference, never crash
            got = {"code": UNKNOWN_ERROR, "error": f"internal error: {type(exc).__name__}: {exc}"}
        if got != c.get("result"):
            diffs.append({"seq": row.get("seq"), "formula": c.get("formula"), "target": c.get("target"),
                          "recorded": c.get("result"), "replayed": got})
    return {"record": rec.id, "title": rec.title, "checked": checked, "differences": diffs}


def rerun(path: str | os.PathLike[str] | R.Record) -> dict[str, Any]:
    """Re-execute a whole record in a fresh engine, row by row, as it was written.

    Unlike :func:`replay` (each ``eval`` against the inputs stored in its own row), the
    slots here come from the record's own ``set`` rows and earlier results, so a tampered
    input, a deleted step or a changed unit shows up. Returns ``{"record", "title",
    "checked", "differences"}``; a difference is ``{"seq", "what", "recorded", "rerun"}``.
    """
    rec = path if isinstance(path, R.Record) else R.read_record(path)
    eng = _Scratch(rec.rules)
    kinds = rec.rules >= 2
    diffs: list[dict[str, Any]] = []
    checked = 0
    for row in rec.rows:
        c = row.get("content") or {}
        tool, ok, seq = row.get("tool"), row.get("ok"), row.get("seq")
        try:
            if tool == "set" and ok:
                name = check_name(c.get("name"), "slot name")
                if c.get("value") is None:
                    eng._delete(name)
                else:
                    eng._write(name, parse_tagged(c["value"], kinds))
            elif tool == "eval" and ok:
                checked += 1
                formula, target = c.get("formula"), c.get("target")
                for name, recorded in (c.get("vars") or {}).items():
                    slot = eng._slots.get(name)
                    have = stored(slot.value) if slot is not None else None
                    if have != recorded:
                        diffs.append({"seq": seq, "what": f"input @{name} of {target} = {formula}",
                                      "recorded": recorded, "rerun": have if have is not None else
                                      {"code": "ENGINE_SLOT_NOT_FOUND", "error": f"no slot {name} at this point"}})
                try:
                    value, _ = eng.evaluate(formula if isinstance(formula, str) else "")
                    if "kind" in c or "scale" in c:  # the kind the eval declared (issue 17)
                        value = declare(value, c.get("kind"), c.get("scale"))
                        Engine._check_point(value, formula if isinstance(formula, str) else "")
                    got = stored(value)
                except EngineError as exc:
                    got = {"code": exc.code, "error": exc.message}
                if got != c.get("result"):
                    diffs.append({"seq": seq, "what": f"{target} = {formula}", "recorded": c.get("result"),
                                  "rerun": got})
                eng._write(check_name(target, "target"), parse_tagged(c["result"], kinds))  # continue as recorded
        except (EngineError, KeyError, TypeError) as exc:
            diffs.append({"seq": seq, "what": f"row {seq} ({tool})", "recorded": c,
                          "rerun": {"code": getattr(exc, "code", UNKNOWN_ERROR), "error": str(exc)}})
    return {"record": rec.id, "title": rec.title, "checked": checked, "differences": diffs}


class _Scratch(Engine):
    """A record-less engine for replay: slots only, no folder, no trace."""

    def __init__(self, rules: int = RULES) -> None:  # deliberately skips Engine.__init__ (no folder)
        self._init_state()
        self.rules = rules


class _MemoryWriter:
    """A record file held in memory: its lines, byte for byte as :class:`JsonlWriter` would
    write them (each through :func:`dumps_line`)."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def append(self, obj: Any) -> bytes:
        line = dumps_line(obj)
        self.lines.append(line)
        return line

    def append_encoded(self, line: bytes) -> bytes:
        self.lines.append(line)
        return line

    def sync(self) -> None:
        return None

    def close(self, fsync: bool = True) -> None:
        return None


class MemoryEngine(Engine):
    """An engine whose records stay in memory: the same tools, checks and trace rows as
    :class:`Engine`, with no folder, lock or fsync. ``verify`` runs a ``%%reckon`` cell's lines
    again in one and compares the rows with the record on disk (issue 15, check 7).

    ``lines(record_id)`` gives a record's lines (header excluded, each ending in ``\\n``) while
    it is open or after it closed; ids are ``memory-1``, ``memory-2``, ...
    """

    def __init__(self, rules: int = RULES) -> None:  # deliberately skips Engine.__init__ (no folder)
        self.home = Path("<memory>")
        self._init_state()
        self.rules = rules
        self._records: dict[str, list[bytes]] = {}

    def lines(self, record_id: str) -> list[bytes]:
        """The lines of record *record_id* after its header; ``KeyError`` if this engine has none."""
        return self._records[record_id][1:]

    def _record_start(self, title: str, units: dict[str, Any] | None = None) -> _Outcome:
        self._need_closed()
        _check_text(title, "the title of record_start")
        prefs = self._preferences(units)
        rid = f"memory-{len(self._records) + 1}"
        writer = _MemoryWriter()
        writer.append(R.HEADER)
        self._records[rid] = writer.lines
        self._open = _Open(rid, title, writer, 0, R.now_ms())  # type: ignore[arg-type]
        self._clear_slots()
        return {"ok": True}, self._start_content(title, rid, prefs)

    def _close_file(self) -> None:
        o = self._open
        assert o is not None
        self._open = None
        self._clear_slots()
        self.last_closed = self.home / R.RECORDS_DIR / f"{o.id}.jsonl"
