"""Literal text inside an article: Markdown and LaTeX escaping (spec: reckoner.md section 3
"Articles"). What a record says (titles, names, messages) is text, never markup, in either format.

The escapers are the package's one copy of each, in :mod:`dsh_notebook.formats` (issue 22, item 2);
this module keeps the article writer's names for them.
"""

from __future__ import annotations

from ...formats import latex_text as tex_escape
from ...formats import markdown_text as md_escape

__all__ = ["md_escape", "tex_escape"]
