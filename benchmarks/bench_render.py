"""A ``%%reckon`` cell rendered against handcalcs' ``%%render`` of the same cell, in one run.

Run from the repository root (handcalcs is in the ``bench`` extra: ``pip install -e ".[bench]"``):

    python benchmarks/bench_render.py [--target SECONDS] [--rounds N]

The calculation: a simply supported glulam beam, 20 lines (7 inputs in kN, kN/m, m, mm, GPa
and MPa; 11 formulas: moments, shear, section properties, bending and shear stress,
deflection, utilisation; the stress and the deflection shown in MPa and mm).

* Measured: what ``%%reckon`` does with the cell, without IPython: ``run_cell`` (a new record,
  every line checked and evaluated, the rows written to the record file and the record
  closed in the engine's home, on disk), the sha256 of the record file and its metadata, a
  pint Quantity for every slot (the magic's ``_reckon`` export) and ``render.bundle`` (text,
  Markdown, HTML, LaTeX and the record mimetype).  One engine per round, in a fresh
  temporary home, as a kernel keeps one engine across its cells.
* Baseline: what handcalcs' ``%%render`` magic (``handcalcs/render.py``) does with the same
  20 lines written in Python over pint Quantities: the cell is executed in the user's
  namespace, which holds a ``pint.UnitRegistry()`` and its unit names from an earlier cell
  (the magic runs it with IPython's ``run_cell``; here ``exec``, which costs less), then
  ``LatexRenderer(cell, namespace, line_args).render()`` and the ``Latex`` display object.
  ``line_args`` is what handcalcs' ``parse_line_args("")`` gives for a bare ``%%render``.
  Neither side is handed to IPython's ``display``.

Before timing, both are run once and checked: every one of the 18 values agrees in SI
(relative 1e-9), and the shown stress and deflection read from both renderings agree within
their rounding.  Timing: each side's loop count is calibrated with bench_reckoner's
``loop_count`` so that one repeat takes about ``--target`` seconds (``timeit``, garbage
collector off while timing); then ``--rounds`` rounds, each timing both sides one after the
other, in alternating order.  The medians over the rounds are reported, with their ratio.

Goal (issue 18): rendering the cell stays at least 20x faster than handcalcs' ``%%render``.
This is a measurement, not a test: the exit code is always 0 (also when handcalcs is missing:
the script then says so and stops).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path
from types import SimpleNamespace

import pint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench_reckoner, beside this file
from bench_reckoner import loop_count  # also puts the repository root on the path if needed

from dsh_notebook.reckon import units as U
from dsh_notebook.reckon.cell import ReckonSession, parse_options, run_cell
from dsh_notebook.reckon.render import bundle, record_metadata
from dsh_notebook.reckoner import Engine

GOAL = 20.0  # handcalcs time / %%reckon time, at least
RTOL = 1e-9

TITLE = "Glulam beam, simply supported, point load at midspan and uniform load"

RECKON_CELL = """\
given F = 25 kN
given w = 2.5 kN/m
given L = 6 m
given b = 140 mm
given h = 450 mm
given E = 11.5 GPa
given f_m = 24 MPa
M_F = @F*@L/4
M_w = @w*@L^2/8
M = @M_F + @M_w
V = @F/2 + @w*@L/2
A = @b*@h
I = @b*@h^3/12
c = @h/2
sigma = @M*@c/@I
tau = 3*@V/(2*@A)
delta = @F*@L^3/(48*@E*@I) + 5*@w*@L^4/(384*@E*@I)
util = @sigma/@f_m
show sigma in MPa
show delta in mm"""

# The same lines as a handcalcs user writes them: Python over pint Quantities; a value is
# shown in a unit with .to(), into a new name.
HANDCALCS_CELL = """\
F = 25*kN
w = 2.5*kN/m
L = 6*m
b = 140*mm
h = 450*mm
E = 11.5*GPa
f_m = 24*MPa
M_F = F*L/4
M_w = w*L**2/8
M = M_F + M_w
V = F/2 + w*L/2
A = b*h
I = b*h**3/12
c = h/2
sigma = M*c/I
tau = 3*V/(2*A)
delta = F*L**3/(48*E*I) + 5*w*L**4/(384*E*I)
util = sigma/f_m
sigma_MPa = sigma.to(MPa)
delta_mm = delta.to(mm)"""

NAMES = ("F", "w", "L", "b", "h", "E", "f_m", "M_F", "M_w", "M", "V", "A", "I", "c", "sigma", "tau", "delta", "util")

# handcalcs/render.py, parse_line_args("") for a bare `%%render` (handcalcs 1.11)
LINE_ARGS = {"override": "", "precision": None, "sympy": False, "sci_not": None}

# the shown values, read back from each rendering
RECKON_SHOWN = {"sigma": r"\\sigma &= ([0-9.]+)\\,\\mathrm\{MPa\}", "delta": r"\\delta &= ([0-9.]+)\\,\\mathrm\{mm\}"}
HANDCALCS_SHOWN = {"sigma": r"\\sigma_\{MPa\} &=.*&= ([0-9.]+)\\ \\mathrm\{megapascal\}",
                   "delta": r"\\delta_\{mm\} &=.*&= ([0-9.]+)\\ \\mathrm\{millimeter\}"}


def reckon_render(session: ReckonSession, where) -> tuple[dict, dict]:
    """The ``%%reckon`` magic's work on the cell, without IPython (notebook/magics.py)."""
    out = run_cell(session, parse_options(TITLE), RECKON_CELL, {})
    sha = hashlib.sha256(Path(out.path).read_bytes()).hexdigest()
    meta = record_metadata(out, where, sha)
    slots = {n: U.quantity(v.mag, tuple(int(x) for x in v.sig.dim)) for n, v in out.slots.items()}
    data, _md = bundle(out, meta)
    return data, slots


def make_handcalcs_render(latex_renderer, latex_display, ureg: pint.UnitRegistry):
    user_ns = {"ureg": ureg, **{u: ureg.Unit(u) for u in ("kN", "m", "mm", "GPa", "MPa")}}

    def handcalcs_render() -> tuple[object, dict]:
        """handcalcs' ``%%render`` magic's work on the cell (handcalcs/render.py), without IPython."""
        ns = dict(user_ns)
        exec(HANDCALCS_CELL, ns)  # our fixed benchmark text; the magic runs the cell likewise
        latex = latex_renderer(HANDCALCS_CELL, ns, LINE_ARGS).render()
        return latex_display(latex), ns

    return handcalcs_render


def shown(text: str, patterns: dict) -> dict:
    got = {}
    for name, pat in patterns.items():
        m = re.search(pat, text)
        got[name] = float(m.group(1)) if m else None
    return got


def check(reckon_out, handcalcs_out) -> list[str]:
    """Problems found comparing the two renderings of the calculation (empty: same results)."""
    (data, slots), (display_obj, ns) = reckon_out, handcalcs_out
    head = data["text/plain"].splitlines()[0]
    problems = [] if head.endswith("record closed") else [f"the %%reckon record is not closed whole: {head!r}"]
    for n in NAMES:
        if n not in slots or n not in ns:
            problems.append(f"{n}: missing (%%reckon {n in slots}, handcalcs {n in ns})")
            continue
        a = slots[n].to_base_units()
        b = ns[n].to_base_units()
        if dict(a.dimensionality) != dict(b.dimensionality):
            problems.append(f"{n}: dimensions differ: {a.dimensionality} against {b.dimensionality}")
        elif abs(a.magnitude - b.magnitude) > RTOL * max(abs(a.magnitude), abs(b.magnitude)):
            problems.append(f"{n}: {a.magnitude!r} against {b.magnitude!r} (SI)")
    latex_hc = display_obj.data
    r, h = shown(data["text/latex"], RECKON_SHOWN), shown(latex_hc, HANDCALCS_SHOWN)
    for n in RECKON_SHOWN:
        if r[n] is None or h[n] is None:
            problems.append(f"shown {n} not found (%%reckon {r[n]}, handcalcs {h[n]})")
        elif abs(r[n] - h[n]) > 1e-3 * max(abs(r[n]), abs(h[n])):  # 5 digits against 3 decimals
            problems.append(f"shown {n} differs: %%reckon {r[n]}, handcalcs {h[n]}")
    return problems


def fsync_ms(folder: str, n: int = 5) -> float:
    """Median milliseconds of ``os.fsync`` on a freshly written 4 kB file in *folder*: the disk's
    part of every %%reckon cell (closing a record fsyncs its file and two folders)."""
    times = []
    for i in range(n):
        p = os.path.join(folder, f"fsync-probe-{i}")
        with open(p, "wb") as f:
            f.write(b"x" * 4096)
            f.flush()
            t = time.perf_counter()
            os.fsync(f.fileno())
            times.append(time.perf_counter() - t)
        os.remove(p)
    return statistics.median(times) * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", type=float, default=0.5, help="seconds per side per round (default 0.5)")
    ap.add_argument("--rounds", type=int, default=7, help="rounds, medians taken (default 7)")
    args = ap.parse_args(argv)

    print("%%reckon rendering vs handcalcs %%render -- benchmarks/bench_render.py")
    try:
        import handcalcs
        from handcalcs.handcalcs import LatexRenderer
        from IPython.display import Latex
    except ImportError as exc:
        print(f"SKIPPED: handcalcs, the baseline, is not installed ({exc}); "
              'pip install -e ".[bench]" installs it. Nothing was measured.')
        return 0

    t0 = time.perf_counter()
    print(f"python {platform.python_version()}, pint {pint.__version__}, handcalcs {handcalcs.__version__}, "
          f"{platform.machine()} {os.cpu_count()} cpu(s); ~{args.target:g} s per side per round, "
          f"{args.rounds} rounds, medians")
    rl, hl = RECKON_CELL.splitlines(), HANDCALCS_CELL.splitlines()
    print(f"\nthe cell, {len(rl)} lines (%%reckon | handcalcs, Python over pint Quantities):")
    for a, b in zip(rl, hl):
        print(f"  {a:<54} | {b}")

    handcalcs_render = make_handcalcs_render(LatexRenderer, Latex, pint.UnitRegistry())
    base = tempfile.mkdtemp(prefix="bench-render-")
    where = SimpleNamespace(known=False, notebook=None)
    homes = itertools.count()

    def session() -> ReckonSession:  # one engine per round, in a fresh home
        return ReckonSession(Engine(os.path.join(base, f"home{next(homes)}"), recover=False))

    try:
        # ------------------------------------------------------------ same results
        s = session()
        ro, ho = reckon_render(s, where), handcalcs_render()
        problems = check(ro, ho)
        r_sh, h_sh = shown(ro[0]["text/latex"], RECKON_SHOWN), shown(ho[0].data, HANDCALCS_SHOWN)
        print(f"\ncheck: %%reckon shows sigma = {r_sh['sigma']} MPa, delta = {r_sh['delta']} mm; "
              f"handcalcs shows {h_sh['sigma']} megapascal, {h_sh['delta']} millimeter")
        print(f"  outputs: %%reckon {len(ro[0]['text/latex']):,} characters of LaTeX (and text, Markdown, HTML, "
              f"the record); handcalcs {len(ho[0].data):,} characters of LaTeX in an IPython Latex object")
        if problems:
            for p in problems:
                print(f"  FAIL: {p}")
            print("CORRECTNESS FAILED: the two sides do not compute the same results; nothing was timed.")
            return 0
        print(f"  all {len(NAMES)} values agree in SI (relative {RTOL:g}); the shown values agree within rounding")

        # ------------------------------------------------------------ timing
        s = session()
        t_r = timeit.Timer("f(s, w)", globals={"f": reckon_render, "s": s, "w": where})
        t_h = timeit.Timer("f()", globals={"f": handcalcs_render})
        n_r, n_h = loop_count(t_r, args.target), loop_count(t_h, args.target)
        print(f"\ntiming: {n_r} %%reckon cells and {n_h} handcalcs cells per round")
        ms_r, ms_h, ms_sync = [], [], []
        for k in range(args.rounds):
            t_r = timeit.Timer("f(s, w)", globals={"f": reckon_render, "s": session(), "w": where})
            order = ((t_r, n_r, ms_r), (t_h, n_h, ms_h))
            for t, n, acc in order if k % 2 == 0 else order[::-1]:
                acc.append(t.timeit(n) / n * 1e3)
            ms_sync.append(fsync_ms(base))
            print(f"  round {k + 1}: %%reckon {ms_r[-1]:7.2f} ms   handcalcs {ms_h[-1]:8.2f} ms   "
                  f"ratio {ms_h[-1] / ms_r[-1]:6.1f}x   (one fsync {ms_sync[-1]:.2f} ms)", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    med_r, med_h = statistics.median(ms_r), statistics.median(ms_h)
    ratio = med_h / med_r
    print(f"\n%%reckon (run_cell, record on disk, hash, _reckon Quantities, bundle): {med_r:8.2f} ms per cell "
          f"(median; {min(ms_r):.2f} to {max(ms_r):.2f})")
    print(f"handcalcs %%render (exec over pint, LatexRenderer.render, Latex):      {med_h:8.2f} ms per cell "
          f"(median; {min(ms_h):.2f} to {max(ms_h):.2f})")
    print(f"the disk: one fsync of a small file in the same folder, median {statistics.median(ms_sync):.2f} ms "
          "(a %%reckon cell closes its record with fsyncs of the file and its folders)")
    rounds = [h / r for r, h in zip(ms_r, ms_h)]
    print(f"GOAL {'PASS' if ratio >= GOAL else 'FAIL'}: handcalcs / %%reckon = {ratio:.1f}x, median to median "
          f"(goal >= {GOAL:g}x); round by round {min(rounds):.1f}x to {max(rounds):.1f}x, "
          f"median {statistics.median(rounds):.1f}x")
    print(f"total run time {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:  # noqa: BLE001 - a measurement: report, never fail the caller
        import traceback

        traceback.print_exc()
        print(f"benchmark aborted: {type(exc).__name__}: {exc}")
    sys.exit(0)
