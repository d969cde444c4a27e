"""Articles: a closed record written up as a stand-alone technical note (spec: reckoner.md
section 3; upstream-facts.md 3.12).

* ``facts`` extracts what a writer may use from a closed record: title, conditions (accepted
  ``set`` rows, a delete removing the name), visible and hidden messages and steps
  interleaved by ``seq``, the closing text. Refused rows and ``get`` rows are skipped.
* Numbers are cut as upstream does before a writer sees them: four decimals, or four
  decimals of a mantissa below 1e-3 or from 1e6 (``cut``). Hidden notes are never printed.
* Writers share one interface (:class:`ArticleWriter`): the offline :class:`OfflineWriter`
  renders Jinja2 templates, deterministically; a model writer (:class:`ModelWriter`, built
  in :mod:`dsh_notebook.llm.writer`) gets :func:`writer_system_prompt` and
  :func:`writer_prompt`. Its body is untrusted: :func:`check_article` (every number a record
  number after the cut, the fixed title and author lines only, no record id, timestamp or
  author's note; LaTeX through :func:`sanitize_latex`) decides whether it is saved, else
  :func:`write_article` saves the offline body and reports why (``fallback_reason``).
* LaTeX bodies pass the sanitizer, then go into the shell (``ctexart`` for Chinese,
  ``article`` otherwise; siunitx). PDF: ``latexmk -xelatex`` when both are installed.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, overload

import numpy as np

from . import display
from . import grammar as G
from . import shown_units as SU
from .errors import EngineError, ReckonerError
from .records import Record, read_record
from .values import Sig, parse_tagged

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


def _shown_as(stored: object, unit: Any) -> str:
    """`` (shown in the notebook as 2.25 kN·m)`` for a value with a display unit (issue 18), else ``''``."""
    if unit is None or not isinstance(stored, dict):
        return ""
    return f" (shown in the notebook as {_value(stored, unit)[0]})"


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


def writer_prompt(f: ArticleFacts, fmt: str, language: str = "auto") -> str:
    """The plain-text facts a model writer receives (upstream's rendering, numbers cut,
    hidden notes marked as the author's guidance)."""
    lines = [f.title]
    for c in f.conditions:
        lines.append(f"a condition recorded under the name {c.name}: "
                     f"{json.dumps(cut_value(c.value), ensure_ascii=False)}{_shown_as(c.value, c.unit)}")
    for item in f.items:
        if isinstance(item, Message):
            if item.hide:
                lines.append(f"the author's note at step {item.seq} (guidance: never copy, quote, or let it change "
                             f"a recorded number): {item.text}")
            else:
                lines.append(f"the record's own explanation: {item.text}")
        elif isinstance(item, Lookup):
            flag = (" (from the open web: unverified; keep the number and unit exactly as quoted and credit the "
                    "source)" if item.tier == "open" else " (keep the number and unit exactly as quoted and credit "
                    "the source)")
            lines.append(f"a fact looked up at step {item.seq}{flag}: question: {item.question}; "
                         f"answer: {item.answer}; sources: {', '.join(item.sources) or 'none named'}")
        else:
            lines.append(f"Step {item.seq}: {item.formula}")
            if item.vars:
                lines.append("substituting: " + ", ".join(f"{n} = {json.dumps(cut_value(v), ensure_ascii=False)}"
                                                          f"{_shown_as(v, item.var_units.get(n))}"
                                                          for n, v in item.vars.items()))
            lines.append(f"result: {json.dumps(cut_value(item.result), ensure_ascii=False)}"
                         f"{_shown_as(item.result, item.unit)}")
    if f.closing:
        lines.append(f.closing)
    lines.append("Values are a number and a 7-integer dim [m,kg,s,A,K,mol,cd]; write them in the unit the question "
                 "used (where a value says how the notebook shows it, that unit). Numbers are already cut to at most "
                 "four decimals.")
    lang = resolve_language(f, language)
    if language != "auto":
        lines.append(f"Write the ENTIRE article in {'Chinese' if lang == 'zh-CN' else 'English'}.")
    lines.append(f"Format: {'Markdown' if fmt == 'md' else 'a LaTeX body'}.")
    return "\n".join(lines)


# ------------------------------------------------------------------------- numbers


_SUP = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _num(x: object) -> str:
    x = cut(x)
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    s = repr(x)
    if "e" in s:
        m, e = s.split("e")
        return f"{m}×10{str(int(e)).translate(_SUP)}"
    return s


def _num_tex(x: object) -> str:
    x = cut(x)
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def _value(stored: dict[str, Any], unit: Any = None) -> tuple[str, str]:
    """A stored value as (plain text, LaTeX) in its display *unit* (a row's ``unit``, issue 18)
    or its SI unit, numbers cut after conversion."""
    try:  # a temperature point is cut on its own scale, after conversion (68 °F, never 67.9999 °F)
        point = isinstance(stored, dict) and stored.get("kind") == "point"
        shown = SU.from_json(unit, stored.get("dim")) if isinstance(stored, dict) and unit is not None else None
        if shown is not None and not isinstance(stored.get("dim"), list):
            shown = None
        v = parse_tagged(stored if point or shown else cut_value(stored))
    except Exception:  # noqa: BLE001 - a malformed row: show it raw rather than fail the article
        return str(stored), r"\text{" + tex_escape(str(stored)) + "}"
    if v.sig.kind == "object":
        parts = [(n, _value(stored["object"][n])) for n, _ in v.sig.fields]
        return ("{" + ", ".join(f"{n}: {t}" for n, (t, _) in parts) + "}",
                r"\{" + ", ".join(rf"\mathrm{{{n}}}: {tx}" for n, (_, tx) in parts) + r"\}")
    # a point on the scale it was given in (issue 17), a value in its display unit (issue 18)
    mag, unit, lunit = display.shown_in(v, shown)
    if v.sig.kind == "array":
        text = display.array_items(mag, lambda x, d: _num(x), 0)
        cut_mag = np.array([cut(x) for x in np.ravel(mag).tolist()]).reshape(np.shape(mag))
        latex = display.array_latex(cut_mag, 12)  # cut: print it as it is, never round twice
    elif isinstance(mag, complex):
        text = f"{_num(mag.real)}{'-' if mag.imag < 0 else '+'}{_num(abs(mag.imag))}j"
        latex = rf"({_num_tex(mag.real)} {'-' if mag.imag < 0 else '+'} {_num_tex(abs(mag.imag))}\,j)"
    else:
        text = _num(mag)
        latex = display.num_latex(cut(mag), 12)
    return (f"{text} {unit}".strip(), f"{latex}\\,{lunit}" if lunit else latex)


# ------------------------------------------------------------------------- writers


class ArticleWriter(Protocol):
    """One interface, two writers: returns the article body (Markdown, or a LaTeX body
    without preamble) for ``fmt`` in ``language`` (``zh-CN`` or ``en``)."""

    name: str

    def write_body(self, f: ArticleFacts, fmt: str, language: str) -> str: ...


_WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "question": "Question", "approach": "Approach", "calculations": "Calculations", "conclusion": "Conclusion",
        "given": "Given:",
        "approach_text": lambda n: ("The result follows from one calculation, written out below with its values:"
                                     if n == 1 else f"The result follows from {n} calculations, each written out "
                                     "below with its values:")
                                    if n else "No calculation could be made from the recorded conditions.",
        "sep": ", ", "end": ".",
        "with": "With", "gives": "this gives", "result": "The calculation gives",
        "looked_up": "From a reference lookup:", "source": "source", "unverified": "(web-derived, unverified)",
        "refused_at": "The calculation was refused at row {seq} ({tool}): {code}: {error}",
        "stopped": "It stopped there, so no result is concluded; the values above are those computed before the "
                   "refusal.",
        "stopped_first": "It stopped there, before any calculation, so no result is concluded.",
        "refused_along": "Refused along the way, and not part of the result:",
        "approach_stopped": lambda n: ("The calculation stopped at a refused call, so it has no result; "
                                       + ("the calculation made before it is written out below:" if n == 1 else
                                          f"the {n} calculations made before it are written out below:" if n else
                                          "no calculation was made before it.")),
    },
    "zh-CN": {
        "question": "问题", "approach": "思路", "calculations": "计算", "conclusion": "结论", "given": "已知：",
        "approach_text": lambda n: (f"结果由以下 {n} 步计算得出，每一步都列出代入的数值：" if n
                                    else "根据记录的条件未能进行计算。"),
        "with": "代入", "gives": "得", "result": "计算得", "sep": "，", "end": "。",
        "looked_up": "查阅资料：", "source": "来源", "unverified": "（来自网络，未经核实）",
        "refused_at": "计算在第 {seq} 行（{tool}）被拒绝：{code}：{error}",
        "stopped": "计算在此中止，因此不给出结论；以上数值均为拒绝之前的计算结果。",
        "stopped_first": "计算在任何计算之前中止，因此不给出结论。",
        "refused_along": "过程中被拒绝的调用（不属于结果）：",
        "approach_stopped": lambda n: ("计算因被拒绝的调用而中止，没有结果；"
                                       + (f"以下列出此前的 {n} 步计算：" if n else "此前未进行任何计算。")),
    },
}


def _lookup_sentence(lk: Lookup, words: dict[str, Any]) -> str:
    """A looked-up fact in the offline article: the answer verbatim, with its sources."""
    source = f" ({words['source']}: {', '.join(lk.sources)})" if lk.sources else ""
    flag = f" {words['unverified']}" if lk.tier == "open" else ""
    return f"{words['looked_up']} {lk.answer}{source}{flag}"


class OfflineWriter:
    """The deterministic writer: Jinja2 templates, no model, the same sections upstream asks
    a model for (question, approach, calculations, conclusion)."""

    name = "offline"

    def __init__(self) -> None:
        import jinja2

        folder = Path(__file__).parent / "templates"
        self._md = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), autoescape=False,
                                      keep_trailing_newline=True)
        self._md.filters["md"] = md_escape
        self._tex = jinja2.Environment(
            loader=jinja2.FileSystemLoader(folder), autoescape=False, keep_trailing_newline=True,
            block_start_string="((*", block_end_string="*))", variable_start_string="(((",
            variable_end_string=")))", comment_start_string="((#", comment_end_string="#))",
        )
        self._tex.filters["tex"] = tex_escape

    def write_body(self, f: ArticleFacts, fmt: str, language: str) -> str:
        """The article body (``fmt`` ``md`` or ``latex``, ``language`` ``zh-CN`` or ``en``) from the templates."""
        words = _WORDS[language]
        steps: list[dict[str, str]] = []
        body: list[dict[str, str]] = []
        seen_step = False
        intro: list[str] = []
        for item in f.items:
            if isinstance(item, Lookup):
                item = Message(item.seq, _lookup_sentence(item, words), False)
            if isinstance(item, Message):
                if item.hide:
                    continue  # hidden notes are never printed
                if seen_step:
                    body.append({"kind": "message", "text": item.text})
                else:
                    intro.append(item.text)
                continue
            seen_step = True
            entry = self._step(item, words)
            steps.append(entry)
            body.append(entry)
        conditions = []
        for c in f.conditions:
            text, latex = _value(c.value, c.unit)
            conditions.append({"text": f"{c.name} = {text}", "tex": rf"${display.name_latex(c.name)} = {latex}$"})
        def said(r: Refusal) -> str:
            return words["refused_at"].format(seq=r.seq, tool=r.tool, code=r.code, error=r.error.rstrip(".")) \
                + words["end"]

        refused = [said(r) for r in f.refusals if r.seq != f.stopped_at]
        if f.ended_in_refusal:  # never a value presented as its result, not even in a closing text
            stop = next(r for r in f.refusals if r.seq == f.stopped_at)
            conclusion = " ".join([said(stop), words["stopped"] if steps else words["stopped_first"]])
        elif f.closing:
            conclusion = f.closing
        elif steps:
            conclusion = f"{words['result']} {steps[-1]['summary']}{words['end']}"
        else:
            conclusion = f.title
        if refused:
            conclusion += " " + " ".join([words["refused_along"], *refused])
        if f.ended_in_refusal:
            words = {**words, "approach_text": words["approach_stopped"]}
        ctx = {"author": AUTHOR, "t": words, "title": f.title, "intro": intro,
               "conditions": conditions, "steps": steps, "body": body, "conclusion": conclusion}
        template = self._md.get_template("article.md.j2") if fmt == "md" else self._tex.get_template("article.tex.j2")
        return template.render(**ctx)

    def _step(self, s: Step, words: dict[str, Any]) -> dict[str, str]:
        try:
            tree = G.parse(s.formula).tree
            formula = display.formula_latex(tree)
        except Exception:  # noqa: BLE001 - a formula the display cannot typeset is shown as text
            formula = r"\text{" + tex_escape(s.formula) + "}"
        rtext, rlatex = _value(s.result, s.unit)
        name = display.name_latex(s.target or "x")
        subs = [(n, _value(v, s.var_units.get(n))) for n, v in s.vars.items()]
        sep, end = words["sep"], words["end"]
        sub_text = sep.join(f"{n} = {t}" for n, (t, _) in subs)
        sub_tex = sep.join(rf"${display.name_latex(n)} = {tx}$" for n, (_, tx) in subs)
        summary = f"{s.target} = {rtext}"
        if subs:
            prose = f"{words['with']} {sub_text}{sep}{words['gives']} {summary}{end}"
            tex_prose = f"{words['with']} {sub_tex}{sep}{words['gives']} ${name} = {rlatex}${end}"
        else:
            prose = f"{summary}{end}"
            tex_prose = f"${name} = {rlatex}${end}"
        return {"kind": "step", "latex": f"{name} = {formula}", "prose": prose, "tex_prose": tex_prose,
                "summary": summary}


# ------------------------------------------------------------------------- checks


def md_escape(s: str) -> str:
    """*s* as literal Markdown text: HTML-escaped, Markdown's special characters backslashed."""
    import html

    s = html.escape(s, quote=False)
    for ch in "\\`*_[]#|$":
        s = s.replace(ch, "\\" + ch)
    return s


def tex_escape(s: str) -> str:
    """*s* as literal LaTeX text (special characters escaped)."""
    out = []
    for ch in s:
        out.append({"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
                    "_": r"\_", "%": r"\%", "^": r"\^{}", "~": r"\~{}"}.get(ch, ch))
    return "".join(out)


# The LaTeX deny-list. A model-written body is untrusted input to a TeX engine, which can
# read files, write files and (with shell escape) run programs; these are the commands a
# body may not contain. Sources:
#
# * UPSTREAM_FORBIDDEN: upstream's list, as it is (upstream-facts.md 3.12).
# * FORBIDDEN_EXTRA, our additions, by what they could do:
#   - read a file into the PDF or test that it exists (TeX primitives, LaTeX kernel and common
#     packages: a command of a package the shell does not load is refused all the same);
#   - write files, talk to the driver, run Lua or a shell;
#   - build or hide a command name from other tokens (\csname-like and expansion tricks), so
#     that no command of this list can be reached without being spelled out;
#   - change category codes or what TeX reads (the escape character, end of line), define or
#     redefine anything, hook code into later material, load fonts by path.
#
# Also refused, whatever the name: any command name with '@' (LaTeX's internal macros such as
# \@@input, the primitive \input; a body never has \makeatletter), the ^^ notation (^^5c is a
# backslash, \inp^^75t is \input), control characters, and \begin/\end of an environment whose
# name is not plain letters or names a command of the list (\begin{X} runs \X) or is a verbatim
# or file-writing environment. Commands are read as TeX reads them: a backslash and a run of
# letters (whatever follows), or a backslash and one other character; so \\input is a line
# break followed by the word "input", and \inputlineno is not \input.
#
# Last line of defence, for a primitive nobody thought of: write_article compiles with shell
# escape off and TeX's paranoid file access (openin_any=p, openout_any=p: no absolute paths, no
# '..', no dot files), see compile_latex.

UPSTREAM_FORBIDDEN = ("documentclass", "usepackage", "RequirePackage", "input", "include", "includeonly", "write",
                      "immediate", "catcode", "special", "makeatletter", "makeatother", "newcommand", "renewcommand",
                      "newenvironment", "renewenvironment", "let", "edef", "gdef", "global", "csname", "endcsname",
                      "def")

FORBIDDEN_EXTRA = (
    # read files (or test them)
    "InputIfFileExists", "IfFileExists", "openin", "closein", "read", "readline", "newread", "ifeof",
    "lstinputlisting", "verbatiminput", "VerbatimInput", "BVerbatimInput", "LVerbatimInput", "inputminted",
    "import", "subimport", "inputfrom", "subinputfrom", "includefrom", "subincludefrom", "includegraphics",
    "includepdf", "includestandalone", "includesvg", "bibliography", "addbibresource", "LoadClass",
    "LoadClassWithOptions", "RequirePackageWithOptions", "pdffiledump", "filedump", "pdfmdfivesum", "mdfivesum",
    "pdffilesize", "filesize", "pdffilemoddate", "filemoddate", "pdfximage", "pdfobj", "XeTeXpicfile",
    "XeTeXpdffile", "XeTeXinputencoding", "XeTeXdefaultencoding", "endinput",
    # write files, talk to the driver, run code
    "openout", "closeout", "newwrite", "filecontents", "newfilecontents", "addtocontents", "addcontentsline",
    "pdfliteral", "directlua", "latelua", "luaexec", "luadirect", "luacode", "ShellEscape", "shellescape",
    # build a command name from other tokens, or control expansion
    "expandafter", "noexpand", "unexpanded", "detokenize", "scantokens", "scantextokens", "string",
    "ifcsname", "begincsname", "lastnamedcs", "UseName", "ExpandArgs", "use", "primitive", "pdfprimitive",
    # category codes and what TeX reads
    "lccode", "uccode", "sfcode", "mathcode", "delcode", "lowercase", "uppercase", "endlinechar", "newlinechar",
    "escapechar", "ExplSyntaxOn", "ExplSyntaxOff", "obeyspaces", "obeylines", "verb", "everyeof",
    # define, redefine, hook
    "xdef", "futurelet", "chardef", "mathchardef", "countdef", "dimendef", "skipdef", "muskipdef", "toksdef",
    "providecommand", "DeclareRobustCommand", "NewDocumentCommand", "RenewDocumentCommand",
    "ProvideDocumentCommand", "DeclareDocumentCommand", "NewExpandableDocumentCommand",
    "RenewExpandableDocumentCommand", "ProvideExpandableDocumentCommand", "DeclareExpandableDocumentCommand",
    "NewDocumentEnvironment", "RenewDocumentEnvironment", "ProvideDocumentEnvironment",
    "DeclareDocumentEnvironment", "NewCommandCopy", "RenewCommandCopy", "DeclareCommandCopy",
    "NewEnvironmentCopy", "RenewEnvironmentCopy", "DeclareEnvironmentCopy", "DeclareTextCommand",
    "DeclareSIUnit", "DeclareSIPrefix", "DeclareSIPower", "DeclareSIQualifier", "DeclareMathOperator",
    "DeclareMathSymbol", "DeclareMathAlphabet", "SetMathAlphabet", "DeclareSymbolFont", "SetSymbolFont",
    "DeclareFontFamily", "DeclareFontShape", "DeclareFixedFont", "DeclareTextFontCommand", "DeclareOldFontCommand",
    "DeclareUnicodeCharacter", "newunicodechar", "protected", "long", "outer", "afterassignment", "aftergroup",
    "everypar", "everymath", "everydisplay", "everyhbox", "everyvbox", "everycr", "everyjob", "output",
    "AtBeginDocument", "AtEndDocument", "AddToHook", "AddToHookNext",
    # load fonts (by path)
    "font", "fontspec", "setmainfont", "setsansfont", "setmonofont", "setmathfont", "setmathrm", "setmathsf",
    "setmathtt", "setboldmathrm", "newfontfamily", "newfontface", "setfontfamily", "setfontface",
    "renewfontfamily", "renewfontface", "defaultfontfeatures", "addfontfeature", "addfontfeatures",
)

#: Every command a LaTeX body may not contain (upstream's list, then ours; see above).
FORBIDDEN = UPSTREAM_FORBIDDEN + tuple(c for c in FORBIDDEN_EXTRA if c not in UPSTREAM_FORBIDDEN)

#: Environments refused besides those named by FORBIDDEN: they change category codes (verbatim
#: material) or write files.
FORBIDDEN_ENVIRONMENTS = ("filecontents", "verbatim", "Verbatim", "BVerbatim", "LVerbatim", "lstlisting", "minted",
                          "comment", "alltt", "luacode", "luacode*", "tikzexternal")

_FORBIDDEN_SET = frozenset(FORBIDDEN)
_CONTROL = re.compile(r"\\([A-Za-z@]+|[\s\S])")  # TeX's reading of a command (@ read as a letter, to refuse it)
_BAD_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _latex_problem(body: str) -> str | None:
    """What makes ``body`` unsafe for the TeX engine (see the deny-list above), or None."""
    if "^^" in body:
        return ("the LaTeX body uses the ^^ notation (a character by its code, which can spell a forbidden "
                "command), which an article body may not contain")
    bad = _BAD_CHARS.search(body)
    if bad:
        return f"the LaTeX body contains the control character U+{ord(bad.group(0)):04X}"
    for m in _CONTROL.finditer(body):
        name = m.group(1)
        if name in _FORBIDDEN_SET:
            return f"the LaTeX body uses \\{name}, which an article body may not contain"
        if "@" in name:
            return (f"the LaTeX body uses \\{name}: a command name with '@' (an internal macro) may not appear in "
                    "an article body")
        if name in ("begin", "end"):
            env = re.match(r"[ \t]*(?:\n[ \t]*)?\{([^{}]*)\}", body[m.end():])
            if env is None:
                return f"the LaTeX body uses \\{name} without an environment name in braces"
            full = env.group(1)
            if full == "document":
                return "the LaTeX body contains a document environment; give the body only"
            if not re.fullmatch(r"[A-Za-z]+\*?", full):
                return f"the LaTeX body uses the environment {{{full}}}: environment names are plain letters"
            plain = full.rstrip("*")
            if plain in _FORBIDDEN_SET or f"end{plain}" in _FORBIDDEN_SET or full in FORBIDDEN_ENVIRONMENTS \
                    or plain in FORBIDDEN_ENVIRONMENTS:
                return f"the LaTeX body uses the environment {{{full}}}, which an article body may not contain"
    return None


def sanitize_latex(body: str) -> str:
    """Upstream's LaTeX body checks, hardened: refuse the commands of :data:`FORBIDDEN` (and
    command names with ``@``, the ``^^`` notation, control characters, a document, verbatim or
    file-writing environment), escape bare ``%``, require balanced braces and an even number of
    ``$``. Returns the body with ``%`` escaped; raises :class:`ArticleError` naming the problem."""
    if not body or not body.strip():
        raise ArticleError("the LaTeX body is empty")
    problem = _latex_problem(body)
    if problem:
        raise ArticleError(problem)
    body = re.sub(r"(?<!\\)%", r"\\%", body)
    bare = re.sub(r"\\.", "", body)
    if bare.count("{") != bare.count("}"):
        raise ArticleError(f"the LaTeX body has {bare.count('{')} '{{' but {bare.count('}')} '}}'")
    if bare.count("$") % 2:
        raise ArticleError("the LaTeX body has an odd number of '$' (an unclosed inline formula)")
    return body


def latex_document(body: str, language: str, title: str = FIXED_TITLE) -> str:
    """The shell around a sanitized body: ``ctexart`` for Chinese, ``article`` otherwise; its
    ``\\title`` is *title* (the record's title, escaped)."""
    if language == "zh-CN":
        head = [r"\documentclass{ctexart}", r"\usepackage{amsmath}", r"\usepackage{siunitx}",
                r"\usepackage{unicode-math}"]
    else:
        head = [r"\documentclass{article}", r"\usepackage{fontspec}", r"\usepackage{amsmath}",
                r"\usepackage{siunitx}", r"\usepackage{unicode-math}"]
    return "\n".join(["% !TeX program = xelatex", *head, rf"\title{{{tex_escape(title)}}}", rf"\author{{{AUTHOR}}}",
                      r"\date{}", r"\begin{document}", r"\maketitle", "", body.rstrip(), "", r"\end{document}", ""])


def result_numbers(f: ArticleFacts) -> list[str]:
    """Every step result's numbers after the cut, as the offline writer prints them (for
    checking a written article contains them)."""
    out: list[str] = []
    for item in f.items:
        if isinstance(item, Step):
            def walk(v: object) -> None:
                if isinstance(v, dict) and v.get("kind") == "point" and v.get("scale") in ("degC", "degF"):
                    try:  # a temperature point is printed as its reading on its scale, cut after conversion
                        point = parse_tagged(v)
                    except EngineError:
                        pass
                    else:
                        out.extend(_num(x) for x in np.ravel(display.on_scale(point.mag, point.sig.temp)).tolist())
                        return
                if isinstance(v, dict):
                    for k, x in v.items():
                        if k not in ("dim", "kind", "scale"):
                            walk(x)
                elif isinstance(v, list):
                    for x in v:
                        walk(x)
                elif isinstance(v, (int, float)) and not isinstance(v, bool):
                    out.append(_num(v))
            shown = SU.from_json(item.unit, item.result.get("dim")) if isinstance(item.result, dict) else None
            if shown is not None and item.result.get("kind") != "point":
                try:  # in its display unit (issue 18), cut after conversion
                    mag = SU.convert(parse_tagged(item.result).mag, shown)
                except EngineError:
                    mag = None
                if mag is not None:
                    for x in np.ravel(mag).tolist():
                        out.extend([_num(x.real), _num(abs(x.imag))] if isinstance(x, complex) else [_num(x)])
                    continue
            walk(item.result)
    return out


# ------------------------------------------------------------------------- model writer: prompt


#: Bumped whenever the writer's prompt text changes (a saved article can name the prompt it came from).
WRITER_PROMPT_VERSION = "article-writer/3"  # 3: the heading is the record's title (issue 16)

WRITER_RULES = f"""\
You write a short technical article from the facts of one finished calculation. The user \
message holds those facts as plain text: a title, the conditions, explanations, the \
calculation steps with the values substituted into them and their results, and a closing text.

Rules:
1. Use the recorded title as a proper heading of the question.
2. Reconstruct the problem only from the recorded explanations, conditions and closing text; \
never invent details, data or assumptions that are not there.
3. Every number you write must appear in the facts: take it from the conditions, the \
substituted values, the results, the title, the explanations or the closing text, and copy it \
digit for digit. Never invent, estimate or recompute a number, never round it further and \
never add digits: numbers are already cut to at most four decimal places. Write the constants \
of a formula as the recorded formula writes them (0.5 stays 0.5, not 1/2).
4. A value is a number with a 7-integer dimension [m, kg, s, A, K, mol, cd] in SI base units. \
Write it with the unit symbol the question uses, never the vector. Changing to an SI-prefixed \
unit is allowed only by moving the decimal point by a multiple of three (0.1272 ohm as \
127.2 milliohm); no other conversion.
5. Never include record ids, timestamps or the author's notes. A line marked as the author's \
note is guidance for you alone: never copy, quote or paraphrase it, and never let it change a \
recorded number.
6. Never mention Reckoner, DeepSeek Harness, the harness, tools, the recorded formulae or \
derivation steps as such, records, or how this article was produced. The only product names \
allowed is the author line "{AUTHOR}", exactly where the format below puts it.
7. Write it like a technical article, with headings for the question, the approach, the \
calculations and the conclusion; put every formula on its own line and state each result in a \
sentence after its calculation.
8. Answer with the article only: no code fence, no remarks before or after it."""

WRITER_RULES_MARKDOWN = f"""\
Format: Markdown.
- The first line is exactly: # followed by the title from the facts, word for word
- The next line is the author line: *{AUTHOR}*
- Then the sections as level-2 headings (## ...); no other level-1 heading.
- Display formulas on their own lines between $$ and $$; inline math between $ and $.
- No HTML, no images and no links or URLs, except a source URL given in the facts."""

WRITER_RULES_LATEX = r"""Format: a LaTeX body only. It is placed inside a document that already loads amsmath, siunitx and
unicode-math, sets the title and the author and is compiled with XeLaTeX.
- Do not write \documentclass, \usepackage, \title, \author, \date, \maketitle,
  \begin{document} or \end{document}; no definitions (\newcommand, \def, \let and the like) and
  no file or output commands (\input, \include, \write).
- Headings with \section{...}.
- Display math with \[ ... \] or an align* environment; inline math between $ and $.
- Values with units as \SI{number}{unit} with siunitx unit macros (\volt \ohm \farad \henry
  \ampere \second \hertz \watt ...).
- No Markdown and no HTML; no bare % in the prose."""

WRITER_LANGUAGE = "Write the ENTIRE article in {language}, headings included; symbols, units and numbers stay as they are."

_LANGUAGE_NAMES = {"zh-CN": "Simplified Chinese", "en": "English"}


def writer_system_prompt(fmt: str, language: str = "auto") -> str:
    """The model writer's system message: :data:`WRITER_RULES`, the rules of ``fmt`` and, for a
    language other than ``auto``, the :data:`WRITER_LANGUAGE` instruction."""
    if fmt not in FORMATS:
        raise ArticleError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    parts = [WRITER_RULES, WRITER_RULES_MARKDOWN if fmt == "md" else WRITER_RULES_LATEX]
    if language != "auto":
        if language not in _LANGUAGE_NAMES:
            raise ArticleError(f"language {language!r} is not one of {', '.join(LANGUAGES)}")
        parts.append(WRITER_LANGUAGE.format(language=_LANGUAGE_NAMES[language]))
    return "\n\n".join(parts)


class ModelWriter(ArticleWriter, Protocol):
    """The seam for a model-backed writer (:class:`dsh_notebook.llm.writer.ModelArticleWriter`):
    ``write_body(facts, fmt, language)`` returns the body or raises. Nothing it returns is
    trusted: :func:`write_article` saves it only when :func:`check_article` finds no problem."""


# ------------------------------------------------------------------------- model writer: check

# The number rule of check_article, in one place:
#
# * A number is a run of digits with an optional decimal part and thousands groups ("22,413,969",
#   "22\,413", thin spaces), optionally scaled by a power of ten in any common spelling
#   ("3.3006e-6", "3.3006\times10^{-6}", "3.3006 × 10⁻⁶", "\SI{3.3006e-6}{...}", a bare
#   "10^{-6}"). Signs are ignored: magnitudes are compared.
# * It is accepted when it equals (to 1e-12 relative) a record number: a value of a condition,
#   a substituted variable or a step result, either after the cut or at full precision (also
#   the parts of a complex value and the length of an array); a constant of a step formula; a
#   number written in the record's own prose (title, visible messages, closing; lookups'
#   questions and answers when the facts have them). Rounding further is not accepted.
# * A number directly followed by an SI-prefixed unit (mΩ, µF, kPa, \milli\ohm, ...) is also
#   accepted when it is such a number times 10^(3k), k = -4..4: the unit the question used.
# * Not numbers: digits inside words and names (R1, d36, H2O, ω0), subscripts (R_1, _{...}),
#   exponents (m^2, ^{-1}, superscript digits), URLs, \label/\ref arguments, spacing lengths.
#   An integer from 1 to max(10, highest step seq) is an ordinal, not a value, where it numbers
#   a list item, a heading or a step ("Step 3", "3 calculations", "第 3 步", "3 步").

_SUP_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_NORMALIZE = str.maketrans({**{chr(0xFF10 + i): str(i) for i in range(10)}, "−": "-"})
_GROUP = r"(?:,|\\,|\{,\}|\u2009|\u202f)"
_MANT = rf"(?:[0-9]{{1,3}}(?:{_GROUP}[0-9]{{3}})+(?![0-9])(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_POW = r"10\s*(?:\^\s*\{\s*(?P<G>[-+]?\s*[0-9]+)\s*\}|\^\s*(?P<Gb>[-+]?[0-9]+)|(?P<Gu>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
_TOKEN = re.compile(
    r"(?P<word>\\?[A-Za-z\u0370-\u03ffµ][A-Za-z\u0370-\u03ffµ0-9]*)"
    r"|(?P<exp>\^(?:\{\})?\s*\{?\s*[-+]?\s*[0-9.]+\s*\}?)"
    rf"|(?P<sci>(?P<sm>{_MANT})\s*(?:×|\\times|\\cdot|·|⋅|\*|x)\s*{_POW.replace('G', 'se')})"
    rf"|(?P<enot>(?P<em>{_MANT})[eE](?P<ee>[-+]?[0-9]+))"
    rf"|(?P<pow>{_POW.replace('G', 'pe')})"
    rf"|(?P<plain>{_MANT})"
)
_PREFIX_MACROS = {"milli": "m", "micro": "µ", "mu": "µ", "nano": "n", "pico": "p", "femto": "f", "kilo": "k",
                  "mega": "M", "giga": "G", "tera": "T", "peta": "P"}
_UNIT_MACROS = {"ohm": "Ω", "Omega": "Ω", "farad": "F", "henry": "H", "volt": "V", "ampere": "A", "second": "s",
                "hertz": "Hz", "watt": "W", "metre": "m", "meter": "m", "gram": "g", "joule": "J", "newton": "N",
                "pascal": "Pa", "coulomb": "C", "siemens": "S", "tesla": "T", "weber": "Wb", "litre": "L",
                "liter": "L", "kelvin": "K", "mole": "mol", "electronvolt": "eV", "bar": "bar"}
_PREFIXED_UNIT = re.compile(r"[kMGTPmµμunpf](?:mol|Hz|Pa|Wb|eV|Wh|bar|cd|[mgsAKV\u03a9\u2126FHWJNCSTLl])(?![A-Za-z])")
_ORDINAL_BEFORE = re.compile(  # a heading's number, a step or equation number
    r"(?:(?:^|\n)[ \t]*#{1,6}[ \t]*|\\(?:sub)*section\*?\{\s*|\\tag\{\s*"
    r"|(?:\b(?:steps?|calculations?|equations?|eqs?\.|parts?|stages?|sections?|items?)|第|步骤|公式|式)\s*\(?\s*)$",
    re.IGNORECASE)
_LIST_MARKER = re.compile(r"(?:^|\n)[ \t>]*(?:[*+-][ \t]+)?(?:\\item\s*)?$")  # then "1." or "1)" or "1、"
_ORDINAL_AFTER = re.compile(r"\s*(?:steps?|calculations?|equations?|parts?|stages?|步|个|项|次|条|式)", re.IGNORECASE)


@dataclass
class WrittenNumber:
    """One number found in a text: its characters, its value, where it is, and whether it is
    an ordinal or is followed by an SI-prefixed unit."""

    text: str
    value: float
    start: int
    end: int
    ordinal: bool = False
    prefixed_unit: bool = False


def _blank(text: str, pattern: str, flags: int = 0) -> str:
    """``text`` with every match of ``pattern`` replaced by as many spaces (positions kept)."""
    return re.sub(pattern, lambda m: " " * len(m.group(0)), text, flags=flags)


def _blank_subscripts(text: str) -> str:
    out = list(text)
    i = 0
    while True:
        i = text.find("_{", i)
        if i < 0:
            break
        depth, j = 0, i + 1
        while j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        for k in range(i, min(j + 1, len(text))):
            out[k] = " "
        i = j + 1
    return _blank("".join(out), r"_[A-Za-z0-9]+")


def _prepare(text: str) -> str:
    """The text as the scanner reads it: same length, non-values blanked out."""
    text = text.translate(_NORMALIZE)
    text = _blank(text, r"https?://[^\s)\]}>]+")
    text = _blank(text, r"\\(?:label|ref|eqref|cite|url|href|vspace|hspace)\*?\{[^{}]*\}")
    text = _blank(text, r"\\\\\[[^\]]*\]")
    return _blank_subscripts(text)


def _unit_follows(after: str) -> bool:
    def macro(m: re.Match) -> str:
        name = m.group(1)
        return _PREFIX_MACROS.get(name) or _UNIT_MACROS.get(name) or ""

    s = re.sub(r"\\([A-Za-z]+)\s*", macro, after)  # TeX drops the spaces after a control word
    s = re.sub(r"\\[,;:! ]|[{}~]", "", s).lstrip()
    return bool(_PREFIXED_UNIT.match(s))


def _value_of(m: re.Match) -> float:
    def mant(s: str) -> str:
        return re.sub(_GROUP, "", s)

    def exp(prefix: str) -> str:
        e = m.group(prefix) or m.group(prefix + "b") or (m.group(prefix + "u") or "").translate(_SUP_DIGITS)
        return re.sub(r"\s", "", e)

    if m.group("sci"):
        return abs(float(f"{mant(m.group('sm'))}e{exp('se')}"))
    if m.group("enot"):
        return abs(float(f"{mant(m.group('em'))}e{m.group('ee')}"))
    if m.group("pow"):
        return abs(float(f"1e{exp('pe')}"))
    return abs(float(mant(m.group("plain"))))


def written_numbers(text: str, ordinal_max: int = 10) -> list[WrittenNumber]:
    """Every number written in ``text`` (Markdown, LaTeX or plain prose), by the rule above."""
    text = _prepare(text)
    out = []
    for m in _TOKEN.finditer(text):
        if m.group("word") or m.group("exp"):
            continue
        try:
            value = _value_of(m)
        except (ValueError, OverflowError):
            continue
        w = WrittenNumber(m.group(0), value, m.start(), m.end())
        if m.group("plain") and re.fullmatch(r"[0-9]+\.?", w.text) and 1 <= value <= ordinal_max:
            before = text[max(0, m.start() - 40):m.start()]
            if m.start() <= 40:
                before = "\n" + before
            marker = w.text.endswith(".") or text.startswith((")", "、"), m.end())
            w.ordinal = bool(_ORDINAL_BEFORE.search(before) or _ORDINAL_AFTER.match(text, m.end())
                             or (marker and _LIST_MARKER.search(before)))
        w.prefixed_unit = _unit_follows(text[m.end():m.end() + 48])
        out.append(w)
    return out


def _leaves(obj: object, out: list[float]) -> None:
    """Numbers of a stored JSON value (``dim`` skipped; a list also gives its length)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k != "dim":
                _leaves(v, out)
    elif isinstance(obj, list):
        out.append(float(len(obj)))
        for v in obj:
            _leaves(v, out)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool) and math.isfinite(obj):
        out.append(float(obj))


def _shown(stored: object, out: list[float]) -> None:
    """Numbers of a stored value as a writer is shown them: the parsed value of the cut form
    (real and imaginary parts of a polar value, array elements)."""
    try:
        v = parse_tagged(cut_value(stored))
    except (EngineError, ValueError, TypeError, KeyError):  # a malformed row: its leaves still count
        return

    def walk(mag: Any, sig: Sig) -> None:
        if sig.kind == "object":
            for n, s in sig.fields:
                walk(mag[n], s)
            return
        items = mag.ravel().tolist() if hasattr(mag, "ravel") else [mag]
        if sig.temp in ("degC", "degF"):  # a point is also written as its reading on its scale
            exact = parse_tagged(stored).mag if isinstance(stored, dict) and "object" not in stored else mag
            items += [cut(x) for x in np.ravel(display.on_scale(exact, sig.temp)).tolist()]
        for x in items:
            for part in ((x.real, x.imag) if isinstance(x, complex) else (x,)):
                if math.isfinite(part):
                    out.append(float(part))

    walk(v.mag, v.sig)


def _formula_constants(formula: str, out: list[float]) -> None:
    try:
        stack = [G.parse(formula).tree]
    except (EngineError, ValueError):  # not a formula the grammar reads: its written numbers still count
        stack = []
    while stack:
        n = stack.pop()
        if isinstance(n, G.Num):
            out += [n.value.real, n.value.imag] if isinstance(n.value, complex) else [float(n.value)]
        stack.extend(G._children(n))
    out += [w.value for w in written_numbers(formula.replace("@", " ").replace("$", " "), 0)]


def _lookup_texts(f: ArticleFacts) -> list[str]:
    """Questions and answers of the facts' lookups, when the facts carry them."""
    texts = []
    for lk in getattr(f, "lookups", None) or []:
        get = lk.get if isinstance(lk, dict) else (lambda k, _lk=lk: getattr(_lk, k, None))
        for key in ("question", "answer"):
            value = get(key)
            if value is not None:
                texts.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return texts


def allowed_numbers(f: ArticleFacts) -> list[float]:
    """The magnitudes an article of ``f`` may write (see the rule above), sorted."""
    raw: list[float] = []
    displayed: list[str] = []  # values as the notebook shows them in their display units (issue 18)
    for c in f.conditions:
        _leaves(c.value, raw)
        _shown(c.value, raw)
        displayed.append(_shown_as(c.value, c.unit))
    for item in f.items:
        if isinstance(item, Step):
            for v in [*item.vars.values(), item.result]:
                _leaves(v, raw)
                _shown(v, raw)
            displayed += [_shown_as(v, item.var_units.get(n)) for n, v in item.vars.items()]
            displayed.append(_shown_as(item.result, item.unit))
            _formula_constants(item.formula, raw)
    values = {abs(x) for x in raw} | {abs(cut(x)) for x in raw}
    for text in displayed:
        values |= {abs(w.value) for w in written_numbers(text, 0)}
    prose = [f.title, f.closing or "", *(m.text for m in f.items if isinstance(m, Message) and not m.hide),
             *_lookup_texts(f), *(f"row {r.seq}: {r.error}" for r in f.refusals)]  # a refusal is quoted as written
    for text in prose:
        values |= {w.value for w in written_numbers(text, 0)}
    return sorted(values)


def _near(x: float, allowed: list[float]) -> float | None:
    """The allowed number equal to ``x`` (relative 1e-12), else None."""
    i = bisect.bisect_left(allowed, x)
    for j in (i - 1, i, i + 1):
        if 0 <= j < len(allowed) and math.isclose(x, allowed[j], rel_tol=1e-12, abs_tol=0.0):
            return allowed[j]
    return None


def _closest(x: float, allowed: list[float]) -> float | None:
    if not allowed:
        return None
    return min(allowed, key=lambda a: abs(math.log10(a) - math.log10(x)) if a > 0 and x > 0 else abs(a - x))


def _snippet(text: str, w: WrittenNumber) -> str:
    left = text[max(0, w.start - 24):w.start].rsplit("\n", maxsplit=1)[-1]
    right = text[w.end:w.end + 24].split("\n", maxsplit=1)[0]
    return f"...{left}{w.text}{right}...".strip()


#: The longest article body a writer may return (characters).
MAX_ARTICLE_CHARS = 100_000

# What a Markdown article may not contain: a record holds no HTML, no images and no URLs but
# its lookups' sources, so a model article may not add any (no script, no tracking image, no
# external resource of any kind):
#
# * no raw HTML: no '<' directly followed by a letter, '/', '!' or '?' (tags, comments,
#   declarations, autolinks such as <https://...>; write a comparison as "a < b");
# * no images at all ('![alt](...)', '![alt][ref]');
# * a link's destination ('[text](dest)', '[ref]: dest') either has no URL scheme and is not
#   protocol-relative ('#part', 'notes.md'), or is an https URL equal to a source of one of the
#   record's lookups (ArticleFacts.lookups); HTML entities and backslash escapes are decoded
#   and white space is dropped before the scheme is read, as a browser would;
# * a URL written as text ('scheme://...', 'www....') is one of those sources;
# * no 'javascript:' anywhere.

_HTML = re.compile(r"<[A-Za-z/!?]")
_IMAGE = re.compile(r"!\[[^\]\n]*\]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_BARE_URL = re.compile(r"(?i)(?:\b[a-z][a-z0-9+.\-]*://|\bwww\.)[^\s<>]*")
_JAVASCRIPT = re.compile(r"(?i)j\s*a\s*v\s*a\s*s\s*c\s*r\s*i\s*p\s*t\s*:")
_URL_TAIL = set(")].,;:!?*_'\"\\")


def _lookup_sources(f: ArticleFacts) -> list[str]:
    """The source URLs of the facts' lookups, when the facts carry them."""
    out = []
    for lk in getattr(f, "lookups", None) or []:
        sources = lk.get("sources") if isinstance(lk, dict) else getattr(lk, "sources", None)
        out += [s for s in sources or [] if isinstance(s, str) and s]
    return out


def _link_destinations(text: str) -> list[str]:
    """The destinations of inline links ('](dest'; balanced parentheses, '<...>') and of
    reference definitions ('[ref]: dest'), as written."""
    out = []
    for m in re.finditer(r"\]\(", text):
        i = m.end()
        while i < len(text) and text[i] in " \t\n":
            i += 1
        if text.startswith("<", i):
            j = text.find(">", i)
            out.append(text[i + 1:j if j >= 0 else len(text)])
            continue
        depth, j = 0, i
        while j < len(text):
            ch = text[j]
            if ch == "\\":
                j += 2
                continue
            if ch.isspace() or (ch == ")" and depth == 0):
                break
            depth += {"(": 1, ")": -1}.get(ch, 0)
            j += 1
        out.append(text[i:j])
    for m in re.finditer(r"(?m)^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\n?[ \t]*(<[^>\n]*>|\S+)", text):
        out.append(m.group(1).strip("<>"))
    return out


def _decoded(dest: str) -> str:
    """A link destination as a browser reads it: entities and backslash escapes decoded,
    white space and control characters dropped."""
    import html

    return re.sub(r"[\x00-\x20\x7f]", "", re.sub(r"\\(.)", r"\1", html.unescape(dest)))


def _markdown_problems(text: str, sources: list[str]) -> list[str]:
    """The HTML, image, link and URL problems of a Markdown article (see above)."""
    import html

    problems = []
    # a link destination in angle brackets ('](<dest>)', '[ref]: <dest>') is not HTML: its own check is below
    outside = re.sub(r"(\]\(\s*|(?m:^)[ \t]{0,3}\[[^\]\n]+\]:[ \t]*)<[^<>\n]*>", r"\1", text)
    m = _HTML.search(outside)
    if m:
        problems.append(f"it contains raw HTML ({outside[m.start():m.start() + 30]!r}); a Markdown article may "
                        "hold no HTML tags (write a comparison as 'a < b')")
    if _JAVASCRIPT.search(html.unescape(text)):
        problems.append("it contains a javascript: URL")
    m = _IMAGE.search(text)
    if m:
        problems.append(f"it contains an image ({text[m.start():m.start() + 40]!r}); an article may load no image "
                        "or other external resource")
    allowed = set(sources)
    for dest in _link_destinations(text):
        d = _decoded(dest)
        if d in allowed and d.lower().startswith("https://"):
            continue
        if _SCHEME.match(d) or d.startswith(("//", "\\\\", "/\\", "\\/")):
            problems.append(f"it links to {dest[:80]!r}; a link may only be an https source of a lookup of the "
                            "record")
    variants = sorted({v for s in sources for v in (s, html.escape(s, quote=False), md_escape(s))}, key=len,
                      reverse=True)
    for m in _BARE_URL.finditer(text):
        url = m.group(0)
        if not any(url.startswith(v) and set(url[len(v):]) <= _URL_TAIL for v in variants):
            problems.append(f"it contains the URL {url[:80]!r}, which is not a source of a lookup of the record")
            break
    return problems


def _is_title_heading(line: str, title: str) -> bool:
    """Whether *line* is ``# <title>``: the record's title, as written or Markdown-escaped."""
    heading = line.strip()
    if not heading.startswith("# "):
        return False
    said = " ".join(heading[2:].split())
    want = " ".join(title.split())
    unescaped = re.sub(r"\\(?=[^\w\s])", "", said)  # \* \_ \# ... as the Markdown escaper writes them
    return want in (said, unescaped) or said == " ".join(md_escape(title).split())


def check_article(text: str, f: ArticleFacts, fmt: str) -> list[str]:
    """What is wrong with a writer's ``text`` for the facts ``f`` in format ``fmt``; an empty
    list means it may be saved. Checks: the number rule (every number a record number after
    the cut, see :func:`allowed_numbers`), the length (at most :data:`MAX_ARTICLE_CHARS`), the
    format (Markdown: the fixed H1 title, the author line, H2 sections, no HTML, no image, no
    link or URL but a lookup's source, no ``javascript:``, see :func:`_markdown_problems`;
    LaTeX: :func:`sanitize_latex`, a body with ``\\section`` and no title commands, Markdown or
    HTML), no product name outside the fixed lines, no record id, no timestamp, no author's
    note."""
    if fmt not in FORMATS:
        raise ArticleError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    if not text or not text.strip():
        return ["the article is empty"]
    if len(text) > MAX_ARTICLE_CHARS:
        return [f"the article is {len(text):,} characters long; the limit is {MAX_ARTICLE_CHARS:,} characters"]
    problems: list[str] = []
    rest = text
    if fmt == "md":
        lines = text.splitlines()
        filled = [i for i, line in enumerate(lines) if line.strip()]
        if not filled or not _is_title_heading(lines[filled[0]], f.title):
            problems.append(f"the first line is not the heading '# {f.title}' (the record's title)")
        elif len(filled) < 2 or lines[filled[1]].strip().strip("*_ ") != AUTHOR:
            problems.append(f"the line after the title is not the author line '*{AUTHOR}*'")
        else:
            lines[filled[0]] = lines[filled[1]] = ""
        rest = "\n".join(lines)
        if any(re.match(r"#\s", line) for line in rest.splitlines()):
            problems.append("it has a second level-1 heading ('# ...'); sections are '## ...'")
        if not re.search(r"(?m)^##\s+\S", rest):
            problems.append("it has no section headings ('## ...')")
        problems += _markdown_problems(text, _lookup_sources(f))
    else:
        try:
            sanitize_latex(text)
        except ArticleError as exc:
            problems.append(str(exc))
        for cmd in ("title", "author", "date", "maketitle"):
            if re.search(rf"\\{cmd}(?![A-Za-z])", text):
                problems.append(f"the LaTeX body uses \\{cmd}; the document shell sets the title and the author")
        if not re.search(r"\\section\*?\s*\{", text):
            problems.append("the LaTeX body has no \\section heading")
        if re.search(r"(?m)^\s*#{1,6}\s|```|\*\*\S|</?(?:b|i|p|br|div|span|em|strong|h[1-6]|sup|sub)\b[^>]*>", text):
            problems.append("the LaTeX body contains Markdown or HTML")
    for name in ("Reckoner", "DeepSeek"):
        if re.search(name, rest, re.IGNORECASE):
            problems.append(f"it mentions {name} outside the author line")
    if f.record_id and f.record_id in text:
        problems.append(f"it contains the record id {f.record_id}")
    if re.search(r"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}", text):
        problems.append("it contains a timestamp")
    lowered = text.lower()
    for note in (m.text.strip() for m in f.items if isinstance(m, Message) and m.hide):
        if len(note) >= 12 and note.lower() in lowered:
            problems.append(f"it quotes the author's note {note[:40]!r}")
    allowed = allowed_numbers(f)
    seqs = [getattr(i, "seq", 0) or 0 for i in f.items]
    ordinal_max = max([10, *seqs])
    bad: dict[str, str] = {}
    for w in written_numbers(rest, ordinal_max):
        if w.ordinal or _near(w.value, allowed) is not None:
            continue
        if w.prefixed_unit and w.value and any(_near(w.value / 10.0 ** (3 * k), allowed) is not None
                                               for k in range(-4, 5) if k):
            continue
        if w.text not in bad:
            closest = _closest(w.value, allowed)
            hint = f" (closest record number: {_num(closest)})" if closest is not None else ""
            bad[w.text] = f"the number {w.text} in {_snippet(rest, w)!r} is not a number of the record{hint}"
    if bad:
        shown = list(bad.values())
        more = f"; and {len(shown) - 5} more" if len(shown) > 5 else ""
        problems.append("; ".join(shown[:5]) + more + " (numbers must be copied from the facts as given)")
    return problems


def strip_fence(text: str) -> str:
    """``text`` without one code fence around all of it (```markdown, ```latex, ```tex, ```)."""
    m = re.fullmatch(r"\s*```[A-Za-z-]*[ \t]*\n(.*?)\n?```\s*", text, re.DOTALL)
    return m.group(1) if m else text


# ------------------------------------------------------------------------- files


@dataclass
class ArticleResult:
    """What :func:`write_article` wrote: ``writer`` is the name of the writer whose body was
    saved (``"offline"`` or ``"model"``); ``fallback_reason`` says why another writer's body
    was not used (``None`` when the requested writer's body was saved)."""

    path: Path  # the .md or .tex written
    pdf: Path | None = None
    language: str = "en"
    writer: str = "offline"
    fallback_reason: str | None = None


def article_body(f: ArticleFacts, fmt: str, language: str,
                 writer: ArticleWriter | None = None) -> tuple[str, str, str | None]:
    """``(body, writer name, fallback reason)``. The offline writer's body is trusted; any
    other writer's body is saved only when :func:`check_article` finds no problem. When that
    writer raises or its body fails the check, the offline writer's body is returned with the
    reason (``language`` is ``zh-CN`` or ``en``)."""
    if writer is None or isinstance(writer, OfflineWriter):
        return (writer or OfflineWriter()).write_body(f, fmt, language), "offline", None
    name = getattr(writer, "name", None) or type(writer).__name__
    if f.refusals:  # a model might present a refused calculation's value as its result: never asked
        first = next((r for r in f.refusals if r.seq == f.stopped_at), f.refusals[0])
        reason = (f"the record holds refused calls (row {first.seq}: {first.code}), which the offline writer states "
                  f"in its conclusion; the {name} writer was not asked")
        return OfflineWriter().write_body(f, fmt, language), "offline", reason
    try:
        body = strip_fence(writer.write_body(f, fmt, language))
    except Exception as exc:  # noqa: BLE001 - any failure of an untrusted writer means the offline body
        reason = f"the {name} writer failed: {exc}" if str(exc) else f"the {name} writer failed: {type(exc).__name__}"
    else:
        problems = check_article(body, f, fmt)
        if not problems:
            return body, name, None
        reason = f"the {name} writer's article was refused: " + "; ".join(problems)
    return OfflineWriter().write_body(f, fmt, language), "offline", reason


def write_article(record: Record | str | Path, out_dir: str | os.PathLike[str], fmt: str = "md", language: str = "auto",
                  compile: bool = False, name: str | None = None, writer: ArticleWriter | None = None) -> ArticleResult:
    """Write a closed record's article into ``out_dir``: Markdown flat as ``<name>.md``;
    LaTeX in ``<name>/<name>.tex`` (the folder also receives the PDF when ``compile``).

    ``writer`` defaults to the offline writer. Another writer (a :class:`ModelWriter`) is
    checked by :func:`check_article`; when it raises or fails the check, the offline body is
    saved and ``result.fallback_reason`` says why (see :func:`article_body`).

    Raises :class:`ArticleError` (open record, bad format or language, unsafe LaTeX, a
    missing ``latexmk``/``xelatex`` for ``compile``: the ``.tex`` is written first)."""
    if fmt not in FORMATS:
        raise ArticleError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    if compile and fmt != "latex":
        raise ArticleError("only LaTeX articles are compiled (use --format latex)")
    f = facts(record)
    lang = resolve_language(f, language)
    if name is not None and not name.strip():
        raise ArticleError("the file name is empty; give a name or leave --name out")
    # The whole id (upstream takes its first 8 characters, but ids are millisecond clocks,
    # so records made within a few minutes would overwrite each other's article).
    stem = re.sub(r"\.(md|tex)$", "", name or f"reckoner-{f.record_id}") or "reckoner-article"
    if "/" in stem or "\\" in stem or stem.startswith("."):
        raise ArticleError(f"the file name {stem!r} must be a plain name, not a path")
    out_dir = Path(out_dir)
    from ..storage import atomic_write_text

    body, used, reason = article_body(f, fmt, lang, writer)

    if fmt == "md":
        path = out_dir / f"{stem}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, body)
        return ArticleResult(path, None, lang, used, reason)
    doc = latex_document(sanitize_latex(body), lang, f.title)
    folder = out_dir / stem
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.tex"
    atomic_write_text(path, doc)
    pdf = compile_latex(path, lang) if compile else None
    return ArticleResult(path, pdf, lang, used, reason)


#: What ``compile_latex`` runs in the article's folder (then the ``.tex`` file's name).
LATEXMK_COMMAND = ("latexmk", "-norc", "-xelatex", "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error")

#: Environment set for the TeX run: kpathsea's paranoid file access (no absolute paths, no
#: '..', no dot files, for reading and for writing) and no shell escape.
TEX_ENVIRONMENT = {"openin_any": "p", "openout_any": "p", "shell_escape": "f"}


def compile_latex(path: Path, language: str = "en", timeout: float = 600) -> Path:
    """Build the PDF of the ``.tex`` file ``path`` in its folder with ``latexmk -xelatex`` and
    return it. Defence in depth behind :func:`sanitize_latex`: shell escape is off
    (``-no-shell-escape``, ``shell_escape=f``), TeX may read and write only relative names
    without ``..`` or a leading dot (``openin_any=p``, ``openout_any=p``; ``TEXMFOUTPUT``,
    which would widen that, is removed), and no latexmk rc file is read (``-norc``: a
    ``latexmkrc`` in the folder would be Perl code). Raises :class:`ArticleError`: a missing
    ``latexmk``/``xelatex`` (or ``ctexart`` for a Chinese article), or a failed run (the
    source is kept)."""
    path = Path(path)
    folder = path.parent
    missing = [tool for tool in ("latexmk", "xelatex") if shutil.which(tool) is None]
    if not missing and language == "zh-CN" and shutil.which("kpsewhich"):
        found = subprocess.run(["kpsewhich", "ctexart.cls"], capture_output=True, text=True, check=False).stdout.strip()
        if not found:
            raise ArticleError("--compile of a Chinese article needs the ctex LaTeX package (Debian: apt-get "
                               f"install texlive-lang-chinese); the LaTeX source was written to {path}")
    if missing:
        raise ArticleError(f"--compile needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
                           f"not installed (Debian: apt-get install latexmk texlive-xetex); the LaTeX source "
                           f"was written to {path}")
    env = {k: v for k, v in os.environ.items() if k != "TEXMFOUTPUT"}
    env.update(TEX_ENVIRONMENT)
    run = subprocess.run([*LATEXMK_COMMAND, path.name], cwd=folder, env=env, capture_output=True, text=True,
                         timeout=timeout, check=False)
    pdf = path.with_suffix(".pdf")
    if run.returncode != 0 or not pdf.exists():
        tail = "\n".join((run.stdout or "").splitlines()[-8:])
        raise ArticleError(f"latexmk failed (exit {run.returncode}); the LaTeX source is kept at {path}\n{tail}")
    return pdf
