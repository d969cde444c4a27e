"""Check 7 of ``verify``: what a ``%%reckon`` cell shows is what its record holds and renders
(spec: storage.md "Verification"; issue 15 item 4).

For every chain of ``%%reckon`` cells that names one record (a cell and the ``--continue``
cells after it), the cells' lines run again in a scratch engine, with the code the magic uses
(:mod:`dsh_notebook.reckon`), and

* the rows they write must be the record's rows (timestamps and ids aside): a cell source
  edited after the run, a changed title, a line added or removed, or a record that is not the
  one these lines wrote, is named by cell and line, with both values;
* each cell's displayed output must be what its record renders: with the renderer version
  that made it (``metadata.dsh.renderer``), every mimetype compared and the first differing
  line quoted; made by another version (or one that did not say), the wording is not compared
  but every value shown is read back and compared with today's rendering in SI, value and
  dimension, and the difference is reported as "made by an older version".

``py:`` lines take the value their record holds (the kernel is gone); a pint Quantity's
display is read back from the output and must convert to that value.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..reckon import units as U
from ..reckon.cell import (
    USAGE,
    CellOutcome,
    ReckonSession,
    ReckonUsageError,
    Recorded,
    RecordedValues,
    parse_options,
    run_cell,
    split_lines,
)
from ..reckon.render import bundle, refusal_text
from ..reckoner import MemoryEngine
from ..reckoner import shown_units as SU
from ..reckoner.display import value_text
from ..reckoner.errors import EngineError
from ..reckoner.records import RECORDS_DIR, STALE_DIR, UNREADABLE_DIR
from ..reckoner.values import parse_tagged
from ..storage.jsonl import read_regular
from ..version import ENGINE_RULES as RULES
from ..version import RENDERER_VERSION
from .paths import sidecar_for
from .seal import MIME_RECORD, Finding, _is_file_id

CHECK = 7
_SET_ASIDE = re.compile(r"^  \((a record left open by an earlier kernel was set aside: (\S+); see %reckon recover)\)$")

if TYPE_CHECKING:
    from nbformat import NotebookNode

# (cell index, magic line after %%reckon, body, displayed data, output metadata.dsh, output index)
ReckonCell = tuple[int, str, str, dict | None, dict | None, int | None]


#: What ``%%reckon`` prints for a cell without lines (``notebook.magics``).
EMPTY_CELL = "%%reckon: the cell has no lines to run (nothing was recorded).\n\n" + USAGE + "\n"
#: The same, as version 0.1.0 printed it before issue 17 added lines to the usage: a notebook it
#: ran still verifies.
_EARLIER_EMPTY_CELL = """%%reckon: the cell has no lines to run (nothing was recorded).

%%reckon [--continue] [--quiet] [--digits N] [--export NAME] [TITLE]
given NAME = VALUE [UNIT]        a number, 3+4j, [1, 2, 3] or py:VAR, with a pint unit
NAME = FORMULA                   evaluate, e.g.  R = @rho*@L/@A
show NAME [in UNIT] [digits N]   read a slot, optionally in a unit of the same dimension
note TEXT  |  note! TEXT         an explanation (note! is for the article writer only)
delete NAME                      remove a slot
end [TEXT]                       close the record with a closing text
# comment                        not recorded
"""
EMPTY_CELL_TEXTS = (EMPTY_CELL, _EARLIER_EMPTY_CELL)


def reckon_cells(nb: NotebookNode) -> tuple[list[ReckonCell], list[Finding],
                               dict[int, list[str]]]:
    """``(cell index, magic line after %%reckon, body, displayed data, output metadata.dsh,
    output index)`` for every ``%%reckon`` code cell (the last three None for a cell that shows
    no record: not run, or ``--quiet``), and the findings for cells whose outputs cannot be what
    the magic displayed: a rendering (display data) without its record marker, or more than
    one record output, a stream the magic never prints, a record rendering in another cell;
    and the ``ReckonRefused`` messages each cell shows (by cell index)."""
    found: list[tuple[int, str, str, dict | None, dict | None, int | None]] = []
    problems: list[Finding] = []
    refusals: dict[int, list[str]] = {}
    for i, cell in enumerate(nb.cells):
        src = cell.get("source", "")
        if cell.get("cell_type") != "code" or not isinstance(src, str):
            continue
        head, _, body = src.lstrip().partition("\n")
        if not head.startswith("%%reckon") or (len(head) > 8 and not head[8].isspace()):
            if any(isinstance(o, dict) and isinstance(o.get("data"), dict) and MIME_RECORD in o["data"]
                   for o in cell.get("outputs") or []):
                problems.append(Finding(CHECK, False, f"cell {i + 1}", "shows a record rendering, but the cell does "
                                                                       "not run %%reckon: nothing made it there"))
            continue
        shown: list[tuple[int, dict, dict]] = []
        bare = 0
        for n, o in enumerate(cell.get("outputs") or []):
            if isinstance(o, dict) and o.get("output_type") == "stream" and o.get("text") not in EMPTY_CELL_TEXTS:
                problems.append(Finding(CHECK, False, f"cell {i + 1}", "shows printed text that %%reckon never "
                                                                       "prints: nothing vouches for it"))
                continue
            if isinstance(o, dict) and o.get("output_type") == "error" and o.get("ename") == "ReckonRefused":
                refusals.setdefault(i, []).append(str(o.get("evalue")))
                continue
            if not isinstance(o, dict) or o.get("output_type") not in ("display_data", "execute_result"):
                continue  # the usage text of an empty cell, or an error that stopped the cell (UsageError)
            data = o.get("data")
            meta = o.get("metadata")
            dsh = meta.get("dsh") if isinstance(meta, dict) else None
            if isinstance(data, dict) and MIME_RECORD in data and isinstance(dsh, dict) \
                    and isinstance(dsh.get("record_id"), str):
                shown.append((n, data, dsh))
            else:
                bare += 1
        where = f"cell {i + 1}"
        if bare:
            problems.append(Finding(CHECK, False, where, "shows a rendering that names no record (its record output "
                                                         "or its metadata.dsh was removed): nothing vouches for what "
                                                         "it shows; run the cell again"))
        if len(shown) > 1:
            problems.append(Finding(CHECK, False, where, f"shows {len(shown)} record outputs; %%reckon displays one"))
        if shown:
            n, data, dsh = shown[0]
            found.append((i, head[8:], body, data, dsh, n))
        else:
            found.append((i, head[8:], body, None, None, None))
    return found, problems, refusals


@dataclass
class OutputsCheck:
    """What check 7 found: ``findings``; ``replayed``, the ids of records whose every row the
    cells' lines wrote again identically (so they replay: check 2 need not evaluate them a
    second time); ``shown``, ``(cell index, output index)`` of the record outputs that are exactly
    what their record renders with today's renderer (so they hold nothing the cell source and
    the record do not: check 4 need not scan them)."""

    findings: list[Finding] = field(default_factory=list)
    replayed: set[str] = field(default_factory=set)
    shown: set[tuple[int, int]] = field(default_factory=set)  # (cell index, output index)


def check_outputs(nb: NotebookNode, path: Path) -> list[Finding]:
    """Check 7 over the notebook at *path* (read as *nb*): one finding per ``%%reckon`` cell
    (or chain of ``--continue`` cells) that names a record; none when there are no such cells.
    A record check 1 or 2 cannot read is left to them (reported there)."""
    return outputs_check(nb, path).findings


def outputs_check(nb: NotebookNode, path: Path) -> OutputsCheck:
    """Check 7 with what it proved (:class:`OutputsCheck`), for ``verify`` to spare checks 2
    and 4 work already done."""
    result = OutputsCheck()
    sidecar = sidecar_for(path)
    records = sidecar / RECORDS_DIR
    chains: list[list[ReckonCell]] = []
    quiet: list = []  # --quiet --continue cells show nothing: the next cell's record holds their lines
    cells, result.findings, shown_refusals = reckon_cells(nb)
    for item in cells:
        if item[4] is None:
            try:
                quiet = [*quiet, item] if parse_options(item[1]).cont else []
            except ReckonUsageError:
                quiet = []
            continue
        last = chains[-1][-1][4] if chains else None  # a chain ends with a cell that shows its record
        if last is not None and not quiet and last["record_id"] == item[4]["record_id"] \
                and last.get("status") == "open":
            chains[-1].append(item)
        else:
            chains.append([*quiet, item])
        quiet = []
    if not chains:
        return result
    session = ReckonSession(MemoryEngine())
    for chain in chains:
        shown = chain[-1][4]
        assert shown is not None  # a chain ends with a cell that shows its record
        rid = shown["record_id"]
        if not _is_file_id(rid) or not (records / f"{rid}.jsonl").is_file():
            continue  # check 1 names it
        try:
            lines = read_regular(records / f"{rid}.jsonl").split(b"\n")
        except OSError:
            continue  # check 2 names it
        _check_chain(session, chain, _HeldRecord(rid, [ln + b"\n" for ln in lines[1:] if ln.strip()]), result,
                     sidecar, shown_refusals)
    result.findings.sort(key=lambda f: _cell_number(f.subject))
    return result


def _cell_number(subject: str) -> int:
    m = re.match(r"cells? ([0-9]+)", subject)
    return int(m.group(1)) if m else 0


class _HeldRecord:
    """A record file's lines after its header, each decoded only when needed."""

    def __init__(self, rid: str, lines: list[bytes]) -> None:
        self.id = rid
        self.lines = lines
        self._rows: dict[int, dict] = {}

    def row(self, n: int) -> dict:
        if n not in self._rows:
            try:
                row = json.loads(self.lines[n]) if n < len(self.lines) else {}
            except ValueError:
                row = {}
            self._rows[n] = row if isinstance(row, dict) else {}
        return self._rows[n]


def _where(chain: list[ReckonCell]) -> str:
    first, last = chain[0][0] + 1, chain[-1][0] + 1
    return f"cell {first}" if first == last else f"cells {first}-{last}"


def _check_chain(session: ReckonSession, chain: list[ReckonCell], rec: _HeldRecord, result: OutputsCheck, sidecar: Path,
                 shown_refusals: dict[int, list[str]]) -> None:
    eng = session.engine
    assert isinstance(eng, MemoryEngine)
    if eng.open_record is not None:
        eng.record_end()
    session.continuing = False
    rules = (rec.row(0).get("content") or {}).get("rules", 1) if rec.row(0).get("tool") == "record_start" else 1
    eng.rules = rules if type(rules) is int and rules >= 1 else 1  # the engine rules the record was written under
    # the notebook's preferred display units when the record was written (issue 18): its start row names them
    session.prefs = SU.Preferences.from_json((rec.row(0).get("content") or {}).get("units")) \
        if rec.row(0).get("tool") == "record_start" else SU.Preferences()
    recorded = _recorded_values(chain, rec, eng.rules)
    outcomes: list[tuple[int, CellOutcome]] = []
    labels: list[str] = []
    for i, head, body, _data, _meta, _n in chain:
        try:
            opts = parse_options(head)
            recorded.cell = i
            outcome = run_cell(session, opts, body, recorded)
        except ReckonUsageError as exc:
            result.findings.append(Finding(CHECK, False, f"cell {i + 1}", f"its lines cannot run ({exc}), yet its "
                                                                          f"output names record {rec.id}"))
            return
        if outcome is None:
            result.findings.append(Finding(CHECK, False, f"cell {i + 1}", f"has no lines to run, yet its output "
                                                                          f"names record {rec.id}"))
            return
        outcomes.append((i, outcome))
        if not labels:
            labels.append(f"cell {i + 1}, line 1 (%%reckon{head})")
        labels += [f"cell {i + 1}, line {st.line.lineno + 1} ({st.line.source})" for st in outcome.steps]
        if outcome.status != "open" and not (outcome.steps and outcome.steps[-1].line.form == "end"):
            labels.append(f"cell {i + 1} (the record's closing row, written at the cell's end)")
    first = outcomes[0][1].record_id
    problems = _row_differences(eng.lines(first) if first is not None else [], rec, labels)
    if problems:
        result.findings.extend(Finding(CHECK, False, _where(chain), p) for p in problems)
        return
    result.replayed.add(rec.id)
    for i, outcome in outcomes:  # the error a refused cell shows must be its record's refusal
        said = refusal_text(outcome)
        # a record written before issue 17 (rules 1): its error did not name the lines left unrun
        earlier = refusal_text(outcome, with_not_run=False) if eng.rules < RULES else said
        for shown in shown_refusals.get(i, []):
            if shown not in (said, earlier):
                result.findings.append(Finding(CHECK, False, f"cell {i + 1}", f"its error says {shown[:160]!r}, but "
                                               f"record {rec.id} gives {said[:160] if said else 'no refusal'!r}"))
    for (i, _h, _b, data, meta, n), (_, outcome) in zip(chain, outcomes):
        if data is not None:
            assert meta is not None and n is not None  # reckon_cells gives a display with its metadata and index
            found, exact = _check_display(i, data, meta, outcome, rec.id, sidecar)
            if recorded.displayed:
                found = [Finding(f.check, f.ok, f.subject, f"{f.detail}; {recorded.displayed_note()}") for f in found]
            held = sorted(n for c, n in recorded.refusals if c == i)
            if held and eng.rules < RULES:
                note = (f"note: line {held[0] + 1} was refused when the record was written (reckoner-rules/"
                        f"{eng.rules}); the refusal is taken from the record, since the current rules may read "
                        "that line")
                found = [Finding(f.check, f.ok, f.subject, f"{f.detail}; {note}") for f in found]
            result.findings.extend(found)
            if exact:
                result.shown.add((i, n))


# --------------------------------------------------------------------------- py: values


class _Values(RecordedValues):
    """The recorded ``py:`` values, and the pint Quantity displays read back from the output."""

    def __init__(self) -> None:
        super().__init__()
        self.displayed: list[str] = []

    def displayed_note(self) -> str:
        return (f"note: {', '.join(self.displayed)} is shown in the unit of the kernel's pint Quantity; its value "
                "matches the record in SI, which holds no unit for it (nothing to do)")


def _recorded_values(chain: list[ReckonCell], rec: _HeldRecord, rules: int = RULES) -> _Values:
    """The value each ``given NAME = py:...`` line of the chain read, from the record's rows,
    lined up with the cells' lines (one row per line after the start row, a closing row at a
    cell's end); for a record written under older engine rules, the front end's refusals of
    ``given``, ``show`` and unreadable lines (``RecordedValues.refusals``)."""
    values = _Values()
    if rules >= RULES and not any("py:" in body for _i, _head, body, _d, _m, _n in chain):
        return values
    at = 1
    for _i, head, body, data, _meta, _n in chain:
        try:
            opts = parse_options(head)
        except ReckonUsageError:
            return values
        record = (data or {}).get(MIME_RECORD)
        steps = record.get("steps") if isinstance(record, dict) else None
        shown = {s["line"]: s for s in steps if isinstance(s, dict) and type(s.get("line")) is int} \
            if isinstance(steps, list) else {}
        stop = None
        for ln in split_lines(body):
            row = rec.row(at)
            at += 1
            if ln.form == "given" and ln.name and ln.rest.startswith("py:") and row.get("tool") == "set" \
                    and row.get("ok") and isinstance((row.get("content") or {}).get("value"), dict):
                tagged = row["content"]["value"]
                step = shown.get(ln.lineno)
                held = _with_display(ln.name, tagged, step.get("text") if isinstance(step, dict) else None,
                                     opts.digits)
                if "unit" in row["content"]:  # the display unit a pint Quantity gave it (issue 18)
                    held = replace(held, unit=row["content"]["unit"])
                values.setdefault(ln.name, []).append(held)
                if held.display is not None:
                    values.displayed.append(f"{ln.name} = {held.display[0]}")
            if not row.get("ok", True):
                tool = {"given": "set", "show": "get", "unknown": "eval"}.get(ln.form)
                # a py: line refused for the kernel's value (a str, a NaN), which the record does not hold,
                # is refused again as recorded
                py_refused = ln.form == "given" and ln.rest.startswith("py:")
                if (rules < RULES or py_refused) and tool is not None and row.get("tool") == tool \
                        and isinstance(row.get("content"), dict):
                    values.refusals[(_i, ln.lineno)] = row["content"]
                stop = "refused"
                break
            if ln.form == "end":
                stop = "end"
                break
        if stop == "refused" or (stop is None and not opts.cont):
            at += 1  # the closing row written at the cell's end
    return values


def _with_display(name: str, tagged: dict, text: object, digits: int) -> Recorded:
    """A ``py:`` value from its record; when its output showed it in a pint Quantity's own unit
    (``f = 50 Hz``), that display, read back with pint and checked against the recorded value."""
    if not isinstance(text, str) or not text.startswith(f"{name} = "):
        return Recorded(tagged)
    shown = text[len(name) + 3:]
    try:
        value = parse_tagged(tagged)
        if value_text(value, digits) == shown:
            return Recorded(tagged)
        number, _, unit = shown.partition(" ")
        back = U.read_shown(shown)
        if back is None or not _close(back[0], value.mag, 1e-12) or tuple(back[1]) != tuple(value.sig.dim):
            return Recorded(tagged)
        info = U.parse_unit(U.unit_from_display(unit))
        mag = int(number) if re.fullmatch(r"[+-]?[0-9]+", number) else float(number)
        q = U.registry().Quantity(mag, info.text)
        return Recorded(tagged, (f"{q:~P}", f"{q:~L}"), info.radians)
    except (EngineError, U.UnitError, ValueError, TypeError):
        return Recorded(tagged)


# --------------------------------------------------------------------------- rows


def _norm(row: dict) -> dict:
    row = {k: v for k, v in row.items() if k != "at"}
    if row.get("tool") in ("record_start", "record_end") and isinstance(row.get("content"), dict):
        row["content"] = {k: v for k, v in row["content"].items() if k != "record"}
    return row


_ID = re.compile(rb',?"record":"[^"\\]*"')
_START_END = (b'"tool":"record_start"', b'"tool":"record_end"')


def _integer(text: bytes) -> bool:
    """``-?[0-9]+``, as JSON writes an integer."""
    return (text[1:] if text[:1] == b"-" else text).isdigit()


def _without_at(line: bytes) -> bytes:
    """A record line with its ``"at":T,`` taken out (``{"seq":N,"at":T,`` begins every line
    :func:`dumps_line` writes); any other line as it is."""
    if line.startswith(b'{"seq":'):
        at = line.find(b',"at":', 7, 40)
        end = line.find(b",", at + 6) if at > 0 else -1
        if end > 0 and _integer(line[7:at]) and _integer(line[at + 6:end]):
            return line[:at + 1] + line[end + 1:]
    return line


def _same_line(a: bytes, b: bytes) -> bool:
    """Two record lines as :func:`dumps_line` writes them, equal but for ``at`` and the record
    id of a start or closing row (a quick test; lines that differ are decoded and compared)."""
    a, b = _without_at(a), _without_at(b)
    if a == b:
        return True
    if any(t in a for t in _START_END):
        return _ID.sub(b"", a) == _ID.sub(b"", b)
    return False


def _row_differences(got: list[bytes], held: _HeldRecord, labels: list[str]) -> list[str]:
    problems = []
    rid = held.id
    for n in range(max(len(got), len(held.lines))):
        if n < len(got) and n < len(held.lines) and _same_line(got[n], held.lines[n]):
            continue
        a = _norm(json.loads(got[n])) if n < len(got) else None
        b = _norm(held.row(n)) if n < len(held.lines) else None
        if a == b:
            continue
        where = labels[n] if n < len(labels) else f"after the cell's last line (seq {n + 1})"
        if a is None and b is not None:
            problems.append(f"record {rid} holds {_describe(b)} at seq {b.get('seq')}, which no line of the cell "
                            "writes (a line was removed from the cell, or the record is not these lines')")
        elif a is not None and b is None:
            problems.append(f"{where} writes {_describe(a)}, which record {rid} does not hold (a line was added to "
                            "the cell after it ran)")
        elif a is not None and b is not None:
            said, held_says = _describe(a), _describe(b)
            if said == held_says:  # the difference is in what the description leaves out (an eval's inputs)
                said, held_says = _difference(a, b)
            problems.append(f"{where}: the cell gives {said}, but record {rid} holds {held_says} "
                            f"(seq {b.get('seq')}); the cell source or the record changed after the run: run the "
                            "cell again if you edited it")
        if len(problems) == 3:
            break
    return problems


def _describe(row: dict) -> str:
    c: dict = row["content"] if isinstance(row.get("content"), dict) else {}
    tool = row.get("tool")
    if not row.get("ok"):
        return f"a refused {tool} ({c.get('code')}: {str(c.get('error'))[:120]})"
    if tool == "set":
        v = c.get("value")
        return f"delete {c.get('name')}" if v is None else f"{c.get('name')} = {_value(v)}"
    if tool == "eval":
        return f"{c.get('target')} = {c.get('formula')} = {_value(c.get('result'))}"
    if tool == "get":
        return f"show {c.get('name')} = {_value(c.get('value'))}" if c.get("value") is not None \
            else f"show {c.get('name')}"
    if tool == "record_start":
        return f"the title {c.get('title')!r}"
    if tool == "record_message":
        return f"a note {c.get('text')!r}"
    if tool == "record_end":
        return f"the closing {c['text']!r}" if isinstance(c.get("text"), str) else "the closing (no text)"
    return json.dumps(row, ensure_ascii=False)[:160]


def _difference(a: dict, b: dict) -> tuple[str, str]:
    """The first field in which two rows differ, shown on each side."""
    ca: dict = a["content"] if isinstance(a.get("content"), dict) else {}
    cb: dict = b["content"] if isinstance(b.get("content"), dict) else {}
    for key in sorted(set(ca) | set(cb)):
        if ca.get(key) != cb.get(key):
            x, y = ca.get(key), cb.get(key)
            if isinstance(x, dict) and isinstance(y, dict):
                sub = next((k for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k)), None)
                if sub is not None:
                    return (f"{key}.{sub} = {json.dumps(x.get(sub), ensure_ascii=False)[:120]}",
                            f"{key}.{sub} = {json.dumps(y.get(sub), ensure_ascii=False)[:120]}")
            return f"{key} = {json.dumps(x, ensure_ascii=False)[:120]}", f"{key} = {json.dumps(y, ensure_ascii=False)[:120]}"
    return json.dumps(a, ensure_ascii=False)[:160], json.dumps(b, ensure_ascii=False)[:160]


def _value(tagged: Any) -> str:
    try:
        return value_text(parse_tagged(tagged), 6)
    except (EngineError, ValueError, TypeError, KeyError):
        return json.dumps(tagged, ensure_ascii=False)[:120]


# --------------------------------------------------------------------------- display


def _check_display(i: int, data: dict, meta: dict, outcome: CellOutcome, rid: str, sidecar: Path
                   ) -> tuple[list[Finding], bool]:
    """Check 7 for one displayed record output: the findings, and whether it is exactly what
    the record renders today (every mimetype)."""
    where = f"cell {i + 1}"
    plain = _text(data.get("text/plain"))
    lines = plain.split("\n") if isinstance(plain, str) else []
    outcome.notices = outcome.notices + [m.group(1) for ln in lines if (m := _SET_ASIDE.match(ln))
                                         and _set_aside_exists(sidecar, m.group(2))]
    now, _ = bundle(outcome, {})
    extra = [m for m in data if m not in now]
    if extra:
        return [Finding(CHECK, False, where, f"its output carries {extra[0]}, which %%reckon never displays")], False
    differing = [m for m in now if not _same(data.get(m), now[m])]
    if not differing:
        return [Finding(CHECK, True, where, f"its lines are record {rid}'s rows, and it shows what the record "
                                            f"renders (renderer {RENDERER_VERSION})")], True
    made_by = meta.get("renderer")
    if made_by == RENDERER_VERSION:
        mime = differing[0]
        if mime == "text/plain" and isinstance(plain, str):
            a, b = plain.split("\n"), now[mime].split("\n")
            n = next((k for k in range(max(len(a), len(b)))
                      if (a[k] if k < len(a) else None) != (b[k] if k < len(b) else None)), 0)
            shown = a[n].strip() if n < len(a) else "nothing"
            renders = b[n].strip() if n < len(b) else "nothing"
            return [Finding(CHECK, False, where, f"shows {shown!r} where record {rid} renders {renders!r} "
                                                 "(the output was edited after the run)")], False
        return [Finding(CHECK, False, where, f"its {mime} output differs from what record {rid} renders "
                                             "(the output was edited after the run)")], False
    # made by another renderer: each value it shows, in SI, and every number in every mimetype
    version = f"{made_by}" if isinstance(made_by, str) else "a version that did not record its renderer"
    older = f"made by an older version ({version}), compared in SI and number by number"
    values = _shown_values(lines)
    rendered = _shown_values(now["text/plain"].split("\n"))
    for (a_text, a_si, a_tol), (b_text, b_si, b_tol) in zip(values, rendered):
        if a_si is None:
            return [Finding(CHECK, False, where, f"shows {a_text!r}, which cannot be read back as a value; record "
                                                 f"{rid} gives {b_text!r} ({older})")], False
        if b_si is None:
            continue
        if tuple(a_si[1]) != tuple(b_si[1]) or not _close(a_si[0], b_si[0], max(a_tol, b_tol)):
            return [Finding(CHECK, False, where, f"shows {a_text!r} where record {rid} gives {b_text!r} "
                                                 f"({older}: the value or dimension itself differs)")], False
    if any(re.search(r"<script|\son\w+\s*=|javascript:", _text(data.get(m)), re.IGNORECASE)
           for m in ("text/html", "text/markdown")):
        return [Finding(CHECK, False, where, f"its HTML or Markdown holds a script or an event handler, which the "
                                             f"renderer never writes ({older})")], False
    if len(values) != len(rendered):
        return [Finding(CHECK, False, where, f"shows {len(values)} values where record {rid} renders "
                                             f"{len(rendered)} ({older})")], False
    # today's rendering writes its numbers to the cell's digits (trailing zeros dropped: "2" is
    # 2.0000); the numbers of the cell's own lines are exact
    written = 0.5 * 10.0 ** (1 - outcome.digits)
    allowed = sorted({(x, min(tol, written)) for m in now for _t, x, tol in _numbers(_text(now[m]))}
                     | {(x, 1e-12) for st in outcome.steps for _t, x, _tol in _numbers(st.line.source)})
    for mime in now:
        for token, x, tol in _numbers(_text(data.get(mime))):
            if not _near(allowed, x, tol):
                return [Finding(CHECK, False, where, f"its {mime} output shows {token}, a number record {rid} and "
                                                     f"the cell's lines do not give ({older})")], False
    return [Finding(CHECK, True, where, f"{older}: its lines are record {rid}'s rows and every value it shows "
                                        "agrees with the record; its wording was not compared")], False


def _same(shown: object, rendered: object) -> bool:
    """A displayed mimetype's content against today's rendering (text kept as a list of lines
    by nbformat is joined; the record JSON is compared as data)."""
    if isinstance(rendered, str):
        return _text(shown) == rendered
    return shown == rendered


def _text(value: object) -> str:
    """A mimetype's content as one string (nbformat may keep text as a list of lines; the record
    JSON is dumped with sorted keys)."""
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return "".join(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _set_aside_exists(sidecar: Path, name: str) -> bool:
    """A set-aside notice names a record the engine moved aside: it must be one in the sidecar."""
    return bool(re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,120}", name)) and ".." not in name and any(
        (sidecar / folder / f"{name}.jsonl").is_file() for folder in (STALE_DIR, RECORDS_DIR, UNREADABLE_DIR))


_NUMBER = re.compile(r"(?<![\w#.&])(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+|\s?(?:×|\\times)\s?10"
                     r"(?:\^\{[-−]?[0-9]+\}|[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?(?![0-9.])|(?<![\w#.&])[0-9]+(?=[^\x00-\x7f])")
_ANY_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def _numbers(text: str) -> list[tuple[str, float, float]]:
    """Every number written in *text* (``127.25``, ``3.3006×10⁻⁶``, ``3.3006 \\times 10^{-6}``,
    digits of any script), as ``(as written, absolute value, relative tolerance of its digits)``."""
    out = []
    for m in _ANY_DIGITS.finditer(text) if not text.isascii() else ():
        if not m.group().isascii():  # fullwidth or other scripts' digits: never written by the renderer
            out.append((m.group(), float("nan"), 0.0))
    for m in _NUMBER.finditer(text):
        token = m.group()
        parts = re.split(r"\s?(?:×|\\times)\s?10", token)
        mantissa, exponent = parts[0], None
        if len(parts) > 1:
            exponent = U.exponent_from_display(parts[1])
        try:
            value = abs(float(mantissa) * (10.0 ** int(exponent) if exponent else 1.0))
        except (ValueError, OverflowError):
            continue
        digits = len(re.sub(r"[^0-9]", "", re.split(r"[eE]", mantissa)[0]).lstrip("0")) or 1
        # rounding to 1 or 2 digits would hide a change of tens of percent: at most 0.5% either way
        out.append((token, value, min(0.5 * 10.0 ** (1 - min(digits, 15)), 5e-3) + 1e-12))
    return out


def _near(allowed: list[tuple[float, float]], x: float, tol: float) -> bool:
    """Whether *x* (written to relative precision *tol*) is one of the *allowed* ``(value,
    precision)`` pairs (sorted), to the coarser of the two precisions."""
    if x != x:  # NaN: digits the renderer never writes
        return False
    import bisect

    window = max(tol, 1e-4)
    k = bisect.bisect_left(allowed, (x * (1 - window), 0.0))
    while k < len(allowed) and allowed[k][0] <= x * (1 + window) + 1e-300:
        value, precision = allowed[k]
        if abs(value - x) <= max(tol, precision) * max(value, x) + 1e-300:
            return True
        k += 1
    return False


def _shown_values(lines: list[str]) -> list[tuple[str, tuple | None, float]]:
    """``(line, (SI magnitude, dim) or None, relative tolerance)`` for each step line of a
    text/plain display that ends in a value (``... = 0.12725 Ω``)."""
    out = []
    for ln in lines[1:]:
        text = ln.strip()
        if " = " not in text or text.startswith(("(", "✗")):
            continue
        last = text.rsplit(" = ", 1)[1]
        digits = len(re.sub(r"\D", "", re.split(r"[×e]", last.split(" ", 1)[0])[0]).lstrip("0")) or 1
        out.append((text, U.read_shown(last), 0.5 * 10.0 ** (1 - min(digits, 15)) + 1e-12))
    return out


def _close(a: Any, b: Any, rel: float) -> bool:
    try:
        x, y = np.asarray(a, dtype=complex), np.asarray(b, dtype=complex)
        if x.shape != y.shape:
            return False
        scale = np.maximum(np.abs(x), np.abs(y))
        return bool(np.all(np.abs(x - y) <= rel * scale + 1e-300)) and not np.any(np.isnan(x))
    except (TypeError, ValueError):
        return False if not (isinstance(a, float) and isinstance(b, float)) else math.isclose(a, b, rel_tol=rel)
