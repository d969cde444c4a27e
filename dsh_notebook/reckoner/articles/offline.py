"""Article writers: one interface, and the offline writer (spec: reckoner.md section 3
"Articles"; upstream-facts.md 3.12).

* Every writer has one method, ``write_body(facts, fmt, language)``, returning a Markdown article
  or a LaTeX body (:class:`ArticleWriter`).
* :class:`OfflineWriter` renders the Jinja2 templates beside it (``templates/``):
  deterministic, no model, the sections upstream asks a model for (question, approach,
  calculations, conclusion); hidden notes are never printed, a refused call is stated in the
  conclusion. Its body is trusted.
* :class:`ModelWriter` is the seam for a model writer (built in :mod:`dsh_notebook.llm.writer`,
  with its prompt in :mod:`dsh_notebook.llm.article_prompt`); nothing it returns is trusted
  (:func:`dsh_notebook.reckoner.articles.check.article_body`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from ...formats import latex_text, markdown_text
from .. import display
from .. import grammar as G
from .facts import AUTHOR, ArticleFacts, Lookup, Message, Refusal, Step, shown_value


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
        self._md.filters["md"] = markdown_text
        self._tex = jinja2.Environment(
            loader=jinja2.FileSystemLoader(folder), autoescape=False, keep_trailing_newline=True,
            block_start_string="((*", block_end_string="*))", variable_start_string="(((",
            variable_end_string=")))", comment_start_string="((#", comment_end_string="#))",
        )
        self._tex.filters["tex"] = latex_text

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
            text, latex = shown_value(c.value, c.unit)
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
            formula = r"\text{" + latex_text(s.formula) + "}"
        rtext, rlatex = shown_value(s.result, s.unit)
        name = display.name_latex(s.target or "x")
        subs = [(n, shown_value(v, s.var_units.get(n))) for n, v in s.vars.items()]
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


class ModelWriter(ArticleWriter, Protocol):
    """The seam for a model-backed writer (:class:`dsh_notebook.llm.writer.ModelArticleWriter`):
    ``write_body(facts, fmt, language)`` returns the body or raises. Nothing it returns is
    trusted: :func:`~.check.article_body` uses it only when :func:`~.check.check_article` finds no
    problem."""
