"""Dimension check and compiled evaluation of a parsed formula
(spec: reckoner.md section 1 "Speed"; upstream-facts.md 3.6-3.9).

* ``compile_formula`` walks the tree once with the signatures of the slots it reads,
  checks every dimension rule and returns a closure tree that computes magnitudes only
  (floats, complex numbers, numpy arrays): the dimension work is not repeated per call.
* The check is cached on the slot signatures. Where a dimension depends on a *value*
  (an exponent or ``$prod`` bound read from a slot, applied to a dimensional base), the
  value is evaluated during the check and the result is marked not cacheable.
* An exponent that depends on a bound variable (``$prod_{k=1}^{3}(@L^k)``) is handled by
  unrolling the fold with the variable known.
* Value-dependent refusals (division by zero, domains, index ranges, array lengths)
  are raised by the closures with the same codes.
* Temperature points and differences (issue 17) are judged here, once per check, by the
  rules in :mod:`.kinds`; a product or quotient chain (``*``, ``/`` and unary minus) is
  judged as a whole at its root.
"""

from __future__ import annotations

import cmath
import math
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, NoReturn, TypeAlias

import numpy as np
import numpy.typing as npt

from . import dims as D
from . import grammar as G
from . import kinds as K
from .errors import (
    INCOMPATIBLE_DIMENSION,
    INVALID_ARGS,
    INVALID_INDEX,
    NAME_NOT_BOUND,
    SLOT_NOT_FOUND,
    UNDEFINED_RESULT,
    UNSUPPORTED_INDEX,
    UNSUPPORTED_OPERATION,
    UNSUPPORTED_SYMBOL,
    EngineError,
)
from .values import ARRAY, DELTA, OBJECT, SCALAR, SCALAR_ZERO, TEMPERATURE, Array, Magnitude, Sig, field_error

#: slot name -> magnitude (the engine's table, read by the closures)
SlotMags: TypeAlias = dict[str, Magnitude]
#: bound variable -> its value (a float) while a fold runs, and ``_BUDGET`` -> ``[terms run]``
BoundVars: TypeAlias = dict[str, Any]
#: a compiled closure: ``fn(slot magnitudes, bound variables)`` -> the magnitude
Fn: TypeAlias = Callable[[SlotMags, BoundVars], Magnitude]
#: an elementwise function on arrays
ArrayFn: TypeAlias = Callable[[Array], Array]
_NOCONST = object()
MAX_TERMS = 1_000_000  # $sum/$prod/$seq: at most this many terms (a runaway bound must not hang a kernel)
MAX_TOTAL_TERMS = 2_000_000  # and at most this many in all, nested forms counted together
_BUDGET = "#terms"  # a key no bound variable can have: the shared count of terms run
_LN10 = math.log(10.0)


@dataclass(frozen=True, slots=True)
class C:
    """A compiled node: its signature, its closure, its constant value (if it reads no
    slot and no bound variable) and the bound variables it reads."""

    sig: Sig
    fn: Fn
    const: Any = _NOCONST
    bvars: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Compiled:
    """A checked formula: result signature, closure, whether the check may be reused for
    the same slot signatures, and whether numpy arrays are involved."""

    sig: Sig
    fn: Fn
    cacheable: bool
    arrays: bool = False
    #: how the working shows some ``@slot`` operands (issue 17): ``(position, "delta")`` for a K value
    #: without a kind acting as a difference beside a point (``80 degC - 5 K``), ``(position,
    #: "kelvin")`` for a Celsius or Fahrenheit point used by its thermodynamic value (``@p/(@R*@T)``)
    roles: tuple[tuple[int, str], ...] = ()


class _NeedBound(Exception):
    def __init__(self, names: Iterable[str]) -> None:
        self.names = set(names)


class _Ctx:
    __slots__ = ("bound", "checked", "mags", "roles", "sigs", "text", "value_dependent")

    def __init__(self, text: str, sigs: dict[str, Sig], mags: SlotMags) -> None:
        self.text = text
        self.sigs = sigs  # slot name -> Sig
        self.mags = mags  # slot name -> magnitude
        self.bound: dict[str, Any] = {}  # var -> None (unknown) or known float
        self.value_dependent = False
        self.roles: dict[int, str] = {}
        self.checked = 0  # nodes checked so far: folds unrolled per term count each time


def compile_formula(formula: G.Formula, sigs: dict[str, Sig], mags: SlotMags) -> Compiled:
    """Check ``formula`` against the slots and compile it.

    ``sigs``/``mags`` map slot names to :class:`Sig` and magnitudes. Raises
    :class:`EngineError` for every static refusal.
    """
    ctx = _Ctx(formula.text, sigs, mags)
    c = _compile(formula.tree, ctx)
    if c.sig.temp in (K.TAINT, K.TAINT_DELTA):  # "computed from a point" lives within one formula only
        c = C(replace(c.sig, temp=""), c.fn, c.const, c.bvars)
    arrays = c.sig.kind == ARRAY or any(sigs[n].kind == ARRAY for n in formula.slots) or "$seq" in formula.text
    return Compiled(c.sig, c.fn, not ctx.value_dependent, arrays, tuple(sorted(ctx.roles.items())))


# ---------------------------------------------------------------- helpers


def _src(ctx: _Ctx, node: G.Node) -> str:
    """The sub-expression at a node, for messages (normalised formula text)."""
    return G.unparse(node)


def _at(node: G.Node) -> str:
    return f"at position {node.pos + 1}"


def _const_c(sig: Sig, value: Magnitude) -> C:
    def fn(v: SlotMags, b: BoundVars) -> Magnitude:
        return value

    return C(sig, fn, value)


def _eval_now(c: C, ctx: _Ctx) -> Magnitude:
    """Evaluate a sub-expression during the check (for a value that decides a dimension)."""
    if c.const is not _NOCONST:
        return c.const
    unknown = {n for n in c.bvars if ctx.bound.get(n) is None}
    if unknown:
        raise _NeedBound(unknown)
    ctx.value_dependent = True
    known = {k: v for k, v in ctx.bound.items() if v is not None}
    return c.fn(ctx.mags, known)


def _require_not_object(sig: Sig, what: str) -> None:
    if sig.kind == OBJECT:
        raise EngineError(
            UNSUPPORTED_OPERATION,
            f"{what} is applied to an object; operators and functions work on numbers and arrays only, "
            "read a field first with .name.",
        )


def _combine(a: Sig, b: Sig, dim: D.Dim, temp: str = "") -> Sig:
    if a.kind == ARRAY or b.kind == ARRAY:
        return Sig(ARRAY, dim, max(a.ndim, b.ndim), temp=temp)
    return Sig(SCALAR, dim, temp=temp)


def _align(x: Magnitude, y: Magnitude) -> tuple[Magnitude, Magnitude]:
    """Element-wise pairing with upstream's rule: arrays pair from the outermost level,
    equal lengths required; a scalar (or a shallower array) repeats."""
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        n = min(x.ndim, y.ndim)
        if x.shape[:n] != y.shape[:n]:
            lx = x.shape[: n]
            ly = y.shape[: n]
            raise EngineError(
                INVALID_ARGS,
                f"arrays of different lengths meet in an element-wise operation ({_shape_txt(lx)} and "
                f"{_shape_txt(ly)}); make them the same length or use one element with [i].",
            )
        if x.ndim > y.ndim:
            y = y.reshape(y.shape + (1,) * (x.ndim - y.ndim))
        elif y.ndim > x.ndim:
            x = x.reshape(x.shape + (1,) * (y.ndim - x.ndim))
    return x, y


def _shape_txt(s: tuple[int, ...]) -> str:
    return "length " + " x ".join(str(n) for n in s)


def _first_bad(mask: npt.NDArray[np.bool_]) -> str:
    idx = [int(i) for i in np.argwhere(mask)[0]]
    return str(idx[0]) if len(idx) == 1 else str(idx)


def _scalarize(m: Magnitude) -> Magnitude:
    if isinstance(m, np.generic):
        return m.item()
    return m


# ---------------------------------------------------------------- compile


#: at most this many nodes checked for one formula (a fold whose body's dimension changes with its
#: variable is checked once per term; nested, they multiply): beyond it the check would hold the
#: kernel for seconds
MAX_CHECKED_NODES = 100_000


def _compile(node: G.Node, ctx: _Ctx) -> C:
    ctx.checked += 1
    if ctx.checked > MAX_CHECKED_NODES:
        raise EngineError(
            INVALID_INDEX,
            f"checking {ctx.text[:60]!r}{'...' if len(ctx.text) > 60 else ''} takes more than "
            f"{MAX_CHECKED_NODES:,} steps: a $sum/$prod/$seq whose terms change dimension is checked term by term, "
            "and nested or long ones multiply; use fewer terms, a term of one dimension, or several formulas.",
        )
    # the node classes are siblings (none subclasses another), so isinstance picks exactly one
    if isinstance(node, G.Num):
        return _const_c(SCALAR_ZERO, node.value)
    if isinstance(node, G.Slot):
        return _slot(node, ctx)
    if isinstance(node, G.Bound):
        return _bound(node, ctx)
    if isinstance(node, G.Const):
        return _const_c(SCALAR_ZERO, {"pi": math.pi, "e": math.e, "inf": math.inf, "i": 1j, "j": 1j}[node.name])
    if isinstance(node, G.Unary):
        return _neg(node, ctx)
    if isinstance(node, G.Binary):
        if node.op in "+-":
            return _addsub(node, ctx)
        if node.op in "*/":
            return _muldiv(node, ctx)
        return _pow(node, ctx)
    if isinstance(node, G.Index):
        return _index(node, ctx)
    if isinstance(node, G.Field):
        return _field(node, ctx)
    if isinstance(node, G.Call):
        if node.name in _UNARY:
            return _unary_call(node, ctx)
        return _binary_call(node, ctx)
    if isinstance(node, G.Fold):
        return _fold(node, ctx)
    if isinstance(node, G.Symbolic):
        raise EngineError(
            UNSUPPORTED_SYMBOL,
            f"{node.text} {_at(node)} is symbolic (${node.name} is parsed but never evaluated); "
            "work out the closed form and write that formula instead.",
        )
    raise AssertionError(f"unknown node {type(node)}")  # pragma: no cover


def _slot(node: G.Slot, ctx: _Ctx) -> C:
    sig = ctx.sigs.get(node.name)
    if sig is None:
        raise EngineError(
            SLOT_NOT_FOUND,
            f"@{node.name} {_at(node)} names a slot that does not exist; declare it first with set "
            f"(in %%reckon: given {node.name} = ...).",
        )
    name = node.name
    return C(sig, lambda v, b: v[name])


def _bound(node: G.Bound, ctx: _Ctx) -> C:
    name = node.name
    if name not in ctx.bound:
        raise EngineError(
            NAME_NOT_BOUND,
            f"the bare name {name!r} {_at(node)} is not bound by an enclosing $sum, $prod or $seq; "
            f"to read a slot write @{name}.",
        )
    known = ctx.bound[name]
    if known is not None:
        return _const_c(SCALAR_ZERO, known)
    return C(SCALAR_ZERO, lambda v, b: b[name], _NOCONST, frozenset((name,)))


def _neg(node: G.Unary, ctx: _Ctx) -> C:
    x = _compile(node.x, ctx)
    if x.sig.temp:
        K.neg(x.sig.temp, lambda: _src(ctx, node.x))
    return _negate(x)


def _negate(x: C) -> C:
    _require_not_object(x.sig, "unary minus")
    if x.const is not _NOCONST:
        return _const_c(x.sig, -x.const)
    f = x.fn
    return C(x.sig, lambda v, b: -f(v, b), _NOCONST, x.bvars)


def _addsub(node: G.Binary, ctx: _Ctx) -> C:
    l = _compile(node.left, ctx)
    r = _compile(node.right, ctx)
    op = node.op
    _require_not_object(l.sig, f"'{op}'")
    _require_not_object(r.sig, f"'{op}'")
    if tuple(l.sig.dim) != tuple(r.sig.dim):
        note = ""
        if l.sig.dim == D.ZERO or r.sig.dim == D.ZERO:
            note = " (a bare number is dimensionless: it is not a quantity in any unit)"
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"'{op}' {_at(node.right)} combines {_src(ctx, node.left)} {D.describe(l.sig.dim)} with "
            f"{_src(ctx, node.right)} {D.describe(r.sig.dim)}{note}; "
            "both sides of + and - must have the same vector: check the formula or the units of the slots.",
        )
    temp = ""
    if l.sig.temp or r.sig.temp:
        temp, side = K.addsub(op, l.sig.temp, r.sig.temp, lambda: _src(ctx, node.left), lambda: _src(ctx, node.right))
        acting = node.left if side == "left" else node.right if side == "right" else None
        if isinstance(acting, G.Slot):
            ctx.roles[acting.pos] = "delta"
    sig = _combine(l.sig, r.sig, l.sig.dim, temp)
    lf, rf = l.fn, r.fn
    bv = l.bvars | r.bvars
    if sig.kind == ARRAY:
        if op == "+":
            def fn(v: SlotMags, b: BoundVars) -> Magnitude:
                x, y = _align(lf(v, b), rf(v, b))
                return x + y
        else:
            def fn(v: SlotMags, b: BoundVars) -> Magnitude:
                x, y = _align(lf(v, b), rf(v, b))
                return x - y
    elif op == "+":
        if l.const is not _NOCONST and r.const is not _NOCONST:
            return _const_c(sig, l.const + r.const)
        fn = lambda v, b: lf(v, b) + rf(v, b)
    else:
        if l.const is not _NOCONST and r.const is not _NOCONST:
            return _const_c(sig, l.const - r.const)
        fn = lambda v, b: lf(v, b) - rf(v, b)
    return C(sig, fn, _NOCONST, bv)


def _muldiv(node: G.Binary, ctx: _Ctx) -> C:
    """A product or quotient chain, judged as a whole for temperature kinds (issue 17)."""
    factors: list[tuple[C, G.Node]] = []
    c = _muldiv_part(node, ctx, factors)
    if any(f.sig.temp for f, _ in factors):
        judged: list[tuple[str, bool, K.Src]] = [
            (f.sig.temp, f.sig.dim != D.ZERO or _reads_dimension(n, ctx), _lazy_src(ctx, n)) for f, n in factors]
        temp = K.chain(tuple(c.sig.dim) == TEMPERATURE, judged, lambda: repr(_src(ctx, node)))
        if temp:
            c = C(replace(c.sig, temp=temp), c.fn, c.const, c.bvars)
        for f, n in factors:  # a point that passed the chain counts by its thermodynamic value
            _by_kelvin(ctx, n, f.sig)
    return c


def _lazy_src(ctx: _Ctx, node: G.Node) -> K.Src:
    return lambda: _src(ctx, node)


def _reads_dimension(node: G.Node, ctx: _Ctx) -> bool:
    """Whether a sub-expression reads a slot that has a dimension (``(@p2/@p1)^0.286`` does, though
    it is dimensionless itself): such a factor is a physical quantity, not a plain number."""
    if isinstance(node, G.Slot):
        sig = ctx.sigs.get(node.name)
        return sig is not None and (sig.dim != D.ZERO or sig.kind == OBJECT)
    children: tuple[G.Node, ...] = ()
    if isinstance(node, (G.Unary, G.Field)):
        children = (node.x,)
    elif isinstance(node, G.Binary):
        children = (node.left, node.right)
    elif isinstance(node, G.Index):
        children = (node.x, node.index)
    elif isinstance(node, G.Call):
        children = node.args
    elif isinstance(node, G.Fold):
        children = (node.lo, node.hi, node.body)
    return any(_reads_dimension(n, ctx) for n in children)


def _by_kelvin(ctx: _Ctx, node: G.Node, sig: Sig) -> None:
    """Note a Celsius or Fahrenheit point ``@slot`` used by its value in K (the working shows it in K)."""
    if K.is_point(sig.temp) and isinstance(node, G.Slot):
        ctx.roles[node.pos] = "kelvin"


def _chain_operand(n: G.Node, ctx: _Ctx, factors: list[tuple[C, G.Node]]) -> C:
    """An operand of a product chain: nested ``*``, ``/`` and unary minus stay in the chain."""
    if isinstance(n, G.Binary) and n.op in "*/":
        return _muldiv_part(n, ctx, factors)
    if isinstance(n, G.Unary):
        x = _chain_operand(n.x, ctx, factors)
        if factors and factors[-1][1] is n.x and K.is_point(x.sig.temp):
            K.neg(x.sig.temp, lambda: _src(ctx, n.x))  # -@T inside a product is still a negated point
        return _negate(x)
    c = _compile(n, ctx)
    factors.append((c, n))
    return c


def _muldiv_part(node: G.Binary, ctx: _Ctx, factors: list[tuple[C, G.Node]]) -> C:
    l = _chain_operand(node.left, ctx, factors)
    r = _chain_operand(node.right, ctx, factors)
    op = node.op
    _require_not_object(l.sig, f"'{op}'")
    _require_not_object(r.sig, f"'{op}'")
    dim = D.add(l.sig.dim, r.sig.dim) if op == "*" else D.sub(l.sig.dim, r.sig.dim)
    sig = _combine(l.sig, r.sig, dim)
    lf, rf = l.fn, r.fn
    bv = l.bvars | r.bvars
    where = _src(ctx, node.right)
    if sig.kind == ARRAY:
        if op == "*":
            def fn(v: SlotMags, b: BoundVars) -> Magnitude:
                x, y = _align(lf(v, b), rf(v, b))
                return x * y
        else:
            def fn(v: SlotMags, b: BoundVars) -> Magnitude:
                x, y = _align(lf(v, b), rf(v, b))
                with np.errstate(divide="raise", invalid="raise"):
                    try:
                        return x / y  # numpy's flags report a zero divisor without an extra pass
                    except (FloatingPointError, ZeroDivisionError):
                        pass
                zero = np.asarray(y) == 0
                if np.any(zero):
                    bad = f" (element {_first_bad(zero)})" if zero.ndim else ""
                    raise EngineError(
                        UNDEFINED_RESULT,
                        f"division by zero{bad} in '/ {where}'; the divisor must not be zero.",
                    )
                return x / y
        return C(sig, fn, _NOCONST, bv)
    if op == "*":
        fn = lambda v, b: lf(v, b) * rf(v, b)
    else:
        def fn(v: SlotMags, b: BoundVars) -> Magnitude:
            try:
                return lf(v, b) / rf(v, b)
            except ZeroDivisionError:
                raise EngineError(
                    UNDEFINED_RESULT,
                    f"division by zero in '/ {where}' {_at(node.right)}; the divisor must not be zero.",
                ) from None
    c = C(sig, fn, _NOCONST, bv)
    if l.const is not _NOCONST and r.const is not _NOCONST:
        return _const_c(sig, fn({}, {}))
    return c


def _spow(x: Magnitude, y: Magnitude, where: str) -> Magnitude:
    """Scalar power with upstream's rules (upstream-facts.md 3.6 "Powers")."""
    try:
        if type(y) is complex:
            if x == 0:
                raise EngineError(UNDEFINED_RESULT, f"zero raised to a complex power in {where} is undefined.")
            return cmath.exp(y * cmath.log(x))
        if type(x) is complex:
            if x == 0:
                if y > 0:
                    return 0j
                if y == 0:
                    return 1 + 0j
                raise EngineError(UNDEFINED_RESULT, f"zero raised to the negative power {y!r} in {where} is undefined.")
            r, t = cmath.polar(x)
            return cmath.rect(r**y, t * y)
        if x == 0:
            if y < 0:
                raise EngineError(UNDEFINED_RESULT, f"zero raised to the negative power {y!r} in {where} is undefined.")
            return 1.0 if y == 0 else 0.0
        if x < 0 and not float(y).is_integer():
            raise EngineError(
                UNDEFINED_RESULT,
                f"the negative base {x!r} raised to the non-integer power {y!r} in {where} has no real value; "
                "for the principal complex value write the base as a complex number (e.g. multiply by $j and adjust).",
            )
        return x**y
    except OverflowError:
        raise EngineError(UNDEFINED_RESULT, f"the power in {where} overflows (the result is not finite).") from None


def _apow(x: Magnitude, y: Magnitude, where: str) -> Array:
    x, y = _align(x, y)
    xa = np.asarray(x)
    ya = np.asarray(y)
    with np.errstate(all="ignore"):
        if xa.dtype.kind == "c" or ya.dtype.kind == "c":
            zero = (xa == 0) & ((np.real(ya) < 0) | (np.imag(ya) != 0))
            if np.any(zero):
                raise EngineError(UNDEFINED_RESULT, f"zero raised to a negative or complex power in {where} is undefined.")
            return np.power(xa.astype(complex), ya)
        zero = (xa == 0) & (ya < 0)
        if np.any(zero):
            raise EngineError(UNDEFINED_RESULT, f"zero raised to a negative power in {where} is undefined.")
        neg = (xa < 0) & (np.floor(ya) != ya)
        if np.any(neg):
            raise EngineError(
                UNDEFINED_RESULT,
                f"a negative base raised to a non-integer power in {where} has no real value; "
                "use complex numbers for the principal value.",
            )
        return np.power(xa, ya)


def _pow(node: G.Binary, ctx: _Ctx) -> C:
    base = _compile(node.left, ctx)
    ex = _compile(node.right, ctx)
    _require_not_object(base.sig, "'^'")
    _require_not_object(ex.sig, "'^'")
    if ex.sig.dim != D.ZERO:
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"the exponent {_src(ctx, node.right)!r} {_at(node.right)} has the vector {D.describe(ex.sig.dim)}; "
            "an exponent must be dimensionless: divide it by its unit first.",
        )
    where = f"'{_src(ctx, node)}'"
    _by_kelvin(ctx, node.left, base.sig)
    if base.sig.dim == D.ZERO:
        dim = D.ZERO
    else:
        if ex.sig.kind == ARRAY:
            raise EngineError(
                INCOMPATIBLE_DIMENSION,
                f"the dimensional base {D.describe(base.sig.dim)} {_at(node)} is raised to an array of exponents; "
                "array elements must share one vector, so use one exponent.",
            )
        p = _eval_now(ex, ctx)
        if isinstance(p, complex):
            raise EngineError(
                INCOMPATIBLE_DIMENSION,
                f"the base {_src(ctx, node.left)!r} has the vector {D.describe(base.sig.dim)} and the exponent is "
                "complex; only a dimensionless base may have a complex exponent: divide the base by its unit first.",
            )
        dim = D.scale(base.sig.dim, p)
    temp = K.power(base.sig.temp, tuple(dim) == TEMPERATURE) if base.sig.temp else ""
    sig = _combine(base.sig, ex.sig, dim, temp)
    bf, ef = base.fn, ex.fn
    bv = base.bvars | ex.bvars
    if sig.kind == ARRAY:
        p = ex.const
        if type(p) is float and p.is_integer() and 0 < p <= 64 and ex.sig.kind == SCALAR:
            if p == 2.0:
                def fn(v: SlotMags, b: BoundVars) -> Magnitude:
                    x = bf(v, b)
                    return x * x
            else:
                ip = int(p)
                fn = lambda v, b: np.power(bf(v, b), ip)
        else:
            fn = lambda v, b: _apow(bf(v, b), ef(v, b), where)
    elif ex.const is not _NOCONST and type(ex.const) is float and ex.const == 2.0:
        fn = lambda v, b: _sq(bf(v, b), where)
    else:
        fn = lambda v, b: _spow(bf(v, b), ef(v, b), where)
    if base.const is not _NOCONST and ex.const is not _NOCONST:
        return _const_c(sig, fn({}, {}))
    return C(sig, fn, _NOCONST, bv)


def _sq(x: Magnitude, where: str) -> Magnitude:
    try:
        return x * x
    except OverflowError:  # pragma: no cover - float multiply gives inf, not an exception
        raise EngineError(UNDEFINED_RESULT, f"the power in {where} overflows.") from None


def _as_int(x: Magnitude, what: str, node: G.Node) -> int:
    if isinstance(x, np.ndarray):
        raise EngineError(INVALID_INDEX, f"the {what} {_at(node)} is an array; it must be one integer.")
    if isinstance(x, complex):
        if x.imag != 0:
            raise EngineError(INVALID_INDEX, f"the {what} {_at(node)} is the complex number {x!r}; it must be an integer.")
        x = x.real
    if not math.isfinite(x) or not float(x).is_integer():
        raise EngineError(INVALID_INDEX, f"the {what} {_at(node)} is {x!r}, which is not an integer; use a whole number.")
    return int(x)


def _index(node: G.Index, ctx: _Ctx) -> C:
    x = _compile(node.x, ctx)
    i = _compile(node.index, ctx)
    if x.sig.kind != ARRAY:
        what = "an object (use .field)" if x.sig.kind == OBJECT else "a single number"
        raise EngineError(
            UNSUPPORTED_INDEX,
            f"[ ] {_at(node.index)} indexes {_src(ctx, node.x)!r}, which is {what}; only arrays take [i].",
        )
    if i.sig.kind != SCALAR or i.sig.dim != D.ZERO:
        raise EngineError(
            INVALID_INDEX,
            f"the index {_src(ctx, node.index)!r} {_at(node.index)} has the vector {D.describe(i.sig.dim)}"
            f"{' and is an array' if i.sig.kind == ARRAY else ''}; an index is a dimensionless integer.",
        )
    sig = Sig(SCALAR, x.sig.dim, temp=x.sig.temp) if x.sig.ndim == 1 else \
        Sig(ARRAY, x.sig.dim, x.sig.ndim - 1, temp=x.sig.temp)
    xf, jf = x.fn, i.fn
    scalar_result = x.sig.ndim == 1

    def fn(v: SlotMags, b: BoundVars) -> Magnitude:
        a = xf(v, b)
        k = _as_int(jf(v, b), "index", node.index)
        n = a.shape[0]
        if k < 0 or k >= n:
            rng = f"0..{n - 1}" if n else "none (the array is empty)"
            raise EngineError(
                INVALID_INDEX,
                f"the index {k} {_at(node.index)} is out of range for an array of length {n}; valid indexes: {rng}.",
            )
        e = a[k]
        return e.item() if scalar_result else e

    return C(sig, fn, _NOCONST, x.bvars | i.bvars)


def _field(node: G.Field, ctx: _Ctx) -> C:
    x = _compile(node.x, ctx)
    if x.sig.kind != OBJECT:
        raise EngineError(
            UNSUPPORTED_INDEX,
            f".{node.name} reads a field of {_src(ctx, node.x)!r}, which is not an object; only objects have fields.",
        )
    fsig = x.sig.field(node.name)
    if fsig is None:
        raise field_error(node.name, x.sig)
    xf = x.fn
    name = node.name
    return C(fsig, lambda v, b: xf(v, b)[name], _NOCONST, x.bvars)


# ---------------------------------------------------------------- functions


def _undef(msg: str) -> NoReturn:
    raise EngineError(UNDEFINED_RESULT, msg)


def _real_only(name: str) -> Callable[[Magnitude], None]:
    def chk(z: Magnitude) -> None:
        if isinstance(z, complex):
            _undef(f"${name} takes real numbers only but was given the complex value {z!r}; use $re or $abs first.")
    return chk


def _s_sqrt(x: Magnitude) -> Magnitude:
    if isinstance(x, complex):
        return cmath.sqrt(x)
    if x < 0:
        _undef(f"$sqrt of the negative number {x!r} has no real value; for the imaginary root write $j*$sqrt(-x).")
    return math.sqrt(x)


def _s_ln(x: Magnitude, base10: bool = False) -> Magnitude:
    name = "$log" if base10 else "$ln"
    if isinstance(x, complex):
        if x == 0:
            _undef(f"{name} of zero is undefined.")
        r = cmath.log(x)
        return r / _LN10 if base10 else r
    if x <= 0:
        _undef(f"{name} of {x!r} is undefined for real numbers (the argument must be > 0); use a complex value for the principal logarithm.")
    return math.log10(x) if base10 else math.log(x)


def _s_exp(x: Magnitude) -> Magnitude:
    try:
        return cmath.exp(x) if isinstance(x, complex) else math.exp(x)
    except OverflowError:
        _undef(f"$exp({x!r}) overflows (the result is not finite).")


def _s_trig(name: str) -> Callable[[Magnitude], Magnitude]:
    mf, cf = getattr(math, name), getattr(cmath, name)

    def f(x: Magnitude) -> Magnitude:
        try:
            return cf(x) if isinstance(x, complex) else mf(x)
        except (OverflowError, ValueError):
            _undef(f"${name}({x!r}) is not finite.")
    return f


def _s_arc(name: str) -> Callable[[Magnitude], Magnitude]:
    mf, cf = getattr(math, name), getattr(cmath, name)

    def f(x: Magnitude) -> Magnitude:
        if isinstance(x, complex):
            try:
                return cf(x)
            except ValueError:
                _undef(f"${name}({x!r}) is undefined.")
        if name != "atan" and not -1.0 <= x <= 1.0:
            _undef(f"${name} of {x!r} is outside [-1, 1], where it has no real value.")
        return mf(x)
    return f


def _s_rounding(name: str, op: Callable[[float], float]) -> Callable[[Magnitude], Magnitude]:
    chk = _real_only(name)

    def f(x: Magnitude) -> Magnitude:
        chk(x)
        if not math.isfinite(x):
            return x
        return float(op(x))
    return f


def _sign(x: float) -> float:
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


def _a_domain(name: str, bad_fn: Callable[[Array], npt.NDArray[np.bool_]],
              why: str) -> Callable[[ArrayFn], ArrayFn]:
    """An array version with a domain check. numpy's floating-point flags catch a domain
    error at no extra pass; only then is the offending element looked up for the message."""
    def wrap(np_fn: ArrayFn) -> ArrayFn:
        def f(a: Array) -> Array:
            with np.errstate(divide="raise", invalid="raise", over="raise"):
                try:
                    return np_fn(a)
                except FloatingPointError:
                    pass
            bad = bad_fn(a) if a.dtype.kind != "c" else (a == 0)
            if bad.any():
                i = _first_bad(bad)
                _undef(f"${name} of element {i} ({a.ravel()[int(np.argmax(bad.ravel()))]!r}) {why}.")
            _undef(f"${name} has no finite value for an element of the array.")
        return f
    return wrap


def _a_real_only(name: str, np_fn: ArrayFn) -> ArrayFn:
    def f(a: Array) -> Array:
        if a.dtype.kind == "c":
            _undef(f"${name} takes real numbers only but the array holds complex values; use $re or $abs first.")
        return np_fn(a).astype(float)
    return f


def _a_exp(a: Array) -> Array:
    with np.errstate(over="raise", invalid="raise"):
        try:
            return np.exp(a)
        except FloatingPointError:
            pass
    _undef("$exp overflows for an element of the array (the result is not finite).")


_A_SQRT = _a_domain("sqrt", lambda a: a < 0, "is negative, so it has no real square root; for the imaginary root "
                    "write $j*$sqrt(-x)")(np.sqrt)
_A_LN = _a_domain("ln", lambda a: a <= 0, "is not > 0, where the real logarithm is defined")(np.log)
_A_LOG = _a_domain("log", lambda a: a <= 0, "is not > 0, where the real logarithm is defined")(np.log10)
_A_ASIN = _a_domain("asin", lambda a: np.abs(a) > 1, "is outside [-1, 1]")(np.arcsin)
_A_ACOS = _a_domain("acos", lambda a: np.abs(a) > 1, "is outside [-1, 1]")(np.arccos)


def _a_arg(a: Array) -> Array:
    if a.dtype.kind == "c":
        return np.angle(a)
    return np.where(a < 0, math.pi, 0.0)


# name -> (dimension rule, scalar function, array function or None to map elementwise)
# rules: "same", "half", "zero" (argument must be dimensionless; result dimensionless),
#        "tozero" (any argument; result dimensionless)
_UNARY: dict[str, tuple[str, Callable[[Magnitude], Magnitude] | None, ArrayFn | None]] = {
    "abs": ("same", abs, np.abs),
    "sqrt": ("half", _s_sqrt, _A_SQRT),
    "exp": ("zero", _s_exp, _a_exp),
    "ln": ("zero", _s_ln, _A_LN),
    "log": ("zero", lambda x: _s_ln(x, True), _A_LOG),
    "sin": ("zero", _s_trig("sin"), np.sin),
    "cos": ("zero", _s_trig("cos"), np.cos),
    "tan": ("zero", _s_trig("tan"), np.tan),
    "asin": ("zero", _s_arc("asin"), _A_ASIN),
    "acos": ("zero", _s_arc("acos"), _A_ACOS),
    "atan": ("zero", _s_arc("atan"), np.arctan),
    "floor": ("zero", _s_rounding("floor", math.floor), _a_real_only("floor", np.floor)),
    "ceil": ("zero", _s_rounding("ceil", math.ceil), _a_real_only("ceil", np.ceil)),
    "sign": ("zero", _s_rounding("sign", _sign), _a_real_only("sign", np.sign)),
    "re": ("same", lambda x: x.real if isinstance(x, complex) else x, np.real),
    "im": ("same", lambda x: x.imag if isinstance(x, complex) else 0.0, lambda a: np.imag(a).astype(float)),
    "arg": ("tozero", lambda x: math.atan2(x.imag, x.real) if isinstance(x, complex) else (math.pi if x < 0 else 0.0), _a_arg),
    "conj": ("same", lambda x: x.conjugate() if isinstance(x, complex) else x, np.conj),
    "len": ("tozero", None, None),
    "transpose": ("same", None, None),
}


def _map_array(f: Callable[[Magnitude], Magnitude], a: Array) -> Array:
    flat = [f(complex(x) if isinstance(x, complex) else x) for x in a.ravel().tolist()]
    if not flat:
        return np.array([], dtype=float).reshape(a.shape)
    cplx = any(isinstance(x, complex) for x in flat)
    return np.array(flat, dtype=complex if cplx else float).reshape(a.shape)


def _unary_call(node: G.Call, ctx: _Ctx) -> C:
    name = node.name
    x = _compile(node.args[0], ctx)
    _require_not_object(x.sig, f"${name}")
    rule, sf, af = _UNARY[name]
    if name == "len":
        if x.sig.kind != ARRAY:
            raise EngineError(
                INVALID_ARGS,
                f"$len {_at(node)} counts the elements of an array, but {_src(ctx, node.args[0])!r} is a single number.",
            )
        xf = x.fn
        return C(SCALAR_ZERO, lambda v, b: float(xf(v, b).shape[0]), _NOCONST, x.bvars)
    if name == "transpose":
        if x.sig.kind != ARRAY or x.sig.ndim != 2:
            what = "a single number" if x.sig.kind != ARRAY else f"a {x.sig.ndim}-D array"
            raise EngineError(
                INVALID_ARGS,
                f"$transpose {_at(node)} needs a rectangular 2-D array, but {_src(ctx, node.args[0])!r} is {what}.",
            )
        xf = x.fn
        return C(x.sig, lambda v, b: np.ascontiguousarray(xf(v, b).T), _NOCONST, x.bvars)
    if rule == "zero" and x.sig.dim != D.ZERO:
        hint = " (for an angle in degrees write @x*$pi/180)" if name in ("sin", "cos", "tan") else ""
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"${name} {_at(node)} needs a dimensionless argument but {_src(ctx, node.args[0])!r} has the vector "
            f"{D.describe(x.sig.dim)}; divide by the unit first{hint}.",
        )
    temp = ""
    if rule == "same":
        dim = x.sig.dim
        if x.sig.temp:
            temp = K.same_function(name, x.sig.temp, lambda: _src(ctx, node.args[0]))
    elif rule == "half":
        dim = D.scale(x.sig.dim, D.Fraction(1, 2))
        _by_kelvin(ctx, node.args[0], x.sig)
        temp = K.power(x.sig.temp, tuple(dim) == TEMPERATURE) if x.sig.temp else ""
    else:
        dim = D.ZERO
        _by_kelvin(ctx, node.args[0], x.sig)
    sig = Sig(x.sig.kind, dim, x.sig.ndim, temp=temp)
    xf = x.fn
    assert sf is not None  # only $len and $transpose have no scalar form; both are done above
    if x.sig.kind == ARRAY:
        if af is not None:
            fn = lambda v, b: af(xf(v, b))
        else:
            fn = lambda v, b: _map_array(sf, xf(v, b))
    else:
        fn = lambda v, b: sf(xf(v, b))
    if x.const is not _NOCONST:
        return _const_c(sig, fn({}, {}))
    return C(sig, fn, _NOCONST, x.bvars)


def _b_atan2(x: float, y: float) -> float:
    # Deliberate difference 1: $atan2(x, y) is the angle of the point (x, y).
    return math.atan2(y, x)


def _b_mod(a: float, b: float) -> float:
    if b == 0:
        _undef(f"$mod({a!r}, 0): the remainder of a division by zero is undefined.")
    return math.fmod(a, b)


_BINARY: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Array, Array], Array] | None]] = {
    "atan2": (_b_atan2, lambda x, y: np.arctan2(y, x)),
    "min": (min, np.minimum),
    "max": (max, np.maximum),
    "mod": (_b_mod, None),
}


def _binary_call(node: G.Call, ctx: _Ctx) -> C:
    name = node.name
    a = _compile(node.args[0], ctx)
    b = _compile(node.args[1], ctx)
    _require_not_object(a.sig, f"${name}")
    _require_not_object(b.sig, f"${name}")
    if tuple(a.sig.dim) != tuple(b.sig.dim):
        raise EngineError(
            INCOMPATIBLE_DIMENSION,
            f"${name} {_at(node)} needs both arguments in one vector but got {D.describe(a.sig.dim)} and "
            f"{D.describe(b.sig.dim)}.",
        )
    dim = D.ZERO if name == "atan2" else a.sig.dim
    temp = ""
    if name == "atan2":
        _by_kelvin(ctx, node.args[0], a.sig)
        _by_kelvin(ctx, node.args[1], b.sig)
    if (a.sig.temp or b.sig.temp) and name != "atan2":
        if name == "mod":
            K.same_function(name, a.sig.temp, lambda: _src(ctx, node.args[0]))
            K.same_function(name, b.sig.temp, lambda: _src(ctx, node.args[1]))
            temp = DELTA if a.sig.temp == DELTA else ""
        else:
            temp = K.minmax(name, a.sig.temp, b.sig.temp, lambda: _src(ctx, node))
    sig = _combine(a.sig, b.sig, dim, temp)
    sf, af = _BINARY[name]
    fa, fb = a.fn, b.fn
    chk = _real_only(name)

    def scalar(v: SlotMags, bb: BoundVars) -> Magnitude:
        x = fa(v, bb)
        y = fb(v, bb)
        chk(x)
        chk(y)
        return sf(x, y)

    if sig.kind == ARRAY:
        def fn(v: SlotMags, bb: BoundVars) -> Magnitude:
            x, y = _align(fa(v, bb), fb(v, bb))
            xa, ya = np.asarray(x), np.asarray(y)
            if xa.dtype.kind == "c" or ya.dtype.kind == "c":
                _undef(f"${name} takes real numbers only but was given complex values; use $re or $abs first.")
            if af is None:
                xa, ya = np.broadcast_arrays(xa, ya)
                return np.array([sf(p, q) for p, q in zip(xa.ravel().tolist(), ya.ravel().tolist())]).reshape(xa.shape)
            return af(xa, ya).astype(float)
    else:
        fn = scalar
    if a.const is not _NOCONST and b.const is not _NOCONST:
        return _const_c(sig, fn({}, {}))
    return C(sig, fn, _NOCONST, a.bvars | b.bvars)


# ---------------------------------------------------------------- folds


def _fold(node: G.Fold, ctx: _Ctx) -> C:
    lo = _compile(node.lo, ctx)
    hi = _compile(node.hi, ctx)
    for c, which, n in ((lo, "lower bound", node.lo), (hi, "upper bound", node.hi)):
        if c.sig.kind != SCALAR or c.sig.dim != D.ZERO:
            raise EngineError(
                INVALID_INDEX,
                f"the {which} of ${node.name} {_at(n)} has the vector {D.describe(c.sig.dim)}; bounds are "
                "dimensionless integers.",
            )
    var = node.var
    outer = ctx.bound.get(var, _NOCONST)
    ctx.bound[var] = None
    body: C | None
    try:
        try:
            body = _compile(node.body, ctx)
        except _NeedBound as need:
            if var not in need.names:
                raise
            body = None
    finally:
        if outer is _NOCONST:
            del ctx.bound[var]
        else:
            ctx.bound[var] = outer
    if body is None:
        return _fold_unrolled(node, ctx, lo, hi)
    _require_not_object(body.sig, f"${node.name}")
    name = node.name
    if name == "sum":
        sig = body.sig
        if body.sig.temp:
            K.fold_sum(body.sig.temp, lambda: repr(_src(ctx, node)))
    elif name == "prod":
        _by_kelvin(ctx, node.body, body.sig)
        if body.sig.dim == D.ZERO:
            sig = body.sig
        else:
            a = _as_int(_eval_now(lo, ctx), "lower bound", node.lo)
            z = _as_int(_eval_now(hi, ctx), "upper bound", node.hi)
            pdim = D.scale(body.sig.dim, max(z - a + 1, 1))
            temp = K.power(body.sig.temp, tuple(pdim) == TEMPERATURE) if body.sig.temp else ""
            sig = Sig(body.sig.kind, pdim, body.sig.ndim, temp=temp)
    else:
        sig = Sig(ARRAY, body.sig.dim, body.sig.ndim + 1, temp=body.sig.temp)
    lf, hf, bf = lo.fn, hi.fn, body.fn
    is_array = body.sig.kind == ARRAY

    def bounds(v: SlotMags, b: BoundVars) -> tuple[int, int, list[int]]:
        a = _as_int(lf(v, b), "lower bound", node.lo)
        z = _as_int(hf(v, b), "upper bound", node.hi)
        if a > z:
            raise EngineError(
                INVALID_INDEX,
                f"${name} {_at(node)} runs from {a} to {z}: the lower bound is above the upper bound, "
                "so the range is empty; swap the bounds.",
            )
        if z - a >= MAX_TERMS:
            raise EngineError(
                INVALID_INDEX,
                f"${name} {_at(node)} runs from {a} to {z}, {z - a + 1} terms; the limit is {MAX_TERMS:,} "
                "(a closed form or a coarser step keeps the calculation reviewable).",
            )
        spent = b.get(_BUDGET)
        if spent is None:
            spent = [0]
        spent[0] += z - a + 1
        if spent[0] > MAX_TOTAL_TERMS:
            raise EngineError(
                INVALID_INDEX,
                f"${name} {_at(node)}: the nested $sum/$prod/$seq forms of this formula run more than "
                f"{MAX_TOTAL_TERMS:,} terms in all; reduce the ranges or split the calculation.",
            )
        return a, z, spent

    if name in ("sum", "prod"):
        combine = operator.add if name == "sum" else operator.mul

        def fn(v: SlotMags, b: BoundVars) -> Magnitude:
            a, z, spent = bounds(v, b)
            b2 = dict(b)
            b2[_BUDGET] = spent
            b2[var] = float(a)
            acc = bf(v, b2)
            for k in range(a + 1, z + 1):
                b2[var] = float(k)
                t = bf(v, b2)
                if is_array:
                    acc, t = _align(acc, t)
                acc = combine(acc, t)
            return acc
    else:
        def fn(v: SlotMags, b: BoundVars) -> Magnitude:
            a, z, spent = bounds(v, b)
            b2 = dict(b)
            b2[_BUDGET] = spent
            items = []
            for k in range(a, z + 1):
                b2[var] = float(k)
                items.append(bf(v, b2))
            return _collect(items, node)
    bv = (body.bvars - {var}) | lo.bvars | hi.bvars
    return C(sig, fn, _NOCONST, frozenset(bv))


def _collect(items: list[Magnitude], node: G.Node) -> Array:
    if isinstance(items[0], np.ndarray):
        shape = items[0].shape
        for _k, it in enumerate(items):
            if it.shape != shape:
                raise EngineError(
                    INVALID_ARGS,
                    f"$seq {_at(node)} collects arrays of different shapes ({list(shape)} and {list(it.shape)}); "
                    "nested arrays must be rectangular.",
                )
        return np.stack(items)
    cplx = any(isinstance(x, complex) for x in items)
    return np.array(items, dtype=complex if cplx else float)


def _fold_unrolled(node: G.Fold, ctx: _Ctx, lo: C, hi: C) -> C:
    """The body's dimension depends on the bound variable: compile it once per value."""
    a = _as_int(_eval_now(lo, ctx), "lower bound", node.lo)
    z = _as_int(_eval_now(hi, ctx), "upper bound", node.hi)
    if a > z:
        raise EngineError(
            INVALID_INDEX,
            f"${node.name} {_at(node)} runs from {a} to {z}: the lower bound is above the upper bound; swap the bounds.",
        )
    if z - a > 10_000:
        raise EngineError(
            INVALID_INDEX,
            f"${node.name} {_at(node)} has a body whose dimension changes with {node.var} and {z - a + 1} terms; "
            "such a fold is limited to 10001 terms.",
        )
    var = node.var
    outer = ctx.bound.get(var, _NOCONST)
    bodies = []
    try:
        for k in range(a, z + 1):
            ctx.bound[var] = float(k)
            bodies.append(_compile(node.body, ctx))
    finally:
        if outer is _NOCONST:
            ctx.bound.pop(var, None)
        else:
            ctx.bound[var] = outer
    for c in bodies:
        _require_not_object(c.sig, f"${node.name}")
    first = bodies[0].sig
    if node.name in ("sum", "seq"):
        for k, c in zip(range(a, z + 1), bodies):
            if tuple(c.sig.dim) != tuple(first.dim):
                what = "terms" if node.name == "sum" else "elements"
                raise EngineError(
                    INCOMPATIBLE_DIMENSION,
                    f"${node.name} {_at(node)}: its {what} have different vectors ({D.describe(first.dim)} for "
                    f"{var}={a}, {D.describe(c.sig.dim)} for {var}={k}); every {what[:-1]} must share one vector.",
                )
        temps = {c.sig.temp for c in bodies}
        temp = first.temp if len(temps) == 1 else ""
        if node.name == "sum":
            for t in temps:
                if t:
                    K.fold_sum(t, lambda: repr(_src(ctx, node)))
        sig = replace(first, temp=temp) if node.name == "sum" else Sig(ARRAY, first.dim, first.ndim + 1, temp=temp)
    else:
        dim = D.ZERO
        for c in bodies:
            dim = D.add(dim, c.sig.dim)
        temp = K.power(first.temp, tuple(dim) == TEMPERATURE) if first.temp else ""
        sig = Sig(first.kind, dim, first.ndim, temp=temp)
    fns = [c.fn for c in bodies]
    name = node.name

    def fn(v: SlotMags, b: BoundVars) -> Magnitude:
        vals = [f(v, b) for f in fns]
        if name == "seq":
            return _collect(vals, node)
        acc = vals[0]
        for t in vals[1:]:
            acc, t = _align(acc, t)
            acc = acc + t if name == "sum" else acc * t
        return acc

    bv = set(lo.bvars | hi.bvars)
    for c in bodies:
        bv |= c.bvars
    bv.discard(var)
    return C(sig, fn, _NOCONST, frozenset(bv))
