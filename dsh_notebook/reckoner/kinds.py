"""Temperature points and differences: the rules of engine rules version 2 (issue 17; spec:
reckoner.md section 1, "Offset temperatures"; anchors: pint's ``OffsetUnitCalculusError`` and
mp-units' quantity points with origins).

The 7-integer vector cannot tell 20 °C (a point on a scale) from 20 K of warming (a
difference). A value's ``Sig.temp`` says which: ``"degC"``/``"degF"`` (a point, and the scale
it was given in), ``"delta"`` (a difference), or ``""`` (no kind: any non-temperature value,
or a thermodynamic temperature in K or degR, which acts as either: its origin is absolute
zero). Magnitudes are always in SI (K from absolute zero for points), so the rules decide
only what a result *is* and what is refused; they never change a number.

* ``+``/``-``: point - point = difference; point ± difference = point; difference ±
  difference = difference; point + point is refused. A K operand beside a point acts as a
  difference (``80 degC - 5 K`` is 75 °C), except ``K - point``, where it is the point.
* A product or quotient chain is judged as a whole: a Celsius or Fahrenheit point scaled
  only by dimensionless factors (``2*@T``, ``@T/2``, ``-@T``) is refused; with any other
  dimensional factor (``@p/(@R*@T)``) the point counts by its thermodynamic value.
* Powers, roots and other functions use thermodynamic values; ``$min``/``$max`` keep a
  shared kind; ``$abs``, ``$re``, ``$im``, ``$conj``, ``$mod`` of a Celsius point are
  refused (they would act on the scale's number, not the temperature); ``$sum`` of points
  is refused, ``$seq`` keeps the kind.
"""

from __future__ import annotations

from ..version import ENGINE_RULES
from .errors import INCOMPATIBLE_DIMENSION, EngineError
from .values import DELTA, POINT_SCALES

RULES = ENGINE_RULES  #: the engine-rules version that tracks temperature kinds (1: records written before them)

_SCALE_NAME = {"degC": "°C", "degF": "°F"}


def is_point(temp: str) -> bool:
    """A point on the Celsius or Fahrenheit scale."""
    return temp in POINT_SCALES


def describe(temp: str) -> str:
    """A kind in words, for messages."""
    if is_point(temp):
        return f"a temperature point (a reading in {_SCALE_NAME[temp]})"
    if temp == DELTA:
        return "a temperature difference"
    return "a thermodynamic temperature (K)"


def addsub(op: str, left: str, right: str, lsrc: str, rsrc: str) -> tuple[str, str | None]:
    """The kind of ``left op right`` for two temperatures: ``(temp, side)`` where *side* is
    ``"left"``/``"right"`` when that operand, a K value without kind, acts as a difference (the
    working says so), else ``None``. Raises ``ENGINE_INCOMPATIBLE_DIMENSION`` for point + point
    and difference - point."""
    lp, rp = is_point(left), is_point(right)
    if op == "+":
        if lp and rp:
            raise EngineError(
                INCOMPATIBLE_DIMENSION,
                f"'+' adds two temperature points ({lsrc} and {rsrc}); readings on a scale do not add (20 °C + 20 °C "
                "is not 40 °C). Add a difference to a point instead, e.g. @T1 + (@T2 - @T1), or for a mean "
                "write @T1 + (@T2 - @T1)/2.",
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
                f"'-' subtracts the temperature point {rsrc} from the difference {lsrc}; that is not a temperature. "
                "Write the point first: point - difference is a point.",
            )
        return DELTA, None  # a K value minus a point: the K value is the other point
    if left == DELTA and right == DELTA:
        return DELTA, None
    if left == DELTA and not right:
        return DELTA, "right"  # difference - K: the K value can only be a difference
    return "", None


def chain(result_dim_is_temperature: bool, dimensional: list[tuple[str, str]], src: str) -> str:
    """The kind of a product/quotient chain: *dimensional* lists ``(temp, source)`` of its factors
    that carry a dimension. Raises for a Celsius or Fahrenheit point scaled only by
    dimensionless factors."""
    if len(dimensional) != 1:
        return ""  # several dimensional factors: thermodynamic values, no kind
    temp, fsrc = dimensional[0]
    if is_point(temp):
        if result_dim_is_temperature:
            raise EngineError(
                INCOMPATIBLE_DIMENSION,
                f"{src} scales the temperature point {fsrc} ({_SCALE_NAME[temp]}) by a plain number; that multiplies "
                f"the scale's reading, which depends on where the scale starts (2 × 10 °C is not 20 °C). Scale a "
                f"difference instead (e.g. 2*(@T - @T0)); for the thermodynamic temperature, give the value in K.",
            )
        return ""  # 1/@T: the reciprocal of the thermodynamic temperature
    if temp == DELTA and result_dim_is_temperature:
        return DELTA
    return ""


def same_function(name: str, temp: str, src: str) -> str:
    """``$abs``, ``$re``, ``$im``, ``$conj``, ``$mod``: a difference stays one; a point is refused."""
    if is_point(temp):
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"${name} of the temperature point {src} would act on the {_SCALE_NAME[temp]} reading, whose zero is "
            f"arbitrary; apply it to a difference (e.g. ${name}(@T - @T0)) or to a temperature in K.",
        )
    return temp


def minmax(name: str, a: str, b: str, src: str) -> str:
    """``$min``/``$max`` keep a shared kind; a point beside a K value is a point; a point beside a
    difference is refused."""
    if a == b:
        return a
    if is_point(a) and is_point(b):
        return a
    if (is_point(a) and b == DELTA) or (is_point(b) and a == DELTA):
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"${name} in {src} compares a temperature point with a temperature difference; compare two points or "
            "two differences.",
        )
    if is_point(a) or is_point(b):
        return a if is_point(a) else b
    return ""


def fold_sum(temp: str, src: str) -> str:
    """``$sum`` of points is refused (point + point); of differences, a difference."""
    if is_point(temp):
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"{src} sums temperature points; readings on a scale do not add. Sum differences, or for a mean of "
            "points add the mean of their differences to one point.",
        )
    return temp


def neg(temp: str, src: str) -> str:
    """``-x``: a point negated is refused (it is scaled by -1); a difference stays one."""
    if is_point(temp):
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"-{src} negates the temperature point {src}; the negative of a reading on a scale is not a temperature. "
            "Negate a difference instead (e.g. -(@T - @T0)).",
        )
    return temp
