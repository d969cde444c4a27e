"""One notebook, run or verified: the work of one corpus task (issue 23, items 2-5), also what
``dsh-notebook run NOTEBOOK`` does in its own process.

* :func:`execute_notebook` runs a notebook in a fresh kernel with nbclient. Everything that
  belongs to that run goes to its kernel only: the working directory (nbclient's
  ``resources['metadata']['path']``), ``DSH_NOTEBOOK_PATH`` (so the records land in
  ``<stem>.dsh/``) in the environment handed to the kernel manager, IPC sockets in a private
  folder. Nothing process-wide (``os.environ``, ``os.chdir``) changes, so two tasks in one
  worker process, or one after another, never see each other's notebook.
* A run that saves nothing (``--no-save``; a corpus ``run`` without ``--save``) runs on
  :func:`private_copy`, a copy of the notebook and its sidecar in a private temporary folder:
  its records go there and are removed with it, so nothing on disk changes and a signed
  notebook still verifies after a reviewer's run.
* On Linux the kernel is started through :mod:`.kernel_launcher`, so it is killed when the
  process that started it dies: a SIGKILLed dask worker leaves no kernel behind to go on
  writing records. Its open-record lock (filelock: ``flock``, released by the kernel's death)
  is then free; :func:`wait_for_open_record` waits for it before a retry starts a new kernel.
* :func:`run_task` and :func:`verify_task` are the task functions: they take and return plain
  data (paths as strings, a JSON-ready dict), never raise for a notebook's own problems, and
  run the same in a dask worker and in the command's process. :func:`worker_check` is what
  every worker answers before the work starts (package version, kernel, visible files).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from ..artifact.paths import SIDECAR_ENV, sidecar_for
from ..artifact.sealset import holds_no_files
from ..version import __version__

#: The environment variable naming the kernel's notebook (storage.md "Where the kernel writes").
NOTEBOOK_ENV = "DSH_NOTEBOOK_PATH"
#: Seconds a task waits for a notebook's open record to be released (a killed kernel's lock).
OPEN_RECORD_WAIT = 60.0
#: How many failing findings a result names (``findings``); ``--json`` has them all.
FIRST_FINDINGS = 3
#: The scheduler event topic each task's start is logged under (attempts are counted from it).
EVENT_TOPIC = "dsh-notebook-corpus"


def launcher_argv(parent_pid: int | None = None) -> list[str]:
    """The prefix that starts a kernel through :mod:`.kernel_launcher` (Linux), ``[]`` elsewhere."""
    if not sys.platform.startswith("linux"):
        return []
    return [sys.executable, str(Path(__file__).with_name("kernel_launcher.py")),
            str(os.getpid() if parent_pid is None else parent_pid)]


@cache
def kernel_manager_class() -> type:
    """nbclient's kernel manager, with the kernel's command line prefixed by :func:`launcher_argv`."""
    from jupyter_client.manager import AsyncKernelManager

    class DyingKernelManager(AsyncKernelManager):
        """An ``AsyncKernelManager`` whose kernel dies with the process that started it."""

        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            return launcher_argv() + super().format_kernel_cmd(extra_arguments)

    return DyingKernelManager


def execute_notebook(path: Path, nb: Any, *, kernel: str, timeout: int,
                     env: Mapping[str, str] | None = None, sidecar: Path | None = None) -> BaseException | None:
    """Execute nbformat node *nb* (read from *path*; its outputs are replaced in place) in a new
    *kernel* with *timeout* seconds per cell; the kernel's working directory is the notebook's
    folder and its environment is this process's (or *env*) plus ``DSH_NOTEBOOK_PATH=path``
    and, with *sidecar* (a :func:`private_copy`), ``DSH_NOTEBOOK_SIDECAR=sidecar``: its records,
    chats and ledgers then go there instead of beside the notebook. Returns None, or the
    exception that stopped the run (``CellExecutionError`` for a failed cell not tagged
    ``raises-exception``, a timeout, a dead kernel)."""
    from nbclient import NotebookClient
    from traitlets.config import Config

    kernel_env = dict(os.environ if env is None else env)
    kernel_env[NOTEBOOK_ENV] = str(path)
    kernel_env.pop(SIDECAR_ENV, None)  # never one inherited from the person's shell
    if sidecar is not None:
        kernel_env[SIDECAR_ENV] = str(sidecar)
    # IPC sockets in a private folder: the kernel talks over local files, not TCP (so ipykernel
    # has no unencrypted-TCP warning to print), whatever the kernel's working directory.
    with scratch_folder() as sockets:
        config = Config()
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = str(sockets / "k")
        client = NotebookClient(nb, timeout=timeout, kernel_name=kernel,
                                resources={"metadata": {"path": str(path.parent)}}, config=config,
                                kernel_manager_class=kernel_manager_class())
        try:
            client.execute(env=kernel_env)
        except Exception as exc:  # noqa: BLE001 - CellExecutionError, a timeout, a kernel that died: the caller reports it
            return exc
    return None


@contextmanager
def scratch_folder() -> Iterator[Path]:
    """A private temporary folder (``<tmp>/dshk-<pid>-*``, mode 700) owned by this process
    (:func:`hold_socket_folder`), removed on leaving; one left by a killed process is removed by
    the next run's :func:`sweep_dead_socket_folders`."""
    sweep_dead_socket_folders()
    folder = tempfile.mkdtemp(prefix=f"{SOCKETS_PREFIX}{os.getpid()}-")
    owner = hold_socket_folder(folder)
    try:
        yield Path(folder)
    finally:
        if owner is not None:
            owner.close()
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def private_copy(notebook: Path) -> Iterator[Path]:
    """A copy of *notebook*'s sidecar folder (``<stem>.dsh/``) in a :func:`scratch_folder`, for a
    run that saves nothing (issue 23): the kernel writes its records there (``execute_notebook(...,
    sidecar=...)``), so the person's sidecar is left byte for byte as it was and a signed notebook
    still verifies after the run. Symbolic links are copied as what they point to (regular files
    and folders; a link that points nowhere, a device, a pipe or a loop is left out), so nothing
    is written through them. Yields the copy's path (not made when the notebook has no sidecar
    yet); the copy is removed on leaving. Raises ``OSError`` when the copy cannot be made (a full
    disk, an unreadable file)."""
    with scratch_folder() as folder:
        copy = folder / sidecar_for(notebook).name
        if sidecar_for(notebook).is_dir():
            _copy_followed(sidecar_for(notebook), copy, set())
        yield copy


def _copy_followed(src: Path, dst: Path, seen: set[tuple[int, int]]) -> None:
    """Folder *src* into *dst* with every symbolic link followed: regular files (with their
    modes) and folders only, each folder at most once (a link back to a folder above is a loop)."""
    st = os.stat(src)
    if (st.st_dev, st.st_ino) in seen:
        return
    seen.add((st.st_dev, st.st_ino))
    dst.mkdir()
    with os.scandir(src) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            try:
                kind = os.stat(entry.path).st_mode  # through a link
            except OSError:  # a link that points nowhere (or a loop of links): nothing to copy
                continue
            if stat.S_ISDIR(kind):
                _copy_followed(Path(entry.path), dst / entry.name, seen)
            elif stat.S_ISREG(kind):
                shutil.copy2(entry.path, dst / entry.name)


SOCKETS_PREFIX = "dshk-"  # then the pid of the process that ran the kernel, '-', a random part
OWNER_FILE = ".owner"  # inside it: locked (flock) by that process while it lives


def hold_socket_folder(folder: str) -> Any:
    """Lock *folder*'s owner file for as long as the returned file stays open (the process's
    life at most: the system releases the lock when it dies, however it dies). None where
    ``fcntl`` is missing (no sweeping there)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    made = os.path.join(folder, OWNER_FILE + ".new")
    owner = open(made, "w")  # noqa: SIM115 - held open on purpose
    fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.replace(made, os.path.join(folder, OWNER_FILE))  # appears already locked: a sweep never sees it free
    return owner


def sweep_dead_socket_folders() -> list[Path]:
    """Remove the kernels' socket folders (``<tmp>/dshk-<pid>-*``) whose process is gone: a worker
    killed with SIGKILL runs no ``finally``, so the next notebook run on this machine clears what it
    left. A folder counts as gone only when it is a real folder of this user whose owner file
    (:func:`hold_socket_folder`) can be locked: a lock, unlike a pid, holds across containers that
    share the temporary folder. Returns the folders removed; what cannot be checked stays."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return []
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{SOCKETS_PREFIX}*-*"):
        try:
            st = folder.lstat()
            if not folder.is_dir() or folder.is_symlink() or st.st_uid != os.getuid():
                continue
            with open(folder / OWNER_FILE, "r+") as owner:
                fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held: its process lives
        except OSError:  # no owner file (not ours, or still being made), held, or unreadable: left
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def wait_for_open_record(notebook: Path, timeout: float = OPEN_RECORD_WAIT) -> bool:
    """Wait until no kernel holds the open record beside *notebook* (its ``open-record.jsonl``
    lock), at most *timeout* seconds; True when it is free. A kernel that died with its worker
    released it; a kernel that still holds it is running this notebook elsewhere."""
    from filelock import FileLock, Timeout

    from ..storage import lock_path

    lock = lock_path(sidecar_for(notebook) / "open-record.jsonl")
    if not lock.exists():
        return True
    held = FileLock(str(lock), thread_local=False)
    try:
        held.acquire(timeout=timeout)
    except Timeout:
        return False
    held.release()
    return True


def _not_a_notebook(path: Path) -> str:
    """Why *path* (not a regular file) cannot be run or verified here."""
    return "not a regular file" if path.exists() else "no such notebook (not visible on this worker)"


def _where() -> str | None:
    """The dask worker's address when called in a task, else None."""
    if "distributed" not in sys.modules:  # not in a worker: never pay for importing it
        return None
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return None


def _log_attempt(kind: str, run_id: str | None, notebook: str) -> None:
    """Tell the scheduler this task started (the command counts attempts: a retry is a second one)."""
    if run_id is None:
        return
    try:
        from distributed import get_worker

        get_worker().log_event(EVENT_TOPIC, {"run": run_id, "kind": kind, "notebook": notebook,
                                                       "pid": os.getpid()})
    except (ImportError, ValueError):
        pass


def _result(kind: str, notebook: str, status: str, t0: float, **more: Any) -> dict[str, Any]:
    out = {"notebook": notebook, "command": kind, "status": status, "records": 0, "findings": [],
           "time": round(time.perf_counter() - t0, 3), "worker": _where(), "pid": os.getpid(),
           "version": __version__}
    out.update(more)
    return out


def _cell_failure(exc: BaseException) -> list[str]:
    import re

    lines = [ln for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip().splitlines() if ln.strip()]
    return lines[-12:] if lines else [type(exc).__name__]


def run_task(notebook: str, kernel: str = "python3", timeout: int = 600, run_id: str | None = None,
             save: bool = False) -> dict[str, Any]:
    """Run one notebook headless (:func:`execute_notebook`), never saving it: the command saves
    (``--save``) where the person runs it. Without *save* the kernel runs on a
    :func:`private_copy`, so nothing beside the notebook changes (its records are thrown away
    with the copy); with *save* it writes its records into the notebook's own sidecar, for the
    command to save and sign the outputs that name them. Returns ``{notebook, command: "run",
    status, records, findings, time, worker, pid, version, kept}`` (``kept``: *save*) with status
    ``ok``, ``failed`` (a cell failed that is not tagged ``raises-exception``; ``findings`` holds
    its error's last lines) or ``error`` (not a readable notebook, no such kernel, the kernel did
    not start, the open record still held, no room for the copy); for ``ok`` and ``failed`` also
    ``started`` and ``executed``, the notebook as read and as run (nbformat JSON), ``record_ids``,
    ``left_open`` (a record title or None) and ``fresh_sidecar`` (with *save*: the sidecar held no
    file before the run, :func:`~dsh_notebook.artifact.sealset.holds_no_files`)."""
    import nbformat

    started_at = time.perf_counter()
    _log_attempt("run", run_id, notebook)
    path = Path(notebook)
    if not path.is_file():
        return _result("run", notebook, "error", started_at, findings=[_not_a_notebook(path)])
    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds on a bad file
        return _result("run", notebook, "error", started_at, findings=[f"not a readable notebook ({exc})"])
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(kernel)
    except NoSuchKernel:
        return _result("run", notebook, "error", started_at, findings=[f"no kernel named {kernel!r} here"])
    if not wait_for_open_record(path):
        return _result("run", notebook, "error", started_at, findings=[
            "another kernel holds this notebook's open record (is it running elsewhere?); nothing was run"])
    started = nbformat.writes(nb)
    fresh = save and holds_no_files(sidecar_for(path))  # a copy without its folder: its save seals afresh
    for cell in nb.cells:  # only this run's outputs may name records
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    try:
        with contextlib.nullcontext(sidecar_for(path)) if save else private_copy(path) as sidecar:
            failed = execute_notebook(path, nb, kernel=kernel, timeout=timeout, sidecar=None if save else sidecar)
            left_open = open_record_title(sidecar)
    except OSError as exc:  # the private copy could not be made: nothing ran
        what = "make a private folder for the kernel" if save else \
            "copy the notebook's sidecar to run it without saving"
        return _result("run", notebook, "error", started_at, kept=save, findings=[f"cannot {what} ({exc}); nothing was run"])
    executed = any(c.get("execution_count") for c in nb.cells if c.cell_type == "code")
    if failed is not None and not executed:
        return _result("run", notebook, "error", started_at, kept=save,
                       findings=[f"the kernel did not run the notebook ({type(failed).__name__}: {failed})"])
    from ..artifact.records import current_records

    ids = current_records(nb)
    return _result("run", notebook, "ok" if failed is None else "failed", started_at, records=len(ids), kept=save,
                   findings=_cell_failure(failed) if failed is not None else [], record_ids=ids, left_open=left_open,
                   started=started, executed=nbformat.writes(nb), fresh_sidecar=fresh)


def open_record_title(sidecar: Path) -> str | None:
    """The title of the record left open in *sidecar* (``(unreadable)`` when it cannot be read),
    or None when no record is open."""
    from ..reckoner import read_record

    open_file = sidecar / "open-record.jsonl"
    if not open_file.exists():
        return None
    try:
        return read_record(open_file).title
    except ValueError:
        return "(unreadable)"


def verify_task(notebook: str, allowed_signers: Any = None, run_id: str | None = None) -> dict[str, Any]:
    """Verify one notebook (:func:`dsh_notebook.artifact.seal.verify`). Returns ``{notebook,
    command: "verify", status, records, findings, skipped, all_findings, time, worker, pid,
    version}``: status ``verified`` or ``failed`` (``records``: the records its outputs name;
    ``findings``: the first :data:`FIRST_FINDINGS` failing findings as ``check N subject:
    detail``; ``skipped``: the checks that had nothing to check, such as a ``%%reckon`` cell
    never run; ``all_findings``: every finding as a dict), or ``error`` (not a readable
    notebook; ``findings`` says why)."""
    from ..artifact.seal import UnreadableNotebook, verify

    started_at = time.perf_counter()
    _log_attempt("verify", run_id, notebook)
    path = Path(notebook)
    if not path.is_file():
        return _result("verify", notebook, "error", started_at, findings=[_not_a_notebook(path)])
    try:
        found = verify(path, allowed_signers=allowed_signers)
    except (UnreadableNotebook, UnicodeDecodeError, ValueError) as exc:
        return _result("verify", notebook, "error", started_at, findings=[f"not a readable notebook ({exc})"])
    except OSError as exc:
        return _result("verify", notebook, "error", started_at,
                       findings=[f"cannot read {exc.filename or notebook}: {exc.strerror or exc}"])
    # the records the notebook names (check 1 has one finding each; superseded ones are not named)
    n = len({f.subject for f in found if f.check == 1 and f.subject.isdigit()})
    failing = [f for f in found if f.ok is False]
    return _result("verify", notebook, "failed" if failing else "verified", started_at, records=n,
                   findings=[f"check {f.check} {f.subject}: {f.detail}" for f in failing[:FIRST_FINDINGS]],
                   failing=len(failing), skipped=[f"{f.subject}: {f.detail}" for f in found if f.ok is None],
                   all_findings=[f.as_dict() for f in found])


def worker_check(notebooks: list[str], kernel: str | None = None, warm: bool = False) -> dict[str, Any]:
    """What a worker answers before the work starts: ``{version, python, pid, kernel, unseen}``:
    the dsh_notebook version it imports, its Python, its pid, ``kernel`` None when *kernel* (for
    ``run``) exists there (else why not), and ``unseen``, the *notebooks* it cannot read.
    *warm*: also import what the tasks use (``verify``'s checks, nbclient), so a worker's first
    notebook is not charged the imports."""
    if warm:
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401

        from ..artifact import outputs, seal  # noqa: F401
    kernel_problem = None
    if kernel is not None:
        from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

        try:
            KernelSpecManager().get_kernel_spec(kernel)
        except NoSuchKernel:
            kernel_problem = f"no kernel named {kernel!r} (see `jupyter kernelspec list` there)"
    unseen = [p for p in notebooks if not (os.path.isfile(p) and os.access(p, os.R_OK))]
    return {"version": __version__, "python": sys.version.split()[0], "pid": os.getpid(), "kernel": kernel_problem,
            "unseen": unseen}
