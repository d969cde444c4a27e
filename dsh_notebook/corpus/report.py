"""What a person reads after a corpus command (issue 23, item 3).

* :func:`results_table`: one row per notebook: notebook, status, records, findings, time (and
  the attempts when a task was retried after its worker died).
* :func:`failures_text`: every notebook that failed, named with its first findings (a failed
  cell's last error lines for ``run``; the first failing checks for ``verify``).
* :func:`as_json`: the same for machines (``--json``): every result without the notebooks'
  contents, ``ok``, and for ``verify`` every finding of every notebook.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

#: The status of a notebook that passed, per command.
PASSED = {"run": "ok", "verify": "verified"}
#: Result fields kept out of the table and the JSON (the notebooks as read and as run).
BULKY = ("started", "executed")


def passed(result: dict[str, Any]) -> bool:
    return result["status"] == PASSED.get(result["command"], "ok")


def shown_path(notebook: str, cwd: Path | None = None) -> str:
    """*notebook* relative to *cwd* (the current folder) when it is inside it, :func:`printable`:
    a file name can never draw a row or a summary of its own on the terminal."""
    try:
        rel = os.path.relpath(notebook, cwd or Path.cwd())
    except ValueError:  # another drive
        rel = ".."
    shown = notebook if rel.startswith("..") else rel
    return printable(shown)


def printable(text: str) -> str:
    """*text* with each character that is not printable (a newline, an escape sequence) shown as
    its Python escape: what a file name or a finding holds never moves the terminal's cursor."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _findings_cell(r: dict[str, Any]) -> str:
    if r["command"] == "verify" and r["status"] in ("verified", "failed"):
        n = r.get("failing", len(r["findings"]))
        if not n and r.get("skipped"):  # e.g. a %%reckon cell that was never run: nothing to check
            first = printable(f"{len(r['skipped'])} skipped: {r['skipped'][0]}")
            return first if len(first) <= 60 else first[:59] + "…"
        return "none" if not n else f"{n} failing"
    if passed(r):
        return f"record left open: {r['left_open']}" if r.get("left_open") else "none"
    first = r["findings"][0] if r["findings"] else r["status"]
    if r["command"] == "run" and r["status"] == "failed" and not first.startswith("its worker"):
        return "a cell failed"
    first = printable(first)
    return first if len(first) <= 60 else first[:59] + "…"


def results_table(results: list[dict[str, Any]], cwd: Path | None = None) -> str:
    """The results as a text table (notebook, status, records, findings, time)."""
    from ..artifact.records import table

    rows = []
    for r in results:
        status = r["status"] + (f" ({r['attempts']} attempts)" if r.get("attempts", 1) > 1 else "")
        took = "" if r.get("time") is None else f"{r['time']:.{2 if r['time'] < 1 else 1}f} s"
        rows.append((shown_path(r["notebook"], cwd), status, r.get("records", 0), _findings_cell(r), took))
    return table(rows, ("notebook", "status", "records", "findings", "time"))


def failures_text(results: list[dict[str, Any]], cwd: Path | None = None) -> str:
    """Every notebook that did not pass with its first findings, one block each ('' when none)."""
    blocks = []
    for r in results:
        if passed(r):
            continue
        lines = r["findings"][-12:] if r["command"] == "run" and r["status"] == "failed" else r["findings"]
        blocks.append(f"{shown_path(r['notebook'], cwd)}: {r['status']}\n" + "\n".join(f"  {printable(x)}" for x in lines))
    return "\n".join(blocks)


def summary(results: list[dict[str, Any]], kind: str, elapsed: float, where: str) -> str:
    """``3 notebooks: 2 verified, 1 failed in 12.3 s (2 local workers)``; a ``run`` that kept
    nothing says so."""
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    parts = ", ".join(f"{n} {s}" for s, n in counts.items())
    said = f"{len(results)} notebook(s): {parts or 'none'} in {elapsed:.1f} s ({where})"
    if kind == "run" and results and not any(r.get("kept") for r in results):
        said += "; nothing saved: each ran on a temporary copy of its sidecar (--save keeps and signs the outputs)"
    return said


def as_json(results: list[dict[str, Any]], kind: str, elapsed: float, where: str) -> dict[str, Any]:
    """``{command, ok, where, time, notebooks: [result...]}`` (results without the notebooks' contents)."""
    return {"command": kind, "ok": all(passed(r) for r in results), "where": where, "time": round(elapsed, 3),
            "notebooks": [{k: v for k, v in r.items() if k not in BULKY} for r in results]}
