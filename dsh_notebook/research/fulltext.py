"""Full text linked to a source (spec: research.md "Running the roles": ``research_link_fulltext``
stores the bytes under the sidecar folder and records the hash).

Design:

- ``link_fulltext(ledger, source_id, locator, *, actor, sidecar)`` reads a local file (its bytes
  are copied) or fetches a URL with httpx (timeout, 20 MB cap), stores the bytes as
  ``<sidecar>/fulltext/<sha256>.<ext>`` and appends ``fulltext-linked`` {source_id, locator,
  sha256, bytes, media_type} under *actor* (the lead's ``synthesis`` authority; the writer
  refuses anyone else). It returns the ledger's receipt, plus ``path`` and ``sha256`` when
  written; a read or fetch failure is ``{"ok": False, "code": "FULLTEXT_FETCH", "error"}`` and
  nothing is written.
- httpx is imported only inside the fetch, so the ledger core stays free of it.
- ``fulltext_path(sidecar, sha256)`` finds the stored copy again (the claim verifier's quote check).
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .actors import Actor
from .ledger import Ledger

__all__ = ["FULLTEXT_FETCH", "MAX_BYTES", "fulltext_path", "link_fulltext", "sidecar_of"]

FULLTEXT_FETCH = "FULLTEXT_FETCH"
MAX_BYTES = 20 * 1024 * 1024
TIMEOUT = 30.0

_EXT = {"application/pdf": "pdf", "text/html": "html", "text/plain": "txt", "application/xml": "xml",
        "text/xml": "xml", "application/json": "json", "application/xhtml+xml": "html"}


def sidecar_of(ledger: Ledger) -> Path:
    """``<stem>.dsh/ledger/main.jsonl`` -> ``<stem>.dsh``."""
    return Path(ledger.path).parent.parent


def fulltext_path(sidecar: str | os.PathLike[str], sha256: str) -> Path | None:
    """The stored copy ``<sidecar>/fulltext/<sha256>.*``, or ``None``."""
    folder = Path(sidecar) / "fulltext"
    if not folder.is_dir():
        return None
    return next(iter(sorted(folder.glob(f"{sha256}.*"))), None)


def _media_type(name: str, declared: str | None, data: bytes) -> str:
    if declared:
        return declared.split(";")[0].strip().lower() or "application/octet-stream"
    if data[:5] == b"%PDF-":
        return "application/pdf"
    guess, _ = mimetypes.guess_type(name)
    return guess or "application/octet-stream"


def _fetch(url: str, timeout: float, max_bytes: int) -> tuple[bytes, str | None]:
    import httpx  # only here: the ledger core has no httpx import

    with httpx.Client(timeout=timeout, follow_redirects=True) as client:
        with client.stream("GET", url, headers={"User-Agent": "dsh-notebook research (fulltext)"}) as r:
            if r.status_code != 200:
                raise OSError(f"GET {url} answered HTTP {r.status_code}")
            length = r.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > max_bytes:
                raise OSError(f"{url} is {int(length)} bytes, over the {max_bytes}-byte cap")
            chunks, total = [], 0
            for chunk in r.iter_bytes():
                total += len(chunk)
                if total > max_bytes:
                    raise OSError(f"{url} is over the {max_bytes}-byte cap")
                chunks.append(chunk)
            return b"".join(chunks), r.headers.get("Content-Type")


def link_fulltext(ledger: Ledger, source_id: str, locator: str, *, actor: Actor,
                  sidecar: str | os.PathLike[str] | None = None, timeout: float = TIMEOUT,
                  max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """Store the full text at *locator* (a local path or an http(s) URL) and record it; see the
    module docstring. *sidecar* defaults to the ledger's ``<stem>.dsh`` folder."""
    sidecar = Path(sidecar) if sidecar is not None else sidecar_of(ledger)
    scheme = urlparse(str(locator)).scheme.lower()
    try:
        if scheme in ("http", "https"):
            data, declared = _fetch(str(locator), timeout, max_bytes)
            name = urlparse(str(locator)).path
        else:
            path = Path(str(locator)[7:] if scheme == "file" else str(locator)).expanduser()
            if not path.is_file():
                raise OSError(f"no file at {path}")
            if path.stat().st_size > max_bytes:
                raise OSError(f"{path} is over the {max_bytes}-byte cap")
            data, declared, name = path.read_bytes(), None, path.name
    except Exception as exc:  # httpx errors and OSError alike: nothing is written
        return {"ok": False, "code": FULLTEXT_FETCH, "error": f"cannot read the full text at {locator}: {exc}"}
    sha = hashlib.sha256(data).hexdigest()
    media = _media_type(name, declared, data)
    ext = _EXT.get(media) or (Path(name).suffix.lstrip(".").lower()[:8] or "bin")
    folder = sidecar / "fulltext"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{sha}.{ext}"
    if not target.exists():
        tmp = folder / f".{sha}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, target)
    receipt = ledger.append("fulltext-linked", {"source_id": source_id, "locator": str(locator), "sha256": sha,
                                                "bytes": len(data), "media_type": media}, actor)
    if receipt.get("ok"):
        receipt = {**receipt, "sha256": sha, "bytes": len(data), "media_type": media, "path": str(target)}
    return receipt
