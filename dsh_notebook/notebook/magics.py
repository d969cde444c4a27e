"""IPython magics: ``%%reckon`` and ``%reckon list|show|recover`` (spec: reckoner.md section 2);
``%%chat`` and ``%chat list`` (spec: llm.md "``%%chat``"; the work is in :mod:`.chat`).

* ``%load_ext dsh_notebook`` finds the notebook (:func:`dsh_notebook.artifact.paths.locate`); the
  kernel's reckoner session, an :class:`~dsh_notebook.reckoner.Engine` on the sidecar folder, is
  opened by the first magic that needs it, or at once when a crashed kernel left a record open
  (``open-record.jsonl``), which the engine then sets aside.
* A refused line stops the cell: the output shows it in red and the cell raises
  :class:`ReckonRefused`, rendered without a Python traceback, so "run all" stops there.
* After every cell ``_reckon`` (or ``--export NAME``) maps slot names to pint Quantities.
* A fast load (issue 22): ``%load_ext`` imports IPython and this module only, and registers the
  magics; the engine (pint, lark, numpy), the model client (httpx), settings (pydantic) and the
  rest are imported, and the reckoner session made, when a magic first needs them.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import (
    Magics,
    line_cell_magic,
    line_magic,
    magics_class,
    needs_local_scope,
    no_var_expand,
)
from IPython.display import display
from IPython.utils.text import DollarFormatter

from ..errors import NotebookError
from ..kernel import attach_sidecar, close_reviewer, current_reviewer, kernel_ledger, kernel_reviewer
from . import args as args_module

if TYPE_CHECKING:
    from ..artifact.paths import Location
    from ..reckon.cell import ReckonSession
    from ..reckoner.values import Value
    from .chat import ChatSession

ARTICLE_USAGE = ("%reckon article ID [--format md|latex] [--compile] [--language auto|zh-CN|en] "
                 "[--writer offline|model]")


def _reckon_help() -> str:
    """What ``%reckon?`` and ``%%reckon?`` show (IPython's inspector prints the docstring as
    plain text): the cell usage (:data:`USAGE`, the one source), then the options, the line
    forms, formulas, temperature units and the line magic's forms, in words."""
    import textwrap

    from ..reckon.cell import DEFAULT_DIGITS, DEFAULT_TITLE, USAGE
    from ..reckoner.grammar import BINARY, BOUNDED, CONSTANTS, UNARY, WRITTEN

    EVALUATED = ("sum", "prod", "seq")  # the bounded forms the engine computes; the others are refused

    names = textwrap.fill(
        f"$ names: the constants {' '.join('$' + c for c in CONSTANTS)}; the functions "
        f"{' '.join('$' + f for f in UNARY)}; {', '.join(WRITTEN[f] for f in BINARY)}; "
        f"{'; '.join(WRITTEN[f] for f in BOUNDED if f in EVALUATED)}; e.g. $sqrt(@A), 2*$pi*@r, "
        f"$sum_{{k=1}}^{{@N}}(1/k^2). {', '.join('$' + f for f in BOUNDED if f not in EVALUATED)} are read but "
        "refused: write the closed form. A formula holds numbers and @slots, no units: give a quantity with a unit "
        "on its own given line.",
        width=100, initial_indent="  ", subsequent_indent="  ")
    return f"""One %%reckon cell is one calculation record: each line is one call to the units-checked engine,
and the cell shows every step with its values and units.

{USAGE}

Cell options (on the %%reckon line, in any order)
  --continue      keep the record open: the next %%reckon cell appends to it
  --quiet         show nothing unless a line is refused
  --digits N      significant digits shown, 1 to 17 (default {DEFAULT_DIGITS})
  --export NAME   the Python variable that maps slot names to pint Quantities in SI (default _reckon)
  TITLE           the other words: the record's title (default "{DEFAULT_TITLE}")

Lines (the first word decides; given, show, note, note!, delete and end are keywords unless '=' follows)
  given NAME = VALUE [UNIT]
      VALUE is a number (2.05, 1.68e-8, 3.3006×10⁻⁶, 3.3006e-6), a complex number without spaces
      (3+4j, -31.83j), an array ([1, 2, 3]) or py:VAR (a Python variable holding a number, an array or a
      pint Quantity). UNIT is a pint unit: ohm*m, kN*m, uF or µF, mg/(12 h), W/(m²·K), kg·m⁻³; no unit
      means a plain number. Anything a result displays can be typed back here.
  NAME = FORMULA
      evaluate FORMULA and write the result into the slot NAME, e.g.  R = @rho*@L/@A
  NAME = FORMULA in UNIT
      the same, with a declared result unit: the result must have UNIT's dimension (refused otherwise)
      and shows in UNIT, e.g.  P = @V*@I in kW; a temperature declared in degC is stored as a point,
      in delta_degC as a difference
  show NAME [in UNIT] [digits N]
      show a slot, in UNIT if given (same dimension only), with N significant digits
  note TEXT       an explanation, shown and recorded
  note! TEXT      a note recorded for the article writer only, not shown
  delete NAME     remove a slot
  end [TEXT]      close the record, with a closing text; must be the last line
  # comment       a line starting with # is not recorded
  A refused line is recorded and shown in red; the cell stops there (the later lines are not run) and
  raises ReckonRefused, so "run all" stops too.

Formulas
  @name reads a slot; numbers are written plainly (2, 0.5, 1.5e-3); + - * / and ^ for powers
  (-2^2 is -4); parentheses group; @a[0] is an array's first element, @o.name an object's field.
{names}
  Every result's dimension is checked: adding metres to seconds is refused.

Temperatures
  degC, °C, ℃ and degF, °F, ℉ are points on a scale (20 degC is 293.15 K); delta_degC, Δ°C,
  delta_degF, Δ°F and ΔK are differences; K and degR are either. point - point is a difference,
  point + difference a point; two points never add; a point is never scaled by a plain number alone,
  and beside a dimensional factor (@p/(@R*@T)) it counts in K. Inside a compound unit a degree is a
  difference: J/(kg*degC) is J/(kg*K). Gauge pressures (psig, barg) are refused: give absolute
  pressures (psia, bar).

Line magic (%reckon without a cell body)
  %reckon list                            the records this notebook shows
  %reckon show ID                         one record, step by step
  %reckon recover [close|discard] [ID]    a record a crashed or restarted kernel left open
  %reckon units [QUANTITY=UNIT ...|clear] preferred display units, e.g. length=mm force=kN stress=MPa
  {ARTICLE_USAGE}
      write an article from a record (Markdown or LaTeX; --compile makes a PDF)
"""


class ReckonRefused(NotebookError):
    """A ``%%reckon`` line was refused; the record is closed with the refusal in it. ``code`` is
    the engine's code for the refusal (``RECKON_REFUSED`` when it gave none)."""

    code = "RECKON_REFUSED"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code or type(self).code

    def _render_traceback_(self) -> list[str]:  # IPython: show this instead of a Python traceback
        return [f"\x1b[31mReckonRefused: {self}\x1b[0m"]


class ReckonSlots(dict):
    """``_reckon``: slot name -> pint Quantity (SI, so temperatures in K), with ``record_id``,
    ``path``, ``title`` and ``status`` of the record the cell wrote, and :meth:`kind`."""

    record_id: str | None = None
    path: Path | None = None
    title: str | None = None
    status: str | None = None
    kinds: dict[str, str] = {}  # noqa: RUF012 - replaced per instance by the magic

    def kind(self, name: str) -> str | None:
        """A slot's temperature kind (issue 17): ``"point"`` (a reading on the scale named by
        :meth:`scale`), ``"difference"``, or ``None`` (not a temperature, or a thermodynamic
        temperature in K, which acts as either). ``KeyError`` for a slot that does not exist."""
        if name not in self:
            raise KeyError(name)
        temp = self.kinds.get(name, "")
        return None if not temp else ("difference" if temp == "delta" else "point")

    def scale(self, name: str) -> str | None:
        """The scale a temperature point was given in (``"degC"``, ``"degF"``), else ``None``."""
        temp = self.kinds.get(name, "") if name in self else None
        return temp if temp in ("degC", "degF") else None

    def __repr__(self) -> str:
        items = ", ".join(f"{k}: {v:~P}" if hasattr(v, "units") else f"{k}: {v!r}" for k, v in self.items())
        return f"<reckon {self.title!r} ({self.status}): {items}>"


def _to_quantity(value: Value) -> Any:
    from ..reckon import units as U

    if value.sig.kind == "object":
        return {n: _to_quantity(type(value)(value.mag[n], s)) for n, s in value.sig.fields}
    return U.quantity(value.mag, tuple(int(x) for x in value.sig.dim))


def _unit_pairs(text: str) -> list[tuple[str, str]]:
    """``length=mm force = kN MPa`` -> ``[("length", "mm"), ("force", "kN"), ("", "MPa")]``; a
    ``=`` without a quantity before it or a unit after it is a :class:`UsageError`."""
    out = []
    for m in re.finditer(r"(?:([^\s=]*)\s*=\s*([^\s=]*))|([^\s=]+)", text):
        if m.group(3) is not None:
            out.append(("", m.group(3)))
            continue
        if not m.group(1) or not m.group(2):
            raise UsageError(f"%reckon units {m.group(0).strip()}: write QUANTITY=UNIT, e.g. length=mm")
        out.append((m.group(1), m.group(2)))
    return out


LINE_FORMS = ("%reckon list | show ID | recover [close|discard] [ID ...] | units [QUANTITY=UNIT ...|clear] | "
              "article ID [--format md|latex] [--compile] [--language auto|zh-CN|en] [--writer offline|model]")


class _ReckonLineError(UsageError):
    """What the ``%reckon`` line parser raises (an unknown subcommand or option, a missing id);
    the magic shows it as a plain ``UsageError`` naming the line form. Nothing was read or written."""


def _reckon_line_parser() -> args_module.MagicParser:
    """``%reckon list|show|recover|units|article`` as argparse sub-commands (:mod:`.args`)."""
    p = args_module.parser("%reckon", _ReckonLineError)
    sub = args_module.subcommands(p, "command")
    sub.add_parser("list")
    sub.add_parser("show").add_argument("id")
    rec = sub.add_parser("recover")
    rec.add_argument("action", nargs="?", choices=("close", "discard"))
    rec.add_argument("ids", nargs="*")
    sub.add_parser("units").add_argument("pairs", nargs="*")
    art = sub.add_parser("article")
    art.add_argument("id")
    art.add_argument("--format", choices=("md", "latex"), default="md")
    art.add_argument("--compile", action="store_true")
    art.add_argument("--language", choices=("auto", "zh-CN", "en"), default="auto")
    art.add_argument("--writer", choices=("offline", "model"), default="offline")
    return p


class KernelMagics(Magics):
    """:class:`~IPython.core.magic.Magics` registered with a shell: :attr:`ip` is that shell
    (``Magics.shell`` is optional in IPython's types; these magics are always registered on one)."""

    @property
    def ip(self) -> InteractiveShell:
        shell = self.shell
        if shell is None:  # pragma: no cover - register_magics always gives one
            raise RuntimeError(f"{type(self).__name__} is not registered with a shell")
        return shell


def _chat_command(word: str) -> str:
    """``%chat``'s one line form, ``list``; another word is ``unknown subcommand 'word'``."""
    if word != "list":
        raise argparse.ArgumentTypeError(f"unknown subcommand {word!r}")
    return word


def _academic_action(word: str) -> str:
    """``%academic``'s action, in any case: ``on``, ``off`` or ``status``."""
    if word.lower() not in ("on", "off", "status"):
        raise argparse.ArgumentTypeError(f"unknown action {word!r}; use %academic on, off or status")
    return word.lower()


@magics_class
class ReckonMagics(KernelMagics):
    def __init__(self, shell: InteractiveShell) -> None:
        super().__init__(shell)
        self._location: Location | None = None
        self._session: ReckonSession | None = None
        #: (cell id or None, record id) of every record a %%reckon cell wrote in this kernel
        self.made: list[tuple[str | None, str]] = []
        self._settings_read = False  # [reckon.units] is read at the first %%reckon or %reckon units
        attach_sidecar(shell, self.current_sidecar)
        from ..artifact import paths

        if (paths.reckoner_home(self.location) / "open-record.jsonl").exists():
            self.session  # noqa: B018 - a crashed kernel left a record open: the engine sets it aside now

    @property
    def location(self) -> Location:
        """Where this kernel's notebook is (:func:`dsh_notebook.artifact.paths.locate`), found when
        first asked for."""
        if self._location is None:
            from ..artifact import paths

            self._location = paths.locate(self.ip.user_ns)
        return self._location

    @location.setter
    def location(self, value: Location) -> None:
        self._location = value

    @property
    def session(self) -> ReckonSession:
        """The kernel's reckoner session: an :class:`~dsh_notebook.reckoner.Engine` on the
        notebook's sidecar, opened (setting aside any record a crashed kernel left open) when a
        magic first needs it, so that ``%load_ext`` stays light."""
        if self._session is None:
            from ..artifact import paths
            from ..reckon.cell import ReckonSession
            from ..reckoner import Engine

            self._session = ReckonSession(Engine(paths.reckoner_home(self.location), recover=False))
        return self._session

    @session.setter
    def session(self, value: ReckonSession) -> None:
        self._session = value

    def current_sidecar(self) -> Path:
        """The sidecar this kernel writes to now (after :meth:`refresh_location`)."""
        self.refresh_location()
        return self.location.sidecar

    def refresh_location(self) -> None:
        """Follow a renamed or newly known notebook while no record is open."""
        from ..artifact import paths

        loc = paths.locate(self.ip.user_ns)
        if self._session is None:  # no engine yet: it opens where the notebook is now
            self.location = loc
            return
        if loc.sidecar != self.location.sidecar and self.session.engine.open_record is None:
            from ..reckon.cell import ReckonSession
            from ..reckoner import Engine

            self.location = loc
            prefs = self.session.prefs  # the notebook's preferred units follow it
            self.session = ReckonSession(Engine(paths.reckoner_home(loc), recover=False), prefs=prefs)

    @no_var_expand  # a title is kept as written: IPython's $name and {expr} would record another one than
    @line_cell_magic  # the cell's source says, and verify would then fail the notebook it just ran
    def reckon(self, line: str, cell: str | None = None) -> None:
        # %reckon? and %%reckon? show _reckon_help() (IPython's inspector calls getdoc(), set below).
        if cell is None:
            return self._line(line)
        from ..reckon import render
        from ..reckon.cell import USAGE, ReckonUsageError, parse_options, run_cell

        self.refresh_location()
        try:
            opts = parse_options(line)
        except ReckonUsageError as exc:
            raise UsageError(f"%%reckon: {exc}\n\n{USAGE}") from None
        held = self.ip.user_ns.get(opts.export)
        if held is not None and not isinstance(held, ReckonSlots):
            raise UsageError(
                f"%%reckon: --export {opts.export} would replace the existing variable {opts.export} "
                f"(a {type(held).__name__}); choose another name"
            )
        self._settings_units()
        try:
            out = run_cell(self.session, opts, cell, self.ip.user_ns)
        except ReckonUsageError as exc:
            raise UsageError(f"%%reckon: {exc}") from None
        if out is None:
            print("%%reckon: the cell has no lines to run (nothing was recorded).\n\n" + USAGE)
            return None
        notices = list(out.notices)
        for p in self.session.engine.set_aside:
            notices.append(f"a record left open by an earlier kernel was set aside: {p.stem}; see %reckon recover")
        self.session.engine.set_aside.clear()
        out.notices = notices
        if out.record_id:
            header = getattr(self.ip, "parent_header", None) or {}
            cell_id = (header.get("metadata") or {}).get("cellId") if isinstance(header, dict) else None
            self.made.append((cell_id if isinstance(cell_id, str) else None, out.record_id))
        sha = None
        if out.status != "open" and out.path is not None and Path(out.path).exists():
            sha = hashlib.sha256(Path(out.path).read_bytes()).hexdigest()
        meta = render.record_metadata(out, self.location, sha)
        slots = ReckonSlots({n: _to_quantity(v) for n, v in out.slots.items()})
        slots.record_id, slots.path, slots.title, slots.status = out.record_id, out.path, out.title, out.status
        slots.kinds = {n: v.sig.temp for n, v in out.slots.items() if v.sig.kind != "object" and v.sig.temp}
        self.ip.user_ns[opts.export] = slots
        bad = out.refused
        if not opts.quiet or bad is not None:
            data, md = render.bundle(out, meta)
            display(data, raw=True, metadata=md)
        if bad is not None:
            raise ReckonRefused(render.refusal_text(out) or "", bad.receipt.get("code"))
        return None

    reckon.__doc__ = ("%%reckon [--continue] [--quiet] [--digits N] [--export NAME] [TITLE]: a units-checked "
                      "calculation record; %reckon list|show|recover|units|article. %reckon? shows every form.")
    # IPython's inspector asks an object's getdoc() first: the full help is built when asked for,
    # so that loading the extension does not import the engine's grammar.
    reckon.getdoc = _reckon_help  # type: ignore[union-attr]  # the function itself, before @line_cell_magic

    # ------------------------------------------------------------------ line forms

    def _line(self, line: str) -> None:
        words = args_module.split(line, UsageError)
        if not words:
            print(_reckon_help())
            return None
        try:
            a = _reckon_line_parser().parse_line(words)
        except _ReckonLineError as exc:
            # IPython shows a UsageError itself (no traceback), not a subclass of it
            raise UsageError(f"%reckon {words[0]}: {exc}\n\nUse: {LINE_FORMS}") from None
        home = self.session.engine.home
        if a.command == "list":
            return self._list(home)
        if a.command == "show":
            return self._show(home, a.id)
        if a.command == "recover":
            return self._recover(home, a.action, a.ids)
        if a.command == "article":
            return self._article(home, a)
        return self._units(a.pairs)

    def _settings_units(self) -> None:
        """The kernel starts with settings.toml's ``[reckon.units]`` (issue 18), read once; a unit
        that cannot be a preference is left out with a warning naming it."""
        if self._settings_read:
            return
        self._settings_read = True
        from ..errors import SettingsError
        from ..reckon import units as U
        from ..reckoner import shown_units as SU
        from ..settings import load_settings

        try:
            table = load_settings().reckon
        except SettingsError as exc:
            print(f"%%reckon: settings.toml could not be read ({exc}); no preferred display units are used")
            return
        for problem in table.problems:
            print(f"%%reckon: settings.toml: {problem}")
        chosen: dict[str, SU.Unit] = {}
        for quantity, text in table.units.items():
            try:
                name, unit = U.preference(quantity, text)
            except U.UnitError as exc:
                print(f"%%reckon: settings.toml [reckon.units] {quantity} = {text!r} is left out: {exc.message}")
                continue
            chosen[name] = unit
        if chosen:
            self.session.prefs = SU.Preferences(tuple(chosen.items()))

    def _units(self, args: list[str]) -> None:
        """``%reckon units [QUANTITY=UNIT ...] | clear``: the notebook's preferred display units
        (issue 18), recorded in the start row of each record written after it."""
        from ..reckon import units as U
        from ..reckoner import shown_units as SU

        self._settings_units()
        session = self.session
        if args and session.continuing and session.engine.open_record is not None:
            raise UsageError("%reckon units: a record is open (a %%reckon --continue cell); its lines keep the units it "
                             "started with, so change the preferred units after the cell that closes it")
        if args == ["clear"]:
            session.prefs = SU.Preferences()
            print("No preferred display units: results show in the units composed from their inputs.")
            return
        if args:
            chosen = dict(session.prefs.units)
            notes = []
            for quantity, text in _unit_pairs(" ".join(args)):
                word = f"{quantity}={text}" if quantity else text
                try:
                    name, unit = U.preference(quantity, text)
                except U.UnitError as exc:
                    raise UsageError(f"%reckon units {word}: {exc.message}\n\nUse: %reckon units QUANTITY=UNIT ..., e.g. "
                                     "%reckon units length=mm force=kN stress=MPa") from None
                for other in [q for q in chosen if q != name and SU.QUANTITIES[q] == SU.QUANTITIES[name]
                              and (q in SU.MOMENTS) == (name in SU.MOMENTS)]:
                    notes.append(f"{name}={SU.text(unit)} replaces {other}={SU.text(chosen.pop(other))} "
                                 "(the same dimension)")
                chosen.pop(name, None)
                chosen[name] = unit
            session.prefs = SU.Preferences(tuple(chosen.items()))  # all checked before any is kept
            for note in notes:
                print(note)
        if not session.prefs:
            print("No preferred display units: results show in the units composed from their inputs.\n"
                  "Set some with e.g. %reckon units length=mm force=kN stress=MPa")
            return
        print("Preferred display units (recorded in each new record):")
        for name, unit in session.prefs.units:
            print(f"  {name} = {SU.text(unit)}")
        return

    def _article(self, home: Path, a: argparse.Namespace) -> None:
        import html
        import os

        from ..artifact.articles import write_article
        from ..formats import markdown_text
        from ..reckoner import find_record
        from ..reckoner.articles import ArticleError

        writer = None
        if a.writer == "model":
            from ..llm.writer import ModelArticleWriter

            writer = ModelArticleWriter()
        try:
            result = write_article(find_record(home, a.id), home / "articles", a.format, a.language, a.compile,
                                   writer=writer)
        except (FileNotFoundError, ArticleError) as exc:
            raise UsageError(f"%reckon article: {exc}") from None
        target = result.pdf or result.path
        link = os.path.relpath(target, os.getcwd())
        by = f"{result.writer} writer"
        if result.writer == "model" and writer is not None and writer.model_id:
            by += f", {writer.model_id}"
        note = (f"the offline writer wrote the article instead: {result.fallback_reason}"
                if result.fallback_reason else "")
        display({"text/plain": f"article written ({by}): {target}" + (f"\n{note}" if note else ""),
                 "text/markdown": f"Article written ({by}): [{html.escape(target.name)}]({link})"
                                  + (f"\n\n*{markdown_text(note)}*" if note else ""),
                 "text/html": f'Article written ({by}): <a href="{html.escape(link)}" target="_blank">'
                              f'{html.escape(target.name)}</a>'
                              + (f'<br><span style="color:#b35900">{html.escape(note)}</span>' if note else "")},
                raw=True)

    def _list(self, home: Path) -> None:
        from ..artifact import records as records_view

        text = records_view.records_table(home, self.current_records())
        print(f"Records in {home}:\n{text}" if text else f"No records yet in {home}.")

    def current_records(self) -> list[str]:
        """The records this notebook shows now: those its saved file names, with each cell this
        kernel ran again naming its latest record instead (by the front end's cell id), and the
        records written here since (issue 15: the others are superseded)."""
        by_cell: dict[str | None, list[str]] = {}
        notebook = self.location.notebook if self.location.known else None
        if notebook is not None and Path(notebook).is_file():
            from ..artifact.records import cell_records
            from ..artifact.seal import UnreadableNotebook, read_notebook

            try:
                nb = read_notebook(Path(notebook))
            except (UnreadableNotebook, OSError):
                nb = None
            for cell in nb.cells if nb is not None else []:
                named = cell_records(cell)
                if named:
                    by_cell.setdefault(cell.get("id"), []).extend(named)
        ran: dict[str | None, list[str]] = {}
        for cell_id, rid in self.made:
            if cell_id is None:
                ran.setdefault(None, []).append(rid)
            else:
                ran[cell_id] = [rid]  # the latest run of a cell replaces its output
        by_cell.update({k: v for k, v in ran.items() if k is not None})
        found = [rid for ids in by_cell.values() for rid in ids] + ran.get(None, [])
        return list(dict.fromkeys(found))

    def _show(self, home: Path, rid: str) -> None:
        from ..artifact import records as records_view
        from ..reckoner import find_record, read_record
        from ..reckoner.records import UnreadableRecord

        try:
            rec = read_record(find_record(home, rid))
        except FileNotFoundError:
            raise UsageError(f"%reckon show: no record {rid!r} in {home} (see %reckon list)") from None
        except UnreadableRecord as exc:
            raise UsageError(f"%reckon show: {exc}") from None
        print(records_view.record_text(rec))

    def _recover(self, home: Path, action: str | None, ids: list[str]) -> None:
        from ..reckoner import close_set_aside, discard_set_aside, list_records
        from ..reckoner.records import UnreadableRecord

        info = list_records(home)
        aside = info["set_aside"]
        if action is None:
            if not aside:
                print("Nothing to recover: no record was left open by a crashed or restarted kernel.")
                return
            print("Records left open by an earlier kernel (close keeps them, discard deletes them):")
            for s in aside:
                print(f"  {s['id']}  {s['title']!r}  {s['steps']} steps")
            print("Use: %reckon recover close [ID]   or   %reckon recover discard [ID]")
            return
        targets = ids or [s["id"] for s in aside]
        if not targets:
            print("Nothing to recover.")
            return
        for rid in targets:
            try:
                if action == "close":
                    dest = close_set_aside(home, rid)
                    print(f"Closed {rid}: {dest}")
                else:
                    discard_set_aside(home, rid)
                    print(f"Discarded {rid}.")
            except FileNotFoundError:
                raise UsageError(f"%reckon recover: no set-aside record {rid!r} (see %reckon recover)") from None
            except UnreadableRecord as exc:
                raise UsageError(f"%reckon recover: {exc}; use discard") from None
        return


@magics_class
class ChatMagics(KernelMagics):
    """``%%chat`` and ``%chat list`` (see :mod:`.chat`)."""

    def __init__(self, shell: InteractiveShell) -> None:
        super().__init__(shell)
        self.sessions: dict[str, ChatSession] = {}

    def _reckon(self) -> ReckonMagics:
        rm = self.ip.magics_manager.registry.get("ReckonMagics")
        if rm is None:  # pragma: no cover - load_ipython_extension registers both
            rm = ReckonMagics(self.ip)
            self.ip.register_magics(rm)
        return rm

    @line_cell_magic
    def chat(self, line: str, cell: str | None = None) -> None:
        """``%%chat [--session NAME] [--preset plain|reckoner|reckoner-with-search] [--model ID]
        [--new]`` with the message as the cell body; ``%chat list``."""
        from ..artifact import records as records_view
        from ..llm import LLMError
        from ..llm.session import sessions_table
        from . import chat

        rm = self._reckon()
        rm.refresh_location()
        folder = rm.location.sidecar / "sessions"
        if cell is None:
            p = args_module.parser("%chat", chat.ChatUsageError)
            p.add_argument("command", type=_chat_command)
            try:
                p.parse_line(args_module.split(line, chat.ChatUsageError))
            except chat.ChatUsageError as exc:
                raise UsageError(f"%chat: {exc}. %chat list shows the sessions; a chat is a cell:\n\n{chat.USAGE}") from None
            rows = sessions_table(folder)  # the one line form: %chat list
            if not rows:
                print(f"No chat sessions yet in {folder}.")
            else:
                print(records_view.table([(r["id"], r["name"], r["preset"], r["model"], r["turns"], r["last"])
                                          for r in rows], ("id", "name", "preset", "model", "turns", "last turn")))
            return
        try:
            opts = chat.parse_options(line)
        except chat.ChatUsageError as exc:
            raise UsageError(f"%%chat: {exc}\n\n{chat.USAGE}") from None
        text = cell.replace("\r\n", "\n").replace("\r", "\n").strip()
        if not text:
            raise UsageError(f"%%chat: the cell has no message (nothing was sent).\n\n{chat.USAGE}")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise UsageError(f"%%chat: the message holds a character that is not valid Unicode text at position "
                             f"{exc.start + 1} (a lone surrogate); nothing was sent") from None
        engine = rm.session.engine
        session = self.sessions.get(opts.session)
        if session is not None and session.log.path.parent != folder:  # the notebook was renamed
            session.close()
            del self.sessions[opts.session]
            session = None
        if session is not None and not opts.new:
            if opts.preset and opts.preset != session.preset:
                raise UsageError(f"%%chat: session {opts.session} uses preset {session.preset}; a session cannot "
                                 f"change preset (add --new)")
            if opts.model and not chat.same_model(opts.model, session):
                raise UsageError(f"%%chat: session {opts.session} uses model {session.model}; add --new to change "
                                 f"model")
        preset = opts.preset or (session.preset if session is not None and not opts.new else None) or \
            chat.logged_preset(folder, opts.session)
        held = engine.open_record
        if preset != "plain" and held is not None:
            raise UsageError(f"%%chat: the %%reckon record {held['title']!r} is still open (its cells use --continue); "
                             f"finish it with a %%reckon cell whose last line is `end`, then ask the model: the "
                             f"model's calculations go into records of their own. Nothing was sent.")
        if session is None or opts.new:
            for name, other in self.sessions.items():
                if other.log.id == opts.session and name != opts.session:
                    raise UsageError(f"%%chat: session {opts.session} is open in this kernel as {name!r}; "
                                     f"continue it with --session {name}")
            try:
                fresh = chat.open_session(folder, opts.session, opts, engine)
            except chat.ChatUsageError as exc:  # a refused --new leaves the current session as it was
                raise UsageError(f"%%chat: {exc}") from None
            if session is not None:
                session.close()
            session = self.sessions[opts.session] = fresh
        outcome = chat.run_turn(session, text, shell=self.ip, engine=engine)
        failure = outcome["error"]
        if failure is not None:
            shown = chat.failed_turn_bundle(outcome, failure)
            if shown is not None:  # what arrived before the error, and the records the turn wrote
                display(shown, raw=True)
            if isinstance(failure, LLMError):
                raise chat.ChatFailed(f"{failure.code}: {failure.message}", failure.code)
            raise chat.ChatFailed(f"{type(failure).__name__}: {failure}")
        data, md = chat.turn_bundle(session, outcome, rm.location)
        display(data, raw=True, metadata=md)
        reviewer = current_reviewer(self.ip)
        finished = ("completed", "truncated", "filtered")
        if reviewer is not None and outcome["result"] is not None and outcome["result"].status in finished:
            reviewer.turn_completed(session.log.path)  # watching this notebook's chat: review the new turn
        if outcome.get("interrupted"):
            raise chat.ChatInterrupted("the turn was interrupted (the session log records it as cancelled)")
        return


@magics_class
class AcademicMagics(KernelMagics):
    """``%academic on|off|status`` (spec: academic.md "State and surface")."""

    @line_magic
    def academic(self, line: str) -> None:
        """``%academic on|off|status``: switch academic mode for every model call from the
        next request on, or show its state, last shaped request and gate count."""
        from ..academic import state

        p = args_module.parser("%academic", UsageError)
        p.add_argument("action", nargs="?", default="status", type=_academic_action)
        try:
            word = p.parse_line(args_module.split(line, UsageError)).action
        except UsageError as exc:
            raise UsageError(f"%academic: {exc}") from None
        if word in ("on", "off"):
            st = state.set_enabled(word == "on")
            print(f"Academic mode: {'on' if st['enabled'] else 'off'} (every model call from the next request on)")
        else:
            print(state.status_text())


@magics_class
class ReviewMagics(KernelMagics):
    """``%review`` (see :mod:`.review`)."""

    @no_var_expand  # a question is sent as written ({x} and $x are text, not Python)
    @line_magic
    def review(self, line: str) -> None:
        """``%review [--target this|session PATH|codex|dsh|claude|chat PATH] [--focus me|dialogue|ai]
        [--pause|--resume|--stop|--history] [--ask "question" [--review N]] [--wait]``."""
        from ..inert import markdown_html
        from ..llm import LLMError
        from ..reviewer.targets import ReviewUsageError, resolve_target
        from . import review as R

        try:
            opts = R.parse(line)
        except ReviewUsageError as exc:
            raise UsageError(f"%review: {exc}\n\n{R.USAGE}") from None
        if opts.ask is not None and not opts.ask.strip():
            raise UsageError("%review: --ask needs a question (it is empty)")
        if opts.review is not None and opts.ask is None:
            raise UsageError("%review: --review N chooses the review a question is about: use it with --ask")
        rv = kernel_reviewer(self.ip)
        try:
            if opts.target:
                rm = self.ip.magics_manager.registry.get("ReckonMagics")
                source, path = resolve_target(opts.target, rm.location.sidecar if rm else None)
                rv.set_target(source, path, focus=opts.focus)
                what = "this notebook's chat" if opts.target == ["this"] else " ".join(opts.target)
                print(f"Reviewing {what} (focus {rv.focus}); the reviewer watches it from now on.")
            elif opts.focus and rv.set_focus(opts.focus) is None:
                print(f"Focus {opts.focus}; choose a target to review (%review --target this).")
            if opts.pause:
                rv.pause()
                print("Reviewer paused: no automatic reviews until %review --resume.")
            elif opts.resume:
                rv.resume()
                print("Reviewer watching again.")
            elif opts.stop:
                rv.stop()
                print("Review stopped.")
            elif opts.history:
                print(R.history_text(rv))
                return
            if opts.ask:
                event = R.ask_question(rv, opts.ask, opts.review)
                answer = event.get("answer") or f"(no answer: {event.get('error')})"
                display({"text/plain": answer, "text/html": markdown_html(answer)}, raw=True,  # a model's answer: inert
                        metadata={"dsh": {"review_id": event.get("review_id"), "seq": event.get("seq")}})
                return
        except (ReviewUsageError, ValueError, FileNotFoundError, LookupError, RuntimeError) as exc:
            raise UsageError(f"%review: {exc}") from None
        except LLMError as exc:
            raise UsageError(f"%review: {exc.code}: {exc.message}") from None
        if opts.wait or not (opts.target or opts.focus or opts.pause or opts.resume or opts.stop):
            if opts.wait:
                rv.wait(rv.timeout + 5)
            st = rv.status()
            rm = self.ip.magics_manager.registry.get("ReckonMagics")
            notebook = rm.location.notebook if rm is not None else None
            data, md = R.review_bundle(st["latest"], st, hide_unverified=rv.hide_unverified,
                                       base=Path(notebook).resolve().parent if notebook else None)
            for problem in rv.config_problems:
                print(f"(settings: {problem})")
            display(data, raw=True, metadata=md)
            rv.mark_read()


MAX_LEDGER_LINE = 8000  # %ledger's line: a question of at most 4,000 characters plus its options


@magics_class
class LedgerMagics(KernelMagics):
    """``%ledger show|explore|verify|export [--name NAME] [--format md|bibtex]`` and
    ``%ledger ask "question" [--name NAME]`` (see :mod:`.ledger`)."""

    @no_var_expand  # IPython's expansion is quadratic on a long line: the length is checked first
    @line_magic
    @needs_local_scope
    def ledger(self, line: str, local_ns: dict[str, Any] | None = None) -> None:
        """``%ledger show`` (summary), ``explore`` (the LedgerExplorer widget), ``verify`` (chain
        and replay check), ``export [--format md|bibtex]`` (evidence table and BibTeX under the
        sidecar's ``exports/``), ``ask "question"`` (the research pipeline from question to a decision
        awaiting the person); ``--name NAME`` picks ``ledger/NAME.jsonl`` (default main)."""
        import os

        from ..artifact import ledgers as AL
        from ..research_pipeline.pipeline import MAX_QUESTION
        from . import ledger as LG

        # The length is checked on the raw line, before IPython's {var}/$var expansion and shlex
        # (both quadratic on a long line), and again after the expansion: a question of at most
        # MAX_QUESTION characters plus room for options.
        def check_length(text: str) -> None:
            if len(text) <= MAX_LEDGER_LINE:
                return
            if text.lstrip().startswith("ask"):
                raise UsageError(f"%ledger ask: the question is about {len(text):,} characters long (at most "
                                 f"{MAX_QUESTION:,}); ask it in fewer words; nothing was recorded")
            raise UsageError(f"%ledger: the line is {len(text):,} characters long (at most {MAX_LEDGER_LINE:,})"
                             f"\n\n{LG.USAGE}")

        check_length(line)
        ns = dict(self.ip.user_ns)
        ns.update(local_ns or {})
        try:  # as IPython's var_expand: a line it cannot format is left as it is
            line = DollarFormatter().vformat(line, args=[], kwargs=ns)
        except Exception:  # noqa: BLE001, S110 - IPython's var_expand's own boundary, kept as it has it
            pass
        check_length(line)
        try:
            opts = LG.parse(line)
        except LG.LedgerUsageError as exc:
            raise UsageError(f"%ledger: {exc}\n\n{LG.USAGE}") from None
        path = kernel_ledger(self.shell, opts.name)
        if opts.action == "ask":
            try:
                result = LG.run_ask(path, opts.question, progress=LG.AskProgress(display))
            except ValueError as exc:  # AskRefused (question, credentials) or unusable research settings
                raise UsageError(f"%ledger ask: {exc}") from None
            data, md = LG.ask_bundle(path, result)
            display(data, raw=True, metadata=md)
            return
        if opts.action == "explore":
            from ..widgets import LedgerExplorer

            display(LedgerExplorer(name=opts.name, notebook=path))
            return
        if not path.exists():
            raise UsageError(f"%ledger {opts.action}: no ledger {opts.name!r} yet (looked for {path.name} in "
                             f"{path.parent})")
        if opts.action == "show":
            state, _events = AL.read_state(path)
            data, md = AL.show_bundle(path, state)
        elif opts.action == "verify":
            try:  # against the head `sync` sealed in the notebook file on disk, when it holds one
                result = AL.verify_sealed(path)
            except (OSError, ValueError) as exc:  # LedgerPathError: not a ledger file
                raise UsageError(f"%ledger verify: {exc}") from None
            data, md = AL.verify_bundle(path, result)
        else:
            state, _events = AL.read_state(path)
            formats = (opts.format,) if opts.format else ("md", "bibtex")
            try:
                written = AL.export(path, state, formats)
            except OSError as exc:
                raise UsageError(f"%ledger export: cannot write under {AL.sidecar_of(path) / 'exports'}: {exc}") from None
            # Where the sidecar is depends on how the kernel was started (a saved notebook, nbval's
            # unsaved folder), so the visible output names the files only; the paths are in metadata.
            names = ", ".join(p.name for p in written)
            data = {AL.MIME_LEDGER: {"export": [p.name for p in written]},
                    "text/plain": f"ledger exported to the sidecar's exports/ folder: {names}",
                    "text/markdown": f"Ledger exported to the sidecar's `exports/` folder: {names}"}
            md = {"dsh": {"ledger": path.name, "exports": [os.path.relpath(p, os.getcwd()) for p in written]}}
        display(data, raw=True, metadata=md)
        return


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """Register the magics, and academic mode's hooks with the model client (they also arrive
    through the ``dsh_notebook.llm_hooks`` entry point; registering twice adds them once, and a
    kernel run from a source tree without the package's metadata still gets them)."""
    from ..academic import register_llm_hooks

    register_llm_hooks()
    ipython.register_magics(ReckonMagics)
    ipython.register_magics(ChatMagics)
    ipython.register_magics(AcademicMagics)
    ipython.register_magics(ReviewMagics)
    ipython.register_magics(LedgerMagics)


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    """Close this kernel's chat sessions (their logs' locks are released) and its reviewer."""
    close_reviewer(ipython)
    cm = ipython.magics_manager.registry.get("ChatMagics")
    if cm is not None:
        for s in cm.sessions.values():
            s.close()
        cm.sessions.clear()
