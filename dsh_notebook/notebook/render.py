"""Rendering a ``%%reckon`` cell: LaTeX, Markdown, HTML and plain text, plus the record
bundle (spec: reckoner.md section 2 "Rendering"; storage.md "What goes into the notebook").

* Each step shows the formula, the formula with the values substituted, and the result,
  in SI symbols (``Ω``, ``N``, ``Pa``) or the requested unit; ``s⁻¹`` is never written Hz.
* A ``given`` shows in the unit it was written in; refused lines show in red with their
  code and message.
* Visible output is deterministic (no ids, times or hashes); those go into the output's
  ``metadata.dsh`` so re-run notebooks compare equal under nbval.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from .. import __version__
from ..reckoner import grammar as G
from ..reckoner.values import Value
from . import units as U
from .reckon import CellOutcome, Step

MIME_RECORD = "application/vnd.dsh.record+json"
_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
    "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega",
    "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi", "Psi", "Omega",
}
_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


# --------------------------------------------------------------------------- numbers


def _mantissa_exp(x: float, digits: int) -> tuple[str, int | None]:
    if x == 0:
        return "0", None
    s = f"{x:.{digits}g}"
    if "e" in s:
        m, e = s.split("e")
        return m, int(e)
    return s, None


def num_text(x, digits: int) -> str:
    """``0.12725``, ``1.68×10⁻⁸``, ``3+4j``, ``-31.83j``."""
    if isinstance(x, complex):
        im_ = num_text(abs(x.imag), digits)
        if x.real == 0:
            return f"{'-' if x.imag < 0 else ''}{im_}j"
        return f"{num_text(x.real, digits)}{'-' if x.imag < 0 else '+'}{im_}j"
    m, e = _mantissa_exp(float(x), digits)
    return m if e is None else f"{m}×10{str(e).translate(_SUPER)}"


def num_latex(x, digits: int) -> str:
    if isinstance(x, complex):
        im_ = num_latex(abs(x.imag), digits)
        if x.real == 0:
            return rf"{'-' if x.imag < 0 else ''}{im_}\,j"
        re_ = num_latex(x.real, digits)
        return rf"\left({re_} {'-' if x.imag < 0 else '+'} {im_}\,j\right)"
    m, e = _mantissa_exp(float(x), digits)
    return m if e is None else rf"{m} \times 10^{{{e}}}"


def _arr_items(a: np.ndarray, f, digits, limit=6) -> str:
    if a.ndim > 1:
        rows = [_arr_items(r, f, digits, limit) for r in a[:limit]]
        more = ", …" if a.shape[0] > limit else ""
        return "[" + ", ".join(rows) + more + "]"
    vals = a.tolist()
    if len(vals) > limit:
        shown = [f(v, digits) for v in vals[:3]] + ["…"] + [f(v, digits) for v in vals[-2:]]
        return "[" + ", ".join(shown) + f"] ({len(vals)} elements)"
    return "[" + ", ".join(f(v, digits) for v in vals) + "]"


def value_text(v: Value, digits: int) -> str:
    if v.sig.kind == "object":
        return "{" + ", ".join(f"{n}: {value_text(Value(v.mag[n], s), digits)}" for n, s in v.sig.fields) + "}"
    unit = U.si_text(v.sig.dim)
    if isinstance(v.mag, np.ndarray):
        body = _arr_items(v.mag, num_text, digits)
    else:
        body = num_text(v.mag, digits)
    return f"{body} {unit}".strip()


def value_latex(v: Value, digits: int) -> str:
    if v.sig.kind == "object":
        return r"\left\{" + r",\ ".join(
            rf"\mathrm{{{n}}}: {value_latex(Value(v.mag[n], s), digits)}" for n, s in v.sig.fields) + r"\right\}"
    unit = U.si_latex(v.sig.dim)
    if isinstance(v.mag, np.ndarray):
        body = _arr_latex(v.mag, digits)
    else:
        body = num_latex(v.mag, digits)
    return f"{body}\\,{unit}" if unit else body


def _arr_latex(a: np.ndarray, digits: int, limit: int = 6) -> str:
    if a.ndim > 1:
        rows = [_arr_latex(r, digits, limit) for r in a[:limit]]
        return r"\left[" + ", ".join(rows) + (r", \ldots" if a.shape[0] > limit else "") + r"\right]"
    vals = a.tolist()
    if len(vals) > limit:
        items = [num_latex(v, digits) for v in vals[:3]] + [r"\ldots"] + [num_latex(v, digits) for v in vals[-2:]]
        return r"\left[" + ", ".join(items) + r"\right]_{" + str(len(vals)) + "}"
    return r"\left[" + ", ".join(num_latex(v, digits) for v in vals) + r"\right]"


# --------------------------------------------------------------------------- formulas


def name_latex(name: str) -> str:
    """``R_load`` -> ``R_{\\mathrm{load}}``; ``rho`` -> ``\\rho``."""
    head, _, sub = name.partition("_")
    h = "\\" + head if head in _GREEK else (head if len(head) == 1 else rf"\mathrm{{{head}}}")
    if sub:
        esc = sub.replace("_", "\\_")
        s = "\\" + sub if sub in _GREEK else r"\mathrm{" + esc + "}"
        return f"{h}_{{{s}}}"
    return h


_FUNC_LATEX = {
    "sin": r"\sin", "cos": r"\cos", "tan": r"\tan", "asin": r"\arcsin", "acos": r"\arccos", "atan": r"\arctan",
    "exp": r"\exp", "ln": r"\ln", "log": r"\log_{10}", "arg": r"\arg",
}
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "neg": 3, "^": 4}


def formula_latex(node: G.Node, subst: dict | None = None, digits: int = 5, typed: dict | None = None) -> str:
    """The formula tree as LaTeX; with ``subst`` (slot -> Value) slots show their values."""

    def prec(n):
        if isinstance(n, G.Binary):
            return _PREC[n.op]
        if isinstance(n, G.Unary):
            return 3
        if isinstance(n, G.Num) and (isinstance(n.value, complex) or n.value < 0):
            return 3
        return 9

    def wrap(n, p):
        s = go(n)
        return rf"\left({s}\right)" if prec(n) < p else s

    def go(n) -> str:
        if isinstance(n, G.Num):
            if isinstance(n.value, complex):
                return f"{num_latex(n.value.imag, 12)}\\,j"
            return num_latex(n.value, 12)
        if isinstance(n, G.Slot):
            if subst is not None and n.name in subst:
                v = subst[n.name]
                dd = max(digits, (typed or {}).get(n.name, 0))
                lv = value_latex(v, dd)
                return rf"\left({lv}\right)" if U.si_latex(v.sig.dim) or v.sig.kind != "scalar" else lv
            return name_latex(n.name)
        if isinstance(n, G.Bound):
            return name_latex(n.name)
        if isinstance(n, G.Const):
            return {"pi": r"\pi", "e": "e", "inf": r"\infty", "i": "i", "j": "j"}[n.name]
        if isinstance(n, G.Unary):
            return "-" + wrap(n.x, 3)
        if isinstance(n, G.Binary):
            if n.op == "/":
                return rf"\frac{{{go(n.left)}}}{{{go(n.right)}}}"
            if n.op == "^":
                return "{" + wrap(n.left, 5) + "}^{" + go(n.right) + "}"
            if n.op == "*":
                return wrap(n.left, 2) + r" \cdot " + wrap(n.right, 2)
            right = wrap(n.right, 2) if n.op == "-" else wrap(n.right, 1)
            return wrap(n.left, 1) + f" {n.op} " + right
        if isinstance(n, G.Index):
            return wrap(n.x, 9) + "_{[" + go(n.index) + "]}"
        if isinstance(n, G.Field):
            return wrap(n.x, 9) + r".\mathrm{" + n.name + "}"
        if isinstance(n, G.Call):
            args = []
            for a in n.args:  # the call's own brackets are enough around a substituted slot
                t = go(a)
                if isinstance(a, G.Slot) and t.startswith(r"\left(") and t.endswith(r"\right)"):
                    t = t[len(r"\left("):-len(r"\right)")]
                args.append(t)
            if n.name == "sqrt":
                return rf"\sqrt{{{args[0]}}}"
            if n.name == "abs":
                return rf"\left|{args[0]}\right|"
            if n.name in _FUNC_LATEX:
                return rf"{_FUNC_LATEX[n.name]}\left({args[0]}\right)"
            return rf"\operatorname{{{n.name}}}\left({', '.join(args)}\right)"
        if isinstance(n, G.Fold):
            body = go(n.body)
            bounds = f"_{{{name_latex(n.var)}={go(n.lo)}}}^{{{go(n.hi)}}}"
            if n.name == "sum":
                return rf"\sum{bounds} {wrap(n.body, 2)}"
            if n.name == "prod":
                return rf"\prod{bounds} {wrap(n.body, 2)}"
            return rf"\left[{body}\right]{bounds}"
        if isinstance(n, G.Symbolic):
            return r"\text{" + n.text.replace("$", r"\$") + "}"
        return "?"  # pragma: no cover

    return go(node)


def formula_text(node: G.Node, subst: dict, digits: int, typed: dict | None = None) -> str:
    """The formula as written, each ``@slot`` replaced by its value with its SI unit."""

    def prec(n):
        if isinstance(n, G.Binary):
            return _PREC[n.op]
        if isinstance(n, G.Unary):
            return 3
        return 9

    def wrap(n, p):
        s = go(n)
        return f"({s})" if prec(n) < p else s

    def go(n) -> str:
        if isinstance(n, G.Num):
            return f"{num_text(n.value.imag, 12)}j" if isinstance(n.value, complex) else num_text(n.value, 12)
        if isinstance(n, G.Slot):
            v = subst.get(n.name)
            if v is None:
                return "@" + n.name
            t = value_text(v, max(digits, (typed or {}).get(n.name, 0)))
            return f"({t})" if " " in t else t
        if isinstance(n, G.Bound):
            return n.name
        if isinstance(n, G.Const):
            return {"pi": "π", "e": "e", "inf": "∞", "i": "i", "j": "j"}[n.name]
        if isinstance(n, G.Unary):
            return "-" + wrap(n.x, 3)
        if isinstance(n, G.Binary):
            p = _PREC[n.op]
            if n.op == "^":
                return f"{wrap(n.left, 5)}^{wrap(n.right, 4)}"
            left = wrap(n.left, p)
            right = wrap(n.right, p + 1 if n.op in "-/" else p)
            return f"{left}{'·' if n.op == '*' else n.op}{right}"
        if isinstance(n, G.Index):
            return f"{wrap(n.x, 9)}[{go(n.index)}]"
        if isinstance(n, G.Field):
            return f"{wrap(n.x, 9)}.{n.name}"
        if isinstance(n, G.Call):
            args = []
            for a in n.args:
                t = go(a)
                if isinstance(a, G.Slot) and t.startswith("(") and t.endswith(")"):
                    t = t[1:-1]
                args.append(t)
            return f"{n.name}(" + ", ".join(args) + ")"
        if isinstance(n, G.Fold):
            return f"{n.name}_{{{n.var}={go(n.lo)}}}^{{{go(n.hi)}}}({go(n.body)})"
        if isinstance(n, G.Symbolic):
            return n.text
        return "?"  # pragma: no cover

    return go(node)


# --------------------------------------------------------------------------- steps


def _given_display(st: Step, digits: int) -> tuple[str, str]:
    g = st.given
    name = st.line.name
    if g.display is not None:
        return g.display[0], rf"{name_latex(name)} = {g.display[1]}"
    if g.unit is not None and not g.value_text.startswith("py:"):
        text = f"{g.value_text} {U.unit_pretty(g.unit.text)}"
        latex = rf"{name_latex(name)} = {_value_text_latex(g.value_text)}\,{U.unit_latex(g.unit.text)}"
        d = max(digits, g.digits)  # never drop a digit the person typed
        if g.unit.factor != 1.0 or g.unit.offset:
            text += f" = {value_text(st.result, d)}"
            latex += f" = {value_latex(st.result, d)}"
        return text, latex
    text = value_text(st.result, digits) if g.value_text.startswith("py:") else g.value_text
    if g.value_text.startswith("py:") or st.result.sig.kind != "scalar":
        return value_text(st.result, digits), rf"{name_latex(name)} = {value_latex(st.result, digits)}"
    return text, rf"{name_latex(name)} = {_value_text_latex(g.value_text)}"


def _value_text_latex(t: str) -> str:
    try:
        x = float(t)
        return num_latex(x, 12)
    except ValueError:
        return r"\text{" + html.escape(t) + "}"


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
            f = st.formula
            res = value_text(st.result, d)
            if f is not None:
                sym = formula_latex(f.tree)
                sub = formula_latex(f.tree, st.inputs, d, st.input_digits)
                latex = rf"{name_latex(ln.name)} = {sym}"
                if st.inputs:
                    latex += rf" = {sub}"
                latex += rf" = {value_latex(st.result, d)}"
                row["latex"] = latex
                plain = f"{ln.name} = {ln.rest}"
                if st.inputs:
                    plain += f" = {formula_text(f.tree, st.inputs, d, st.input_digits)}"
                row["text"] = f"{plain} = {res}"
            else:
                row["text"] = f"{ln.name} = {ln.rest} = {res}"
        elif ln.form == "show":
            digits = ln.digits or d
            if st.shown is not None:
                v = st.shown
                body = _arr_items(v, num_text, digits) if isinstance(v, np.ndarray) else num_text(v, digits)
                lbody = _arr_latex(v, digits) if isinstance(v, np.ndarray) else num_latex(v, digits)
                row["text"] = f"{ln.name} = {body} {U.unit_pretty(st.shown_unit)}"
                row["latex"] = rf"{name_latex(ln.name)} = {lbody}\,{U.unit_latex(st.shown_unit)}"
            else:
                row["text"] = f"{ln.name} = {value_text(st.result, digits)}"
                row["latex"] = rf"{name_latex(ln.name)} = {value_latex(st.result, digits)}"
        elif ln.form in ("note", "note!"):
            row["text"] = ln.rest
        elif ln.form == "delete":
            row["text"] = f"deleted {ln.name}"
        elif ln.form == "end":
            row["text"] = ln.rest or "(record closed)"
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- bundle


def _md_escape(s: str) -> str:
    s = html.escape(s, quote=False)  # Markdown passes raw HTML through: never let a title or note inject it
    for ch in "\\|*_#$[]`":
        s = s.replace(ch, "\\" + ch)
    return s


def bundle(out: CellOutcome, metadata: dict) -> tuple[dict, dict]:
    """``(data, metadata)`` for ``display``: text/plain, text/markdown, text/html,
    text/latex and the record mimetype (deterministic), with ``metadata.dsh`` volatile."""
    rows = step_rows(out)
    status_word = {"closed": "closed", "open": "open (continues in the next cell)", "refused": "refused"}[out.status]
    head_plain = f"{out.title} — record {status_word}"
    plain = [head_plain]
    md = [f"**{_md_escape(out.title)}** — record {status_word}", ""]
    htm = [f'<div class="dsh-reckon"><p class="tex2jax_ignore mathjax_ignore"><b>{html.escape(out.title)}</b> — '
           f'record {html.escape(status_word)}</p>',
           '<table class="dsh-steps">']
    tex = [r"\begin{align*}"]
    for note in out.notices:
        plain.append(f"  ({note})")
        md.append(f"*({_md_escape(note)})*  ")
        htm.append(f'<tr><td colspan="2" style="text-align:left"><i>({html.escape(note)})</i></td></tr>')
    for r in rows:
        if r["kind"] == "note!" and r["ok"]:
            continue  # a note for the article writer: recorded, hidden from the record view
        if not r["ok"]:
            msg = f"line {r['line']}: {r['source']}  →  {r['code']}: {r['error']}"
            plain.append(f"  ✗ {msg}")
            md.append(f'<span style="color:#c62828">✗ line {r["line"]}: <code>{html.escape(r["source"])}</code> — '
                      f'<b>{html.escape(r["code"] or "")}</b>: {html.escape(r["error"] or "")}</span>  ')
            htm.append(f'<tr style="color:#c62828"><td>✗ {r["line"]}</td><td style="text-align:left"><code>{html.escape(r["source"])}</code><br>'
                       f'<b>{html.escape(r["code"] or "")}</b>: {html.escape(r["error"] or "")}</td></tr>')
            tex.append(r"&\text{line " + str(r["line"]) + r" refused: " + _tex_text(r["code"] or "") + r"}\\")
            continue
        if r["latex"]:
            plain.append(f"  {r['text']}")
            md.append(f"$${r['latex']}$$")
            math = html.escape(r"\displaystyle " + r["latex"])
            htm.append(f'<tr><td>{r["line"]}</td><td style="text-align:left">${math}$</td></tr>')
            tex.append(r["latex"].replace(" = ", " &= ", 1) + r"\\")
        else:
            label = ""
            style = ""
            plain.append(f"  {label}{r['text']}")
            md.append(f"{'*' if r['kind'] != 'end' else '**'}{_md_escape(label + r['text'])}{'*' if r['kind'] != 'end' else '**'}  ")
            htm.append(f'<tr{style}><td>{r["line"]}</td><td style="text-align:left" class="tex2jax_ignore mathjax_ignore"><i>{html.escape(label + r["text"])}</i></td></tr>')
            tex.append(r"&\text{" + _tex_text(label + r["text"]) + r"}\\")
    htm.append("</table></div>")
    tex.append(r"\end{align*}")
    record = {
        "title": out.title,
        "status": out.status,
        "steps": [
            {k: v for k, v in r.items() if k in ("line", "source", "kind", "ok", "text", "code", "error")}
            for r in rows
        ],
    }
    data = {
        "text/plain": "\n".join(plain),
        "text/markdown": "\n".join(md),
        "text/html": "\n".join(htm),
        "text/latex": "\n".join(tex),
        MIME_RECORD: record,
    }
    return data, {"dsh": metadata}


def _tex_text(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("{", r"\{"), ("}", r"\}"), ("$", r"\$"), ("&", r"\&"),
                 ("#", r"\#"), ("_", r"\_"), ("%", r"\%"), ("^", r"\^{}"), ("~", r"\~{}")):
        s = s.replace(a, b)
    return s


def record_metadata(out: CellOutcome, location, sha256: str | None) -> dict:
    """The volatile part: ids, paths, hashes, version (never in the visible output)."""
    meta = {
        "record_id": out.record_id,
        "status": out.status,
        "version": __version__,
        "notebook_known": location.known,
    }
    if out.path is not None:
        try:
            rel = out.path.relative_to(location.notebook.parent) if location.known else out.path
        except ValueError:
            rel = out.path
        meta["sidecar"] = str(rel)
    if sha256:
        meta["sha256"] = sha256
    return meta
