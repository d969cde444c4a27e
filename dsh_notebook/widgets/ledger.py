"""The ledger explorer (spec: research.md "The explorer").

``LedgerExplorer(name="main", notebook=None, poll=3.0)`` shows one research ledger: the kernel's
notebook's (``<stem>.dsh/ledger/<name>.jsonl``, found as ``%reckon`` finds it) or, with
*notebook*, the ledger of that notebook, sidecar folder or ``.jsonl`` file. Tabs:

* **Decisions**: each decision's statement, status, the predicates' results and reasons
  (``can_request_human_approval``, ``has_unresolved_objections``, each cited claim's
  eligibility) and its human decisions. Only a decision *awaiting the person* (a
  ``human-approval-requested`` for its current revision and no human decision yet) gets a note
  box and Approve / Reject / Needs revision buttons; a click asks for confirmation, and
  Confirm records ``human-decision-recorded`` through ``artifact.ledgers.record_decision`` as
  ``getpass.getuser()`` on the ``explorer`` channel. The ledger's receipt is shown (a refusal
  with its code).
* **Claims** (source, quote, verdicts, eligibility and why), **Sources** (verification,
  retraction and notices, fulltext), **Objections** (open / resolved), **Timeline** (every event
  with actor role and authority) and **Graph** (decision -> claims -> sources, an inline SVG).

Refresh re-reads the file; a thread polls its mtime every *poll* seconds and refreshes on a
change; ``close()`` stops it. Errors of a click show in the widget's ``Output``. The
``text/plain`` fallback is a fixed sentence (public case P14: nbval compares it).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import ipywidgets as W

from ..artifact import ledgers as L
from ..artifact.payloads import LedgerGraph
from ..kernel import kernel_ledger
from ..research.payloads import DecisionCard, LedgerSummary
from .templating import render

if TYPE_CHECKING:
    from ..research import LedgerState

_LABELS = {"approved": "Approve", "rejected": "Reject", "needs_revision": "Needs revision"}
# buttons keep their width in a row beside long text (a flex item's default shrink cut
# "Confirm" to "Con…" in JupyterLab)
_BUTTON = {"width": "auto", "flex": "0 0 auto"}
_STYLES = {"approved": "success", "rejected": "danger", "needs_revision": "warning"}


def _wide() -> W.Layout:
    return W.Layout(overflow="auto", max_width="100%")


def _empty(text: str) -> str:
    """An empty tab's sentence, in italics."""
    return render("ledger.html.j2", part="empty", text=text)


def graph_svg(g: LedgerGraph) -> str:
    """The Graph tab: decisions -> claims -> sources (``artifact.ledgers.graph_layout``) as an inline
    SVG in theme colours, every text escaped."""
    return render("ledger_graph.svg.j2", g=g)


def decision_html(d: DecisionCard) -> str:
    """The decision card as HTML (from ``artifact.ledgers.decision_view``), every text escaped."""
    asked = d["awaiting_person"] or any(h.get("revision") == d["revision"] for h in d["human_decisions"])
    return render("decision.html.j2", d=d, asked=asked)


def claims_html(s: LedgerSummary) -> str:
    """The claims table (each claim's text, source, quote, verdicts and eligibility), escaped."""
    return render("ledger_tables.html.j2", table="claims", rows=s["claims"])


def sources_html(s: LedgerSummary) -> str:
    """The sources table (identifier, title, verification, notices, full text), escaped."""
    return render("ledger_tables.html.j2", table="sources", rows=s["sources"])


def objections_html(s: LedgerSummary) -> str:
    """The objections table (target, reason, severity, answers, adjudication, state), escaped."""
    return render("ledger_tables.html.j2", table="objections", rows=s["objections"])


def timeline_html(rows: list[dict]) -> str:
    """The timeline table (``artifact.ledgers.timeline`` rows), escaped."""
    return render("ledger_tables.html.j2", table="timeline", rows=rows)


class LedgerExplorer(W.VBox):
    """``LedgerExplorer(name="main", notebook=None, poll=3.0)``; ``.refresh()`` re-reads the
    ledger, ``.close()`` stops watching it."""

    def __init__(self, name: str = "main", notebook: str | os.PathLike[str] | None = None, poll: float = 3.0) -> None:
        if not isinstance(poll, (int, float)) or isinstance(poll, bool) or not poll > 0:
            raise ValueError(f"poll must be a positive number of seconds, not {poll!r}")
        if notebook is None:
            from IPython import get_ipython

            self.path = kernel_ledger(get_ipython(), name)
        else:
            self.path = L.resolve_ledger(notebook, name)
        self.name = name
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._poll = poll
        # (decision_id, verdict, revision, statement) awaiting Confirm: the revision and statement the
        # card showed when it was drawn, so a revision written since is refused, never approved unseen
        self._pending: tuple[str, str, int, str] | None = None
        self.buttons: dict[str, dict[str, W.Button]] = {}
        self.notes: dict[str, W.Text] = {}
        self.state: LedgerState | None = None
        self.summary: dict[str, Any] = {}
        self.header = W.HTML()
        self.message = W.HTML()
        self.refresh_button = W.Button(description="Refresh", icon="refresh", layout=W.Layout(**_BUTTON))
        self.refresh_button.on_click(lambda _b: self._guarded(self.refresh))
        self.confirm_button = W.Button(description="Confirm", button_style="primary", layout=W.Layout(**_BUTTON))
        self.cancel_button = W.Button(description="Cancel", layout=W.Layout(**_BUTTON))
        self.confirm_button.on_click(lambda _b: self._guarded(self.confirm))
        self.cancel_button.on_click(lambda _b: self._guarded(self.cancel))
        self.confirm_text = W.HTML(layout=W.Layout(flex="1 1 auto"))
        self.confirm_box = W.HBox([self.confirm_text, self.confirm_button, self.cancel_button],
                                  layout=W.Layout(display="none"))
        self.decisions_box = W.VBox()
        # wide tables and the graph scroll sideways in a narrow notebook instead of being cut off
        self.claims_html, self.sources_html = W.HTML(layout=_wide()), W.HTML(layout=_wide())
        self.objections_html, self.timeline_html = W.HTML(layout=_wide()), W.HTML(layout=_wide())
        self.graph_html = W.HTML(layout=_wide())
        self.tabs = W.Tab(children=[self.decisions_box, self.claims_html, self.sources_html,
                                    self.objections_html, self.timeline_html, self.graph_html])
        for i, t in enumerate(("Decisions", "Claims", "Sources", "Objections", "Timeline", "Graph")):
            self.tabs.set_title(i, t)
        self.output = W.Output()
        super().__init__([W.HBox([self.header, self.refresh_button]), self.message, self.confirm_box, self.tabs,
                          self.output])
        self.refresh()
        self._watcher = threading.Thread(target=self._watch, name="dsh-ledger-explorer", daemon=True)
        self._watcher.start()

    def __repr__(self) -> str:  # the text/plain fallback: fixed, so nbval compares it
        return "[research ledger explorer]"

    # ------------------------------------------------------------------ reading

    def _key(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
            return (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            return None

    def refresh(self) -> None:
        """Re-read the ledger file and redraw every tab."""
        with self._lock:
            self._seen = self._key()
            state, events = L.read_state(self.path)
            self.state, self.summary = state, L.summary(state)
            s = cast(LedgerSummary, self.summary)
            self.header.value = render("ledger.html.j2", part="header", name=self.path.name,
                                       missing=not self.path.exists(), s=s)
            self._draw_decisions()
            self.claims_html.value = claims_html(s)
            self.sources_html.value = sources_html(s)
            self.objections_html.value = objections_html(s)
            self.timeline_html.value = timeline_html(L.timeline(events))
            self.graph_html.value = graph_svg(L.graph_layout(state)) if s["events"] else _empty("Nothing to draw yet.")
            if self._pending is not None:
                did, rev = self._pending[0], self._pending[2]
                if not L.awaiting_person(state, did):
                    self._set_pending(None)
                elif state.decisions[did].revision != rev:  # revised since the card the person clicked
                    self._set_pending(None)
                    self._say(f"Decision {did} was revised to revision {state.decisions[did].revision} while you "
                              f"were confirming revision {rev}; nothing was recorded: read the new revision.",
                              "#c62828")

    def _draw_decisions(self) -> None:
        children = []
        self.buttons, kept = {}, self.notes
        self.notes = {}
        for d in self.summary["decisions"]:
            box = [W.HTML(decision_html(d))]
            did = d["decision_id"]
            if d["awaiting_person"]:
                note = kept.get(did) or W.Text(placeholder="note (optional)", description="Note",
                                                layout=W.Layout(width="320px"))
                self.notes[did] = note
                self.buttons[did] = {}
                row = [note]
                rev, statement = d["revision"], d["statement"]  # what this card shows
                for verdict in L.VERDICTS:
                    b = W.Button(description=_LABELS[verdict], button_style=_STYLES[verdict],
                                 layout=W.Layout(**_BUTTON), tooltip=f"{_LABELS[verdict]} decision {did} revision {rev}")
                    b.on_click(lambda _b, did=did, v=verdict, rev=rev, st=statement:
                               self._guarded(lambda: self.request(did, v, revision=rev, statement=st)))
                    self.buttons[did][verdict] = b
                    row.append(b)
                box.append(W.HBox(row, layout=W.Layout(flex_flow="row wrap")))  # buttons wrap when narrow
            children.append(W.VBox(box, layout=W.Layout(border="1px solid #d0d7de", padding="4px", margin="3px 0")))
        if not children:
            children = [W.HTML(_empty("No decisions yet."))]
        self.decisions_box.children = children

    # ------------------------------------------------------------------ deciding

    def _set_pending(self, pending: tuple[str, str, int, str] | None) -> None:
        self._pending = pending
        if pending is None:
            self.confirm_box.layout.display = "none"
            self.confirm_text.value = ""
            return
        did, verdict, rev, statement = pending
        note = self.notes[did].value.strip() if did in self.notes else ""
        self.confirm_text.value = render("ledger.html.j2", part="confirm", verdict=verdict, decision_id=did,
                                         revision=rev, statement=statement, person=L.person_name(), note=note)
        self.confirm_box.layout.display = "flex"

    def _say(self, text: str, colour: str = "#57606a") -> None:
        self.message.value = render("ledger.html.j2", part="message", text=text, colour=colour)

    def request(self, decision_id: str, verdict: str, *, revision: int | None = None,
                statement: str | None = None) -> None:
        """A decision button's click: ask for confirmation (nothing is written yet). *revision*
        and *statement* are what the clicked card showed (the buttons pass them); Confirm records
        the decision on that revision only, so the ledger refuses it if the decision was revised
        since the card was drawn. Without them, the ledger's current revision is used."""
        with self._lock:
            if verdict not in L.VERDICTS:
                raise ValueError(f"verdict {verdict!r}: expected one of {', '.join(L.VERDICTS)}")
            state, _events = L.read_state(self.path)
            if not L.awaiting_person(state, decision_id):
                why = (f"decision {decision_id!r} does not await the person now "
                       f"(status {L.decision_status(state, decision_id) if decision_id in state.decisions else 'unknown'}"
                       "); nothing was recorded")
                self._set_pending(None)
                self._say(f"Refused: {why}", "#c62828")
                self.refresh()
                return
            dec = state.decisions[decision_id]
            if revision is None:
                revision, statement = dec.revision, dec.current["statement"]
            elif statement is None:
                statement = next((r["statement"] for r in dec.revisions if r.get("revision") == revision), "")
            self._set_pending((decision_id, verdict, revision, statement))
            self._say("" if dec.revision == revision else
                      f"The decision was revised to revision {dec.revision} since this card was drawn; "
                      "Confirm will be refused: Refresh and read the new revision.", "#c62828")

    def cancel(self) -> None:
        with self._lock:
            self._set_pending(None)
            self._say("Cancelled; nothing was recorded.")

    def confirm(self) -> dict | None:
        """Confirm: the person's action. Appends ``human-decision-recorded`` with a human actor
        from ``confirmed_actor(<user>, "explorer")`` (``record_decision``); returns the ledger's receipt."""
        with self._lock:
            if self._pending is None:
                self._say("Nothing to confirm: choose Approve, Reject or Needs revision first.", "#c62828")
                return None
            did, verdict, rev, _statement = self._pending
            self._set_pending(None)
            note = self.notes[did].value.strip() if did in self.notes else ""
            name = L.person_name()
            receipt = L.record_decision(self.path, did, verdict, note, by=name, channel="explorer", revision=rev)
            if receipt["ok"]:
                self._say(f"Recorded: decision {did} {verdict} by {name} (seq {receipt['seq']}).", "#1a7f37")
            else:
                self._say(f"Refused: {receipt['code']}: {receipt['error']}", "#c62828")
            self.refresh()
            return receipt

    # ------------------------------------------------------------------ plumbing

    def _guarded(self, fn: Callable[[], object]) -> None:
        with self.output:
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - shown in the widget, never lost
                print(f"ledger explorer: {type(exc).__name__}: {exc}")

    def _watch(self) -> None:
        while not self._stop.wait(self._poll):
            if self._key() != getattr(self, "_seen", None):
                self._guarded(self.refresh)

    def close(self) -> None:
        stop = getattr(self, "_stop", None)  # __del__ may run on an explorer whose __init__ refused
        if stop is not None:
            stop.set()
        super().close()


__all__ = ["LedgerExplorer"]
