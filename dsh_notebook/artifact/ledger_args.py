"""The ledger commands' arguments, defined once for ``%ledger ACTION`` and ``dsh-notebook ledger
ACTION`` (issue 22, item 2; spec: research.md "The explorer").

Design:

- :data:`OPTIONS` holds each argument once (flags, default, choices, help); :data:`ACTIONS` names,
  per action, its help line and the arguments it takes. The command line builds one argparse
  sub-command per action (:func:`add_ledger_commands`, with the notebook as first positional); the
  magic builds one argparse parser over its actions (:func:`magic_parser`), since the kernel
  already knows the notebook, and :func:`check_magic_options` names an option given to an action
  that does not take it (``--format is for export``).
- ``decide`` is the command line's (a typed confirmation on the terminal); ``explore`` and ``ask``
  are the magic's (a widget, a pipeline with progress bars in the notebook).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, TypedDict

__all__ = ["ACTIONS", "CLI_ACTIONS", "MAGIC_ACTIONS", "OPTIONS", "add_ledger_commands", "check_magic_options",
           "magic_parser"]


class Option(TypedDict):
    """One argument: its flags (``("--name",)`` or a positional's name) and argparse keywords."""

    flags: tuple[str, ...]
    kwargs: dict[str, Any]


class Action(TypedDict):
    """One ledger action: its help line and the names of the :data:`OPTIONS` it takes."""

    help: str
    options: tuple[str, ...]


OPTIONS: dict[str, Option] = {
    "name": {"flags": ("--name",), "kwargs": {
        "default": "main", "help": "the ledger's name: <stem>.dsh/ledger/NAME.jsonl (default main)"}},
    "json": {"flags": ("--json",), "kwargs": {"action": "store_true", "help": "the result as JSON"}},
    "format": {"flags": ("--format",), "kwargs": {
        "choices": ("md", "bibtex"), "default": None, "help": "only one of the two (default: both)"}},
    "decision": {"flags": ("--decision",), "kwargs": {"required": True, "help": "the decision id"}},
    "verdict": {"flags": ("--verdict",), "kwargs": {
        "required": True, "choices": ("approved", "rejected", "needs_revision")}},
    "note": {"flags": ("--note",), "kwargs": {"default": "", "help": "a note recorded with the decision"}},
    "question": {"flags": ("question",), "kwargs": {"nargs": "?", "default": None,
                                                     "help": "the research question, in quotes"}},
}

ACTIONS: dict[str, Action] = {
    "show": {"help": "decisions with predicates and reasons, claims, sources, objections",
             "options": ("name", "json")},
    "explore": {"help": "the ledger explorer widget", "options": ("name",)},
    "verify": {"help": "check the hash chain and replay every event (exit 1 on a problem)",
               "options": ("name", "json")},
    "decide": {"help": "record the person's decision on a decision awaiting them, after a typed confirmation "
                       "(the decision id or yes; without a terminal, the first line of stdin)",
               "options": ("name", "decision", "verdict", "note")},
    "export": {"help": "write the Markdown evidence table and the BibTeX of verified sources under the "
                       "sidecar's exports/", "options": ("name", "format")},
    "ask": {"help": "the research pipeline from a question to a decision awaiting the person",
            "options": ("question", "name")},
}

#: The actions of ``dsh-notebook ledger`` defined here (``check-source`` is the command line's own).
CLI_ACTIONS = ("show", "verify", "decide", "export")
#: The actions of ``%ledger``; ``--json`` is the command line's only (a notebook shows the bundle).
MAGIC_ACTIONS = ("show", "explore", "verify", "export", "ask")
_MAGIC_ONLY_CLI = frozenset({"json"})


def _add(parser: argparse.ArgumentParser, key: str) -> None:
    opt = OPTIONS[key]
    parser.add_argument(*opt["flags"], **opt["kwargs"])


def add_ledger_commands(subparsers: Any, handlers: dict[str, Callable[..., int]],
                        notebook_help: str) -> None:
    """Add ``show|verify|decide|export NOTEBOOK [options]`` to the command line's ``ledger``
    sub-parsers; ``handlers`` maps each of :data:`CLI_ACTIONS` to its function (``set_defaults(func=...)``).
    Raises ``KeyError`` when a handler is missing."""
    for action in CLI_ACTIONS:
        x = subparsers.add_parser(action, help=ACTIONS[action]["help"])
        x.add_argument("notebook", help=notebook_help)
        for key in ACTIONS[action]["options"]:
            _add(x, key)
        x.set_defaults(func=handlers[action])


def magic_parser(parser_class: type[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """The ``%ledger`` parser: ``ACTION`` (one of :data:`MAGIC_ACTIONS`) and every option those
    actions take, from the same table as the command line. *parser_class* decides how an error is
    raised (the magic's never exits the kernel)."""
    p = parser_class(prog="%ledger", add_help=False)
    p.add_argument("action", choices=MAGIC_ACTIONS)
    seen: list[str] = []
    for action in MAGIC_ACTIONS:
        seen += [k for k in ACTIONS[action]["options"] if k not in seen and k not in _MAGIC_ONLY_CLI]
    for key in sorted(seen, key=lambda k: k != "question"):  # the positional first
        kwargs = {k: v for k, v in OPTIONS[key]["kwargs"].items() if k != "required"}
        p.add_argument(*OPTIONS[key]["flags"], **kwargs)
    return p


def check_magic_options(opts: argparse.Namespace) -> str | None:
    """The first option given to an action that does not take it, as an error
    (``'--format is for export'``); ``None`` when every option given belongs to the action."""
    for key, opt in OPTIONS.items():
        if key in _MAGIC_ONLY_CLI or not hasattr(opts, key) or key == "question":
            continue
        if getattr(opts, key) != opt["kwargs"].get("default") and key not in ACTIONS[opts.action]["options"]:
            takers = [a for a in MAGIC_ACTIONS if key in ACTIONS[a]["options"]]
            return f"{opt['flags'][0]} is for {' and '.join(takers)}"
    return None
