"""Full text linked to a source (spec: research.md "Running the roles": ``research_link_fulltext``
stores the bytes under the sidecar folder and records the hash).

Design:

- ``link_fulltext(ledger, source_id, locator, *, actor, sidecar, allow_private=None)`` reads a
  local file or fetches an http(s) URL (:func:`dsh_notebook.net.fetch`: a per-read timeout, an
  overall deadline for the whole fetch, redirects included, and a 20 MB cap), appends
  ``fulltext-linked`` {source_id, locator, sha256, bytes, media_type} under *actor* (the lead's
  ``synthesis`` authority; the writer refuses anyone else) and only then moves the bytes into
  ``<sidecar>/fulltext/<sha256>.<ext>``. It returns the ledger's receipt, plus ``path`` and
  ``sha256`` when written. Nothing is stored and nothing is appended when the locator is refused
  (``FULLTEXT_REFUSED``, the rule named), cannot be read or fetched (``FULLTEXT_FETCH``), is empty
  (``"empty full text"``) or when the ledger refuses the event (its own code; the bytes are
  dropped, and a copy an earlier event stored is left as it is).
- The locator usually comes from a model (the lead's tool, the scout's ``locator``), so it is
  untrusted and the bytes go into the next model's prompt. Local files: a path (relative paths
  are taken from the notebook's folder) or a ``file://`` URL must resolve, symlinks followed, to a
  regular file inside the notebook's folder: the folder holding the sidecar ``<stem>.dsh/``, or,
  for an unsaved notebook (sidecar under ``$DSH_NOTEBOOK_HOME/unsaved/``), the kernel's current
  working directory. Refused: ``~`` paths, anything outside that folder (a symlink inside that
  points out included), hidden files and folders (a name starting with ``.``: ``.env``,
  ``.ssh/``, ``.git/``), anything under ``$DSH_NOTEBOOK_HOME`` (credentials), what is not a
  regular file (devices, fifos, ``/proc``), anything in the sidecar ``<stem>.dsh/`` itself
  (ledgers and session logs are not full texts), a file with more than one hard link (it may be a
  file from outside the folder), and every local file when that folder is the file system's root
  ``/``, the home directory ``~`` itself or ``$DSH_NOTEBOOK_HOME`` (save the notebook in a project
  folder, or start the kernel in one). The checked path is then opened component by component
  (``openat`` with ``O_NOFOLLOW`` from ``/``), so a folder swapped for a symlink after the check
  is not followed, and the opened file must be the one checked (same device and inode, and on
  Linux its ``/proc/self/fd`` path inside the folder).
- URLs go through the network layer's one checked fetcher, :func:`dsh_notebook.net.fetch`: only
  ``http`` and ``https``, every resolved address checked (loopback, private, link-local,
  unspecified, multicast, reserved or otherwise not globally routable addresses are refused,
  including the IPv4 address inside an IPv4-mapped, 6to4 or Teredo address), the connection
  pinned to the checked address (the host name kept for ``Host`` and TLS), at most
  ``MAX_REDIRECTS`` redirects each checked again. Its refusals become ``FULLTEXT_REFUSED``, its
  failures ``FULLTEXT_FETCH``.
- ``allow_private=True`` (or the environment variable ``DSH_FULLTEXT_ALLOW_PRIVATE=1`` when the
  argument is left ``None``) lifts the address rule, for tests and demos that serve a paper from
  ``127.0.0.1``. It is a keyword of this function only: the model-facing tool and the pipeline
  never pass it, so a model cannot turn it on (nor set ``timeout`` or ``deadline``, keywords of
  this function only). The local-file rule always applies.
- :func:`dsh_notebook.research.claims.fulltext_path` finds the stored copy again (the claim
  verifier's quote check).
"""

from __future__ import annotations

import errno
import hashlib
import mimetypes
import os
import stat
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..net import MAX_BYTES, TIMEOUT, FetchRefused, allow_private_default, fetch
from ..research.actors import Actor
from ..research.claims import sidecar_of
from ..research.ledger import Ledger
from ..storage import home as dsh_home

__all__ = ["FULLTEXT_FETCH", "FULLTEXT_REFUSED", "allowed_folder", "link_fulltext"]

FULLTEXT_FETCH = "FULLTEXT_FETCH"
FULLTEXT_REFUSED = "FULLTEXT_REFUSED"
# The limits (MAX_BYTES 20 MiB, TIMEOUT 30 s, DEADLINE 60 s for the whole fetch, redirects included,
# MAX_REDIRECTS 5) and the override DSH_FULLTEXT_ALLOW_PRIVATE are the network layer's (dsh_notebook.net).

_EXT = {"application/pdf": "pdf", "text/html": "html", "text/plain": "txt", "application/xml": "xml",
        "text/xml": "xml", "application/json": "json", "application/xhtml+xml": "html"}


class _Refused(Exception):
    """The locator breaks a rule (the message names it)."""


def allowed_folder(sidecar: str | os.PathLike[str]) -> Path:
    """The folder local full texts must be in: the notebook's folder (the sidecar's parent), or
    the current working directory for an unsaved notebook (sidecar under
    ``$DSH_NOTEBOOK_HOME/unsaved/``). Resolved (no symlinks)."""
    side = Path(sidecar).resolve()
    if side.parent == (dsh_home() / "unsaved").resolve():
        return Path.cwd().resolve()
    return side.parent


def _media_type(name: str, declared: str | None, data: bytes) -> str:
    if declared:
        return declared.split(";")[0].strip().lower() or "application/octet-stream"
    if data[:5] == b"%PDF-":
        return "application/pdf"
    guess, _ = mimetypes.guess_type(name)
    return guess or "application/octet-stream"


# ----------------------------------------------------------------------------- local files


def _checked(real: Path) -> None:
    """Called between the path checks and the open; a test hook (a swap race made deterministic)."""


def _open_nofollow(real: Path) -> int:
    """An fd for *real* (an absolute, resolved path) opened component by component from ``/``
    with ``openat`` and ``O_NOFOLLOW``, so no component (not only the last) may be a symlink:
    a folder swapped for a symlink after the checks makes the open fail instead of following it."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    nonblock = getattr(os, "O_NONBLOCK", 0)  # a fifo cannot hang the open
    if os.open not in os.supports_dir_fd or not nofollow or not hasattr(os, "O_DIRECTORY"):
        return os.open(real, os.O_RDONLY | nofollow | nonblock)
    *folders, name = real.parts[1:]
    dir_fd = os.open(real.anchor, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in folders:
            next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | nofollow, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = next_fd
        return os.open(name, os.O_RDONLY | nofollow | nonblock, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def _fd_path(fd: int) -> Path | None:
    """Where the open *fd* really is (Linux ``/proc/self/fd``), or ``None`` when unknown."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


def _read_local(text: str, root: Path, max_bytes: int, sidecar: Path | None = None) -> tuple[bytes, str]:
    """The bytes of the regular file *text* names inside *root* (see module docstring)."""
    if text.startswith("~"):
        raise _Refused(f"a '~' path is not expanded; give a path inside the notebook's folder {root}")
    home = dsh_home().resolve()
    try:
        user_home = Path.home().resolve()
    except (RuntimeError, OSError, KeyError):  # no home directory known
        user_home = None
    if root in (Path(root.anchor), user_home, home):
        which = ("the file system's root" if root == Path(root.anchor)
                 else "your home directory" if root == user_home else "DSH_NOTEBOOK_HOME")
        raise _Refused(f"the notebook's folder is {which} ({root}), so no local file is linked; save the notebook "
                       "in a project folder first (or start the kernel in one)")
    given = Path(text)
    path = given if given.is_absolute() else root / given
    try:
        real = path.resolve()  # symlinks followed before the folder rule is checked
    except (OSError, RuntimeError) as exc:  # a symlink loop, a permission problem
        raise OSError(f"cannot resolve {path}: {exc}") from None
    if not real.is_relative_to(root):
        how = f" (it resolves to {real})" if real != path else ""
        raise _Refused(f"it is outside the notebook's folder {root}{how}; only files inside that folder are linked")
    hidden = [part for part in real.relative_to(root).parts if part.startswith(".")]
    if hidden:
        raise _Refused(f"it is a hidden file or inside a hidden folder ({hidden[0]!r}); hidden files "
                       "(.env, .ssh, .git, ...) are not linked")
    if real.is_relative_to(home):
        raise _Refused(f"it is inside DSH_NOTEBOOK_HOME ({home}), which holds credentials and settings")
    side = Path(sidecar).resolve() if sidecar is not None else None
    if side is not None and real.is_relative_to(side):
        raise _Refused(f"it is inside the notebook's sidecar folder {side.name}/ (ledgers, session logs and "
                       "stored copies are not full texts)")
    try:
        checked = os.stat(real, follow_symlinks=False)
    except FileNotFoundError:
        raise OSError(f"no file at {real}") from None
    except OSError as exc:
        raise OSError(f"cannot read {real}: {exc.strerror or exc}") from None
    _checked(real)
    try:
        fd = _open_nofollow(real)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _Refused(f"a part of {real} is (or became) a symlink; only files inside the notebook's "
                           "folder are linked") from None
        raise OSError(f"cannot open {real}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _Refused("it is not a regular file (a device, fifo, socket or folder)")
        if (st.st_dev, st.st_ino) != (checked.st_dev, checked.st_ino):
            raise _Refused(f"{real} changed between the check and the open (another file is there now)")
        opened = _fd_path(fd)
        if opened is not None and not opened.is_relative_to(root):
            raise _Refused(f"the file opened is {opened}, outside the notebook's folder {root}")
        if st.st_nlink > 1:
            raise _Refused(f"it has {st.st_nlink} hard links, and a hard link may be a file from outside the "
                           "notebook's folder; copy the file into the folder instead")
        if st.st_size > max_bytes:
            raise OSError(f"{real} is {st.st_size} bytes, over the {max_bytes}-byte cap")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = fh.read(max_bytes + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > max_bytes:
        raise OSError(f"{real} is over the {max_bytes}-byte cap")
    return data, real.name


# ----------------------------------------------------------------------------- linking


def link_fulltext(ledger: Ledger, source_id: str, locator: str, *, actor: Actor,
                  sidecar: str | os.PathLike[str] | None = None, timeout: float = TIMEOUT,
                  max_bytes: int = MAX_BYTES, allow_private: bool | None = None,
                  deadline: float | None = None) -> dict[str, Any]:
    """Store the full text at *locator* (a local path, a ``file://`` URL or an http(s) URL) and
    record it; see the module docstring for the rules. *sidecar* defaults to the ledger's
    ``<stem>.dsh`` folder; *allow_private* ``None`` reads ``DSH_FULLTEXT_ALLOW_PRIVATE``; *deadline*
    (seconds for the whole fetch, redirects included) defaults to ``min(DEADLINE, 3 * timeout)``."""
    sidecar = Path(sidecar) if sidecar is not None else sidecar_of(ledger)
    allow_private = allow_private_default(allow_private)  # None: DSH_FULLTEXT_ALLOW_PRIVATE
    text = str(locator if locator is not None else "").strip()

    def refuse(code: str, why: str) -> dict[str, Any]:
        return {"ok": False, "code": code, "error": f"cannot link the full text at {text!r}: {why}; nothing was "
                                                    "stored or recorded"}

    if not text:
        return refuse(FULLTEXT_REFUSED, "the locator is empty (give a URL or a file in the notebook's folder)")
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    try:
        if scheme in ("http", "https"):
            page = fetch(text, timeout=timeout, deadline=deadline, max_bytes=max_bytes,
                         allow_private=allow_private, user_agent="dsh-notebook research (fulltext)")
            data, declared, name = page.content, page.content_type, urlsplit(page.url).path
        elif scheme == "file":
            if parts.netloc not in ("", "localhost"):
                raise _Refused(f"a file:// URL names a host ({parts.netloc!r}); only local files are read")
            data, name = _read_local(unquote(parts.path), allowed_folder(sidecar), max_bytes, sidecar)
            declared = None
        elif scheme and "://" in text:
            raise _Refused(f"the {scheme}: scheme is not supported (http, https, file or a local path)")
        else:
            data, name = _read_local(text, allowed_folder(sidecar), max_bytes, sidecar)
            declared = None
    except (_Refused, FetchRefused) as exc:
        return refuse(FULLTEXT_REFUSED, str(exc))
    except Exception as exc:  # noqa: BLE001 - FetchFailed, OSError or a reader's own: nothing written
        return refuse(FULLTEXT_FETCH, " ".join(str(exc).split()) or type(exc).__name__)
    if not data:
        return refuse(FULLTEXT_REFUSED, "empty full text (0 bytes)")
    sha = hashlib.sha256(data).hexdigest()
    media = _media_type(name, declared, data)
    ext = _EXT.get(media) or ("".join(c for c in Path(name).suffix.lstrip(".").lower() if c.isalnum())[:8] or "bin")
    folder = sidecar / "fulltext"
    target = folder / f"{sha}.{ext}"
    made_folder = not folder.exists()
    tmp = folder / f".{sha}.{os.getpid()}.{id(data):x}.tmp"
    try:  # the bytes wait beside their place until the ledger accepts the event
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        return refuse(FULLTEXT_FETCH, f"cannot write under {folder} ({exc.strerror or exc})")
    receipt = ledger.append("fulltext-linked", {"source_id": source_id, "locator": text, "sha256": sha,
                                                "bytes": len(data), "media_type": media}, actor)
    if not receipt.get("ok"):
        tmp.unlink(missing_ok=True)
        if made_folder:
            try:
                folder.rmdir()
            except OSError:
                pass
        return receipt
    try:
        os.replace(tmp, target)  # an identical earlier copy is replaced by the same bytes
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        return {**receipt, "sha256": sha, "bytes": len(data), "media_type": media, "path": str(target),
                "warning": f"recorded, but the copy could not be moved to {target} ({exc.strerror or exc})"}
    return {**receipt, "sha256": sha, "bytes": len(data), "media_type": media, "path": str(target)}
