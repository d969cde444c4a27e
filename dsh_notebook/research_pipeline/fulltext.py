"""Full text linked to a source (spec: research.md "Running the roles": ``research_link_fulltext``
stores the bytes under the sidecar folder and records the hash).

Design:

- ``link_fulltext(ledger, source_id, locator, *, actor, sidecar, allow_private=None)`` reads a
  local file or fetches an http(s) URL with httpx (a per-read timeout, an overall deadline for the
  whole fetch, redirects included, and a 20 MB cap), appends
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
- URLs: only ``http`` and ``https``. The host is resolved with ``socket.getaddrinfo`` and every
  address checked with ``ipaddress``: loopback, private, link-local, unspecified, multicast,
  reserved or otherwise not globally routable addresses are refused (an IPv4-mapped IPv6
  address is checked as its IPv4 address, and the IPv4 address inside a 6to4 or Teredo address
  is checked too), and the connection goes to the address that was
  checked (the host name is kept for ``Host`` and TLS), so a second DNS answer cannot point it
  elsewhere. Redirects are followed by hand, at most ``MAX_REDIRECTS``, each hop checked again.
- ``allow_private=True`` (or the environment variable ``DSH_FULLTEXT_ALLOW_PRIVATE=1`` when the
  argument is left ``None``) lifts the address rule, for tests and demos that serve a paper from
  ``127.0.0.1``. It is a keyword of this function only: the model-facing tool and the pipeline
  never pass it, so a model cannot turn it on (nor set ``timeout`` or ``deadline``, keywords of
  this function only). The local-file rule always applies.
- httpx is imported only inside the fetch, so the ledger core stays free of it.
- ``fulltext_path(sidecar, sha256)`` finds the stored copy again (the claim verifier's quote check).
"""

from __future__ import annotations

import errno
import hashlib
import ipaddress
import mimetypes
import os
import socket
import stat
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from ..research.actors import Actor
from ..research.claims import fulltext_path, sidecar_of
from ..research.ledger import Ledger
from ..storage import home as dsh_home

__all__ = ["ALLOW_PRIVATE_ENV", "DEADLINE", "FULLTEXT_FETCH", "FULLTEXT_REFUSED", "MAX_BYTES", "MAX_REDIRECTS",
           "allowed_folder", "fulltext_path", "link_fulltext", "sidecar_of"]

FULLTEXT_FETCH = "FULLTEXT_FETCH"
FULLTEXT_REFUSED = "FULLTEXT_REFUSED"
ALLOW_PRIVATE_ENV = "DSH_FULLTEXT_ALLOW_PRIVATE"
MAX_BYTES = 20 * 1024 * 1024
MAX_REDIRECTS = 5
TIMEOUT = 30.0
DEADLINE = 60.0  # the whole fetch, redirects included (the default: min(DEADLINE, 3 x timeout))

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
    if root == Path(root.anchor) or root == user_home or root == home:
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


# ----------------------------------------------------------------------------- URLs


def _address_rule(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Which rule refuses *ip*, or ``None`` for a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = [a for a in (ip.sixtofour, ip.teredo[1] if ip.teredo else None) if a is not None]
        for inner in embedded:  # 6to4 (2002::/16) and Teredo carry an IPv4 address: checked too
            rule = _address_rule(inner)
            if rule:
                return f"{rule} (an IPv4 address {inner} inside {ip})"
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
    for rule, hit in (("loopback", ip.is_loopback), ("unspecified", ip.is_unspecified),
                      ("link-local", ip.is_link_local), ("multicast", ip.is_multicast),
                      ("private", ip.is_private), ("reserved", ip.is_reserved),
                      ("non-global (not publicly routable)", not ip.is_global)):
        if hit:
            return rule
    return None


def _resolve(host: str, port: int) -> list[str]:
    """Every address *host* resolves to (``socket.getaddrinfo``)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


def _check_host(host: str, port: int, allow_private: bool) -> list[str]:
    """The addresses to connect to, every one checked; raises :class:`_Refused` naming the rule."""
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [host]
    else:
        try:
            addresses = _resolve(host, port)
        except (socket.gaierror, UnicodeError, OSError) as exc:
            raise OSError(f"cannot resolve the host {host!r} ({exc})") from None
        if not addresses:
            raise OSError(f"the host {host!r} resolves to no address")
    if not allow_private:
        for a in addresses:
            rule = _address_rule(ipaddress.ip_address(a.split("%")[0]))
            if rule:
                named = f"{host} resolves to {a}" if a != host else host
                raise _Refused(f"{named}, which is {'an' if rule[0] in 'aeiou' else 'a'} {rule} address: full texts "
                               f"are fetched from public hosts only ({ALLOW_PRIVATE_ENV}=1 lifts this for local "
                               "tests and demos)")
    return addresses


def _split_url(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise _Refused(f"{url!r}: only http and https URLs are fetched (got {scheme or 'no'} scheme)")
    try:
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        raise _Refused(f"{url!r} is not a valid URL ({exc})") from None
    if not host:
        raise _Refused(f"{url!r} names no host")
    return scheme, host, port or (443 if scheme == "https" else 80)


def _fetch(url: str, timeout: float, max_bytes: int, allow_private: bool,
           deadline: float | None = None) -> tuple[bytes, str | None, str]:
    """``(bytes, content type, final URL)``; redirects followed by hand, each hop checked. The
    whole fetch must end within *deadline* seconds (each read also has *timeout*), so a host
    trickling a byte at a time cannot hold it."""
    import httpx  # only here: the ledger core has no httpx import

    limit = min(DEADLINE, 3 * timeout) if deadline is None else deadline
    ends = time.monotonic() + limit

    def left(where: str) -> float:
        remaining = ends - time.monotonic()
        if remaining <= 0:
            raise OSError(f"{where} took longer than the {limit:g}-second deadline for the whole fetch; "
                          "the host is too slow")
        return remaining

    current, came_from = url, None
    with httpx.Client(timeout=timeout, follow_redirects=False) as client:
        for hop in range(MAX_REDIRECTS + 1):
            try:
                scheme, host, port = _split_url(current)
                addresses = _check_host(host, port, allow_private)
            except _Refused as exc:
                if came_from is None:
                    raise
                raise _Refused(f"{came_from} redirects to {current}, refused: {exc}") from None
            parts = urlsplit(current)
            default_port = port == (443 if scheme == "https" else 80)
            headers = {"User-Agent": "dsh-notebook research (fulltext)",
                       "Host": (f"[{host}]" if ":" in host else host) + ("" if default_port else f":{port}")}
            last_error: Exception | None = None
            for address in addresses:  # connect to the checked address, never to a fresh DNS answer
                ip_host = f"[{address}]" if ":" in address else address
                pinned = parts._replace(netloc=f"{ip_host}:{port}").geturl()
                request = client.build_request("GET", pinned, headers=headers,
                                               timeout=min(timeout, left(f"GET {current}")),
                                               extensions={"sni_hostname": host} if scheme == "https" else None)
                try:
                    response = client.send(request, stream=True)
                except httpx.ConnectError as exc:
                    last_error = exc
                    continue
                break
            else:
                raise OSError(f"cannot connect to {host} ({last_error})")
            try:
                if response.status_code in (301, 302, 303, 307, 308):
                    location = response.headers.get("Location")
                    if not location:
                        raise OSError(f"GET {current} answered HTTP {response.status_code} without a Location")
                    if hop == MAX_REDIRECTS:
                        raise OSError(f"{url} redirects more than {MAX_REDIRECTS} times")
                    came_from, current = current, urljoin(current, location)
                    continue
                if response.status_code != 200:
                    raise OSError(f"GET {current} answered HTTP {response.status_code}")
                length = response.headers.get("Content-Length")
                if length and length.isdigit() and int(length) > max_bytes:
                    raise OSError(f"{current} is {int(length)} bytes, over the {max_bytes}-byte cap")
                chunks, total = [], 0
                for chunk in response.iter_bytes():
                    left(f"GET {current}")
                    total += len(chunk)
                    if total > max_bytes:
                        raise OSError(f"{current} is over the {max_bytes}-byte cap")
                    chunks.append(chunk)
                return b"".join(chunks), response.headers.get("Content-Type"), current
            finally:
                response.close()
    raise OSError(f"{url} redirects more than {MAX_REDIRECTS} times")  # not reached


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
    if allow_private is None:
        allow_private = os.environ.get(ALLOW_PRIVATE_ENV, "").strip() == "1"
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
            data, declared, final = _fetch(text, timeout, max_bytes, bool(allow_private), deadline)
            name = urlsplit(final).path
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
    except _Refused as exc:
        return refuse(FULLTEXT_REFUSED, str(exc))
    except Exception as exc:  # httpx errors and OSError alike: nothing is written
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
