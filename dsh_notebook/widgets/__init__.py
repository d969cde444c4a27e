"""Notebook widgets (ipywidgets): the ``%%chat`` live view; the academic toggle, reviewer
panel and ledger explorer follow. Importing this package imports ipywidgets."""

from .chat import ChatView

__all__ = ["ChatView"]
