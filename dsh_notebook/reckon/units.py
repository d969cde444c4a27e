"""Units for ``%%reckon``: pint reads what people write; the engine gets SI and a vector
(spec: reckoner.md section 2; public cases P01-P08 in ``shared/cases``).

* ``parse_unit`` reads a unit expression with pint's application registry and refuses,
  with a message that names the problem, what pint would silently get wrong: an
  implicit product after ``/`` (``mg/12 h``: P02, P03), a compact symbol pint reads as a
  textile count (``Nm``: P04), logarithmic units (``dBm``: P06), dimensions outside the
  seven SI bases (bits, counts, currencies), fractional exponents.
* Angles: SI and the engine treat radians as dimensionless, but pint remembers them. A
  ``given`` keeps its radian exponent so that ``show n in Hz`` of an angular speed given
  in rpm is refused (Hz counts cycles, rad/s radians: P01), and a ratio is not shown as a
  solid angle (P07).
* ``si_text`` names a vector for display in SI symbols (``Ω``, ``N``, ``Pa``); ``s⁻¹`` is
  never written as Hz.
* Temperatures (issue 17): ``degC``, ``°C``, ``degF``, ``°F`` alone give a point on that scale;
  ``delta_degC``, ``Δ°C``, ``delta_degF``, ``ΔK`` a difference; ``K`` and ``degR`` a
  thermodynamic temperature (no kind: it acts as either). ``UnitInfo.temp`` says which.
* What people paste (issue 17) reads back: a unit as the product displays it (``kg·m⁻³``),
  the ohm sign U+2126, the micro sign and Greek mu, ``℃``/``℉``; ``psia``/``bara`` are absolute
  pressures and a gauge pressure (``psig``, ``barg``) is refused naming the absolute unit; a
  degree inside a compound unit (``J/(kg·°C)``) is a difference. :func:`read_number` is the
  one reader of numbers, as displayed (``3.3006×10⁻⁶``) and as typed (``3.3006*10^-6``).
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import NotebookError
from ..formats import FROM_SUPERSCRIPTS, SUPERSCRIPTS
from ..reckoner import dims as D
from ..reckoner.display import describe_dim, si_latex, si_parts, si_text  # noqa: F401 - re-exported
from ..reckoner.shown_units import KELVIN, MOMENTS, QUANTITIES, Atom, Unit, fits, unit_dim
from ..reckoner.values import POINT_SCALES

if TYPE_CHECKING:
    import pint

_SI_DIMS = ("[length]", "[mass]", "[time]", "[current]", "[temperature]", "[substance]", "[luminosity]")
_BASE_OK = {"meter", "kilogram", "second", "ampere", "kelvin", "mole", "candela", "radian"}


class UnitError(NotebookError, ValueError):
    """A unit the magic refuses; ``code`` is the engine error code to record it under."""

    code = "ENGINE_INVALID_DIMENSION"  # the class default; every instance names its own code

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def registry() -> pint.ApplicationRegistry:
    """pint's application registry: ``_reckon`` Quantities mix with the user's own."""
    import pint

    return pint.get_application_registry()


@dataclass(frozen=True)
class UnitInfo:
    """A parsed unit: ``text`` as written, ``dim`` (7 ints), ``radians`` (pint's radian
    exponent: 1 for rpm or rad/s, 2 for sr, 0 for Hz or percent), ``offset`` (True for
    degC/degF: convert values with pint, never by a factor)."""

    text: str
    dim: tuple[int, ...]
    radians: int
    offset: bool
    factor: float  # SI per unit for multiplicative units
    temp: str = ""  # a temperature unit's kind: "degC"/"degF" (a point), "delta" (a difference), "" (K, degR, other)


_SUPER_RUN = re.compile(r"[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+")

#: Signs that look like the ones pint knows: the ohm sign U+2126 (datasheets) is the Greek
#: capital omega U+03A9; the Greek mu U+03BC is the micro sign U+00B5 (both are micro: P05);
#: the one-character degree signs U+2103 and U+2109 (on which pint raises AssertionError) are
#: ``°C`` and ``°F``.
_SIGNS = str.maketrans({"\u2126": "\u03a9", "\u03bc": "\u00b5", "\u2103": "°C", "\u2109": "°F"})


def _normalise(text: str) -> str:
    """A unit in pint's syntax: the product signs ``·``, ``⋅``, ``×`` as ``*``, the typographic
    minus as ``-``, the look-alike signs of :data:`_SIGNS`, and superscript exponents as the
    product displays them (``kg·m⁻³``) as ``^n`` (``kg*m^-3``); whitespace runs as one space."""
    t = text.strip().replace("·", "*").replace("⋅", "*").replace("×", "*").replace("−", "-").translate(_SIGNS)
    t = _SUPER_RUN.sub(lambda m: "^" + m.group().translate(FROM_SUPERSCRIPTS), t)
    return re.sub(r"\s+", " ", t)


def _check_superscripts(text: str) -> None:
    """A superscript exponent is written as the product displays it: right after a unit name or
    a ``)``, an optional ``⁻`` and digits (``m²``, ``s⁻¹``, ``(m·s)⁻¹``). Refused: an exponent
    with no unit before it (``⁻¹``, ``s ⁻¹``), a ``⁻`` without digits (``s⁻``), a digit right
    after it (``m²3``, which would read as m^23)."""
    for m in _SUPER_RUN.finditer(text):
        run = m.group()
        before = text[m.start() - 1] if m.start() else ""
        if not (before.isalnum() or before in ("_", "°", ")", "\u2103", "\u2109")):
            raise _bad(text, f"has the exponent {run!r} with no unit right before it; write the exponent "
                             "straight after the unit, e.g. 's⁻¹' or 'm²'.")
        if not re.fullmatch("⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+", run):
            raise _bad(text, f"has the exponent {run!r}, which is not a whole number; write e.g. 's⁻¹' or 's^-1'.")
        if text[m.end(): m.end() + 1].isdigit() or text[m.end(): m.end() + 1] == ".":
            raise _bad(text, f"has {text[m.end()]!r} right after the exponent {run!r}; write the whole exponent "
                             "in superscripts (m²) or with '^' (m^2).")


_TOKEN = re.compile(r"\s*(\*\*|[()*/^]|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|[^\s()*/^]+)")


_SYNTAX = re.compile(r"\s*(\*\*|[()*/^]|-|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|[%‰]|[^\W\d][\w°]*|°\w+|\S)")


def _bad(text: str, why: str) -> UnitError:
    return UnitError("ENGINE_INVALID_DIMENSION", f"the unit {text!r} {why}")


def _check_syntax(text: str) -> None:
    """A unit is a product and quotient of unit names with integer powers, e.g.
    ``kg*m/s^2``, ``W/(m^2*K)``, ``mg/(12 h)``. Anything else pint would *calculate*
    (``5 m - 2 m``, ``2 ft + 3 in``, ``3 m 4``, a trailing ``# comment``) is refused, and
    so is an implicit product after ``/`` (``mg/12 h``: P02, P03), which pint reads as
    a product."""
    toks: list[tuple[str, bool]] = []  # (token, preceded by whitespace)
    pos = 0
    while pos < len(text):
        m = _SYNTAX.match(text, pos)
        if not m or m.end() == pos:
            break
        toks.append((m.group(1), m.start(1) > pos))
        pos = m.end()
    i = 0

    def peek() -> str | None:
        return toks[i][0] if i < len(toks) else None

    def expr(depth: int) -> None:
        nonlocal i
        after_slash = False
        factor(depth, top_start=True)
        while True:
            t = peek()
            if t in ("*", "/"):
                i += 1
                after_slash = after_slash or t == "/"
                nxt = peek()
                if nxt is None:
                    raise _bad(text, f"ends with {t!r}; a unit must follow it.")
                if t == "/" and depth == 0 and re.fullmatch(r"[0-9].*", nxt):
                    raise _bad(text, f"is ambiguous: pint reads '/{nxt} ...' as dividing by {nxt} only and multiplies "
                                     f"by what follows; write parentheses, e.g. {_suggest(text)}")
                factor(depth, top_start=False)
            elif t is not None and t != ")" and toks[i][1]:
                if after_slash:
                    raise _bad(text, f"is ambiguous: after '/' the space before {t!r} is a multiplication, so pint "
                                     f"would put {t!r} in the numerator; write parentheses, e.g. {_suggest(text)}")
                factor(depth, top_start=False)
            else:
                return

    def factor(depth: int, top_start: bool) -> None:
        nonlocal i
        t = peek()
        if t is None:
            raise _bad(text, "is incomplete; write a unit such as 'kg*m/s^2'.")
        if t == "(":
            i += 1
            expr(depth + 1)
            if peek() != ")":
                raise _bad(text, "has a '(' that is never closed.")
            i += 1
        elif re.fullmatch(r"[0-9].*", t):
            if depth == 0 and not (top_start and t == "1" and i + 1 < len(toks) and toks[i + 1][0] == "/"):
                raise _bad(text, f"has the number {t!r} outside parentheses; the value goes before the unit, and a "
                                 "number inside a unit needs parentheses, e.g. 'mg/(12 h)'.")
            i += 1
        elif t in ("%", "‰") or re.fullmatch(r"[^\W\d][\w°]*|°\w+", t):
            i += 1
        else:
            hint = " (comments start only at the beginning of a line)" if t == "#" else ""
            what = {"+": "an addition", "-": "a subtraction"}.get(t, f"the character {t!r}")
            raise _bad(text, f"contains {what}{hint}; a unit is a product or quotient of unit names with integer "
                             "powers, e.g. 'kg*m/s^2' or 'W/(m^2*K)'.")
        if peek() in ("**", "^"):
            i += 1
            neg = peek() == "-"
            if neg:
                i += 1
            e = peek()
            paren = e == "("
            if paren:
                i += 1
                if peek() == "-":
                    i += 1
                e = peek()
            if e is None or not re.fullmatch(r"[0-9]{1,4}", e):
                raise _bad(text, f"has the power {e!r}; a unit power is a whole number (m^2, s^-1).")
            i += 1
            if paren:
                if peek() != ")":
                    raise _bad(text, "has a '(' that is never closed.")
                i += 1
            if peek() in ("**", "^"):
                raise _bad(text, "has a power of a power; write one whole-number power, e.g. m^8.")

    expr(0)
    if i < len(toks):
        t = toks[i][0]
        raise _bad(text, f"has {t!r} where the unit should end" + (
            "; a ')' closes nothing." if t == ")" else "; a unit is a product or quotient of unit names."))


def _suggest(text: str) -> str:
    head, _, tail = text.partition("/")
    return f"'{head.strip()}/({tail.strip()})' for a quotient, or '({head.strip()}/{tail.split()[0]})*{' '.join(tail.split()[1:])}'."


_DELTA_K = re.compile(r"(?:Δ|delta_)\s*(?:K|kelvin)")
_SCALE_OF = {"degree_Celsius": "degC", "degree_Fahrenheit": "degF"}


@lru_cache(maxsize=1024)
def parse_unit(text: str) -> UnitInfo:
    """Read a unit expression (``'ohm*m'``, ``'kN*m'``, ``'mg/(12 h)'``, ``'degC'``; ``''``
    is dimensionless), with its temperature kind (``UnitInfo.temp``). Raises :class:`UnitError`
    naming the problem."""
    if _DELTA_K.fullmatch(text.strip()):  # how the working shows a K value used as a difference
        k = _parse_unit("K")
        return UnitInfo(text.strip(), k.dim, 0, False, 1.0, "delta")
    info = _parse_unit(text)
    if tuple(info.dim) != (0, 0, 0, 0, 1, 0, 0):
        return info
    name = _single_unit_name(info.text)
    if info.offset:
        scale = _SCALE_OF.get(name or "")
        if scale is None:
            raise UnitError("ENGINE_INVALID_DIMENSION",
                            f"{info.text!r} is a temperature scale the engine does not keep; give the value in degC, "
                            "degF or K.")
        return UnitInfo(info.text, info.dim, info.radians, True, info.factor, scale)
    if name is not None and name.startswith("delta_"):
        return UnitInfo(info.text, info.dim, info.radians, False, info.factor, "delta")
    return info


def _single_unit_name(text: str) -> str | None:
    """pint's name of a unit written alone (``'°C'`` -> ``'degree_Celsius'``), else ``None``."""
    try:
        units = registry().parse_units(text)._units
    except Exception:  # noqa: BLE001 - pint raises many unrelated types on text it cannot take as units alone
        return None
    if len(units) != 1:
        return None
    (name, power), = units.items()
    return name if power == 1 else None


@lru_cache(maxsize=1024)
def _parse_unit(text: str) -> UnitInfo:
    """Read a unit expression (``'ohm*m'``, ``'kN*m'``, ``'mg/(12 h)'``, ``'degC'``; ``''``
    is dimensionless), also as the product displays units (``'Ω·m'``, ``'kg·m⁻³'``,
    ``'W/(m²·K)'``) and as datasheets write them (``'kΩ'`` with the ohm sign, ``'℃'``,
    ``'psia'``, ``'J/(kg·°C)'``: see :func:`_normalise`, :func:`_pressure_references`,
    :func:`_temperature_differences`). Raises :class:`UnitError` naming the problem."""
    _check_superscripts(text)
    t = _normalise(text)
    if not t:
        return UnitInfo("", (0, 0, 0, 0, 0, 0, 0), 0, False, 1.0)
    ureg = registry()
    written = _pressure_references(t, ureg)
    t = _temperature_differences(written, ureg)
    _check_syntax(t)
    try:
        q = ureg.parse_expression(t)
    except Exception as exc:  # noqa: BLE001 - pint raises several types (UndefinedUnitError, DefinitionSyntaxError, tokenize and Python errors), all refused alike
        raise UnitError(
            "ENGINE_INVALID_DIMENSION",
            f"pint cannot read the unit {t!r} ({type(exc).__name__}: {exc}); write a unit such as 'ohm*m', 'kN*m', "
            "'uF', 'degC' or 'mg/(12 h)'.",
        ) from None
    if not hasattr(q, "units"):  # a bare number such as '2'
        raise UnitError(
            "ENGINE_INVALID_DIMENSION",
            f"{t!r} is a number, not a unit; put numbers in the value.",
        )
    _check_units(t, q, ureg)
    dim = _dim_of(t, q)
    if t != written and tuple(dim) == (0, 0, 0, 0, 1, 0, 0):  # degC^1, degC*m/m: neither a point nor plainly a difference
        raise UnitError(
            "ENGINE_INVALID_DIMENSION",
            f"{written!r} puts a temperature scale into a compound unit that is itself a temperature; write degC "
            "(or degF) alone for a reading on the scale, or delta_degC for a difference.",
        )
    offset = not getattr(q, "_is_multiplicative", True)
    if offset:
        if q.magnitude != 1:
            raise UnitError("ENGINE_INVALID_DIMENSION", f"the offset unit in {t!r} cannot be scaled; write it alone, e.g. 'degC'.")
        return UnitInfo(t, dim, 0, True, 1.0)
    base = ureg.Quantity(1.0, q.units).to_base_units()
    radians = int(base.units._units.get("radian", 0))
    factor = float(q.magnitude) * float(base.magnitude)
    return UnitInfo(t, dim, radians, offset, factor)


# ------------------------------------------------------------------ what engineers write

_NAME = re.compile(r"(?<![\w°])(?:[^\W\d][\w°]*|°\w+)")
#: A pressure unit's reference written after it: ``psig``, ``barg``, ``kPag``, ``bar_g``,
#: ``bar(g)``, ``bar (g)``, ``psi_gauge`` (gauge), ``psia``, ``bara``, ``bar_a``, ``bar(a)``,
#: ``psi_abs`` (absolute).
_REFERENCED = re.compile(r"(?<![\w°])([^\W\d_][^\W_]*?)(?:(_?[gG]|_gauge|\s?\([gG]\))|(_?[aA]|_abs|\s?\([aA]\)))(?![\w(])")


def _pressure_references(t: str, ureg: pint.ApplicationRegistry) -> str:
    """Gauge and absolute pressure units, which pint does not define (issue 17).

    ``psia``, ``bara``, ``bar(a)`` are absolute pressures: read as ``psi``, ``bar``. A gauge
    pressure (``psig``, ``barg``, ``kPag``, ``MPag``, ``bar(g)``, ``bar_g``) is measured from the
    atmosphere's pressure, an offset the engine does not hold: refused with
    ENGINE_INVALID_DIMENSION, naming the absolute unit and the offset to add. A suffix is read
    only where the whole word is no unit pint knows and the word without it is a pressure."""

    def one(m: re.Match) -> str:
        base, gauge = m.group(1), m.group(2)
        word = m.group(0)
        try:
            if re.fullmatch(r"\w+", word) and ureg.parse_unit_name(word):
                return word  # a unit pint knows (kg, mg): never reinterpret one
            unit = ureg.parse_units(base)
        except Exception:  # noqa: BLE001 - any pint failure means the word is no suffixed pressure: left as written
            return word
        if unit.dimensionality != ureg.pascal.dimensionality:
            return word
        if gauge is None:
            return base
        atm = _short_number(float(ureg.Quantity(1.0, "atm").to(unit).magnitude))
        raise UnitError(
            "ENGINE_INVALID_DIMENSION",
            f"{word!r} is a gauge pressure, measured from the atmosphere's pressure (1 atm = {atm} {base}); the "
            f"engine holds absolute pressures: give the absolute value in {base} (the gauge reading + {atm} {base} "
            f"at standard atmosphere), or keep a pressure difference in {base}.",
        )

    return _REFERENCED.sub(one, t)


def _short_number(x: float) -> str:
    """*x* with the fewest significant digits (at most 6) that give it exactly, else 5
    (``1.01325``, ``101.325``, ``14.696``)."""
    for digits in range(1, 7):
        text = f"{x:.{digits}g}"
        if math.isclose(float(text), x, rel_tol=1e-12):
            return text
    return f"{x:.5g}"


def _temperature_differences(t: str, ureg: pint.ApplicationRegistry) -> str:
    """In a compound unit, an offset temperature can only mean a difference of one degree:
    ``J/(kg*degC)``, ``W/(m^2*°C)``, ``BTU/(lb*degF)``, ``1/degC`` (pint refuses them with
    OffsetUnitCalculusError). There ``degC`` (``°C``, ``℃``, ``degree_Celsius``...) reads as
    ``delta_degree_Celsius`` and Fahrenheit likewise. A temperature unit alone (``degC``,
    ``(degC)``) stays a point on its scale."""
    names = list(_NAME.finditer(t))
    if len(names) == 1 and re.fullmatch(r"[\s()]*", t[: names[0].start()] + t[names[0].end():]):
        return t

    seen: dict[str, str] = {}

    def one(m: re.Match) -> str:
        word = m.group(0)
        if word not in seen:
            seen[word] = as_difference(word)
        return seen[word]

    def as_difference(word: str) -> str:
        try:
            found = ureg.parse_unit_name(word)
        except Exception:  # noqa: BLE001 - any pint failure means the word is no temperature unit: left as written
            return word
        if len(found) != 1 or found[0][0] or found[0][2]:
            return word
        unit = found[0][1]
        defn = ureg._units.get(unit)
        conv = getattr(defn, "converter", None)
        if defn is None or defn.is_multiplicative or getattr(conv, "is_logarithmic", False):
            return word
        difference = f"delta_{unit}"
        return difference if difference in ureg._units else word

    return _NAME.sub(one, t)


@lru_cache(maxsize=1)
def _pint_constants() -> frozenset:
    """Names pint defines as constants (its constants_en.txt): numbers, not units."""
    import importlib.resources

    try:
        text = (importlib.resources.files("pint") / "constants_en.txt").read_text(encoding="utf-8")
    except OSError:  # pragma: no cover - a pint without the file
        return frozenset()
    names = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        if "=" in line and not line.lstrip().startswith("@"):
            names.add(line.split("=", 1)[0].strip())
    return frozenset(names)


_MATH_CONSTANTS = {"pi", "tansec", "ln10", "wien_x", "wien_u", "eulers_number"}


def _check_constants(t: str, ureg: pint.ApplicationRegistry) -> None:
    """``1 pi m`` or ``1 m*e`` would multiply by pi or the elementary charge: refuse constants
    written as units (mathematical ones always; physical ones spelt as a single letter)."""
    consts = _pint_constants()
    for m in re.finditer(r"°?[^\W\d][\w°]*", t):  # °R is a unit (Rankine), never the gas constant R
        tok = m.group(0)
        for _, unit, _ in ureg.parse_unit_name(tok):
            if unit in _MATH_CONSTANTS or (len(tok) == 1 and unit in consts):
                raise UnitError(
                    "ENGINE_INVALID_DIMENSION",
                    f"{tok!r} in the unit {t!r} is pint's constant {unit}, a number rather than a unit; "
                    "put numbers in the value or in a formula ($pi) instead.",
                )


def _check_units(t: str, q: pint.Quantity, ureg: pint.ApplicationRegistry) -> None:
    _check_constants(t, ureg)
    for name in q._units:
        defn = ureg._units.get(name)
        conv = getattr(defn, "converter", None)
        if getattr(conv, "is_logarithmic", False):
            raise UnitError(
                "ENGINE_INVALID_DIMENSION",
                f"{t!r} is a logarithmic unit ({name}); the engine adds and multiplies linear quantities only. "
                "Convert to a linear unit first (e.g. 3 dBm is 10**(3/10) mW = 1.995 mW) or keep decibels as a "
                "dimensionless number and write the 10*log10 factor into the formula.",
            )
    textile = set(ureg.get_group("Textile").members)
    for name in q._units:
        hit = ({name} | {u for _, u, _ in ureg.parse_unit_name(name)}) & textile  # kNm is kilo + number_meter
        if hit:
            name = min(hit)
            raise UnitError(
                "ENGINE_INVALID_DIMENSION",
                f"{t!r} is read by pint as the textile yarn count {name!r}, which is almost never meant; "
                "for a torque write 'N*m' (newton metre); for a length in nanometres write 'nm'.",
            )
    base = ureg.Quantity(1.0, q.units)
    with contextlib.suppress(Exception):  # a unit without base units is judged as written below
        base = base.to_base_units()
    others = [n for n in base._units if n not in _BASE_OK]
    if others:
        raise UnitError(
            "ENGINE_INVALID_DIMENSION",
            f"{t!r} involves {', '.join(others)}, which pint keeps as its own dimension outside the seven SI base "
            "dimensions (m, kg, s, A, K, mol, cd); write counts, bits or currency as plain numbers instead.",
        )


def _dim_of(t: str, q: pint.Quantity) -> tuple[int, ...]:
    d: Mapping[str, Any] = q.dimensionality  # pint types an exponent as any scalar
    unknown = [k for k in d if k not in _SI_DIMS]
    if unknown:
        raise UnitError(
            "ENGINE_INVALID_DIMENSION",
            f"{t!r} has the dimension {', '.join(unknown)}, outside the seven SI base dimensions "
            "(m, kg, s, A, K, mol, cd); the engine cannot hold it.",
        )
    out = []
    for k in _SI_DIMS:
        e = d.get(k, 0)
        if float(e) != int(e):
            raise UnitError(
                "ENGINE_INVALID_DIMENSION",
                f"{t!r} has a fractional exponent ({k}^{Fraction(e).limit_denominator(100)}); a stored value needs "
                "whole-number exponents.",
            )
        out.append(int(e))
    return tuple(out)


def to_si(value: Any, info: UnitInfo) -> Any:
    """Convert a magnitude (float, complex, ndarray) in ``info``'s unit to SI."""
    if info.offset:
        if isinstance(value, complex) or (isinstance(value, np.ndarray) and value.dtype.kind == "c"):
            raise UnitError("ENGINE_INVALID_ARGS", f"a complex value cannot carry the offset unit {info.text!r}.")
        ureg = registry()
        return ureg.Quantity(value, info.text).to_base_units().magnitude
    if isinstance(value, float):
        return _dec_mul(value, info.factor)
    if isinstance(value, complex):
        return complex(_dec_mul(value.real, info.factor), _dec_mul(value.imag, info.factor))
    return value * info.factor


def _dec_mul(x: float, factor: float) -> float:
    """``x * factor`` on the decimal numbers as written: 2.05 mm -> 0.00205 m exactly as a
    person reads it (binary multiplication gives 0.0020499999999999997)."""
    return float(Decimal(repr(x)) * Decimal(repr(factor)))


def from_si(value: Any, info: UnitInfo) -> Any:
    """Convert an SI magnitude into ``info``'s unit (for display)."""
    if info.offset:
        ureg = registry()
        return ureg.Quantity(value, _si_pint(info.dim)).to(info.text).magnitude
    return value / info.factor


def _si_pint(dim: D.Dim) -> str:
    names = ("meter", "kilogram", "second", "ampere", "kelvin", "mole", "candela")
    parts = [f"{n} ** {e}" for n, e in zip(names, dim) if e]
    return " * ".join(parts) or "dimensionless"


def quantity(mag: Any, dim: D.Dim) -> pint.Quantity:
    """A pint Quantity (application registry) of an SI magnitude with vector ``dim``."""
    ureg = registry()
    return ureg.Quantity(mag, _si_pint(dim))


def angle_mismatch(given_radians: int | None, target: UnitInfo, name: str, given_text: str | None) -> str | None:
    """P01/P07: a message when showing a value in a unit with a different angle content."""
    if given_radians is None or given_radians == target.radians:
        return None
    if given_radians == 1 and target.radians == 0:
        return (
            f"{name} was given in {given_text} (an angular quantity, in radians) and {target.text!r} counts cycles: "
            f"1 Hz = 2π rad/s, so the numbers differ by 2π. Show it in rad/s or rpm, or convert explicitly: "
            f"{name}_cycles = @{name}/(2*$pi)."
        )
    if given_radians == 0 and target.radians == 1:
        return (
            f"{name} was given in {given_text or 'a unit without angles'} (cycles or a plain rate) and {target.text!r} "
            f"measures radians: the numbers differ by 2π. Convert explicitly: {name}_rad = @{name}*2*$pi."
        )
    if target.radians == 2 or given_radians == 2:
        return (
            f"{name} was given in {given_text or 'a unit without angles'} and {target.text!r} is a solid angle "
            "(steradian); a ratio is not a solid angle. Show it as a plain number or in the unit it was given in."
        )
    return (
        f"{name} was given in {given_text} and {target.text!r} has a different angle content; convert explicitly in a formula."
    )


# ------------------------------------------------------------------ display units (issue 18)


@lru_cache(maxsize=1024)
def unit_atoms(text: str) -> Unit | None:
    """The display atoms of a unit as written (``kN*m`` -> kN, m; ``W/(m^2*K)`` -> W, m⁻², K⁻¹;
    ``J/(kg*degC)`` -> J, kg⁻¹, Δ°C⁻¹), each with pint's symbol (the person's spelling kept where
    only the case differs: ``L``), SI factor and vector, for results composed from them.
    ``None`` for a temperature point (its scale shows it) and for a unit with a number in it
    (``mg/(12 h)``). Raises :class:`UnitError` as :func:`parse_unit` does."""
    info = parse_unit(text)
    if info.offset or info.temp in POINT_SCALES:
        return None
    if not info.text:
        return ()
    if _DELTA_K.fullmatch(text.strip()):
        return ((KELVIN, 1),)
    ureg = registry()
    try:
        q = ureg.parse_expression(info.text)
    except Exception:  # noqa: BLE001 - parse_unit read it; a text it rewrote reads the same
        return None
    if getattr(q, "magnitude", None) != 1:
        return None
    written: dict[str, str] = {}
    for m in _NAME.finditer(info.text):
        try:
            names = list(ureg.parse_units(m.group(0))._units)
        except Exception:  # noqa: BLE001, S112 - a word pint reads only within the whole unit keeps pint's symbol
            continue
        if len(names) == 1:
            written.setdefault(names[0], m.group(0))
    out = []
    for name, e in q._units.items():
        if float(e) != int(e):
            return None
        out.append((_atom(name, written.get(name, "")), int(e)))
    return tuple(out)


@lru_cache(maxsize=1024)
def _atom(name: str, token: str) -> Atom:
    """One pint unit as a display atom (``kilonewton`` -> ``kN``, 1000.0, force)."""
    ureg = registry()
    sym = format(ureg.Unit(name), "~P") or name
    if token and token.lower() == sym.lower():
        sym = token
    one = ureg.Quantity(1.0, name)
    base = one.to_base_units()
    angle = bool(base.units._units.get("radian", 0)) or name.endswith("hertz")
    return Atom(sym, float(f"{float(base.magnitude):.15g}"), _dim_of(name, one), angle)  # 0.3048, not 0.30479999999999996


def unit_problem(data: object) -> str | None:
    """What is wrong with a display unit a record row holds (``[[symbol, exponent, factor,
    vector(, true)], ...]``, issue 18), checked against pint: each symbol must be a unit pint
    reads alone, with that factor, vector and angle mark; ``None`` when it holds. ``verify``
    reports any other (a forged factor would change every number shown in the unit)."""
    if not isinstance(data, list) or not data:
        return "it is not a list of units"
    for item in data:
        if not (isinstance(item, list) and len(item) in (4, 5) and isinstance(item[0], str)):
            return f"{str(item)[:60]!r} is not [symbol, exponent, factor, vector]"
        sym, _e, factor, vec = item[:4]
        try:
            atoms = unit_atoms(sym)
        except UnitError:
            atoms = None
        if not atoms or len(atoms) != 1 or atoms[0][1] != 1:
            return f"{sym[:40]!r} is no unit pint reads alone"
        a = atoms[0][0]
        if not isinstance(factor, (int, float)) or not math.isclose(float(factor), a.factor, rel_tol=1e-9):
            return f"{sym!r} is {a.factor:g} SI units, but the row says {str(factor)[:40]}"
        if vec != list(a.dim):
            return f"{sym!r} has the vector {list(a.dim)}, but the row says {str(vec)[:60]}"
        if (len(item) == 5) != a.angle:
            return f"{sym!r} {'counts' if a.angle else 'does not count'} angles, but the row says otherwise"
    return None


def preference(quantity: str, text: str) -> tuple[str, Unit]:
    """One preferred display unit (``%reckon units length=mm``, issue 18): ``(quantity, unit)``.
    *quantity* is a name of :data:`..reckoner.shown_units.QUANTITIES` (``moment`` and ``torque``
    apply to force × length, ``energy`` otherwise), or empty to name it from the unit's vector.
    Raises :class:`UnitError` for an unknown quantity, a unit of another vector, a temperature
    point (points show on the scale they were given in), an angle-bearing unit (P01: rpm, rad/s,
    Hz and degrees are never chosen for a result) and a unit with a number in it."""
    name = quantity.strip().lower().replace("-", "_").replace(" ", "_")
    atoms = unit_atoms(text)
    shown = unit_pretty(text)
    if atoms is None and parse_unit(text).temp in POINT_SCALES:
        raise UnitError("ENGINE_INVALID_ARGS", f"{shown!r} is a temperature scale: a temperature point always shows on "
                                               "the scale it was given in; for differences write "
                                               f"temperature_difference=delta_{parse_unit(text).temp}.")
    if atoms is None:
        raise UnitError("ENGINE_INVALID_ARGS", f"{shown!r} has a number in it; write a unit alone (mg/h, not mg/(12 h)).")
    if atoms and not fits(atoms):
        raise UnitError("ENGINE_INVALID_ARGS", f"{shown!r} cannot be a preferred unit: a record holds at most 12 units "
                                               "with exponents from -12 to 12.")
    if not atoms or any(a.angle for a, _ in atoms):
        raise UnitError("ENGINE_INVALID_ARGS", f"{shown!r} cannot be a preferred unit: "
                        + ("a plain number has no unit." if not atoms else
                           "a unit that counts angles or cycles (rpm, rad/s, Hz, degrees) is never chosen for a "
                           "result, since radians and cycles are 2π apart (P01); show a value in it with "
                           "'show NAME in UNIT'."))
    dim = unit_dim(atoms)
    if not name:
        found = [q for q, d in QUANTITIES.items() if d == dim]
        if not found:
            raise UnitError("ENGINE_INVALID_ARGS", f"{shown!r} is {describe_dim(dim)}, which has no quantity name here; "
                                                   f"write QUANTITY={text} with one of {', '.join(QUANTITIES)}.")
        name = found[0]
        if dim == QUANTITIES["moment"]:
            name = "moment" if len(atoms) == 2 and {a.dim for a, _ in atoms} == {QUANTITIES["force"],
                                                                                   QUANTITIES["length"]} else "energy"
    if name not in QUANTITIES:
        raise UnitError("ENGINE_INVALID_ARGS", f"{quantity!r} is not a quantity a unit can be preferred for; the "
                                               f"quantities are {', '.join(QUANTITIES)}.")
    if QUANTITIES[name] != dim:
        raise UnitError("ENGINE_INVALID_DIMENSION", f"{shown!r} is {describe_dim(dim)}, not a {name.replace('_', ' ')} "
                                                    f"({describe_dim(QUANTITIES[name])}).")
    if name in MOMENTS and len(atoms) == 1:
        raise UnitError("ENGINE_INVALID_ARGS", f"{shown!r} names an energy; a {name} is a force times a lever arm, "
                                               "shown in N·m, kN·m or lbf·ft, never in joules (P24).")
    return name, atoms


# ------------------------------------------------------------------ display names

@lru_cache(maxsize=1024)
def unit_latex(text: str) -> str:
    """A written unit as LaTeX via pint (``kN*m`` -> ``\\mathrm{kN} \\cdot \\mathrm{m}``); degrees as
    ``{}^{\\circ}\\mathrm{C}`` (and ``\\Delta{}^{\\circ}\\mathrm{C}``), as values on a scale are shown."""
    try:
        tex = format(registry().Unit(text), "~L")
        return tex.replace(r"\mathrm{Δ°", r"\Delta{}^{\circ}\mathrm{").replace(r"\mathrm{°", r"{}^{\circ}\mathrm{")
    except Exception:  # noqa: BLE001 - any text pint cannot typeset is shown as plain text
        return r"\text{" + text.replace("\\", "").replace("{", "").replace("}", "") + "}"




@lru_cache(maxsize=1024)
def unit_pretty(text: str) -> str:
    """A unit as written, in symbols: ``ohm*m`` -> ``Ω·m``, ``kg/m^3`` -> ``kg/m³``,
    ``degC`` -> ``°C`` (the order the person wrote is kept)."""
    out = []
    pos = 0
    t = _normalise(text)
    power = False
    while pos < len(t):
        m = _TOKEN.match(t, pos)
        if not m:
            return text
        tok = m.group(1)
        pos = m.end()
        if tok in ("**", "^"):
            power = True
            continue
        if power:
            power = False
            if re.fullmatch(r"-?[0-9]+", tok):
                out.append(tok.translate(SUPERSCRIPTS))
                continue
            out.append("^" + tok)
            continue
        if tok == "*":
            out.append("·")
        elif tok in ("/", "(", ")"):
            out.append(tok)
        elif re.fullmatch(r"[0-9.eE+-]+", tok):
            out.append(tok + " ")
        else:
            try:
                sym = format(registry().Unit(tok), "~P")
            except Exception:  # noqa: BLE001 - a word pint cannot read alone keeps the person's spelling
                sym = tok
            if sym.lower() == tok.lower():
                sym = tok  # keep the person's spelling: L, not l
            if out and out[-1] not in ("·", "/", "(") and not out[-1].endswith(" "):
                out.append("·")
            out.append(sym or tok)
    return "".join(out).replace(" ·", "·").replace(" /", "/").replace(" )", ")").strip()


# ------------------------------------------------------------------ reading a display back

_MANTISSA = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
#: A power of ten after a mantissa: ``e-6``, ``E+3``; ``×10⁻⁶`` as the product displays it
#: (``reckoner.display.num_text``); and as people type it: ``×10^-6``, ``x10^-6``, ``*10^-6``,
#: ``*10**-6``, ``·10⁻⁶``, ``×10^{-6}``, ``×10^(-6)``. ``3×10`` (no exponent) is no number.
_POWER = (r"(?:[eE][+-]?[0-9]+|[×xX*·⋅]10(?:⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+|(?:\^|\*\*)(?:[+-]?[0-9]+|\{[+-]?[0-9]+\}"
          r"|\([+-]?[0-9]+\))))")
_REAL_TEXT = rf"[+-]?{_MANTISSA}{_POWER}?"
_NUMBER_TEXT = re.compile(rf"(?:({_REAL_TEXT})(?=[+-]))?([+-]?(?:{_MANTISSA}{_POWER}?)?)([jJ]?)")


@dataclass(frozen=True)
class ReadNumber:
    """A number read from its text: ``value`` (float or complex, possibly infinite when the
    text overflows a double) and ``underflow`` (a part written with a non-zero digit came out
    as 0: below about 1e-308, too small for a double)."""

    value: float | complex
    underflow: bool


def read_number(text: str) -> ReadNumber | None:
    """A number as ``%%reckon`` displays it or as people type it, without spaces: ``2.05``,
    ``1.68e-8``, ``3.3006×10⁻⁶``, ``3.3006×10^-6``, ``3.3006*10^-6``, ``3.3006x10^-6``,
    ``3.3006·10⁻⁶``; complex ``3+4j``, ``-31.83j``, ``1.2×10³+4.5×10⁻²j``, ``j``; the
    typographic minus U+2212 as ``-``. ``None`` when *text* is none of these (``3×10``,
    ``×10⁻⁶``, ``nan``, ``1,5``). The one reader of numbers for ``given`` values, array
    elements and displays read back (:func:`shown_magnitude`)."""
    m = _NUMBER_TEXT.fullmatch(text.strip().replace("\u2212", "-"))
    if not m or not (m.group(1) or m.group(2) or m.group(3)):
        return None
    re_text, im_text, j = m.groups()
    if not j:
        if re_text or im_text in ("+", "-"):
            return None  # '2-3' is a subtraction, not a number
        parts = [im_text]
    else:
        im_text = im_text + "1" if im_text in ("", "+", "-") else im_text
        parts = [re_text or "0", im_text]
    values = [_real_value(p) for p in parts]
    underflow = any(v == 0 and re.search(r"[1-9]", re.split(r"[eE×xX*·⋅]", p, maxsplit=1)[0])
                    for p, v in zip(parts, values))
    return ReadNumber(values[0] if not j else complex(values[0], values[1]), underflow)


def _real_value(part: str) -> float:
    """One real number's text matched by ``_REAL_TEXT`` as a float (correctly rounded:
    ``3.3006×10⁻⁶`` is ``float('3.3006e-6')``)."""
    pieces = re.split(r"[eE]|[×xX*·⋅]10", part, maxsplit=1)
    if len(pieces) == 1:
        return float(part)
    return float(f"{pieces[0]}e{exponent_from_display(pieces[1])}")


def unit_from_display(text: str) -> str:
    """A displayed unit written back in pint's syntax: superscript exponents become ``^n``
    (``kg·m⁻³`` -> ``kg·m^-3``); :func:`parse_unit` reads the rest (``·``, ``Ω``, ``°C``)."""
    return _SUPER_RUN.sub(lambda m: "^" + m.group().translate(FROM_SUPERSCRIPTS), text.strip())


def exponent_from_display(text: str) -> str:
    """A power of ten's exponent as displayed or typed (``⁻⁶``, ``^{-6}``, ``−6``, ``^(-6)``,
    ``**-6``) as plain digits (``-6``)."""
    return re.sub(r"^\*\*|[\^{}()]", "", text).replace("\u2212", "-").translate(FROM_SUPERSCRIPTS)


def shown_magnitude(text: str) -> float | complex | list[Any] | None:
    """A number as ``%%reckon`` displays it (``0.12725``, ``3.3006×10⁻⁶``, ``10-31.83j``,
    ``[10, 62.5, 160]``) as a float, complex or list; ``None`` when it is not one (an array
    shortened with ``…`` is not)."""
    text = text.strip().replace("\u2212", "-")
    if text.startswith("["):
        if "…" in text or not text.endswith("]"):
            return None
        items = [shown_magnitude(t) for t in re.split(r",\s*(?![^\[]*\])", text[1:-1])] if text[1:-1].strip() else []
        return None if any(i is None for i in items) else items
    number = read_number(text)
    return None if number is None else number.value


def read_shown(text: str) -> tuple[Any, D.Dim] | None:
    """A value as ``%%reckon`` displays it, ``NUMBER [UNIT]`` (``0.12725 Ω``, ``3.3006×10⁻⁶ m²``,
    ``55 °C``, ``[1, 2.5, 4] A``, ``s⁻¹``), as ``(SI magnitude, dim)``: a float, complex or
    numpy array and the 7 exponents. ``None`` when it cannot be read back (a shortened array,
    an object, a unit pint does not know). ``verify`` compares a display made by an older
    renderer with its record this way (issue 15)."""
    text = text.strip()
    if text.startswith("["):
        end = text.rfind("]")
        number, unit = text[: end + 1], text[end + 1:]
    else:
        number, _, unit = text.partition(" ")
    mag = shown_magnitude(number)
    if mag is None:
        return None
    unit = unit_from_display(unit)
    try:
        info = parse_unit(unit)
        value = np.array(mag, dtype=complex if any(isinstance(x, complex) for x in np.ravel(mag)) else float) \
            if isinstance(mag, list) else mag
        return to_si(value, info), info.dim
    except (UnitError, ValueError, TypeError):
        return None
