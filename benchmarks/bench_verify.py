"""`dsh-notebook verify` against just reading the artifact, side by side in one run.

Run from the repository root:

    python benchmarks/bench_verify.py [--records 200] [--steps 20]

A generated notebook has ``--records`` records of ``--steps`` evaluation steps each (written
by the real engine into ``report.dsh/records/``) and one output per record carrying the
record mimetype and its ``metadata.dsh`` (record id and sha256), as ``%%reckon`` writes them.

Baseline: reading the notebook with nbformat and parsing every sidecar line with ``json``.
Measured: ``dsh_notebook.artifact.seal.verify`` (hashes, record reading, sequence checks,
replaying every step in a fresh engine, the secret scan, check 5: the notebook is synced
and signed first, so the SSH signature is checked and the seal set recomputed; check 7: every
cell's lines run again and its output rendered and compared). Goal (issue 3): at most 5x the
baseline. The secret scan (check 4) is also timed alone and reported on its own line (issue 14). This is a measurement, not a test: the exit code is always 0.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import json
import tempfile
import timeit
from pathlib import Path
from types import SimpleNamespace

import nbformat

from dsh_notebook.artifact.outputs import outputs_check
from dsh_notebook.artifact.seal import check_secrets, sync, verify
from dsh_notebook.reckon.cell import ReckonSession, parse_options, run_cell
from dsh_notebook.reckon.render import bundle, record_metadata
from dsh_notebook.reckoner import Engine

FORMULAS = ["@rho*@L/@A", "@V/@R", "@V*@I", "$pi*(@d/2)^2", "$sqrt(@P*@R)", "@I^2*@R", "@C*@V^2/2", "@R*@C"]


def build(folder: Path, n_records: int, n_steps: int) -> Path:
    """A notebook of *n_records* ``%%reckon`` cells run by the magic's own cell runner and
    renderer (as ``dsh-notebook run`` writes them), each with *n_steps* evaluation steps."""
    nb_path = folder / "report.ipynb"
    sidecar = folder / "report.dsh"
    session = ReckonSession(Engine(sidecar, recover=False))
    where = SimpleNamespace(known=True, notebook=nb_path)
    cells = []
    for r in range(n_records):
        lines = [f"%%reckon Record {r}", "given rho = 1.68e-8 ohm*m", f"given L = {25 + r} m", "given d = 2.05 mm",
                 "given V = 12 V", f"given R = {4.7 + r / 100:.2f} ohm", "given C = 1 uF", "A = $pi*(@d/2)^2",
                 "I = @V/@R", "P = @V*@I"]
        lines += [f"x{s} = {FORMULAS[s % len(FORMULAS)]}" for s in range(n_steps - 3)]
        lines += ["show P in mW", "end done"]
        out = run_cell(session, parse_options(lines[0][len("%%reckon"):]), "\n".join(lines[1:]), {})
        sha = hashlib.sha256(Path(out.path).read_bytes()).hexdigest()
        data, metadata = bundle(out, record_metadata(out, where, sha))
        cell = nbformat.v4.new_code_cell("\n".join(lines), execution_count=r + 1,
                                         outputs=[nbformat.v4.new_output("display_data", data=data, metadata=metadata)])
        cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells)
    nbformat.write(nb, str(nb_path))
    sync(nb_path)  # index and sign (a key in a throwaway home): verify then checks the signed seal too
    return nb_path


def baseline(nb_path: Path) -> int:
    nbformat.read(str(nb_path), as_version=4)
    n = 0
    for f in (nb_path.parent / "report.dsh" / "records").glob("*.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            json.loads(line)
            n += 1
    return n


def best(fn, repeat: int) -> float:
    """Best of *repeat* single calls, in seconds (timeit's perf_counter timer)."""
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DSH_NOTEBOOK_HOME"] = str(Path(tmp) / "home")
        nb = build(Path(tmp), a.records, a.steps)
        lines = baseline(nb)
        findings = verify(nb)
        failed = [f for f in findings if f.ok is False]
        t_base = best(lambda: baseline(nb), a.repeat)
        t_verify = best(lambda: verify(nb), a.repeat)
        t_scan = best(lambda: check_secrets(nb), a.repeat)
        node = nbformat.read(str(nb), as_version=4)
        shown = outputs_check(node, nb).shown
        t_scan_v = best(lambda: check_secrets(nb, nb=node, rendered=shown), a.repeat)
        t_cells = best(lambda: outputs_check(node, nb), a.repeat)
    ratio = t_verify / t_base
    print(f"artifact: {a.records} records x {a.steps} steps, {lines} sidecar lines; verify found {len(failed)} problem(s)")
    print(f"baseline (nbformat.read + json.loads of every sidecar line): {t_base * 1e3:8.1f} ms")
    print(f"dsh-notebook verify (seven checks, every step replayed):     {t_verify * 1e3:8.1f} ms")
    print(f"  of which check 4, the secret scan (dsh_notebook.secretscan):  {t_scan_v * 1e3:8.1f} ms "
          f"({t_scan_v / t_base:.2f}x the baseline; outputs check 7 proved to be renderings are not scanned)")
    print(f"  the secret scan over every output too (check_secrets alone):  {t_scan * 1e3:8.1f} ms "
          f"({t_scan / t_base:.2f}x the baseline)")
    print(f"  of which check 7, every %%reckon cell run again and rendered:  {t_cells * 1e3:8.1f} ms "
          f"({t_cells / t_base:.2f}x the baseline)")
    print(f"GOAL {'PASS' if ratio <= 5 else 'FAIL'}: verify / baseline = {ratio:.2f}x (goal <= 5x)")


if __name__ == "__main__":
    main()
