"""``%ledger``: the magic's parts (spec: research.md "The explorer", "Running the roles"):
option parsing, ``%ledger ask``'s progress bars and its run. What ``%ledger``, the command line,
the explorer and the server share about a notebook's ledgers (resolving, folding, summaries,
the person's decision, export, the graph) is :mod:`dsh_notebook.artifact.ledgers`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..artifact.ledger_args import check_magic_options, magic_parser
from ..artifact.ledgers import (
    MIME_LEDGER,
    md_cell,
    read_state,
    show_bundle,
    sidecar_of,
    summary_text,
)
from ..artifact.paths import NAME, NAME_RULE
from ..errors import NotebookError
from ..inert import markdown_html
from . import args

if TYPE_CHECKING:
    from ..research_pipeline.router import Router

USAGE = ('%ledger show|explore|verify|export [--name NAME] [--format md|bibtex]\n'
         '%ledger ask "question" [--name NAME]')


class LedgerUsageError(NotebookError, ValueError):
    """A malformed ``%ledger`` line; nothing was read or written."""

    code = "LEDGER_USAGE"


def parse(line: str) -> argparse.Namespace:
    """``show|explore|verify|export [--name NAME] [--format md|bibtex]`` or ``ask "question" [--name NAME]``,
    parsed by the table the command line shares (:mod:`dsh_notebook.artifact.ledger_args`). Raises
    :class:`LedgerUsageError` naming the problem."""
    # parse_args, as the command line does: an unknown word is argparse's "unrecognized arguments"
    a = magic_parser(args.parser_class(LedgerUsageError)).parse_args(args.split(line, LedgerUsageError))
    wrong = check_magic_options(a)
    if wrong:
        raise LedgerUsageError(wrong)
    if a.action == "ask" and not (a.question or "").strip():
        raise LedgerUsageError('ask needs the question in quotes: %ledger ask "question"')
    if a.action != "ask" and a.question is not None:
        raise LedgerUsageError(f"unexpected argument {a.question!r}")
    if not NAME.fullmatch(a.name):
        shown = a.name if len(a.name) <= 60 else a.name[:60] + "…"
        raise LedgerUsageError(f"--name {shown!r} is not a ledger name ({NAME_RULE})")
    return a


# ----------------------------------------------------------------------------- ask


class AskProgress:
    """``progress(stage, done, total)`` for :func:`dsh_notebook.research_pipeline.pipeline.ask`: one bar per
    stage, an ipywidgets ``IntProgress`` with a label. Always this bar, whatever else is installed
    (tqdm's notebook bar was used when present: a notebook's saved output then depended on it)."""

    LABELS: ClassVar[dict[str, str]] = {"question": "question posed", "scout": "scout: proposing sources",
              "bibliographic": "bibliographic verification", "fulltext": "linking full text",
              "extract": "extracting claims", "verify_claims": "verifying claims",
              "decision": "lead: proposing a decision", "audit": "citation audit",
              "approval": "requesting approval"}

    def __init__(self, display: Callable[..., object] | None = None) -> None:
        if display is None:
            from IPython.display import display as shown

            display = shown
        self._display: Callable[..., object] = display
        self.bars: dict[str, Any] = {}  # stage -> its (IntProgress, Label) pair

    def __call__(self, stage: str, done: int, total: int) -> None:
        label = self.LABELS.get(stage, stage)
        bar = self.bars.get(stage)
        import ipywidgets as W

        if bar is None:
            bar = self.bars[stage] = (W.IntProgress(min=0, max=max(total, 1), value=0), W.Label(value=label))
            self._display(W.HBox([bar[1], bar[0]]))
        prog, lab = bar
        prog.max = max(total, 1)
        prog.value = min(done if total else 1, prog.max)
        lab.value = f"{label} ({done}/{total})"
        if done >= total:
            prog.bar_style = "success"


class AskRefused(NotebookError, ValueError):
    """``%ledger ask`` cannot start (a question over the length cap, no usable model credentials);
    nothing was written, not even a new ledger file."""

    code = "ASK_REFUSED"


def run_ask(path: Path, question: str, *, client_factory: Callable[[dict[str, Any]], Any] | None = None,
            progress: Callable[[str, int, int], None] | None = None, router: Router | None = None) -> dict[str, Any]:
    """Open (or create) the ledger at *path* and run the ``ask`` pipeline on *question*. Raises
    :class:`AskRefused` before anything is created when the question or the model access is not
    usable (``pipeline.check_question``, ``pipeline.preflight``)."""
    from ..research import Ledger
    from ..research_pipeline.pipeline import ask, check_question, preflight
    from ..research_pipeline.router import Router

    router = router or Router()
    why = check_question(question)
    if why:
        raise AskRefused(why)
    why = preflight(client_factory, router)
    if why:
        raise AskRefused(f"no model can be asked, so nothing was recorded: {why}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return ask(Ledger(path), question, client_factory=client_factory, sidecar=sidecar_of(path),
               progress=progress, router=router)


def ask_bundle(path: Path, result: dict) -> tuple[dict, dict]:
    """The ledger summary (as ``%ledger show``) followed by the pipeline's closing line."""
    state, _events = read_state(path)
    data, meta = show_bundle(path, state)
    line = result["message"]
    if result["status"] == "awaiting_person":
        line = (f"Decision {result['decision_id']} awaits the person: use %ledger explore to decide "
                "(approve, reject or ask for a revision).")
    md, _plain = summary_text(data[MIME_LEDGER])
    data = {**data, "text/html": markdown_html(md + f"\n\n**{md_cell(line)}**"),
            "text/plain": data["text/plain"] + f"\n\n{line}"}
    data[MIME_LEDGER] = {**data[MIME_LEDGER], "ask": {k: result.get(k) for k in (
        "question_id", "decision_id", "status", "message", "stages")}}
    meta["dsh"]["ask"] = {"question_id": result.get("question_id"), "status": result.get("status")}
    return data, meta
