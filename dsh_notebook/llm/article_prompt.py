"""The model article writer's prompt: its rules, versioned, and the record's facts as the model
reads them (spec: upstream-facts.md 3.12, written in our words; reckoner.md section 3 "Articles").

* The system message is :func:`writer_system_prompt`: :data:`WRITER_RULES`, the format's rules
  (:data:`WRITER_RULES_MARKDOWN` or :data:`WRITER_RULES_LATEX`) and, for a chosen language,
  :data:`WRITER_LANGUAGE`. :data:`WRITER_PROMPT_VERSION` changes whenever any of this text does.
* The user message is :func:`writer_prompt`: the facts of
  :func:`dsh_notebook.reckoner.articles.facts` as plain text, numbers cut, each value with the
  unit the notebook shows it in, the author's notes marked as guidance, no record id.
* The prompt lives with the model client, not in the engine: the engine extracts the facts and
  checks what comes back (:mod:`dsh_notebook.reckoner.articles.check`), the model writer
  (:mod:`.writer`) sends this text.
"""

from __future__ import annotations

import json

from ..reckoner.articles import (
    AUTHOR,
    FORMATS,
    LANGUAGES,
    ArticleError,
    ArticleFacts,
    Lookup,
    Message,
    cut_value,
    resolve_language,
    shown_as,
)

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


def writer_prompt(f: ArticleFacts, fmt: str, language: str = "auto") -> str:
    """The plain-text facts a model writer receives (upstream's rendering, numbers cut,
    hidden notes marked as the author's guidance)."""
    lines = [f.title]
    for c in f.conditions:
        lines.append(f"a condition recorded under the name {c.name}: "
                     f"{json.dumps(cut_value(c.value), ensure_ascii=False)}{shown_as(c.value, c.unit)}")
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
                                                          f"{shown_as(v, item.var_units.get(n))}"
                                                          for n, v in item.vars.items()))
            lines.append(f"result: {json.dumps(cut_value(item.result), ensure_ascii=False)}"
                         f"{shown_as(item.result, item.unit)}")
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
