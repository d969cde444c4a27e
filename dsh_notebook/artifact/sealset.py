"""The seal set: what a notebook's signature covers (spec: storage.md "Verification"; issue 15
items 2 and 6).

:func:`seal_set` is computed from the notebook and its sidecar folder; :func:`payload` is its
canonical JSON (sorted keys, UTF-8, no white space), the exact bytes that are signed, so that
``ssh-keygen -Y verify`` can check them (``dsh-notebook seal-payload`` writes them). It holds:

- ``cells``: one sha256 per cell, over the canonical JSON of the cell's type and source and, for
  a code cell, its outputs' content (``data`` and what the output's ``metadata.dsh`` names: the
  record, its status and sha256, the chat session, the review history; a stream's name and
  text; an error's name, value and traceback), never execution counts, timing or other
  metadata (volatile);
- ``files``: every file below the sidecar with its sha256, a ``.jsonl`` file's over its content
  with CRLF read as LF (a Windows checkout that converts line endings keeps its seal, P22),
  except exactly: empty ``*.lock`` files, the ``.gitattributes`` whose content :data:`GITATTRIBUTES`
  is (written by ``sync``), and ``bibliographic-cache/`` (a cache, never trusted or read by
  ``verify``). A symbolic link is sealed as ``symlink:<target>``;
- ``sizes``: each of those files' length in bytes (as hashed), so that ``sync`` can tell a file
  that only grew (a chat log, a review history, a ledger) from one that was rewritten;
- ``ledgers``: each ledger's head and event count;
- ``package``, ``renderer`` and ``engine_rules``: the versions that made it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from ..storage.jsonl import read_regular
from ..version import ENGINE_RULES_VERSION, RENDERER_VERSION, __version__
from .paths import sidecar_for

__all__ = ["FORMAT", "GITATTRIBUTES", "cell_digest", "file_content", "file_digest", "grew_from", "holds_no_files",
           "payload", "seal_set", "sealed_files"]

#: The seal set's format; a verifier refuses another.
FORMAT = "dsh-seal/1"
#: What ``sync`` writes to ``<stem>.dsh/.gitattributes``: git never converts line endings there.
GITATTRIBUTES = "# written by dsh-notebook sync: the seal covers these files byte for byte\n* -text\n"
_CACHE = "bibliographic-cache"
#: What an output's ``metadata.dsh`` says it shows (sealed with the output): the record, chat
#: session or review history, and the record's state and hash.
_NAMING = ("record_id", "status", "sha256", "renderer", "session_id", "records", "reviews_file")


def _joined(value: Any) -> Any:
    return "".join(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else value


def cell_digest(cell: Any) -> str:
    """sha256 of a cell's canonical content (type, source, code outputs' content)."""
    content: dict[str, Any] = {"type": cell.get("cell_type"), "source": _joined(cell.get("source", ""))}
    if cell.get("cell_type") == "code":
        outputs: list[dict[str, Any]] = []
        for o in cell.get("outputs") or []:
            if not isinstance(o, dict):
                outputs.append({"invalid": repr(o)})
                continue
            kind = o.get("output_type")
            if kind == "stream":
                outputs.append({"type": kind, "name": o.get("name"), "text": _joined(o.get("text", ""))})
            elif kind == "error":
                outputs.append({"type": kind, "ename": o.get("ename"), "evalue": o.get("evalue"),
                                "traceback": o.get("traceback")})
            else:
                data: dict[str, Any] = o["data"] if isinstance(o.get("data"), dict) else {}
                meta: dict[str, Any] = o["metadata"] if isinstance(o.get("metadata"), dict) else {}
                dsh: dict[str, Any] = meta["dsh"] if isinstance(meta.get("dsh"), dict) else {}
                outputs.append({"type": kind, "data": {k: _joined(v) for k, v in data.items()},
                                "names": {k: dsh[k] for k in _NAMING if k in dsh}})
        content["outputs"] = outputs
    return hashlib.sha256(_canonical(content)).hexdigest()


def file_content(path: Path) -> bytes:
    """The bytes a sidecar file is sealed by: a ``.jsonl`` file's with CRLF read as LF; a
    symbolic link's ``symlink:<target>``."""
    if path.is_symlink():
        return b"symlink:" + os.fsencode(os.readlink(path))
    if not path.is_file():  # a pipe, a socket or a device is never opened (a pipe would wait forever)
        return b"not-a-regular-file:" + oct(stat.S_IFMT(path.stat().st_mode)).encode()
    data = read_regular(path)
    return data.replace(b"\r\n", b"\n") if path.suffix == ".jsonl" else data


def file_digest(path: Path) -> str:
    """sha256 of :func:`file_content`."""
    return hashlib.sha256(file_content(path)).hexdigest()


def grew_from(path: Path, sha256: str, size: int) -> bool:
    """Whether *path* is the sealed file (*sha256*, *size* bytes) with lines appended: its first
    *size* bytes are the sealed ones (a chat log, a review history or a ledger that went on)."""
    data = file_content(path)
    return len(data) >= size and hashlib.sha256(data[:size]).hexdigest() == sha256


def holds_no_files(sidecar: Path) -> bool:
    """Whether the sidecar folder *sidecar* is absent, or a folder holding none of the files a
    seal covers (:func:`sealed_files`): what ``run`` checks before a run, so that a notebook
    copied without its folder is sealed afresh after it (``sync_node``'s *fresh_sidecar*)."""
    if sidecar.is_symlink():
        return False
    return not sidecar.exists() or (sidecar.is_dir() and not sealed_files(sidecar))


def sealed_files(sidecar: Path) -> list[Path]:
    """The sidecar's files the seal covers (see the module docstring), sorted."""
    if not sidecar.is_dir() or sidecar.is_symlink():
        return []
    out = []
    for top, dirs, files in os.walk(sidecar, followlinks=False):
        rel_top = Path(top).relative_to(sidecar)
        if rel_top == Path("."):
            dirs[:] = [d for d in dirs if d != _CACHE]
        for name in dirs + files:
            p = Path(top) / name
            if name in dirs and not p.is_symlink():
                continue
            rel = p.relative_to(sidecar)
            if name.endswith(".lock") and not p.is_symlink() and p.stat().st_size == 0:
                continue
            if rel == Path(".gitattributes") and not p.is_symlink() and p.read_bytes() == GITATTRIBUTES.encode():
                continue
            out.append(p)
    return sorted(out)


def seal_set(nb: Any, notebook: Path, ledgers: dict[str, dict] | None = None) -> dict:
    """The seal set of the notebook node *nb* whose file is at *notebook* (its sidecar is read).
    *ledgers* (``{name: {head, events}}``, as ``sync`` seals them) default to none."""
    sidecar = sidecar_for(Path(notebook))
    files = sealed_files(sidecar)
    return {
        "format": FORMAT,
        "package": __version__,
        "renderer": RENDERER_VERSION,
        "engine_rules": ENGINE_RULES_VERSION,
        "cells": [cell_digest(c) for c in nb.get("cells", [])],
        "files": {p.relative_to(sidecar).as_posix(): file_digest(p) for p in files},
        "sizes": {p.relative_to(sidecar).as_posix(): len(file_content(p)) for p in files},
        "ledgers": dict(sorted((ledgers or {}).items())),
    }


def payload(seal: dict) -> bytes:
    """The exact bytes signed: canonical JSON of the seal set (signature fields left out)."""
    return _canonical({k: v for k, v in seal.items() if k not in ("signature", "signer", "previous")})


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
