"""``%%reckon``: the line grammar and the cell runner, without IPython (spec: reckoner.md
section 2).

* A cell is one record: ``record_start`` with the magic line's title, one engine call per
  line, ``record_end`` at ``end`` or at the cell's end (unless ``--continue``).
* The first word decides the line form; ``given``, ``show``, ``note``, ``note!``,
  ``delete`` and ``end`` are keywords unless the next token is ``=``. ``#`` starts a
  comment only as a line's first non-blank character. CRLF and LF are the same.
* A line the magic cannot turn into an engine call (a unit pint cannot read, bad syntax)
  is still recorded, as a refused ``set`` (``given``) or ``get`` (``show``) row.
* On the first refused line the cell stops, the record closes with the refusal in it,
  and :class:`CellOutcome.refused` says which line, so the magic can raise;
  ``CellOutcome.not_run`` lists the later lines, which were not run.
* A line whose first word is no keyword but close to one (``givn``, ``Show``) is refused
  with a did-you-mean (issue 17).
* Temperatures (issue 17): a ``given`` in degC/degF is a point, in delta_degC a difference
  (the kind goes to the engine with the value); ``show X in degF`` of a difference and
  ``show X in delta_degF`` of a point are refused. ``NAME = FORMULA in UNIT`` declares the
  result's unit: a result of another dimension (or kind) is refused before anything is
  written, and the result shows in UNIT; a temperature declared ``in degC`` is stored as a
  point, ``in delta_degC`` as a difference (the eval declares the kind).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import NotebookError
from ..reckoner import Engine
from ..reckoner import records as R
from ..reckoner import shown_units as SU
from ..reckoner.display import value_text
from ..reckoner.errors import EngineError
from ..reckoner.evaluate import compile_formula
from ..reckoner.grammar import Formula, parse
from ..reckoner.values import DELTA, POINT_SCALES, Value, kind_keys, parse_tagged
from . import units as U

NAME_RE = r"[A-Za-z_][A-Za-z0-9_]*"
KEYWORDS = ("given", "show", "note", "note!", "delete", "end")
DEFAULT_DIGITS = 5
DEFAULT_TITLE = "Untitled calculation"
USAGE = """%%reckon [--continue] [--quiet] [--digits N] [--export NAME] [TITLE]
given NAME = VALUE [UNIT]        a number, 3+4j, [1, 2, 3], 3.3006×10⁻⁶ or py:VAR, with a pint unit
NAME = FORMULA                   evaluate, e.g.  R = @rho*@L/@A
NAME = FORMULA in UNIT           evaluate; the result must have UNIT's dimension and shows in UNIT
show NAME [in UNIT] [digits N]   read a slot, optionally in a unit of the same dimension
note TEXT  |  note! TEXT         an explanation (note! is for the article writer only)
delete NAME                      remove a slot
end [TEXT]                       close the record with a closing text
# comment                        not recorded"""


class ReckonUsageError(NotebookError, ValueError):
    """The cell cannot start: bad options, lines after ``end`` (nothing is written)."""

    code = "RECKON_USAGE"


@dataclass
class Options:
    title: str = DEFAULT_TITLE
    cont: bool = False
    quiet: bool = False
    digits: int = DEFAULT_DIGITS
    export: str = "_reckon"


def parse_options(line: str) -> Options:
    """Read the magic line: options anywhere, the remaining words are the title."""
    opts = Options()
    words = line.split()
    title: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--continue":
            opts.cont = True
        elif w == "--quiet":
            opts.quiet = True
        elif w in ("--digits", "--export"):
            if i + 1 >= len(words):
                raise ReckonUsageError(f"{w} needs a value, e.g. {w} {'4' if w == '--digits' else 'calc'}")
            v = words[i + 1]
            i += 1
            if w == "--digits":
                if not (v.isascii() and v.isdigit()) or not 1 <= int(v) <= 17:
                    raise ReckonUsageError(f"--digits {v}: give a whole number of significant digits from 1 to 17")
                opts.digits = int(v)
            else:
                import builtins
                import keyword

                if not re.fullmatch(NAME_RE, v) or keyword.iskeyword(v) or hasattr(builtins, v):
                    raise ReckonUsageError(f"--export {v}: give a Python variable name that is not a keyword or a builtin")
                opts.export = v
        elif w.startswith(("--digits=", "--export=")):
            k, _, v = w.partition("=")
            words[i : i + 1] = [k, v]
            continue
        elif w.startswith("--"):
            raise ReckonUsageError(f"unknown option {w}; the options are --continue, --quiet, --digits N, --export NAME")
        else:
            title.append(w)
        i += 1
    if title:
        opts.title = " ".join(title)
    return opts


# --------------------------------------------------------------------------- lines


@dataclass
class Line:
    lineno: int  # 1-based line of the cell body
    source: str
    form: str  # given | eval | show | note | note! | delete | end | unknown
    name: str | None = None
    rest: str = ""  # value+unit for given, formula for eval, text for notes/end, unit for show
    unit: str | None = None
    digits: int | None = None


def split_lines(cell: str) -> list[Line]:
    """The cell's meaningful lines, classified (comments and blanks dropped)."""
    text = cell.replace("\r\n", "\n").replace("\r", "\n")
    out = []
    for i, raw in enumerate(text.split("\n"), start=1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        out.append(classify(i, s))
    return out


def classify(lineno: int, s: str) -> Line:
    first_tok = re.match(r"[^\s=]+", s)
    word = first_tok.group(0) if first_tok else ""
    after = s[len(word):].lstrip()
    if word in KEYWORDS and not after.startswith("="):
        tail = after
        if word == "given":
            m = re.fullmatch(rf"({NAME_RE}|\S+?)\s*=\s*(.*)", tail, re.DOTALL)
            if not m:
                return Line(lineno, s, "given", None, tail)
            return Line(lineno, s, "given", m.group(1), m.group(2).strip())
        if word == "show":
            m = re.fullmatch(r"(\S+)(?:\s+in\s+(.+?))?(?:\s+digits\s+(\S+))?", tail)
            if not m:
                return Line(lineno, s, "show", None, tail)
            digits = None
            if m.group(3) is not None:
                digits = int(m.group(3)) if re.fullmatch(r"[0-9]{1,3}", m.group(3)) else -1
            return Line(lineno, s, "show", m.group(1), "", m.group(2), digits)
        if word == "delete":
            return Line(lineno, s, "delete", tail.strip() or None)
        return Line(lineno, s, word, None, tail)
    m = re.fullmatch(r"([^\s=]+)\s*=\s*(.*)", s, re.DOTALL)
    if m:
        return Line(lineno, s, "eval", m.group(1), m.group(2).strip())
    return Line(lineno, s, "unknown", None, s)


# --------------------------------------------------------------------------- values


class GivenValueError(NotebookError, ValueError):
    """A ``given`` value the magic cannot read into an engine value (not a finite number, a
    ragged array, a missing ``py:`` variable...); ``code`` is the engine error code to record it
    under."""

    code = "ENGINE_INVALID_ARGS"  # the class default; every instance names its own code

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def _number(tok: str, name: str) -> float | complex:
    """A ``given`` value or an array element: a number as ``%%reckon`` displays it or as people
    type it (:func:`units.read_number`: ``2.05``, ``1.68e-8``, ``3.3006×10⁻⁶``, ``3.3006*10^-6``,
    ``3+4j``, ``1.2×10³+4.5×10⁻²j``). Raises :class:`GivenValueError` for NaN, infinity, a
    number that overflows or is too small for a double, or text that is no number."""
    tok = tok.replace("\u2212", "-")  # a typographic minus sign reads as '-'
    low = tok.lower().lstrip("+-")
    if low in ("nan", "inf", "infinity"):
        raise GivenValueError(
            "ENGINE_INVALID_ARGS",
            f"{name} = {tok}: {tok} is not a finite number; the engine stores finite numbers only.",
        )
    number = U.read_number(tok)
    if number is not None:
        x = number.value
        if not (math.isfinite(x.real) and math.isfinite(x.imag)):
            raise GivenValueError("ENGINE_INVALID_ARGS", f"{name} = {tok}: the number overflows to infinity.")
        if number.underflow and isinstance(x, complex):
            raise GivenValueError("ENGINE_INVALID_ARGS", f"{name} = {tok}: a part of the number is too small for a "
                                                     "double-precision number (below about 1e-308); rescale it.")
        if number.underflow:
            raise GivenValueError("ENGINE_INVALID_ARGS", f"{name} = {tok}: the number is too small for a double-precision "
                                                     "number (below about 1e-308) and would be stored as 0; rescale it.")
        return x
    hint = ""
    if re.fullmatch(r"[+-]?[0-9.]*[×xX*·⋅]10", tok):
        hint = " (a power of ten needs its exponent: 3×10⁻⁶, 3×10^-6 or 3e-6)"
    elif re.match(r"[×xX*·⋅]10", tok):
        hint = " (a power of ten needs a number before it: 1×10⁻⁶)"
    raise GivenValueError(
        "ENGINE_INVALID_ARGS",
        f"{name} = {tok}...: {tok!r} is not a number{hint}; write a number (2.05, 1.68e-8), a complex number "
        "without spaces (3+4j), an array ([1, 2, 3]) or py:VAR, then the unit.",
    )


def _array_literal(text: str, name: str) -> tuple[list[Any], str]:
    """``[1, 2, [3, 4j]]`` -> (nested list, rest of line). No eval: a small parser."""
    pos = 0

    def skip() -> None:
        nonlocal pos
        while pos < len(text) and text[pos] in " \t":
            pos += 1

    def item() -> Any:
        nonlocal pos
        skip()
        if pos < len(text) and text[pos] == "[":
            pos += 1
            items: list[Any] = []
            skip()
            if pos < len(text) and text[pos] == "]":
                pos += 1
                return items
            while True:
                items.append(item())
                skip()
                if pos < len(text) and text[pos] == ",":
                    pos += 1
                    continue
                if pos < len(text) and text[pos] == "]":
                    pos += 1
                    return items
                raise GivenValueError(
                    "ENGINE_INVALID_ARGS",
                    f"{name} = {text.strip()}: the array is not closed or an element is malformed at "
                    f"character {pos + 1}; write e.g. [1, 2, 3].",
                )
        m = re.compile(r"[^\s,\[\]]+").match(text, pos)
        if not m:
            raise GivenValueError("ENGINE_INVALID_ARGS", f"{name} = {text.strip()}: an array element is missing at character {pos + 1}.")
        pos = m.end()
        return _number(m.group(0), name)

    value = item()
    return value, text[pos:].strip()


def _tagged(mag: Any, dims: Sequence[int], temp: str = "") -> dict[str, Any]:
    dim = list(dims)
    kind = kind_keys(temp)
    if isinstance(mag, np.ndarray):
        def conv(x: Any) -> Any:
            if isinstance(x, list):
                return [conv(e) for e in x]
            if isinstance(x, complex):
                return {"re": x.real, "im": x.imag}
            return x
        return {"array": conv(mag.tolist()), "dim": dim, **kind}
    if isinstance(mag, complex):
        return {"re": mag.real, "im": mag.imag, "dim": dim, **kind}
    return {"num": float(mag), "dim": dim, **kind}


@dataclass
class Given:
    """What a ``given`` line read: SI magnitude, vector, the unit as written, and the display unit
    results compose from (``atoms``; ``None``: none, as for a temperature point)."""

    tagged: dict
    value_text: str
    unit: U.UnitInfo | None
    radians: int | None
    display: tuple | None = None  # (text, latex) for a py: Quantity, shown in its own unit
    atoms: SU.Unit | None = None

    @property
    def digits(self) -> int:
        """Significant digits as typed (``101.325`` -> 6, ``3.3006×10⁻⁶`` -> 5), so a display
        never drops one."""
        m = re.fullmatch(r"[+-]?(\d*)\.?(\d*)(?:(?:[eE]|[×xX*·⋅]10)[^jJ]*)?", self.value_text)
        if not m:
            return 0
        digits = (m.group(1) + m.group(2)).lstrip("0")
        return len(digits)


@dataclass(frozen=True)
class Recorded:
    """A ``py:`` value as its record holds it: ``tagged`` (the ``set`` row's SI value),
    ``display`` (the ``(text, latex)`` a pint Quantity was shown with, or None) and
    ``radians`` (the angle content of its unit)."""

    tagged: dict
    display: tuple[str, str] | None = None
    radians: int = 0
    unit: Any = None  # the set row's display unit (issue 18), as the row holds it


class RecordedValues(dict):
    """The values ``py:`` lines read when a cell runs again without its kernel (``verify``,
    issue 15 check 7): ``{slot name: [Recorded, ...]}`` in the order the lines run; each
    ``given NAME = py:...`` line takes the next one for NAME.

    ``refusals`` maps ``(cell, line number)`` to the refused row's content (``code``,
    ``error``) of a ``given``, ``show`` or unreadable line that a record written under older
    engine rules refused in the front end (a unit or number the magic could not read then,
    and may read now: issue 17); such a line is refused again as recorded. ``cell`` names the
    cell being run.
    """

    def __init__(self) -> None:
        super().__init__()
        self.refusals: dict[tuple[int, int], dict] = {}
        self.cell: int | None = None

    def held_refusal(self, ln: Line) -> dict | None:
        """The recorded refusal of line *ln* of the current cell, if the record's rules call for it."""
        return self.refusals.get((self.cell, ln.lineno)) if self.cell is not None else None

    def take(self, name: str, text: str) -> Recorded:
        queue = self.get(name) or []
        if not queue:
            raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name} = {text}: the record holds no value for this line.")
        return queue.pop(0)


def read_given(name: str, text: str, user_ns: dict, digits: int = DEFAULT_DIGITS) -> Given:
    """Turn ``VALUE [UNIT]`` into a tagged SI value. Raises ``GivenValueError`` or ``UnitError``.
    With :class:`RecordedValues` as *user_ns*, a ``py:`` line reads the value its record holds."""
    text = text.strip()
    if not text:
        raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name} = ...: the value is missing; write e.g. given {name} = 2.05 mm.")
    if text.startswith("py:"):
        m = re.match(rf"py:({NAME_RE}(?:\.{NAME_RE})*)", text)
        if not m:
            raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name} = {text}: py: must be followed by a Python variable name.")
        if isinstance(user_ns, RecordedValues):
            held = user_ns.take(name, text)
            rest = text[m.end():].strip()
            info = U.parse_unit(rest) if rest else None
            atoms = U.unit_atoms(rest) if rest else SU.from_json(held.unit)
            return Given(held.tagged, f"py:{m.group(1)}", info, info.radians if info else held.radians, held.display,
                         atoms)
        path = m.group(1).split(".")
        if path[0] not in user_ns:
            raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name} = {text}: there is no Python variable {path[0]!r} in the notebook.")
        obj = user_ns[path[0]]
        for attr in path[1:]:
            if attr.startswith("_") or not hasattr(obj, attr):
                raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name} = {text}: {m.group(1)!r} has no attribute {attr!r}.")
            obj = getattr(obj, attr)
        rest = text[m.end():].strip()
        return _from_python(name, obj, rest, m.group(1), digits)
    if text.startswith("["):
        nested, rest = _array_literal(text, name)
        value: np.ndarray | float | complex = _as_array(nested, name)
        value_text = text[: len(text) - len(rest)].strip() if rest else text
    else:
        # a power of ten as a typeset view shows it (3.3006 × 10⁻⁶) reads as the product prints it
        text = re.sub(r"(?<=[0-9.])\s*([×·])\s*10(?=\^|[⁻⁰¹²³⁴⁵⁶⁷⁸⁹])", r"\g<1>10", text)
        tok, _, rest = text.partition(" ")
        value = _number(tok, name)
        value_text = tok
        rest = rest.strip()
    info = U.parse_unit(rest)
    si = U.to_si(value, info)
    return Given(_tagged(si, info.dim, info.temp), value_text, info if rest else None, info.radians if rest else 0,
                 atoms=U.unit_atoms(rest))


def _as_array(nested: list[Any], name: str) -> np.ndarray:
    def shape(x: Any) -> tuple[int, ...]:
        if not isinstance(x, list):
            return ()
        subs = {shape(e) for e in x}
        if len(subs) > 1:
            raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name}: nested arrays must all have the same length.")
        return (len(x),) + (subs.pop() if subs else ())
    shape(nested)

    def check(x: Any) -> None:
        if isinstance(x, list):
            for e in x:
                check(e)
        elif isinstance(x, bool) or not isinstance(x, (int, float, complex)):
            raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name}: the array holds {x!r}, which is not a number.")
    check(nested)

    def has_c(x: Any) -> bool:
        return any(has_c(e) for e in x) if isinstance(x, list) else isinstance(x, complex)
    return np.array(nested, dtype=complex if has_c(nested) else float)


def _from_python(name: str, obj: Any, rest: str, var: str, digits: int = DEFAULT_DIGITS) -> Given:
    if hasattr(obj, "magnitude") and hasattr(obj, "units") and hasattr(obj, "dimensionality"):
        if rest:
            raise GivenValueError(
                "ENGINE_INVALID_ARGS",
                f"given {name} = py:{var} {rest}: {var} is a pint Quantity that already carries its unit; drop {rest!r}.",
            )
        info = U.parse_unit(str(obj.units))
        mag = obj.magnitude
        try:
            if isinstance(mag, np.ndarray) and mag.dtype.kind not in "iufc":
                raise TypeError(f"the array holds {mag.dtype} values")
            mag = np.asarray(mag, dtype=complex if np.iscomplexobj(mag) else float) if not np.isscalar(mag) else mag
            if isinstance(mag, (np.floating, np.integer)):
                mag = float(mag)
            if isinstance(mag, bool) or not isinstance(mag, (int, float, complex, np.ndarray)):
                raise TypeError(f"its magnitude is a {type(mag).__name__}")
            if isinstance(mag, int):
                mag = float(mag)
        except (OverflowError, TypeError, ValueError) as exc:
            raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name} = py:{var}: the value is not a finite number ({exc}).") from None
        _finite(mag, name, var)
        si = U.to_si(mag, info)
        display = None
        tagged = _tagged(si, info.dim, info.temp)
        if not isinstance(mag, np.ndarray):
            try:
                display = (f"{obj:~P}", f"{obj:~L}")
            except Exception:  # noqa: BLE001 - a Quantity from another library's registry without these formats
                display = None
            try:  # shown as the engine shows the value anyway (3 m, 20 °C): the engine's rendering, which
                # verify derives from the record alone (issue 17)
                if display is not None and display[0] == value_text(parse_tagged(tagged), digits):
                    display = None
            except EngineError:
                pass
        return Given(tagged, f"py:{var}", None, info.radians, display, U.unit_atoms(info.text))
    if isinstance(obj, bool) or not isinstance(obj, (int, float, complex, np.number, np.ndarray, list)):
        raise GivenValueError(
            "ENGINE_INVALID_ARGS",
            f"given {name} = py:{var}: {var} is a {type(obj).__name__}; give a number, a numpy array or a pint Quantity.",
        )
    try:
        if isinstance(obj, list):
            obj = _as_array(obj, name)
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind not in "iufc":
                raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name} = py:{var}: the array holds {obj.dtype} values; "
                                                         "give numbers (int, float or complex).")
            obj = obj.astype(complex if np.iscomplexobj(obj) else float)
        elif isinstance(obj, (np.integer, np.floating, np.complexfloating)):
            raw = obj
            obj = complex(obj) if np.iscomplexobj(obj) else float(obj)  # never drop an imaginary part
            if raw != 0 and obj == 0:
                raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name} = py:{var}: the value is too small for a "
                                                         "double-precision number and would be stored as 0.")
        elif isinstance(obj, np.generic):
            raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name} = py:{var}: {var} is a numpy "
                                                     f"{type(obj).__name__}, not a number.")
        if isinstance(obj, int):
            obj = float(obj)
    except (OverflowError, TypeError, ValueError) as exc:
        if isinstance(exc, GivenValueError):
            raise
        raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name} = py:{var}: the value is not a finite number ({exc}).") from None
    _finite(obj, name, var)
    info = U.parse_unit(rest)
    si = U.to_si(obj, info)
    return Given(_tagged(si, info.dim, info.temp), f"py:{var}", info if rest else None,
                 info.radians if rest else 0, atoms=U.unit_atoms(rest))


def _finite(mag: Any, name: str, var: str) -> None:
    ok = bool(np.all(np.isfinite(mag))) if isinstance(mag, np.ndarray) else (
        math.isfinite(mag.real) and math.isfinite(mag.imag) if isinstance(mag, complex) else math.isfinite(mag))
    if not ok:
        raise GivenValueError("ENGINE_INVALID_ARGS", f"given {name} = py:{var}: the value is not finite (NaN or infinity).")


# --------------------------------------------------------------------------- the run


@dataclass
class Step:
    """One line's outcome, with what the renderer needs."""

    line: Line
    tool: str
    receipt: dict
    given: Given | None = None
    inputs: dict = field(default_factory=dict)  # eval: slot -> Value read
    input_digits: dict = field(default_factory=dict)  # eval: slot -> digits as typed in its given line
    result: Value | None = None  # eval: the value written; show: the value read
    shown: Any = None  # show (and eval with a declared unit): magnitude in the display unit
    shown_unit: str | None = None
    formula: Any = None
    roles: dict = field(default_factory=dict)  # eval: @slot position -> "delta" / "kelvin" (how the working shows it)
    unit: SU.Unit | None = None  # the display unit of result (issue 18); None: SI, or a point's scale
    input_units: dict = field(default_factory=dict)  # eval: slot -> display unit of the value read

    @property
    def ok(self) -> bool:
        return bool(self.receipt.get("ok"))


@dataclass
class CellOutcome:
    title: str
    record_id: str | None
    path: Path | None
    status: str  # closed | open | refused
    steps: list[Step]
    slots: dict  # name -> Value, as they were when the record closed (or now, if open)
    digits: int
    notices: list[str] = field(default_factory=list)
    not_run: list[int] = field(default_factory=list)  # the cell's lines after a refused one (not run)

    @property
    def refused(self) -> Step | None:
        return next((s for s in self.steps if not s.ok), None)


@dataclass
class ReckonSession:
    """The kernel's reckoner state: its engine, what ``given`` lines were written in, and the
    display units of the open record (issue 18): ``units`` (slot -> display unit), ``known``
    (units the person wrote whole: givens, shows, declared units, in order) and ``prefs`` (the
    notebook's preferred units, ``%reckon units``; kept across records)."""

    engine: Engine
    given_units: dict = field(default_factory=dict)  # slot -> (UnitInfo | None, value_text, radians, digits)
    continuing: bool = False
    title: str | None = None
    units: dict = field(default_factory=dict)
    angles: dict = field(default_factory=dict)  # slot -> (radians, cycles) its units count (P01)
    raw: dict = field(default_factory=dict)  # slot -> its composition with angle units kept (P01)
    known: list = field(default_factory=list)
    prefs: SU.Preferences = field(default_factory=SU.Preferences)

    def learn(self, unit: SU.Unit | None) -> None:
        """A unit the person wrote whole in this record (not a point, not dimensionless)."""
        if unit and unit not in self.known:
            self.known.append(unit)

    def display_unit(self, name: str, v: Value) -> SU.Unit | None:
        """The unit slot *name* shows in: its own, or (written before display units, or by a tool
        call) its SI name; ``None`` for a point (its scale) and an object."""
        if v.sig.kind == "object" or v.sig.temp in POINT_SCALES or v.sig.temp == "K":
            return None
        u = self.units.get(name)
        return u if u is not None else (SU.si_unit(v.sig.dim) if any(v.sig.dim) else ())


def run_cell(session: ReckonSession, opts: Options, cell: str, user_ns: dict) -> CellOutcome | None:
    """Run one ``%%reckon`` cell. Returns ``None`` for an empty cell (nothing written);
    raises :class:`ReckonUsageError` before writing anything when the cell is malformed."""
    lines = split_lines(cell)
    if not lines:
        return None
    ends = [i for i, ln in enumerate(lines) if ln.form == "end"]
    if ends and ends[0] != len(lines) - 1:
        after = lines[ends[0] + 1]
        raise ReckonUsageError(
            f"line {after.lineno} ({after.source!r}) comes after 'end' on line {lines[ends[0]].lineno}; "
            "end must be the last line of the cell"
        )
    eng = session.engine
    notices: list[str] = []
    if not session.continuing or eng.open_record is None:
        if eng.open_record is not None:  # left over (should not happen): close it so nothing blocks
            eng.record_end()
        session.given_units.clear()
        session.units.clear()
        session.angles.clear()
        session.raw.clear()
        session.known.clear()
        prefs = session.prefs.to_json() if session.prefs and eng.rules >= 3 else None
        r = eng.record_start(opts.title, prefs) if prefs else eng.record_start(opts.title)
        if not r["ok"]:
            step = Step(Line(0, f"%%reckon {opts.title}", "start"), "record_start", r)
            return CellOutcome(opts.title, None, None, "refused", [step], {}, opts.digits,
                               not_run=[ln.lineno for ln in lines])
        session.title = opts.title
    else:
        notices.append(f"continues the open record {session.title!r}")
    rec = eng.open_record
    steps: list[Step] = []
    closed_by_end = False
    snapshot = None
    not_run: list[int] = []
    for k, ln in enumerate(lines):
        if ln.form == "end":
            snapshot = {n: v for n, (v, _) in eng.slots().items()}
            text = ln.rest or None
            st = Step(ln, "record_end", eng.record_end(text))
            steps.append(st)
            closed_by_end = st.ok
            if not st.ok:
                break
            continue
        try:
            st = _run_line(session, ln, user_ns, opts)
        except KeyboardInterrupt:
            # The person interrupted a long line: record it, close the record, then stop.
            tool = {"given": "set", "delete": "set", "show": "get"}.get(ln.form, "eval")
            eng.refuse(tool, "ENGINE_UNKNOWN_ERROR", "interrupted by the user (KeyboardInterrupt) before the line finished.")
            if eng.open_record is not None:
                eng.record_end()
            session.continuing = False
            raise
        except Exception as exc:  # noqa: BLE001 - a fault of ours must still be recorded and shown, never lost
            tool = {"given": "set", "delete": "set", "show": "get"}.get(ln.form, "eval")
            st = Step(ln, tool, eng.refuse(tool, "ENGINE_UNKNOWN_ERROR", f"internal error: {type(exc).__name__}: {exc}"))
        steps.append(st)
        if not st.ok:
            not_run = [later.lineno for later in lines[k + 1:]]
            break
    refused = any(not s.ok for s in steps)
    status = "closed"
    path: Path | None

    def closed_path() -> Path | None:  # this record's file; never an earlier record's
        last = getattr(eng, "last_closed", None)
        return last if rec is not None and last is not None and Path(last).stem == rec["id"] else None

    if closed_by_end:
        path = closed_path()
    elif refused or not opts.cont:
        snapshot = {n: v for n, (v, _) in eng.slots().items()}
        if eng.open_record is not None:
            r = eng.record_end()
            if not r.get("ok"):  # the closing row could not be written (ENGINE_IO): say so, never hide it
                last = lines[-1].lineno if lines else 0
                steps.append(Step(Line(last, "(closing the record)", "end"), "record_end", r))
                refused = True
                if eng.open_record is not None:
                    eng.close()  # released, left on disk: the next record sets it aside for %reckon recover
                notices.append("the record could not be closed as a whole record; it is set aside when the next "
                               "record starts: %reckon recover closes it with what is on disk")
        path = closed_path()
        status = "refused" if refused else "closed"
    else:
        snapshot = {n: v for n, (v, _) in eng.slots().items()}
        path = eng.home / R.OPEN_FILE
        status = "open"
    if refused:
        status = "refused"
    session.continuing = status == "open"
    return CellOutcome(session.title or opts.title, rec["id"] if rec else None, path, status, steps, snapshot or {},
                       opts.digits, notices, not_run)


def _value(eng: Engine, name: str | None) -> Value:
    """The value in slot ``name`` (KeyError when the table has none): one slot read, not a table copy."""
    slot = eng.slot(name) if name is not None else None
    if slot is None:
        raise KeyError(name)
    return slot[0]


def _run_line(session: ReckonSession, ln: Line, user_ns: dict, opts: Options) -> Step:
    eng = session.engine
    held = user_ns.held_refusal(ln) if isinstance(user_ns, RecordedValues) else None
    if held is not None:  # refused by the front end under older rules: as the record holds it
        tool = {"given": "set", "show": "get"}.get(ln.form, "eval")
        return Step(ln, tool, eng.refuse(tool, str(held.get("code")), str(held.get("error"))))
    if ln.form == "given":
        if ln.name is None:
            return Step(ln, "set", eng.refuse("set", "ENGINE_INVALID_ARGS",
                        "a given line is 'given NAME = VALUE [UNIT]', e.g. given L = 25 m."))
        try:
            g = read_given(ln.name, ln.rest, user_ns, opts.digits)
        except (GivenValueError, U.UnitError) as exc:
            return Step(ln, "set", eng.refuse("set", exc.code, exc.message))
        shows = eng.rules >= 3 and g.atoms is not None and bool(g.atoms) and SU.fits(g.atoms)
        r = eng.set(ln.name, g.tagged, g.atoms) if shows and g.atoms else eng.set(ln.name, g.tagged)
        if r["ok"]:
            session.given_units[ln.name] = (g.unit, g.value_text, g.radians, g.digits)
            session.units.pop(ln.name, None)
            session.angles[ln.name] = angle_content(g.atoms) if shows else (0, 0)
            session.raw.pop(ln.name, None)
            if shows:
                session.units[ln.name] = g.atoms
                session.learn(g.atoms)
            return Step(ln, "set", r, given=g, result=_value(eng, ln.name), unit=g.atoms if shows else None)
        return Step(ln, "set", r, given=g)
    if ln.form == "eval":
        declared = None
        if eng.rules >= 2:  # records written before declared units (rules 1) replay as they were written
            formula, unit_text = split_declared(ln.rest)
            if unit_text is not None:
                ln.rest, ln.unit = formula, unit_text
                declared = _declared_unit(eng, ln)
                if isinstance(declared, dict):  # the refusal's receipt: nothing was written
                    return Step(ln, "eval", declared)
        try:
            f = parse(ln.rest)
            found = {n: eng.slot(n) for n in f.slots}
            inputs = {n: s[0] for n, s in found.items() if s is not None}
        except EngineError:
            f, inputs = None, {}
        roles: dict[int, str] = {}
        if f is not None and any(v.sig.temp for v in inputs.values()):
            try:
                roles = dict(compile_formula(f, {n: v.sig for n, v in inputs.items()},
                                             {n: v.mag for n, v in inputs.items()}).roles)
            except EngineError:
                roles = {}  # eval refuses it with its own reason
        angles = (0, 0)
        composed: SU.Composed = None
        input_units = {n: session.display_unit(n, v) for n, v in inputs.items()} if eng.rules >= 3 else {}
        if eng.rules >= 3 and f is not None:
            composed = _composed(session, f, inputs, roles, raw=any(n in session.raw for n in inputs),
                                 units=input_units)
            angles = angle_content(composed if isinstance(composed, tuple) else None)
            why = _angle_clash(ln.name or "the result", angles, declared, composed) \
                if isinstance(declared, U.UnitInfo) else None
            if why:
                return Step(ln, "eval", eng.refuse("eval", "ENGINE_INCOMPATIBLE_DIMENSION", why + " Nothing was written."))
        chosen: list = []
        kind: tuple = ()
        if isinstance(declared, U.UnitInfo) and declared.temp:  # `in degC` makes a point, `in delta_degC` a difference
            point = declared.temp != DELTA
            kind = ("point" if point else "difference", declared.temp if point else None)
        if eng.rules >= 3:
            shown = composed if not any(n in session.raw for n in inputs) else None

            def unit_of(value: Value) -> SU.Unit | None:
                chosen.append(_result_unit(session, f, value, inputs, roles, declared, shown))
                return chosen[-1]

            k_kind, k_scale = kind or (None, None)
            r = eng.eval(ln.rest, ln.name, k_kind, k_scale, unit_of)
        else:
            r = eng.eval(ln.rest, ln.name, *kind)
        unit = chosen[-1] if chosen else None
        typed = {n: session.given_units[n][3] for n in inputs if n in session.given_units}
        st = Step(ln, "eval", r, inputs=inputs, formula=f, input_digits=typed, roles=roles)
        if eng.rules >= 3:
            st.input_units = input_units
        if r["ok"]:
            assert ln.name is not None  # split_lines names every eval line
            st.result = _value(eng, ln.name)
            session.given_units.pop(ln.name, None)
            session.units.pop(ln.name, None)
            session.angles[ln.name] = angles
            session.raw.pop(ln.name, None)
            if f is not None and eng.rules >= 3 and isinstance(composed, tuple) and angles != (0, 0):
                session.raw[ln.name] = composed  # its angle units, for the values computed from it
            if unit is not None:
                session.units[ln.name] = unit
                st.unit = unit
            if isinstance(declared, U.UnitInfo) and st.result.sig.kind != "object":
                st.shown = U.from_si(st.result.mag, declared)
                st.shown_unit = declared.text
        return st
    if ln.form == "show":
        return _show(session, ln)
    if ln.form in ("note", "note!"):
        return Step(ln, "record_message", eng.record_message(ln.rest, hide=ln.form == "note!"))
    if ln.form == "delete":
        r = eng.set(ln.name, None) if ln.name else eng.refuse(
            "set", "ENGINE_INVALID_ARGS", "delete needs a slot name, e.g. delete x.")
        if r.get("ok"):
            session.given_units.pop(ln.name, None)
            session.units.pop(ln.name, None)
            session.angles.pop(ln.name, None)
            session.raw.pop(ln.name, None)
        return Step(ln, "set", r)
    return Step(ln, "eval", eng.refuse(
        "eval", "ENGINE_INVALID_ARGS",
        _did_you_mean(ln.source) + f"{ln.source!r} is not a %%reckon line; lines are 'given NAME = VALUE UNIT', "
        "'NAME = FORMULA', 'show NAME [in UNIT]', 'note TEXT', 'delete NAME' or 'end [TEXT]'."))


def _result_unit(session: ReckonSession, f: Formula | None, value: Value, inputs: dict[str, Value], roles: dict[int, str], declared: object,
                 composed: SU.Composed = None) -> SU.Unit | None:
    """The display unit of an eval's *value* (issue 18): the declared unit (``in UNIT``), else the
    unit composed from its inputs' units (:mod:`..reckoner.shown_units`); ``None`` for a point,
    an object, a dimensionless result and a record with no units written."""
    if value.sig.kind == "object" or value.sig.temp in POINT_SCALES or value.sig.temp == "K":
        return None
    if isinstance(declared, U.UnitInfo):
        atoms = U.unit_atoms(declared.text)
        session.learn(atoms)
        return atoms or None
    if f is None:
        return None
    if composed is None:
        composed = _composed(session, f, inputs, roles)
    return SU.settle(composed, value.sig.dim, session.known, session.prefs,
                     difference=value.sig.temp == DELTA) or None


def _composed(session: ReckonSession, f: Formula, inputs: dict[str, Value], roles: dict[int, str], raw: bool = False,
              units: dict[str, SU.Unit | None] | None = None) -> SU.Composed:
    """The formula's unit composed from its inputs' display units (*units*, when the caller has
    them: ``session.display_unit`` of each input), before it is settled; with *raw*, from the
    compositions the inputs were computed with (angle units kept: P01)."""
    if units is None or raw:
        units = {n: (session.raw.get(n) if raw else None) or session.display_unit(n, v) for n, v in inputs.items()}
    temps = {n: v.sig.temp for n, v in inputs.items()}
    return SU.compose(f.tree, {n: u for n, u in units.items() if u is not None}, temps, roles)


def angle_content(unit: SU.Unit | None) -> tuple[int, int]:
    """``(radians, cycles)`` a unit counts (rpm: (1, 0), Hz: (0, 1), m: (0, 0)), from its angle
    atoms (P01). A factor π converts a cycle to radians (``@f*2*$pi`` of Hz counts radians,
    ``@n/(2*$pi)`` of rpm cycles); beside no angle unit it is a plain number."""
    rad = cyc = pi = 0
    for a, e in unit or ():
        if a is SU.PI:
            pi += e
        elif a.angle:
            try:
                r = U.parse_unit(a.symbol).radians
            except U.UnitError:  # a symbol pint does not read alone: an angle unit, in radians
                r = 1
            rad, cyc = rad + r * e, cyc + (0 if r else e)
    if (rad, cyc) == (0, 0):
        return 0, 0
    return rad + pi, cyc - pi


def _angle_clash(name: str, have: tuple[int, int], unit: U.UnitInfo, composed: Any) -> str | None:
    """P01 for a computed value: shown in a unit that counts angles differently than its inputs
    (a value from rpm in Hz, one from Hz in rpm or rad/s), the numbers would be 2π apart."""
    want = angle_content(U.unit_atoms(unit.text)) if not unit.offset else (0, 0)
    if have == (0, 0) or want == (0, 0) or have[0] == want[0]:
        return None
    written = "·".join(a.symbol for a, _ in composed if a.angle and a is not SU.PI) \
        if isinstance(composed, tuple) else ""
    return U.angle_mismatch(have[0], U.UnitInfo(unit.text, unit.dim, want[0], False, unit.factor), name,
                            f"a value computed from {written}" if written else "a value computed from "
                            + ("radians" if have[0] else "cycles"))


_IN = re.compile(r"\s+in\s+")


def split_declared(rest: str) -> tuple[str, str | None]:
    """``FORMULA in UNIT`` -> ``(FORMULA, UNIT)``: the first `` in `` outside brackets splits (a
    formula never holds one; a unit may: ``lbf / in ^ 2``); ``(rest, None)`` when there is none."""
    for m in _IN.finditer(rest):
        head = rest[: m.start()]
        depth = sum(head.count(o) - head.count(c) for o, c in ("()", "[]", "{}"))
        if depth == 0 and head.strip() and rest[m.end():].strip():
            return head.strip(), rest[m.end():].strip()
    return rest, None


def _declared_unit(eng: Engine, ln: Line) -> U.UnitInfo | dict:
    """The declared unit of ``NAME = FORMULA in UNIT``, or the refusal's receipt when the unit cannot
    be read or the result would not have its dimension and kind (nothing is written then)."""
    try:
        unit = U.parse_unit(ln.unit or "")
    except U.UnitError as exc:
        return eng.refuse("eval", exc.code, f"{ln.name} = {ln.rest} in {ln.unit}: {exc.message}")
    try:
        value, _ = eng.evaluate(ln.rest)
    except EngineError:
        return unit  # eval refuses it with its own reason
    if value.sig.kind == "object":
        return eng.refuse("eval", "ENGINE_INVALID_ARGS", f"{ln.name} = {ln.rest} is an object; a declared unit "
                                                        "(in UNIT) applies to a number or an array.")
    have = tuple(value.sig.dim)
    shown = U.unit_pretty(unit.text)
    if have != tuple(unit.dim):
        return eng.refuse("eval", "ENGINE_INCOMPATIBLE_DIMENSION", (
            f"{ln.name} = {ln.rest} gives {U.describe_dim(have)}, but it is declared in {shown!r}, which is "
            f"{U.describe_dim(unit.dim)}; nothing was written. A forgotten or extra term in the formula is the usual "
            "cause: check it against the declared unit."))
    why = _kind_clash(ln.name or "the result", value.sig.temp, unit)
    if why:
        return eng.refuse("eval", "ENGINE_INCOMPATIBLE_DIMENSION", why + " Nothing was written.")
    return unit


def _kind_clash(name: str, temp: str, unit: U.UnitInfo) -> str | None:
    """Why a temperature of kind *temp* cannot be shown in *unit* (P23), or ``None``."""
    shown = U.unit_pretty(unit.text)
    if unit.temp in POINT_SCALES and temp == DELTA:
        return (f"{name} is a temperature difference, and {shown} is a reading on a scale: shown in it the difference "
                f"would be shifted by the scale's offset. Show it in "
                f"{'delta_degF (Δ°F)' if unit.temp == 'degF' else 'delta_degC (Δ°C)'} or K.")
    if unit.temp == DELTA and temp in POINT_SCALES:
        return (f"{name} is a temperature point (a reading in {'°C' if temp == 'degC' else '°F'}), and {shown} "
                "measures differences. Show it in degC, degF or K, or subtract a reference point first "
                f"(@{name} - @T0).")
    return None


def _did_you_mean(source: str) -> str:
    """``givn T = 5 degC`` -> ``"'givn' is not a %%reckon keyword; did you mean 'given'? "``: the
    keyword closest to a line's first word (difflib, as Python's own suggestions; ``Show`` is
    ``show``), or ``''`` when none is close."""
    word = source.split(maxsplit=1)[0] if source.split() else ""
    close = difflib.get_close_matches(word.lower(), KEYWORDS, n=1, cutoff=0.6)
    return f"{word!r} is not a %%reckon keyword; did you mean {close[0]!r}? " if close else ""


def _show(session: ReckonSession, ln: Line) -> Step:
    eng = session.engine
    if ln.name is None or (ln.digits is not None and not 1 <= ln.digits <= 17):
        return Step(ln, "get", eng.refuse("get", "ENGINE_INVALID_ARGS",
                    "a show line is 'show NAME [in UNIT] [digits N]' with N a whole number from 1 to 17."))
    unit = None
    if ln.unit:
        try:
            unit = U.parse_unit(ln.unit)
        except U.UnitError as exc:
            return Step(ln, "get", eng.refuse("get", exc.code, exc.message))
        known = session.given_units.get(ln.name)
        if known is not None and eng.slot(ln.name) is not None:
            msg = U.angle_mismatch(known[2], unit, ln.name, known[0].text if known[0] else "a plain number")
            if msg:
                return Step(ln, "get", eng.refuse("get", "ENGINE_INCOMPATIBLE_DIMENSION", msg))
        elif ln.name in session.angles and eng.slot(ln.name) is not None:  # a computed value (P01)
            msg = _angle_clash(ln.name, session.angles[ln.name], unit, session.units.get(ln.name))
            if msg:
                return Step(ln, "get", eng.refuse("get", "ENGINE_INCOMPATIBLE_DIMENSION", msg))
        slot = eng.slot(ln.name)
        why = _kind_clash(ln.name, slot[0].sig.temp, unit) if slot is not None else None
        if why:
            return Step(ln, "get", eng.refuse("get", "ENGINE_INCOMPATIBLE_DIMENSION", why))
        if slot is not None and slot[0].sig.kind != "object" and tuple(slot[0].sig.dim) != tuple(unit.dim):
            have = slot[0].sig.dim
            return Step(ln, "get", eng.refuse("get", "ENGINE_INCOMPATIBLE_DIMENSION", (
                f"{ln.name} is {U.describe_dim(have)} but {U.unit_pretty(unit.text)!r} is {U.describe_dim(unit.dim)}; "
                f"show it in a unit of the same dimension (in SI: {U.si_text(have) or 'a plain number'})"
                + (", or convert it in a formula first." if any(have) else ".")
            )))
        atoms = U.unit_atoms(unit.text) if eng.rules >= 3 and slot is not None and slot[0].sig.kind != "object" \
            else None
        if atoms:
            session.learn(atoms)
            r = eng.get(ln.name, dim=list(unit.dim), unit=atoms)
        else:
            r = eng.get(ln.name, dim=list(unit.dim))
    else:
        slot = eng.slot(ln.name)
        atoms = session.display_unit(ln.name, slot[0]) if eng.rules >= 3 and slot is not None else None
        r = eng.get(ln.name, unit=atoms) if atoms and session.units.get(ln.name) else eng.get(ln.name)
    st = Step(ln, "get", r)
    if r["ok"]:
        v = _value(eng, ln.name)
        st.result = v
        if unit is not None and v.sig.kind != "object":
            st.shown = U.from_si(v.mag, unit)
            st.shown_unit = unit.text
        elif atoms and session.units.get(ln.name):
            st.unit = atoms
    return st
