"""Literal text inside an article: Markdown and LaTeX escaping (spec: reckoner.md section 3
"Articles"). What a record says (titles, names, messages) is text, never markup, in either format.
"""

from __future__ import annotations


def md_escape(s: str) -> str:
    """*s* as literal Markdown text: HTML-escaped, Markdown's special characters backslashed."""
    import html

    s = html.escape(s, quote=False)
    for ch in "\\`*_[]#|$":
        s = s.replace(ch, "\\" + ch)
    return s


def tex_escape(s: str) -> str:
    """*s* as literal LaTeX text (special characters escaped)."""
    out = []
    for ch in s:
        out.append({"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
                    "_": r"\_", "%": r"\%", "^": r"\^{}", "~": r"\~{}"}.get(ch, ch))
    return "".join(out)
