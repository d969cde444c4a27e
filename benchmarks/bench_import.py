"""Start-up time: ``%load_ext dsh_notebook`` against ``import pint`` with its registry, and the CLI
against importing nbformat, side by side in one run (issue 22, item 6: "a fast load").

Run from the repository root:

    python benchmarks/bench_import.py [--repeat 7]

Every measurement runs in a fresh Python subprocess (nothing is imported yet, as in a new kernel
or a new shell command), ``--repeat`` times, in alternating order; the script prints the best and
the median of each and the ratios best to best and median to median.

- **%load_ext**: the subprocess makes IPython's ``InteractiveShell`` (a kernel has one before any
  cell runs), then times ``%load_ext dsh_notebook`` alone. Baseline: in the same kind of
  subprocess, ``import pint`` and ``pint.UnitRegistry()`` timed alone, what a notebook that
  computes with units pays first. Goal (issue 22): at most 1.3x.
- For reference (no goal): the first ``%%reckon`` cell after the load, where the engine's imports
  (pint, numpy, lark and its grammar) and the opening of the engine moved to.
- **CLI**: the wall time of the whole command (interpreter start-up included), for
  ``dsh-notebook --help`` and ``dsh-notebook sync`` on a small signed notebook (3 records of 5
  steps, built first by the real engine in a temporary folder), against ``python -c "import
  nbformat"`` and, for scale, ``python -c pass``.

The subprocesses get a temporary ``DSH_NOTEBOOK_HOME``. This is a measurement, not a test: the
exit code is always 0.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHELL = "from IPython.core.interactiveshell import InteractiveShell\nsh = InteractiveShell.instance()\nimport time\n"

#: in-process timings: each prints the seconds of the timed part on its last line
IN_PROCESS = {
    "load_ext": SHELL + "t = time.perf_counter()\nsh.run_line_magic('load_ext', 'dsh_notebook')\n"
                        "print(time.perf_counter() - t)\n",
    "pint": SHELL + "t = time.perf_counter()\nimport pint\npint.UnitRegistry()\nprint(time.perf_counter() - t)\n",
    "first_reckon": SHELL + "sh.run_line_magic('load_ext', 'dsh_notebook')\nt = time.perf_counter()\n"
                            "r = sh.run_cell('%%reckon first\\ngiven x = 2 m\\ny = @x*3', silent=True)\n"
                            "assert r.error_in_exec is None, r.error_in_exec\nprint(time.perf_counter() - t)\n",
}


def in_process(name: str, env: dict, cwd: Path) -> float:
    out = subprocess.run([sys.executable, "-c", IN_PROCESS[name]], capture_output=True, text=True, env=env,
                         cwd=cwd, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def wall(cmd: list[str], env: dict, cwd: Path) -> float:
    """Seconds from start to exit of *cmd* (perf_counter around ``subprocess.run``)."""
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, env=env, cwd=cwd, check=True)
    return time.perf_counter() - t


def small_notebook(folder: Path) -> Path:
    """A synced, signed notebook of 3 ``%%reckon`` records (see bench_verify.py's ``build``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_verify import build

    return build(folder, 3, 5)


def row(label: str, times: list[float]) -> tuple[float, float]:
    best, med = min(times), statistics.median(times)
    print(f"  {label:<44} best {best * 1e3:8.1f} ms   median {med * 1e3:8.1f} ms")
    return best, med


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="runs of each measurement (default 7)")
    args = ap.parse_args(argv)
    import nbformat
    import pint

    print("start-up time -- benchmarks/bench_import.py")
    print(f"python {platform.python_version()}, pint {pint.__version__}, nbformat {nbformat.__version__}, "
          f"{platform.machine()} {os.cpu_count()} cpu(s); {args.repeat} fresh subprocesses per measurement")
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        folder = Path(tmp)
        os.environ["DSH_NOTEBOOK_HOME"] = str(folder / "home")  # build() signs with a key in this home
        env = {**os.environ, "DSH_NOTEBOOK_PATH": str(folder / "nb.ipynb")}
        nb = small_notebook(folder)
        cli = [sys.executable, "-m", "dsh_notebook.cli"]
        walls = {
            "dsh-notebook --help": [*cli, "--help"],
            f"dsh-notebook sync {nb.name}": [*cli, "sync", str(nb)],
            'python -c "import nbformat"': [sys.executable, "-c", "import nbformat"],
            'python -c "pass"': [sys.executable, "-c", "pass"],
        }
        times: dict[str, list[float]] = {k: [] for k in [*IN_PROCESS, *walls]}
        for i in range(args.repeat):
            order = list(IN_PROCESS) + list(walls)
            for name in order if i % 2 == 0 else reversed(order):
                if name in IN_PROCESS:
                    times[name].append(in_process(name, env, folder))
                else:
                    times[name].append(wall(walls[name], env, folder))

    print("\n%load_ext (timed inside a fresh process that already has IPython's shell):")
    lb, lm = row("%load_ext dsh_notebook", times["load_ext"])
    pb, pm = row("baseline: import pint; pint.UnitRegistry()", times["pint"])
    row("(reference) the first %%reckon cell after it", times["first_reckon"])
    ratio = lb / pb
    print(f"  ratio best/best {ratio:.2f}x, median/median {lm / pm:.2f}x")
    print(f"GOAL {'PASS' if ratio <= 1.3 else 'FAIL'}: %load_ext / (import pint + UnitRegistry) = {ratio:.2f}x "
          "(goal <= 1.3x)")

    print("\nthe command line (wall time of the whole command):")
    res = {k: row(k, times[k]) for k in walls}
    base_b, base_m = res['python -c "import nbformat"']
    for k in list(walls)[:2]:
        b, m = res[k]
        print(f"  {k} / import nbformat: best/best {b / base_b:.2f}x, median/median {m / base_m:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
