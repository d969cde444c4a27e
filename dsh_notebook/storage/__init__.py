"""Storage for dsh-notebook sidecars (spec: storage.md "Writing rules", "Where the kernel
writes"): strict JSONL with locking, and atomic file helpers.

Plain Python (filelock, numpy); knows nothing of notebooks. See ``jsonl``, ``atomic`` and
``home`` (the user-wide home folder).
"""

from .atomic import atomic_rename, atomic_write_bytes, atomic_write_text, fsync_dir
from .home import home
from .jsonl import (
    JsonlRead,
    JsonlWriter,
    LockedError,
    Problem,
    StorageError,
    UnterminatedLineError,
    dumps_line,
    is_locked,
    lock_if_free,
    lock_path,
    read_jsonl,
    set_aside_torn,
)

__all__ = [
    "JsonlRead",
    "JsonlWriter",
    "LockedError",
    "Problem",
    "StorageError",
    "UnterminatedLineError",
    "atomic_rename",
    "atomic_write_bytes",
    "atomic_write_text",
    "dumps_line",
    "fsync_dir",
    "home",
    "is_locked",
    "lock_if_free",
    "lock_path",
    "read_jsonl",
    "set_aside_torn",
]
