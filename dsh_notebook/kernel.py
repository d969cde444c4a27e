"""The kernel's shared objects (spec: storage.md "Where the kernel writes"; reviewer.md "Runs
and states"): where the kernel's notebook keeps its sidecar, that notebook's ledgers, and the
one reviewer the kernel shares between ``%review``, ``%%chat`` and the reviewer panel.

Layer: below the magics (:mod:`dsh_notebook.notebook`) and the widgets, which both use it, so
neither imports the other for these; above the features. It takes the IPython shell as an
argument and never imports IPython itself.

- The sidecar is the ``%%reckon`` magics' location when they are loaded (it follows a renamed
  or newly known notebook while no record is open: ``ReckonMagics.refresh_location``), else the
  path rules of :func:`dsh_notebook.artifact.paths.locate`.
- The reviewer is created, and its last target, focus and pause restored, on first use; it is
  replaced when the notebook's sidecar changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .artifact.paths import locate
from .reviewer.runner import Reviewer, reviewer_config

__all__ = ["kernel_ledger", "kernel_reviewer", "kernel_sidecar"]


def _reckon_magics(shell: Any) -> Any:
    registry = getattr(getattr(shell, "magics_manager", None), "registry", None) or {}
    return registry.get("ReckonMagics")


def kernel_sidecar(shell: Any) -> Path:
    """The sidecar folder of the kernel's notebook (``<stem>.dsh``, or the kernel's folder under
    ``$DSH_NOTEBOOK_HOME/unsaved/`` while the notebook is unknown)."""
    rm = _reckon_magics(shell) if shell is not None else None
    if rm is not None:
        rm.refresh_location()
        return Path(rm.location.sidecar)
    return locate(getattr(shell, "user_ns", None)).sidecar


def kernel_ledger(shell: Any, name: str = "main") -> Path:
    """The ledger ``<sidecar>/ledger/<name>.jsonl`` of the kernel's notebook."""
    return kernel_sidecar(shell) / "ledger" / f"{name}.jsonl"


def kernel_reviewer(shell: Any) -> Reviewer:
    """The kernel's reviewer (created, and restored, on first use; kept on the shell as
    ``_dsh_reviewer``). Without the ``%%reckon`` magics loaded it has no sidecar."""
    rv = getattr(shell, "_dsh_reviewer", None)
    rm = _reckon_magics(shell)
    if rm is not None:
        rm.refresh_location()
    sidecar = rm.location.sidecar if rm is not None else None
    if rv is not None and rv.sidecar != sidecar:  # the notebook was renamed or is now known
        rv.close()
        rv = None
    if rv is None:
        config, problems = reviewer_config()
        rv = Reviewer(sidecar, **config)
        rv.config_problems = problems
        rv.restore()
        shell._dsh_reviewer = rv
    return rv
