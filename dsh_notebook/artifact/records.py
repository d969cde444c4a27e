"""Plain-text views of records, shared by ``%reckon list|show`` and ``dsh-notebook records``
(spec: reckoner.md section 2; storage.md)."""

from __future__ import annotations

from ..reckoner import list_records
from ..reckoner.records import Record


def _width(text: str) -> int:
    """Columns a string takes in a terminal (CJK ideographs take two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def table(rows: list[tuple], head: tuple) -> str:
    """A left-aligned text table with a rule under the header."""
    widths = [max(_width(str(r[i])) for r in rows + [head]) for i in range(len(head))]

    def fmt(r):
        return "  ".join(str(c) + " " * (w - _width(str(c))) for c, w in zip(r, widths)).rstrip()

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows])


_SUMMARY_KEYS = ("id", "title", "status", "opened", "closed", "steps", "refused")


def record_list(home) -> list[dict]:
    """Every record in an engine folder, as ``dsh-notebook records list`` and the server's
    ``/dsh/api/records`` show them: ``{id, title, status, opened, closed, steps, refused}``
    (times in ms since the epoch; ``status`` closed, open, set aside or unreadable), closed
    records oldest first, then the open one, the set-aside ones and the unreadable files (these
    with ``error`` and ``None`` for what could not be read)."""
    info = list_records(home)
    found = info["closed"] + ([info["open"]] if info["open"] else []) + info["set_aside"]
    out = [{k: s[k] for k in _SUMMARY_KEYS} for s in found]
    out += [{"id": u["id"], "title": None, "status": "unreadable", "opened": None, "closed": None, "steps": None,
             "refused": None, "error": u["reason"]} for u in info["unreadable"]]
    return out


def records_table(home) -> str | None:
    """Every record in an engine folder: id, title, status, steps, refused (``None`` if none)."""
    rows = [(r["id"], r["error"], r["status"], "", "") if r["status"] == "unreadable" else
            (r["id"], r["title"], r["status"], r["steps"], r["refused"]) for r in record_list(home)]
    if not rows:
        return None
    return table(rows, ("id", "title", "status", "steps", "refused"))


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
            desc = f"{c.get('name')} = {c.get('value')}"
        elif r.get("tool") == "eval":
            desc = f"{c.get('target')} = {c.get('formula')} -> {c.get('result')}"
        elif r.get("tool") == "get":
            desc = f"read {c.get('name')}: {c.get('value')}"
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
