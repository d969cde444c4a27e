"""Temperature points and differences: the rules of engine rules version 2 (issue 17; spec:
reckoner.md section 1, "Offset temperatures"; anchors: pint's ``OffsetUnitCalculusError`` and
mp-units' quantity points with origins).

The 7-integer vector cannot tell 20 °C (a point on a scale) from 20 K of warming (a
difference). A value's ``Sig.temp`` says which: ``"degC"``/``"degF"`` (a point, and the scale
it was given in), ``"K"`` (a point on the thermodynamic scale, computed from a point:
``@p/(@rho*@R)``, ``@T^1``), ``"delta"`` (a difference), or ``""`` (no kind: any
non-temperature value, or a temperature given in K or degR, which acts as either: its origin
is absolute zero). Magnitudes are always in SI (K from absolute zero for points), so the rules
decide only what a result *is* and what is refused; they never change a number. Within one
formula ``"~"`` marks a non-temperature value computed from a point (``@m*@T``), so that
``(@m1*@T1 + @m2*@T2)/(@m1 + @m2)`` is a point again; it is never stored.

* ``+``/``-``: point - point = difference; point ± difference = point; difference ±
  difference = difference; point + point is refused. A K operand beside a point acts as a
  difference (``80 degC - 5 K`` is 75 °C), except ``K - point``, where it is the point.
* A product or quotient chain is judged as a whole: a Celsius or Fahrenheit point scaled
  only by plain numbers (``2*@T``, ``@T/2``, ``-@T``, ``@T*@k`` with ``k`` dimensionless) is
  refused; beside any factor that reads a dimensional slot (``@p/(@R*@T)``,
  ``@T*(@p2/@p1)^0.286``) the point counts by its thermodynamic value, and a temperature result
  is a point in K.
* A point result below absolute zero is refused (a K value of unknown kind taken as a
  difference where it was a point: ``20 degC - 323.15 K``).
* Powers, roots and other functions use thermodynamic values; ``$min``/``$max`` keep a
  shared kind; ``$abs``, ``$re``, ``$im``, ``$conj``, ``$mod`` of a Celsius point are
  refused (they would act on the scale's number, not the temperature); ``$sum`` of points
  is refused, ``$seq`` keeps the kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..version import ENGINE_RULES
from .errors import INCOMPATIBLE_DIMENSION, INVALID_ARGS, EngineError
from .values import DELTA, OBJECT, POINT_SCALES, TEMPERATURE, Value, short

RULES = ENGINE_RULES  #: the engine-rules version that tracks temperature kinds (1: records written before them)

POINTS = (*POINT_SCALES, "K")  #: the kinds that are points (a reading on a scale)
TAINT = "~"  #: a non-temperature value computed from a point, within one formula (never stored)
TAINT_DELTA = "~d"  #: the same computed from a difference (``@m*@T1 - @m*@T2``, ``@m*@cp*@dT``)
_SCALE_NAME = {"degC": "°C", "degF": "°F", "K": "K"}
#: an operand's source text for a message, computed only when a message is written
Src = str | Callable[[], str]


def _s(src: Src) -> str:
    return src() if callable(src) else src


def is_point(temp: str) -> bool:
    """A point on the Celsius, Fahrenheit or thermodynamic scale."""
    return temp in POINTS


def is_offset_point(temp: str) -> bool:
    """A point on a scale whose zero is not absolute zero (Celsius, Fahrenheit)."""
    return temp in POINT_SCALES


def describe(temp: str) -> str:
    """A kind in words, for messages."""
    if is_point(temp):
        return f"a temperature point (a reading in {_SCALE_NAME[temp]})"
    if temp == DELTA:
        return "a temperature difference"
    return "a thermodynamic temperature (K)"


def addsub(op: str, left: str, right: str, lsrc: Src, rsrc: Src) -> tuple[str, str | None]:
    """The kind of ``left op right`` for two values of one vector: ``(temp, side)`` where *side* is
    ``"left"``/``"right"`` when that operand, a K value without kind, acts as a difference (the
    working says so), else ``None``. Raises ``ENGINE_INCOMPATIBLE_DIMENSION`` for point + point
    and difference - point."""
    if left in (TAINT, TAINT_DELTA) or right in (TAINT, TAINT_DELTA):
        # non-temperature values computed from points (weight 1) or differences (weight 0):
        # ~ - ~ is computed from a difference, ~ ± ~d from a point
        w = {TAINT: 1, TAINT_DELTA: 0}
        lw, rw = w.get(left), w.get(right)
        if lw is None or rw is None:
            return "", None
        total = lw + rw if op == "+" else lw - rw
        return {1: TAINT, 0: TAINT_DELTA}.get(total, TAINT), None
    lp, rp = is_point(left), is_point(right)
    if op == "+":
        if lp and rp:
            raise EngineError(
                INCOMPATIBLE_DIMENSION,
                f"'+' adds two temperature points ({_s(lsrc)} and {_s(rsrc)}); readings on a scale do not add (20 °C + 20 °C "
                "is not 40 °C). Add a difference to a point instead, e.g. @T1 + (@T2 - @T1), or for a mean "
                "write @T1 + (@T2 - @T1)/2; where a difference follows, group it: @T + (@T1 - @T2).",
            )
        if lp or rp:
            other = right if lp else left
            scale = left if lp else right
            side = None if other else ("right" if lp else "left")
            return scale, side  # point + difference (or + a K value acting as one)
        if left == DELTA and right == DELTA:
            return DELTA, None
        return "", None
    if lp and rp:
        return DELTA, None
    if lp:
        return left, (None if right else "right")  # point - difference
    if rp:
        if left == DELTA:
            raise EngineError(
                INCOMPATIBLE_DIMENSION,
                f"'-' subtracts the temperature point {_s(rsrc)} from the difference {_s(lsrc)}; that is not a temperature. "
                "Write the point first: point - difference is a point.",
            )
        return DELTA, None  # a K value minus a point: the K value is the other point
    if left == DELTA and right == DELTA:
        return DELTA, None
    if left == DELTA and not right:
        return DELTA, "right"  # difference - K: the K value can only be a difference
    return "", None


def chain(result_is_temperature: bool, factors: list[tuple[str, bool, Src]], src: Src) -> str:
    """The kind of a product/quotient chain. *factors* lists ``(temp, physical, source)`` of its
    factors, *physical* when the factor reads a dimensional slot (``@p``, ``(@p2/@p1)^k``) or
    has a dimension. Raises for a Celsius or Fahrenheit point scaled only by plain numbers."""
    physical = [(t, s) for t, p, s in factors if p]
    points = [t for t, _ in physical if is_point(t) or t == TAINT]
    deltas = [t for t, _ in physical if t in (DELTA, TAINT_DELTA)]
    if not result_is_temperature:
        return TAINT if points and not deltas else TAINT_DELTA if deltas and not points else ""
    if len(physical) == 1:
        temp, fsrc = physical[0]
        if is_offset_point(temp):
            raise EngineError(
                INCOMPATIBLE_DIMENSION,
                f"{_s(src)} scales the temperature point {_s(fsrc)} ({_SCALE_NAME[temp]}) by a plain number; that multiplies "
                f"the scale's reading, which depends on where the scale starts (2 × 10 °C is not 20 °C). Scale a "
                f"difference instead (e.g. 2*(@T - @T0)); for the thermodynamic temperature, give the value in K.",
            )
        if temp in ("K", TAINT):
            return "K"  # a K point stays one
        return DELTA if temp in (DELTA, TAINT_DELTA) else temp
    if points and not deltas:
        return "K"  # a point by its thermodynamic value, beside other quantities: a point in K
    if deltas and not points:
        return DELTA
    return ""


def power(base: str, result_is_temperature: bool) -> str:
    """``x^p``, ``$sqrt``, ``$prod``: a point or a value computed from one gives a point in K when
    the result is a temperature (``@T^1``, ``$sqrt(@T^2)``), else a value computed from a point."""
    if is_point(base) or base == TAINT:
        return "K" if result_is_temperature else TAINT
    if base in (DELTA, TAINT_DELTA):
        return DELTA if result_is_temperature else TAINT_DELTA  # $sqrt(@d^2): a difference again
    return ""


def same_function(name: str, temp: str, src: Src) -> str:
    """``$abs``, ``$re``, ``$im``, ``$conj``, ``$mod``: a difference stays one; a Celsius or
    Fahrenheit point is refused."""
    if is_offset_point(temp):
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"${name} of the temperature point {_s(src)} would act on the {_SCALE_NAME[temp]} reading, whose zero is "
            f"arbitrary; apply it to a difference (e.g. ${name}(@T - @T0)) or to a temperature in K.",
        )
    return temp


def minmax(name: str, a: str, b: str, src: Src) -> str:
    """``$min``/``$max`` keep a shared kind; a point beside a K value is a point; a point beside a
    difference is refused."""
    if a == b:
        return a
    if TAINT in (a, b):
        return TAINT
    if is_point(a) and is_point(b):
        return a
    if (is_point(a) and b == DELTA) or (is_point(b) and a == DELTA):
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"${name} in {_s(src)} compares a temperature point with a temperature difference; compare two points or "
            "two differences.",
        )
    if is_point(a) or is_point(b):
        return a if is_point(a) else b
    return ""


def fold_sum(temp: str, src: Src) -> str:
    """``$sum`` of points is refused (point + point); of differences, a difference."""
    if is_point(temp):
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"{_s(src)} sums temperature points; readings on a scale do not add. Sum differences, or for a mean of "
            "points add the mean of their differences to one point.",
        )
    return temp


def neg(temp: str, src: Src) -> str:
    """``-x``: a point negated is refused (it is scaled by -1); a difference stays one."""
    if is_point(temp):
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"-{_s(src)} negates the temperature point {_s(src)}; the negative of a reading on a scale is not a temperature. "
            "Negate a difference instead (e.g. -(@T - @T0)).",
        )
    return temp


def declare(value: Value, kind: object, scale: object) -> Value:
    """*value* with the kind its ``eval`` declared (``kind`` ``"point"`` with ``scale`` degC, degF or
    K, or ``"difference"``): how a temperature computed without a kind (``@p/(@rho*@R)``,
    ``@Q/(@m*@c)``) is told to be a point or a difference. A result that already has a kind must
    agree (a point may change its display scale). Raises :class:`EngineError`."""
    if kind not in ("point", "difference"):
        raise EngineError(INVALID_ARGS, f"kind {short(kind)} is not a temperature's kind; give 'point' (with scale) "
                                        "or 'difference', or leave it out.")
    if kind == "difference" and scale is not None:
        raise EngineError(INVALID_ARGS, f"scale {short(scale)} goes with kind 'point'; a difference has no scale.")
    if kind == "point" and scale not in POINTS:
        raise EngineError(INVALID_ARGS, f"scale {short(scale)}: a point's scale is 'degC', 'degF' or 'K'.")
    if value.sig.kind == OBJECT or tuple(value.sig.dim) != TEMPERATURE:
        raise EngineError(INCOMPATIBLE_DIMENSION, "kind is declared for a result that is not a temperature "
                                                  "[0,0,0,0,1,0,0]; only a temperature is a point or a difference.")
    want = DELTA if kind == "difference" else str(scale)
    have = value.sig.temp
    if have and (have == DELTA) != (want == DELTA):
        raise EngineError(INCOMPATIBLE_DIMENSION, f"the result is {describe(have)}, but it is declared "
                                                  f"{'a difference' if want == DELTA else 'a point'}; nothing was "
                                                  "written.")
    return Value(value.mag, replace(value.sig, temp=want))


def below_absolute_zero(kelvin: float, temp: str, src: str) -> EngineError:
    """The refusal of a point result below absolute zero (*kelvin* < 0)."""
    shown = f"{kelvin - 273.15:.6g} °C" if temp == "degC" else f"{kelvin * 1.8 - 459.67:.6g} °F" \
        if temp == "degF" else f"{kelvin:.6g} K"
    return EngineError(
        INCOMPATIBLE_DIMENSION,
        f"{src} is a temperature point below absolute zero ({shown}); no temperature is. A K value without kind "
        "beside a point is taken as a difference: if it is a temperature point, give it in degC (or compute it "
        "from one), and point - point is then a difference.",
    )
