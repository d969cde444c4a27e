"""Atomic file replacement (storage.md "Writing rules": closed records renamed with ``os.replace``).

Readers see either the old or the new content, never a mix; after return the data and the
directory entry are on disk (directory fsync is best effort where ``O_DIRECTORY`` is missing).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

__all__ = ["atomic_rename", "atomic_write_bytes", "atomic_write_text", "fsync_dir"]


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync directory *path* so a rename in it survives a crash; no-op where unsupported."""
    flag = getattr(os, "O_DIRECTORY", None)
    if flag is None:  # Windows: directories cannot be opened for fsync
        return
    try:
        fd = os.open(path, os.O_RDONLY | flag)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some filesystems refuse fsync on directories
        pass
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    for flags in (os.O_RDONLY, os.O_RDWR):  # Windows needs a writable descriptor for fsync
        try:
            fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
        except OSError:
            continue
        try:
            os.fsync(fd)
            return
        except OSError:
            continue
        finally:
            os.close(fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace *path* with *data* atomically (temp file in the same directory, fsync, ``os.replace``).

    Parent directories are created. An existing file keeps its permission bits (a notebook at
    0600 stays 0600), and a symlink is written through (its target is replaced, the link kept).
    On any error the temp file is removed and *path* keeps its old content. Raises ``OSError``
    from the filesystem.
    """
    path = Path(path)
    if path.is_symlink():
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """``atomic_write_bytes(path, text.encode("utf-8"))``: UTF-8 whatever the locale, newlines as given."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_rename(
    src: str | os.PathLike[str], dst: str | os.PathLike[str], *, make_read_only: bool = False,
    synced: bool = False,
) -> None:
    """Move *src* to *dst* atomically: fsync *src* (unless the caller just did: ``synced``),
    ``os.replace`` (overwrites *dst*), fsync the directories.

    With ``make_read_only`` the file is made 0o444 before the rename, so it never appears
    writable at *dst*. The caller must have closed *src* (Windows cannot rename open files).
    Raises ``OSError`` (e.g. ``FileNotFoundError``); on failure *src* keeps its mode.
    """
    src, dst = Path(src), Path(dst)
    if not synced:
        _fsync_file(src)
    old_mode = None
    if make_read_only:
        old_mode = stat.S_IMODE(src.stat().st_mode)
        os.chmod(src, 0o444)
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, dst)
    except BaseException:
        if old_mode is not None:
            try:
                os.chmod(src, old_mode)
            except OSError:
                pass
        raise
    fsync_dir(dst.parent)
    if src.parent.resolve() != dst.parent.resolve():
        fsync_dir(src.parent)
