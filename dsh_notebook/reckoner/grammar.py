"""The formula language: lexical checks, the lark grammar and the syntax tree
(spec: reckoner.md section 1; upstream-facts.md 3.6 and 3.7).

* A formula is checked in two steps: a scan for the errors upstream reports with their
  own codes (characters outside the charset, incomplete numbers, a letter right after a
  number, unclosed brackets), then an LALR parse with lark for everything else.
* The tree is plain frozen dataclasses carrying their text position; the evaluator
  (``evaluate.py``) compiles it. Nothing is ever passed to Python's ``eval``.
* ``$`` names are validated here (unknown name, constant with ``(``, function without
  ``(``, bounds, arity), so a formula that parses is well formed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

from lark import Lark, Token
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)
from lark.visitors import Transformer_NonRecursive

from .errors import (
    INVALID_ARITY,
    INVALID_FORMULA,
    INVALID_IDENTIFIER,
    INVALID_NOTATION,
    INVALID_NUMBER,
    EngineError,
)

CHARSET_TEXT = "digits, ASCII letters, $ @ _ + - * / ^ ( ) [ ] { } , . = and spaces (> only in the -> of $limit)"
_ALLOWED = set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ$@_+-*/^()[]{},.= \t\n\r>")
_NAME_CH = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

CONSTANTS = ("pi", "e", "inf", "i", "j")
UNARY = ("abs", "sqrt", "exp", "ln", "log", "sin", "cos", "tan", "asin", "acos", "atan",
         "floor", "ceil", "sign", "re", "im", "arg", "conj", "len", "transpose")
BINARY = ("atan2", "min", "max", "mod")
BOUNDED = ("sum", "prod", "seq", "integral", "limit", "diff")
ALL_NAMES = CONSTANTS + UNARY + BINARY + BOUNDED
assert len(ALL_NAMES) == 35

WRITTEN = {
    **{c: f"${c}" for c in CONSTANTS},
    **{f: f"${f}(x)" for f in UNARY},
    "atan2": "$atan2(x, y)", "min": "$min(a, b)", "max": "$max(a, b)", "mod": "$mod(a, b)",
    "sum": "$sum_{k=a}^{b}(body)", "prod": "$prod_{k=a}^{b}(body)", "seq": "$seq_{k=a}^{b}(body)",
    "integral": "$integral_{a}^{b}(body, x) or $integral(body, x)",
    "limit": "$limit_{x->a}(body)", "diff": "$diff(body, x) or $diff(body, x, n)",
}

_GRAMMAR = r"""
?start: sum
?sum: prod
    | sum "+" prod   -> add
    | sum "-" prod   -> sub
?prod: signed
    | prod "*" signed -> mul
    | prod "/" signed -> div
?signed: "-" signed  -> neg
    | "+" signed     -> pos
    | pow
?pow: access
    | access "^" signed -> pow
?access: atom
    | access "[" sum "]"  -> index
    | access "." NAME     -> field
?atom: NUMBER            -> number
    | NAME               -> bound
    | SLOT               -> slot
    | notation
    | "(" sum ")"
notation: NOTATION [SUBOPEN sub "}" [UPOPEN sum "}"]] [CALLOPEN [args] ")"]
sub: NAME "=" sum      -> sub_eq
    | NAME "->" sum    -> sub_arrow
    | sum              -> sub_plain
args: sum ("," sum)*

NOTATION: /\$[A-Za-z_][A-Za-z0-9_]*?(?=_\{)|\$[A-Za-z_][A-Za-z0-9_]*/
SLOT: /@[A-Za-z_][A-Za-z0-9_]*/
NAME: /[A-Za-z_][A-Za-z0-9_]*/
NUMBER: /[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?[ij]?/
SUBOPEN.3: "_{"
UPOPEN.3: /\^[ \t\r\n]*\{/
CALLOPEN: "("
%ignore /[ \t\r\n]+/
"""

# --------------------------------------------------------------------------- tree


@dataclass(frozen=True, slots=True)
class Node:
    """A syntax tree node; ``pos`` is the 0-based offset of its first character."""

    pos: int  # 0-based offset of the node's first character


@dataclass(frozen=True, slots=True)
class Num(Node):
    value: float | complex


@dataclass(frozen=True, slots=True)
class Bound(Node):
    name: str


@dataclass(frozen=True, slots=True)
class Slot(Node):
    name: str


@dataclass(frozen=True, slots=True)
class Unary(Node):
    op: str  # "neg"
    x: Node


@dataclass(frozen=True, slots=True)
class Binary(Node):
    op: str  # "+", "-", "*", "/", "^"
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Index(Node):
    x: Node
    index: Node


@dataclass(frozen=True, slots=True)
class Field(Node):
    x: Node
    name: str


@dataclass(frozen=True, slots=True)
class Const(Node):
    name: str


@dataclass(frozen=True, slots=True)
class Call(Node):
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Fold(Node):
    """``$sum``/``$prod``/``$seq`` over ``var`` = lo..hi (inclusive)."""

    name: str
    var: str
    lo: Node
    hi: Node
    body: Node


@dataclass(frozen=True, slots=True)
class Symbolic(Node):
    """``$integral``/``$limit``/``$diff``: parsed and checked, never evaluated."""

    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Formula:
    """A parsed formula: its text, its tree and the slots it reads."""

    text: str
    tree: Node
    slots: tuple[str, ...]  # slot names in first-use (evaluation) order


#: a notation's subscript: ``("=", var, lo)``, ``("->", var, at)`` or ``("", None, lower bound)``
_Sub: TypeAlias = tuple[str, str | None, Node]


# ------------------------------------------------------------------ lexical scan


def _scan(text: str) -> None:
    """Upstream's lexical errors, reported with their own codes and the position (1-based)."""
    for i, c in enumerate(text):
        if c not in _ALLOWED or (c == ">" and text[i - 1 : i] != "-"):
            raise EngineError(
                INVALID_FORMULA,
                f"the character {c!r} (U+{ord(c):04X}) at position {i + 1} is not part of the formula language; "
                f"formulas use only {CHARSET_TEXT} (units belong in the values, not the formula).",
            )
    n = len(text)
    i = 0
    stack: list[tuple[str, int]] = []
    while i < n:
        c = text[i]
        if c in _NAME_CH and not c.isdigit():
            while i < n and text[i] in _NAME_CH:
                i += 1
            continue
        if c.isdigit():
            start = i
            while i < n and text[i].isdigit():
                i += 1
            if i < n and text[i] == ".":
                if i + 1 < n and text[i + 1].isdigit():
                    i += 1
                    while i < n and text[i].isdigit():
                        i += 1
                else:
                    raise EngineError(
                        INVALID_NUMBER,
                        f"the number {text[start:i + 1]!r} at position {start + 1} ends with a point; "
                        f"a fraction needs a digit after the point, e.g. {text[start:i]}.0.",
                    )
            if i < n and text[i] == "e":
                j = i + 1
                if j < n and text[j] in "+-":
                    j += 1
                if j < n and text[j].isdigit():
                    while j < n and text[j].isdigit():
                        j += 1
                    i = j
                else:
                    raise EngineError(
                        INVALID_NUMBER,
                        f"the number {text[start:j]!r} at position {start + 1} has an exponent without digits; "
                        f"write e.g. {text[start:i]}e3.",
                    )
            if i < n and text[i] in "ij" and (i + 1 >= n or text[i + 1] not in _NAME_CH):
                i += 1
            elif i < n and text[i] in _NAME_CH:
                j = i
                while j < n and text[j] in _NAME_CH:
                    j += 1
                lit, tail = text[start:i], text[i:j]
                if tail[0] == "E":
                    fix = f"write the exponent with a lowercase e: {lit}e{tail[1:]}"
                else:
                    fix = f"multiplication must be explicit: write {lit}*{tail} (or {lit}*@{tail} for a slot)"
                raise EngineError(
                    INVALID_IDENTIFIER,
                    f"the letter {tail[0]!r} right after the number {lit} at position {i + 1} makes "
                    f"{text[start:j]!r}, which is neither a number nor a name; {fix}.",
                )
            continue
        if c in "([{":
            stack.append((c, i))
        elif c in ")]}":
            want = {")": "(", "]": "[", "}": "{"}[c]
            if not stack or stack[-1][0] != want:
                if stack:
                    o, at = stack[-1]
                    raise EngineError(
                        INVALID_FORMULA,
                        f"{c!r} at position {i + 1} does not match the {o!r} opened at position {at + 1}; "
                        f"close {o!r} first.",
                    )
                raise EngineError(
                    INVALID_FORMULA,
                    f"{c!r} at position {i + 1} closes nothing; remove it or add the matching {want!r}.",
                )
            stack.pop()
        i += 1
    if stack:
        o, at = stack[-1]
        close = {"(": ")", "[": "]", "{": "}"}[o]
        raise EngineError(
            INVALID_FORMULA,
            f"the {o!r} opened at position {at + 1} is never closed; add {close!r}.",
        )


# ------------------------------------------------------------------- parse


_PARSER = Lark(_GRAMMAR, parser="lalr", lexer="basic", propagate_positions=False, maybe_placeholders=True)

_TOKEN_WORDS = {
    "PLUS": "+", "MINUS": "-", "STAR": "*", "SLASH": "/", "CIRCUMFLEX": "^", "LPAR": "(", "RPAR": ")",
    "LSQB": "[", "RSQB": "]", "RBRACE": "}", "COMMA": ",", "DOT": ".", "EQUAL": "=", "CALLOPEN": "(",
    "SUBOPEN": "_{", "UPOPEN": "^{", "NUMBER": "a number", "NAME": "a name", "SLOT": "@name",
    "NOTATION": "$name", "$END": "the end",
}


def _expected(tokens: Iterable[str]) -> str:
    words = sorted({_TOKEN_WORDS.get(t, t) for t in tokens if not t.startswith("__")})
    if len(words) > 8:
        return "an operand or operator"
    return ", ".join(words)


def _pos_of(tok: object) -> int:
    return getattr(tok, "start_pos", None) or 0


class _Build(Transformer_NonRecursive[Token, Node]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def number(self, items: list[Token]) -> Num:
        t = items[0]
        at = _pos_of(t)
        s = str(t)
        body = s[:-1] if s[-1] in "ij" else s
        x = float(body)
        if math.isinf(x) or (x == 0.0 and any(c in "123456789" for c in body.split("e")[0])):
            raise EngineError(
                INVALID_NUMBER,
                f"the number {s!r} at position {at + 1} is {'too large' if math.isinf(x) else 'too small'} "
                "for a double-precision number (about 1e-308 to 1e308); rescale the formula "
                "(for infinity write $inf).",
            )
        if s[-1] in "ij":
            return Num(at, complex(0.0, x))
        return Num(at, x)

    def bound(self, items: list[Token]) -> Bound:
        return Bound(_pos_of(items[0]), str(items[0]))

    def slot(self, items: list[Token]) -> Slot:
        return Slot(_pos_of(items[0]), str(items[0])[1:])

    @staticmethod
    def _binary(op: str, items: list[Node]) -> Binary:
        return Binary(items[0].pos, op, items[0], items[1])

    def add(self, items: list[Node]) -> Binary:
        return self._binary("+", items)

    def sub(self, items: list[Node]) -> Binary:
        return self._binary("-", items)

    def mul(self, items: list[Node]) -> Binary:
        return self._binary("*", items)

    def div(self, items: list[Node]) -> Binary:
        return self._binary("/", items)

    def pow(self, items: list[Node]) -> Binary:
        return self._binary("^", items)

    def neg(self, items: list[Node]) -> Unary:
        x = items[0]
        return Unary(max(x.pos - 1, 0), "neg", x)

    def pos(self, items: list[Node]) -> Node:
        return items[0]

    def index(self, items: list[Node]) -> Index:
        return Index(items[0].pos, items[0], items[1])

    def field(self, items: tuple[Node, Token] | list[Any]) -> Field:
        return Field(items[0].pos, items[0], str(items[1]))

    def args(self, items: list[Node]) -> tuple[Node, ...]:
        return tuple(items)

    def sub_eq(self, items: list[Any]) -> _Sub:
        return ("=", str(items[0]), items[1])

    def sub_arrow(self, items: list[Any]) -> _Sub:
        return ("->", str(items[0]), items[1])

    def sub_plain(self, items: list[Node]) -> _Sub:
        return ("", None, items[0])

    def notation(self, items: list[Any]) -> Node:
        args: tuple[Node, ...] | None
        tok, subopen, sub, _upopen, upper, callopen, args = items
        name = str(tok)[1:]
        at = tok.start_pos
        if name not in ALL_NAMES:
            raise EngineError(
                INVALID_NOTATION,
                f"${name} at position {at + 1} is not a notation; the 35 $ names are "
                + ", ".join("$" + n for n in ALL_NAMES)
                + " (use @name to read a slot).",
            )
        written = WRITTEN[name]
        has_sub = subopen is not None
        has_call = callopen is not None
        args = args or ()
        if name in CONSTANTS:
            if has_sub or has_call:
                raise EngineError(
                    INVALID_NOTATION,
                    f"${name} at position {at + 1} is a constant and takes no "
                    f"{'subscript' if has_sub else 'parentheses'}; write it bare as {written} "
                    f"(multiply explicitly: {written}*(...)).",
                )
            return Const(at, name)
        if name in UNARY or name in BINARY:
            if has_sub:
                raise EngineError(
                    INVALID_NOTATION,
                    f"${name} at position {at + 1} is a function and takes no subscript; write {written}.",
                )
            if not has_call:
                raise EngineError(
                    INVALID_NOTATION,
                    f"${name} at position {at + 1} is a function and needs parentheses; write {written}.",
                )
            want = 1 if name in UNARY else 2
            if len(args) != want:
                raise EngineError(
                    INVALID_ARITY,
                    f"${name} at position {at + 1} takes {want} argument{'s' if want > 1 else ''} but was given "
                    f"{len(args)}; write {written}.",
                )
            return Call(at, name, tuple(args))
        # bounded forms
        end = self._end_of(at)
        text = self.text[at:end]
        if not has_call:
            raise EngineError(
                INVALID_NOTATION,
                f"${name} at position {at + 1} needs its body in parentheses; write {written}.",
            )
        if name in ("sum", "prod", "seq"):
            if not has_sub:
                raise EngineError(
                    INVALID_NOTATION,
                    f"${name} at position {at + 1} needs its bounds; write {written}.",
                )
            kind, var, lo = sub
            if kind == "->":
                raise EngineError(
                    INVALID_ARITY,
                    f"${name} at position {at + 1} binds its variable with '=', not '->'; write {written}.",
                )
            if kind != "=":
                raise EngineError(
                    INVALID_ARITY,
                    f"${name} at position {at + 1} has no bound variable in its subscript; write {written}.",
                )
            if upper is None:
                raise EngineError(
                    INVALID_ARITY,
                    f"${name} at position {at + 1} has no upper bound; write {written}.",
                )
            if len(args) != 1:
                raise EngineError(
                    INVALID_ARITY,
                    f"${name} at position {at + 1} takes 1 body but was given {len(args)}; write {written}.",
                )
            return Fold(at, name, var, lo, upper, args[0])
        if name == "integral":
            if has_sub and sub[0]:
                raise EngineError(
                    INVALID_ARITY,
                    f"$integral at position {at + 1} takes bounds, not a bound variable, in its subscript; "
                    f"write {written} (the variable is the 2nd argument).",
                )
            if has_sub and upper is None:
                raise EngineError(
                    INVALID_ARITY,
                    f"$integral at position {at + 1} has a lower bound but no upper bound; write {written}.",
                )
            if len(args) != 2:
                raise EngineError(
                    INVALID_ARITY,
                    f"$integral at position {at + 1} takes 2 arguments but was given {len(args)}; write {written}.",
                )
            self._plain_name(args[1], name, at)
            return Symbolic(at, name, text)
        if name == "limit":
            if not has_sub:
                raise EngineError(
                    INVALID_NOTATION,
                    f"$limit at position {at + 1} needs its subscript; write {written}.",
                )
            if sub[0] == "=":
                raise EngineError(
                    INVALID_ARITY,
                    f"$limit at position {at + 1} is written with '->', not '='; write {written}.",
                )
            if sub[0] != "->":
                raise EngineError(
                    INVALID_ARITY,
                    f"$limit at position {at + 1} has no variable in its subscript; write {written}.",
                )
            if upper is not None or len(args) != 1:
                raise EngineError(
                    INVALID_ARITY,
                    f"$limit at position {at + 1} takes a subscript and 1 body only; write {written}.",
                )
            return Symbolic(at, name, text)
        # diff
        if has_sub:
            raise EngineError(
                INVALID_NOTATION,
                f"$diff at position {at + 1} takes no subscript; write {written}.",
            )
        if len(args) not in (2, 3):
            raise EngineError(
                INVALID_ARITY,
                f"$diff at position {at + 1} takes 2 or 3 arguments but was given {len(args)}; write {written}.",
            )
        self._plain_name(args[1], name, at)
        return Symbolic(at, name, text)

    def _plain_name(self, node: Node, name: str, at: int) -> None:
        if not isinstance(node, Bound):
            raise EngineError(
                INVALID_FORMULA,
                f"the 2nd argument of ${name} at position {at + 1} must be a plain variable name such as x; "
                f"write {WRITTEN[name]}.",
            )

    def _end_of(self, at: int) -> int:
        """End offset of the notation starting at ``at`` (matching its last parenthesis)."""
        depth = 0
        i = at
        text = self.text
        seen_call = False
        while i < len(text):
            c = text[i]
            if c in "({[":
                if c == "(" and depth == 0:
                    seen_call = True
                depth += 1
            elif c in ")}]":
                depth -= 1
                if depth == 0 and seen_call and c == ")":
                    return i + 1
            i += 1
        return len(text)


def _slot_order(node: Node, out: dict[str, None]) -> None:
    """Slots in evaluation order: operands left to right, bounds before bodies."""
    if isinstance(node, Slot):
        out.setdefault(node.name, None)
    elif isinstance(node, Unary):
        _slot_order(node.x, out)
    elif isinstance(node, Binary):
        _slot_order(node.left, out)
        _slot_order(node.right, out)
    elif isinstance(node, Index):
        _slot_order(node.x, out)
        _slot_order(node.index, out)
    elif isinstance(node, Field):
        _slot_order(node.x, out)
    elif isinstance(node, Call):
        for a in node.args:
            _slot_order(a, out)
    elif isinstance(node, Fold):
        _slot_order(node.lo, out)
        _slot_order(node.hi, out)
        _slot_order(node.body, out)


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> Formula:
    """Parse one formula; cached per text.

    Raises :class:`EngineError` with ``ENGINE_INVALID_FORMULA``, ``ENGINE_INVALID_NUMBER``,
    ``ENGINE_INVALID_IDENTIFIER``, ``ENGINE_INVALID_NOTATION`` or ``ENGINE_INVALID_ARITY``;
    positions in messages are 1-based character offsets.
    """
    if not text.strip():
        raise EngineError(INVALID_FORMULA, "the formula is empty; write one expression, e.g. @V/@R.")
    _scan(text)
    try:
        tree = _PARSER.parse(text)
    except UnexpectedEOF as exc:
        raise EngineError(
            INVALID_FORMULA,
            f"the formula ends early, at position {len(text) + 1}; expected {_expected(exc.expected)}.",
        ) from None
    except UnexpectedToken as exc:
        tok = exc.token
        if tok.type == "$END":
            raise EngineError(
                INVALID_FORMULA,
                f"the formula ends early, at position {len(text.rstrip()) + 1}; expected {_expected(exc.expected)}.",
            ) from None
        at = _pos_of(tok) + 1
        if tok.type == "UPOPEN":
            msg = (f"'^{{' at position {at} is a notation bound outside a $sum/$prod/$seq/$integral position; "
                   "for a power write ^(...) or ^2.")
        elif "$END" in exc.expected:
            msg = (f"{str(tok)!r} at position {at} follows a complete expression; a formula is exactly one "
                   "expression (multiplication must be explicit: use *).")
        else:
            msg = f"{str(tok)!r} at position {at} is not expected here; expected {_expected(exc.expected)}."
        raise EngineError(INVALID_FORMULA, msg) from None
    except UnexpectedCharacters as exc:
        pos = exc.pos_in_stream or 0  # always set for this error (lark types it Optional on the base class)
        at = pos + 1
        ch = text[pos]
        if ch in "$@":
            msg = f"{ch!r} at position {at} must be followed directly by a name, e.g. {ch}R."
        elif ch == ".":
            msg = f"'.' at position {at} must be followed by a field name, e.g. @o.z."
        else:
            msg = f"{ch!r} at position {at} is not expected here."
        raise EngineError(INVALID_FORMULA, msg) from None
    except UnexpectedInput as exc:  # pragma: no cover - other lark errors
        raise EngineError(INVALID_FORMULA, f"the formula is not one expression ({exc}).") from None
    try:
        node = _Build(text).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, EngineError):
            raise exc.orig_exc from None
        raise
    depth = _depth(node)
    if depth > MAX_DEPTH:
        raise EngineError(
            INVALID_FORMULA,
            f"the formula nests {depth} operations deep, beyond the limit of {MAX_DEPTH}; "
            "split it into several eval steps, or use $sum/$prod for long sums and products.",
        )
    order: dict[str, None] = {}
    _slot_order(node, order)
    return Formula(text, node, tuple(order))


MAX_DEPTH = 200


def _children(n: Node) -> tuple[Node, ...]:
    if isinstance(n, Unary):
        return (n.x,)
    if isinstance(n, Binary):
        return (n.left, n.right)
    if isinstance(n, Index):
        return (n.x, n.index)
    if isinstance(n, Field):
        return (n.x,)
    if isinstance(n, Call):
        return n.args
    if isinstance(n, Fold):
        return (n.lo, n.hi, n.body)
    return ()


def _depth(root: Node) -> int:
    """The tree's depth, computed without recursion."""
    best = 0
    stack = [(root, 1)]
    while stack:
        n, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in _children(n))
    return best


_UNPARSE_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "^": 4}


def unparse(node: Node) -> str:
    """The formula text of a sub-tree, normalised (for messages that name a sub-expression)."""

    def prec(n: Node) -> int:
        if isinstance(n, Binary):
            return _UNPARSE_PREC[n.op]
        if isinstance(n, Unary):
            return 3
        return 9

    def wrap(n: Node, p: int) -> str:
        t = go(n)
        return f"({t})" if prec(n) < p else t

    def num(x: complex) -> str:  # a float or a complex number
        if isinstance(x, complex):
            return num(x.imag) + "j"
        return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(x)

    def go(n: Node) -> str:
        if isinstance(n, Num):
            return num(n.value)
        if isinstance(n, Slot):
            return "@" + n.name
        if isinstance(n, Bound):
            return n.name
        if isinstance(n, Const):
            return "$" + n.name
        if isinstance(n, Unary):
            return "-" + wrap(n.x, 3)
        if isinstance(n, Binary):
            p = _UNPARSE_PREC[n.op]
            if n.op == "^":
                return f"{wrap(n.left, 5)}^{wrap(n.right, 3)}"
            return f"{wrap(n.left, p)}{'+' if n.op == '+' else n.op}{wrap(n.right, p + 1 if n.op in '-/' else p)}"
        if isinstance(n, Index):
            return f"{wrap(n.x, 9)}[{go(n.index)}]"
        if isinstance(n, Field):
            return f"{wrap(n.x, 9)}.{n.name}"
        if isinstance(n, Call):
            return f"${n.name}(" + ", ".join(go(a) for a in n.args) + ")"
        if isinstance(n, Fold):
            return f"${n.name}_{{{n.var}={go(n.lo)}}}^{{{go(n.hi)}}}({go(n.body)})"
        if isinstance(n, Symbolic):
            return n.text
        return "?"  # pragma: no cover

    text = go(node)
    return text if len(text) <= 60 else text[:57] + "..."
