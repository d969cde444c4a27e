"""Text from elsewhere, rendered inert (spec: style.md "Text from elsewhere is inert"; issue 14):
a model's reply (steered, perhaps, by a search result, a full text or a log) becomes HTML that
can show Markdown and maths but can never run in the page.

Design:

- Markdown is rendered by markdown-it-py (CommonMark) with **raw HTML off**: ``<img onerror>``,
  ``<script>``, ``<svg onload>``, ``<iframe>`` and every other tag in the text come out as
  escaped text. No hand-written sanitizer.
- Links: only ``http``, ``https`` and ``mailto`` targets become links (``rel="noopener
  noreferrer nofollow"``, ``target="_blank"``); a ``javascript:``, ``data:``, ``vbscript:``,
  ``file:`` or relative target is shown as text. Images are never loaded: an image becomes a text
  link to its (checked) address, so a reply cannot make the page fetch anything.
- Maths: ``$...$`` and ``$$...$$`` (mdit-py-plugins' dollarmath) are kept as escaped TeX between
  ``\\(...\\)`` / ``\\[...\\]`` inside ``<span class="math">``, for the page's own MathJax to
  typeset; TeX is never HTML.
- The wrapper carries ``mathjax_ignore tex2jax_ignore`` and each maths span ``mathjax_process
  tex2jax_process``, so the page's MathJax typesets only the maths Markdown found (a ``\\$`` the
  text escaped stays text). No ``style`` attribute is written (table alignment is dropped).
- A text over :data:`MAX_MARKDOWN_CHARS` is not parsed as Markdown (a megabyte of ``[`` takes
  seconds): it is shown whole, escaped, in a ``<pre>``.
- :func:`markdown_html` returns an HTML fragment wrapped in ``<div class="dsh-inert ...">``.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

__all__ = ["MAX_MARKDOWN_CHARS", "SAFE_SCHEMES", "markdown_html", "safe_url"]

#: The longest text rendered as Markdown, characters; a longer one is shown as escaped text.
MAX_MARKDOWN_CHARS = 100_000
_WRAP = '<div class="dsh-inert mathjax_ignore tex2jax_ignore">'
_MATH = "math mathjax_process tex2jax_process"

#: The only link schemes that become links.
SAFE_SCHEMES = ("http", "https", "mailto")


def safe_url(url: str) -> str | None:
    """*url* when it is an absolute ``http``/``https``/``mailto`` address without control
    characters, else ``None``."""
    text = url.strip()
    if not text or any(ord(ch) < 0x20 or ch == "\x7f" for ch in text):
        return None
    try:
        scheme = urlsplit(text).scheme.lower()
    except ValueError:
        return None
    return text if scheme in SAFE_SCHEMES else None


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    href = safe_url(str(tokens[idx].attrGet("href") or ""))
    env.setdefault("_links", []).append(href)
    if href is None:
        return ""
    return (f'<a href="{html.escape(href, quote=True)}" rel="noopener noreferrer nofollow" '
            'target="_blank">')


def _link_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    stack = env.get("_links") or [None]
    return "</a>" if stack.pop() is not None else ""


def _image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    alt = "".join(child.content for child in (token.children or [])) or "image"
    src = safe_url(str(token.attrGet("src") or ""))
    label = html.escape(f"[image: {alt}]", quote=False)
    if src is None:
        return label
    return (f'<a href="{html.escape(src, quote=True)}" rel="noopener noreferrer nofollow" target="_blank">'
            f"{label}</a>")


def _math_inline(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f'<span class="{_MATH}">\\({html.escape(tokens[idx].content, quote=False)}\\)</span>'


def _math_display_inline(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f'<span class="{_MATH} display">\\[{html.escape(tokens[idx].content.strip(), quote=False)}\\]</span>'


def _math_block(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f'<div class="{_MATH}">\\[{html.escape(tokens[idx].content.strip(), quote=False)}\\]</div>\n'


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table").enable("strikethrough")
    dollarmath_plugin(md, allow_space=True, allow_digits=False, double_inline=True)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
    md.add_render_rule("math_inline", _math_inline)
    md.add_render_rule("math_inline_double", _math_display_inline)
    md.add_render_rule("math_block", _math_block)
    md.add_render_rule("math_block_label", _math_block)
    return md


@functools.cache
def _md() -> MarkdownIt:
    """The one parser, built on first use (not at import: ``%load_ext`` stays light)."""
    return _parser()


def markdown_html(text: str) -> str:
    """*text* (Markdown from a model, a log or a page) as an inert HTML fragment: no raw HTML, no
    image loads, links only to http(s)/mailto, maths left for MathJax as escaped TeX."""
    text = str(text)
    if len(text) > MAX_MARKDOWN_CHARS:
        return f"{_WRAP}<pre>{html.escape(text, quote=False)}</pre></div>"
    env: dict[str, Any] = {}
    md = _md()
    tokens = md.parse(text, env)
    for token in tokens:
        if token.attrs and "style" in token.attrs:  # table cells' text-align: no style from here
            del token.attrs["style"]
    return _WRAP + md.renderer.render(tokens, md.options, env) + "</div>"
