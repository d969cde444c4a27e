"""One way to parse the magics' arguments (issue 22, item 2; spec: reckoner.md section 2, llm.md
"``%%chat``", academic.md "State and surface", reviewer.md "Surface", research.md "The explorer").

Design:

- Every magic's line is read by an :mod:`argparse` parser built by :func:`parser`, the way
  ``%ledger``'s is built from :mod:`dsh_notebook.artifact.ledger_args`: no help option, no
  abbreviated options, and an error raises the magic's own usage error (never ``SystemExit``,
  which would stop the kernel); nothing is read or written before the line parses.
- argparse (rather than IPython's ``magic_arguments`` decorators) because the line magics have
  subcommands (``%reckon list|show|recover|units|article``), which argparse's sub-parsers model and
  the decorators do not, and because ``%ledger``'s parser is shared with the command line.
- :func:`split` turns a line into words as a shell would (quotes group words); a line it cannot
  read (an unclosed quote) is the same usage error.
- Parsers are small and built when a magic runs, so ``%load_ext`` imports nothing more.
"""

from __future__ import annotations

import argparse
import re
import shlex
from typing import Any, NoReturn

__all__ = ["MagicParser", "Once", "parser", "parser_class", "split", "subcommands"]

_NEEDS_VALUE = re.compile(r"argument (\S+?)(?:/\S+)?: expected one argument")


class MagicParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` for a magic: no help option, no abbreviated options
    (``--cont`` is not ``--continue``), and an error raises :attr:`usage_error` naming the problem
    (``--session needs a value``, ``argument --focus: invalid choice: 'x' (choose from ...)``)."""

    usage_error: type[Exception] = ValueError

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("add_help", False)
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        m = _NEEDS_VALUE.fullmatch(message)
        raise self.usage_error(f"{m.group(1)} needs a value" if m else message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise self.usage_error(message or f"argument parsing stopped (status {status})")

    def parse_line(self, words: list[str], unexpected: str = "unexpected {word!r}") -> argparse.Namespace:
        """*words* parsed; a word no argument takes raises :attr:`usage_error`: ``unknown option
        '--x'; the options are ...`` for an option, else *unexpected* formatted with ``word``."""
        opts, extra = self.parse_known_args(words)
        for word in extra:
            if word.startswith("-") and len(word) > 1:
                flags = self._flags(opts)
                known = f"the options are {', '.join(flags)}" if flags else "it takes no options"
                raise self.usage_error(f"unknown option {word.split('=')[0]!r}; {known}")
            raise self.usage_error(unexpected.format(word=word))
        return opts


    def _flags(self, opts: argparse.Namespace) -> list[str]:
        """The options of what was parsed: the chosen sub-command's when there is one."""
        parser: argparse.ArgumentParser = self
        for action in self._actions:
            choices = action.choices
            if isinstance(choices, dict) and getattr(opts, action.dest, None) in choices:
                parser = choices[getattr(opts, action.dest)]
        return [f for a in parser._actions for f in a.option_strings]


class Once(argparse.Action):
    """An option that may be given once: a second ``--session`` raises ``--session is given twice``."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if getattr(namespace, f"_seen_{self.dest}", False):
            parser.error(f"{option_string} is given twice")
        setattr(namespace, f"_seen_{self.dest}", True)
        setattr(namespace, self.dest, values)


def parser_class(usage_error: type[Exception]) -> type[MagicParser]:
    """The :class:`MagicParser` class raising *usage_error* (for builders that take a class, as
    :func:`dsh_notebook.artifact.ledger_args.magic_parser` does)."""
    return type(f"{usage_error.__name__}Parser", (MagicParser,), {"usage_error": usage_error})


def parser(prog: str, usage_error: type[Exception]) -> MagicParser:
    """A :class:`MagicParser` named *prog* (``"%review"``) raising *usage_error*."""
    return parser_class(usage_error)(prog=prog)


def subcommands(p: MagicParser, dest: str) -> Any:
    """``p.add_subparsers`` under *dest*, each sub-command a parser of *p*'s class (so it raises the
    same error and has no help option); required, so a missing one is an error naming the choices."""
    return p.add_subparsers(dest=dest, parser_class=type(p), required=True)


def split(line: str, usage_error: type[Exception]) -> list[str]:
    """*line* as words, quotes grouping them (:func:`shlex.split`); an unclosed quote raises
    *usage_error* ``cannot read the options (No closing quotation)``."""
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise usage_error(f"cannot read the options ({exc})") from None
