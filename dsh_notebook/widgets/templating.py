"""The widgets' HTML through Jinja2 with autoescape (issue 22, item 3): one environment for the
package, created on first use (so ``%load_ext dsh_notebook`` never imports Jinja2), loading the
templates shipped in ``dsh_notebook/widgets/templates/``.

Design:

- Every value a template prints is escaped (``autoescape=True``): a title, quote or reason from a
  model or a log shows as text, never as live HTML. A template marks nothing ``|safe`` except
  the output of another template of this package.
- A template draws from a view's typed payload (``reviewer.payloads.Insight``,
  ``research.payloads.DecisionCard``, ...), the same dict the notebook bundle and the side panel read.
- Whitespace between tags is trimmed by the templates (``{%- -%}``), so a view renders on one line
  as the hand-built strings did.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["render"]


@functools.cache
def _env() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("dsh_notebook.widgets", "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["text"] = _text
    return env


def _text(value: Any) -> Any:
    """``None`` or a missing key as empty text (the ``text`` filter); anything else as it is."""
    return "" if value is None else value


def render(template: str, **context: Any) -> str:
    """*template* (a file name under ``templates/``) rendered with *context*, every value escaped.
    Raises ``jinja2.TemplateNotFound`` for an unknown name and ``jinja2.UndefinedError`` for a
    variable the context lacks."""
    return str(_env().get_template(template).render(**context))
