"""Which notebooks a corpus command works on (issue 23, item 1).

* ``dsh-notebook run PATH...`` and ``verify PATH...`` take notebook files and folders; a folder
  is searched recursively for ``*.ipynb`` files, in sorted order.
* Inside a folder, ``.ipynb_checkpoints`` (JupyterLab's autosaves), sidecar folders
  (``<stem>.dsh/`` beside ``<stem>.ipynb``: articles and records, never notebooks of the corpus)
  and hidden folders (``.git``, ``.venv``) are skipped. A file named on the command line is
  always taken, whatever its name (an unreadable one is reported by the command, never here).
* Each notebook appears once: paths are resolved (symlinks followed), so ``a.ipynb`` and
  ``./x/../a.ipynb`` are one task and the same notebook never runs twice at once.
* A path that does not exist is refused (:class:`NoSuchPath`) before anything runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..errors import DshError

#: Folder names never searched inside a corpus folder.
SKIPPED_FOLDERS = frozenset({".ipynb_checkpoints", "__pycache__"})


class NoSuchPath(DshError, ValueError):
    """A path given to ``run`` or ``verify`` that is neither a file nor a folder; nothing ran.

    >>> find_notebooks(["nope.ipynb"])  # doctest: +SKIP
    NoSuchPath: no such notebook or folder: nope.ipynb
    """

    code = "CORPUS_NO_SUCH_PATH"


def _skipped(folder: str, name: str) -> bool:
    if name in SKIPPED_FOLDERS or name.startswith("."):
        return True
    # a sidecar folder: x.dsh beside x.ipynb (a folder merely named *.dsh is searched)
    return name.endswith(".dsh") and os.path.isfile(os.path.join(folder, name[: -len(".dsh")] + ".ipynb"))


def find_notebooks(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The notebooks named by *paths* (files and folders), resolved, each once, in the order
    given (a folder's notebooks sorted by path). Raises :class:`NoSuchPath` for a path that is
    neither a file nor a folder."""
    found: list[Path] = []
    seen: set[Path] = set()

    def add(p: Path) -> None:
        try:
            r = p.resolve()
        except (RuntimeError, OSError):  # a symlink loop: kept as given, the command names it unreadable
            r = p.absolute()
        if r not in seen:
            seen.add(r)
            found.append(r)

    for given in paths:
        p = Path(given)
        if p.is_dir():
            inside: list[Path] = []
            for folder, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not _skipped(folder, d))
                inside.extend(Path(folder) / f for f in files if f.endswith(".ipynb") and not f.startswith("."))
            for f in sorted(inside):
                add(f)
        elif p.exists():  # a file (or a fifo, a device: the command names it as unreadable)
            add(p)
        else:
            raise NoSuchPath(f"no such notebook or folder: {given}")
    return found
