"""Notebook widgets (ipywidgets): the ``%%chat`` live view and the academic-mode toggle; the
reviewer panel and ledger explorer follow. Importing this package imports ipywidgets."""

from .academic import AcademicToggle
from .chat import ChatView
from .ledger import LedgerExplorer
from .reviewer import ReviewerPanel

__all__ = ["AcademicToggle", "ChatView", "LedgerExplorer", "ReviewerPanel"]
