"""Plain-text views of records, shared by ``%reckon list|show`` and ``dsh-notebook records``
(spec: reckoner.md section 2; storage.md)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..reckoner import list_records
from ..reckoner import shown_units as SU
from ..reckoner.display import value_text
from ..reckoner.errors import EngineError
from ..reckoner.records import Record
from ..reckoner.values import parse_tagged

if TYPE_CHECKING:
    from nbformat import NotebookNode


def _width(text: str) -> int:
    """Columns a string takes in a terminal (CJK ideographs take two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def table(rows: list[tuple], head: tuple) -> str:
    """A left-aligned text table with a rule under the header."""
    widths = [max(_width(str(r[i])) for r in rows + [head]) for i in range(len(head))]

    def fmt(r: tuple[Any, ...]) -> str:
        return "  ".join(str(c) + " " * (w - _width(str(c))) for c, w in zip(r, widths)).rstrip()

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows])


_SUMMARY_KEYS = ("id", "title", "status", "opened", "closed", "steps", "refused")


def current_records(nb: NotebookNode) -> list[str]:
    """The ids of the records notebook *nb* (as nbformat reads it) names, in notebook order: a
    ``%%reckon`` output (any status) or a ``%%chat`` bundle's records. These are its current
    records; any other record in its sidecar is history, superseded by a re-run (issue 15)."""
    return list(dict.fromkeys(rid for cell in nb.cells for rid in cell_records(cell)))


def cell_records(cell: dict[str, Any]) -> list[str]:
    """The record ids one cell's outputs name: any output's ``metadata.dsh.record_id`` (with or
    without the record mimetype beside it) and a chat bundle's ``records``."""
    found: list[str] = []
    for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
        meta = o.get("metadata") if isinstance(o, dict) else None
        dsh = meta.get("dsh") if isinstance(meta, dict) else None
        if not isinstance(dsh, dict):
            continue
        if isinstance(dsh.get("record_id"), str) and dsh["record_id"]:
            found.append(dsh["record_id"])
        if isinstance(dsh.get("records"), list) and "application/vnd.dsh.session+json" in (o.get("data") or {}):
            found += [r for r in dsh["records"] if isinstance(r, str) and r]
    return found


def current_records_of(notebook: str | os.PathLike[str]) -> list[str] | None:
    """:func:`current_records` of the notebook file at *notebook*, or ``None`` when there is no
    readable notebook there (then nothing is called superseded)."""
    from pathlib import Path

    from .seal import UnreadableNotebook, read_notebook

    path = Path(notebook)
    if not path.is_file():
        return None
    try:
        return current_records(read_notebook(path))
    except (UnreadableNotebook, OSError):
        return None


def record_list(home: str | os.PathLike[str], current: list[str] | set[str] | None = None) -> list[dict]:
    """Every record in an engine folder, as ``dsh-notebook records list``, ``%reckon list`` and
    the server's ``/dsh/api/records`` show them: ``{id, title, status, opened, closed, steps,
    refused, current}`` (times in ms since the epoch; ``status`` closed, refused (the
    calculation stopped at a refused call), open, set aside or unreadable, these with ``error``
    and ``None`` for what could not be read).

    With *current* (the ids its notebook names, :func:`current_records`) each record says
    whether it is current (``current`` true) or superseded (false), and the current ones come
    first, in the notebook's order, then the open one, then the superseded, set-aside and
    unreadable ones. Without it (a folder with no notebook) ``current`` is ``None`` and closed
    records come oldest first, then the open one, the set-aside and the unreadable ones."""
    info = list_records(home)
    found = info["closed"] + ([info["open"]] if info["open"] else []) + info["set_aside"]
    out = []
    for s in found:
        row = {k: s[k] for k in _SUMMARY_KEYS}
        if row["status"] == "closed" and s.get("ended_in_refusal"):
            row["status"] = "refused"
        out.append(row)
    out += [{"id": u["id"], "title": None, "status": "unreadable", "opened": None, "closed": None, "steps": None,
             "refused": None, "error": u["reason"]} for u in info["unreadable"]]
    if current is None:
        for row in out:
            row["current"] = None
        return out
    order = {rid: n for n, rid in enumerate(current)}
    for row in out:
        row["current"] = row["id"] in order or row["status"] == "open"

    def rank(row: dict) -> tuple:
        if row["id"] in order:
            return (0, order[row["id"]])
        return ({"open": 1, "set aside": 3, "unreadable": 4}.get(row["status"], 2), 0)

    return sorted(out, key=rank)  # stable: the superseded keep their oldest-first order


def records_table(home: str | os.PathLike[str], current: list[str] | set[str] | None = None) -> str | None:
    """Every record in an engine folder: id, title, status, steps, refused and, with *current*
    (see :func:`record_list`), whether it is current or superseded (``None`` if none)."""
    listed = record_list(home, current)
    rows = [(r["id"], r["error"], r["status"], "", "") if r["status"] == "unreadable" else
            (r["id"], r["title"], r["status"], r["steps"], r["refused"]) for r in listed]
    if not rows:
        return None
    if current is None:
        return table(rows, ("id", "title", "status", "steps", "refused"))
    rows = [(*row, "current" if r["current"] else "superseded") for row, r in zip(rows, listed)]
    return table(rows, ("id", "title", "status", "steps", "refused", "use"))


def _shown(stored: object, unit: object) -> str:
    """A row's value as the notebook shows it (``2.25 kN·m``: its display unit, issue 18; a
    point on its scale; else SI), or as stored when it cannot be read (``None``: deleted)."""
    if stored is None:
        return "(deleted)"
    try:
        v = parse_tagged(stored)
    except EngineError:
        return str(stored)
    return value_text(v, 6, SU.from_json(unit, v.sig.dim) if v.sig.kind != "object" else None)


def record_text(rec: Record) -> str:
    """One record's rows, one line each; refused rows marked with ✗."""
    lines = [f"{rec.title}  [{rec.id}, {'closed' if rec.closed else 'open'}]"]
    for r in rec.rows:
        c = r.get("content") or {}
        mark = "  " if r.get("ok") else "✗ "
        if r.get("tool") == "search":
            mark = "  " if r.get("ok") else "? "
            answer = (c.get("synthesis") or {}).get("answer") if r.get("ok") else c.get("code")
            desc = f"{c.get('question')} -> {c.get('outcome')}" + (f": {answer}" if answer else "")
        elif not r.get("ok"):
            desc = f"{c.get('code')}: {c.get('error')}"
        elif r.get("tool") == "set":
            desc = f"{c.get('name')} = {_shown(c.get('value'), c.get('unit'))}"
        elif r.get("tool") == "eval":
            desc = f"{c.get('target')} = {c.get('formula')} -> {_shown(c.get('result'), c.get('unit'))}"
        elif r.get("tool") == "get":
            desc = f"read {c.get('name')}: {_shown(c.get('value'), c.get('unit'))}"
        elif r.get("tool") == "record_message":
            desc = ("(hidden) " if c.get("hide") else "") + str(c.get("text"))
        elif r.get("tool") == "record_end":
            desc = "end" + (f": {c['text']}" if c.get("text") else "")
        else:
            desc = f"start: {c.get('title')}"
        lines.append(f"{mark}{r.get('seq'):>3} {r.get('tool')!s:<14} {desc}")
    for line, reason in rec.problems:
        lines.append(f"! line {line}: {reason}")
    return "\n".join(lines)
