"""The ``%%reckon`` record view's HTML through Jinja2 with autoescape (issue 22, item 3; spec:
reckoner.md section 2 "Rendering").

Design:

- One environment for ``reckon/``, created on first use (``functools.cache``), so importing the
  renderer (``%load_ext dsh_notebook``, ``verify``) never imports Jinja2 before a record is drawn.
  ``reckon`` sits below ``widgets`` in the layers, so it keeps its own environment and templates
  (``dsh_notebook/reckon/templates/``) instead of importing ``widgets.templating``.
- The template is compiled once and kept (:func:`record_html` asks the environment's cache only
  on the first call): a cell costs one render of one template, its rows drawn by a loop, never a
  sub-template per row.
- Every value is escaped (``autoescape=True``): a title, note, cell line or refusal message shows
  as text, never as live HTML; quotes are written ``&#39;`` and ``&#34;`` (markupsafe), where the
  hand-built strings of renderer ``reckon-render/3`` wrote ``&#x27;`` and ``&quot;``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["record_html"]


@functools.cache
def _template() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("dsh_notebook.reckon", "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, auto_reload=False,
                             undefined=jinja2.StrictUndefined)
    return env.get_template("record.html.j2")


def record_html(title: str, status: str, notices: Sequence[str], rows: Sequence[Mapping[str, Any]],
                stopped: str | None) -> str:
    """The record view's ``text/html``: a ``div.dsh-reckon`` with the title and *status* (``closed``,
    ``refused``, ``open (continues in the next cell)``), then a ``table.dsh-steps`` of one row per
    notice, per step of *rows* (``render.step_rows``' dicts: ``line``, ``source``, ``ok``, ``text``,
    ``latex``, and ``code`` and ``error`` for a refused step; hidden ``note!`` rows already left
    out) and for *stopped* (the not-run text, or ``None``). Raises ``jinja2.UndefinedError`` when
    a row lacks a key the template reads."""
    return str(_template().render(title=title, status=status, notices=notices, rows=rows, stopped=stopped))
