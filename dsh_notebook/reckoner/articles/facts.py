"""The facts of a closed record a writer may use, and how their values read (spec: reckoner.md
section 3 "Articles"; upstream-facts.md 3.12).

* :func:`facts` extracts what a writer may use from a closed record: title, conditions (accepted
  ``set`` rows, a delete removing the name), visible and hidden messages, steps and answered
  lookups interleaved by ``seq``, the closing text and the refused calls. Refused rows and
  ``get`` rows are skipped (a ``get`` only lends its display unit to the result it shows).
* Numbers are cut as upstream does before a writer sees them: four decimals, or four decimals of
  a mantissa below 1e-3 or from 1e6 (:func:`cut`). Every writer and the check print a value the
  same way (:func:`shown_value`): the engine's number formatter
  (:func:`dsh_notebook.reckoner.display.num_text` without a digit limit) after the cut.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np

from ...formats import latex_text
from .. import display
from .. import shown_units as SU
from ..errors import ReckonerError
from ..records import Record, read_record
from ..values import parse_tagged

FIXED_TITLE = "DeepSeek Harness Reckoner Solution"
AUTHOR = "DeepSeek Harness Reckoner"
FORMATS = ("md", "latex")
LANGUAGES = ("auto", "zh-CN", "en")


class ArticleError(ReckonerError, ValueError):
    """An article cannot be written: the record is open, the body is unsafe, a tool is missing."""

    code = "ARTICLE_REFUSED"


# ------------------------------------------------------------------------- facts


@dataclass
class Condition:
    """A slot set by an accepted ``set`` row and not deleted later: its name and stored value."""

    name: str
    value: dict[str, Any]  # stored form
    unit: Any = None  # the display unit it is shown in (issue 18), as the row holds it


@dataclass
class Message:
    """A ``record_message`` row; ``hide`` marks the author's note (never printed)."""

    seq: int
    text: str
    hide: bool


@dataclass
class Step:
    """An accepted ``eval`` row: ``target = formula`` with the values it read and its result."""

    seq: int
    formula: str
    target: str
    vars: dict[str, dict[str, Any]]  # slot name -> stored form of the value read
    result: dict[str, Any]  # stored form
    unit: Any = None  # the result's display unit (issue 18), as the row holds it
    var_units: dict[str, Any] = field(default_factory=dict)  # slot name -> display unit of the value read


@dataclass
class Lookup:
    """An answered ``search`` row: the question, the answer sentence (never cut), the
    sources it relied on (URLs) and the policy tier (``open`` answers are web-derived and
    unverified)."""

    seq: int
    question: str
    answer: str
    sources: list[str]
    tier: str


@dataclass
class Refusal:
    """A refused engine call of the record: its row (``seq``), tool, code and message."""

    seq: int
    tool: str
    code: str
    error: str


@dataclass
class ArticleFacts:
    """What a writer may use from a closed record (see :func:`facts`)."""

    record_id: str
    title: str
    conditions: list[Condition] = field(default_factory=list)
    items: list[Message | Step | Lookup] = field(default_factory=list)  # by seq
    closing: str | None = None
    refusals: list[Refusal] = field(default_factory=list)  # refused calls, by seq (issue 16)
    stopped_at: int | None = None  # the seq of the refused call the calculation stopped at: no result

    @property
    def ended_in_refusal(self) -> bool:
        return self.stopped_at is not None

    @property
    def prose(self) -> str:
        """The record's own words: title, closing text and every message (hidden ones too)."""
        return " ".join([self.title, self.closing or ""] + [m.text for m in self.items if isinstance(m, Message)])

    @property
    def lookups(self) -> list[Lookup]:
        """The answered lookups among the items, in order."""
        return [i for i in self.items if isinstance(i, Lookup)]


def facts(record: Record | str | Path) -> ArticleFacts:
    """The facts a writer may use. Raises :class:`ArticleError` for an open record."""
    rec = record if isinstance(record, Record) else read_record(record)
    if not rec.closed:
        raise ArticleError(f"record {rec.id} is still open; only closed records can be written up")
    conditions: dict[str, dict[str, Any]] = {}
    units: dict[str, Any] = {}  # slot -> the display unit it was written with (issue 18)
    shown: dict[str, Any] = {}  # slot -> the unit a `show NAME in UNIT` line asked for
    items: list[Message | Step | Lookup] = []
    refusals: list[Refusal] = []
    for row in rec.rows:
        if not row.get("ok"):
            c0: dict[str, Any] = row["content"] if isinstance(row.get("content"), dict) else {}
            row_seq: Any = row.get("seq")
            if row.get("tool") != "search":  # an unanswered lookup is an outcome, not a refusal
                refusals.append(Refusal(row_seq if isinstance(row_seq, int) else 0, str(row.get("tool")),
                                        str(c0.get("code")), str(c0.get("error"))))
            continue
        # an accepted row's fields as the engine wrote them (read back from the file, not re-checked)
        c: dict[str, Any] = row.get("content") or {}
        tool = row.get("tool")
        seq: Any = row.get("seq")
        if tool == "set":
            name: Any = c.get("name")
            units.pop(name, None)
            if c.get("value") is None:
                conditions.pop(name, None)
            else:
                conditions[name] = c["value"]
                if "unit" in c:
                    units[name] = c["unit"]
        elif tool == "get" and "unit" in c and isinstance(c.get("name"), str):
            shown[c["name"]] = c["unit"]
        elif tool == "record_message":
            items.append(Message(seq, c.get("text", ""), bool(c.get("hide"))))
        elif tool == "eval" and c.get("formula"):
            target: Any = c.get("target")
            result: Any = c.get("result")
            read = c.get("vars") or {}
            items.append(Step(seq, c["formula"], target, read, result, c.get("unit"),
                              {n: units[n] for n in read if isinstance(read, dict) and n in units}))
            units.pop(target, None)
            if "unit" in c:
                units[target] = c["unit"]
        elif tool == "search":
            lookup = _lookup(seq, c)
            if lookup is not None:
                items.append(lookup)
    stop = rec.stopping_refusal
    title = " ".join(rec.title.split())  # one line: a title never spills into the article's body
    for item in items:  # a result the record also showed in a unit prints in it (show R in mohm)
        if isinstance(item, Step) and item.target in shown:
            item.unit = shown[item.target]
    return ArticleFacts(rec.id, title, [Condition(n, v, shown.get(n, units.get(n))) for n, v in conditions.items()],
                        items, rec.closing_text, refusals, stop.get("seq") if stop is not None else None)


def _lookup(seq: int, c: dict[str, Any]) -> Lookup | None:
    """An answered lookup from a ``search`` row's fact; a malformed fact reads as absent
    (upstream-facts.md 3.13: readers are tolerant)."""
    try:
        syn = c.get("synthesis") or {}
        if c.get("outcome") != "answered" or not isinstance(syn.get("answer"), str):
            return None
        used = [u for u in c.get("used") or [] if isinstance(u, dict)]
        relied = [used[i] for i in syn.get("used") or [] if isinstance(i, int) and 0 <= i < len(used)] or used
        return Lookup(seq, str(c.get("question", "")), syn["answer"], [str(u.get("url", "")) for u in relied],
                      str(c.get("tier", "strict")))
    except (AttributeError, TypeError):
        return None


@overload
def cut(x: float) -> float: ...
@overload
def cut(x: object) -> object: ...
def cut(x: object) -> object:
    """Upstream's number cut (prompt only; the record keeps full precision): a finite real
    number to four decimals, or to a four-decimal mantissa below 1e-3 and from 1e6; anything
    else (booleans, non-finite numbers, non-numbers) as it is."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return x
    if x != 0 and (abs(x) >= 1e6 or abs(x) < 1e-3):
        return float(f"{x:.4e}")
    return round(float(x), 4) + 0.0


def cut_value(obj: object) -> object:
    """``cut`` applied to every number of a JSON value except ``dim`` fields."""
    if isinstance(obj, dict):
        return {k: (v if k == "dim" else cut_value(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [cut_value(v) for v in obj]
    return cut(obj)


def resolve_language(f: ArticleFacts, language: str = "auto") -> str:
    """``zh-CN`` or ``en``; ``auto`` is Chinese when the prose holds CJK ideographs."""
    if language not in LANGUAGES:
        raise ArticleError(f"language {language!r} is not one of {', '.join(LANGUAGES)}")
    if language != "auto":
        return language
    return "zh-CN" if re.search(r"[\u3400-\u4dbf\u4e00-\u9fff]", f.prose) else "en"


# ------------------------------------------------------------------------- how values read


def number_text(x: complex) -> str:
    """A number as the articles print it: cut (:func:`cut`), then written by the engine's
    formatter with every digit the cut left (``0.1273``, ``1.68×10⁻⁸``, ``1500000000000``); a
    complex number as ``3+4j``, each part cut."""
    if isinstance(x, complex):
        return f"{number_text(x.real)}{'-' if x.imag < 0 else '+'}{number_text(abs(x.imag))}j"
    return display.num_text(cut(x), None)


def shown_as(stored: object, unit: Any) -> str:
    """`` (shown in the notebook as 2.25 kN·m)`` for a value with a display unit (issue 18), else ``''``."""
    if unit is None or not isinstance(stored, dict):
        return ""
    return f" (shown in the notebook as {shown_value(stored, unit)[0]})"


def shown_value(stored: dict[str, Any], unit: Any = None) -> tuple[str, str]:
    """A stored value as (plain text, LaTeX) in its display *unit* (a row's ``unit``, issue 18)
    or its SI unit, numbers cut after conversion."""
    try:  # a temperature point is cut on its own scale, after conversion (68 °F, never 67.9999 °F)
        point = isinstance(stored, dict) and stored.get("kind") == "point"
        shown = SU.from_json(unit, stored.get("dim")) if isinstance(stored, dict) and unit is not None else None
        if shown is not None and not isinstance(stored.get("dim"), list):
            shown = None
        v = parse_tagged(stored if point or shown else cut_value(stored))
    except Exception:  # noqa: BLE001 - a malformed row: show it raw rather than fail the article
        return str(stored), r"\text{" + latex_text(str(stored)) + "}"
    if v.sig.kind == "object":
        parts = [(n, shown_value(stored["object"][n])) for n, _ in v.sig.fields]
        return ("{" + ", ".join(f"{n}: {t}" for n, (t, _) in parts) + "}",
                r"\{" + ", ".join(rf"\mathrm{{{n}}}: {tx}" for n, (_, tx) in parts) + r"\}")
    # a point on the scale it was given in (issue 17), a value in its display unit (issue 18)
    mag, unit, lunit = display.shown_in(v, shown)
    if v.sig.kind == "array":
        text = display.array_items(mag, lambda x, d: number_text(x), 0)
        cut_mag = np.array([cut(x) for x in np.ravel(mag).tolist()]).reshape(np.shape(mag))
        latex = display.array_latex(cut_mag, 12)  # cut: print it as it is, never round twice
    elif isinstance(mag, complex):
        text = number_text(mag)
        re_, im_ = display.num_latex(cut(mag.real), None), display.num_latex(cut(abs(mag.imag)), None)
        latex = rf"({re_} {'-' if mag.imag < 0 else '+'} {im_}\,j)"
    else:
        text = number_text(mag)
        latex = display.num_latex(cut(mag), 12)
    return (f"{text} {unit}".strip(), f"{latex}\\,{lunit}" if lunit else latex)

