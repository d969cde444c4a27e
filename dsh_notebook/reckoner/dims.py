"""SI vectors and the 24-row name table (spec: reckoner.md section 1; upstream-facts.md 3.5, 3.8).

* A dimension is a tuple of 7 exponents in ISO 80000-1 order (m, kg, s, A, K, mol, cd).
  Stored values always have integer exponents; intermediates may carry fractions
  (:class:`fractions.Fraction`), e.g. ``$sqrt(@A)`` of an area during evaluation.
* The vector is the value's whole identity; the table's names are labels for people and
  the one affine map the engine knows (``degC``: SI = x + 273.15).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import SupportsInt

from .errors import INVALID_DIMENSION, EngineError

#: 7 exponents (m, kg, s, A, K, mol, cd): ints in stored values, Fractions possible in intermediates
Dim = tuple[int | Fraction, ...]

ZERO: Dim = (0, 0, 0, 0, 0, 0, 0)
BASE_SYMBOLS = ("m", "kg", "s", "A", "K", "mol", "cd")

#: (vector, kind, names, affine maps {name: (factor, offset)}), upstream order.
_ROWS: list[tuple[Dim, str, tuple[str, ...]]] = [
    ((0, 0, 0, 0, 0, 0, 0), "dim-less", ("dim-less", "radian", "steradian")),
    ((0, 0, 1, 0, 0, 0, 0), "time", ("second",)),
    ((1, 0, 0, 0, 0, 0, 0), "length", ("metre",)),
    ((0, 1, 0, 0, 0, 0, 0), "mass", ("kilogram",)),
    ((0, 0, 0, 1, 0, 0, 0), "current", ("ampere",)),
    ((0, 0, 0, 0, 1, 0, 0), "temperature", ("kelvin", "degC")),
    ((0, 0, 0, 0, 0, 1, 0), "amount-of-substance", ("mole",)),
    ((0, 0, 0, 0, 0, 0, 1), "luminous-intensity", ("candela", "lumen")),
    ((0, 0, -1, 0, 0, 0, 0), "frequency", ("hertz", "becquerel")),
    ((1, 1, -2, 0, 0, 0, 0), "force", ("newton",)),
    ((-1, 1, -2, 0, 0, 0, 0), "pressure", ("pascal",)),
    ((2, 1, -2, 0, 0, 0, 0), "energy", ("joule",)),
    ((2, 1, -3, 0, 0, 0, 0), "power", ("watt",)),
    ((0, 0, 1, 1, 0, 0, 0), "charge", ("coulomb",)),
    ((2, 1, -3, -1, 0, 0, 0), "voltage", ("volt",)),
    ((-2, -1, 4, 2, 0, 0, 0), "capacitance", ("farad",)),
    ((2, 1, -3, -2, 0, 0, 0), "resistance", ("ohm",)),
    ((-2, -1, 3, 2, 0, 0, 0), "conductance", ("siemens",)),
    ((2, 1, -2, -2, 0, 0, 0), "inductance", ("henry",)),
    ((2, 1, -2, -1, 0, 0, 0), "magnetic-flux", ("weber",)),
    ((0, 1, -2, -1, 0, 0, 0), "flux-density", ("tesla",)),
    ((-2, 0, 0, 0, 0, 0, 1), "illuminance", ("lux",)),
    ((2, 0, -2, 0, 0, 0, 0), "absorbed-dose", ("gray", "sievert")),
    ((0, 0, -1, 0, 0, 1, 0), "catalytic-activity", ("katal",)),
]

#: name -> (vector, factor, offset)
NAMES: dict[str, tuple[Dim, float, float]] = {}
#: vector -> first name of its row
FIRST_NAME: dict[Dim, str] = {}
#: vector -> kind label
KIND: dict[Dim, str] = {}
for _vec, _kind, _names in _ROWS:
    FIRST_NAME[_vec] = _names[0]
    KIND[_vec] = _kind
    for _n in _names:
        NAMES[_n] = (_vec, 1.0, 273.15 if _n == "degC" else 0.0)
TABLE_ROWS = tuple(_ROWS)
del _vec, _kind, _names, _n


def is_integral(d: Dim) -> bool:
    """True when every exponent is a whole number (a vector a slot may hold)."""
    return all(isinstance(x, int) or (isinstance(x, Fraction) and x.denominator == 1) for x in d)


def _norm(x: int | Fraction) -> int | Fraction:
    if isinstance(x, Fraction) and x.denominator == 1:
        return int(x)
    return x


def add(a: Dim, b: Dim) -> Dim:
    """The vector of a product: exponents added."""
    return tuple(_norm(x + y) for x, y in zip(a, b))


def sub(a: Dim, b: Dim) -> Dim:
    """The vector of a quotient: exponents subtracted."""
    return tuple(_norm(x - y) for x, y in zip(a, b))


MAX_EXPONENT = 1000  # a stored vector's components stay within +-1000


def scale(a: Dim, p: float | Fraction) -> Dim:
    """``a`` times a real exponent ``p`` (float, int or Fraction).

    A float exponent that is a simple fraction written in decimal (0.5, 1/3 as
    0.333...) counts as that fraction; any other float keeps its exact binary value, so
    ``@L^1.0000001`` has a fractional vector and is refused, never rounded to metres.
    """
    if a == ZERO:
        return ZERO
    if not isinstance(p, (int, Fraction)):
        p = float(p)
        near = Fraction(p).limit_denominator(1000)
        p = near if abs(float(near) - p) <= 1e-12 * max(1.0, abs(p)) else Fraction(p)
    return tuple(_norm(x * p) for x in a)


def _comp(x: float | Fraction) -> str:
    if not -(10**9) <= x <= 10**9:  # |x| > 10**9
        return "(huge)"
    if isinstance(x, Fraction) and x.denominator > 10**6:
        return f"{float(x):.9g}"
    return str(x)


def fmt(d: Dim) -> str:
    """``[2,1,-3,-2,0,0,0]``; fractional exponents as ``1/2``."""
    return "[" + ",".join(_comp(x) for x in d) + "]"


def describe(d: Dim) -> str:
    """A vector for messages: ``[2,1,-3,-2,0,0,0] (ohm)`` or ``[1,0,-1,0,0,0,0]``."""
    name = FIRST_NAME.get(d)
    return f"{fmt(d)} ({name})" if name else fmt(d)


def name_or_ints(d: Dim) -> str | list[int]:
    """The receipt form of a vector: its row's first name, else the 7 integers."""
    name = FIRST_NAME.get(d)
    return name if name is not None else [int(x) for x in d]


def parse_dim(spec: object) -> tuple[Dim, float, float]:
    """Read a ``dim`` argument: a table name, 7 integers, or ``None`` (dimensionless).

    Returns ``(vector, factor, offset)``; SI = x * factor + offset.
    Raises :class:`EngineError` ``ENGINE_INVALID_DIMENSION`` naming what was given.
    """
    if spec is None:
        return ZERO, 1.0, 0.0
    if type(spec) is list and len(spec) == 7 and all(type(x) is int and -MAX_EXPONENT <= x <= MAX_EXPONENT for x in spec):
        return tuple(spec), 1.0, 0.0  # the common stored form, already valid
    if isinstance(spec, str):
        if spec in NAMES:
            return NAMES[spec]
        raise EngineError(
            INVALID_DIMENSION,
            f"dim {spec!r} is not a name in the SI table; use one of {', '.join(NAMES)}, "
            "or give the 7 integer exponents [m,kg,s,A,K,mol,cd], e.g. [1,0,-1,0,0,0,0] for m/s.",
        )
    if isinstance(spec, (list, tuple)):
        if len(spec) != 7:
            raise EngineError(
                INVALID_DIMENSION,
                f"dim {_short(spec)} has {len(spec)} entries; a dimension is exactly 7 integer exponents "
                "in the order [m,kg,s,A,K,mol,cd], e.g. [2,1,-3,-2,0,0,0] for ohm.",
            )
        out = []
        for x in spec:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or (isinstance(x, float) and not x.is_integer()):
                raise EngineError(
                    INVALID_DIMENSION,
                    f"dim {_short(spec)} has the component {x!r}, which is not an integer; "
                    "each of the 7 exponents [m,kg,s,A,K,mol,cd] must be a whole number.",
                )
            if abs(x) > MAX_EXPONENT:
                raise EngineError(
                    INVALID_DIMENSION,
                    f"dim has the exponent {_comp(x)}, beyond +-{MAX_EXPONENT}; no physical quantity has it, "
                    "check the 7 exponents [m,kg,s,A,K,mol,cd].",
                )
            out.append(int(x))
        return tuple(out), 1.0, 0.0
    raise EngineError(
        INVALID_DIMENSION,
        f"dim {_short(spec)} is neither a table name (such as 'ohm') nor a list of 7 integers; "
        "give one of those, or leave dim out for a dimensionless value.",
    )


def _short(x: object) -> str:
    try:
        s = repr(x)
    except ValueError:  # an integer too long to print
        return "(a very large number)"
    return s if len(s) <= 60 else s[:57] + "..."


def from_ints(xs: Iterable[SupportsInt]) -> Dim:
    """A vector from 7 integer-valued numbers."""
    return tuple(int(x) for x in xs)


def as_list(d: Sequence[int | Fraction]) -> list[int]:
    """A whole-number vector as the 7 ints of a receipt (``dim`` in the stored form)."""
    return [int(x) for x in d]
