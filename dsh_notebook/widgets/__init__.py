"""Notebook widgets (spec: llm.md "``%%chat``", academic.md "State and surface", reviewer.md
"Surface", research.md "The explorer"): the ``%%chat`` live view, the academic-mode toggle, the
reviewer panel and the ledger explorer (ipywidgets; importing this package imports ipywidgets).

Layer: above :mod:`dsh_notebook.kernel` (the kernel's sidecar, ledger and reviewer), the features
and :mod:`dsh_notebook.artifact`; below the magics, which show these widgets. A widget never
imports the magics."""

from .academic import AcademicToggle
from .chat import ChatView
from .ledger import LedgerExplorer
from .reviewer import ReviewerPanel

__all__ = ["AcademicToggle", "ChatView", "LedgerExplorer", "ReviewerPanel"]
