"""A notebook's research ledgers, for people (spec: research.md "The explorer"): shared by
``%ledger``, ``dsh-notebook ledger``, :class:`~dsh_notebook.widgets.LedgerExplorer` and the
server's routes. No IPython, no widgets, no model client.

* :func:`resolve_ledger` finds ``<stem>.dsh/ledger/<name>.jsonl`` from a notebook, its sidecar
  folder or the ledger file itself;
* :func:`read_state` folds a ledger without creating it (a missing file is an empty state);
* :func:`summary` is the JSON projection (decisions with their status and predicate results and
  reasons, claims, sources, objections); :func:`show_bundle`, :func:`verify_bundle` the displays
  (``application/vnd.dsh.ledger+json`` with ``text/markdown`` and ``text/plain`` fallbacks; paths
  and heads only in ``metadata.dsh``);
* :func:`awaiting_person` says whether a decision awaits the person: a ``human-approval-requested``
  for its current revision and no human decision yet (fail closed);
* :func:`record_decision` writes the person's ``human-decision-recorded``, refused unless the
  decision awaits the person: the one writer behind the explorer's Confirm, ``dsh-notebook
  ledger decide`` and the server's decision route;
* :func:`evidence_markdown`, :func:`bibtex` and :func:`export` write the evidence table and the
  BibTeX of verified sources under the sidecar's ``exports/``;
* :func:`graph_layout` lays out decision -> claims -> sources for a picture (the explorer draws it
  as an SVG through an autoescaped template).

Only :func:`record_decision` creates a human actor (``confirmed_actor``), and only its three
callers reach it, each after the person's own action: the explorer's confirmed click, the
terminal's confirmed ``dsh-notebook ledger decide`` and the server's authenticated POST.
"""

from __future__ import annotations

import getpass
import html
import os
import re
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..formats import LATEX_SPECIALS
from ..inert import markdown_html
from ..research import (
    LedgerState,
    can_request_human_approval,
    decision_status,
    fold,
    has_unresolved_objections,
    is_eligible_for_synthesis,
)
from ..research.predicates import unresolved_objections
from .payloads import GraphBox, GraphEdge, LedgerGraph
from .seal import sealed_ledger

if TYPE_CHECKING:
    from ..research import Ledger

MIME_LEDGER = "application/vnd.dsh.ledger+json"
VERDICTS = ("approved", "rejected", "needs_revision")





def person_name() -> str:
    """The person at this machine (``getpass.getuser()``; ``uid-N`` when that cannot be told)."""
    try:
        name = getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in this environment
        name = ""
    if name:
        return name
    return f"uid-{os.getuid()}" if hasattr(os, "getuid") else "unknown"


# ----------------------------------------------------------------------------- where


def resolve_ledger(where: str | os.PathLike[str], name: str = "main") -> Path:
    """A notebook ``x.ipynb`` -> ``x.dsh/ledger/<name>.jsonl``; a sidecar folder ``x.dsh`` ->
    ``x.dsh/ledger/<name>.jsonl``; a ``.jsonl`` file is the ledger itself."""
    p = Path(where)
    if p.suffix == ".jsonl":
        return p
    if p.suffix == ".dsh" or (p.is_dir() and (p / "ledger").is_dir()):
        return p / "ledger" / f"{name}.jsonl"
    return p.with_name(p.stem + ".dsh") / "ledger" / f"{name}.jsonl"


def sidecar_of(ledger_file: Path) -> Path:
    """``x.dsh/ledger/main.jsonl`` -> ``x.dsh``."""
    return Path(ledger_file).parent.parent


def reader(path: Path) -> Ledger:
    """A :class:`~dsh_notebook.research.Ledger` on *path* for reading (``events``, ``verify``)
    that never writes: the constructor would write a header into a new file."""
    from ..research import Ledger

    return Ledger(path, create=False)


def read_state(path: Path) -> tuple[LedgerState, list[dict]]:
    """``(state, events)`` of the ledger at *path*, without creating it."""
    path = Path(path)
    if not path.exists():
        return fold([]), []
    events = reader(path).events()
    return fold(events), events


# ----------------------------------------------------------------------------- projection


def awaiting_person(state: LedgerState, decision_id: str) -> bool:
    """A ``human-approval-requested`` for the decision's current revision and no human decision
    for it yet (and the decision is not closed)."""
    dec = state.decisions.get(decision_id)
    if dec is None:
        return False
    return decision_status(state, decision_id) == "awaiting_human" and \
        not state.human_decisions_for(decision_id, dec.revision)


def record_decision(path: Path, decision_id: str, verdict: str, note: str = "", *, by: str, channel: str,
                    revision: int | None = None) -> dict:
    """Record the person's decision: ``human-decision-recorded`` with a human actor from
    ``confirmed_actor(by, channel)``. Call it only after the person's own action (a confirmed
    click, a confirmed terminal command, an authenticated POST). Refused, with nothing written,
    unless the decision awaits the person and, with *revision* (the revision the person saw),
    is still at that revision: the revision goes into the event, and the ledger's writer checks
    it again under its lock, so a revision that lands meanwhile is never the one approved.
    The event carries the person's SSH signature (:func:`dsh_notebook.signing.sign` of
    :func:`dsh_notebook.research.decision_message`); a decision that cannot be signed is not
    recorded. Returns the ledger's receipt, ``{"ok": True, "seq", "hash"}`` or ``{"ok": False,
    "code", "error"}``; raises ``ValueError`` for an empty *by* or a channel that is not a person's."""
    from ..research import (
        LEDGER_IO,
        LEDGER_REFERENCE,
        LEDGER_SCHEMA,
        LEDGER_STATE,
        Ledger,
        LedgerPathError,
    )
    from ..research.human import confirmed_actor

    path = Path(path)
    if verdict not in VERDICTS:
        return {"ok": False, "code": LEDGER_SCHEMA, "error": f"verdict {verdict!r}: expected one of "
                                                             f"{', '.join(VERDICTS)}"}
    if not path.exists():
        return {"ok": False, "code": LEDGER_REFERENCE, "error": f"there is no ledger {path.name}"}
    state, _events = read_state(path)
    dec = state.decisions.get(decision_id)
    if dec is None:
        return {"ok": False, "code": LEDGER_REFERENCE, "error": f"decision {decision_id!r} is not in the ledger"}
    if revision is not None and dec.revision != revision:
        return {"ok": False, "code": LEDGER_STATE,
                "error": f"decision {decision_id} is at revision {dec.revision}; you decided on revision {revision}: "
                         "reload; nothing was recorded"}
    if not awaiting_person(state, decision_id):
        return {"ok": False, "code": LEDGER_STATE,
                "error": f"decision {decision_id!r} does not await the person (status "
                         f"{decision_status(state, decision_id)}); nothing was recorded"}
    person = confirmed_actor(by, channel)
    data: dict[str, Any] = {"decision_id": decision_id, "verdict": verdict, "note": note or ""}
    if revision is not None:  # the writer re-checks it under the ledger's lock (a revision may land meanwhile)
        data["revision"] = revision
    try:
        ledger = Ledger(path)
    except LedgerPathError as exc:
        return {"ok": False, "code": LEDGER_IO, "error": f"{exc}; nothing was recorded"}
    from .. import signing

    # signed by the deciding person's key under the ledger's lock (issue 15): the signature covers
    # the ledger, its header, the event's place (prev) and the decision; unsigned, nothing is written
    return ledger.append("human-decision-recorded", data, person, sign=signing.sign)


def _pred(result: tuple[bool, str]) -> dict:
    return {"value": bool(result[0]), "reason": result[1]}


def decision_view(state: LedgerState, decision_id: str) -> dict:
    dec = state.decisions[decision_id]
    cur = dec.current
    claims = []
    for c in dec.claim_ids:
        ok, why = is_eligible_for_synthesis(state, c)
        claims.append({"claim_id": c, "eligible": ok, "reason": why})
    human = [{"revision": h.revision, "verdict": h.verdict, "note": h.note, "by": h.by, "channel": h.channel,
              "seq": h.seq} for h in state.human_decisions_for(decision_id)]
    return {
        "decision_id": decision_id, "question_id": dec.question_id, "revision": dec.revision,
        "statement": cur["statement"], "claim_ids": dec.claim_ids, "confidence": cur.get("confidence"),
        "limitations": cur.get("limitations", ""), "status": decision_status(state, decision_id),
        "awaiting_person": awaiting_person(state, decision_id),
        "predicates": {"can_request_human_approval": _pred(can_request_human_approval(state, decision_id)),
                       "has_unresolved_objections": _pred(has_unresolved_objections(state, decision_id))},
        "claims": claims,
        "reviews": [{"revision": r.revision, "verdict": r.verdict} for r in state.reviews_for(decision_id)],
        "unresolved_objections": [{"objection_id": o, "why": w} for o, w in unresolved_objections(state, decision_id)],
        "human_decisions": human,
    }


def source_view(state: LedgerState, source_id: str) -> dict:
    s = state.sources[source_id]
    latest = s.verdicts[-1] if s.verdicts else {}
    notices = [v["verdict"] for v in s.verdicts
               if v["verdict"] in ("retracted", "withdrawn", "corrected", "expression_of_concern")]
    return {"source_id": source_id, "kind": s.kind, "identifier": s.identifier, "title": s.title,
            "authors": list(s.authors), "year": s.year, "verdict": s.verdict,
            "retracted": s.verdict == "retracted", "withdrawn": s.verdict == "withdrawn", "notices": notices, "resolver": latest.get("resolver"),
            "fulltext": None if s.fulltext is None else {k: s.fulltext.get(k) for k in ("locator", "sha256", "bytes")}}


def claim_view(state: LedgerState, claim_id: str) -> dict:
    c = state.claims[claim_id]
    ok, why = is_eligible_for_synthesis(state, claim_id)
    return {"claim_id": claim_id, "source_id": c.source_id, "text": c.text, "quote": c.span.get("quote", ""),
            "locator": c.span.get("locator", ""), "verdict": c.verdict,
            "verdicts": [{"verdict": v["verdict"], "rationale": v.get("rationale", "")} for v in c.verdicts],
            "eligible": ok, "reason": why}


def objection_view(state: LedgerState, objection_id: str) -> dict:
    o = state.objections[objection_id]
    adj = o.adjudication
    open_ = adj is None or (adj.verdict == "upheld" and not any(
        objection_id in r["answers"] and r["seq"] > adj.seq
        for d in state.decisions.values() for r in d.revisions))
    return {"objection_id": objection_id, "target": dict(o.target), "reason": o.reason, "severity": o.severity,
            "answers": [a["response"] for a in o.answers],
            "adjudication": None if adj is None else {"verdict": adj.verdict, "rationale": adj.rationale},
            "state": "open" if open_ else "resolved"}


def summary(state: LedgerState) -> dict:
    """The JSON projection of the fold shown by ``%ledger show`` and the explorer."""
    return {
        "questions": [{"question_id": q.question_id, "text": q.text} for q in state.questions.values()],
        "decisions": [decision_view(state, d) for d in state.decisions],
        "claims": [claim_view(state, c) for c in state.claims],
        "sources": [source_view(state, s) for s in state.sources],
        "objections": [objection_view(state, o) for o in state.objections],
        "escalations": [{"subject": e.subject, "reason": e.reason, "to": e.to} for e in state.escalations],
        "events": state.events,
    }


def timeline(events: list[dict]) -> list[dict]:
    """Each event: ``{seq, ts, type, role, authority, by, subject}``."""
    out = []
    for e in events:
        a = e.get("actor") or {}
        d = e.get("data") or {}
        subject = next((str(d[k]) for k in ("decision_id", "claim_id", "source_id", "objection_id", "question_id",
                                            "task_id", "experiment_id") if k in d), "")
        out.append({"seq": e.get("seq"), "ts": e.get("ts", ""), "type": str(e.get("type", "")).split("/", 1)[-1],
                    "role": a.get("role", ""), "authority": a.get("authority", ""),
                    "by": a.get("by") or "", "channel": a.get("channel") or "", "subject": subject})
    return out


# ----------------------------------------------------------------------------- text


def md_cell(text: object) -> str:
    """Text for one Markdown table cell: escaped, one line, ``|`` escaped."""
    s = html.escape(" ".join(str("" if text is None else text).split()), quote=False)
    return s.replace("|", "\\|")


def summary_text(s: dict) -> tuple[str, str]:
    """``(markdown, plain)`` for a summary."""
    md, plain = [], []
    if not s["events"]:
        return "The ledger has no events yet.", "The ledger has no events yet."
    md.append(f"**Research ledger** · {s['events']} event(s) · {len(s['decisions'])} decision(s) · "
              f"{len(s['claims'])} claim(s) · {len(s['sources'])} source(s) · {len(s['objections'])} objection(s)")
    plain.append(md[0].replace("**", ""))
    for d in s["decisions"]:
        p = d["predicates"]
        head = f"decision {d['decision_id']} (revision {d['revision']}): {d['status']}"
        md += ["", f"### {md_cell(head)}", "", md_cell(d["statement"]), ""]
        plain += ["", head, f"  {d['statement']}"]
        if d["awaiting_person"]:
            line = "awaiting the person: approve, reject or ask for a revision (explorer or `dsh-notebook ledger decide`)"
            md.append(f"- **{line}**")
            plain.append(f"  {line}")
        for key in ("can_request_human_approval", "has_unresolved_objections"):
            md.append(f"- `{key}`: {p[key]['value']} — {md_cell(p[key]['reason'])}")
            plain.append(f"  {key}: {p[key]['value']} - {p[key]['reason']}")
        for c in d["claims"]:
            mark = "eligible" if c["eligible"] else "not eligible"
            md.append(f"- claim `{c['claim_id']}`: {mark} — {md_cell(c['reason'])}")
            plain.append(f"  claim {c['claim_id']}: {mark} - {c['reason']}")
        for h in d["human_decisions"]:
            md.append(f"- human decision (revision {h['revision']}): **{h['verdict']}** by {md_cell(h['by'])}"
                      + (f" — {md_cell(h['note'])}" if h["note"] else ""))
            plain.append(f"  human decision (revision {h['revision']}): {h['verdict']} by {h['by']}"
                         + (f" - {h['note']}" if h["note"] else ""))
    if s["sources"]:
        md += ["", "| source | identifier | title | verdict |", "| --- | --- | --- | --- |"]
        plain += ["", "sources:"]
        for x in s["sources"]:
            md.append(f"| `{x['source_id']}` | {md_cell(x['identifier'])} | {md_cell(x['title'])} | "
                      f"{md_cell(x['verdict'] or 'unverified')} |")
            plain.append(f"  {x['source_id']}  {x['identifier']}  {x['verdict'] or 'unverified'}  {x['title']}")
    opened = [o for o in s["objections"] if o["state"] == "open"]
    if s["objections"]:
        line = f"objections: {len(opened)} open, {len(s['objections']) - len(opened)} resolved"
        md += ["", line]
        plain += ["", line]
    return "\n".join(md), "\n".join(plain)


def show_bundle(path: Path, state: LedgerState) -> tuple[dict, dict]:
    s = summary(state)
    md, plain = summary_text(s)
    meta = {"dsh": {"ledger": Path(path).name, "head_seq": state.head_seq}}
    return {MIME_LEDGER: s, "text/html": markdown_html(md), "text/plain": plain}, meta


def verify_sealed(path: Path) -> dict:
    """``Ledger(path).verify()``, against the head ``dsh-notebook sync`` sealed in the notebook
    beside the ledger's sidecar when it holds one (``artifact.sealed_ledger``): a deleted or
    edited last line is then found too. Events appended after the sealed head are not a
    problem here (a live ledger goes on after each save); the result's ``sealed`` says how many.
    Raises ``LedgerPathError`` (one line) for a path that cannot be a ledger file."""
    from ..research import Ledger

    sealed = sealed_ledger(path)
    led = Ledger(path)
    if sealed is None:
        return led.verify()
    return led.verify(sealed["head"], expected_events=sealed["events"], appended_ok=True)


def _sealed_note(result: dict) -> str:
    sealed = result.get("sealed") or {}
    if sealed.get("status") == "matches":
        return " Its last line is the head sealed by sync."
    if sealed.get("status") == "appended":
        return (f" The head sealed by sync is line {sealed['line']}; {sealed['appended']} event(s) were appended "
                "after it (dsh-notebook sync seals them).")
    return ""


def verify_bundle(path: Path, result: dict) -> tuple[dict, dict]:
    if result["ok"]:
        text = (f"Ledger {Path(path).name}: intact ({result.get('events', 0)} event(s), chain and replay checked)."
                + _sealed_note(result))
        md = text
    else:
        lines = [f"line {p['line']}: {p['problem']}" for p in result["problems"]]
        text = f"Ledger {Path(path).name}: {len(lines)} problem(s)\n" + "\n".join(f"  {x}" for x in lines)
        md = f"**Ledger {md_cell(Path(path).name)}: {len(lines)} problem(s)**\n\n" + "\n".join(
            f"- {md_cell(x)}" for x in lines)
    data = {MIME_LEDGER: {"verify": {"ok": result["ok"], "problems": result["problems"],
                                     "events": result.get("events", 0)}},
            "text/html": markdown_html(md), "text/plain": text}
    return data, {"dsh": {"ledger": Path(path).name, "head": result.get("head")}}


# ----------------------------------------------------------------------------- export


def evidence_markdown(state: LedgerState, title: str = "Evidence") -> str:
    """A Markdown evidence table: one row per (decision, cited claim), then claims no decision cites."""
    out = [f"# {md_cell(title)}", ""]
    for d in state.decisions.values():
        out.append(f"- **{md_cell(d.decision_id)}** (revision {d.revision}, {decision_status(state, d.decision_id)}): "
                   f"{md_cell(d.current['statement'])}")
    out += ["", "| decision | claim | quote | source | source verdict | claim verdict | eligible |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    cited = set()

    def row(decision: str, cid: str) -> str:
        c = state.claims.get(cid)
        if c is None:
            return f"| {md_cell(decision)} | {md_cell(cid)} | | | | | no |"
        src = state.sources.get(c.source_id)
        ident = f"{c.source_id}: {src.title} ({src.identifier})" if src else c.source_id
        ok, _why = is_eligible_for_synthesis(state, cid)
        return (f"| {md_cell(decision)} | {md_cell(cid)}: {md_cell(c.text)} | “{md_cell(c.span.get('quote', ''))}” | "
                f"{md_cell(ident)} | {md_cell(src.verdict if src and src.verdict else 'unverified')} | "
                f"{md_cell(c.verdict or 'unverified')} | {'yes' if ok else 'no'} |")

    for d in state.decisions.values():
        for cid in d.claim_ids:
            cited.add(cid)
            out.append(row(d.decision_id, cid))
    for cid in state.claims:
        if cid not in cited:
            out.append(row("—", cid))
    return "\n".join(out) + "\n"


#: BibTeX field text: only ``\\ { }`` escaped (fields such as doi and url are read verbatim), in one
#: pass with the LaTeX escaper's replacements, so ``a\\b`` is ``a\\textbackslash{}b``.
_BIB_TABLE = str.maketrans({ch: LATEX_SPECIALS[ch] for ch in "\\{}"})


def _bib(text: object) -> str:
    return " ".join(str(text).split()).translate(_BIB_TABLE)


def bibtex(state: LedgerState) -> str:
    """BibTeX entries for the sources whose latest verdict is ``verified``, from the
    ``source-verified`` metadata (title, authors, year, doi/arxiv/pmid), falling back to what the
    source was proposed with."""
    entries, keys = [], set()
    for s in state.sources.values():
        if s.verdict != "verified":
            continue
        meta = dict(s.verdicts[-1].get("metadata") or {})
        title = meta.get("title") or s.title
        authors = meta.get("authors") or s.authors or []
        if isinstance(authors, str):
            authors = [authors]
        authors = [a.get("name") or " ".join(x for x in (a.get("given"), a.get("family")) if x)
                   if isinstance(a, dict) else str(a) for a in authors]
        year = meta.get("year") or s.year
        ids = {"doi": meta.get("doi"), "arxiv": meta.get("arxiv"), "pmid": meta.get("pmid")}
        if s.kind in ids and not ids[s.kind]:
            ids[s.kind] = s.identifier
        first = re.sub(r"[^A-Za-z0-9]", "", (authors[0].split(",")[0].split()[-1] if authors and authors[0].strip()
                                              else s.source_id)) or "src"
        key = base = f"{first.lower()}{year or ''}"
        n = 1
        while key in keys:
            n += 1
            key = f"{base}{chr(ord('a') + n - 1)}" if n <= 26 else f"{base}_{n}"
        keys.add(key)
        fields = [("title", f"{{{_bib(title)}}}")]
        if authors:
            fields.append(("author", " and ".join(_bib(a) for a in authors)))
        if year:
            fields.append(("year", str(year)))
        if meta.get("journal") or meta.get("container_title"):
            fields.append(("journal", _bib(meta.get("journal") or meta.get("container_title"))))
        if ids["doi"]:
            fields.append(("doi", _bib(ids["doi"])))
        if ids["arxiv"]:
            fields += [("eprint", _bib(ids["arxiv"])), ("archiveprefix", "arXiv")]
        if ids["pmid"]:
            fields.append(("pmid", _bib(ids["pmid"])))
        if s.kind == "url":
            fields.append(("url", _bib(s.identifier)))
        fields.append(("note", f"ledger source {_bib(s.source_id)}"))
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
        entries.append(f"@article{{{key},\n{body}\n}}")
    return "\n\n".join(entries) + ("\n" if entries else "")


def export(path: Path, state: LedgerState, formats: Collection[str] = ("md", "bibtex")) -> list[Path]:
    """Write ``exports/<name>-evidence.md`` and/or ``exports/<name>-sources.bib`` under the sidecar."""
    from ..storage import atomic_write_text

    path = Path(path)
    folder = sidecar_of(path) / "exports"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    if "md" in formats:
        out = folder / f"{path.stem}-evidence.md"
        atomic_write_text(out, evidence_markdown(state, f"Evidence: ledger {path.stem}"))
        written.append(out)
    if "bibtex" in formats:
        out = folder / f"{path.stem}-sources.bib"
        atomic_write_text(out, bibtex(state))
        written.append(out)
    return written


# ----------------------------------------------------------------------------- graph


_STATUS_TONE = {"approved": "ok", "rejected": "bad", "needs_revision": "warn", "awaiting_human": "accent",
                "provisional": "muted"}


def _cut(text: str, n: int = 34) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def graph_layout(state: LedgerState) -> LedgerGraph:
    """Decisions -> claims -> sources laid out for a picture (the explorer's Graph tab draws it as
    an SVG through an autoescaped template): three columns of labelled boxes, edges from each
    decision to the claims it cites and from each claim to its source. Tones: a decision by
    status, a claim ``ok`` when eligible, a source ``ok`` when verified and ``bad`` when
    retracted, withdrawn or mismatched. The texts are as the ledger holds them (not escaped)."""
    decisions = list(state.decisions.values())
    claim_ids: list[str] = []
    for d in decisions:
        claim_ids += [c for c in d.claim_ids if c not in claim_ids]
    claim_ids += [c for c in state.claims if c not in claim_ids]
    source_ids: list[str] = []
    for c in claim_ids:
        sid = state.claims[c].source_id if c in state.claims else None
        if sid and sid not in source_ids:
            source_ids.append(sid)
    source_ids += [s for s in state.sources if s not in source_ids]
    w, h, gap, cols = 230, 40, 14, (10, 300, 590)
    rows = max(len(decisions), len(claim_ids), len(source_ids), 1)
    pos: dict[tuple[str, str], tuple[int, int]] = {}
    boxes: list[GraphBox] = []

    def box(kind: str, ident: str, i: int, col: int, label: str, sub: str, tone: str) -> None:
        x, y = cols[col], 26 + i * (h + gap)
        pos[(kind, ident)] = (x, y)
        boxes.append({"kind": kind, "ident": ident, "x": x, "y": y, "title": str(label), "label": _cut(label),
                      "short_ident": _cut(ident, 30), "sub": sub, "tone": tone})

    for i, d in enumerate(decisions):
        st = decision_status(state, d.decision_id)
        box("decision", d.decision_id, i, 0, d.current["statement"], st, _STATUS_TONE.get(st, "muted"))
    for i, c in enumerate(claim_ids):
        cl = state.claims.get(c)
        ok = is_eligible_for_synthesis(state, c)[0]
        box("claim", c, i, 1, cl.text if cl else "(missing)", "eligible" if ok else "not eligible",
            "ok" if ok else "warn")
    for i, s in enumerate(source_ids):
        src = state.sources.get(s)
        v = (src.verdict if src else None) or "unverified"
        tone = "ok" if v == "verified" else "bad" if v in ("retracted", "withdrawn", "mismatch") else "warn"
        box("source", s, i, 2, src.title or src.identifier if src else "(missing)", v, tone)
    edges: list[GraphEdge] = []

    def edge(a: tuple[str, str], b: tuple[str, str]) -> None:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        edges.append({"x1": x1 + w, "y1": y1 + h // 2, "x2": x2, "y2": y2 + h // 2})

    for d in decisions:
        for c in d.claim_ids:
            if ("claim", c) in pos:
                edge(("decision", d.decision_id), ("claim", c))
    for c in claim_ids:
        cl = state.claims.get(c)
        if cl is not None and ("source", cl.source_id) in pos:
            edge(("claim", c), ("source", cl.source_id))
    return {"width": cols[2] + w + 10, "height": 30 + rows * (h + gap), "box_width": w, "box_height": h,
            "columns": list(cols), "boxes": boxes, "edges": edges}
