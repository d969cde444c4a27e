"""Which conversation a review reads (spec: reviewer.md "Surface", "Sources"): the words of
``%review --target`` and the reviewer panel's picker turned into ``(source, path)``, and a
target shown relative to a folder. Shared by the magic, the panel and the server's routes.
Plain Python: no IPython, no widgets.
"""

from __future__ import annotations

from pathlib import Path

from .errors import ReviewerError

__all__ = ["ReviewUsageError", "relative_target", "resolve_target"]


class ReviewUsageError(ReviewerError, ValueError):
    """A malformed ``%review`` line or ``--target`` (or a panel choice that cannot be used);
    nothing was changed. The message says why."""

    code = "REVIEW_USAGE"


def resolve_target(words: list[str], sidecar: Path | None) -> tuple[str, Path]:
    """``["this"]`` / ``["session", PATH]`` / ``[SOURCE, PATH]`` -> ``(source, path)``."""
    kind = words[0]
    if kind == "this":
        if len(words) != 1:
            raise ReviewUsageError("--target this takes no path")
        folder = (sidecar / "sessions") if sidecar else None
        logs = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if folder and folder.is_dir() else []
        if not logs:
            raise ReviewUsageError("this notebook has no chat yet: run a %%chat cell first")
        return "notebook", logs[-1]
    if len(words) != 2:
        raise ReviewUsageError(f"--target {kind} needs one PATH")
    path = Path(words[1]).expanduser()
    if kind in ("session", "notebook"):  # `notebook` as the command line names it
        if path.suffix == ".ipynb" or path.is_dir():
            folder = (path.with_name(path.stem + ".dsh") if path.suffix == ".ipynb" else path)
            folder = folder / "sessions" if (folder / "sessions").is_dir() else folder
            logs = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if folder.is_dir() else []
            if not logs:
                raise ReviewUsageError(f"no chat session logs in {folder}")
            return "notebook", logs[-1]
        return "notebook", path
    if kind not in ("codex", "dsh", "claude", "chat"):
        raise ReviewUsageError(f"unknown target {kind!r}; use this, session (or notebook), codex, dsh, claude or chat")
    return kind, path


def relative_target(target: object, base: Path | None) -> object:
    if not isinstance(target, dict) or base is None:
        return target
    try:
        return {**target, "path": str(Path(target["path"]).relative_to(base))}
    except (KeyError, ValueError, TypeError):
        return target
