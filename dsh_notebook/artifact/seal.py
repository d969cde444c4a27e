"""A notebook and its sidecar folder as one verifiable artifact (spec: storage.md "What goes
into the notebook" and "Verification").

* ``sync`` writes the notebook-level index ``metadata.dsh = {version, records: {id: sha256},
  sessions, reviews, ledgers}`` and ``cell.metadata.dsh = {records: [...]}`` with nbformat;
  the notebook still validates, and its nbformat version is kept. ``sync_node`` does the same
  on an in-memory notebook (the server's pre-save hook uses it).
* ``verify`` runs the four checks: (1) every record and chat session the notebook names
  exists beside it with the hash the notebook holds; (2) every closed record reads cleanly (no torn or undecodable
  line, ``seq`` 0..n in order, its id matching its file) and re-evaluates in a fresh engine
  to identical values and dimensions; (3) every ledger's hash chain, sequence and events
  replayed in order, its head against the one ``sync`` sealed, and its fold;
  (4) nothing secret (API keys, bearer tokens) in the notebook or the sidecars.
* Findings are plain data, for a table or ``--json``.
"""

from __future__ import annotations

import gc
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DshError
from ..formats import utc_now
from ..reckon.units import unit_problem
from ..reckoner import read_record, rerun
from ..reckoner.records import RECORDS_DIR, UnreadableRecord
from ..secretscan import find, find_in_json, might_hold
from ..storage.jsonl import read_regular
from ..version import __version__
from .paths import NAME, sidecar_for

if TYPE_CHECKING:
    from nbformat import NotebookNode

    from ..reckoner.records import Record
    from ..signing import AllowedSigners

StrPath = str | Path

MIME_RECORD = "application/vnd.dsh.record+json"
MIME_SESSION = "application/vnd.dsh.session+json"
SESSIONS_DIR = "sessions"
CHECKS = {1: "named files", 2: "records replay", 3: "ledgers", 4: "no secrets", 5: "signed seal",
          6: "signed decisions", 7: "cells show records"}

class SealRefused(DshError):
    """``sync`` will not renew a signed seal: the last one no longer holds, or a file it sealed
    was rewritten or deleted (not only appended to). Nothing is written; the message names the
    file and says how the person renews it once they checked (``--accept-changes``)."""

    code = "SEAL_REFUSED"


class PruneRefused(DshError):
    """``prune`` removes nothing: the notebook does not verify (a record it still needs might look
    superseded), or no output names any record (cleared outputs would make every record look
    superseded). The message names the first problem."""

    code = "PRUNE_REFUSED"


class MetadataError(DshError, ValueError):
    """A notebook's ``metadata.dsh`` that sync cannot read (not a JSON object); it is never
    overwritten, so nothing someone put there is lost."""

    code = "METADATA_DSH"


@dataclass(frozen=True)
class Finding:
    """One result of a check: ``check`` 1-7 (:data:`CHECKS`), ``ok`` (False fails verification; None for a
    check that could not run), ``subject`` (a record id or a file) and ``detail``."""

    check: int
    ok: bool | None
    subject: str
    detail: str

    def as_dict(self) -> dict:
        return asdict(self)


def sealed_ledger(ledger_file: StrPath) -> dict[str, Any] | None:
    """The head ``sync`` sealed for the ledger ``<stem>.dsh/ledger/<name>.jsonl``, read from the
    notebook ``<stem>.ipynb`` beside its sidecar folder: ``{"head", "events", "notebook"}``, or
    ``None`` when there is no such notebook, it cannot be read, or it holds no sealed head for
    that ledger (never synced). For ``dsh-notebook ledger verify``, ``%ledger verify`` and the
    server's ledger routes, which pass it to ``Ledger.verify(expected_head=...)``."""
    f = Path(ledger_file)
    sidecar = f.parent.parent
    if f.parent.name != "ledger" or sidecar.suffix != ".dsh":
        return None
    notebook = sidecar.with_name(sidecar.stem + ".ipynb")
    try:
        with open(notebook, encoding="utf-8") as fh:
            nb = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None
    meta = nb.get("metadata") if isinstance(nb, dict) else None
    dsh = meta.get("dsh") if isinstance(meta, dict) else None
    ledgers = dsh.get("ledgers") if isinstance(dsh, dict) else None
    held = ledgers.get(f.stem) if isinstance(ledgers, dict) else None
    if not isinstance(held, dict) or not isinstance(held.get("head"), str):
        return None
    events = held.get("events")
    return {"head": held["head"], "events": events if type(events) is int else None, "notebook": notebook}


def sha256_file(path: Path) -> str:
    """sha256 of a file, a ``.jsonl`` file's with CRLF read as LF (P22: a checkout that converts
    line endings keeps its hashes; :func:`dsh_notebook.artifact.sealset.file_digest`)."""
    data = read_regular(path)
    return hashlib.sha256(data.replace(b"\r\n", b"\n") if Path(path).suffix == ".jsonl" else data).hexdigest()


class UnreadableNotebook(DshError, ValueError):
    """A file ``verify`` or ``sync`` cannot read as a notebook (not JSON, or not the notebook
    format): the message names where, as nbformat's validator does."""

    code = "NOTEBOOK_UNREADABLE"


def _read_nb(path: Path) -> NotebookNode:
    import nbformat

    try:
        nb = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    except Exception as exc:  # noqa: BLE001 - nbformat raises TypeError or AttributeError on some shapes
        try:
            why = _why_invalid(path, exc)
        except RecursionError:
            why = "its JSON is nested too deeply to read"
        raise UnreadableNotebook(f"{path.name} is not a valid notebook: {why}") from None
    # read without conversion, so the shape is checked here: verify reads cells and metadata
    major = nb.get("nbformat") if isinstance(nb, dict) else None
    if major != 4:
        hint = ("; open and save it in Jupyter, or `jupyter nbconvert --to notebook`, to upgrade it"
                if isinstance(major, int) and major < 4 else "")
        raise UnreadableNotebook(f"{path.name} is not a version 4 notebook (nbformat {major!r}){hint}")
    missing = [k for k, t in (("cells", list), ("metadata", dict)) if not isinstance(nb.get(k), t)]
    if missing:
        raise UnreadableNotebook(f"{path.name} is not a valid notebook: it has no {' and no '.join(missing)}")
    return nb


def read_notebook(path: Path) -> NotebookNode:
    """The notebook node at *path* as ``verify`` reads it (:class:`UnreadableNotebook` if it is
    not one)."""
    return _read_nb(path)


def _why_invalid(path: Path, exc: Exception) -> str:
    """nbformat's validator's first error, with where it is (``cells[1].outputs``), when the file
    is JSON; else the JSON error."""
    import nbformat

    try:
        data = json.loads(path.read_bytes())
    except ValueError as err:
        return f"not JSON ({err})"
    try:
        nbformat.validate(data)
    except nbformat.ValidationError as err:
        path_in = getattr(err, "absolute_path", None) or getattr(err, "path", None) or ()
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path_in).lstrip(".")
        first = str(getattr(err, "message", err)).splitlines()[0][:200]
        return f"{where or 'the top level'}: {first}"
    except Exception:  # noqa: BLE001 - the validator itself may choke on a shape: say what nbformat said
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


MIME_REVIEW = "application/vnd.dsh.review+json"
_FILE_ID = re.compile(r"[A-Za-z0-9_.-]{1,200}")


def _is_file_id(name: str) -> bool:
    """A record or session id that names a file in the sidecar: no path, no ``..``, at most 200
    characters (a file name must fit the file system's limit)."""
    return bool(_FILE_ID.fullmatch(name)) and ".." not in name


def _outputs(nb: NotebookNode, mime: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(cell index, output metadata.dsh)`` for every code-cell output carrying ``mime`` whose
    ``metadata.dsh`` is an object (see :func:`malformed_outputs` for the others)."""
    for i, cell in enumerate(nb.cells):
        for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            if isinstance(o, dict) and isinstance(o.get("data"), dict) and mime in o["data"]:
                meta = o.get("metadata") or {}
                dsh = meta.get("dsh") if isinstance(meta, dict) else None
                if dsh is None or isinstance(dsh, dict):
                    yield i, dsh or {}


def malformed_outputs(nb: NotebookNode) -> list[tuple[int, str]]:
    """``(cell index, the problem)`` for each dsh output (record, chat, review) whose
    ``metadata.dsh`` is not an object, or holds a record id, sha256 or session id that is not a
    string: edited by hand or by a tool, never written so by dsh-notebook."""
    out = []
    fields = {MIME_RECORD: ("record_id", "sha256", "status"), MIME_SESSION: ("session_id",),
              MIME_REVIEW: ("reviews_file",)}
    for i, cell in enumerate(nb.cells):
        for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data = o.get("data") if isinstance(o, dict) else None
            for mime, keys in fields.items():
                if not isinstance(data, dict) or mime not in data:
                    continue
                meta = o.get("metadata") or {}
                dsh = meta.get("dsh") if isinstance(meta, dict) else meta
                if dsh is not None and not isinstance(dsh, dict):
                    out.append((i, f"an output's metadata.dsh is not an object ({type(dsh).__name__})"))
                    continue
                fields_of = dsh or {}
                for key in keys:
                    value = fields_of.get(key)
                    if value is not None and not isinstance(value, str):
                        out.append((i, f"an output's metadata.dsh.{key} is not a string ({type(value).__name__})"))
                if mime == MIME_SESSION and not isinstance(fields_of.get("records", []) or [], list):
                    out.append((i, "an output's metadata.dsh.records is not a list"))
    return out


def named_records(nb: NotebookNode) -> list[tuple[int, str, str | None]]:
    """``(cell index, record id, sha256 at close or None)`` for every record output, and the
    records a model closed during a ``%%chat`` turn (sealed by ``sync``)."""
    out = [(i, m["record_id"], m.get("sha256") if isinstance(m.get("sha256"), str) else None)
           for i, m in _outputs(nb, MIME_RECORD)
           if isinstance(m.get("record_id"), str) and m["record_id"] and m.get("status") != "open"]
    out += [(i, rid, None) for i, m in _outputs(nb, MIME_SESSION)
            for rid in (m["records"] if isinstance(m.get("records"), list) else [])
            if isinstance(rid, str) and rid]
    return sorted(out, key=lambda t: t[0])


def named_reviews(nb: NotebookNode) -> list[tuple[int, str]]:
    """``(cell index, reviews file relative to the sidecar)`` for every ``%review`` output."""
    found = [(i, m.get("reviews_file")) for i, m in _outputs(nb, MIME_REVIEW)]
    return list(dict.fromkeys((i, f) for i, f in found
                              if isinstance(f, str) and re.fullmatch(r"reviews/[A-Za-z0-9_.-]{1,200}\.jsonl", f)))


def named_sessions(nb: NotebookNode) -> list[tuple[int, str]]:
    """``(cell index, session id)`` for every ``%%chat`` output."""
    found = [(i, m.get("session_id")) for i, m in _outputs(nb, MIME_SESSION)]
    return list(dict.fromkeys((i, sid) for i, sid in found if isinstance(sid, str) and sid))


def sync(notebook: StrPath, problems: list[str] | None = None, *, accept_changes: bool = False) -> dict[str, Any]:
    """Write the artifact index into the notebook file (``metadata.dsh`` and each producing
    cell's ``metadata.dsh``); returns the index. A ledger that cannot be (re)sealed keeps its old
    seal and is described in *problems* (see :func:`sync_node`). Raises ``FileNotFoundError``
    for a missing notebook, :class:`UnreadableNotebook` for one that is not valid, and
    :class:`SealRefused` (nothing written) when a file the last signed seal covers was rewritten
    or deleted and *accept_changes* is not given. The notebook's lock is held throughout
    (:func:`~.notebookfile.notebook_lock`; :class:`~.notebookfile.NotebookBusy` after its timeout)
    and the file is written atomically."""
    from .notebookfile import notebook_lock

    with notebook_lock(notebook):
        return sync_locked(notebook, problems, accept_changes=accept_changes)


def sync_locked(notebook: StrPath, problems: list[str] | None = None, *,
                accept_changes: bool = False) -> dict[str, Any]:
    """:func:`sync` for a caller that already holds the notebook's lock (``run``'s save)."""
    import nbformat

    from .notebookfile import write_notebook

    path = Path(notebook)
    nb = _read_nb(path)
    try:
        nbformat.validate(nb)  # an invalid notebook is named before anything is written
    except nbformat.ValidationError as exc:
        raise UnreadableNotebook(f"{path.name} is not a valid notebook: {_why_invalid(path, exc)}; nothing was "
                                 "written") from None
    index = sync_node(nb, path, problems, accept_changes=accept_changes)
    write_notebook(path, nb)
    return index


def prune(notebook: StrPath, problems: list[str] | None = None, *, dry_run: bool = False) -> list[dict]:
    """Delete the superseded records of *notebook*: the files in ``<stem>.dsh/records/`` that no
    cell output or chat bundle of the notebook names (:func:`~.records.current_records`), then
    sync and sign it again with the person's key (issue 15). Returns the removed records'
    summaries (``{id, title, status}``), oldest first; with *dry_run* nothing is changed.

    The open record and set-aside records (``stale/``) are never touched. Nothing is deleted
    (:class:`PruneRefused`) unless the notebook verifies as it is (every check of :func:`verify`
    holds, the signed seal among them: so no output that should name a record was stripped of
    its marker, and no record file was edited) and some output names a record; the files are
    moved out of the sidecar first and deleted only once the notebook is written: a failure
    puts them back."""
    from .notebookfile import notebook_lock

    with notebook_lock(notebook):
        return _prune_locked(Path(notebook), problems, dry_run)


def _prune_locked(path: Path, problems: list[str] | None, dry_run: bool) -> list[dict]:
    import shutil
    import tempfile

    import nbformat

    from ..reckoner import read_record
    from .notebookfile import write_notebook
    from .records import current_records

    nb = _read_nb(path)
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        raise UnreadableNotebook(f"{path.name} is not a valid notebook: {_why_invalid(path, exc)}; nothing was "
                                 "removed") from None
    current = set(current_records(nb))
    records_dir = sidecar_for(path) / RECORDS_DIR
    superseded = [f for f in sorted(records_dir.glob("*.jsonl")) if f.stem not in current and not f.is_symlink()]
    removed: list[dict] = []
    for f in superseded:
        try:
            rec = read_record(f)
            status = ("refused" if rec.ended_in_refusal else "closed") if rec.closed else "unfinished"
            removed.append({"id": f.stem, "title": rec.title, "status": status})
        except (UnreadableRecord, OSError):
            removed.append({"id": f.stem, "title": None, "status": "unreadable"})
    if not superseded:
        return removed
    if not current:
        raise PruneRefused(f"nothing was removed: no output of {path.name} names a record (cleared outputs?), so "
                           f"all {len(superseded)} would look superseded; run the notebook first")
    failed = [f for f in verify(path) if f.ok is False]
    if failed:
        raise PruneRefused(f"nothing was removed: {path.name} does not verify ({len(failed)} problem(s); first, "
                           f"check {failed[0].check}: {_printable(failed[0].subject)}: {_printable(failed[0].detail)}"
                           "); prune deletes records only from a notebook whose checks all hold")
    if dry_run:
        return removed
    trash = Path(tempfile.mkdtemp(prefix=".dsh-prune-", dir=path.parent))
    moved: list[tuple[Path, Path]] = []
    try:
        for f in superseded:
            dest = trash / f.name
            f.rename(dest)
            moved.append((f, dest))
        sync_node(nb, path, problems, pruned=frozenset(f.stem for f in superseded))
        write_notebook(path, nb)
    except BaseException:
        for f, dest in moved:
            dest.rename(f)
        shutil.rmtree(trash, ignore_errors=True)
        raise
    for _f, dest in moved:
        dest.chmod(0o644)  # closed records are read-only (for a file system that refuses to delete those)
    shutil.rmtree(trash, ignore_errors=True)
    return removed


def sync_node(nb: NotebookNode, notebook: StrPath, problems: list[str] | None = None, *, sign: bool = True,
              accept_changes: bool = False, pruned: frozenset[str] = frozenset(),
              fresh_sidecar: bool = False) -> dict[str, Any]:
    """Write the artifact index into the in-memory notebook *nb* (an nbformat node) whose file
    is, or will be, at *notebook* (its sidecar ``<stem>.dsh/`` is read; nothing is written).
    Used by :func:`sync` and by the server's pre-save hook; returns the index. Raises
    ``nbformat.ValidationError`` when the result does not validate. With *sign* (the default)
    the seal set is signed with the person's key into ``metadata.dsh.seal`` (see
    :mod:`.sealset`, :mod:`dsh_notebook.signing`); without, the old signed seal is kept as it is.

    A ledger is sealed (``{head, events}``) only when it verifies and, if it was sealed before,
    only when the old sealed head is still one of its lines (the ledger may only have grown
    since). Otherwise the old seal is kept (a ledger file that went missing keeps its seal too,
    so ``verify`` reports it) and a sentence is appended to *problems*, when given.

    *pruned*: record ids :func:`prune` removed on purpose; their sealed files may be gone and
    they leave the index. *fresh_sidecar*: the caller (``run``'s save) saw the sidecar hold no
    file when the run started (:func:`~.sealset.holds_no_files`), so every file there now is this
    run's: the notebook was copied without its folder, or the folder removed, and the seal and
    index it carried, of files that are not here, are replaced (a note in *problems*).
    Otherwise a file the last signed seal covers that was deleted or rewritten, or a seal this
    version cannot read, raises :class:`SealRefused` unless *accept_changes*."""
    import nbformat

    path = Path(notebook)
    records_dir = sidecar_for(path) / RECORDS_DIR
    index: dict = {"version": __version__, "records": {}, "sessions": [], "reviews": [], "ledgers": {}}
    old_meta = nb.metadata.get("dsh")
    if old_meta is not None and not isinstance(old_meta, dict):  # never overwritten: it may be someone's data
        raise MetadataError(f"the notebook's metadata.dsh is a {type(old_meta).__name__}, not an object; nothing "
                            "was written: remove or fix metadata.dsh (a JSON object written by dsh-notebook sync), "
                            "then sync again")
    old_meta = old_meta or {}
    old_seal = old_meta.get("seal")
    if fresh_sidecar and old_meta:  # a copy run without its folder: nothing of the old index is here
        if problems is not None and old_seal is not None:
            problems.append(f"note: {sidecar_for(path).name}/ held no files when this run started (a copy of the "
                            "notebook without its folder, or the folder was removed), so the seal the notebook "
                            "carried, of files that are not here, is replaced: the new outputs and the files this "
                            "run made are sealed afresh")
        old_meta = {"seal": old_seal} if isinstance(old_seal, dict) else {}
    elif sign and not accept_changes and old_seal is not None:
        refused = _rewritten_since(old_seal, sidecar_for(path), {f"{RECORDS_DIR}/{rid}.jsonl" for rid in pruned})
        if refused:  # nothing is changed: not the index, not the cells' metadata, not the seal
            raise SealRefused(f"the seal is not renewed and nothing was written: {refused}; dsh-notebook verify "
                              "names what changed. If you made the change yourself and checked it, sync again "
                              "with --accept-changes")
    old = old_meta.get("records")
    if isinstance(old, dict):
        # Records the notebook no longer shows (cleared outputs) keep the hash they were
        # sealed with: syncing never re-seals a file it cannot see named.
        index["records"].update({k: v for k, v in old.items() if isinstance(k, str) and isinstance(v, str)
                                 and k not in pruned})
    if accept_changes:  # the person vouches for the files as they are: each record output's hash follows
        for _i, cell in enumerate(nb.cells):
            for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
                meta = o.get("metadata") if isinstance(o, dict) else None
                dsh = meta.get("dsh") if isinstance(meta, dict) else None
                if not isinstance(dsh, dict):
                    continue
                rid = dsh.get("record_id")
                if isinstance(rid, str) and _is_file_id(rid) and (records_dir / f"{rid}.jsonl").is_file() \
                        and isinstance(dsh.get("sha256"), str):
                    dsh["sha256"] = sha256_file(records_dir / f"{rid}.jsonl")
    per_cell: dict[int, list[str]] = {}
    for i, rid, _ in named_records(nb):
        if not _is_file_id(rid):  # verify names it; sync never reads a path built from it
            continue
        f = records_dir / f"{rid}.jsonl"
        if f.exists():
            index["records"][rid] = sha256_file(f)
        per_cell.setdefault(i, [])
        if rid not in per_cell[i]:
            per_cell[i].append(rid)
    sessions_dir = sidecar_for(path) / SESSIONS_DIR
    held_sessions = old_meta.get("sessions")
    old_sessions = {e["id"]: e for e in (held_sessions if isinstance(held_sessions, list) else [])
                    if isinstance(e, dict) and isinstance(e.get("id"), str)}
    cell_sessions: dict[int, list[str]] = {}
    for i, sid in named_sessions(nb):
        if not _is_file_id(sid):
            continue
        cell_sessions.setdefault(i, []).append(sid)
        if sid in {e["id"] for e in index["sessions"]}:
            continue
        f = sessions_dir / f"{sid}.jsonl"
        if f.exists():
            index["sessions"].append({"id": sid, "sha256": sha256_file(f)})
        elif sid in old_sessions:
            index["sessions"].append(old_sessions[sid])
    _seal_ledgers(nb, path, index, problems if problems is not None else [], _old_ledger_seals(old_meta))
    held_reviews = old_meta.get("reviews")
    old_reviews = {e["file"]: e for e in (held_reviews if isinstance(held_reviews, list) else [])
                   if isinstance(e, dict) and isinstance(e.get("file"), str)}
    for _, name in named_reviews(nb):
        if name in {e["file"] for e in index["reviews"]}:
            continue
        review_file = sidecar_for(path) / name
        if review_file.exists():
            index["reviews"].append({"file": name, "sha256": sha256_file(review_file)})
        elif name in old_reviews:
            index["reviews"].append(old_reviews[name])
    for i, cell in enumerate(nb.cells):
        meta = cell.setdefault("metadata", {})
        if i in per_cell or i in cell_sessions:
            meta["dsh"] = {"records": per_cell.get(i, [])}
            if i in cell_sessions:
                meta["dsh"]["sessions"] = cell_sessions[i]
        else:
            meta.pop("dsh", None)
    if sign:
        _sign_seal(nb, path, index, old_meta, problems if problems is not None else [], accept_changes=accept_changes)
    elif isinstance(old_meta.get("seal"), dict):
        index["seal"] = old_meta["seal"]
    nb.metadata["dsh"] = index
    nbformat.validate(nb)
    return index


#: Sidecar files rewritten by design: the open record (it moves to records/ or stale/ when it
#: ends), the reviewer's state, and articles (written again on request).
_WORKING_FILES = frozenset({"open-record.jsonl", "reviewer.json"})


def _rewritten_since(old: object, sidecar: Path, removed: set[str] | frozenset[str] = frozenset()) -> str | None:
    """Why the seal *old* the notebook carries must not be renewed without the person's word: it
    is not a signed seal this version writes, its signature does not hold, the sidecar is a
    symbolic link (whose files a seal does not cover), or a file it sealed was deleted, replaced
    by something that is not a regular file, or rewritten (a closed record changed at all;
    other files more than appended to). None when every sealed file is there, as sealed or grown."""
    from .. import signing
    from .sealset import FORMAT, file_digest, grew_from, payload

    if not isinstance(old, dict) or old.get("format") != FORMAT or not isinstance(old.get("signature"), str):
        return (f"metadata.dsh.seal is not a signed seal this version writes ({FORMAT} with a signature), so "
                "what it sealed cannot be told")
    try:
        signing.verify(payload(old), old["signature"])
    except signing.SignatureInvalid as exc:
        return f"the last seal's signature is invalid ({exc})"
    files: dict = old["files"] if isinstance(old.get("files"), dict) else {}
    sizes: dict = old["sizes"] if isinstance(old.get("sizes"), dict) else {}
    kept = {n: sha for n, sha in files.items() if isinstance(n, str) and n not in _WORKING_FILES
            and not n.startswith("articles/") and n not in removed}  # rewritten by design (verify names a change), or pruned
    if kept and sidecar.is_symlink():
        return (f"{sidecar.name} is a symbolic link, and a seal covers a sidecar folder's own files, not a "
                "link's: make it a folder again")
    for name, sha in sorted(kept.items()):
        f = sidecar / name
        if not (f.exists() or f.is_symlink()):
            if not (sidecar.exists() or sidecar.is_symlink()):
                return (f"{name} was sealed and is gone: there is no {sidecar.name}/ beside the notebook (copied "
                        "without its folder? copy the folder along, or run the notebook again to make its files "
                        "afresh)")
            return f"{name} was sealed and is gone"
        if not f.is_symlink() and not f.is_file():  # a folder, a pipe or a device is never opened
            return f"{name} was sealed and is now not a regular file"
        size = sizes.get(name)
        if not isinstance(sha, str) or not isinstance(size, int):
            return f"{name} was rewritten since it was sealed (not only appended to)"
        if f.is_symlink() or name.startswith(f"{RECORDS_DIR}/"):  # a link, or a closed record: never grows
            if file_digest(f) != sha:
                return f"{name} was rewritten since it was sealed" + (" (a link's target)" if f.is_symlink() else
                                                                      " (a closed record, which never changes)")
        elif not grew_from(f, sha, size):
            return f"{name} was rewritten since it was sealed (not only appended to)"
    return None


def _sign_seal(nb: NotebookNode, path: Path, index: dict, old_meta: dict, problems: list[str], *,
               accept_changes: bool = False) -> None:
    """``index["seal"]``: the seal set of *nb* and its sidecar, signed with the person's key (a
    ``.gitattributes`` is written into the sidecar first, when it has none). A signature that
    cannot be made keeps the old seal (so ``verify`` reports what changed since) and adds the
    reason to *problems*; an earlier seal by another key is kept in ``previous``."""

    from .. import signing
    from .sealset import GITATTRIBUTES, payload, seal_set

    sidecar = sidecar_for(path)
    attributes = sidecar / ".gitattributes"
    if sidecar.is_dir() and not sidecar.is_symlink() and not attributes.exists():
        try:
            attributes.write_text(GITATTRIBUTES, encoding="utf-8")
        except OSError as exc:
            problems.append(f"could not write {attributes.name} into {sidecar.name} ({exc.strerror or exc})")
    old: dict | None = old_meta["seal"] if isinstance(old_meta.get("seal"), dict) else None
    seal = seal_set(nb, path, index["ledgers"])
    seal["sealed_at"] = utc_now()
    try:
        signature = signing.sign(payload(seal))
        line = signing.public_key_line()
    except signing.SigningError as exc:
        problems.append(f"the seal is not signed: {exc}" + ("; the previous signed seal is kept" if old else ""))
        if old is not None:
            index["seal"] = old
        return
    signer = {"public_key": line, "fingerprint": signing.fingerprint_of(line)}
    was: dict = old or {}
    history = was.get("previous")
    previous = [p for p in (history if isinstance(history, list) else []) if isinstance(p, dict)]
    old_signer = was.get("signer")
    if isinstance(old_signer, dict) and old_signer.get("fingerprint") != signer["fingerprint"]:
        previous.append({"signer": old_signer, "sealed_at": was.get("sealed_at"), "signature": was.get("signature")})
    index["seal"] = {**seal, "signature": signature, "signer": signer, **({"previous": previous} if previous else {})}


def _old_ledger_seals(meta: object) -> dict[str, dict]:
    """The well-formed ``{name: {head, events}}`` entries of an existing ``metadata.dsh.ledgers``."""

    held = meta.get("ledgers") if isinstance(meta, dict) else None
    if not isinstance(held, dict):
        return {}
    return {k: {"head": v["head"], "events": v.get("events") if type(v.get("events")) is int else None}
            for k, v in held.items()
            if isinstance(k, str) and NAME.fullmatch(k) and isinstance(v, dict) and isinstance(v.get("head"), str)}


def _seal_ledgers(nb: NotebookNode, path: Path, index: dict, problems: list[str], old: dict[str, dict]) -> None:
    from ..research import Ledger, LedgerPathError

    ledger_dir = sidecar_for(path) / "ledger"
    seen: set[str] = set()
    for f in sorted(ledger_dir.glob("*.jsonl")) if ledger_dir.is_dir() else []:
        seen.add(f.stem)
        prev = old.get(f.stem)
        try:
            if prev is None:
                result = Ledger(f).verify()
            else:  # the ledger may only have grown since it was sealed
                result = Ledger(f).verify(prev["head"], expected_events=prev["events"], appended_ok=True)
        except (LedgerPathError, OSError) as exc:  # not a ledger file (a folder named *.jsonl)
            result = {"ok": False, "problems": [{"line": 0, "problem": str(exc)}]}
        if result["ok"]:
            index["ledgers"][f.stem] = {"head": result["head"], "events": result["events"]}
            continue
        first = result["problems"][0]
        why = f"{len(result['problems'])} problem(s); line {first['line']}: {first['problem']}"
        if prev is not None:  # never overwrite a seal with the head of a ledger that lost or changed lines
            index["ledgers"][f.stem] = prev
            problems.append(f"ledger {f.stem}: does not verify against the head sealed by sync ({why}); the old "
                            "seal is kept: run dsh-notebook ledger verify")
        else:  # a damaged ledger is never sealed: verify keeps reporting it
            problems.append(f"ledger {f.stem}: does not verify ({why}); it is not sealed: run dsh-notebook "
                            "ledger verify")
    for name in sorted(set(old) - seen):
        index["ledgers"][name] = old[name]
        problems.append(f"ledger {name}: sealed in the notebook but {ledger_dir.name}/{name}.jsonl is missing "
                        "(deleted or renamed?); the seal is kept")
    index["ledgers"] = dict(sorted(index["ledgers"].items()))


def verify(notebook: StrPath, *, allowed_signers: AllowedSigners | None = None) -> list[Finding]:
    """Run the checks of storage.md on ``notebook`` and its ``<stem>.dsh/`` folder: the four
    checks; check 5, the signed seal (:func:`check_seal`; *allowed_signers* an
    :class:`~dsh_notebook.signing.AllowedSigners` that must list the sealer); check 6, the
    signed human decisions (:func:`check_decisions`); check 7, each ``%%reckon`` cell's lines
    and displayed output against its record (:func:`dsh_notebook.artifact.outputs.check_outputs`).
    Returns the findings in check order.

    Python's cyclic garbage collector is paused while it runs (:func:`_collector_paused`): what a
    verify allocates is freed as it goes, but for a few dozen objects of the recursive helpers
    that read array values (collected once the collector is back on), and the full collections
    its allocations set off re-scanned every object of the imports (pint, numpy, nbformat: some
    160,000), a third of a corpus's verify time (issue 23)."""
    with _collector_paused():
        return _verify(Path(notebook), allowed_signers)


_GC_LOCK = threading.Lock()
_GC_PAUSES = [0, False]  # verifies running in this process; whether the collector was on before the first


@contextmanager
def _collector_paused() -> Iterator[None]:
    """``gc.disable()`` for the block, then the collector as it was (threads that verify at the
    same time share one pause: the last one out turns it back on, if it was on)."""
    with _GC_LOCK:
        if _GC_PAUSES[0] == 0:
            _GC_PAUSES[1] = gc.isenabled()
            gc.disable()
        _GC_PAUSES[0] += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_PAUSES[0] -= 1
            if _GC_PAUSES[0] == 0 and _GC_PAUSES[1]:
                gc.enable()


def _verify(path: Path, allowed_signers: AllowedSigners | None) -> list[Finding]:
    nb = _read_nb(path)
    sidecar = sidecar_for(path)
    records_dir = sidecar / RECORDS_DIR
    findings: list[Finding] = []

    # 1. named files exist with the hash the notebook holds
    expected: dict[str, list[tuple[str, str]]] = {}  # id -> [(sha256, where it is held)]
    named_by_cells: set[str] = set()
    for i, rid, sha in named_records(nb):
        named_by_cells.add(rid)
        expected.setdefault(rid, [])
        if sha:
            expected[rid].append((sha, f"cell {i + 1}"))
    for i, problem in malformed_outputs(nb):
        findings.append(Finding(1, False, f"cell {i + 1}", f"{problem}; run dsh-notebook sync after re-running "
                                                           "the cell"))
    meta = nb.metadata.get("dsh")
    index = meta.get("records") if isinstance(meta, dict) else None
    if meta is not None and not (isinstance(meta, dict) and (index is None or isinstance(index, dict))
                                 and all(isinstance(k, str) and isinstance(v, str) for k, v in (index or {}).items())):
        findings.append(Finding(1, False, "metadata.dsh", "the notebook's metadata.dsh is malformed (records must map "
                                                          "record ids to sha256 strings); run dsh-notebook sync"))
        index = None
    for rid, sha in (index or {}).items():
        expected.setdefault(rid, []).append((sha, "the notebook's metadata.dsh"))
    if index is not None:
        for rid in sorted(named_by_cells - set(index)):
            findings.append(Finding(1, False, rid, "named by a cell's output but missing from metadata.dsh "
                                                   "(removed from the index, or the notebook changed after sync)"))
    for rid in sorted(expected):
        if not _is_file_id(rid):
            findings.append(Finding(1, False, rid[:40], "is not a record id"))
            continue
        f = records_dir / f"{rid}.jsonl"
        if not f.exists():
            where = expected[rid][0][1] if expected[rid] else "a cell's output"
            findings.append(Finding(1, False, rid, f"named by {where} but {f.relative_to(sidecar.parent)} is missing"))
            continue
        actual = sha256_file(f)
        bad = [(h, w) for h, w in expected[rid] if h != actual]
        for h, w in bad:
            findings.append(Finding(1, False, rid, f"the file's sha256 {actual[:12]}… differs from the {h[:12]}… "
                                                   f"held by {w}"))
        if not bad:
            findings.append(Finding(1, True, rid, "present, hash matches" if expected[rid] else "present"))
    for i, cell in enumerate(nb.cells):
        src = cell.get("source", "")
        first = src.lstrip().split("\n", 1)[0]
        if cell.get("cell_type") == "code" and first.startswith("%%reckon") and "--quiet" not in first.split() and \
                not any(MIME_RECORD in o.get("data", {}) for o in cell.get("outputs", [])):
            findings.append(Finding(1, None, f"cell {i + 1}", "runs %%reckon but its output names no record "
                                                               "(not run, or its output was cleared)"))
    if not expected:
        findings.append(Finding(1, True, path.name, "the notebook names no records"))
    findings.extend(_check_sessions(nb, meta if isinstance(meta, dict) else {}, sidecar))
    findings.extend(_check_reviews(nb, meta if isinstance(meta, dict) else {}, sidecar))

    # 7 runs first: the records it wrote again need no second replay under 2, and the outputs it
    # proved to be renderings of a record need no secret scan under 4 (its findings come last)
    from .outputs import outputs_check

    cells = outputs_check(nb, path)

    # 2. every closed record reads cleanly and replays
    files = sorted(records_dir.glob("*.jsonl")) if records_dir.is_dir() else []
    for f in files:
        findings.extend(_check_record(f, replayed=f.stem in cells.replayed))

    # 3. ledgers (and check 1 for them: every ledger sealed in metadata.dsh exists; once the
    # notebook holds a ledger index, every ledger beside it is sealed in it)
    ledgers = sorted((sidecar / "ledger").glob("*.jsonl")) if (sidecar / "ledger").is_dir() else []
    held_ledgers = meta.get("ledgers") if isinstance(meta, dict) else None
    if held_ledgers is not None and not isinstance(held_ledgers, dict):
        findings.append(Finding(1, False, "metadata.dsh", "the notebook's metadata.dsh.ledgers is malformed (it must "
                                                          "map ledger names to {head, events}); run dsh-notebook sync"))
        held_ledgers = None
    findings.extend(_check_sealed_ledgers(held_ledgers, ledgers, sidecar))
    chains: list[Finding] = []
    for f in ledgers:
        found = _check_ledger(f, (held_ledgers or {}).get(f.stem))
        chains.extend(found)
        if held_ledgers is not None and f.stem not in held_ledgers:
            damaged = any(x.ok is False for x in found)
            findings.append(Finding(1, False, f"ledger/{f.name}", "not sealed in the notebook's metadata.dsh "
                                    + ("(sync seals a ledger only once it verifies: see check 3)" if damaged else
                                       "(created or renamed after sync: run dsh-notebook sync)")))
    findings.extend(chains)
    if not ledgers and not held_ledgers:
        findings.append(Finding(3, True, sidecar.name, "no ledgers"))

    findings.extend(check_secrets(path, nb=nb, rendered=cells.shown))  # the text is read only if needed
    findings.extend(check_seal(nb, path, meta if isinstance(meta, dict) else {}, allowed_signers))
    decided = [x for f in ledgers for x in check_decisions(f, allowed_signers)]
    findings.extend(decided or [Finding(6, True, sidecar.name, "no human decisions to check")])
    findings.extend(cells.findings)
    return findings


def _cells(a: int, b: int, what: str = "cell") -> str:
    return f"{what} {a + 1}" if b - a == 1 else f"{what}s {a + 1}-{b}"


def check_decisions(ledger_file: Path, allowed: AllowedSigners | None = None) -> list[Finding]:
    """Check 6: every ``human-decision-recorded`` event of a ledger carries a valid signature of
    :func:`dsh_notebook.research.decision_message` by the deciding person's key (and, with
    *allowed*, a key it lists). In a ledger whose header says its decisions are signed, or after
    a signed decision, an unsigned one fails; before signing existed it is reported as unsigned
    (older version) and fails only with *allowed*."""
    from .. import signing
    from ..research import SIGNED_DECISIONS, Ledger, LedgerPathError, decision_message

    name = f"ledger/{ledger_file.name}"
    try:
        with ledger_file.open("rb") as fh:
            header_line = fh.readline()
        header = json.loads(header_line)
        events = Ledger(ledger_file).events()
    except (OSError, ValueError, LedgerPathError):
        return []  # check 3 reports an unreadable ledger
    must_sign = isinstance(header, dict) and header.get("decisions") == SIGNED_DECISIONS
    head_sha = hashlib.sha256(header_line).hexdigest()
    out: list[Finding] = []
    for e in events:
        if e.get("type") not in ("research/human-decision-recorded", "human-decision-recorded"):
            continue
        data: dict = e["data"] if isinstance(e.get("data"), dict) else {}
        what = f"decision {data.get('decision_id')} ({data.get('verdict')}, seq {e.get('seq')})"
        sig = data.get("signature")
        if not isinstance(sig, str):
            if must_sign:
                out.append(Finding(6, False, name, f"{what} is not signed, in a ledger whose decisions are signed "
                                                   "(written by hand or by another tool?)"))
            else:
                out.append(Finding(6, allowed is None, name,
                                   f"{what} is unsigned (older version)"))
            continue
        must_sign = True  # after a signed decision, every later one is signed too
        message = decision_message(ledger_file.stem, head_sha, str(e.get("prev")), data)
        try:
            who = signing.verify(message, sig)
        except signing.SignatureInvalid as exc:
            out.append(Finding(6, False, name, f"{what}: the signature is invalid: {exc}"))
            continue
        if allowed is not None and allowed.principal_for(who) is None:
            out.append(Finding(6, False, name, f"{what} is signed by {who.fingerprint}, a key {allowed.source} does "
                                               "not allow"))
        else:
            out.append(Finding(6, True, name, f"{what} by {data.get('by')}, signed by {who.fingerprint}"))
    return out


def check_seal(nb: NotebookNode, path: Path, meta: dict, allowed: AllowedSigners | None = None) -> list[Finding]:
    """Check 5: the signed seal (issue 15). The signature over the seal set is valid and, with
    *allowed* (an :class:`~dsh_notebook.signing.AllowedSigners`), made by a listed key; the
    notebook's cells and every sidecar file are what was sealed (each difference named: a
    changed cell, a changed, missing or added file); the ledger heads in ``metadata.dsh`` are
    the signed ones. A notebook with sealable content and no seal fails: removing metadata never
    switches a check off."""
    from .. import signing
    from .sealset import FORMAT, payload, seal_set, sealed_files

    sidecar = sidecar_for(path)
    seal = meta.get("seal")
    out: list[Finding] = []
    if seal is None:
        if sealed_files(sidecar) or named_records(nb) or named_sessions(nb) or named_reviews(nb):
            return [Finding(5, False, "seal", "the notebook has no signed seal: nobody vouches for its records and "
                                              "files (dsh-notebook sync signs them with your key, once the checks "
                                              "above hold)")]
        return [Finding(5, True, "seal", "nothing to seal (no records, chats, reviews or ledgers)")]
    if not isinstance(seal, dict) or seal.get("format") != FORMAT or not isinstance(seal.get("signature"), str):
        return [Finding(5, False, "seal", f"metadata.dsh.seal is not a signed seal ({FORMAT} with a signature)")]
    try:
        who = signing.verify(payload(seal), seal["signature"])
    except signing.SignatureInvalid as exc:
        return [Finding(5, False, "seal", f"the seal's signature is invalid: {exc}")]
    stated: dict = seal["signer"] if isinstance(seal.get("signer"), dict) else {}
    comment = ""
    if isinstance(stated.get("public_key"), str):
        parts = stated["public_key"].split(None, 2)
        if " ".join(parts[:2]) != who.public_key:
            out.append(Finding(5, False, "seal", "the seal's signer field names another key than the one that "
                                                 "signed it"))
        comment = parts[2] if len(parts) > 2 else ""
    by = f"{who.fingerprint}" + (f" ({comment})" if comment else "")
    when = seal.get("sealed_at") if isinstance(seal.get("sealed_at"), str) else "an unknown time"
    if allowed is not None:
        principal = allowed.principal_for(who)
        if principal is None:
            out.append(Finding(5, False, "seal", f"signed by {by}, a key {allowed.source} does not allow for "
                                                 f"namespace {signing.NAMESPACE}"))
        else:
            out.append(Finding(5, True, "seal", f"signed by {principal} ({who.fingerprint}) at {when}"))
    else:
        out.append(Finding(5, True, "seal", f"signed by {by} at {when} (give --allowed-signers to require a key)"))
    history = seal.get("previous")
    for p in history if isinstance(history, list) else []:
        if isinstance(p, dict) and isinstance(p.get("signer"), dict):
            out.append(Finding(5, True, "seal", f"re-sealed by {who.fingerprint}; the notebook says it was earlier "
                                                f"sealed by {_printable(str(p['signer'].get('fingerprint')))} at "
                                                f"{_printable(str(p.get('sealed_at')))} (this history is outside "
                                                "the signature: not checked)"))
    # what is there now against what was sealed
    now = seal_set(nb, path, seal.get("ledgers") if isinstance(seal.get("ledgers"), dict) else {})
    import difflib

    cells: list = seal["cells"] if isinstance(seal.get("cells"), list) else []
    cells = [c if isinstance(c, str) else repr(c) for c in cells]
    for op, a1, a2, b1, b2 in difflib.SequenceMatcher(None, cells, now["cells"], autojunk=False).get_opcodes():
        if op == "insert":
            out.append(Finding(5, False, _cells(b1, b2), "added after sealing"))
        elif op == "delete":
            out.append(Finding(5, False, _cells(a1, a2, "sealed cell"), "deleted after sealing"))
        elif op == "replace":
            out.append(Finding(5, False, _cells(b1, b2), "differs from the sealed notebook (its source or outputs "
                                                         "changed after sealing)"))
    files: dict = seal["files"] if isinstance(seal.get("files"), dict) else {}
    for name in sorted(set(files) | set(now["files"])):
        if name not in now["files"]:
            out.append(Finding(5, False, name, "sealed, but missing from the sidecar (deleted or renamed after "
                                               "sealing)"))
        elif name not in files:
            out.append(Finding(5, False, name, "not covered by the seal (added to the sidecar after sealing); "
                                               "nothing vouches for it (if you do: dsh-notebook sync "
                                               f"{path.name}, which seals it with your key)"))
        elif files[name] != now["files"][name]:
            out.append(Finding(5, False, name, "changed after sealing"))
    for name in sorted(now["files"]):
        f = sidecar / name
        if name.endswith(".jsonl") and f.is_file() and not f.is_symlink() and b"\r\n" in read_regular(f):
            out.append(Finding(5, True, name, "has CRLF line endings (a Windows checkout?); the seal reads them as "
                                              "LF. The .gitattributes sync writes keeps git from converting them"))
    held = meta.get("ledgers")
    if seal.get("ledgers") != (held if isinstance(held, dict) else {}):
        out.append(Finding(5, False, "metadata.dsh.ledgers", "differs from the ledger heads the seal signs "
                                                             "(edited or removed after sealing)"))
    if not any(f.ok is False for f in out):
        out.append(Finding(5, True, "seal", f"{len(now['cells'])} cells and {len(now['files'])} sidecar files are "
                                            "as sealed"))
    return out


def check_secrets(path: Path, raw: str | None = None, *, nb: NotebookNode | None = None,
                  rendered: set[tuple[int, int]] | frozenset[tuple[int, int]] = frozenset()) -> list[Finding]:
    """Check 4 alone: the notebook at *path* (its text *raw* when already read) and every file
    of its sidecar scanned by the one secret detector. One passing finding when nothing is found.
    *rendered*: ``(cell index, output index)`` of the record outputs check 7 proved to be exactly
    what their record renders; those outputs hold nothing that is not in the cell source or the
    record (both scanned), so they are not scanned again. *nb*: the notebook as nbformat read it (with
    *rendered*, scanned as read instead of parsing *raw* again)."""
    sidecar = sidecar_for(path)
    if nb is not None and rendered:
        leaks = [Finding(4, False, path.name, f"{field}: something that looks like a secret ({found.kind}: "
                                              f"{found.preview(value)})")
                 for field, value, found in find_in_json(_without_rendered(nb, rendered))]
    else:
        if raw is None:
            raw = read_regular(path).decode("utf-8", "replace")
        leaks = _secrets(path.name, raw)
    if sidecar.is_dir():
        for f in sorted(sidecar.rglob("*")):
            if f.is_file() and not f.name.endswith(".lock"):
                leaks += _secrets(str(f.relative_to(sidecar.parent)), read_regular(f).decode("utf-8", "replace"))
    return leaks or [Finding(4, True, path.name, "no keys, tokens, passwords or other secrets found")]


def _check_hashed(named: list[str], held: dict, sidecar: Path, *, pattern: str, bad: str,
                  path_of: Callable[[str], Path], label: Callable[[str], str], differs: str) -> list[Finding]:
    """Check 1 for sidecar files that notebook outputs name and ``sync`` seals with a sha256
    (chat sessions, review histories): each exists, and matches its sealed hash if it has one."""
    out: list[Finding] = []
    for name in list(dict.fromkeys(named + [k for k in held if isinstance(k, str)])):
        if not re.fullmatch(pattern, name) or ".." in name:
            out.append(Finding(1, False, name[:40], bad))
            continue
        f, item = sidecar / path_of(name), label(name)
        if not f.exists():
            out.append(Finding(1, False, item, f"named by the notebook but {f.relative_to(sidecar.parent)} is missing"))
        elif held.get(name) and held[name] != sha256_file(f):
            out.append(Finding(1, False, item, differs))
        else:
            out.append(Finding(1, True, item, "present, hash matches" if held.get(name) else "present"))
    return out


def _check_sessions(nb: NotebookNode, meta: dict, sidecar: Path) -> list[Finding]:
    """Check 1 for chat sessions: each session a ``%%chat`` output names exists, with the
    hash ``metadata.dsh.sessions`` holds once the notebook is synced."""
    listed = meta.get("sessions")
    if listed is not None and not isinstance(listed, list):
        return [Finding(1, False, "metadata.dsh", "the notebook's metadata.dsh.sessions is malformed (it must list "
                                                  "{id, sha256}); run dsh-notebook sync")]
    held = {e["id"]: e.get("sha256") for e in listed or [] if isinstance(e, dict) and isinstance(e.get("id"), str)}
    return _check_hashed([sid for _, sid in named_sessions(nb)], held, sidecar, pattern=r"[A-Za-z0-9_.-]{1,200}",
                         bad="is not a session id", path_of=lambda sid: Path(SESSIONS_DIR) / f"{sid}.jsonl",
                         label=lambda sid: f"session {sid}",
                         differs="the session log differs from the hash sealed by sync: edited, or the chat "
                                 "went on after sync; verify cannot tell which, so compare it with your own copy "
                                 "before you seal it again")


def _check_sealed_ledgers(held: dict | None, ledgers: list[Path], sidecar: Path) -> list[Finding]:
    """Check 1 for ledgers: each ledger ``metadata.dsh.ledgers`` seals exists beside the
    notebook (its head is checked under 3) and its entry is well formed."""

    out: list[Finding] = []
    on_disk = {f.stem for f in ledgers}
    for name, entry in (held or {}).items():
        if not isinstance(name, str) or not NAME.fullmatch(name):
            out.append(Finding(1, False, str(name)[:40], "is not a ledger name (in metadata.dsh.ledgers)"))
            continue
        subject = f"ledger/{name}.jsonl"
        if not isinstance(entry, dict) or not isinstance(entry.get("head"), str):
            out.append(Finding(1, False, subject, "its seal in metadata.dsh.ledgers is malformed (it must be "
                                                  "{head, events}); run dsh-notebook sync"))
        if name not in on_disk:
            rel = (sidecar / "ledger" / f"{name}.jsonl").relative_to(sidecar.parent)
            out.append(Finding(1, False, subject, f"sealed in the notebook's metadata.dsh but {rel} is missing "
                                                  "(deleted or renamed?)"))
        elif isinstance(entry, dict) and isinstance(entry.get("head"), str):
            out.append(Finding(1, True, subject, "present (its sealed head is checked under 3)"))
    return out


def _check_ledger(f: Path, held: object) -> list[Finding]:
    """Check 3 for one ledger: the hash chain, seq and every event replayed in order
    (schema, authority, references, state), the head sealed by ``sync``, and the fold."""
    from ..research import Ledger, LedgerPathError

    head = held.get("head") if isinstance(held, dict) and isinstance(held.get("head"), str) else None
    events = held.get("events") if isinstance(held, dict) and type(held.get("events")) is int else None
    name = f"ledger/{f.name}"
    try:
        ledger = Ledger(f)
        result = ledger.verify(expected_head=head, expected_events=events)
    except (LedgerPathError, OSError, ValueError) as exc:  # reported against the ledger, never the notebook
        return [Finding(3, False, name, f"cannot be read as a ledger: {exc}")]
    if not result["ok"]:
        return [Finding(3, False, name, f"line {p['line']}: {p['problem']}") for p in result["problems"]]
    try:
        ledger.fold()
    except Exception as exc:  # noqa: BLE001 - reported, never a crash of verify
        return [Finding(3, False, name, f"the fold failed: {type(exc).__name__}: {exc}")]
    sealed = " and its head matches the sealed one" if head else ""
    return [Finding(3, True, name, f"{result['events']} events, chain intact, every event re-checked{sealed}")]


def _check_reviews(nb: NotebookNode, meta: dict, sidecar: Path) -> list[Finding]:
    """Check 1 for review histories a ``%review`` output names (hash from ``sync``)."""
    listed = meta.get("reviews")
    if listed is not None and not isinstance(listed, list):
        return [Finding(1, False, "metadata.dsh", "the notebook's metadata.dsh.reviews is malformed (it must list "
                                                  "{file, sha256}); run dsh-notebook sync")]
    held = {e["file"]: e.get("sha256") for e in listed or []
            if isinstance(e, dict) and isinstance(e.get("file"), str)}
    return _check_hashed([f for _, f in named_reviews(nb)], held, sidecar, pattern=r"reviews/[A-Za-z0-9_.-]{1,200}\.jsonl",
                         bad="is not a reviews file", path_of=Path, label=str,
                         differs="the review history differs from the hash sealed by sync: edited, or "
                                 "reviewed again after sync; verify cannot tell which, so compare it with your own "
                                 "copy before you seal it again")


def _check_record(f: Path, *, replayed: bool = False) -> list[Finding]:
    """Check 2 for one record file. *replayed*: check 7 ran the cell lines that wrote it again
    and got every row back identically, results and inputs included, so it is not evaluated a
    second time."""
    rid = f.stem
    try:
        rec = read_record(f)
    except UnreadableRecord as exc:
        return [Finding(2, False, rid, f"unreadable: {exc}")]
    out = []
    for line, reason in rec.problems:
        out.append(Finding(2, False, rid, f"line {line}: {reason}"))
    if rec.id != rid:
        out.append(Finding(2, False, rid, f"the file holds record {rec.id}, not {rid} (a file replaced by another)"))
    seqs = [r.get("seq") for r in rec.rows]
    want = list(range(1, len(rec.rows) + 1))
    if seqs != want:
        at = next((i for i, (a, b) in enumerate(zip(seqs, want)) if a != b), min(len(seqs), len(want)))
        got = seqs[at] if at < len(seqs) else "nothing"
        out.append(Finding(2, False, rid, f"rows out of sequence: row {at + 1} has seq {got}, expected {at + 1} "
                                           "(a row was deleted, added or moved)"))
    if not rec.closed:
        out.append(Finding(2, False, rid, "the record has no closing row"))
    out += _unit_findings(rid, rec)
    if replayed:
        steps = sum(1 for r in rec.rows if r.get("tool") == "eval" and r.get("ok"))
        if out:
            return out
        what = "no evaluation steps" if steps == 0 else \
            f"{steps} step{'s replay' if steps != 1 else ' replays'} identically"
        return [Finding(2, True, rid, f"{what}: the cell's lines wrote every row again (check 7)")]
    result = rerun(rec)
    for d in result["differences"]:
        if str(d["what"]).startswith("input @"):  # the step's stored input against the record's own rows
            why = (f"the step used {_value(d['recorded'])}, but the record's rows before it give "
                   f"{_value(d['rerun'])}")
        else:
            why = f"the record holds {_value(d['recorded'])}; evaluated again it gives {_value(d['rerun'])}"
        out.append(Finding(2, False, rid, f"step seq {d['seq']} ({d['what']}): {why}"))
    if not out:
        n = result["checked"]
        what = "no evaluation steps" if n == 0 else f"{n} step{'s replay' if n != 1 else ' replays'} identically"
        out.append(Finding(2, True, rid, f"{what} from the record's own inputs" if n else what))
    return out


def _unit_findings(rid: str, rec: Record) -> list[Finding]:
    """The display units a record's rows hold (issue 18), each checked against pint: a unit whose
    factor, vector or symbol was changed would show every value in it wrongly."""
    out = []
    for r in rec.rows:
        c = r["content"] if isinstance(r.get("content"), dict) else {}
        units = [c["unit"]] if "unit" in c else []
        if r.get("tool") == "record_start" and isinstance(c.get("units"), dict):
            units += list(c["units"].values())
        for u in units:
            why = unit_problem(u)
            if why:
                out.append(Finding(2, False, rid, f"row seq {r.get('seq')}: its display unit does not hold: {why} "
                                                  "(the row was edited; every value shown in it would be wrong)"))
    return out


def _value(v: object) -> str:
    if isinstance(v, dict) and "code" in v:
        return f"a refusal ({v['code']})"
    return json.dumps(v, ensure_ascii=False)


def _secrets(name: str, text: str) -> list[Finding]:
    """Check 4 for one file: the one secret detector (:mod:`dsh_notebook.secretscan`) over every
    string a person, a model or a tool wrote into it. A JSON file (the notebook) and each line of
    a JSONL file are read field by field, so the project's own seals (hashes, chain links, heads,
    signatures) are never taken for secrets; other files are read as text."""
    out: list[Finding] = []
    if not might_hold(text):  # most record files hold no hint of one
        return out
    if name.endswith((".ipynb", ".json")):
        try:
            documents: list[tuple[str, object]] = [("", json.loads(text))]
        except ValueError:
            documents = []
    elif name.endswith(".jsonl"):
        documents = []
        for n, line in enumerate(text.split("\n"), 1):
            if not line.strip() or not might_hold(line):
                continue
            try:
                documents.append((f"line {n}, ", json.loads(line)))
            except ValueError:
                out.extend(_text_secrets(name, line, first_line=n))
    else:
        return _text_secrets(name, text)
    if not documents and not out:
        return _text_secrets(name, text)
    for where, document in documents:
        for field, value, found in find_in_json(document):
            out.append(Finding(4, False, name, f"{where}{field}: something that looks like a secret "
                                               f"({found.kind}: {found.preview(value)})"))
    return out


def _without_rendered(nb: Any, outputs: set[tuple[int, int]] | frozenset[tuple[int, int]]) -> dict:
    """A shallow copy of notebook *nb* with the data of *outputs* (``(cell index, output
    index)``) left out (*nb* itself is not changed)."""
    listed = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(listed, list):
        return dict(nb) if isinstance(nb, dict) else {}
    copied = []
    for i, cell in enumerate(listed):
        if isinstance(cell, dict) and isinstance(cell.get("outputs"), list) and any(c == i for c, _ in outputs):
            cell = {**cell, "outputs": [{**o, "data": {}} if (i, n) in outputs and isinstance(o, dict) else o
                                        for n, o in enumerate(cell["outputs"])]}
        copied.append(cell)
    return {**nb, "cells": copied}


def _text_secrets(name: str, text: str, *, first_line: int = 1) -> list[Finding]:
    return [Finding(4, False, name, f"line {s.line(text) + first_line - 1}: something that looks like a secret "
                                    f"({s.kind}: {s.preview(text)})") for s in find(text)]


def _printable(text: str) -> str:
    """*text* with control characters shown as escapes: a hand-edited notebook's ids never reach
    a terminal as escape sequences."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: f"\\x{ord(m.group()):02x}", str(text))


def findings_table(findings: list[Finding]) -> str:
    from .records import table

    rows = [(f"{f.check} {CHECKS[f.check]}", _printable(f.subject), {True: "ok", False: "FAIL", None: "skipped"}[f.ok],
             _printable(f.detail)) for f in findings]
    return table(rows, ("check", "subject", "result", "detail"))
