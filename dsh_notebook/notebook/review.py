"""``%review``: the reviewer from a notebook (spec: reviewer.md "Surface", "Runs and states").

``%review --target this`` reviews this notebook's chat (its ``main`` session, else the
newest logged one); ``--target session PATH`` another notebook's session log (or a
notebook, meaning its newest session); ``--target codex|dsh|claude|chat PATH`` an outside
log. ``--focus me|dialogue|ai`` chooses the angle (and reviews again), ``--pause``,
``--resume``, ``--stop``, ``--history``, ``--ask "question" [--review N]``; ``%review``
alone shows the state and the latest review.

The kernel has one :class:`~dsh_notebook.reviewer.runner.Reviewer` (:func:`kernel_reviewer`),
shared by the magic, ``%%chat`` (which tells it when a turn ends) and the reviewer panel; it
restores the last target, focus and pause when created, without starting a review.
Outputs carry ``application/vnd.dsh.review+json`` with ``text/markdown`` and ``text/plain``
fallbacks; ids and times only in ``metadata.dsh``.
"""

from __future__ import annotations

import argparse
import html
import re
import shlex
from pathlib import Path

from ..errors import NotebookError
from ..reviewer.review import FOCUSES, ask, target_id
from ..reviewer.runner import Reviewer

MIME_REVIEW = "application/vnd.dsh.review+json"

USAGE = """%review [--target this | --target session PATH | --target codex|dsh|claude|chat PATH]
        [--focus me|dialogue|ai] [--pause | --resume | --stop | --history] [--ask "QUESTION" [--review N]] [--wait]"""


class ReviewUsageError(NotebookError, ValueError):
    """A malformed ``%review`` line or target; nothing was changed."""

    code = "REVIEW_USAGE"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # never exit the kernel
        raise ReviewUsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog="%review", add_help=False)
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
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise ReviewUsageError(f"cannot read the options ({exc})") from None
    return _parser().parse_args(words)


def kernel_reviewer(shell) -> Reviewer:
    """The kernel's reviewer (created, and restored, on first use)."""
    rv = getattr(shell, "_dsh_reviewer", None)
    rm = shell.magics_manager.registry.get("ReckonMagics")
    if rm is not None:
        rm._refresh_location()
    sidecar = rm.location.sidecar if rm is not None else None
    if rv is not None and rv.sidecar != sidecar:  # the notebook was renamed or is now known
        rv.close()
        rv = None
    if rv is None:
        config, problems = reviewer_config()
        rv = Reviewer(sidecar, **config)
        rv.config_problems = problems
        rv.restore()
        shell._dsh_reviewer = rv
    return rv


def reviewer_config() -> tuple[dict, list[str]]:
    """The ``[reviewer]`` table of the settings (:class:`~dsh_notebook.settings.ReviewerSettings`)
    as Reviewer arguments, and its problems: a value out of range (or a settings file that
    cannot be read) falls back to the default, named in the returned problems."""
    from ..llm.errors import LLMError
    from ..settings import load_settings

    try:
        table = load_settings().reviewer
    except LLMError as exc:
        return {}, [f"settings.toml cannot be read ({exc.message}); reviewer defaults are used"]
    return ({"timeout": table.timeout, "poll": table.poll, "debounce": table.debounce, "max_chars": table.window_chars,
             "hide_unverified": table.hide_unverified}, list(table.problems))


def resolve_target(words: list[str], sidecar: Path | None) -> tuple[str, Path]:
    """``["this"]`` / ``["session", PATH]`` / ``[SOURCE, PATH]`` -> ``(source, path)``."""
    kind = words[0]
    if kind == "this":
        if len(words) != 1:
            raise ReviewUsageError("--target this takes no path")
        folder = (sidecar / "sessions") if sidecar else None
        logs = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if folder and folder.is_dir() else []
        if not logs:
            raise ReviewUsageError("this notebook has no chat yet: run a %%chat cell first")
        return "notebook", logs[-1]
    if len(words) != 2:
        raise ReviewUsageError(f"--target {kind} needs one PATH")
    path = Path(words[1]).expanduser()
    if kind in ("session", "notebook"):  # `notebook` as the command line names it
        if path.suffix == ".ipynb" or path.is_dir():
            folder = (path.with_name(path.stem + ".dsh") if path.suffix == ".ipynb" else path)
            folder = folder / "sessions" if (folder / "sessions").is_dir() else folder
            logs = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if folder.is_dir() else []
            if not logs:
                raise ReviewUsageError(f"no chat session logs in {folder}")
            return "notebook", logs[-1]
        return "notebook", path
    if kind not in ("codex", "dsh", "claude", "chat"):
        raise ReviewUsageError(f"unknown target {kind!r}; use this, session (or notebook), codex, dsh, claude or chat")
    return kind, path


def _md(text) -> str:
    """Model-written text for Markdown: no raw HTML, no heading/list/quote syntax at a line
    start (the text stays readable, never executable markup)."""
    s = html.escape(str(text if text is not None else ""), quote=False)
    return "\n".join(re.sub(r"^(\s*)([#>*+\-=`|]|\d+[.)])", r"\1\\\2", line) for line in s.split("\n"))


def _relative_target(target, base: Path | None):
    if not isinstance(target, dict) or base is None:
        return target
    try:
        return {**target, "path": str(Path(target["path"]).relative_to(base))}
    except (KeyError, ValueError, TypeError):
        return target


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
        return {"text/plain": text, "text/markdown": text, MIME_REVIEW: {"state": state, "review": None}}, {}
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
            mark = "" if e.get("verified") else " — *unverified: not found in the transcript*"
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
        meta["dsh"]["target"] = _relative_target(review["target"], base)  # no absolute path of this machine
    return {"text/plain": "\n".join(plain), "text/markdown": "\n".join(md), MIME_REVIEW: content}, meta


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


def ask_question(rv: Reviewer, question: str, which=None) -> dict:
    hist = rv.history()
    if hist is None:
        raise ReviewUsageError("choose a target first")
    client = rv.client_factory() if rv.client_factory else None
    if client is None:
        from ..llm import ChatClient

        client = ChatClient()
    return ask(hist, question, client=client, which=which)
