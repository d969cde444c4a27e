"""The visible text of a web page, for the enrich step and the providers' HTML snippets (spec:
llm.md "Presets from the reckoner seed"; issue 22 item 1: a maintained extractor instead of a
hand-written parser).

* The markup is parsed by selectolax's Lexbor engine (an HTML5 parser, as browsers parse): no
  markup survives, entities are decoded once (``&lt;b&gt;`` is the text ``<b>``, never a tag), a
  comment is nothing.
* Dropped: what a reader never sees (the head, scripts, styles, ``noscript``, templates, SVG,
  iframes' fallback text, elements marked ``hidden``) and the site's navigation menus (``nav``),
  so a page's first characters (the part kept under ``enrich_chars_per_page``) are its content.
* The text of the body (or of the fragment) is joined by spaces and its whitespace collapsed;
  the result is plain text for the extraction model, never HTML for a page.

Why selectolax rather than trafilatura (measured on this machine, issue 22): selectolax is one
small compiled package (about 8 MB, imports in about 17 ms, about 0.02 ms per page) and reads
fragments such as Wikipedia's search excerpts; trafilatura pulls lxml, justext, dateparser, babel
and more (about 70 MB, imports in about 0.4 s, about 10 ms per page), returns nothing for a
fragment, and drops a page's heading.
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

from .safetext import utf8_safe

#: Elements whose text is not part of a page's content.
DROPPED_TAGS = ("head", "script", "style", "noscript", "template", "svg", "iframe", "nav")


def html_text(markup: str) -> str:
    """The visible text of an HTML page or fragment, whitespace collapsed: ``DROPPED_TAGS`` and
    elements marked ``hidden`` left out, entities decoded, no markup. Never raises for broken
    markup (an HTML5 parser recovers as a browser does); a lone surrogate becomes U+FFFD."""
    tree = LexborHTMLParser(utf8_safe(markup))
    tree.strip_tags(list(DROPPED_TAGS))
    for node in tree.css("[hidden]"):
        node.decompose()
    root = tree.body if tree.body is not None else tree.root
    if root is None:
        return ""
    return " ".join(root.text(separator=" ").split())
