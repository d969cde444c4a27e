"""`dsh-notebook verify` of a corpus on dask.distributed: 1 and 2 local workers and an existing
scheduler, in one run, against the per-notebook read baseline (issue 23, "Speed").

Run from the repository root (needs the corpus extra: ``pip install -e ".[corpus]"``):

    python benchmarks/bench_corpus.py [--notebooks 16] [--cells 5] [--formulas 300] [--repeat 3]

The corpus is generated: ``--notebooks`` notebooks of ``--cells`` ``%%reckon`` cells of
``--formulas`` evaluation steps each, written by the magic's own cell runner and renderer and
signed (``bench_verify.build``: the same artifact ``dsh-notebook run`` leaves). The first
notebook is built, the others are copies of its folder (a notebook and its sidecar verify
wherever they are), and every copy is checked to verify before anything is timed.

Timed, each the best of ``--repeat`` rounds:

- baseline: per notebook, ``nbformat.read`` and ``json.loads`` of every sidecar line;
- verify here: ``dsh_notebook.artifact.seal.verify`` of each notebook in this process;
- the corpus on 1 local worker, on 2 local workers (``LocalCluster``, one thread each) and on
  an existing scheduler (a real ``dask scheduler`` and two ``dask worker`` processes on
  127.0.0.1): ``dsh_notebook.corpus.cluster.run_on_client``, from the workers' check to the
  last result. Starting a cluster (and the workers' first imports) is not timed; it is printed
  on its own line.

Goals (issue 23): 2 workers at least 1.7x faster than 1 on a 2-core machine, and per-notebook
``verify`` at most 5x the baseline. Then a profile of one notebook's verify says what dominates.
This is a measurement, not a test: the exit code is always 0.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_verify import baseline, build  # noqa: E402

from dsh_notebook.artifact.outputs import outputs_check  # noqa: E402
from dsh_notebook.artifact.seal import check_secrets, verify  # noqa: E402
from dsh_notebook.corpus.cluster import check_workers, open_client, run_on_client  # noqa: E402


def best(fn, repeat: int) -> float:
    # with the garbage collector on, as `dsh-notebook verify` runs (timeit turns it off by default,
    # which hid the cost of cyclic garbage from this benchmark)
    return min(timeit.repeat(fn, setup="import gc; gc.enable()", number=1, repeat=repeat))


def corpus(folder: Path, n: int, cells: int, formulas: int) -> list[Path]:
    first = build(folder / "nb00", cells, formulas)
    notebooks = [first]
    for i in range(1, n):
        dest = folder / f"nb{i:02d}"
        shutil.copytree(first.parent, dest, symlinks=True)
        notebooks.append(dest / first.name)
    return notebooks


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed_corpus(client, notebooks: list[Path], repeat: int) -> tuple[float, list[dict]]:
    results: list[dict] = []

    def once() -> None:
        results[:] = run_on_client(client, "verify", notebooks, {"allowed_signers": None})

    return best(once, repeat), results


def on_local(workers: int, notebooks: list[Path], repeat: int) -> tuple[float, float]:
    t0 = time.perf_counter()
    with open_client(workers=workers) as client:
        check_workers(client, notebooks, None)  # the workers' imports, outside the timing
        start = time.perf_counter() - t0
        took, results = timed_corpus(client, notebooks, repeat)
    bad = [r for r in results if r["status"] != "verified"]
    assert not bad, bad[:1]
    return start, took


def on_existing(notebooks: list[Path], repeat: int) -> tuple[float, float]:
    from distributed import Client

    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = str(Path(sys.executable).with_name("dask"))
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1"}
    procs = []
    t0 = time.perf_counter()
    try:
        procs.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                       "--dashboard-address", ":0"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True))
        for i in range(2):
            procs.append(subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--name", f"w{i}",
                                           "--host", "127.0.0.1", "--no-dashboard"], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True))
        with Client(address, timeout=120) as client:
            client.wait_for_workers(2, timeout=300)
            check_workers(client, notebooks, None)
            start = time.perf_counter() - t0
            took, results = timed_corpus(client, notebooks, repeat)
        bad = [r for r in results if r["status"] != "verified"]
        assert not bad, bad[:1]
        return start, took
    finally:
        for p in reversed(procs):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notebooks", type=int, default=16)
    ap.add_argument("--cells", type=int, default=5)
    ap.add_argument("--formulas", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DSH_NOTEBOOK_HOME"] = str(Path(tmp) / "home")  # the workers inherit it
        t0 = time.perf_counter()
        notebooks = corpus(Path(tmp) / "corpus", a.notebooks, a.cells, a.formulas)
        built = time.perf_counter() - t0
        bad = [(nb, f) for nb in notebooks for f in verify(nb) if f.ok is False]
        lines = baseline(notebooks[0])
        print(f"corpus: {len(notebooks)} notebooks x {a.cells} cells x {a.formulas} formulas, {lines} sidecar lines "
              f"each; built in {built:.1f} s (not timed); {len(bad)} problem(s) found by verify")
        t_base = best(lambda: [baseline(nb) for nb in notebooks], a.repeat) / len(notebooks)
        t_here = best(lambda: [verify(nb) for nb in notebooks], a.repeat) / len(notebooks)
        print(f"per notebook: baseline (nbformat.read + json.loads of every sidecar line) {t_base * 1e3:8.1f} ms")
        print(f"per notebook: verify in this process (seven checks)                   {t_here * 1e3:8.1f} ms "
              f"({t_here / t_base:.2f}x)")
        s1, t1 = on_local(1, notebooks, a.repeat)
        print(f"1 local worker:     {t1:6.2f} s for the corpus ({t1 / len(notebooks) * 1e3:.0f} ms a notebook); "
              f"cluster start {s1:.1f} s, not timed")
        s2, t2 = on_local(2, notebooks, a.repeat)
        print(f"2 local workers:    {t2:6.2f} s for the corpus ({t1 / t2:.2f}x faster than 1); "
              f"cluster start {s2:.1f} s, not timed")
        s3, t3 = on_existing(notebooks, a.repeat)
        print(f"existing scheduler: {t3:6.2f} s for the corpus on 2 `dask worker` processes ({t1 / t3:.2f}x faster "
              f"than 1 local worker); scheduler and workers start {s3:.1f} s, not timed")
        print(f"GOAL {'PASS' if t1 / t2 >= 1.7 else 'FAIL'}: 2 workers / 1 worker speed-up = {t1 / t2:.2f}x "
              "(goal >= 1.7x)")
        print(f"GOAL {'PASS' if t_here / t_base <= 5 else 'FAIL'}: per-notebook verify / baseline = "
              f"{t_here / t_base:.2f}x (goal <= 5x)")
        # what dominates one notebook's verify
        import nbformat

        nb = notebooks[0]
        node = nbformat.read(str(nb), as_version=4)
        t_cells = best(lambda: outputs_check(node, nb), a.repeat)
        shown = outputs_check(node, nb).shown
        t_scan = best(lambda: check_secrets(nb, nb=node, rendered=shown), a.repeat)
        print(f"of one notebook's verify ({t_here * 1e3:.0f} ms): check 7 (every cell run again and rendered) "
              f"{t_cells * 1e3:.0f} ms, check 4 (secret scan) {t_scan * 1e3:.0f} ms")
        prof = cProfile.Profile()
        prof.enable()
        verify(nb)
        prof.disable()
        print("the functions that take most of it (cProfile, own time):")
        stats = pstats.Stats(prof)
        stats.sort_stats("tottime")
        rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:10]  # type: ignore[attr-defined]
        total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
        for (file, line, name), (_cc, _nc, tt, ct, _callers) in rows:
            where = "/".join(Path(file).parts[-2:])
            print(f"  {tt * 1e3:7.1f} ms {tt / total:5.1%} own, {ct * 1e3:7.1f} ms with callees  {name} ({where}:{line})")
    print(f"load while measuring (uptime): {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
