"""A corpus of notebooks, run or verified in this process or on dask.distributed (issue 23,
items 1-5).

* :func:`run_corpus` takes the notebooks (:func:`.discover.find_notebooks`) and gives one result
  per notebook (:mod:`.execute`'s dicts), in the order given. Without ``workers`` or
  ``scheduler`` it works here, one notebook after another. ``workers=N`` starts a
  ``LocalCluster`` of N worker processes with one thread each; ``scheduler=ADDRESS`` connects to
  an existing scheduler (dask-jobqueue, dask-gateway, Kubernetes), failing with
  :class:`SchedulerUnreachable` after ``connect_timeout`` seconds.
* One task is one notebook (its key names the notebook and the run), so a notebook never runs
  twice at once. A task lost with its worker is retried once: the local cluster's scheduler has
  ``distributed.scheduler.allowed-failures`` set to 1 (an existing scheduler's own setting is
  read and reported when it differs); a second loss reports the notebook failed. The killed
  worker's kernel died with it (:mod:`.kernel_launcher`), and the retry waits for the
  notebook's open-record lock before it starts a kernel. No process pool of our own.
* Before any task is submitted every worker answers :func:`.execute.worker_check`: a worker
  without dsh_notebook, with another version, without the kernel (``run``), or that cannot
  read a notebook is named in a :class:`WorkerMismatch`, and nothing runs.
* Attempts are counted from the tasks' own start events on the scheduler (``log_event``), so
  a retried notebook says so in its result (``attempts``).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import DshError
from ..version import __version__
from .execute import EVENT_TOPIC, run_task, verify_task, worker_check

#: Seconds to reach an existing scheduler (and for it to have a worker) before giving up.
CONNECT_TIMEOUT = 10.0
#: The scheduler setting that makes a task lost with its worker run once more, then fail.
ALLOWED_FAILURES = "distributed.scheduler.allowed-failures"
#: What to install for ``--workers`` and ``--scheduler``.
INSTALL_HINT = "pip install 'dsh-notebook[corpus]', or in a checkout pip install -e '.[corpus]' (dask[distributed] and tqdm)"


class CorpusError(DshError):
    """A corpus command that cannot start; nothing ran. The root of this module's errors."""

    code = "CORPUS"


class DistributedMissing(CorpusError):
    """``--workers`` or ``--scheduler`` without dask.distributed installed.

    >>> run_corpus("verify", [Path("a.ipynb")], workers=2)  # doctest: +SKIP
    DistributedMissing: --workers and --scheduler need dask.distributed: pip install 'dsh-notebook[corpus]' ...
    """

    code = "CORPUS_NEEDS_DISTRIBUTED"


class SchedulerUnreachable(CorpusError):
    """The scheduler at ``--scheduler ADDRESS`` did not answer (or had no worker) in time.

    >>> run_corpus("verify", nbs, scheduler="tcp://127.0.0.1:1", connect_timeout=2)  # doctest: +SKIP
    SchedulerUnreachable: cannot reach the dask scheduler at tcp://127.0.0.1:1 within 2 s (...)
    """

    code = "CORPUS_SCHEDULER_UNREACHABLE"


class WorkerMismatch(CorpusError):
    """A worker that cannot do the work: dsh_notebook missing or of another version, no such
    kernel (``run``), or a notebook it cannot read; the message names the worker.

    >>> run_corpus("run", nbs, scheduler=address)  # doctest: +SKIP
    WorkerMismatch: worker tcp://10.0.0.7:40121 has dsh_notebook 0.0.9, this command 0.1.0: ...
    """

    code = "CORPUS_WORKER_MISMATCH"


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise DistributedMissing(f"--workers and --scheduler need dask.distributed: {INSTALL_HINT} ({exc})") from None
    return distributed


@contextlib.contextmanager
def open_client(*, workers: int | None = None, scheduler: str | None = None,
                connect_timeout: float = CONNECT_TIMEOUT) -> Iterator[Any]:
    """A ``distributed.Client``: to a new ``LocalCluster`` of *workers* processes (one thread
    each, allowed failures 1, closed on exit) or to the existing *scheduler*. Raises
    :class:`DistributedMissing`, :class:`SchedulerUnreachable`."""
    distributed = _distributed()
    import dask

    if workers is not None:
        with dask.config.set({ALLOWED_FAILURES: 1}):  # a free port for the dashboard: never a clash with another
            cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                               host="127.0.0.1", dashboard_address=":0", silence_logs=50)
        try:
            with distributed.Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    assert scheduler is not None
    client = _connect(distributed, scheduler, connect_timeout)
    try:
        try:
            client.wait_for_workers(1, timeout=connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise SchedulerUnreachable(f"the dask scheduler at {scheduler} has no worker after {connect_timeout:g} s "
                                       f"({exc}); start workers with `dask worker {scheduler}`") from None
        yield client
    finally:
        client.close()


def _connect(distributed: Any, scheduler: str, connect_timeout: float) -> Any:
    """``distributed.Client(scheduler)`` within *connect_timeout* seconds (and a little grace), or
    :class:`SchedulerUnreachable`. The client is made in a daemon thread: its own ``timeout`` does
    not cover a peer that accepts the connection and never answers (a dashboard port, another
    service), and a wrong address can fail with any exception (an HTTP server's answer read as a
    frame length, a TLS address without a context), each reported as an unreachable scheduler."""
    import threading

    made: list[Any] = []
    failed: list[BaseException] = []

    def connect() -> None:
        try:
            made.append(distributed.Client(scheduler, timeout=connect_timeout))
        except BaseException as exc:  # noqa: BLE001 - any failure of a wrong address is reported below
            failed.append(exc)

    thread = threading.Thread(target=connect, name="dsh-connect", daemon=True)
    thread.start()
    thread.join(connect_timeout + 5.0)
    hint = "is it running, and is the address the scheduler's tcp://HOST:PORT (not its dashboard)?"
    if made:
        return made[0]
    if failed:
        exc = failed[0]
        raise SchedulerUnreachable(f"cannot reach the dask scheduler at {scheduler} within {connect_timeout:g} s "
                                   f"({type(exc).__name__}: {exc}); {hint}") from None
    raise SchedulerUnreachable(f"the address {scheduler} did not answer as a dask scheduler within "
                               f"{connect_timeout:g} s; {hint}")


def check_workers(client: Any, notebooks: list[Path], kernel: str | None) -> list[str]:
    """Ask every worker :func:`.execute.worker_check`; raise :class:`WorkerMismatch` naming each
    worker that cannot do the work. Returns the workers' addresses."""
    answers = client.run(worker_check, [str(p) for p in notebooks], kernel, True, on_error="return")
    problems = []
    for addr, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            why = (f"cannot import dsh_notebook ({type(answer).__name__}: {answer}): install dsh-notebook "
                   f"{__version__} there" if isinstance(answer, ImportError) else f"failed the check: {answer!r}")
            problems.append(f"worker {addr} {why}")
            continue
        if answer["version"] != __version__:
            problems.append(f"worker {addr} has dsh_notebook {answer['version']}, this command {__version__}: "
                            f"install dsh-notebook {__version__} on every worker")
        if answer["kernel"]:
            problems.append(f"worker {addr}: {answer['kernel']}")
        if answer["unseen"]:
            shown = ", ".join(answer["unseen"][:3]) + (f" and {len(answer['unseen']) - 3} more"
                                                        if len(answer["unseen"]) > 3 else "")
            problems.append(f"worker {addr} cannot read {len(answer['unseen'])} notebook(s): {shown} (notebooks and "
                            "their .dsh folders must be on a filesystem every worker mounts at the same path)")
    if problems:
        raise WorkerMismatch("the workers cannot do this work, nothing was run:\n  " + "\n  ".join(problems))
    return sorted(answers)


def dashboard_link(client: Any) -> str | None:
    """The dask dashboard's address, when the scheduler serves one."""
    try:
        if "dashboard" not in client.scheduler_info().get("services", {}):
            return None
        return str(client.dashboard_link)
    except (OSError, KeyError, ValueError):
        return None


def _progress(total: int, enabled: bool) -> Any:
    """A tqdm bar on stderr (off when not a terminal, or tqdm is missing), else a stand-in."""
    if enabled:
        try:
            from tqdm import tqdm

            return tqdm(total=total, unit="notebook", disable=None, leave=False)
        except ImportError:
            pass
    return contextlib.nullcontext(None)


def _task(kind: str) -> Callable[..., dict[str, Any]]:
    return run_task if kind == "run" else verify_task


def _lost(kind: str, notebook: str, why: str) -> dict[str, Any]:
    return {"notebook": notebook, "command": kind, "status": "failed", "records": 0, "findings": [why],
            "time": None, "worker": None, "pid": None, "version": None}


def run_corpus(kind: str, notebooks: list[Path], *, workers: int | None = None, scheduler: str | None = None,
               connect_timeout: float = CONNECT_TIMEOUT, kernel: str = "python3", timeout: int = 600,
               save: bool = False, allowed_signers: Any = None, progress: bool = False,
               say: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """``run`` or ``verify`` (*kind*) every notebook in *notebooks*; returns one result per
    notebook in their order (see :func:`.execute.run_task`, :func:`.execute.verify_task`),
    each with ``attempts``. *save* (``run``): the kernels write their records into the notebooks'
    sidecars, for :func:`save_runs`; without it each runs on a private copy. *say* receives notes
    for the person (the dashboard's address, an existing scheduler's retry setting). Raises
    :class:`CorpusError` (nothing ran)."""
    say = say or (lambda _text: None)
    args: dict[str, Any] = ({"kernel": kernel, "timeout": timeout, "save": save} if kind == "run"
                            else {"allowed_signers": allowed_signers})
    if workers is None and scheduler is None:
        results = []
        with _progress(len(notebooks), progress) as bar:
            for p in notebooks:
                results.append({**_task(kind)(str(p), **args), "attempts": 1})
                if bar is not None:
                    bar.update(1)
        return results
    with open_client(workers=workers, scheduler=scheduler, connect_timeout=connect_timeout) as client:
        return run_on_client(client, kind, notebooks, args, scheduler=scheduler, progress=progress, say=say)


def run_on_client(client: Any, kind: str, notebooks: list[Path], args: dict[str, Any], *,
                  scheduler: str | None = None, progress: bool = False,
                  say: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """The corpus on a connected ``distributed.Client``: the workers checked
    (:func:`check_workers`), one task per notebook (*args*: ``kernel`` and ``timeout`` for
    ``run``, ``allowed_signers`` for ``verify``), the results in the notebooks' order with
    ``attempts``. *scheduler*: the address of an existing scheduler (its retry setting is read);
    ``save`` in *args* for ``run``: see :func:`run_corpus`."""
    say = say or (lambda _text: None)
    from distributed import as_completed

    addresses = check_workers(client, notebooks, args.get("kernel") if kind == "run" else None)
    link = dashboard_link(client)
    if link:
        say(f"dask dashboard: {link}")
    if scheduler is not None:
        import dask

        try:  # dask's own function: the scheduler need not have dsh_notebook installed
            allowed = client.run_on_scheduler(dask.config.get, ALLOWED_FAILURES)
        except Exception:  # noqa: BLE001 - a scheduler that refuses run_on_scheduler: nothing to report
            allowed = 1
        if allowed != 1:
            say(f"note: the scheduler at {scheduler} runs a task lost with its worker {allowed} more time(s) "
                f"({ALLOWED_FAILURES} = {allowed}); start it with DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=1 "
                "for one retry")
    say(f"{len(notebooks)} notebook(s) on {len(addresses)} worker(s)")
    run_id = uuid.uuid4().hex[:12]
    task = _task(kind)
    futures = {}
    for i, p in enumerate(notebooks):
        key = f"dsh-{kind}-{p.name}-{i}-{run_id}"
        futures[client.submit(task, str(p), **args, run_id=run_id, key=key, pure=False, retries=0)] = i
    results: list[dict[str, Any] | None] = [None] * len(notebooks)
    with _progress(len(notebooks), progress) as bar:
        for fut in as_completed(list(futures)):
            i = futures[fut]
            try:
                results[i] = fut.result()
            except Exception as exc:  # noqa: BLE001 - KilledWorker, or the task itself raised: named in the results
                name = type(exc).__name__
                why = (f"its worker died while running it, and again on the retry ({name})" if name == "KilledWorker"
                       else f"the task failed: {name}: {exc}")
                results[i] = _lost(kind, str(notebooks[i]), why)
            if bar is not None:
                bar.update(1)
    attempts = _attempts(client, run_id)
    final: list[dict[str, Any]] = []
    for p, r in zip(notebooks, results):
        assert r is not None
        final.append({**r, "attempts": max(attempts.get(str(p), 1), 1)})
    return final


def _attempts(client: Any, run_id: str) -> dict[str, int]:
    """How many times each notebook's task started in run *run_id* (from the tasks' events)."""
    counts: dict[str, int] = {}
    try:
        events = client.get_events(EVENT_TOPIC)
    except (OSError, KeyError, ValueError):
        return counts
    for _stamp, msg in events:
        if isinstance(msg, dict) and msg.get("run") == run_id:
            counts[msg["notebook"]] = counts.get(msg["notebook"], 0) + 1
    return counts


def save_runs(results: list[dict[str, Any]]) -> list[str]:
    """``run --save``: each run notebook's outputs saved by this process (under the notebook's
    lock, indexed and signed with this person's key, as a single ``run`` saves:
    :func:`dsh_notebook.artifact.notebookfile.save_run`); the workers never write a notebook or
    sign. Sets ``saved`` (the path written) in each result saved; returns sentences for the person."""
    import nbformat

    from ..artifact.notebookfile import NotebookBusy, save_run

    said = []
    for r in results:
        if r.get("executed") is None or not r.get("kept"):  # a run on a private copy: its records are gone
            continue
        path = Path(r["notebook"])
        problems: list[str] = []
        try:
            written = save_run(path, nbformat.reads(r["started"], as_version=4),
                               nbformat.reads(r["executed"], as_version=4), problems,
                               fresh_sidecar=r.get("fresh_sidecar") is True)
        except (NotebookBusy, OSError) as exc:
            said.append(f"{path.name}: the outputs were not saved: {exc}")
            continue
        r["saved"] = str(written)
        r["save_problems"] = problems
        said.append(f"{path.name}: outputs saved" + (f" beside it in {written.name} (it was edited while it ran)"
                                                     if written != path else ""))
        said.extend(f"{path.name}: {p}" for p in problems)
    return said
