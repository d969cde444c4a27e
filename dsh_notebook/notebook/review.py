"""``%review``: the reviewer from a notebook (spec: reviewer.md "Surface", "Runs and states").

``%review --target this`` reviews this notebook's chat (its ``main`` session, else the
newest logged one); ``--target session PATH`` another notebook's session log (or a
notebook, meaning its newest session); ``--target codex|dsh|claude|chat PATH`` an outside
log. ``--focus me|dialogue|ai`` chooses the angle (and reviews again), ``--pause``,
``--resume``, ``--stop``, ``--history``, ``--ask "question" [--review N]``; ``%review``
alone shows the state and the latest review.

The kernel has one :class:`~dsh_notebook.reviewer.runner.Reviewer` (:func:`dsh_notebook.kernel.kernel_reviewer`),
shared by the magic, ``%%chat`` (which tells it when a turn ends) and the reviewer panel; it
restores the last target, focus and pause when created, without starting a review.
Outputs carry ``application/vnd.dsh.review+json`` with ``text/markdown`` and ``text/plain``
fallbacks; ids and times only in ``metadata.dsh``.
"""

from __future__ import annotations

import argparse
import html
import re
from pathlib import Path
from typing import Any

from ..inert import markdown_html
from ..reviewer.review import FOCUSES, ask, target_id
from ..reviewer.runner import Reviewer
from ..reviewer.targets import ReviewUsageError, relative_target
from . import args
from .args import MagicParser

MIME_REVIEW = "application/vnd.dsh.review+json"

USAGE = """%review [--target this | --target session PATH | --target codex|dsh|claude|chat PATH]
        [--focus me|dialogue|ai] [--pause | --resume | --stop | --history] [--ask "QUESTION" [--review N]] [--wait]"""


def _parser() -> MagicParser:
    p = args.parser("%review", ReviewUsageError)
    p.add_argument("--target", nargs="+")
    p.add_argument("--focus", choices=FOCUSES)
    g = p.add_mutually_exclusive_group()
    for flag in ("--pause", "--resume", "--stop", "--history"):
        g.add_argument(flag, action="store_true")
    p.add_argument("--ask")
    p.add_argument("--review")
    p.add_argument("--wait", action="store_true", help="wait for the review and show it (used by scripts)")
    return p


def parse(line: str) -> argparse.Namespace:
    """The ``%review`` line (:data:`USAGE`) with the magics' one parser (:mod:`.args`); raises
    :class:`~dsh_notebook.reviewer.targets.ReviewUsageError` naming the problem."""
    return _parser().parse_line(args.split(line, ReviewUsageError))


def _md(text: object) -> str:
    """Model-written text for Markdown: no raw HTML, no heading/list/quote syntax at a line
    start (the text stays readable, never executable markup)."""
    s = html.escape(str(text if text is not None else ""), quote=False)
    return "\n".join(re.sub(r"^(\s*)([#>*+\-=`|]|\d+[.)])", r"\1\\\2", line) for line in s.split("\n"))


def review_bundle(review: dict | None, status: dict, hide_unverified: bool = False,
                  base: Path | None = None) -> tuple[dict, dict]:
    """``(data, metadata)`` for a review: Markdown and plain text with every insight, its
    evidence (unverified quotes marked), why, suggestion and check. ``hide_unverified``
    leaves out insights with a quote that was not found (the stored review keeps them); a
    target inside ``base`` (the notebook's folder) is named relative to it."""
    if review is None:
        state = status["state"]
        text = {"no-target": "No target chosen: %review --target this (or session/codex/dsh/claude/chat PATH).",
                "reviewing": "Reviewing…", "watching": "Watching; no completed review yet.",
                "paused": "Paused; no completed review yet."}.get(state, state)
        if status.get("error"):
            text += f" Last run: {status['error']}"
        return {"text/plain": text, "text/html": markdown_html(_md(text)),
                MIME_REVIEW: {"state": state, "review": None}}, {}
    md = [f"**{_md(review.get('verdict', 'unknown'))}** · {_md(review.get('headline', ''))}", "",
          _md(review.get("summary", ""))]
    plain = [f"[{review.get('verdict')}] {review.get('headline')}", review.get("summary", "")]
    if (review.get("coverage") or {}).get("omitted_utterances"):
        md.append(f"*{review['coverage']['note']}*")
        plain.append(review["coverage"]["note"])
    insights = review.get("insights") or []
    if hide_unverified:
        hidden = sum(1 for ins in insights if not ins.get("verified", True))
        insights = [ins for ins in insights if ins.get("verified", True)]
        if hidden:
            md.append(f"*({hidden} insight(s) with an unverified quote hidden)*")
            plain.append(f"({hidden} insight(s) with an unverified quote hidden)")
    for i, ins in enumerate(insights, 1):
        md += ["", f"### {i}. {_md(ins['title'])} ({_md(ins.get('confidence'))})"]
        plain += ["", f"{i}. {ins['title']} ({ins.get('confidence')})"]
        for e in ins["evidence"]:
            why = f" ({_md(e['why'])})" if e.get("why") else ""
            mark = "" if e.get("verified") else f" — *unverified: not found in the transcript*{why}"
            quote = _md(e["quote"]).replace("\n", "\n> ")  # every line of a quote stays in the quote
            md.append(f"> [{_md(e['marker'])}] {quote}{mark}")
            plain.append(f"   [{e['marker']}] \"{e['quote']}\"" + ("" if e.get("verified") else " (unverified)"))
        md += [f"- **Why:** {_md(ins['why'])}", f"- **Next:** {_md(ins['suggestion'])}",
               f"- **Check:** {_md(ins['check'])}"]
        plain += [f"   why: {ins['why']}", f"   next: {ins['suggestion']}", f"   check: {ins['check']}"]
    content = {k: review.get(k) for k in ("verdict", "headline", "summary", "insights", "focus", "status")}
    meta = {"dsh": {k: review.get(k) for k in ("id", "at", "target", "model", "prompt_version", "coverage",
                                              "generation")}}
    if isinstance(review.get("target"), dict):
        meta["dsh"]["reviews_file"] = f"reviews/{target_id(review['target'])}.jsonl"
        meta["dsh"]["target"] = relative_target(review["target"], base)  # no absolute path of this machine
    # model-written text, escaped by _md, then drawn inert (no live link or markup: dsh_notebook.inert)
    return {"text/plain": "\n".join(plain), "text/html": markdown_html("\n".join(md)), MIME_REVIEW: content}, meta


def history_text(rv: Reviewer) -> str:
    hist = rv.history()
    if hist is None:
        return "No target chosen."
    rows = []
    n = 0
    for e in hist.events():
        if e.get("type") == "review":
            r = e["review"]
            if r.get("status") == "done":
                n += 1
                rows.append(f"{n:>3}. {r.get('at', '')[:19]}  {r.get('focus'):<8} {r.get('verdict'):<10} "
                            f"{r.get('headline', '')}")
            else:
                rows.append(f"     {str(r.get('at', ''))[:19]}  {r.get('focus')!s:<8} ({r.get('status')}: "
                            f"{r.get('error') or r.get('superseded_status') or ''})")
        elif e.get("type") == "question":
            rows.append(f"       Q: {e.get('question')}  A: {(e.get('answer') or e.get('error') or '')[:120]}")
    return "\n".join(rows) if rows else "No reviews yet."


def ask_question(rv: Reviewer, question: str, which: str | int | None = None) -> dict[str, Any]:
    """The reviewer's answer to *question* about review *which* (default the latest): the stored
    question event. Raises :class:`ReviewUsageError` when no target is chosen."""
    hist = rv.history()
    if hist is None:
        raise ReviewUsageError("choose a target first")
    client = rv.client_factory() if rv.client_factory else None
    if client is None:
        from ..llm import ChatClient

        client = ChatClient()
    return ask(hist, question, client=client, which=which)
