"""Rendering a ``%%reckon`` cell: LaTeX, Markdown, HTML and plain text, plus the record
bundle (spec: reckoner.md section 2 "Rendering"; storage.md "What goes into the notebook").

* Each step shows the formula, the formula with the values substituted, and the result,
  in SI symbols (``Ω``, ``N``, ``Pa``) or the requested unit; ``s⁻¹`` is never written Hz.
* A ``given`` shows in the unit it was written in; refused lines show in red with their
  code and message, followed by the lines of the cell that were not run (issue 17).
* The HTML view is drawn by an autoescaped Jinja2 template (``view.record_html``, issue 22,
  item 3); the other mimetypes are built here.
* Visible output is deterministic (no ids, times or hashes); those go into the output's
  ``metadata.dsh`` so re-run notebooks compare equal under nbval.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..formats import latex_text, markdown_text
from ..reckoner import grammar as G
from ..reckoner import shown_units as SU
from ..reckoner.display import (
    array_items,
    array_latex,
    formula_latex,
    formula_views,
    name_latex,
    num_latex,
    num_text,
    value_latex,
    value_text,
    value_views,
)
from ..reckoner.values import Value
from ..version import RENDERER_VERSION, __version__
from . import units as U
from .cell import CellOutcome, Step
from .view import record_html

MIME_RECORD = "application/vnd.dsh.record+json"
# --------------------------------------------------------------------------- steps


def _given_display(st: Step, digits: int) -> tuple[str, str]:
    g = st.given
    name = st.line.name
    # a given line that ran names a slot, holds its Given and wrote a value (cell._run_line)
    assert g is not None and name is not None and st.result is not None
    if g.display is not None:
        return g.display[0], rf"{name_latex(name)} = {g.display[1]}"
    if g.unit is not None and not g.value_text.startswith("py:"):
        text = f"{g.value_text} {U.unit_pretty(g.unit.text)}"
        latex = rf"{name_latex(name)} = {_value_text_latex(g.value_text)}\,{U.unit_latex(g.unit.text)}"
        d = max(digits, g.digits)  # never drop a digit the person typed
        if st.unit:  # the unit as written, in LaTeX like every other unit of the output (issue 18)
            latex = rf"{name_latex(name)} = {_value_text_latex(g.value_text)}\,{SU.latex(st.unit)}"
        if (g.unit.factor != 1.0 or g.unit.offset) and not (g.unit.offset and st.result.sig.temp == g.unit.temp):
            si = SU.coherent(st.unit) if st.unit else None  # in SI, in the person's own quantity: N·m, never J
            text += f" = {value_text(st.result, d, si)}"
            latex += f" = {value_latex(st.result, d, si)}"
        return text, latex
    text = value_text(st.result, digits) if g.value_text.startswith("py:") else g.value_text
    if g.value_text.startswith("py:") or st.result.sig.kind != "scalar":
        return value_text(st.result, digits, st.unit), \
            rf"{name_latex(name)} = {value_latex(st.result, digits, st.unit)}"
    return text, rf"{name_latex(name)} = {_value_text_latex(g.value_text)}"


def _value_text_latex(t: str) -> str:
    """A given value as typed, in LaTeX: a number as a number; one typed with a power of ten
    (``3.3006×10⁻⁶``, ``2*10^3``, ``1.2×10³+4.5×10⁻²j``) as ``3.3006 \\times 10^{-6}``; other
    text (``3+4j``) as text."""
    try:
        x = float(t)
        return num_latex(x, 12)
    except ValueError:
        number = U.read_number(t) if re.search(r"[×xX*·⋅]10", t) else None
        if number is not None:
            return num_latex(number.value, 12)
        return r"\text{" + html.escape(t) + "}"


def _value(st: Step) -> Value:
    """The value an eval or show line that ran wrote or read (cell._run_line sets it)."""
    assert st.result is not None
    return st.result


def _shown(st: Step, digits: int) -> tuple[str, str]:
    """A value shown in the unit a line asked for (``show X in UNIT``, ``X = ... in UNIT``): ``(text, LaTeX)``."""
    v = st.shown
    body = array_items(v, num_text, digits) if isinstance(v, np.ndarray) else num_text(v, digits)
    lbody = array_latex(v, digits) if isinstance(v, np.ndarray) else num_latex(v, digits)
    unit = st.shown_unit or ""
    return f"{body} {U.unit_pretty(unit)}", rf"{lbody}\,{U.unit_latex(unit)}"


_SYMBOLIC: dict[str, str] = {}


def _symbolic_latex(formula: str, tree: G.Node) -> str:
    """A formula's LaTeX without values (the same for every run of the same formula text)."""
    latex = _SYMBOLIC.get(formula)
    if latex is None:
        if len(_SYMBOLIC) > 4096:
            _SYMBOLIC.clear()
        latex = _SYMBOLIC[formula] = formula_latex(tree)
    return latex


def step_rows(out: CellOutcome) -> list[dict]:
    """One dict per step: ``kind``, ``source``, ``text`` (plain), ``latex`` (or None),
    ``ok``, ``code``, ``error``."""
    d = out.digits
    rows = []
    for st in out.steps:
        ln = st.line
        row: dict[str, Any] = {"line": ln.lineno, "source": ln.source, "kind": ln.form, "ok": st.ok,
                               "text": "", "latex": None}
        if not st.ok:
            row["code"] = st.receipt.get("code")
            row["error"] = st.receipt.get("error")
            rows.append(row)
            continue
        if ln.form == "given":
            text, latex = _given_display(st, d)
            row["text"] = f"{ln.name} = {text}"
            row["latex"] = latex
        elif ln.form == "eval":
            assert ln.name is not None  # split_lines names every eval line
            f = st.formula
            res, res_latex = _shown(st, d) if st.shown is not None else value_views(_value(st), d, st.unit)
            if f is not None:
                sym = _symbolic_latex(ln.rest, f.tree)
                latex = rf"{name_latex(ln.name)} = {sym}"
                plain = f"{ln.name} = {ln.rest}"
                if st.inputs:
                    sub_text, sub_latex = formula_views(f.tree, st.inputs, d, st.input_digits, st.roles,
                                                        st.input_units)
                    latex += rf" = {sub_latex}"
                    plain += f" = {sub_text}"
                latex += rf" = {res_latex}"
                row["latex"] = latex
                row["text"] = f"{plain} = {res}"
            else:
                row["text"] = f"{ln.name} = {ln.rest} = {res}"
        elif ln.form == "show":
            assert ln.name is not None  # split_lines names every show line
            digits = ln.digits or d
            if st.shown is not None:
                text, latex = _shown(st, digits)
                row["text"] = f"{ln.name} = {text}"
                row["latex"] = rf"{name_latex(ln.name)} = {latex}"
            else:
                row["text"] = f"{ln.name} = {value_text(_value(st), digits, st.unit)}"
                row["latex"] = rf"{name_latex(ln.name)} = {value_latex(_value(st), digits, st.unit)}"
        elif ln.form in ("note", "note!"):
            row["text"] = ln.rest
        elif ln.form == "delete":
            row["text"] = f"deleted {ln.name}"
        elif ln.form == "end":
            row["text"] = ln.rest or "(record closed)"
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- bundle


def not_run_text(out: CellOutcome) -> str | None:
    """``'lines 5-8 were not run: the cell stops at the first refused line'`` for a cell that
    stopped at a refused line with lines after it (the first and last of them: blank and comment
    lines between are not run either); ``None`` otherwise."""
    if not out.not_run:
        return None
    first, last = out.not_run[0], out.not_run[-1]
    which = f"line {first} was" if first == last else f"lines {first}-{last} were"
    return f"{which} not run: the cell stops at the first refused line"


def refusal_text(out: CellOutcome, with_not_run: bool = True) -> str | None:
    """What the magic's ``ReckonRefused`` says for a refused cell (``verify`` compares a notebook's
    error with it): the refused line, its code and message, and (unless *with_not_run* is False,
    as versions before issue 17 said it) the lines that were not run; ``None`` for a cell that
    was not refused."""
    bad = out.refused
    if bad is None:
        return None
    where = f"line {bad.line.lineno}: {bad.line.source}" if bad.line.lineno else bad.line.source
    said = f"{where} -> {bad.receipt.get('code')}: {bad.receipt.get('error')}"
    rest = not_run_text(out) if with_not_run else None
    return f"{said}\n{rest[0].upper()}{rest[1:]}." if rest else said


def bundle(out: CellOutcome, metadata: dict) -> tuple[dict, dict]:
    """``(data, metadata)`` for ``display``: text/plain, text/markdown, text/html,
    text/latex and the record mimetype (deterministic), with ``metadata.dsh`` volatile."""
    rows = step_rows(out)
    status_word = {"closed": "closed", "open": "open (continues in the next cell)", "refused": "refused"}[out.status]
    head_plain = f"{out.title} — record {status_word}"
    plain = [head_plain]
    md = [f"**{markdown_text(out.title)}** — record {status_word}", ""]
    shown_rows = []  # the rows the HTML view draws (view.record_html)
    tex = [r"\begin{align*}"]
    for note in out.notices:
        plain.append(f"  ({note})")
        md.append(f"*({markdown_text(note)})*  ")
    for r in rows:
        if r["kind"] == "note!" and r["ok"]:
            continue  # a note for the article writer: recorded, hidden from the record view
        shown_rows.append(r)
        if not r["ok"]:
            msg = f"line {r['line']}: {r['source']}  →  {r['code']}: {r['error']}"
            plain.append(f"  ✗ {msg}")
            md.append(f'<span style="color:#c62828">✗ line {r["line"]}: <code>{html.escape(r["source"])}</code> — '
                      f'<b>{html.escape(r["code"] or "")}</b>: {html.escape(r["error"] or "")}</span>  ')
            tex.append(r"&\text{line " + str(r["line"]) + r" refused: " + latex_text(r["code"] or "") + r"}\\")
            continue
        if r["latex"]:
            plain.append(f"  {r['text']}")
            md.append(f"$${r['latex']}$$")
            tex.append(r["latex"].replace(" = ", " &= ", 1) + r"\\")
        else:
            label = ""
            plain.append(f"  {label}{r['text']}")
            md.append(f"{'*' if r['kind'] != 'end' else '**'}{markdown_text(label + r['text'])}{'*' if r['kind'] != 'end' else '**'}  ")
            tex.append(r"&\text{" + latex_text(label + r["text"]) + r"}\\")
    stopped = not_run_text(out)
    if stopped:
        plain.append(f"  ({stopped})")
        md.append(f"*({markdown_text(stopped)})*  ")
        tex.append(r"&\text{(" + latex_text(stopped) + r")}\\")
    tex.append(r"\end{align*}")
    record: dict[str, Any] = {
        "title": out.title,
        "status": out.status,
        "steps": [
            {k: v for k, v in r.items() if k in ("line", "source", "kind", "ok", "text", "latex", "code", "error")
             and not (k == "latex" and v is None)}
            for r in rows
        ],
    }
    if out.not_run:
        record["not_run"] = list(out.not_run)
    data = {
        "text/plain": "\n".join(plain),
        "text/markdown": "\n".join(md),
        "text/html": record_html(out.title, status_word, out.notices, shown_rows, stopped),
        "text/latex": "\n".join(tex),
        MIME_RECORD: record,
    }
    return data, {"dsh": metadata}


class Located(Protocol):
    """Where the notebook is (``artifact.paths.Location``, a layer above): ``notebook`` is
    ``None`` when unknown, and then ``known`` is false."""

    @property
    def notebook(self) -> Path | None: ...

    @property
    def known(self) -> bool: ...


def record_metadata(out: CellOutcome, location: Located, sha256: str | None) -> dict[str, Any]:
    """The volatile part: ids, paths, hashes, version (never in the visible output)."""
    meta: dict[str, Any] = {
        "record_id": out.record_id,
        "status": out.status,
        "version": __version__,
        "renderer": RENDERER_VERSION,
        "notebook_known": location.known,
    }
    if out.path is not None:
        try:
            rel = out.path.relative_to(location.notebook.parent) if location.notebook is not None else out.path
        except ValueError:
            rel = out.path
        meta["sidecar"] = str(rel)
    if sha256:
        meta["sha256"] = sha256
    return meta
