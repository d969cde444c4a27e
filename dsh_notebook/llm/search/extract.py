"""The extraction step: the one tool-free model call that reads the material and writes the
answer sentence, and its prompt (spec: llm.md "Presets from the reckoner seed"; upstream-facts.md
3.13, written in our words).

* :data:`EXTRACT_SYSTEM` is the system message, versioned by :data:`PROMPT_VERSION` (recorded
  with every synthesis); :func:`extraction_messages` numbers the material items for it.
* :func:`fit_material` keeps the material within :data:`~.shapes.MATERIAL_MAX_CHARS`: later
  items' text is cut, items that no longer fit are left out (and so out of ``used``).
* :func:`parse_extraction` reads the reply (:class:`Extraction`); anything unreadable is
  ``None``, never an exception.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError, field_validator

from .safetext import cut_text, utf8_safe
from .shapes import MATERIAL_MAX_CHARS

#: The version of the extraction prompt, recorded with every synthesis.
PROMPT_VERSION = "search-extract/1"

#: The extraction step's system message (prompt version :data:`PROMPT_VERSION`).
EXTRACT_SYSTEM = """\
You read retrieved reference material and write the single factual answer a calculation \
assistant asked for. You have no tools and no other context.

Rules, most important first:
1. Answer from the numbered material only. Do not add anything you know yourself and do not \
guess: a number without a source in the material is worse than no answer.
2. If the material does not hold the answer, set "insufficient" to true and use "answer" to say, \
in one sentence, what is missing.
3. Copy each number together with its unit exactly as the material writes it. Do not convert \
units, round, or compute anything derived from it; the assistant does that with a checked \
calculator.
4. If the sources disagree, say so and give both values, naming each source by its site or \
title (never by its web address).
5. Write in the language of the question, at most 120 words, with no preamble and no heading.

Reply with exactly one JSON object and nothing around it:
{"answer": string, "used": number[], "insufficient": boolean}
"used" holds the 1-based numbers of the material items you relied on, and is empty when \
"insufficient" is true."""


class Extraction(BaseModel):
    """A readable extraction reply: ``answer`` (non-empty), ``used`` (1-based numbers as the
    extractor wrote them), ``insufficient``."""

    model_config = {"extra": "ignore"}

    answer: str
    used: list[Any] = []
    insufficient: bool = False

    @field_validator("answer")
    @classmethod
    def _non_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the answer is empty")
        return v.strip()


def _item_head(n: int, m: dict[str, Any]) -> list[str]:
    head = [f"[{n}] {m.get('title') or m['url']}", f"url: {m['url']}"]
    if m.get("publishedAt"):
        head.append(f"published: {m['publishedAt']}")
    return head


def extraction_messages(question: str, material: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The extraction request: :data:`EXTRACT_SYSTEM` and a user message ``Question: ...``,
    ``Material:``, then per item ``[n] title-or-url``, ``url: ...``, optional
    ``published: ...`` and its page text or snippet (see :func:`fit_material` for the cap)."""
    lines = [f"Question: {question}", "", "Material:"]
    for n, m in enumerate(material, 1):
        lines += _item_head(n, m)
        body = m.get("text") or m.get("snippet")
        if body:
            lines.append(body.strip())
        lines.append("")
    return [{"role": "system", "content": EXTRACT_SYSTEM}, {"role": "user", "content": "\n".join(lines).rstrip()}]


#: An item whose text would have fewer characters than this is left out instead of cut.
_MIN_ITEM_TEXT = 200


def fit_material(material: list[dict[str, Any]], limit: int = MATERIAL_MAX_CHARS) -> list[dict[str, Any]]:
    """The first items of ``material`` whose lines, as :func:`extraction_messages` writes
    them, take at most ``limit`` characters together: an item's page text (or snippet) is cut
    to what is left, and the items after the first one that no longer fits with at least
    200 characters of its text are left out (the first item is always kept)."""
    out: list[dict[str, Any]] = []
    left = limit
    for n, m in enumerate(material, 1):
        head = sum(len(line) + 1 for line in _item_head(n, m)) + 2  # + the blank line between items
        key = "text" if m.get("text") else "snippet" if m.get("snippet") else None
        body = m[key].strip() if key else ""
        room = left - head - 1
        if out and (room < min(len(body), _MIN_ITEM_TEXT) or room < 0):
            break
        if key and len(body) > max(room, 0):
            m = {**m, key: cut_text(body, max(room, _MIN_ITEM_TEXT))}
        out.append(m)
        left -= head + (len(m[key].strip()) + 1 if key else 0)
    return out


def parse_extraction(text: str, n_material: int) -> tuple[str, list[int], bool] | None:
    """``(answer, used, insufficient)`` from an extraction reply, or ``None`` when it is not
    readable (or not a text). The JSON object is taken from the first ``{`` to the last
    ``}``; ``used`` becomes 0-based, de-duplicated, in range (non-integers dropped), and
    empty when ``insufficient``; the answer is made safe for strict UTF-8 JSON."""
    if not isinstance(text, str):
        return None
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        reply = Extraction.model_validate(json.loads(text[start:end + 1]))
    except (json.JSONDecodeError, ValidationError, TypeError, ValueError, RecursionError):
        return None
    used: list[int] = []
    if not reply.insufficient:
        for u in reply.used:
            if isinstance(u, float) and u.is_integer():
                u = int(u)
            if isinstance(u, bool) or not isinstance(u, int) or not 1 <= u <= n_material or u - 1 in used:
                continue
            used.append(u - 1)
    return utf8_safe(reply.answer), used, reply.insufficient
