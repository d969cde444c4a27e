"""The user-wide home folder (spec: storage.md, "The user-wide home"; README "Home folder").

``DSH_NOTEBOOK_HOME``, default ``~/.dsh-notebook``, holds ``settings.toml``,
``credentials.toml``, ``academic.json``, ``reviewer.json``, ``reviews/``, ``unsaved/``,
``reckoner/`` and ``logs/``. :func:`home` is the only place that reads the variable; it is read
at every call, so a test (or a user) that changes it is seen at once. Plain Python: the
reckoner engine uses it too.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["HOME_ENV", "home"]

#: The environment variable naming the home folder.
HOME_ENV = "DSH_NOTEBOOK_HOME"


def home() -> Path:
    """``$DSH_NOTEBOOK_HOME``, or ``~/.dsh-notebook`` when it is unset or empty (not created
    here; not resolved)."""
    return Path(os.environ.get(HOME_ENV) or Path.home() / ".dsh-notebook")
