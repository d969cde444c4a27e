"""dsh-notebook: DeepSeek Harness's reckoner, academic mode, reviewer and research ledger in Jupyter
(spec: README.md, the overview; the layers are in the project README's "Architecture").

``import dsh_notebook`` loads nothing heavy and never imports IPython or jupyter_server;
``%load_ext dsh_notebook`` registers the magics (:func:`load_ipython_extension`), and
jupyter-server loads the side panel's routes from :mod:`dsh_notebook.server`
(:func:`_jupyter_server_extension_points`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .version import __version__

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """Register ``%%reckon``/``%reckon``, ``%%chat``/``%chat``, ``%academic`` and ``%review`` (called by
    ``%load_ext dsh_notebook``)."""
    from .notebook.magics import load_ipython_extension as _load

    _load(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the prebuilt JupyterLab side panel lives (``jupyter labextension develop``); a wheel
    installs it under ``share/jupyter/labextensions/dsh-notebook/``."""
    return [{"src": "labextension", "dest": "dsh-notebook"}]


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    from .notebook.magics import unload_ipython_extension as _unload

    _unload(ipython)


def _jupyter_server_extension_points() -> list[dict]:
    """The jupyter-server extension (enabled on install by ``jupyter_server_config.d/dsh_notebook.json``)."""
    return [{"module": "dsh_notebook.server"}]
