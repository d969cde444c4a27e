"""One of each text format (issue 22, item 2): the one LaTeX escaper, the one Markdown escaper,
the one superscript table and the one UTC timestamp for new files.

Design:

- Every layer that writes LaTeX, Markdown, superscript exponents or a timestamp imports it from
  here (the bottom layer, so the engine, the article writer, the renderers and the views share
  one copy). HTML is escaped by :func:`html.escape` and Jinja2's autoescape, never by hand.
- :func:`latex_text` escapes character by character in one pass, so a replacement is never
  escaped again: ``a\\b`` is ``a\\textbackslash{}b`` (the second copy of the escaper replaced
  ``\\`` first, then escaped that replacement's braces: ``a\\textbackslash\\{\\}b``).
- :func:`markdown_text` makes a text literal Markdown: HTML-escaped (Markdown passes raw HTML
  through) and Markdown's special characters backslashed.
- :func:`utc_now` is ISO 8601 in UTC with milliseconds and ``Z``
  (``2026-12-02T16:40:00.123Z``), for timestamps written into new files. Record rows keep their
  millisecond ``at`` (upstream compatibility) and file-name stamps keep their compact forms.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime

__all__ = ["FROM_SUPERSCRIPTS", "LATEX_SPECIALS", "SUPERSCRIPTS", "latex_text", "markdown_text", "superscript", "utc_now"]

#: LaTeX's special characters in running text and what each is written as.
LATEX_SPECIALS: dict[str, str] = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "_": r"\_", "%": r"\%", "^": r"\^{}", "~": r"\~{}",
}
_LATEX_TABLE = str.maketrans(LATEX_SPECIALS)

#: Markdown's special characters, backslashed by :func:`markdown_text`.
_MARKDOWN_SPECIALS = "\\`*_[]#|$"

#: A minus sign and the digits as superscripts (``str.translate`` table): ``"-12"`` -> ``"⁻¹²"``.
SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
#: The same table read back, and a superscript plus (which a model may write): ``"⁻¹²"`` -> ``"-12"``,
#: ``"⁺³"`` -> ``"+3"``.
FROM_SUPERSCRIPTS = {**{v: k for k, v in SUPERSCRIPTS.items()}, ord("⁺"): ord("+")}


def latex_text(s: str) -> str:
    """*s* as literal LaTeX running text: each of ``\\ { } $ & # _ % ^ ~`` replaced by the
    command that prints it (``\\textbackslash{}``, ``\\{``, ..., ``\\~{}``), in one pass."""
    return s.translate(_LATEX_TABLE)


def markdown_text(s: str) -> str:
    """*s* as literal Markdown text: ``&``, ``<``, ``>`` as HTML entities, then each of
    ``\\ ` * _ [ ] # | $`` backslashed."""
    s = html.escape(s, quote=False)
    for ch in _MARKDOWN_SPECIALS:
        s = s.replace(ch, "\\" + ch)
    return s


def superscript(n: int | str) -> str:
    """An integer exponent in superscript digits: ``-3`` -> ``"⁻³"``; other characters of a
    string are kept."""
    return str(n).translate(SUPERSCRIPTS)


def utc_now() -> str:
    """The current time, ISO 8601 in UTC with milliseconds and ``Z``: ``'2026-12-02T16:40:00.123Z'``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
