"""How values, units and formulas read: SI symbols, numbers, LaTeX (spec: reckoner.md section 2
"Rendering" and section 3 "Articles"). Pure Python: shared by the notebook's outputs and the
article writers.

* A vector is named in SI symbols (``Ω``, ``N``, ``Pa``): a named unit times the fewest base
  units, never introducing a base the vector does not have; ``s⁻¹`` is never written Hz.
* Numbers show ``digits`` significant digits (``1.68×10⁻⁸``); formulas render from the
  syntax tree, optionally with each ``@slot`` replaced by its value.
* A temperature point shows on the scale it was given in (``14.2 °C``); in the working, a K value
  that acts as a difference beside a point shows as ``5 ΔK``, and a point used by its
  thermodynamic value (``@p/(@R*@T)``) in K (issue 17). A negative or
  complex substituted value keeps its parentheses: ``(-3)^2``, never ``-3^2`` (P17).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any, SupportsInt

import numpy as np

from ..formats import superscript
from . import dims as D
from . import grammar as G
from . import shown_units as SU
from .values import POINT_SCALES, Array, Scalar, Sig, Value

_SYMBOL = {
    (1, 1, -2, 0, 0, 0, 0): "N",
    (-1, 1, -2, 0, 0, 0, 0): "Pa",
    (2, 1, -2, 0, 0, 0, 0): "J",
    (2, 1, -3, 0, 0, 0, 0): "W",
    (0, 0, 1, 1, 0, 0, 0): "C",
    (2, 1, -3, -1, 0, 0, 0): "V",
    (-2, -1, 4, 2, 0, 0, 0): "F",
    (2, 1, -3, -2, 0, 0, 0): "Ω",
    (-2, -1, 3, 2, 0, 0, 0): "S",
    (2, 1, -2, -2, 0, 0, 0): "H",
    (2, 1, -2, -1, 0, 0, 0): "Wb",
    (0, 1, -2, -1, 0, 0, 0): "T",
    (0, 0, -1, 0, 0, 1, 0): "kat",
}
_LATEX_SYMBOL = {"Ω": r"\Omega"}


#: every symbol :func:`si_parts` writes, with its vector
SI_SYMBOL_DIMS: dict[str, tuple[int, ...]] = {
    **{sym: vec for vec, sym in _SYMBOL.items()},
    **{sym: tuple(int(k == i) for k in range(7)) for i, sym in enumerate(D.BASE_SYMBOLS)},
}


@lru_cache(maxsize=512)
def si_parts(dim: tuple[SupportsInt, ...], allowed: frozenset[str] | None = None) -> tuple[tuple[str, int], ...]:
    """A vector (7 whole exponents) as ``((symbol, exponent), ...)``: a named SI unit (N, Pa,
    Ω, ...) times the fewest base units, else base units (``s⁻¹``, never Hz). *allowed* limits
    the named units to those it holds (issue 18: never a derived name the person did not use)."""
    vec7 = tuple(int(x) for x in dim)
    if vec7 == D.ZERO:
        return ()
    best: tuple[tuple[int, int], str, tuple[int, ...]] | None = None
    for vec, sym in _SYMBOL.items():
        if allowed is not None and sym not in allowed:
            continue
        if any(d == 0 and v != 0 for d, v in zip(vec7, vec)):
            continue  # never name a unit by introducing a base it does not have (no N·kg⁻¹ for m·s⁻²)
        resid = tuple(a - b for a, b in zip(vec7, vec))
        # fewest leftover base units; on a tie, the named unit that covers more (W before N)
        key = (sum(abs(x) for x in resid), -sum(abs(x) for x in vec))
        if best is None or key < best[0]:
            best = (key, sym, resid)
    base_cost = sum(abs(x) for x in vec7)
    parts: list[tuple[str, int]] = []
    resid = vec7
    if best is not None and best[0][0] + 1 < base_cost:  # a name must make the unit shorter
        parts.append((best[1], 1))
        resid = best[2]
    for sym, e in zip(D.BASE_SYMBOLS, resid):
        if e:
            parts.append((sym, e))
    # positive exponents first
    parts.sort(key=lambda p: p[1] < 0)
    return tuple(parts)


def si_text(dim: Iterable[SupportsInt]) -> str:
    """``Ω·m``, ``kg·m⁻³``, ``s⁻¹``; ``''`` when dimensionless."""
    return "·".join(s if e == 1 else f"{s}{superscript(e)}" for s, e in si_parts(tuple(dim)))


def describe_dim(dim: Sequence[SupportsInt]) -> str:
    """``m³·mol⁻¹ [3,0,0,0,0,-1,0]`` for messages."""
    vec = "[" + ",".join(str(int(x)) for x in dim) + "]"
    name = si_text(tuple(dim))
    return f"{name} {vec}" if name else f"dimensionless {vec}"


def si_latex(dim: Iterable[SupportsInt]) -> str:
    """The unit of a vector in LaTeX: ``\\Omega\\,\\mathrm{m}``; ``''`` when dimensionless."""
    return _si_latex(tuple(dim))


@lru_cache(maxsize=512)
def _si_latex(dim: tuple[SupportsInt, ...]) -> str:
    parts = si_parts(dim)
    if not parts:
        return ""
    out = []
    for s, e in parts:
        # \Omega stays outside \mathrm: under unicode-math \mathrm{\Omega} asks the text font
        # for a math-italic capital omega it does not have (no Ω in the PDF)
        sym = _LATEX_SYMBOL[s] if s in _LATEX_SYMBOL else r"\mathrm{" + s + "}"
        out.append(sym if e == 1 else f"{sym}^{{{e}}}")
    return r"\,".join(out)



_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
    "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega",
    "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi", "Psi", "Omega",
}


# --------------------------------------------------------------------------- numbers


def _mantissa_exp(x: float, digits: int | None) -> tuple[str, int | None]:
    if x == 0:
        return "0", None
    if digits is None:  # as stored: the shortest text that reads back as x, a whole number below 1e15 in full
        s = str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)
    else:
        s = f"{x:.{digits}g}"
    if "e" in s:
        m, e = s.split("e")
        return m, int(e)
    return s, None


def num_text(x: Scalar, digits: int | None) -> str:
    """``0.12725``, ``1.68×10⁻⁸``, ``3+4j``, ``-31.83j``: *digits* significant digits, or with
    ``None`` every digit the float holds (its shortest round-trip form; a whole number below 1e15
    written out: ``1500000000000``), as the article writers print numbers already cut."""
    if isinstance(x, complex):
        im_ = num_text(abs(x.imag), digits)
        if x.real == 0:
            return f"{'-' if x.imag < 0 else ''}{im_}j"
        return f"{num_text(x.real, digits)}{'-' if x.imag < 0 else '+'}{im_}j"
    m, e = _mantissa_exp(float(x), digits)
    return m if e is None else f"{m}×10{superscript(e)}"


def num_latex(x: Scalar, digits: int | None) -> str:
    """``1.68 \\times 10^{-8}``, ``\\left(3 + 4\\,j\\right)``: *digits* significant digits (``None``:
    every digit, as :func:`num_text`)."""
    if isinstance(x, complex):
        im_ = num_latex(abs(x.imag), digits)
        if x.real == 0:
            return rf"{'-' if x.imag < 0 else ''}{im_}\,j"
        re_ = num_latex(x.real, digits)
        return rf"\left({re_} {'-' if x.imag < 0 else '+'} {im_}\,j\right)"
    m, e = _mantissa_exp(float(x), digits)
    return m if e is None else rf"{m} \times 10^{{{e}}}"


def array_items(a: Array, f: Callable[[Any, int], str], digits: int, limit: int = 6) -> str:
    """An array's items as text, each drawn by ``f(item, digits)``, at most *limit* per axis
    (then ``…``); nested arrays in brackets."""
    if a.ndim > 1:
        rows = [array_items(r, f, digits, limit) for r in a[:limit]]
        more = ", …" if a.shape[0] > limit else ""
        return "[" + ", ".join(rows) + more + "]"
    vals = a.tolist()
    if len(vals) > limit:
        shown = [f(v, digits) for v in vals[:3]] + ["…"] + [f(v, digits) for v in vals[-2:]]
        return "[" + ", ".join(shown) + f"] ({len(vals)} elements)"
    return "[" + ", ".join(f(v, digits) for v in vals) + "]"


#: a point's scale: (symbol, LaTeX, SI -> reading)
_SCALES: dict[str, tuple[str, str, Callable[[Any], Any]]] = {
    "degC": ("°C", r"{}^{\circ}\mathrm{C}", lambda k: k - 273.15),
    "degF": ("°F", r"{}^{\circ}\mathrm{F}", lambda k: k * 1.8 - 459.67),
}


def on_scale(mag: Any, scale: str) -> Any:
    """A point's SI magnitude (K) as a reading on *scale* (``degC``, ``degF``); complex values
    shift their real part only."""
    to = _SCALES[scale][2]
    if isinstance(mag, complex):
        return complex(to(mag.real), mag.imag * (1.8 if scale == "degF" else 1.0))
    if isinstance(mag, np.ndarray) and mag.dtype.kind == "c":
        return to(mag.real) + 1j * mag.imag * (1.8 if scale == "degF" else 1.0)
    return to(mag)


def shown_in(v: Value, unit: SU.Unit | None = None) -> tuple[Any, str, str]:
    """``(magnitude, unit text, unit LaTeX)`` a scalar or array value is shown in: its display
    *unit* (issue 18: ``(2.25, "kN·m", ...)``), else its SI unit, or a temperature point's scale
    (``(14.2, "°C", ...)`` for 287.35 K given in degC). A *unit* of another vector is ignored."""
    if v.sig.temp in POINT_SCALES:
        sym, tex, _ = _SCALES[v.sig.temp]
        return on_scale(v.mag, v.sig.temp), sym, tex
    if unit is not None and SU.unit_dim(unit) == v.sig.dim:  # stored vectors are whole numbers
        mag = SU.convert(v.mag, unit)
        if (math.isfinite(mag) if type(mag) is float else bool(np.all(np.isfinite(mag)))):  # else SI: too large
            return mag, SU.text(unit), SU.latex(unit)
    return v.mag, si_text(v.sig.dim), si_latex(v.sig.dim)


#: magnitudes :func:`_scalar_view` takes (exactly these types: numpy scalars and arrays go the long way)
_PLAIN_SCALARS = (float, complex, int)


@lru_cache(maxsize=8192)
def _scalar_view(_kind: str, mag: complex, sig: Sig, digits: int, unit: SU.Unit | None
                 ) -> tuple[str, str]:
    """:func:`value_text` and :func:`value_latex` of one scalar, computed together and kept: a
    record reads the same givens in formula after formula, and ``verify`` renders every one
    again (issue 23). *_kind* is ``type(mag).__name__`` (``1 == 1.0`` as keys; their texts differ); ``0.0``
    and ``-0.0`` share a key and a text (``0``)."""
    shown, unit_text, unit_tex = shown_in(Value(mag, sig), unit)
    text = f"{num_text(shown, digits)} {unit_text}".strip()
    body = num_latex(shown, digits)
    return text, (f"{body}\\,{unit_tex}" if unit_tex else body)


def value_views(v: Value, digits: int, unit: SU.Unit | None = None) -> tuple[str, str]:
    """``(value_text(v, digits, unit), value_latex(v, digits, unit))``."""
    if type(v.mag) in _PLAIN_SCALARS:
        return _scalar_view(type(v.mag).__name__, v.mag, v.sig, digits, unit)
    return value_text(v, digits, unit), value_latex(v, digits, unit)


def value_text(v: Value, digits: int, unit: SU.Unit | None = None) -> str:
    """A value with its display *unit* (issue 18), else its SI unit, as plain text (``4.7 Ω``,
    ``2.25 kN·m``, ``[1, 2, 3] m``, ``{a: 1 m, b: 2 s}``); a temperature point on its scale
    (``14.2 °C``)."""
    if type(v.mag) in _PLAIN_SCALARS:
        return _scalar_view(type(v.mag).__name__, v.mag, v.sig, digits, unit)[0]
    if v.sig.kind == "object":
        return "{" + ", ".join(f"{n}: {value_text(Value(v.mag[n], s), digits)}" for n, s in v.sig.fields) + "}"
    mag, unit_text, _ = shown_in(v, unit)
    if isinstance(mag, np.ndarray):
        body = array_items(mag, num_text, digits)
    else:
        body = num_text(mag, digits)
    return f"{body} {unit_text}".strip()


def value_latex(v: Value, digits: int, unit: SU.Unit | None = None) -> str:
    """A value with its display *unit*, else its SI unit, as LaTeX (objects as
    ``\\left\\{...\\right\\}``); a point on its scale."""
    if type(v.mag) in _PLAIN_SCALARS:
        return _scalar_view(type(v.mag).__name__, v.mag, v.sig, digits, unit)[1]
    if v.sig.kind == "object":
        return r"\left\{" + r",\ ".join(
            rf"\mathrm{{{n}}}: {value_latex(Value(v.mag[n], s), digits)}" for n, s in v.sig.fields) + r"\right\}"
    mag, _, unit_tex = shown_in(v, unit)
    if isinstance(mag, np.ndarray):
        body = array_latex(mag, digits)
    else:
        body = num_latex(mag, digits)
    return f"{body}\\,{unit_tex}" if unit_tex else body


def array_latex(a: Array, digits: int, limit: int = 6) -> str:
    """An array as LaTeX (``\\left[ ... \\right]``), *digits* significant digits, at most *limit*
    items per axis (then ``\\ldots``)."""
    if a.ndim > 1:
        rows = [array_latex(r, digits, limit) for r in a[:limit]]
        return r"\left[" + ", ".join(rows) + (r", \ldots" if a.shape[0] > limit else "") + r"\right]"
    vals = a.tolist()
    if len(vals) > limit:
        items = [num_latex(v, digits) for v in vals[:3]] + [r"\ldots"] + [num_latex(v, digits) for v in vals[-2:]]
        return r"\left[" + ", ".join(items) + r"\right]_{" + str(len(vals)) + "}"
    return r"\left[" + ", ".join(num_latex(v, digits) for v in vals) + r"\right]"


# --------------------------------------------------------------------------- formulas


def name_latex(name: str) -> str:
    """``R_load`` -> ``R_{\\mathrm{load}}``; ``rho`` -> ``\\rho``."""
    head, _, sub = name.partition("_")
    h = "\\" + head if head in _GREEK else (head if len(head) == 1 else rf"\mathrm{{{head}}}")
    if sub:
        esc = sub.replace("_", "\\_")
        s = "\\" + sub if sub in _GREEK else r"\mathrm{" + esc + "}"
        return f"{h}_{{{s}}}"
    return h


def _in_role(v: Value, pos: int, roles: Mapping[int, str] | None) -> Value:
    """A point used by its thermodynamic value, shown in K (its kind dropped for display)."""
    if roles and roles.get(pos) == "kelvin" and v.sig.temp:
        return Value(v.mag, replace(v.sig, temp=""))
    return v


def _unit_of(n: G.Slot, v: Value, roles: Mapping[int, str] | None,
             units: Mapping[str, SU.Unit | None] | None) -> SU.Unit | None:
    """The unit a substituted slot shows in: the person's (issue 18), except where the check reads
    a temperature by its value in K (``kelvin``/``delta`` roles)."""
    if not units or (roles and n.pos in roles):
        return None
    return units.get(n.name)


_FUNC_LATEX = {
    "sin": r"\sin", "cos": r"\cos", "tan": r"\tan", "asin": r"\arcsin", "acos": r"\arccos", "atan": r"\arctan",
    "exp": r"\exp", "ln": r"\ln", "log": r"\log_{10}", "arg": r"\arg",
}
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "neg": 3, "^": 4}


#: a view of a formula: ``(plain text, LaTeX)``
View = tuple[str, str]


class _Views:
    """One walk over a formula tree that draws it twice, as plain text and as LaTeX, with the
    values to substitute: the record view shows both for every step, and ``verify`` draws every
    step again (issue 23). Methods, not closures: closures that call each other make a reference
    cycle on every call, and collecting those cycles was most of a 300-line cell's verify time.
    Each node kind has its own method, found by the node's type in :data:`_KINDS`."""

    __slots__ = ("digits", "roles", "subst", "typed", "units")

    def __init__(self, subst: dict[str, Value] | None, digits: int, typed: dict[str, int] | None,
                 roles: Mapping[int, str] | None, units: Mapping[str, SU.Unit | None] | None) -> None:
        self.subst, self.digits, self.typed, self.roles, self.units = subst, digits, typed, roles, units

    def go(self, n: G.Node) -> View:
        draw = _KINDS.get(type(n))
        return draw(self, n) if draw is not None else ("?", "?")

    @staticmethod
    def prec(n: G.Node) -> int:
        """How tightly *n* binds in the plain text (LaTeX: :meth:`prec_latex`)."""
        t = type(n)
        if t is G.Binary:
            return _PREC[n.op]  # type: ignore[attr-defined]
        return 3 if t is G.Unary else 9

    @staticmethod
    def prec_latex(n: G.Node) -> int:
        """As :meth:`prec`; a negative or imaginary number binds like a sign in LaTeX."""
        t = type(n)
        if t is G.Binary:
            return _PREC[n.op]  # type: ignore[attr-defined]
        if t is G.Unary or (t is G.Num and (isinstance(n.value, complex) or n.value < 0)):  # type: ignore[attr-defined]
            return 3
        return 9

    def wrap(self, n: G.Node, view: View, p: int, p_latex: int | None = None) -> View:
        """*view* of node *n* in brackets on each side where it binds less tightly than *p*
        (LaTeX: *p_latex*, default *p*)."""
        text, latex = view
        if self.prec(n) < p:
            text = f"({text})"
        if self.prec_latex(n) < (p if p_latex is None else p_latex):
            latex = rf"\left({latex}\right)"
        return text, latex

    def sub(self, n: G.Node, p: int, p_latex: int | None = None) -> View:
        """Child *n* drawn and wrapped (:meth:`wrap`)."""
        return self.wrap(n, self.go(n), p, p_latex)

    def num(self, n: G.Num) -> View:
        v = n.value
        if isinstance(v, complex):
            return f"{num_text(v.imag, 12)}j", f"{num_latex(v.imag, 12)}\\,j"
        return num_text(v, 12), num_latex(v, 12)

    def slot(self, n: G.Slot) -> View:
        subst = self.subst
        v = subst.get(n.name) if subst is not None else None
        if v is None:
            return "@" + n.name, name_latex(n.name)
        roles = self.roles
        if roles:
            v = _in_role(v, n.pos, roles)
        typed = self.typed
        digits = max(self.digits, typed.get(n.name, 0)) if typed else self.digits
        unit = _unit_of(n, v, roles, self.units)
        t, lv = value_views(v, digits, unit)
        if roles and roles.get(n.pos) == "delta":
            if t.endswith(" K"):
                t = t[:-1] + "ΔK"
            if lv.endswith(r"\,\mathrm{K}"):
                lv = lv[: -len(r"\mathrm{K}")] + r"\Delta\mathrm{K}"
        if " " in t or "+" in t or "-" in t:
            t = f"({t})"
        if si_latex(v.sig.dim) or r"\," in lv or v.sig.kind != "scalar" or lv.startswith("-"):
            lv = rf"\left({lv}\right)"
        return t, lv

    def bound(self, n: G.Bound) -> View:
        return n.name, name_latex(n.name)

    def const(self, n: G.Const) -> View:
        return _CONST_TEXT[n.name], _CONST_LATEX[n.name]

    def unary(self, n: G.Unary) -> View:
        t, lv = self.sub(n.x, 3)
        return "-" + t, "-" + lv

    def binary(self, n: G.Binary) -> View:
        op = n.op
        left, right = self.go(n.left), self.go(n.right)
        if op == "/":
            lt, _ = self.wrap(n.left, left, 2)
            rt, _ = self.wrap(n.right, right, 3)
            return f"{lt}/{rt}", rf"\frac{{{left[1]}}}{{{right[1]}}}"
        if op == "^":
            lt, ll = self.wrap(n.left, left, 5)
            rt, _ = self.wrap(n.right, right, 4)
            return f"{lt}^{rt}", "{" + ll + "}^{" + right[1] + "}"
        if op == "*":
            lt, ll = self.wrap(n.left, left, 2)
            rt, rl = self.wrap(n.right, right, 2)
            return f"{lt}·{rt}", ll + r" \cdot " + rl
        lt, ll = self.wrap(n.left, left, 1)
        rt, rl = self.wrap(n.right, right, 2 if op == "-" else 1)
        return f"{lt}{op}{rt}", ll + f" {op} " + rl

    def index(self, n: G.Index) -> View:
        xt, xl = self.sub(n.x, 9)
        it, il = self.go(n.index)
        return f"{xt}[{it}]", xl + "_{[" + il + "]}"

    def field(self, n: G.Field) -> View:
        xt, xl = self.sub(n.x, 9)
        return f"{xt}.{n.name}", xl + r".\mathrm{" + n.name + "}"

    def call(self, n: G.Call) -> View:
        texts, latexes = [], []
        for a in n.args:  # the call's own brackets are enough around a substituted slot
            t, lv = self.go(a)
            if type(a) is G.Slot:
                if t.startswith("(") and t.endswith(")"):
                    t = t[1:-1]
                if lv.startswith(r"\left(") and lv.endswith(r"\right)"):
                    lv = lv[len(r"\left("):-len(r"\right)")]
            texts.append(t)
            latexes.append(lv)
        text = f"{n.name}(" + ", ".join(texts) + ")"
        if n.name == "sqrt":
            return text, rf"\sqrt{{{latexes[0]}}}"
        if n.name == "abs":
            return text, rf"\left|{latexes[0]}\right|"
        if n.name in _FUNC_LATEX:
            return text, rf"{_FUNC_LATEX[n.name]}\left({latexes[0]}\right)"
        return text, rf"\operatorname{{{n.name}}}\left({', '.join(latexes)}\right)"

    def fold(self, n: G.Fold) -> View:
        body, lo, hi = self.go(n.body), self.go(n.lo), self.go(n.hi)
        text = f"{n.name}_{{{n.var}={lo[0]}}}^{{{hi[0]}}}({body[0]})"
        bounds = f"_{{{name_latex(n.var)}={lo[1]}}}^{{{hi[1]}}}"
        if n.name == "sum":
            return text, rf"\sum{bounds} {self.wrap(n.body, body, 2)[1]}"
        if n.name == "prod":
            return text, rf"\prod{bounds} {self.wrap(n.body, body, 2)[1]}"
        return text, rf"\left[{body[1]}\right]{bounds}"

    def symbolic(self, n: G.Symbolic) -> View:
        return n.text, r"\text{" + n.text.replace("$", r"\$") + "}"


_CONST_TEXT = {"pi": "π", "e": "e", "inf": "∞", "i": "i", "j": "j"}
_CONST_LATEX = {"pi": r"\pi", "e": "e", "inf": r"\infty", "i": "i", "j": "j"}
_KINDS: dict[type, Callable[[_Views, Any], View]] = {
    G.Num: _Views.num, G.Slot: _Views.slot, G.Bound: _Views.bound, G.Const: _Views.const, G.Unary: _Views.unary,
    G.Binary: _Views.binary, G.Index: _Views.index, G.Field: _Views.field, G.Call: _Views.call,
    G.Fold: _Views.fold, G.Symbolic: _Views.symbolic,
}


def formula_views(node: G.Node, subst: dict[str, Value] | None = None, digits: int = 5,
                  typed: dict[str, int] | None = None, roles: Mapping[int, str] | None = None,
                  units: Mapping[str, SU.Unit | None] | None = None) -> View:
    """``(formula_text(...), formula_latex(...))`` of the same arguments, drawn in one walk (the
    record view shows both)."""
    return _Views(subst, digits, typed, roles, units).go(node)


def formula_latex(node: G.Node, subst: dict[str, Value] | None = None, digits: int = 5,
                  typed: dict[str, int] | None = None, roles: Mapping[int, str] | None = None,
                  units: Mapping[str, SU.Unit | None] | None = None) -> str:
    """The formula tree as LaTeX; with ``subst`` (slot -> Value) slots show their values, with
    at least ``typed[slot]`` significant digits (the digits the person typed) and *digits*; *roles*
    (``@slot`` position -> ``"delta"``/``"kelvin"``, from the check) shows a K operand as a
    difference (``5\\,\\Delta\\mathrm{K}``) or a point by its value in K; *units* (slot -> display
    unit) shows each value in the unit the person gave it (issue 18)."""
    return formula_views(node, subst, digits, typed, roles, units)[1]


def formula_text(node: G.Node, subst: dict[str, Value], digits: int, typed: dict[str, int] | None = None,
                 roles: Mapping[int, str] | None = None, units: Mapping[str, SU.Unit | None] | None = None) -> str:
    """The formula as written, each ``@slot`` replaced by its value with its SI unit (a point on its
    scale; *roles* as in :func:`formula_latex`: ``5 ΔK``, a point in K). A value with a sign or a
    space is parenthesised: ``(-3)^2``, ``(25 m)``."""
    return formula_views(node, subst, digits, typed, roles, units)[0]


