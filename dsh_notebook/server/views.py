"""What the side panel's routes answer, as plain data (spec: storage.md "Routes for the side
panel"; academic.md "State and surface"; research.md "The explorer").

* Pure Python over the sidecar folder: no tornado or jupyter_server here, so every shape is
  testable on its own; :mod:`dsh_notebook.server.handlers` turns these into HTTP.
* :func:`resolve_notebook` maps ``?notebook=PATH`` (relative to the server's root) to a file
  inside the root: an absolute path, a ``..`` part, or a symlink leading out of the root
  raises :class:`RouteError` 403; so does a sidecar folder that leads out of it.
* Each view reuses the feature's own reader: ``records_view.record_list`` (as
  ``dsh-notebook records list``), ``reckoner.read_record``, ``llm.session.sessions_table`` (as
  ``%chat list``), the review history files, and ``notebook.ledger`` (``read_state``,
  ``summary``, ``timeline``, ``awaiting_person``, ``record_decision``: the explorer's data and
  its one writer of the person's decision).
* Nothing below a sidecar is read through a symbolic link: the sidecar, a folder a route reads
  or any file in it being a link is a 403 naming it (README: "a symlink ... gets 403").
* A missing notebook or sidecar gives empty lists; an unknown record or ledger a
  :class:`RouteError` 404; a malformed id, name or body a 400 naming the problem.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any, cast

from ..academic.payloads import AcademicStatus
from ..artifact.paths import sidecar_for
from ..artifact.payloads import RecordDetail, RecordSummary, SessionRow
from ..errors import DshError
from ..research.payloads import LedgerAccepted
from ..reviewer.payloads import Review
from .payloads import LedgerBrief, LedgerFold

if TYPE_CHECKING:
    from ..research import LedgerState

ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
#: The longest record id a route takes (a file name must fit the file system's limit).
MAX_ID = 200
DECISION_FIELDS = ("decision_id", "revision", "verdict", "note")


class RouteError(DshError):
    """A refusal with its HTTP status and JSON body (always with ``error``)."""

    code = "ROUTE_REFUSED"

    def __init__(self, status: int, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.status = status
        self.payload = {**extra, "error": error}


# ----------------------------------------------------------------------------- where


def _inside(root: Path, path: Path, what: str) -> Path:
    """*path* resolved (symlinks followed); 403 unless it stays inside *root* (resolved)."""
    resolved = path.resolve()
    if resolved != root and root not in resolved.parents:
        raise RouteError(403, f"{what} leads outside the server's root directory (a symlink?); it is not served")
    return resolved


def resolve_notebook(root: str | os.PathLike[str], raw: str | None, *, allow_hidden: bool = True) -> Path:
    """The notebook ``root/raw`` (not resolved, so its sidecar sits beside the name given), after
    checking that it and its sidecar folder stay inside *root*. The file need not exist."""
    if raw is None or not raw.strip():
        raise RouteError(400, "the notebook query parameter is missing: ?notebook=PATH, the notebook's path "
                              "relative to the server's root directory (for example ?notebook=work/report.ipynb)")
    if "\x00" in raw:
        raise RouteError(400, "the notebook path holds a NUL character")
    if PurePosixPath(raw).is_absolute() or PureWindowsPath(raw).is_absolute() or PureWindowsPath(raw).drive:
        raise RouteError(403, f"notebook={raw!r} is an absolute path: give the path relative to the server's root "
                              "directory")
    parts = re.split(r"[/\\]", raw)
    if ".." in parts:
        raise RouteError(403, f"notebook={raw!r} has a '..' part: paths outside the server's root directory are "
                              "not served")
    if not raw.endswith(".ipynb"):
        raise RouteError(400, f"notebook={raw!r} is not a notebook path (it must end in .ipynb)")
    if not allow_hidden and any(p.startswith(".") for p in parts if p not in ("", ".")):
        raise RouteError(403, f"notebook={raw!r} is hidden (a part starts with '.'), and the server does not serve "
                              "hidden files (ContentsManager.allow_hidden)")
    base = Path(os.path.expanduser(str(root))).resolve()
    path = base.joinpath(*[p for p in parts if p and p != "."])
    _inside(base, path, f"notebook={raw!r}")
    _inside(base, sidecar_for(path), f"the sidecar folder of {raw!r}")
    return path


#: What each route reads below the sidecar: the records route the engine's files, the others
#: one folder each. Every one is checked for symbolic links before anything is read.
_READS = {"": ("records", "stale", "open-record.jsonl"), "sessions": ("sessions",), "reviews": ("reviews",),
          "ledger": ("ledger",)}


def _folder(notebook: Path, name: str, root: Path) -> Path | None:
    """``<stem>.dsh/<name>`` if it is a folder inside the root, else ``None``. 403 if it leads out
    of the root, or if the sidecar, that folder or anything the route reads below it is a
    symbolic link (the server reads a sidecar's own files only)."""
    sidecar = sidecar_for(notebook)
    folder = sidecar / name if name else sidecar
    if sidecar.is_symlink():
        raise RouteError(403, f"{sidecar.name} is a symbolic link; the server does not follow links in a sidecar")
    if not folder.is_dir():
        return None
    _inside(root, folder, f"{folder.parent.name}/{name}")
    for part in _READS.get(name, (name,)):
        _refuse_links(sidecar, sidecar / part)
    return folder


def _refuse_links(sidecar: Path, path: Path) -> None:
    """403 when *path*, or anything below it, is a symbolic link (walked without following one)."""
    def refuse(p: str) -> RouteError:
        shown = Path(p).relative_to(sidecar.parent).as_posix()
        return RouteError(403, f"{shown} is a symbolic link; the server does not follow links in a sidecar")

    if path.is_symlink():
        raise refuse(str(path))
    if not path.is_dir():
        return
    for top, dirs, files in os.walk(path, followlinks=False):
        for entry in dirs + files:
            if os.path.islink(os.path.join(top, entry)):
                raise refuse(os.path.join(top, entry))


# ----------------------------------------------------------------------------- academic


def academic_status() -> AcademicStatus:
    """The status object of academic.md (as ``dsh-notebook academic status --json``)."""
    from ..academic import state

    return cast(AcademicStatus, state.status())


def academic_set(body: object) -> AcademicStatus:
    """``{"enabled": bool}`` -> the status after switching (as ``dsh-notebook academic on|off``)."""
    from ..academic import state

    if not isinstance(body, dict):
        raise RouteError(400, 'the body must be a JSON object {"enabled": true|false}')
    extra = sorted(set(body) - {"enabled"})
    if extra:
        raise RouteError(400, f"unknown field(s) {', '.join(map(repr, extra))}: the body is {{\"enabled\": true|false}}")
    if "enabled" not in body:
        raise RouteError(400, 'the field "enabled" is missing: the body is {"enabled": true|false}')
    if not isinstance(body["enabled"], bool):
        raise RouteError(400, f'"enabled" is {body["enabled"]!r}; it must be true or false')
    try:
        return cast(AcademicStatus, state.set_enabled(body["enabled"]))
    except (OSError, ValueError) as exc:
        raise RouteError(500, f"cannot write {state.state_path()}: {exc}") from None


# ----------------------------------------------------------------------------- records


def records(notebook: Path, root: Path) -> list[RecordSummary]:
    """``[{id, title, status, opened, closed, steps, refused, current}]`` (``dsh-notebook
    records list``): the records the saved notebook names first (``current`` true), then the
    superseded ones (``current`` false; ``None`` when the notebook cannot be read)."""
    from ..artifact.records import current_records_of, record_list

    home = _folder(notebook, "", root)
    return cast(list[RecordSummary], record_list(home, current_records_of(notebook)) if home is not None else [])


def record(notebook: Path, root: Path, record_id: str) -> RecordDetail:
    """One record: its summary, the header line and every row as stored, and unreadable lines."""
    from ..reckoner import find_record, read_record
    from ..reckoner.records import UnreadableRecord
    from ..storage import read_jsonl

    if len(record_id) > MAX_ID or not ID.fullmatch(record_id) or ".." in record_id:
        raise RouteError(400, f"{record_id[:60]!r} is not a record id (ids look like 1795969445532)")
    home = _folder(notebook, "", root)
    try:
        if home is None:
            raise FileNotFoundError
        path = find_record(home, record_id)
        _inside(root, path, f"record {record_id}")
        rec = read_record(path)
    except FileNotFoundError:
        raise RouteError(404, f"no record {record_id!r} beside {notebook.name}") from None
    except UnreadableRecord as exc:
        raise RouteError(409, f"record {record_id!r} cannot be read: {exc}") from None
    summary = rec.summary()
    summary.pop("path")
    if path.parent.name == "stale":
        summary["status"] = "set aside"
    header = read_jsonl(path).rows[0]
    return cast(RecordDetail, {**summary, "header": header, "rows": rec.rows,
                               "problems": [{"line": n, "problem": why} for n, why in rec.problems]})


# ----------------------------------------------------------------------------- chats and reviews


def sessions(notebook: Path, root: Path) -> list[SessionRow]:
    """The chat sessions, oldest first, as ``%chat list`` reads them (``file`` relative to the sidecar)."""
    from ..llm.session import sessions_table

    folder = _folder(notebook, "sessions", root)
    if folder is None:
        return []
    out: list = []
    for row in sessions_table(folder):
        row = {k: v for k, v in row.items() if k != "path"}
        row["file"] = f"sessions/{row['id']}.jsonl"
        out.append(row)
    return out


def reviews(notebook: Path, root: Path) -> list[Review]:
    """Every review run in ``<stem>.dsh/reviews/*.jsonl``, latest first: the stored review (target,
    focus, generation, status, verdict, headline, summary, insights with their checked evidence,
    coverage, model, prompt_version, error) with the history line's ``file``, ``seq`` and ``ts``,
    and the follow-up ``questions`` asked about it. A target inside the notebook's folder is
    named relative to it."""
    from ..reviewer.targets import relative_target
    from ..storage import read_jsonl

    folder = _folder(notebook, "reviews", root)
    if folder is None:
        return []
    out: list = []
    for f in sorted(folder.glob("*.jsonl")):
        try:
            events = read_jsonl(f).rows
        except (OSError, ValueError):
            continue
        for e in events:
            review = e.get("review")
            if e.get("type") != "review" or not isinstance(review, dict):
                continue
            questions = [{k: q.get(k) for k in ("seq", "ts", "question", "answer", "error") if k in q}
                         for q in events if q.get("type") == "question" and review.get("id")
                         and q.get("review_id") == review.get("id")]
            out.append({**review, "target": relative_target(review.get("target"), notebook.parent),
                        "file": f"reviews/{f.name}", "seq": e.get("seq"), "ts": e.get("ts"), "questions": questions})
    out.sort(key=lambda r: (str(r.get("ts") or r.get("at") or ""), r["file"], r.get("seq") or 0), reverse=True)
    return out


# ----------------------------------------------------------------------------- ledgers


def _ledger_file(notebook: Path, root: Path, name: str) -> Path:
    from ..artifact.paths import NAME, NAME_RULE

    if not NAME.fullmatch(name):
        shown = name if len(name) <= 60 else name[:60] + "…"
        raise RouteError(400, f"{shown!r} is not a ledger name ({NAME_RULE})")
    folder = _folder(notebook, "ledger", root)
    path = folder / f"{name}.jsonl" if folder is not None else None
    if path is None or not path.is_file():
        raise RouteError(404, f"no ledger {name!r} beside {notebook.name}")
    _inside(root, path, f"ledger {name}")
    return path


def _brief(path: Path) -> tuple[dict[str, Any], LedgerState, list[dict[str, Any]], dict[str, Any]]:
    """``intact`` is ``verify()`` with the head ``dsh-notebook sync`` (or the pre-save hook)
    sealed in the notebook, when there is one: a ledger whose sealed last lines were deleted or
    edited is not intact; events appended since the last save are (the panel polls a live
    ledger; the result's ``sealed`` says how many came after the seal)."""
    from ..artifact import ledgers as LG
    from ..artifact.seal import sealed_ledger

    sealed = sealed_ledger(path)
    if sealed is None:
        checked = LG.reader(path).verify()
    else:
        checked = LG.reader(path).verify(sealed["head"], expected_events=sealed["events"], appended_ok=True)
    try:
        state, events = LG.read_state(path)
    except Exception as exc:  # noqa: BLE001 - a damaged ledger is reported, never a crash of the route
        raise RouteError(409, f"ledger {path.stem!r} cannot be folded ({type(exc).__name__}: {exc})",
                         name=path.stem, head=checked["head"], intact=False, verify=checked) from None
    brief = {"name": path.stem, "events": state.events, "head": checked["head"], "intact": checked["ok"],
             "awaiting": [d for d in state.decisions if LG.awaiting_person(state, d)]}
    return brief, state, events, checked


def ledgers(notebook: Path, root: Path) -> list[LedgerBrief]:
    """``[{name, events, head, intact, awaiting}]``: each ledger's event count, the sha256 of its
    last line, whether ``verify()`` finds it intact, and the decisions awaiting the person (a
    ledger that cannot be folded: ``events`` None, ``intact`` False and its ``error``)."""
    folder = _folder(notebook, "ledger", root)
    if folder is None:
        return []
    out: list = []
    from ..artifact.paths import NAME

    for f in sorted(folder.glob("*.jsonl")):
        if not NAME.fullmatch(f.stem):
            continue
        try:
            _inside(root, f, f"ledger {f.stem}")
            out.append(_brief(f)[0])
        except RouteError as exc:
            if exc.status != 409:
                raise
            out.append({"name": f.stem, "events": None, "head": exc.payload.get("head"), "intact": False,
                        "awaiting": [], "error": exc.payload["error"]})
    return out


def ledger(notebook: Path, root: Path, name: str) -> LedgerFold:
    """One ledger as the explorer shows it: the brief of :func:`ledgers`, the fold's summary
    (questions, decisions with status and predicate results and reasons, claims, sources,
    objections, escalations), the ``timeline`` and the ``verify`` result."""
    from ..artifact import ledgers as LG

    path = _ledger_file(notebook, root, name)
    brief, state, events, checked = _brief(path)
    return cast(LedgerFold, {**brief, **LG.summary(state), "timeline": LG.timeline(events), "verify": checked})


def decide(notebook: Path, root: Path, name: str, body: object, user: str) -> LedgerAccepted:
    """The person's decision through the server: ``{decision_id, revision, verdict, note}`` -> the
    ledger's receipt ``{ok, seq, hash}``, recorded as *user* on the ``server`` channel.
    ``revision`` (required) is the revision the person saw on the card: the ledger's writer
    refuses the decision (409 ``LEDGER_STATE``, "reload") when the decision has moved on to
    another revision meanwhile, so an approval never lands on a revision nobody showed the
    person. Refused (409 with the ledger's ``code``) unless the decision awaits the person."""
    from ..artifact import ledgers as LG

    if not isinstance(body, dict):
        raise RouteError(400, 'the body must be a JSON object {"decision_id": "...", "revision": N, "verdict": '
                              '"approved|rejected|needs_revision", "note": "..."}')
    extra = sorted(set(body) - set(DECISION_FIELDS))
    if extra:
        raise RouteError(400, f"unknown field(s) {', '.join(map(repr, extra))}: the fields are "
                              f"{', '.join(DECISION_FIELDS)}")
    did, verdict, note = body.get("decision_id"), body.get("verdict"), body.get("note", "")
    if not isinstance(did, str) or not did.strip():
        raise RouteError(400, f'"decision_id" must be the decision\'s id (a non-empty string), not {did!r}')
    if verdict not in LG.VERDICTS:
        raise RouteError(400, f'"verdict" is {verdict!r}; it must be one of {", ".join(LG.VERDICTS)}')
    if "revision" not in body:
        raise RouteError(400, 'the field "revision" is missing: send the revision of the decision the person saw '
                              '(the card\'s "revision"), so the decision is recorded on that revision only')
    revision = body["revision"]
    from ..research.events import INT_MAX

    if type(revision) is not int or not 1 <= revision <= INT_MAX:
        shown = repr(revision) if len(repr(revision)) <= 40 else repr(revision)[:40] + "…"
        raise RouteError(400, f'"revision" must be the decision\'s revision the person saw (a whole number from 1 '
                              f"to {INT_MAX}), not {shown}" + (" (out of range)" if type(revision) is int else ""))
    if note is None:
        note = ""
    if not isinstance(note, str):
        raise RouteError(400, f'"note" must be a string, not {type(note).__name__}')
    path = _ledger_file(notebook, root, name)
    try:
        receipt = LG.record_decision(path, did, verdict, note.strip(), by=user, channel="server", revision=revision)
    except ValueError as exc:  # no usable name for the server's user
        raise RouteError(403, f"the decision cannot be attributed to a person: {exc}") from None
    if not receipt["ok"]:
        status = {"LEDGER_SCHEMA": 400, "LEDGER_IO": 503}.get(receipt["code"], 409)
        raise RouteError(status, receipt["error"], ok=False, code=receipt["code"])
    return cast(LedgerAccepted, receipt)
