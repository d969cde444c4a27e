"""Values: the four kinds, the tagged input forms and the receipt renderings
(spec: reckoner.md section 1; upstream-facts.md 3.4).

* A :class:`Value` is raw magnitudes in SI plus a :class:`Sig` (its static signature):
  a real or complex scalar (``float``/``complex``), an array (a rectangular
  :class:`numpy.ndarray`, float64 or complex128, one vector for every element), or an
  object (``dict`` field -> magnitude, one signature per field and none of its own).
* ``parse_tagged`` reads a ``set`` argument (``num``, ``re``/``im``, ``mag``/``ang``,
  ``array``, ``object``, optional ``dim``) and refuses anything else with a receipt code.
* ``render`` writes a value back as a receipt (``get``'s ``form``/``digits``/``dim``) or as
  the stored form used by ``set`` receipts and trace rows (``dim`` as 7 integers).
* Arrays must be rectangular (upstream allows ragged nesting; we refuse it with
  ``ENGINE_INVALID_ARGS`` because every numpy operation needs a shape).
* Temperature kinds (issue 17, engine rules 2): a value with the temperature vector
  [0,0,0,0,1,0,0] may be a *point* on the Celsius or Fahrenheit scale or a *difference*;
  without a kind it is a thermodynamic temperature in K, which acts as either. The kind
  travels beside the vector as the optional tags ``kind`` (``"point"``/``"difference"``) and
  ``scale`` (``"degC"``/``"degF"``, points only); the magnitude stays in SI (K) either way.
  ``dim: "degC"`` alone gives a point on the Celsius scale.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, overload

import numpy as np
import numpy.typing as npt

from . import dims as D
from .errors import (
    FIELD_NOT_FOUND,
    INCOMPATIBLE_DIMENSION,
    INVALID_ARGS,
    INVALID_DIMENSION,
    INVALID_IDENTIFIER,
    UNDEFINED_RESULT,
    EngineError,
)

SCALAR, ARRAY, OBJECT = "scalar", "array", "object"
TAG_KEYS = ("num", "re", "im", "mag", "ang", "array", "object", "dim", "kind", "scale")
#: ``Sig.temp``: "" (no kind: any other value, or a temperature given in K, which acts as either), a
#: point's scale ("degC", "degF"; "K" for a point on the thermodynamic scale) or DELTA (a difference)
POINT_SCALES = ("degC", "degF")  # the scales whose zero is not absolute zero: values show on them
DELTA = "delta"
TEMPERATURE: D.Dim = (0, 0, 0, 0, 1, 0, 0)

#: A magnitude in SI: ``float`` or ``complex`` (a scalar), an :data:`Array`, or for an object a
#: ``dict`` field -> magnitude. The evaluator's closures compute them dynamically.
Magnitude: TypeAlias = Any
#: An array magnitude: float64 or complex128, any number of dimensions, read-only once stored.
Array: TypeAlias = npt.NDArray[np.float64] | npt.NDArray[np.complex128]
#: A scalar leaf: a Python or numpy real or complex number.
Scalar: TypeAlias = complex | np.number[Any]
#: Array elements as parsed from JSON: numbers, possibly nested in lists.
Nested: TypeAlias = float | complex | list["Nested"]
#: ``get``'s ``form``: rectangular or polar (radians) complex rendering.
Form: TypeAlias = Literal["rect", "polar"]
#: A ``dim`` as a receipt gives it: a table name or the 7 integer exponents.
DimOut: TypeAlias = str | list[int]


@dataclass(frozen=True, slots=True)
class Sig:
    """A value's static signature: kind, vector, array depth, object fields.

    Two values with equal signatures pass the same dimension checks, so a formula's
    check is cached on the signatures of the slots it reads.
    """

    kind: str
    dim: D.Dim = D.ZERO
    ndim: int = 0
    fields: tuple[tuple[str, Sig], ...] = ()  # ((name, Sig), ...) for objects
    temp: str = ""  # a temperature's kind: "" (none / thermodynamic), "degC"/"degF" (a point), "delta"
    _hash: int = dataclasses.field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.kind, self.dim, self.ndim, self.fields, self.temp)))

    def __hash__(self) -> int:
        # computed once: signatures key the display and check caches, hashed on every lookup
        return self._hash

    def __reduce__(self) -> tuple[type[Sig], tuple[str, D.Dim, int, tuple[tuple[str, Sig], ...], str]]:
        # a copy or an unpickled signature hashes again (a str's hash differs from process to process)
        return Sig, (self.kind, self.dim, self.ndim, self.fields, self.temp)

    def field(self, name: str) -> Sig | None:
        """The signature of the object field *name*, or ``None`` when there is no such field."""
        for n, s in self.fields:
            if n == name:
                return s
        return None


SCALAR_ZERO = Sig(SCALAR, D.ZERO)


@dataclass(slots=True)
class Value:
    """Magnitudes in SI plus a :class:`Sig`. Treated as immutable (arrays are read-only)."""

    mag: Magnitude
    sig: Sig

    @property
    def dim(self) -> D.Dim:
        """The value's vector (``sig.dim``)."""
        return self.sig.dim


def check_name(name: object, what: str = "name") -> str:
    """Enforce the name rule (a letter or ``_``, then letters, digits, ``_``; ASCII): returns
    *name*, or raises :class:`EngineError` ``ENGINE_INVALID_IDENTIFIER``."""
    if not isinstance(name, str):
        raise EngineError(
            INVALID_IDENTIFIER,
            f"the {what} {short(name)} is not a string; give a bare name such as 'R_load' "
            "(a letter or _, then letters, digits or _).",
        )
    if not (name.isascii() and name.isidentifier()):  # in ASCII, exactly [A-Za-z_][A-Za-z0-9_]*
        hint = " (write it without the @)" if name.startswith("@") else ""
        raise EngineError(
            INVALID_IDENTIFIER,
            f"the {what} {name!r} breaks the name rule: it must be a letter or _ followed by "
            f"ASCII letters, digits or _{hint}.",
        )
    return name


def short(x: object, limit: int = 60) -> str:
    """``repr(x)`` for a message, cut to *limit* characters; never raises."""
    try:
        s = repr(x)
    except ValueError:  # an integer too long to print
        return "(a very large number)"
    except Exception:  # noqa: BLE001 - the repr of an exotic object may raise anything  # pragma: no cover
        s = object.__repr__(x)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _finite_number(x: object, where: str) -> float:
    if isinstance(x, bool) or (not isinstance(x, (int, float)) and not isinstance(x, (np.integer, np.floating))):
        raise EngineError(
            INVALID_ARGS,
            f"{where} is {short(x)}, which is not a number; numeric positions take finite JSON numbers only.",
        )
    try:
        v = float(x)
    except OverflowError:
        raise EngineError(
            INVALID_ARGS, f"{where} is an integer too large for a double-precision number; give a finite number."
        ) from None
    if not math.isfinite(v):
        raise EngineError(
            INVALID_ARGS,
            f"{where} is {short(x)}; only finite numbers can be stored (no NaN or infinity).",
        )
    return v


def _pair(obj: dict[str, Any], a: str, b: str, where: str) -> complex:
    if a in obj and b not in obj:
        raise EngineError(INVALID_ARGS, f"{where} gives {a!r} without {b!r}; a {a}/{b} pair needs both halves.")
    if b in obj and a not in obj:
        raise EngineError(INVALID_ARGS, f"{where} gives {b!r} without {a!r}; a {a}/{b} pair needs both halves.")
    x = _finite_number(obj[a], f"{where}.{a}")
    y = _finite_number(obj[b], f"{where}.{b}")
    if a == "re":
        return complex(x, y)
    return complex(x * math.cos(y), x * math.sin(y))


def parse_tagged(value: object, kinds: bool = True) -> Value:
    """Read a ``set`` value (a tagged JSON object) into SI.

    Shapes: ``{"num": x}``, ``{"re": a, "im": b}``, ``{"mag": r, "ang": theta}`` (radians),
    ``{"array": [...]}``, ``{"object": {field: tagged}}``, each with optional ``dim``
    (table name or 7 integers; not beside ``object``) and, for a temperature, optional
    ``kind`` (``"point"`` with ``scale`` ``"degC"``/``"degF"``, or ``"difference"``; issue 17).
    With 7 integers the number is in SI (K); ``dim: "degC"`` converts from Celsius and
    makes a point, or with ``kind: "difference"`` a difference (no offset).
    ``kinds=False`` (engine rules 1, records written before kinds) reads ``kind``/``scale``
    as absent. Raises :class:`EngineError` (``ENGINE_INVALID_ARGS``,
    ``ENGINE_INVALID_DIMENSION``, ``ENGINE_INVALID_IDENTIFIER``).
    """
    return _parse_tagged(value, "value", kinds)


def _temp_of(value: dict[str, Any], vec: D.Dim, offset: float, where: str, kinds: bool) -> tuple[str, float]:
    """The temperature kind a tagged value asks for, and the offset to apply: ``(temp, offset)``."""
    kind, scale = value.get("kind"), value.get("scale")
    if scale is not None and kind is None:
        raise EngineError(INVALID_ARGS, f"{where} gives scale {short(scale)} without kind; a scale belongs to "
                                        'a temperature point: {"kind": "point", "scale": "degC"}.')
    if not kinds:
        return "", offset
    if kind is None:
        return ("degC" if offset else ""), offset
    if kind not in ("point", "difference"):
        raise EngineError(INVALID_ARGS, f"{where}.kind is {short(kind)}; a temperature's kind is 'point' (a reading "
                                        "on a scale) or 'difference'.")
    if tuple(vec) != TEMPERATURE:
        raise EngineError(
            INVALID_DIMENSION,
            f"{where} gives kind {kind!r} to the vector {D.describe(vec)}; only a temperature [0,0,0,0,1,0,0] is a "
            "point or a difference: leave kind out.",
        )
    if kind == "difference":
        if scale is not None:
            raise EngineError(INVALID_ARGS, f"{where} gives a difference the scale {short(scale)}; a difference has "
                                            "no scale (its magnitude is in K): leave scale out.")
        return DELTA, 0.0  # 5 degC as a difference is 5 K: never shifted by 273.15
    named = "degC" if offset else None
    if scale is None:
        if named is None:
            raise EngineError(INVALID_ARGS, f"{where} is a point without its scale; give scale 'degC' or 'degF' "
                                            "(a thermodynamic temperature in K needs no kind).")
        scale = named
    if scale not in (*POINT_SCALES, "K"):
        raise EngineError(INVALID_ARGS, f"{where}.scale is {short(scale)}; a point's scale is 'degC', 'degF' or "
                                        "'K' (a temperature in K without kind acts as a point or a difference).")
    if named is not None and scale != named:
        raise EngineError(INVALID_ARGS, f"{where} gives dim 'degC' with scale {scale!r}; give one scale.")
    return scale, offset


def _parse_tagged(value: object, where: str, kinds: bool = True) -> Value:
    if not isinstance(value, dict):
        raise EngineError(
            INVALID_ARGS,
            f"{where} is {short(value)}; a value is an object with one tag, e.g. "
            '{"num": 4.7, "dim": "ohm"}, or null to delete the slot.',
        )
    unknown = [k for k in value if k not in TAG_KEYS]
    if unknown:
        raise EngineError(
            INVALID_ARGS,
            f"{where} has the unknown key {unknown[0]!r}; the tags are num, re+im, mag+ang, array, object, "
            "plus an optional dim.",
        )
    groups = [g for g, keys in (("num", ("num",)), ("re/im", ("re", "im")), ("mag/ang", ("mag", "ang")),
                                ("array", ("array",)), ("object", ("object",))) if any(k in value for k in keys)]
    if not groups:
        raise EngineError(
            INVALID_ARGS,
            f"{where} has no tag; give exactly one of num, re+im, mag+ang, array or object.",
        )
    if len(groups) > 1:
        raise EngineError(
            INVALID_ARGS,
            f"{where} mixes the tags {' and '.join(groups)}; give exactly one of num, re+im, mag+ang, array or object.",
        )
    tag = groups[0]
    if tag == "object":
        for key in ("dim", "kind", "scale"):
            if key in value:
                raise EngineError(
                    INVALID_ARGS,
                    f"{where} puts {key} beside object; an object has no dimension of its own, move {key} into "
                    "each field.",
                )
        fields = value["object"]
        if not isinstance(fields, dict):
            raise EngineError(INVALID_ARGS, f"{where}.object is {short(fields)}; it must be a JSON object of fields.")
        mags: dict[str, Any] = {}
        sigs = []
        for fname, fval in fields.items():
            check_name(fname, "object field name")
            v = _parse_tagged(fval, f"{where}.object.{fname}", kinds)
            mags[fname] = v.mag
            sigs.append((fname, v.sig))
        return Value(mags, Sig(OBJECT, fields=tuple(sigs)))
    vec, factor, offset = D.parse_dim(value.get("dim"))
    temp, offset = _temp_of(value, vec, offset, where, kinds)
    if tag == "num":
        x = _finite_number(value["num"], f"{where}.num") * factor + offset
        if temp and temp != DELTA and x < 0:
            raise _below_zero(where, x)
        return Value(x, Sig(SCALAR, vec, temp=temp))
    if tag in ("re/im", "mag/ang"):
        a, b = ("re", "im") if tag == "re/im" else ("mag", "ang")
        z = _pair(value, a, b, where)
        if temp and temp != DELTA and z.real * factor + offset < 0:
            raise _below_zero(where, z.real * factor + offset)
        return Value(complex(z.real * factor + offset, z.imag * factor), Sig(SCALAR, vec, temp=temp))
    items = value["array"]
    if not isinstance(items, list):
        raise EngineError(INVALID_ARGS, f"{where}.array is {short(items)}; it must be a JSON array.")
    arr = _parse_elements(items, f"{where}.array")
    if factor != 1.0 or offset != 0.0:
        # Deliberate difference 2: every element is converted (upstream stores them unconverted).
        arr = arr * factor + offset if arr.dtype.kind != "c" else (arr.real * factor + offset) + 1j * (arr.imag * factor)
    if temp and temp != DELTA and arr.size and float(np.min(arr.real)) < 0:
        raise _below_zero(where, float(np.min(arr.real)))
    return Value(arr, Sig(ARRAY, vec if arr.size else D.ZERO, arr.ndim, temp=temp if arr.size else ""))


def _below_zero(where: str, kelvin: float) -> EngineError:
    return EngineError(INVALID_ARGS, f"{where} is a temperature point below absolute zero ({kelvin:.6g} K); no "
                                     "temperature is. A difference is given with kind 'difference' (delta_degC).")


def _parse_elements(items: list[Any], where: str) -> Array:
    """Bare elements -> rectangular ndarray (float64 or complex128)."""

    def leaf(e: object, path: str) -> Nested:
        if isinstance(e, list):
            return [leaf(x, f"{path}[{i}]") for i, x in enumerate(e)]
        if isinstance(e, dict):
            keys = set(e)
            if keys == {"re", "im"}:
                return _pair(e, "re", "im", path)
            if keys == {"mag", "ang"}:
                return _pair(e, "mag", "ang", path)
            if "object" in keys:
                raise EngineError(INVALID_ARGS, f"{path} is an object; an object can never be an array element.")
            raise EngineError(
                INVALID_ARGS,
                f"{path} is {short(e)}; an array element is a bare number, {{re, im}}, {{mag, ang}} or a nested array "
                "(no tag, no dim: the array's dim applies to every element).",
            )
        return _finite_number(e, path)

    nested = leaf(items, where)
    shape = _shape(nested, where)
    try:
        arr = np.array(nested, dtype=complex if _has_complex(nested) else float)
    except (ValueError, TypeError) as exc:  # pragma: no cover - _shape catches raggedness
        raise EngineError(INVALID_ARGS, f"{where} is not a rectangular array ({exc}).") from None
    if arr.shape != shape:  # pragma: no cover
        raise EngineError(INVALID_ARGS, f"{where} is not a rectangular array.")
    return arr


def _has_complex(x: Nested) -> bool:
    if isinstance(x, list):
        return any(_has_complex(e) for e in x)
    return isinstance(x, complex)


def _shape(x: Nested, where: str) -> tuple[int, ...]:
    if not isinstance(x, list):
        return ()
    if not x:
        return (0,)
    shapes = [_shape(e, f"{where}[{i}]") for i, e in enumerate(x)]
    first = shapes[0]
    for i, s in enumerate(shapes):
        if s != first:
            raise EngineError(
                INVALID_ARGS,
                f"{where} is ragged: element 0 has shape {list(first) or 'scalar'} but element {i} has shape "
                f"{list(s) or 'scalar'}; nested arrays must all have the same length.",
            )
    return (len(x),) + first


# ---------------------------------------------------------------- hot-path helpers

_INTERN: dict[Sig, Sig] = {}


_INTERNED: set[int] = set()


def intern_sig(sig: Sig) -> Sig:
    """One object per distinct signature, so caches can key on identity."""
    if id(sig) in _INTERNED:
        return sig
    out = _INTERN.setdefault(sig, sig)
    _INTERNED.add(id(out))
    return out


_DIM_JSON: dict[D.Dim, str] = {}


def dim_json(dim: D.Dim) -> str:
    """``[2,1,-3,-2,0,0,0]`` as JSON text (cached per vector)."""
    t = _DIM_JSON.get(dim)
    if t is None:
        t = _DIM_JSON[dim] = "[" + ",".join(str(int(x)) for x in dim) + "]"
    return t


_KIND_JSON = {"": "}", DELTA: ',"kind":"difference"}', "degC": ',"kind":"point","scale":"degC"}',
              "degF": ',"kind":"point","scale":"degF"}', "K": ',"kind":"point","scale":"K"}'}


def kind_keys(temp: str) -> dict[str, str]:
    """A temperature kind as the tags a receipt or row carries: ``{}``, ``{"kind": "difference"}``
    or ``{"kind": "point", "scale": "degC"}``."""
    if not temp:
        return {}
    if temp == DELTA:
        return {"kind": "difference"}
    return {"kind": "point", "scale": temp}


def stored_json(v: Value) -> str:
    """The stored form of ``v`` as strict JSON text (same content as :func:`stored`)."""
    m = v.mag
    if type(m) is float:
        return '{"num":' + repr(m + 0.0) + ',"dim":' + dim_json(v.sig.dim) + _KIND_JSON[v.sig.temp]
    if type(m) is complex:
        return ('{"re":' + repr(m.real + 0.0) + ',"im":' + repr(m.imag + 0.0) + ',"dim":' + dim_json(v.sig.dim)
                + _KIND_JSON[v.sig.temp])
    import json

    return json.dumps(stored(v), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def is_finite_fast(m: Magnitude) -> bool:
    """True when every number in ``m`` is finite (cheap for scalars and big arrays)."""
    t = type(m)
    if t is float:
        return m - m == 0.0
    if t is complex:
        return m.real - m.real == 0.0 and m.imag - m.imag == 0.0
    if t is np.ndarray:
        if m.size == 0:
            return True
        with np.errstate(all="ignore"):
            total = m.sum()
        if np.isfinite(total):
            return True
        return bool(np.all(np.isfinite(m)))
    return _nonfinite(m) is None


# ---------------------------------------------------------------- finiteness

def check_finite(v: Value, what: str) -> None:
    """Deliberate difference 3: a non-finite result is never written (ENGINE_UNDEFINED_RESULT)."""
    bad = _nonfinite(v.mag)
    if bad is not None:
        raise EngineError(
            UNDEFINED_RESULT,
            f"{what} is {bad}, which is not a finite number; nothing was written. Check for overflow, "
            "division by a tiny value or $inf in the formula.",
        )


def _nonfinite(m: Magnitude) -> str | None:
    if isinstance(m, dict):
        for x in m.values():
            r = _nonfinite(x)
            if r is not None:
                return r
        return None
    if isinstance(m, np.ndarray):
        if m.size and not np.all(np.isfinite(m)):
            idx = tuple(int(i) for i in np.argwhere(~np.isfinite(m))[0])
            return f"{_fmt_num(m[idx])} at element {list(idx)}"
        return None
    if isinstance(m, complex):
        return None if (math.isfinite(m.real) and math.isfinite(m.imag)) else _fmt_num(m)
    return None if math.isfinite(m) else _fmt_num(m)


def _fmt_num(x: Scalar) -> str:
    if isinstance(x, (complex, np.complexfloating)):
        return f"{float(x.real)!r}{float(x.imag):+}j"
    return repr(float(x))


# ---------------------------------------------------------------- rendering

def round_sig(x: float, digits: int) -> float:
    """Upstream's rounding: at most ``digits`` significant digits, half toward +infinity
    (``floor(x*f + 0.5)/f``). 17 or more digits is a double's full precision: unchanged.
    Where ``f`` would overflow (tiny values) the same rule runs in exact decimals."""
    if x == 0 or not math.isfinite(x):
        return 0.0 if x == 0 else x
    if digits >= 17:
        return x + 0.0
    e = math.floor(math.log10(abs(x)))
    p = digits - 1 - e
    try:
        if p >= 0:
            f = 10.0 ** p
            r = math.floor(x * f + 0.5) / f
        else:
            f = 10.0 ** (-p)
            r = math.floor(x / f + 0.5) * f
        if math.isfinite(r) and math.isfinite(f):
            return r + 0.0  # -0 -> 0
    except OverflowError:
        pass
    from decimal import ROUND_FLOOR, Decimal

    q = Decimal(1).scaleb(-p)
    exact = ((Decimal(x) / q) + Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR) * q
    return float(exact) + 0.0


def _num(x: float, digits: int | None) -> float:
    x = float(x)
    if digits is not None:
        x = round_sig(x, digits)
    if x == 0:
        x = 0.0
    return x


@overload
def _leaf(z: Scalar, form: Form | None, digits: int | None, bare: Literal[False]) -> dict[str, Any]: ...
@overload
def _leaf(z: Scalar, form: Form | None, digits: int | None, bare: bool) -> float | dict[str, Any]: ...
def _leaf(z: Scalar, form: Form | None, digits: int | None, bare: bool) -> float | dict[str, Any]:
    """One scalar leaf as JSON (bare: no dim key, plain numbers for reals when form is None)."""
    if isinstance(z, (complex, np.complexfloating)):
        z = complex(z)
        if form == "polar":
            return {"mag": _num(abs(z), digits), "ang": _num(math.atan2(z.imag, z.real), digits)}
        return {"re": _num(z.real, digits), "im": _num(z.imag, digits)}
    x = float(z)
    if form == "rect":
        return {"re": _num(x, digits), "im": 0.0}
    if form == "polar":
        return {"mag": _num(abs(x), digits), "ang": math.pi if x < 0 else 0.0}
    return _num(x, digits) if bare else {"num": _num(x, digits)}


def render(v: Value, form: Form | None = None, digits: int | None = None,
           dim_mode: Literal["ints", "name", "as"] = "ints",
           target_dim: tuple[DimOut, float, float] | None = None) -> dict[str, Any]:
    """A value as JSON: ``{"num"|"re","im"|"mag","ang"|"array", "dim"}`` or ``{"object": {...}}``.

    ``dim_mode``: ``"ints"`` (stored form: 7 integers, used by set receipts and trace
    rows), ``"name"`` (get: the row's first name, else 7 integers), or ``"as"`` with
    ``target_dim`` = ``(spec, factor, offset)`` (get with ``dim``: leaves mapped out of SI;
    ``ValueError`` without it).
    """
    sig = v.sig
    if sig.kind == OBJECT:
        return {
            "object": {
                name: render(Value(v.mag[name], fsig), form, digits, dim_mode, target_dim)
                for name, fsig in sig.fields
            }
        }
    mag = v.mag
    dim_out: DimOut
    kind = kind_keys(sig.temp)
    if dim_mode == "as":
        if target_dim is None:
            raise ValueError("render: dim_mode 'as' needs target_dim (spec, factor, offset)")
        spec, factor, offset = target_dim
        if factor != 1.0 or offset != 0.0:
            if isinstance(mag, np.ndarray):
                mag = (mag - offset) / factor if mag.dtype.kind != "c" else (mag.real - offset) / factor + 1j * mag.imag / factor
            elif isinstance(mag, complex):
                mag = complex((mag.real - offset) / factor, mag.imag / factor)
            else:
                mag = (mag - offset) / factor
            if offset:
                kind = {}  # dim 'degC' names the scale: the number is a reading on it
        dim_out = spec
    elif dim_mode == "name":
        dim_out = D.name_or_ints(sig.dim)
    else:
        dim_out = D.as_list(sig.dim)
    if sig.kind == ARRAY:
        return {"array": _render_array(mag, form, digits), "dim": dim_out, **kind}
    out = _leaf(mag, form, digits, bare=False)
    out["dim"] = dim_out
    out.update(kind)
    return out


def _render_array(a: Array, form: Form | None, digits: int | None) -> list[Any]:
    if a.ndim == 1:
        return [_leaf(x, form, digits, bare=True) for x in a.tolist()]
    return [_render_array(row, form, digits) for row in a]


def stored(v: Value) -> dict[str, Any]:
    """The stored form of a value (set receipts, trace rows, ``vars``)."""
    return render(v, None, None, "ints")


def from_stored(obj: object, kinds: bool = True) -> Value:
    """Inverse of :func:`stored` (used by recovery and replay)."""
    return parse_tagged(obj, kinds)


def check_get_dim(v: Value, spec: object) -> tuple[DimOut, float, float]:
    """Validate ``get``'s ``dim`` claim against the value; returns ``(spec, factor, offset)``.
    Raises :class:`EngineError` (``ENGINE_INVALID_DIMENSION``, ``ENGINE_INCOMPATIBLE_DIMENSION``)."""
    vec, factor, offset = D.parse_dim(spec)
    _check_claim(v.sig, vec, spec, "")
    if offset and _has_temp(v.sig, DELTA):
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"the value is a temperature difference, and dim {spec!r} is a reading on the Celsius scale: a difference "
            "shown in it would be shifted by 273.15. Read it without dim (in K, the size of a Celsius degree).",
        )
    out_spec = spec if isinstance(spec, str) else D.as_list(vec)
    return out_spec, factor, offset


def _has_temp(sig: Sig, temp: str) -> bool:
    if sig.kind == OBJECT:
        return any(_has_temp(s, temp) for _, s in sig.fields)
    return sig.temp == temp


def _check_claim(sig: Sig, vec: D.Dim, spec: object, path: str) -> None:
    if sig.kind == OBJECT:
        for name, fsig in sig.fields:
            _check_claim(fsig, vec, spec, f"{path}.{name}")
        return
    if tuple(sig.dim) != tuple(vec):
        where = f" (field {path[1:]})" if path else ""
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"the value{where} has the vector {D.describe(sig.dim)} but "
            + (f"dim {spec!r} claims {D.describe(tuple(vec))}" if isinstance(spec, str) else f"dim claims {D.describe(tuple(vec))}")
            + "; read without dim or convert in a formula.",
        )


def field_error(name: str, sig: Sig) -> EngineError:
    """The ``ENGINE_FIELD_NOT_FOUND`` refusal for reading field *name* of an object."""
    fields = ", ".join(n for n, _ in sig.fields) or "(none)"
    return EngineError(FIELD_NOT_FOUND, f"the object has no field {name!r}; its fields are {fields}.")


def sig_of_mag(mag: Magnitude, dim: D.Dim, temp: str = "") -> Sig:
    """The signature of a scalar or array magnitude with vector *dim* (and temperature kind *temp*)."""
    if isinstance(mag, np.ndarray):
        return Sig(ARRAY, dim, mag.ndim, temp=temp)
    return Sig(SCALAR, dim, temp=temp)
