"""Checks on claims done in code before any model is asked (spec: research.md "Running the
roles": the claim verifier's first step checks that the quote occurs in the stored fulltext).

``quote_in_fulltext(state, claim, *, sidecar)`` -> ``(bool, reason)``: the claim's quote must occur
in the source's stored fulltext decoded as UTF-8 (HTML has its tags stripped and entities
unescaped first) under the rule of :func:`dsh_notebook.quotes.find_quote`, shared with the
reviewer: only typographic punctuation and spacing are folded (never case, digits, superscripts
or letters), and an ellipsis never bridges (each fragment verbatim and in order; an elision that
leaves out a negation is not found). A PDF is not read without a text
extractor: if ``pypdf`` happens to be installed its text is used, otherwise the answer is
``False`` with the reason that the text cannot be checked (no new dependency).

``fulltext_path(sidecar, sha256)`` finds a stored copy ``<sidecar>/fulltext/<sha256>.*`` (written by
:func:`dsh_notebook.research_pipeline.fulltext.link_fulltext`); ``sidecar_of(ledger)`` is the sidecar
folder a ledger lives in.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..quotes import find_quote, fold
from .fold import Claim, LedgerState

if TYPE_CHECKING:
    from .ledger import Ledger


def sidecar_of(ledger: Ledger) -> Path:
    """``<stem>.dsh/ledger/main.jsonl`` -> ``<stem>.dsh``."""
    return Path(ledger.path).parent.parent


def fulltext_path(sidecar: str | os.PathLike[str], sha256: str) -> Path | None:
    """The stored copy ``<sidecar>/fulltext/<sha256>.*``, or ``None``."""
    folder = Path(sidecar) / "fulltext"
    if not folder.is_dir():
        return None
    return next(iter(sorted(p for p in folder.glob(f"{sha256}.*") if not p.name.startswith("."))), None)


__all__ = ["fulltext_path", "normalise", "quote_in_fulltext", "sidecar_of", "stored_text"]

_TAGS = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]+>", re.DOTALL | re.IGNORECASE)


def normalise(text: str) -> str:
    """The folding :func:`dsh_notebook.quotes.fold` applies: typographic punctuation and spacing
    made plain, whitespace collapsed; nothing else."""
    return fold(text)


def _pdf_text(data: bytes) -> str | None:
    try:
        import io

        import pypdf  # optional: used only when already installed
    except ImportError:
        return None
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        text = "\n".join(page.extract_text() or "" for page in reader.pages)
    except Exception:  # noqa: BLE001 - pypdf raises many kinds of error on a damaged PDF: then the text is unknown
        return None
    return text if text.strip() else None


def stored_text(path: Path, media_type: str) -> tuple[str | None, str]:
    """``(text, "")`` of a stored fulltext, or ``(None, reason)``."""
    data = path.read_bytes()
    if media_type == "application/pdf" or data[:5] == b"%PDF-":
        text = _pdf_text(data)
        if text is None:
            return None, ("the fulltext is a PDF and its text cannot be extracted here (no PDF text extractor); "
                          "link a text or HTML version of the same work to check the quote")
        return text, ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, f"the stored fulltext ({media_type}) is not UTF-8 text; the quote cannot be checked"
    if "html" in media_type or "xml" in media_type or text.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        text = html.unescape(_TAGS.sub(" ", text))
    return text, ""


def quote_in_fulltext(state: LedgerState, claim: Claim | str, *,
                      sidecar: str | os.PathLike[str]) -> tuple[bool, str]:
    """Whether *claim*'s quote occurs in its source's stored fulltext (see module docstring)."""
    if isinstance(claim, str):
        if claim not in state.claims:
            return False, f"claim {claim!r} is not in the ledger"
        claim = state.claims[claim]
    source = state.sources.get(claim.source_id)
    if source is None:
        return False, f"claim {claim.claim_id!r}: its source {claim.source_id!r} is not in the ledger"
    if source.fulltext is None:
        return False, f"claim {claim.claim_id!r}: source {source.source_id!r} has no linked fulltext to check against"
    sha = source.fulltext["sha256"]
    want = claim.span.get("fulltext_sha256")
    if want is not None and want != sha:
        return False, (f"claim {claim.claim_id!r}: its span names fulltext {want}, but the linked fulltext of "
                       f"{source.source_id!r} is {sha}")
    path = fulltext_path(sidecar, sha)
    if path is None:
        return False, f"claim {claim.claim_id!r}: the stored fulltext {sha} is missing from {Path(sidecar) / 'fulltext'}"
    if hashlib.sha256(path.read_bytes()).hexdigest() != sha:
        return False, f"claim {claim.claim_id!r}: the stored fulltext {path.name} no longer has sha256 {sha}"
    text, why = stored_text(path, source.fulltext.get("media_type") or "")
    if text is None:
        return False, f"claim {claim.claim_id!r}: {why}"
    quote = claim.span.get("quote", "")
    if not fold(quote):
        return False, f"claim {claim.claim_id!r} has an empty quote"
    check = find_quote(quote, text)
    if check.found:
        return True, f"claim {claim.claim_id!r}: the quote occurs in the stored fulltext {sha[:12]} ({check.reason})"
    return False, (f"claim {claim.claim_id!r}: the quote {fold(quote)[:80]!r} does not occur in the stored fulltext "
                   f"of {source.source_id!r} ({sha[:12]}): {check.reason}")
