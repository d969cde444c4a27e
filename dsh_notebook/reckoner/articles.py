"""Articles: a closed record written up as a stand-alone technical note (spec: reckoner.md
section 3; upstream-facts.md 3.12).

* ``facts`` extracts what a writer may use from a closed record: title, conditions (accepted
  ``set`` rows, a delete removing the name), visible and hidden messages and steps
  interleaved by ``seq``, the closing text. Refused rows and ``get`` rows are skipped.
* Numbers are cut as upstream does before a writer sees them: four decimals, or four
  decimals of a mantissa below 1e-3 or from 1e6 (``cut``). Hidden notes are never printed.
* Writers share one interface (:class:`ArticleWriter`): the offline :class:`OfflineWriter`
  renders Jinja2 templates, deterministically; a model writer (the LLM issue) receives
  :func:`writer_prompt` and must pass :func:`check_numbers` and :func:`sanitize_latex`.
* LaTeX bodies pass the sanitizer, then go into the shell (``ctexart`` for Chinese,
  ``article`` otherwise; siunitx). PDF: ``latexmk -xelatex`` when both are installed.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from . import display
from . import grammar as G
from .records import Record, read_record
from .values import parse_tagged

FIXED_TITLE = "DeepSeek Harness Reckoner Solution"
AUTHOR = "DeepSeek Harness Reckoner"
FORMATS = ("md", "latex")
LANGUAGES = ("auto", "zh-CN", "en")


class ArticleError(ValueError):
    """An article cannot be written: the record is open, the body is unsafe, a tool is missing."""


# ------------------------------------------------------------------------- facts


@dataclass
class Condition:
    name: str
    value: dict  # stored form


@dataclass
class Message:
    seq: int
    text: str
    hide: bool


@dataclass
class Step:
    seq: int
    formula: str
    target: str
    vars: dict
    result: dict


@dataclass
class ArticleFacts:
    record_id: str
    title: str
    conditions: list[Condition] = field(default_factory=list)
    items: list = field(default_factory=list)  # Message | Step, by seq
    closing: str | None = None

    @property
    def prose(self) -> str:
        return " ".join([self.title, self.closing or ""] + [m.text for m in self.items if isinstance(m, Message)])


def facts(record: Record | str | Path) -> ArticleFacts:
    """The facts a writer may use. Raises :class:`ArticleError` for an open record."""
    rec = record if isinstance(record, Record) else read_record(record)
    if not rec.closed:
        raise ArticleError(f"record {rec.id} is still open; only closed records can be written up")
    conditions: dict[str, dict] = {}
    items: list = []
    for row in rec.rows:
        if not row.get("ok"):
            continue
        c = row.get("content") or {}
        tool = row.get("tool")
        if tool == "set":
            if c.get("value") is None:
                conditions.pop(c.get("name"), None)
            else:
                conditions[c.get("name")] = c.get("value")
        elif tool == "record_message":
            items.append(Message(row.get("seq"), c.get("text", ""), bool(c.get("hide"))))
        elif tool == "eval" and c.get("formula"):
            items.append(Step(row.get("seq"), c["formula"], c.get("target"), c.get("vars") or {}, c.get("result")))
    return ArticleFacts(rec.id, rec.title, [Condition(n, v) for n, v in conditions.items()], items, rec.closing_text)


def cut(x):
    """Upstream's number cut (prompt only; the record keeps full precision)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return x
    if x != 0 and (abs(x) >= 1e6 or abs(x) < 1e-3):
        return float(f"{x:.4e}")
    return round(float(x), 4) + 0.0


def cut_value(obj):
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
    import json

    lines = [f.title]
    for c in f.conditions:
        lines.append(f"a condition recorded under the name {c.name}: {json.dumps(cut_value(c.value))}")
    for item in f.items:
        if isinstance(item, Message):
            if item.hide:
                lines.append(f"the author's note at step {item.seq} (guidance: never copy, quote, or let it change "
                             f"a recorded number): {item.text}")
            else:
                lines.append(f"the record's own explanation: {item.text}")
        else:
            subs = ", ".join(f"{n} = {json.dumps(cut_value(v))}" for n, v in item.vars.items())
            lines += [f"Step {item.seq}: {item.formula}", f"substituting: {subs}",
                      f"result: {json.dumps(cut_value(item.result))}"]
    if f.closing:
        lines.append(f.closing)
    lines.append("Values are a number and a 7-integer dim [m,kg,s,A,K,mol,cd]; write them in the unit the question "
                 "used. Numbers are already cut to at most four decimals.")
    lang = resolve_language(f, language)
    if language != "auto":
        lines.append(f"Write the ENTIRE article in {'Chinese' if lang == 'zh-CN' else 'English'}.")
    lines.append(f"Format: {'Markdown' if fmt == 'md' else 'a LaTeX body'}.")
    return "\n".join(lines)


# ------------------------------------------------------------------------- numbers


_SUP = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _num(x) -> str:
    x = cut(x)
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    s = repr(x)
    if "e" in s:
        m, e = s.split("e")
        return f"{m}×10{str(int(e)).translate(_SUP)}"
    return s


def _num_tex(x) -> str:
    x = cut(x)
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def _value(stored: dict):
    """A stored value as (plain text, LaTeX) with its SI unit, numbers cut."""
    try:
        v = parse_tagged(cut_value(stored))
    except Exception:  # a malformed row: show it raw rather than fail the article
        return str(stored), r"\text{" + tex_escape(str(stored)) + "}"
    if v.sig.kind == "object":
        parts = [(n, _value(stored["object"][n])) for n, _ in v.sig.fields]
        return ("{" + ", ".join(f"{n}: {t}" for n, (t, _) in parts) + "}",
                r"\{" + ", ".join(rf"\mathrm{{{n}}}: {tx}" for n, (_, tx) in parts) + r"\}")
    unit = display.si_text(v.sig.dim)
    lunit = display.si_latex(v.sig.dim)
    if v.sig.kind == "array":
        text = display._arr_items(v.mag, lambda x, d: _num(x), 0)
        latex = display._arr_latex(v.mag, 12)  # already cut: print it as it is, never round twice
    elif isinstance(v.mag, complex):
        text = f"{_num(v.mag.real)}{'-' if v.mag.imag < 0 else '+'}{_num(abs(v.mag.imag))}j"
        latex = rf"({_num_tex(v.mag.real)} {'-' if v.mag.imag < 0 else '+'} {_num_tex(abs(v.mag.imag))}\,j)"
    else:
        text = _num(v.mag)
        latex = display.num_latex(cut(v.mag), 12)
    return (f"{text} {unit}".strip(), f"{latex}\\,{lunit}" if lunit else latex)


# ------------------------------------------------------------------------- writers


class ArticleWriter(Protocol):
    """One interface, two writers: returns the article body (Markdown, or a LaTeX body
    without preamble) for ``fmt`` in ``language`` (``zh-CN`` or ``en``)."""

    name: str

    def write_body(self, f: ArticleFacts, fmt: str, language: str) -> str: ...


_WORDS = {
    "en": {
        "question": "Question", "approach": "Approach", "calculations": "Calculations", "conclusion": "Conclusion",
        "given": "Given:",
        "approach_text": lambda n: ("The result follows from one calculation, written out below with its values:"
                                     if n == 1 else f"The result follows from {n} calculations, each written out "
                                     "below with its values:") if n else "No calculation was needed.",
        "sep": ", ", "end": ".",
        "with": "With", "gives": "this gives", "result": "The calculation gives",
    },
    "zh-CN": {
        "question": "问题", "approach": "思路", "calculations": "计算", "conclusion": "结论", "given": "已知：",
        "approach_text": lambda n: f"结果由以下 {n} 步计算得出，每一步都列出代入的数值：" if n else "无需计算。",
        "with": "代入", "gives": "得", "result": "计算得", "sep": "，", "end": "。",
    },
}


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
        words = _WORDS[language]
        steps, body = [], []
        seen_step = False
        intro = []
        for item in f.items:
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
            text, latex = _value(c.value)
            conditions.append({"text": f"{c.name} = {text}", "tex": rf"${display.name_latex(c.name)} = {latex}$"})
        if f.closing:
            conclusion = f.closing
        elif steps:
            conclusion = f"{words['result']} {steps[-1]['summary']}{words['end']}"
        else:
            conclusion = f.title
        ctx = {"fixed_title": FIXED_TITLE, "author": AUTHOR, "t": words, "title": f.title, "intro": intro,
               "conditions": conditions, "steps": steps, "body": body, "conclusion": conclusion}
        template = self._md.get_template("article.md.j2") if fmt == "md" else self._tex.get_template("article.tex.j2")
        return template.render(**ctx)

    def _step(self, s: Step, words: dict) -> dict:
        try:
            tree = G.parse(s.formula).tree
            formula = display.formula_latex(tree)
        except Exception:
            formula = r"\text{" + tex_escape(s.formula) + "}"
        rtext, rlatex = _value(s.result)
        name = display.name_latex(s.target or "x")
        subs = [(n, _value(v)) for n, v in s.vars.items()]
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
    import html

    s = html.escape(s, quote=False)
    for ch in "\\`*_[]#|$":
        s = s.replace(ch, "\\" + ch)
    return s


def tex_escape(s: str) -> str:
    out = []
    for ch in s:
        out.append({"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
                    "_": r"\_", "%": r"\%", "^": r"\^{}", "~": r"\~{}"}.get(ch, ch))
    return "".join(out)


FORBIDDEN = ("documentclass", "usepackage", "RequirePackage", "input", "include", "includeonly", "write",
             "immediate", "catcode", "special", "makeatletter", "makeatother", "newcommand", "renewcommand",
             "newenvironment", "renewenvironment", "let", "edef", "gdef", "global", "csname", "endcsname", "def")


def sanitize_latex(body: str) -> str:
    """Upstream's LaTeX body checks: refuse preamble and definition commands and a document
    environment, escape bare ``%``, require balanced braces and an even number of ``$``.
    Returns the body with ``%`` escaped; raises :class:`ArticleError` naming the problem."""
    if not body or not body.strip():
        raise ArticleError("the LaTeX body is empty")
    for cmd in FORBIDDEN:
        m = re.search(rf"\\{cmd}(?![A-Za-z])", body)
        if m:
            raise ArticleError(f"the LaTeX body uses \\{cmd}, which an article body may not contain")
    if re.search(r"\\(begin|end)\s*\{document\}", body):
        raise ArticleError("the LaTeX body contains a document environment; give the body only")
    body = re.sub(r"(?<!\\)%", r"\\%", body)
    bare = re.sub(r"\\.", "", body)
    if bare.count("{") != bare.count("}"):
        raise ArticleError(f"the LaTeX body has {bare.count('{')} '{{' but {bare.count('}')} '}}'")
    if bare.count("$") % 2:
        raise ArticleError("the LaTeX body has an odd number of '$' (an unclosed inline formula)")
    return body


def latex_document(body: str, language: str) -> str:
    """The shell around a sanitized body: ``ctexart`` for Chinese, ``article`` otherwise."""
    if language == "zh-CN":
        head = [r"\documentclass{ctexart}", r"\usepackage{amsmath}", r"\usepackage{siunitx}",
                r"\usepackage{unicode-math}"]
    else:
        head = [r"\documentclass{article}", r"\usepackage{fontspec}", r"\usepackage{amsmath}",
                r"\usepackage{siunitx}", r"\usepackage{unicode-math}"]
    return "\n".join(["% !TeX program = xelatex", *head, rf"\title{{{FIXED_TITLE}}}", rf"\author{{{AUTHOR}}}",
                      r"\date{}", r"\begin{document}", r"\maketitle", "", body.rstrip(), "", r"\end{document}", ""])


def result_numbers(f: ArticleFacts) -> list[str]:
    """Every step result's numbers after the cut, as the offline writer prints them (for
    checking a written article contains them)."""
    out = []
    for item in f.items:
        if isinstance(item, Step):
            def walk(v):
                if isinstance(v, dict):
                    for k, x in v.items():
                        if k != "dim":
                            walk(x)
                elif isinstance(v, list):
                    for x in v:
                        walk(x)
                elif isinstance(v, (int, float)) and not isinstance(v, bool):
                    out.append(_num(v))
            walk(item.result)
    return out


# ------------------------------------------------------------------------- files


@dataclass
class ArticleResult:
    path: Path  # the .md or .tex written
    pdf: Path | None = None
    language: str = "en"
    writer: str = "offline"


def write_article(record: Record | str | Path, out_dir, fmt: str = "md", language: str = "auto",
                  compile: bool = False, name: str | None = None, writer: ArticleWriter | None = None) -> ArticleResult:
    """Write a closed record's article into ``out_dir``: Markdown flat as ``<name>.md``;
    LaTeX in ``<name>/<name>.tex`` (the folder also receives the PDF when ``compile``).

    Raises :class:`ArticleError` (open record, bad format or language, unsafe LaTeX, a
    missing ``latexmk``/``xelatex`` for ``compile``: the ``.tex`` is written first)."""
    if fmt not in FORMATS:
        raise ArticleError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    if compile and fmt != "latex":
        raise ArticleError("only LaTeX articles are compiled (use --format latex)")
    f = facts(record)
    lang = resolve_language(f, language)
    writer = writer or OfflineWriter()
    body = writer.write_body(f, fmt, lang)
    if name is not None and not name.strip():
        raise ArticleError("the file name is empty; give a name or leave --name out")
    # The whole id (upstream takes its first 8 characters, but ids are millisecond clocks,
    # so records made within a few minutes would overwrite each other's article).
    stem = re.sub(r"\.(md|tex)$", "", name or f"reckoner-{f.record_id}") or "reckoner-article"
    if "/" in stem or "\\" in stem or stem.startswith("."):
        raise ArticleError(f"the file name {stem!r} must be a plain name, not a path")
    out_dir = Path(out_dir)
    from ..storage import atomic_write_text

    if fmt == "md":
        path = out_dir / f"{stem}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, body)
        return ArticleResult(path, None, lang, writer.name)
    doc = latex_document(sanitize_latex(body), lang)
    folder = out_dir / stem
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.tex"
    atomic_write_text(path, doc)
    pdf = None
    if compile:
        missing = [tool for tool in ("latexmk", "xelatex") if shutil.which(tool) is None]
        if not missing and lang == "zh-CN" and shutil.which("kpsewhich"):
            found = subprocess.run(["kpsewhich", "ctexart.cls"], capture_output=True, text=True).stdout.strip()
            if not found:
                raise ArticleError("--compile of a Chinese article needs the ctex LaTeX package (Debian: apt-get "
                                   f"install texlive-lang-chinese); the LaTeX source was written to {path}")
        if missing:
            raise ArticleError(f"--compile needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
                               f"not installed (Debian: apt-get install latexmk texlive-xetex); the LaTeX source "
                               f"was written to {path}")
        run = subprocess.run(["latexmk", "-xelatex", "-interaction=nonstopmode", "-halt-on-error", path.name],
                             cwd=folder, capture_output=True, text=True, timeout=600)
        pdf = folder / f"{stem}.pdf"
        if run.returncode != 0 or not pdf.exists():
            tail = "\n".join((run.stdout or "").splitlines()[-8:])
            raise ArticleError(f"latexmk failed (exit {run.returncode}); the LaTeX source is kept at {path}\n{tail}")
    return ArticleResult(path, pdf, lang, writer.name)
