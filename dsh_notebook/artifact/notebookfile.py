"""Writing a notebook file: atomically, and one writer at a time (spec: storage.md "What goes into
the notebook"; issue 16 item 2).

* Every write of a notebook is a temporary file beside it, fsynced, then renamed over it
  (:func:`write_notebook`): a full disk or a kill mid-write leaves the old file byte for byte.
* ``dsh-notebook run``, ``sync``, ``prune`` and the server's pre-save hook of one notebook hold
  one lock (:func:`notebook_lock`, a hidden ``.<name>.lock`` file beside it, taken with
  filelock), so two of them never interleave a read and a write.
* ``run`` saves by reading the file again under the lock and putting its outputs into the cells
  by cell id (:func:`save_run`): a ``sync`` or a save that changed only metadata meanwhile is
  kept; cells added, removed or edited meanwhile are never overwritten: the run's notebook is
  saved beside it (``NAME.run-<UTC time>.ipynb``) and the caller says so.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import DshError
from ..storage import atomic_write_text

#: Seconds ``run``, ``sync`` and ``prune`` wait for another writer of the same notebook.
LOCK_TIMEOUT = 60.0


class NotebookBusy(DshError):
    """Another dsh-notebook process (``run``, ``sync``, ``prune`` or a JupyterLab save through the
    server) held the notebook's lock longer than the timeout; nothing was written."""

    code = "NOTEBOOK_BUSY"


def lock_file(notebook: str | Path) -> Path:
    """The notebook's lock file: ``.<name>.lock`` beside it (hidden, empty)."""
    path = Path(notebook)
    return path.with_name(f".{path.name}.lock")


@contextlib.contextmanager
def notebook_lock(notebook: str | Path, timeout: float | None = None) -> Iterator[None]:
    """Hold the notebook's lock for the block. Raises :class:`NotebookBusy` after *timeout*
    seconds (:data:`LOCK_TIMEOUT` when None). Not reentrant: take it once around a
    read-modify-write."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(lock_file(notebook)), thread_local=False)
    try:
        lock.acquire(timeout=LOCK_TIMEOUT if timeout is None else timeout)
    except Timeout:
        raise NotebookBusy(f"another dsh-notebook process (run, sync, prune or a JupyterLab save) is writing "
                           f"{Path(notebook).name}; nothing was written: try again when it is done") from None
    try:
        yield
    finally:
        lock.release()


def write_notebook(notebook: str | Path, nb: Any) -> None:
    """Write nbformat node *nb* to *notebook* atomically (temporary file, fsync, rename); on any
    failure the old file is left as it was. Raises ``OSError``."""
    import nbformat

    atomic_write_text(Path(notebook), nbformat.writes(nb) + "\n")


def _shape(nb: Any) -> list[tuple[Any, str, str]]:
    """What a person edits: each cell's id, type and source, in order."""
    return [(c.get("id"), c.get("cell_type"), c.get("source") if isinstance(c.get("source"), str)
             else "".join(c.get("source") or [])) for c in nb.cells]


def save_run(notebook: str | Path, started: Any, executed: Any, problems: list[str] | None = None, *,
             fresh_sidecar: bool = False) -> Path:
    """Save the outputs of a run of *notebook*: *started* is the notebook as the run read it,
    *executed* the same cells with their outputs. Under the notebook's lock the file is read
    again; when its cells are still *started*'s (ids, types and sources: metadata may have
    changed, e.g. by ``sync``) the outputs and execution counts go into it by cell id, and it is
    indexed and signed in memory (:func:`~.seal.sync_node`, sentences in *problems*) and written
    once: no kill can leave new outputs under an old seal.
    Otherwise (cells added, removed or edited meanwhile, or a file that no longer reads) the
    person's file is left alone and *executed* is written beside it as
    ``<stem>.run-<UTC time>.ipynb``. Returns the path written. *fresh_sidecar*: the sidecar held
    no file when the run started (:func:`~.sealset.holds_no_files`), so the seal the notebook
    carried (a copy's, made beside another folder) is replaced rather than kept faith with."""
    import nbformat

    from .seal import MetadataError, SealRefused, sync_node

    path = Path(notebook)
    with notebook_lock(path):
        try:
            current = nbformat.read(str(path), as_version=4)
        except Exception:  # noqa: BLE001 - gone, or no longer a notebook: never overwritten
            current = None
        if current is None or _shape(current) != _shape(started):
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            beside = path.with_name(f"{path.stem}.run-{stamp}{path.suffix}")
            n = 1
            while beside.exists():
                n += 1
                beside = path.with_name(f"{path.stem}.run-{stamp}-{n}{path.suffix}")
            write_notebook(beside, executed)
            return beside
        for mine, done in zip(current.cells, executed.cells):
            if mine.get("cell_type") == "code":
                mine["outputs"] = done.get("outputs", [])
                mine["execution_count"] = done.get("execution_count")
        signed = copy.deepcopy(current)
        try:  # indexed and signed in memory: one write, so no kill leaves outputs under an old seal
            sync_node(signed, path, problems, fresh_sidecar=fresh_sidecar)
            current = signed
        except (SealRefused, MetadataError, nbformat.ValidationError) as exc:  # outputs saved; index and seal as they were
            if problems is not None:
                problems.append("the outputs are saved, but the index and seal were not renewed: "
                                + str(exc).replace("the seal is not renewed and nothing was written: ", ""))
        write_notebook(path, current)
        return path
