"""Which notebook the kernel belongs to, and where its sidecar folder is (spec: storage.md
"Where the kernel writes").

* The notebook's path comes from, in order: ``DSH_NOTEBOOK_PATH``; ``JPY_SESSION_NAME``
  (jupyter-server; absolute, or relative to the server root, while the kernel's working
  directory is the notebook's folder); ``__vsc_ipynb_file__`` (VS Code).
* ``report.ipynb`` keeps its records in ``report.dsh/`` beside it. The notebook file need
  not exist yet. ``DSH_NOTEBOOK_SIDECAR`` (with ``DSH_NOTEBOOK_PATH`` only) names another
  folder to write into: ``dsh-notebook run --no-save`` points it at a private copy of the
  sidecar, so the kernel's notebook, working folder and data files stay the real ones while
  nothing it records lands beside them (issue 23).
* When the notebook is unknown (nbclient and nbval set none of these) the kernel writes to
  ``$DSH_NOTEBOOK_HOME/unsaved/<kernel-id>.dsh/`` and says so in output metadata only.
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..storage import home

# A ledger's name, the file <stem>.dsh/ledger/NAME.jsonl: 1-100 characters (a longer one would
# exceed the file-name limit); shared by the magic, the CLI, the server's routes and sync/verify
NAME_MAX = 100
NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.-]{{0,{NAME_MAX - 1}}}")
NAME_RULE = f"letters, digits, _ . -, starting with a letter or digit, at most {NAME_MAX} characters"


#: the folder a kernel writes into instead of the sidecar beside ``DSH_NOTEBOOK_PATH`` (see above)
SIDECAR_ENV = "DSH_NOTEBOOK_SIDECAR"


def sidecar_for(notebook: str | os.PathLike[str]) -> Path:
    """``/x/report.ipynb`` -> ``/x/report.dsh``."""
    p = Path(notebook)
    return p.with_name(p.stem + ".dsh")


@dataclass(frozen=True)
class Location:
    """Where a kernel writes: ``notebook`` (a path, or ``None`` when unknown), ``sidecar``
    (the folder), ``source`` (which rule found it: ``DSH_NOTEBOOK_PATH``,
    ``JPY_SESSION_NAME``, ``__vsc_ipynb_file__`` or ``unsaved``)."""

    notebook: Path | None
    sidecar: Path
    source: str

    @property
    def known(self) -> bool:
        return self.notebook is not None


def _resolve_session_name(name: str, cwd: Path) -> Path:
    p = Path(name)
    if p.is_absolute():
        return p
    for cand in (cwd / p, cwd / p.name):
        if cand.exists():
            return cand.resolve()
    return (cwd / p.name).resolve()


def kernel_id() -> str:
    """The kernel's id from its connection file, else a stable id for this process."""
    try:
        from ipykernel import get_connection_file

        stem = Path(get_connection_file()).stem  # kernel-<id>.json, or a temp name under nbclient
        if stem:
            return stem.removeprefix("kernel-")
    except Exception:  # noqa: BLE001, S110 - outside a kernel (no ipykernel, or its RuntimeError): this process's id
        pass
    global _PROCESS_ID
    if _PROCESS_ID is None:
        _PROCESS_ID = f"process-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    return _PROCESS_ID


_PROCESS_ID: str | None = None


def locate(user_ns: dict | None = None, cwd: Path | None = None) -> Location:
    """Apply the path rules of storage.md; ``user_ns`` is the kernel's namespace (for VS Code)."""
    cwd = Path(cwd or os.getcwd())
    env = os.environ.get("DSH_NOTEBOOK_PATH")
    if env:
        nb = Path(env).expanduser()
        nb = nb if nb.is_absolute() else (cwd / nb)
        other = os.environ.get(SIDECAR_ENV)
        side = (cwd / Path(other).expanduser()).resolve() if other else sidecar_for(nb.resolve())
        return Location(nb.resolve(), side, "DSH_NOTEBOOK_PATH")
    env = os.environ.get("JPY_SESSION_NAME")
    if env and env.endswith(".ipynb"):
        nb = _resolve_session_name(env, cwd)
        return Location(nb, sidecar_for(nb), "JPY_SESSION_NAME")
    vsc = (user_ns or {}).get("__vsc_ipynb_file__")
    if isinstance(vsc, str) and vsc:
        nb = Path(vsc)
        return Location(nb, sidecar_for(nb), "__vsc_ipynb_file__")
    return Location(None, home() / "unsaved" / f"{kernel_id()}.dsh", "unsaved")


def reckoner_home(loc: Location) -> Path:
    """The reckoner's folder inside a sidecar: the sidecar itself (``open-record.jsonl``,
    ``records/`` as storage.md lays out)."""
    return loc.sidecar
