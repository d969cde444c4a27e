"""Whether a quote occurs in a text (issue 21, item 4): the one rule the reviewer's evidence
check (:func:`dsh_notebook.reviewer.review.verify_evidence`) and the ledger's
:func:`dsh_notebook.research.claims.quote_in_fulltext` both apply.

The rule:

- **Folded: typographic punctuation and spacing only.** ``’ ‘ ′`` against ``'``, ``“ ” ″``
  against ``"``, a run of ``– —`` (and ``-``) against one ``-``, ``…`` against ``...``,
  non-breaking and other Unicode spaces against a space, a soft hyphen dropped, and every
  run of whitespace against one space. Text is compared in NFC (canonically equal strings are
  the same text). Nothing else is folded: not case, not digits, not superscripts or
  subscripts, not letters (``10⁶`` never matches ``106``, ``x²`` never matches ``x2``).
- **An ellipsis never bridges.** A quote found whole (ellipsis and all) is found. Otherwise
  an ellipsis in the quote (``...``, ``…``, ``[...]``, ``(...)``) marks an elision: each
  fragment between ellipses must occur verbatim (folded as above) and in order, each after
  the previous one ends.
- **An elision may not remove a negation.** If the text left out between two fragments
  holds ``not``, ``no``, ``never``, ``without`` (or ``n't``, ``cannot``, ``nor``, the prefix
  ``non-``), the quote is not found: cutting "is *not* safe" to "is ... safe" reverses what
  was said. Nor may an elision cut inside a word ("was ... safe" is not in "was unsafe").

:func:`find_quote` returns a :class:`QuoteCheck` (``found`` and a one-line ``reason``);
:func:`fold` is the folding alone.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["NEGATIONS", "QuoteCheck", "find_quote", "fold"]

_PUNCT = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u2033": '"',
    "\u2013": "-", "\u2014": "-",
    "\u2026": "...",
    "\u00ad": "",
})
#: Spaces other than whitespace ``str.split`` already knows (NBSP, narrow NBSP, figure space are
#: whitespace to Python; zero-width ones are not).
_ZERO_WIDTH = str.maketrans({"\u200b": "", "\u2060": "", "\ufeff": ""})
_DASHES = re.compile(r"-{2,}")
_WS = re.compile(r"\s+")
_ELLIPSIS = re.compile(r"\s*(?:\[\s*\.\.\.\s*\]|\(\s*\.\.\.\s*\)|\.\.\.)\s*")
#: Words whose removal by an elision reverses a statement.
NEGATIONS = ("not", "no", "never", "without", "n't", "cannot", "nor", "non-")
MAX_PLACEMENTS = 200
_NEGATION = re.compile(r"(?<![A-Za-z])(?:not|no|never|without|cannot|nor)(?![A-Za-z])|n't(?![A-Za-z])"
                       r"|(?<![A-Za-z])non-", re.IGNORECASE)


@dataclass(frozen=True)
class QuoteCheck:
    """``found``: the quote occurs under the rule above; ``reason``: one line saying why not
    (or how it was found)."""

    found: bool
    reason: str

    def __bool__(self) -> bool:
        return self.found


def fold(text: str) -> str:
    """``text`` with typographic punctuation and spacing folded to their ASCII forms and
    whitespace runs made one space (stripped); nothing else changes."""
    t = unicodedata.normalize("NFC", text).translate(_PUNCT).translate(_ZERO_WIDTH)
    t = _DASHES.sub("-", t)
    return _WS.sub(" ", t).strip()


@functools.lru_cache(maxsize=8)
def _folded_text(text: str) -> str:
    """:func:`fold` of a text many quotes are looked up in (a full text, a transcript): folded
    once, not once per quote."""
    return fold(text)


def find_quote(quote: str, text: str) -> QuoteCheck:
    """Whether ``quote`` occurs in ``text`` (see the module docstring). With an elision, every
    placement of the fragments in order is tried (up to :data:`MAX_PLACEMENTS` per fragment),
    so a fragment that also occurs across a negation earlier does not hide a faithful
    placement later."""
    q, t = fold(quote), _folded_text(text)
    if not q:
        return QuoteCheck(False, "the quote is empty")
    if q in t:
        return QuoteCheck(True, "the quote occurs verbatim")
    fragments = [f for f in _ELLIPSIS.split(q) if f]
    if fragments == [q]:
        return QuoteCheck(False, "the quote does not occur")
    if not fragments:
        return QuoteCheck(False, "the quote is only an ellipsis")
    failures: list[str] = []
    tried: set[tuple[int, int]] = set()

    def place(n: int, at: int, previous_end: int | None) -> bool:
        if n == len(fragments):
            return True
        if (n, at) in tried:
            return False
        tried.add((n, at))
        fragment = fragments[n]
        i = t.find(fragment, at)
        if i < 0:
            where = "" if n == 0 else " after the previous one"
            failures.append(f"fragment {n + 1} of {len(fragments)} ({fragment[:60]!r}) does not occur{where}")
            return False
        for _ in range(MAX_PLACEMENTS):
            if i < 0:
                break
            end = i + len(fragment)
            # an elision never cuts inside a word ("was ... safe" is not in "was unsafe")
            cut_before = n > 0 and fragment[0].isalnum() and i > 0 and t[i - 1].isalnum()
            cut_after = n < len(fragments) - 1 and fragment[-1].isalnum() and end < len(t) and t[end].isalnum()
            if cut_before or cut_after:
                failures.append(f"fragment {n + 1} of {len(fragments)} ({fragment[:60]!r}) occurs only inside a "
                                "word, so the elision would cut a word")
                i = t.find(fragment, i + 1)
                continue
            neg = _NEGATION.search(t[previous_end:i]) if previous_end is not None else None
            if neg is None:
                if place(n + 1, i + len(fragment), i + len(fragment)):
                    return True
            else:
                failures.append(f"the part left out before fragment {n + 1} holds {neg.group(0)!r}, "
                                "so the shortened quote may say the opposite of the text")
                break  # a later placement leaves out even more, the negation included
            if previous_end is not None:
                break  # the nearest placement after the previous fragment is the only one with the least left out
            i = t.find(fragment, i + 1)
        return False

    if place(0, 0, None):
        return QuoteCheck(True, f"its {len(fragments)} fragments occur verbatim and in order")
    negation = next((f for f in failures if "left out" in f), None)
    return QuoteCheck(False, negation or failures[0] if failures else "the quote does not occur")
