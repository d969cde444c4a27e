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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..reckon import units as U
from ..reckon.cell import (
    CellOutcome,
    ReckonSession,
    ReckonUsageError,
    Recorded,
    RecordedValues,
    parse_options,
    run_cell,
    split_lines,
)
from ..reckon.render import bundle
from ..reckoner import MemoryEngine
from ..reckoner.display import value_text
from ..reckoner.errors import EngineError
from ..reckoner.records import RECORDS_DIR
from ..reckoner.values import parse_tagged
from ..version import RENDERER_VERSION
from .paths import sidecar_for
from .seal import MIME_RECORD, Finding, _is_file_id

CHECK = 7
_SET_ASIDE = re.compile(r"^  \((a record left open by an earlier kernel was set aside: \S+; see %reckon recover)\)$")


def reckon_cells(nb) -> list[tuple[int, str, str, dict | None, dict | None]]:
    """``(cell index, magic line after %%reckon, body, displayed data, output metadata.dsh)``
    for every ``%%reckon`` code cell; the last two are None for a cell whose output names no
    record (not run, or ``--quiet``)."""
    found: list[tuple[int, str, str, dict | None, dict | None]] = []
    for i, cell in enumerate(nb.cells):
        src = cell.get("source", "")
        if cell.get("cell_type") != "code" or not isinstance(src, str):
            continue
        head, _, body = src.lstrip().partition("\n")
        if not head.startswith("%%reckon") or (len(head) > 8 and not head[8].isspace()):
            continue
        for o in cell.get("outputs", []):
            data = o.get("data") if isinstance(o, dict) else None
            meta = o.get("metadata") if isinstance(o, dict) else None
            dsh = meta.get("dsh") if isinstance(meta, dict) else None
            if isinstance(data, dict) and MIME_RECORD in data and isinstance(dsh, dict) \
                    and isinstance(dsh.get("record_id"), str):
                found.append((i, head[8:], body, data, dsh))
                break
        else:
            found.append((i, head[8:], body, None, None))
    return found


@dataclass
class OutputsCheck:
    """What check 7 found: ``findings``; ``replayed``, the ids of records whose every row the
    cells' lines wrote again identically (so they replay: check 2 need not evaluate them a
    second time); ``shown``, the indices of cells whose displayed record output is exactly what
    the record renders (so it holds nothing the cell source and the record do not: check 4
    need not scan it)."""

    findings: list[Finding] = field(default_factory=list)
    replayed: set[str] = field(default_factory=set)
    shown: set[int] = field(default_factory=set)


def check_outputs(nb, path: Path) -> list[Finding]:
    """Check 7 over the notebook at *path* (read as *nb*): one finding per ``%%reckon`` cell
    (or chain of ``--continue`` cells) that names a record; none when there are no such cells.
    A record check 1 or 2 cannot read is left to them (reported there)."""
    return outputs_check(nb, path).findings


def outputs_check(nb, path: Path) -> OutputsCheck:
    """Check 7 with what it proved (:class:`OutputsCheck`), for ``verify`` to spare checks 2
    and 4 work already done."""
    result = OutputsCheck()
    records = sidecar_for(path) / RECORDS_DIR
    chains: list[list] = []
    quiet: list = []  # --quiet --continue cells show nothing: the next cell's record holds their lines
    for item in reckon_cells(nb):
        if item[4] is None:
            try:
                quiet = [*quiet, item] if parse_options(item[1]).cont else []
            except ReckonUsageError:
                quiet = []
            continue
        if chains and not quiet and chains[-1][-1][4]["record_id"] == item[4]["record_id"] \
                and chains[-1][-1][4].get("status") == "open":
            chains[-1].append(item)
        else:
            chains.append([*quiet, item])
        quiet = []
    if not chains:
        return result
    session = ReckonSession(MemoryEngine())
    for chain in chains:
        rid = chain[-1][4]["record_id"]
        if not _is_file_id(rid) or not (records / f"{rid}.jsonl").is_file():
            continue  # check 1 names it
        try:
            lines = (records / f"{rid}.jsonl").read_bytes().split(b"\n")
        except OSError:
            continue  # check 2 names it
        _check_chain(session, chain, _HeldRecord(rid, [ln + b"\n" for ln in lines[1:] if ln.strip()]), result)
    return result


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


def _where(chain) -> str:
    first, last = chain[0][0] + 1, chain[-1][0] + 1
    return f"cell {first}" if first == last else f"cells {first}-{last}"


def _check_chain(session: ReckonSession, chain, rec, result: OutputsCheck) -> None:
    eng = session.engine
    assert isinstance(eng, MemoryEngine)
    if eng.open_record is not None:
        eng.record_end()
    session.continuing = False
    recorded = _recorded_values(chain, rec)
    outcomes: list[tuple[int, CellOutcome]] = []
    labels: list[str] = []
    for i, head, body, _data, _meta in chain:
        try:
            opts = parse_options(head)
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
    for (i, _h, _b, data, meta), (_, outcome) in zip(chain, outcomes):
        if data is not None:
            found = _check_display(i, data, meta, outcome, rec.id)
            result.findings.extend(found)
            if all(f.ok for f in found) and meta.get("renderer") == RENDERER_VERSION:
                result.shown.add(i)


# --------------------------------------------------------------------------- py: values


def _recorded_values(chain, rec) -> RecordedValues:
    """The value each ``given NAME = py:...`` line of the chain read, from the record's rows,
    lined up with the cells' lines (one row per line after the start row, a closing row at a
    cell's end)."""
    values = RecordedValues()
    if not any("py:" in body for _i, _head, body, _d, _m in chain):
        return values
    at = 1
    for _i, head, body, data, _meta in chain:
        try:
            opts = parse_options(head)
        except ReckonUsageError:
            return values
        shown = {s.get("line"): s for s in (data or {}).get(MIME_RECORD, {}).get("steps", [])
                 if isinstance(s, dict)} if isinstance((data or {}).get(MIME_RECORD), dict) else {}
        stop = None
        for ln in split_lines(body):
            row = rec.row(at)
            at += 1
            if ln.form == "given" and ln.name and ln.rest.startswith("py:") and row.get("tool") == "set" \
                    and row.get("ok") and isinstance((row.get("content") or {}).get("value"), dict):
                tagged = row["content"]["value"]
                step = shown.get(ln.lineno)
                values.setdefault(ln.name, []).append(
                    _with_display(ln.name, tagged, step.get("text") if isinstance(step, dict) else None, opts.digits))
            if not row.get("ok", True):
                stop = "refused"
                break
            if ln.form == "end":
                stop = "end"
                break
        if stop == "refused" or (stop is None and not opts.cont):
            at += 1  # the closing row written at the cell's end
    return values


def _with_display(name: str, tagged: dict, text, digits: int) -> Recorded:
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
        info = U.parse_unit(re.sub(r"[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+", lambda m: "^" + m.group().translate(
            str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")), unit))
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


_AT = re.compile(rb'^\{"seq":(-?[0-9]+),"at":-?[0-9]+,')
_ID = re.compile(rb',?"record":"[^"\\]*"')
_START_END = (b'"tool":"record_start"', b'"tool":"record_end"')


def _same_line(a: bytes, b: bytes) -> bool:
    """Two record lines as :func:`dumps_line` writes them, equal but for ``at`` and the record
    id of a start or closing row (a quick test; lines that differ are decoded and compared)."""
    a, b = _AT.sub(rb'{"seq":\1,', a, count=1), _AT.sub(rb'{"seq":\1,', b, count=1)
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
            problems.append(f"{where}: the cell gives {_describe(a)}, but record {rid} holds {_describe(b)} "
                            f"(seq {b.get('seq')}); the cell source or the record changed after the run")
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
        return f"show {c.get('name')}"
    if tool == "record_start":
        return f"the title {c.get('title')!r}"
    if tool in ("record_message", "record_end"):
        return f"{'a note' if tool == 'record_message' else 'the closing'} {c.get('text')!r}"
    return json.dumps(row, ensure_ascii=False)[:160]


def _value(tagged) -> str:
    try:
        return value_text(parse_tagged(tagged), 6)
    except (EngineError, ValueError, TypeError, KeyError):
        return json.dumps(tagged, ensure_ascii=False)[:120]


# --------------------------------------------------------------------------- display


def _check_display(i: int, data: dict, meta: dict, outcome: CellOutcome, rid: str) -> list[Finding]:
    where = f"cell {i + 1}"
    plain = data.get("text/plain")
    plain = "".join(plain) if isinstance(plain, list) else plain
    lines = plain.split("\n") if isinstance(plain, str) else []
    outcome.notices = outcome.notices + [m.group(1) for ln in lines if (m := _SET_ASIDE.match(ln))]
    now, _ = bundle(outcome, {})
    made_by = meta.get("renderer")
    if made_by == RENDERER_VERSION:
        for mime in list(now) + [m for m in data if m not in now]:
            if mime not in now:
                return [Finding(CHECK, False, where, f"its output carries {mime}, which %%reckon never displays")]
            have = data.get(mime)
            have = "".join(have) if isinstance(have, list) else have
            if have == now[mime]:
                continue
            if mime == "text/plain" and isinstance(have, str):
                a, b = have.split("\n"), now[mime].split("\n")
                n = next((k for k in range(max(len(a), len(b)))
                          if (a[k] if k < len(a) else None) != (b[k] if k < len(b) else None)), 0)
                shown = a[n].strip() if n < len(a) else "nothing"
                renders = b[n].strip() if n < len(b) else "nothing"
                return [Finding(CHECK, False, where, f"shows {shown!r} where record {rid} renders {renders!r} "
                                                     "(the output was edited after the run)")]
            return [Finding(CHECK, False, where, f"its {mime} output differs from what record {rid} renders "
                                                 "(the output was edited after the run)")]
        return [Finding(CHECK, True, where, f"its lines are record {rid}'s rows, and it shows what the record "
                                            f"renders ({RENDERER_VERSION})")]
    # made by another renderer: values and dimensions, in SI
    version = f"{made_by}" if isinstance(made_by, str) else "a version that did not record its renderer"
    values = _shown_values(lines)
    rendered = _shown_values(now["text/plain"].split("\n"))
    differs = []
    for (a_text, a_si, a_tol), (b_text, b_si, b_tol) in zip(values, rendered):
        if a_si is None or b_si is None:
            continue
        if tuple(a_si[1]) != tuple(b_si[1]) or not _close(a_si[0], b_si[0], max(a_tol, b_tol)):
            differs.append(f"shows {a_text!r} where record {rid} gives {b_text!r}")
    if len(values) != len(rendered):
        differs.append(f"shows {len(values)} values where record {rid} renders {len(rendered)}")
    if differs:
        return [Finding(CHECK, False, where, f"{differs[0]} (compared in SI: made by an older version, {version}, "
                                             "but the value or dimension itself differs)")]
    return [Finding(CHECK, True, where, f"made by an older version ({version}): its lines are record {rid}'s rows "
                                        "and every value it shows agrees with the record in SI; its wording was not "
                                        "compared")]


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


def _close(a, b, rel: float) -> bool:
    try:
        x, y = np.asarray(a, dtype=complex), np.asarray(b, dtype=complex)
        if x.shape != y.shape:
            return False
        scale = np.maximum(np.abs(x), np.abs(y))
        return bool(np.all(np.abs(x - y) <= rel * scale + 1e-300)) and not np.any(np.isnan(x))
    except (TypeError, ValueError):
        return False if not (isinstance(a, float) and isinstance(b, float)) else math.isclose(a, b, rel_tol=rel)
