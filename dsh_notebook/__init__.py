"""dsh-notebook: DeepSeek Harness's reckoner, academic mode, reviewer and research ledger in Jupyter.

``import dsh_notebook`` loads nothing heavy and never imports IPython; ``%load_ext
dsh_notebook`` registers the magics (:func:`load_ipython_extension`).
"""

from __future__ import annotations

__version__ = "0.1.0"


def load_ipython_extension(ipython) -> None:
    """Register ``%%reckon``/``%reckon``, ``%%chat``/``%chat``, ``%academic`` and ``%review`` (called by
    ``%load_ext dsh_notebook``)."""
    from .notebook.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython) -> None:
    from .notebook.magics import unload_ipython_extension as _unload

    _unload(ipython)
