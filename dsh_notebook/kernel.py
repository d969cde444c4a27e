"""The kernel's shared objects (spec: storage.md "Where the kernel writes"; reviewer.md "Runs
and states"): where the kernel's notebook keeps its sidecar, that notebook's ledgers, and the
one reviewer the kernel shares between ``%review``, ``%%chat`` and the reviewer panel.

Layer: below the magics (:mod:`dsh_notebook.notebook`) and the widgets, which both use it, so
neither imports the other for these; above the features. It takes the IPython shell as an
argument and never imports IPython itself.

- Per shell, a small state (kept on the shell as ``_dsh_kernel``, read and written only here): the sidecar
  lookup the ``%%reckon`` magics attach (:func:`attach_sidecar`; it follows a renamed or newly
  known notebook while no record is open), and the kernel's reviewer.
- Without an attached lookup the sidecar comes from the path rules of
  :func:`dsh_notebook.artifact.paths.locate`, and the reviewer has no sidecar.
- The reviewer is created, and its last target, focus and pause restored, on first use; it is
  replaced when the notebook's sidecar changes, and closed by :func:`close_reviewer`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: %load_ext attaches the sidecar lookup and stays light (issue 22)
    from .reviewer.runner import Reviewer

__all__ = ["attach_sidecar", "close_reviewer", "current_reviewer", "kernel_ledger", "kernel_reviewer",
           "kernel_sidecar"]


@dataclass
class _KernelState:
    sidecar: Callable[[], Path] | None = None
    reviewer: Reviewer | None = None


_LOCK = threading.Lock()


def _state(shell: Any) -> _KernelState:
    with _LOCK:
        st = getattr(shell, "_dsh_kernel", None)
        if not isinstance(st, _KernelState):
            st = _KernelState()
            shell._dsh_kernel = st
        return st


def attach_sidecar(shell: Any, sidecar: Callable[[], Path]) -> None:
    """Make ``sidecar()`` the kernel's answer to "where does this notebook write" (the ``%%reckon``
    magics attach theirs when they are loaded)."""
    _state(shell).sidecar = sidecar


def kernel_sidecar(shell: Any) -> Path:
    """The sidecar folder of the kernel's notebook (``<stem>.dsh``, or the kernel's folder under
    ``$DSH_NOTEBOOK_HOME/unsaved/`` while the notebook is unknown)."""
    lookup = _state(shell).sidecar if shell is not None else None
    if lookup is not None:
        return Path(lookup())
    from .artifact.paths import locate

    return locate(getattr(shell, "user_ns", None)).sidecar


def kernel_ledger(shell: Any, name: str = "main") -> Path:
    """The ledger ``<sidecar>/ledger/<name>.jsonl`` of the kernel's notebook."""
    return kernel_sidecar(shell) / "ledger" / f"{name}.jsonl"


def current_reviewer(shell: Any) -> Reviewer | None:
    """The kernel's reviewer if one was made, without making one."""
    return _state(shell).reviewer


def kernel_reviewer(shell: Any) -> Reviewer:
    """The kernel's reviewer (created, and restored, on first use). Without the ``%%reckon``
    magics loaded it has no sidecar."""
    st = _state(shell)
    rv = st.reviewer
    sidecar = Path(st.sidecar()) if st.sidecar is not None else None
    if rv is not None and rv.sidecar != sidecar:  # the notebook was renamed or is now known
        rv.close()
        rv = None
    if rv is None:
        from .reviewer.runner import Reviewer, reviewer_config

        config, problems = reviewer_config()
        rv = Reviewer(sidecar, **config)
        rv.config_problems = problems
        rv.restore()
        st.reviewer = rv
    return rv


def close_reviewer(shell: Any) -> None:
    """Close the kernel's reviewer (its watcher stops) and forget it."""
    st = _state(shell)
    rv, st.reviewer = st.reviewer, None
    if rv is not None:
        rv.close()
