"""Display units: a result shown in the units the person wrote (spec: reckoner.md section 2
"Rendering"; issue 18; public cases P24 and P01). Pure Python: the engine records display units
in its rows, and every reader (the cell, the side panel, ``records list``, articles) converts an
SI magnitude with them, without pint.

* A display unit is a product of *atoms* with whole exponents. An atom is one unit as the person
  wrote it (``kN``, ``mm``, ``W``, ``Δ°C``) with its SI factor and its 7-integer vector
  (:class:`Atom`); in a record row it is ``[symbol, exponent, factor, vector]``, with a fifth
  item ``true`` for a unit that counts angles or cycles. Symbols hold letters, digits and
  ``°Δ%‰_′″`` only (never markup); at most 12 atoms, exponents within ±12.
* :func:`compose` applies pint's unit arithmetic to a formula's tree (units compose from the
  operands: ``@F*@L`` of ``kN`` and ``mm`` is ``kN·mm``; a sum takes its left operand's unit;
  a point minus a point is a difference on its scale, ``Δ°C``; a point inside a product counts
  in K). :func:`settle` then makes it a result's unit:

  - atoms of one dimension merge into the first (``mm·m`` is ``mm²``); angle-bearing atoms (rpm,
    rad, degrees, Hz) are never reused for a result (P01: ``s⁻¹``, never Hz unasked);
    dimensionless atoms drop;
  - a composition that hides a simpler unit (``J/kPa`` is ``m³``, ``V/Ω`` is ``A``) or runs to
    three units or more gives way to a unit the person wrote whole for that dimension (``kPa``),
    else to the vector's SI name when that is shorter;
  - a moment is never named an energy (P24: force × length shows ``N·m``, never ``J``; mp-units'
    quantity kinds): ``J`` is chosen only for a composition holding an energy, power, electrical,
    thermal or chemical unit;
  - preferences (``%reckon units length=mm force=kN``, :class:`Preferences`) come first: for the
    whole result, then for each atom of a preferred dimension.
* :func:`coherent` gives a unit's SI form atom by atom (``kN·m`` -> ``N·m``), for a ``given``
  line's SI echo.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, cast

from ..formats import superscript
from . import dims as D
from . import grammar as G

TEMPERATURE = (0, 0, 0, 0, 1, 0, 0)
FORCE = (1, 1, -2, 0, 0, 0, 0)
LENGTH = (1, 0, 0, 0, 0, 0, 0)
ENERGY = (2, 1, -2, 0, 0, 0, 0)
POWER = (2, 1, -3, 0, 0, 0, 0)

#: quantity names a preference may use, with their vectors (``%reckon units length=mm``)
QUANTITIES: dict[str, tuple[int, ...]] = {
    "length": LENGTH, "mass": (0, 1, 0, 0, 0, 0, 0), "time": (0, 0, 1, 0, 0, 0, 0),
    "current": (0, 0, 0, 1, 0, 0, 0), "temperature_difference": TEMPERATURE,
    "amount": (0, 0, 0, 0, 0, 1, 0), "luminous_intensity": (0, 0, 0, 0, 0, 0, 1),
    "area": (2, 0, 0, 0, 0, 0, 0), "volume": (3, 0, 0, 0, 0, 0, 0),
    "velocity": (1, 0, -1, 0, 0, 0, 0), "speed": (1, 0, -1, 0, 0, 0, 0),
    "acceleration": (1, 0, -2, 0, 0, 0, 0), "force": FORCE,
    "pressure": (-1, 1, -2, 0, 0, 0, 0), "stress": (-1, 1, -2, 0, 0, 0, 0),
    "energy": ENERGY, "work": ENERGY, "heat": ENERGY, "moment": ENERGY, "torque": ENERGY,
    "power": (2, 1, -3, 0, 0, 0, 0), "density": (-3, 1, 0, 0, 0, 0, 0),
    "mass_flow": (0, 1, -1, 0, 0, 0, 0), "volume_flow": (3, 0, -1, 0, 0, 0, 0),
    "charge": (0, 0, 1, 1, 0, 0, 0), "voltage": (2, 1, -3, -1, 0, 0, 0),
    "resistance": (2, 1, -3, -2, 0, 0, 0), "capacitance": (-2, -1, 4, 2, 0, 0, 0),
    "inductance": (2, 1, -2, -2, 0, 0, 0), "line_load": (0, 1, -2, 0, 0, 0, 0),
    "second_moment_of_area": (4, 0, 0, 0, 0, 0, 0), "section_modulus": (3, 0, 0, 0, 0, 0, 0),
}
#: quantities of the energy vector that are moments (force × lever arm), not energies
MOMENTS = frozenset({"moment", "torque"})



@dataclass(frozen=True)
class Atom:
    """One unit as written: ``symbol`` (``kN``, ``Δ°C``), ``factor`` (SI per unit, > 0),
    ``dim`` (7 ints), ``angle`` (True for units that count angles or cycles: rpm, rad, °, Hz)."""

    symbol: str
    factor: float
    dim: tuple[int, ...]
    angle: bool = False
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.symbol, self.factor, self.dim, self.angle)))

    def __hash__(self) -> int:
        # computed once: units are the keys of this module's caches, hashed on every lookup
        return self._hash

    def __reduce__(self) -> tuple[type[Atom], tuple[str, float, tuple[int, ...], bool]]:
        # a copy or an unpickled atom hashes again (a str's hash differs from process to process)
        return Atom, (self.symbol, self.factor, self.dim, self.angle)


#: a display unit: atoms with whole, non-zero exponents, in the order first met
Unit = tuple[tuple[Atom, int], ...]

KELVIN = Atom("K", 1.0, TEMPERATURE)
#: π inside a formula, kept in a composition only to count a conversion between cycles and radians
#: (``@f*2*$pi`` of Hz is rad/s; P01); dimensionless and angle-marked, so no result shows it
PI = Atom("π", 1.0, (0, 0, 0, 0, 0, 0, 0), True)
DELTA_ATOMS = {"degC": Atom("Δ°C", 1.0, TEMPERATURE), "degF": Atom("Δ°F", 5 / 9, TEMPERATURE), "K": KELVIN}
_SI_FACTOR = {"kg": 1.0}


@dataclass(frozen=True)
class Preferences:
    """Preferred display units per quantity (``%reckon units``, ``[reckon.units]``):
    ``{quantity name: Unit}``, in the order given."""

    units: tuple[tuple[str, Unit], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.units)

    def for_dim(self, dim: tuple[int, ...], moment: bool | None = None) -> Unit | None:
        """The preferred unit of a whole result of vector *dim*. For the energy vector (*moment*:
        True for a force times a lever arm, False for an energy, None when the composition cannot
        tell): a moment takes only a moment (or torque) preference and an energy only an energy
        one (P24: a moment is never shown in kJ unasked); an undecided one takes the one set, or
        the energy preference when both are."""
        found = [(name, u) for name, u in self.units if QUANTITIES.get(name, unit_dim(u)) == dim]
        if dim == ENERGY and moment is not None:
            found = [(name, u) for name, u in found if (name in MOMENTS) == moment]
        elif dim == ENERGY and len({name in MOMENTS for name, _ in found}) == 2:
            found = [(name, u) for name, u in found if name not in MOMENTS]
        return found[-1][1] if found else None

    def to_json(self) -> dict[str, Any]:
        return {name: to_json(u) for name, u in self.units}

    @classmethod
    def from_json(cls, data: object) -> Preferences:
        """Read a start row's ``units``; anything malformed is left out (never raises)."""
        if not isinstance(data, dict):
            return cls()
        out = []
        for name, raw in data.items():
            u = from_json(raw, QUANTITIES.get(name)) if isinstance(name, str) else None
            if u:
                out.append((name, u))
        return cls(tuple(out))


# --------------------------------------------------------------------------- arithmetic


@lru_cache(maxsize=4096)
def unit_dim(u: Unit) -> tuple[int, ...]:
    """The 7-integer vector of a unit."""
    out = [0] * 7
    for a, e in u:
        for k in range(7):
            out[k] += a.dim[k] * e
    return tuple(out)


@lru_cache(maxsize=4096)
def unit_factor(u: Unit) -> float:
    """SI per unit (``kN·mm`` -> 1.0, ``mm²`` -> 1e-6)."""
    f = 1.0
    for a, e in u:
        f *= a.factor ** e
    return f


def _mul(a: Unit, b: Unit, sign: int = 1) -> Unit:
    exps: dict[Atom, int] = {}
    order: list[Atom] = []
    for atom, e in (*a, *((x, sign * y) for x, y in b)):
        if atom not in exps:
            order.append(atom)
            exps[atom] = 0
        exps[atom] += e
    return tuple((x, exps[x]) for x in order if exps[x])


def _pow(u: Unit, p: Fraction) -> Unit | None:
    out = []
    for a, e in u:
        q = e * p
        if q.denominator != 1:
            return None
        out.append((a, int(q)))
    return tuple(out)


def si_unit(dim: Sequence[Any], allowed: frozenset[str] | None = None) -> Unit:
    """The SI name of a vector as atoms (``N·m`` -> ``((N, 1), (m, 1))``); *allowed* limits the
    named units (``N``, ``Pa``, ...) to those given."""
    from .display import si_parts  # display imports this module

    parts = si_parts(tuple(int(x) for x in dim), allowed)
    return tuple((_si_atom(sym), e) for sym, e in parts)


_SI_ATOMS: dict[str, Atom] = {}


def _si_atom(sym: str) -> Atom:
    a = _SI_ATOMS.get(sym)
    if a is None:
        from .display import SI_SYMBOL_DIMS

        a = _SI_ATOMS[sym] = Atom(sym, 1.0, SI_SYMBOL_DIMS[sym])
    return a


# --------------------------------------------------------------------------- composing


@dataclass(frozen=True)
class _Point:
    """A temperature point on *scale* inside a formula (``degC``, ``degF``, ``K``)."""

    scale: str


Composed = Unit | _Point | None


def compose(node: G.Node, units: Mapping[str, Unit], temps: Mapping[str, str],
            roles: Mapping[int, str] | None = None) -> Composed:
    """A formula's unit composed from the units of the slots it reads (*units*: slot -> Unit;
    *temps*: slot -> temperature kind ``""``/``"degC"``/``"degF"``/``"K"``/``"delta"``;
    *roles* from the check: ``@slot`` position -> ``"kelvin"``/``"delta"``), as pint composes
    units; ``None`` when no unit follows from the operands (a power by a slot, a field)."""
    key = (id(node), tuple(sorted(units.items())), tuple(sorted(temps.items())), tuple(sorted((roles or {}).items())))
    held = _COMPOSED.get(key)
    if held is not None and held[0] is node:
        return held[1]
    composed = _compose(node, *key[1:])
    if len(_COMPOSED) >= 4096:
        _COMPOSED.clear()
    _COMPOSED[key] = (node, composed)
    return composed


#: compose's results by the formula tree's identity (parse() keeps one tree per formula text),
#: each beside its tree, so the id stays that tree's while the entry lives: hashing the tree by
#: value on every call was a tenth of a cell's run (issue 23)
_COMPOSED: dict[tuple[Any, ...], tuple[G.Node, Composed]] = {}


def _compose(node: G.Node, unit_items: tuple, temp_items: tuple, role_items: tuple) -> Composed:
    units, temps, roles = dict(unit_items), dict(temp_items), dict(role_items)

    def as_unit(c: Composed) -> Unit | None:
        return (((KELVIN, 1),) if c.scale else ()) if isinstance(c, _Point) else c

    def go(n: G.Node) -> Composed:
        if isinstance(n, G.Const) and n.name == "pi":
            return ((PI, 1),)
        if isinstance(n, (G.Num, G.Const, G.Bound)):
            return ()
        if isinstance(n, G.Slot):
            temp = temps.get(n.name, "")
            role = roles.get(n.pos)
            if role in ("kelvin", "delta"):
                return ((KELVIN, 1),)
            if temp in ("degC", "degF", "K"):
                return _Point(temp)
            return units.get(n.name)
        if isinstance(n, G.Unary):
            return go(n.x)
        if isinstance(n, G.Binary):
            if n.op in "+-":
                return _add(go(n.left), go(n.right), n.op)
            if n.op in "*/":
                a, b = as_unit(go(n.left)), as_unit(go(n.right))
                return None if a is None or b is None else _mul(a, b, 1 if n.op == "*" else -1)
            base = as_unit(go(n.left))
            p = _exponent(n.right)
            if base is None:
                return None
            if not base:
                return ()
            return None if p is None else _pow(base, p)
        if isinstance(n, G.Call):
            if n.name == "sqrt":
                base = as_unit(go(n.args[0]))
                return None if base is None else _pow(base, Fraction(1, 2))
            if n.name in ("abs", "re", "im", "conj", "floor", "ceil", "transpose"):
                return go(n.args[0])
            if n.name in ("min", "max", "mod"):
                return _add(go(n.args[0]), go(n.args[1]), "+")
            return ()  # exp, ln, trigonometry, sign, arg, len, atan2: plain numbers
        if isinstance(n, G.Index):
            return go(n.x)
        if isinstance(n, G.Fold):
            body = go(n.body)
            if n.name == "prod":
                return () if body == () else None
            return body
        return None  # a field of an object, a symbolic call

    return go(node)


def _add(a: Composed, b: Composed, op: str) -> Composed:
    if isinstance(a, _Point) and isinstance(b, _Point):
        return ((DELTA_ATOMS[a.scale], 1),) if op == "-" else a
    if isinstance(a, _Point):
        return a
    if isinstance(b, _Point):
        return b
    return a if a is not None else b


def _exponent(n: G.Node) -> Fraction | None:
    neg = False
    while isinstance(n, G.Unary):
        neg, n = not neg, n.x
    if isinstance(n, G.Num) and not isinstance(n.value, complex) and math.isfinite(n.value):
        f = Fraction(n.value).limit_denominator(12)
        if abs(float(f) - n.value) < 1e-12:
            return -f if neg else f
    return None


# --------------------------------------------------------------------------- a result's unit


def settle(c: Composed, dim: Sequence[Any], known: Sequence[Unit] = (), prefs: Preferences | None = None,
           difference: bool = True) -> Unit | None:
    """The display unit of a result of vector *dim* composed as *c* (:func:`compose`); *known*:
    the units the person wrote whole in the record (givens, shows, declared units), in order;
    ``None`` to show it as today (a temperature point on its scale; nothing known at all: SI).
    *difference*: False for a thermodynamic temperature (K), which a temperature-difference
    preference does not rename. See the module's docstring for the rules."""
    u = _settle(c, tuple(map(int, dim)), tuple(known), prefs, difference)
    return u if u is None or fits(u) else None


@lru_cache(maxsize=4096)
def _settle(c: Composed, target: tuple[int, ...], known: tuple[Unit, ...], prefs: Preferences | None,
            difference: bool) -> Unit | None:
    if isinstance(c, _Point):
        return None
    energy = c is not None and not isinstance(c, _Point) and _energy_ok(c)
    u = _clean(c) if c is not None else None
    if u is not None and unit_dim(u) != target:
        u = None
    moment = u is not None and _is_moment(u)  # force × lever arm: which of a moment and an energy preference
    no_joule = moment or (target == ENERGY and not energy)  # a mechanical composition may be a moment (P24)
    kind = True if moment else (False if energy else None)  # a moment, an energy, or undecided (kg·m²/s²)
    if prefs and (target != TEMPERATURE or difference):
        whole = prefs.for_dim(target, kind if target == ENERGY else None)
        if whole is not None:
            return whole
        if u is not None:
            u = _merge(tuple(((_preferred(a, prefs) or ((a, 1),))[0][0], e) for a, e in u))
    # a composition that hides a simpler unit (J/kPa is m³, V/Ω is A, µF·V² is J) or runs to three
    # units or more (kg/(m·s²) is Pa) gives way to its SI name when that is shorter; never J for a
    # moment (P24)
    alt = si_unit(target, _NO_JOULE if no_joule else None)
    if u is not None and (len(u) >= 3 or _hides_simpler(u)) and len(alt) < len(u) \
            and not (target == ENERGY and not energy):  # kg·m²/s² stays: neither J nor N·m is known to fit
        u = None
    # a unit the person wrote whole for this vector replaces a longer composition
    for k in known:
        if unit_dim(k) != target or any(a.angle for a, _ in k):
            continue
        if target == ENERGY and u is not None and (_is_moment(k) != moment or kind is None):
            break  # a moment's unit never names an energy, nor an energy's a moment (P24)
        if u is None or (len(k) < len(u) and not (no_joule and not _is_moment(k))):
            return k
        break
    if u is not None:
        return u
    if target == D.ZERO:
        return ()
    if c is None and not known:
        return None  # nothing composes and nothing was written: the SI name, as before display units
    return alt


def _all_but_joule() -> frozenset[str]:
    from .display import SI_SYMBOL_DIMS  # display imports this module

    return frozenset(SI_SYMBOL_DIMS) - {"J"}


_NO_JOULE = _all_but_joule()


def _preferred(a: Atom, prefs: Preferences) -> Unit | None:
    """A one-atom preference for an atom's own dimension (``length=mm`` turns m into mm)."""
    if a.dim == D.ZERO or a.angle:
        return None
    p = prefs.for_dim(a.dim, _is_moment(((a, 1),)) if a.dim == ENERGY else None)
    return p if p is not None and len(p) == 1 and p[0][1] == 1 else None


def _clean(u: Unit) -> Unit | None:
    """Angle atoms as their SI vector, dimensionless atoms dropped (unless the whole unit is one
    such atom: ``%``), atoms of one vector merged into the first."""
    if len(u) == 1 and u[0][1] == 1 and u[0][0].dim == D.ZERO and not u[0][0].angle:
        return u
    out: Unit = ()
    for a, e in u:
        if a.angle:
            if a.dim != D.ZERO:
                out = _mul(out, _pow(si_unit(a.dim, frozenset()), Fraction(e)) or ())
            continue
        if a.dim == D.ZERO:
            continue
        out = _mul(out, ((a, e),))
    return _merge(out)


@lru_cache(maxsize=1024)
def coherent(u: Unit) -> Unit:
    """The SI form of a unit as written, atom by atom (``kN·m`` -> ``N·m``, ``km/h`` -> ``m/s``,
    ``kJ/(kg·K)`` -> ``J/(kg·K)``, ``rpm`` -> ``s⁻¹``): what a ``given`` line shows its stored SI
    value in, never renaming the person's quantity (a moment stays ``N·m``, P24)."""
    out: Unit = ()
    for a, e in u:
        if a.dim == D.ZERO:
            continue
        si = si_unit(a.dim, None if a.dim == ENERGY else _NO_JOULE) if not a.angle else si_unit(a.dim, frozenset())
        out = _mul(out, _pow(si, Fraction(e)) or ())
    return _merge(out)


def _merge(u: Unit) -> Unit:
    first: dict[tuple[int, ...], Atom] = {}
    out: Unit = ()
    for a, e in u:
        keep = first.setdefault(a.dim, a)
        out = _mul(out, ((keep, e),))
    return out


def _hides_simpler(u: Unit) -> bool:
    """True when a base dimension is carried by atoms with opposite signs and cancels in full
    (``J/kPa``: the mass and time of J and kPa cancel, leaving m³)."""
    for k in range(7):
        parts = [a.dim[k] * e for a, e in u if a.dim[k]]
        if sum(parts) == 0 and any(p > 0 for p in parts) and any(p < 0 for p in parts):
            return True
    return False


def _energy_ok(u: Unit) -> bool:
    """A composition that may be named an energy (J): it holds an energy or power unit, or an
    electrical, thermal or chemical one (current, temperature or amount in its vector). A purely
    mechanical one (kg, m, s, N, Pa) may be a moment and is never named J (P24)."""
    return any(a.dim in (ENERGY, POWER) or a.dim[3] or a.dim[4] or a.dim[5] for a, _ in u)


def _is_moment(u: Unit) -> bool:
    """A force atom times a length atom (``N·m``, ``kN·mm``): a moment, not an energy."""
    dims = {a.dim: e for a, e in u}
    return dims.get(FORCE) == 1 and dims.get(LENGTH) == 1 and len(u) == 2


# --------------------------------------------------------------------------- writing


@lru_cache(maxsize=4096)
def text(u: Unit) -> str:
    """``kN·mm``, ``W/K``, ``W/(m²·K)``, ``s⁻¹``, ``kg/m³``; ``''`` when dimensionless."""
    def part(a: Atom, e: int) -> str:
        return a.symbol if e == 1 else f"{a.symbol}{superscript(e)}"

    num = [part(a, e) for a, e in u if e > 0]
    den = [part(a, -e) for a, e in u if e < 0]
    if not num:
        return "·".join(part(a, e) for a, e in u)
    if not den:
        return "·".join(num)
    tail = den[0] if len(den) == 1 else "(" + "·".join(den) + ")"
    return "·".join(num) + "/" + tail


_LATEX_SIGNS = {"Δ": r"\Delta", "µ": r"\mu", "μ": r"\mu", "Ω": r"\Omega", "°": r"{}^{\circ}", "%": r"\%",
                "‰": r"\text{‰}"}


def atom_latex(symbol: str) -> str:
    """``kN`` -> ``\\mathrm{kN}``, ``µm`` -> ``\\mu\\mathrm{m}``, ``kΩ`` -> ``\\mathrm{k}\\Omega``,
    ``Δ°C`` -> ``\\Delta{}^{\\circ}\\mathrm{C}``: letters upright, signs as math symbols; any
    other character is left out of the LaTeX (a symbol never becomes a live command)."""
    out: list[str] = []
    run = ""
    for ch in symbol:
        if ch.isascii() and (ch.isalnum() or ch == "_"):
            run += "\\_" if ch == "_" else ch
            continue
        if run:
            out.append(r"\mathrm{" + run + "}")
            run = ""
        if ch in _LATEX_SIGNS:
            out.append(_LATEX_SIGNS[ch])
        elif ch.isalpha():  # Å, ε: a letter of another script, as text
            out.append(r"\text{" + ch + "}")
    if run:
        out.append(r"\mathrm{" + run + "}")
    return "".join(out)


@lru_cache(maxsize=4096)
def latex(u: Unit) -> str:
    """The unit as LaTeX: ``\\mathrm{kN}\\,\\mathrm{mm}``, ``\\mathrm{W}/\\mathrm{K}``."""
    def part(a: Atom, e: int) -> str:
        return atom_latex(a.symbol) + ("" if e == 1 else f"^{{{e}}}")

    num = [part(a, e) for a, e in u if e > 0]
    den = [part(a, -e) for a, e in u if e < 0]
    if not num:
        return r"\,".join(part(a, e) for a, e in u)
    if not den:
        return r"\,".join(num)
    tail = den[0] if len(den) == 1 else r"\left(" + r"\,".join(den) + r"\right)"
    return r"\,".join(num) + "/" + tail


def convert(mag: Any, u: Unit) -> Any:
    """An SI magnitude (float, complex, ndarray) in unit *u*."""
    f = unit_factor(u)
    return mag if f == 1.0 else mag / f


# --------------------------------------------------------------------------- rows


@lru_cache(maxsize=4096)
def _is_unit(data: tuple) -> bool:
    return all(isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], Atom) and type(x[1]) is int and x[1]
               for x in data)


def to_json(u: Unit) -> list[list[Any]]:
    """``[[symbol, exponent, factor, vector], ...]``, as record rows hold a display unit; an
    angle-bearing atom (rpm, rad, °, Hz) has a fifth item, ``true``."""
    return [[a.symbol, e, a.factor, list(a.dim), *([True] if a.angle else [])] for a, e in u]


@lru_cache(maxsize=4096)
def row_json(u: Unit) -> str:
    """:func:`to_json` as compact JSON text (a trace row's ``unit``)."""
    return json.dumps(to_json(u), ensure_ascii=False, separators=(",", ":"))


MAX_ATOMS = 12


def from_json(data: object, dim: Sequence[Any] | None = None) -> Unit | None:
    """A display unit from a row (``[[symbol, exponent, factor, vector], ...]``), or ``None``
    when it is malformed or (with *dim*) not of that vector: a reader then shows the value in
    SI. Never raises."""
    if not isinstance(data, list) or len(data) > MAX_ATOMS:
        return None
    out = []
    for item in data:
        if not (isinstance(item, list) and len(item) in (4, 5)) or (len(item) == 5 and item[4] is not True):
            return None
        sym, e, f, vec = item[:4]
        if not (isinstance(sym, str) and 0 < len(sym) <= 32 and all(ch.isalnum() or ch in _SIGNS for ch in sym)):
            return None
        if type(e) is not int or not (e and -12 <= e <= 12):
            return None
        if type(f) not in (int, float) or isinstance(f, bool) or not (math.isfinite(f) and f > 0):
            return None
        if not (isinstance(vec, list) and len(vec) == 7 and all(type(x) is int and -12 <= x <= 12 for x in vec)):
            return None
        out.append((Atom(sym, float(f), tuple(vec), len(item) == 5), e))
    u = tuple(out)
    try:
        f = unit_factor(u)
    except OverflowError:
        return None
    if not (math.isfinite(f) and f > 0):
        return None
    if dim is not None and unit_dim(u) != tuple(int(x) for x in dim):
        return None
    return u


#: characters a unit's symbol may hold besides letters and digits (no markup, no LaTeX)
_SIGNS = frozenset("°Δ%‰_′″")


@lru_cache(maxsize=4096)
def fits(u: Unit) -> bool:
    """True when a row can hold *u*: at most :data:`MAX_ATOMS` atoms, exponents within ±12, symbols
    of letters, digits and ``°Δ%‰_′″``, a finite factor."""
    if len(u) > MAX_ATOMS or any(not -12 <= e <= 12 for _, e in u):
        return False
    if any(not (0 < len(a.symbol) <= 32 and all(ch.isalnum() or ch in _SIGNS for ch in a.symbol)) for a, _ in u):
        return False
    try:
        f = unit_factor(u)
    except OverflowError:
        return False
    return math.isfinite(f) and f > 0


def check(data: object, dim: Sequence[Any], fail: Callable[[str], Exception]) -> Unit:
    """:func:`from_json` for a writer (or a :data:`Unit` as it is): raises ``fail(message)``
    naming the problem."""
    u = cast(Unit, data) if type(data) is tuple and _is_unit(data) and fits(cast(Unit, data)) else from_json(data)
    if u is None:
        raise fail("unit must be a list of at most 12 [symbol, exponent, factor, vector] items (a symbol of 1 to 32 "
                   "letters, digits or °Δ%‰_′″, a whole exponent from -12 to 12 and not 0, a factor above 0 whose "
                   "powers stay finite, 7 whole numbers; a fifth item true marks an angle-bearing unit)")
    if unit_dim(u) != tuple(map(int, dim)):
        raise fail(f"unit {text(u)!r} has the vector {list(unit_dim(u))}, and the value {list(dim)}")
    return u
