"""The research state as a pure fold over ledger events (spec: research.md "Fold and predicates").

Design:

- ``fold(events) -> LedgerState`` reads event lines (``{seq, ts, type, actor, prev, data}``;
  a header line without ``type`` is skipped) in order and never touches its input: the state
  holds copies (each event's data is copied once, as plain JSON), so the same events always give
  an equal state. One step function per type, found by the line's ``type``; no per-event
  objects besides what the state keeps. ``fold_owned`` is the same fold without the copy, for
  rows just decoded that nobody else holds (``Ledger.fold``).
- The state keeps history, not statuses: every source and claim verdict, every decision
  revision, every objection answer and adjudication. "Latest" values are properties; what is
  allowed next is decided by the explicit predicates in ``predicates``, never by ordering statuses.
- Lookups by decision (``reviews_for``, ``approvals_for``, ``human_decisions_for``) and
  objections by target (``objections_about``) go through indexes the state keeps beside its
  lists (not compared, not shown), brought up to date from the lists' new items on each lookup:
  the writer's checks and ``verify()`` stay linear in the number of events, not quadratic.
  They follow appends to the lists (the fold only appends); a list changed otherwise is
  re-indexed when it got shorter.
- ``apply(state, event)`` is the single step (the ledger uses it to keep its cache current); it
  assumes the event passed the writer's checks and skips one that refers to nothing it knows.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .events import EVENT_PREFIX

__all__ = [
    "Adjudication",
    "Approval",
    "Claim",
    "Decision",
    "Escalation",
    "Experiment",
    "HumanDecision",
    "LedgerState",
    "Objection",
    "Question",
    "Review",
    "Source",
    "Task",
    "apply",
    "fold",
    "fold_owned",
]


@dataclass
class Question:
    question_id: str
    text: str
    scope: Any
    acceptance: Any
    seq: int
    on_behalf_of_person: bool = False
    plans: list[Any] = field(default_factory=list)


@dataclass
class Task:
    task_id: str
    role: str
    duty: str
    inputs: dict
    route: dict
    budget: dict
    seq: int
    status: str | None = None  # None while running
    usage: dict = field(default_factory=dict)


@dataclass
class Source:
    source_id: str
    kind: str
    identifier: str
    title: str
    authors: list[str]
    year: int | None
    query: str
    seq: int
    verdicts: list[dict] = field(default_factory=list)  # {verdict, checks, metadata, resolver, seq}
    fulltext: dict | None = None  # latest {locator, sha256, bytes, media_type, seq}

    @property
    def verdict(self) -> str | None:
        """The latest bibliographic verdict, or ``None`` if never verified."""
        return self.verdicts[-1]["verdict"] if self.verdicts else None


@dataclass
class Claim:
    claim_id: str
    source_id: str
    text: str
    span: dict
    seq: int
    verdicts: list[dict] = field(default_factory=list)  # {verdict, rationale, seq}

    @property
    def verdict(self) -> str | None:
        """The latest claim verdict, or ``None`` if never verified."""
        return self.verdicts[-1]["verdict"] if self.verdicts else None


@dataclass
class Experiment:
    experiment_id: str
    source_id: str
    data: dict
    seq: int


@dataclass
class Decision:
    decision_id: str
    question_id: str
    revisions: list[dict] = field(default_factory=list)
    # each {revision, statement, claim_ids, confidence, limitations, answers, seq}

    @property
    def current(self) -> dict:
        return self.revisions[-1]

    @property
    def revision(self) -> int:
        return self.current["revision"]

    @property
    def claim_ids(self) -> list[str]:
        return list(self.current["claim_ids"])


@dataclass
class Adjudication:
    verdict: str
    rationale: str
    seq: int


@dataclass
class Objection:
    objection_id: str
    target: dict  # {kind, id}
    reason: str
    severity: str
    seq: int
    answers: list[dict] = field(default_factory=list)  # {response, seq}
    adjudications: list[Adjudication] = field(default_factory=list)

    @property
    def adjudication(self) -> Adjudication | None:
        """The latest adjudication, or ``None``."""
        return self.adjudications[-1] if self.adjudications else None


@dataclass
class Review:
    decision_id: str
    revision: int
    verdict: str
    objection_ids: list[str]
    seq: int


@dataclass
class Approval:
    """A ``human-approval-requested`` for one revision of a decision."""

    decision_id: str
    revision: int
    seq: int


@dataclass
class HumanDecision:
    decision_id: str
    revision: int
    verdict: str
    note: str
    by: str
    channel: str | None
    seq: int


@dataclass
class Escalation:
    subject: dict
    reason: str
    to: str
    seq: int


@dataclass
class LedgerState:
    """Everything the ledger says, by id (dicts keep insertion = ledger order)."""

    questions: dict[str, Question] = field(default_factory=dict)
    tasks: dict[str, Task] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)
    claims: dict[str, Claim] = field(default_factory=dict)
    experiments: dict[str, Experiment] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)
    objections: dict[str, Objection] = field(default_factory=dict)
    reviews: list[Review] = field(default_factory=list)
    approvals: list[Approval] = field(default_factory=list)
    human_decisions: list[HumanDecision] = field(default_factory=list)
    escalations: list[Escalation] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)  # seqs of events that referred to nothing known
    head_seq: int = 0
    events: int = 0
    # name -> [items indexed, {key: [items]}]; derived from the lists above (see the module docstring)
    _index: dict = field(default_factory=dict, compare=False, repr=False)

    def _indexed(self, name: str) -> dict:
        items = getattr(self, name)
        entry = self._index.get(name)
        if entry is None or len(items) < entry[0]:
            entry = self._index[name] = [0, {}]
        done, by = entry
        if len(items) > done:
            if name == "objections":
                for o in itertools.islice(items.values(), done, None):
                    target = o.target if isinstance(o.target, dict) else {}
                    by.setdefault((target.get("kind"), target.get("id")), []).append(o)
            else:
                for item in items[done:]:
                    by.setdefault(item.decision_id, []).append(item)
            entry[0] = len(items)
        return by

    def reviews_for(self, decision_id: str, revision: int | None = None) -> list[Review]:
        found = self._indexed("reviews").get(decision_id, ())
        return [r for r in found if revision is None or r.revision == revision]

    def approvals_for(self, decision_id: str, revision: int | None = None) -> list[Approval]:
        found = self._indexed("approvals").get(decision_id, ())
        return [a for a in found if revision is None or a.revision == revision]

    def human_decisions_for(self, decision_id: str, revision: int | None = None) -> list[HumanDecision]:
        found = self._indexed("human_decisions").get(decision_id, ())
        return [h for h in found if revision is None or h.revision == revision]

    def objections_about(self, kind: str, id_: str) -> list[Objection]:
        """The objections whose target is ``{kind, id}``, in ledger order."""
        return list(self._indexed("objections").get((kind, id_), ()))

    def usage_total(self) -> dict[str, float]:
        """Sum of every completed task's ``usage`` by key (e.g. tokens)."""
        out: dict[str, float] = {}
        for t in self.tasks.values():
            for k, v in t.usage.items():
                out[k] = out.get(k, 0) + v
        return out


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value: dicts and lists are rebuilt, strings, numbers, booleans and
    ``None`` (immutable) are shared; anything else goes through ``copy.deepcopy``. Much cheaper
    than ``copy.deepcopy`` on event data (no memo, no dispatch by reflection)."""
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return value
    if t is dict:
        return {k: _copy(v) for k, v in value.items()}
    if t is list:
        return [_copy(v) for v in value]
    return copy.deepcopy(value)


# One step per event type: ``step(state, data, seq, actor) -> bool`` (False: the event refers to
# nothing known and is skipped). *data* is the state's own (a copy, or a row handed over).


def _question_posed(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    s.questions[d["question_id"]] = Question(d["question_id"], d["text"], d.get("scope", ""),
                                             d.get("acceptance", ""), seq,
                                             on_behalf_of_person=actor.get("on_behalf_of") == "person")
    return True


def _plan_recorded(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    q = s.questions.get(d["question_id"])
    if q is None:
        return False
    q.plans.append({"plan": d["plan"], "seq": seq})
    return True


def _task_delegated(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    s.tasks[d["task_id"]] = Task(d["task_id"], d["role"], d["duty"], d.get("inputs", {}),
                                 d.get("route", {}), d.get("budget", {}), seq)
    return True


def _task_completed(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    task = s.tasks.get(d["task_id"])
    if task is None:
        return False
    task.status, task.usage = d["status"], d.get("usage", {})
    return True


def _source_proposed(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    s.sources[d["source_id"]] = Source(d["source_id"], d["kind"], d["identifier"], d.get("title", ""),
                                       d.get("authors", []), d.get("year"), d.get("query", ""), seq)
    return True


def _source_verified(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    src = s.sources.get(d["source_id"])
    if src is None:
        return False
    src.verdicts.append({"verdict": d.get("verdict"), "checks": d.get("checks"),
                         "metadata": d.get("metadata"), "resolver": d.get("resolver"), "seq": seq})
    return True


def _fulltext_linked(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    src = s.sources.get(d["source_id"])
    if src is None:
        return False
    src.fulltext = {"locator": d.get("locator"), "sha256": d.get("sha256"), "bytes": d.get("bytes"),
                    "media_type": d.get("media_type"), "seq": seq}
    return True


def _claim_extracted(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    s.claims[d["claim_id"]] = Claim(d["claim_id"], d["source_id"], d["text"], d["span"], seq)
    return True


def _experiment_extracted(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    s.experiments[d["experiment_id"]] = Experiment(d["experiment_id"], d["source_id"], d, seq)
    return True


def _claim_verified(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    claim = s.claims.get(d["claim_id"])
    if claim is None:
        return False
    claim.verdicts.append({"verdict": d["verdict"], "rationale": d.get("rationale", ""), "seq": seq})
    return True


def _revision(s: LedgerState, d: dict, seq: int) -> bool:
    dec = s.decisions.get(d["decision_id"])
    if dec is None:
        return False
    dec.revisions.append({
        "revision": d.get("revision", 1), "statement": d["statement"], "claim_ids": d["claim_ids"],
        "confidence": d.get("confidence"), "limitations": d.get("limitations", ""),
        "answers": d.get("answers", []), "seq": seq})
    return True


def _decision_proposed(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    s.decisions[d["decision_id"]] = Decision(d["decision_id"], d["question_id"])
    return _revision(s, d, seq)


def _decision_revised(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    return _revision(s, d, seq)


def _objection_raised(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    s.objections[d["objection_id"]] = Objection(d["objection_id"], d["target"], d["reason"],
                                                d.get("severity", "major"), seq)
    return True


def _objection_answered(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    o = s.objections.get(d["objection_id"])
    if o is None:
        return False
    o.answers.append({"response": d["response"], "seq": seq})
    return True


def _adjudication_recorded(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    o = s.objections.get(d["objection_id"])
    if o is None:
        return False
    o.adjudications.append(Adjudication(d["verdict"], d.get("rationale", ""), seq))
    return True


def _review_verdict_recorded(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    s.reviews.append(Review(d["decision_id"], d["revision"], d["verdict"], d.get("objection_ids", []), seq))
    return True


def _human_approval_requested(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    s.approvals.append(Approval(d["decision_id"], d["revision"], seq))
    return True


def _human_decision_recorded(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    dec = s.decisions.get(d["decision_id"])
    if dec is None:
        return False
    s.human_decisions.append(HumanDecision(d["decision_id"], dec.revision, d["verdict"], d.get("note", ""),
                                           d["by"], _copy(actor.get("channel")), seq))
    return True


def _escalated(s: LedgerState, d: dict, seq: int, actor: dict) -> bool:
    s.escalations.append(Escalation(d["subject"], d["reason"], d.get("to", "human"), seq))
    return True


_STEPS = {
    "question-posed": _question_posed,
    "plan-recorded": _plan_recorded,
    "task-delegated": _task_delegated,
    "task-completed": _task_completed,
    "source-proposed": _source_proposed,
    "source-verified": _source_verified,
    "fulltext-linked": _fulltext_linked,
    "claim-extracted": _claim_extracted,
    "experiment-extracted": _experiment_extracted,
    "claim-verified": _claim_verified,
    "decision-proposed": _decision_proposed,
    "decision-revised": _decision_revised,
    "objection-raised": _objection_raised,
    "objection-answered": _objection_answered,
    "adjudication-recorded": _adjudication_recorded,
    "review-verdict-recorded": _review_verdict_recorded,
    "human-approval-requested": _human_approval_requested,
    "human-decision-recorded": _human_decision_recorded,
    "escalated": _escalated,
}
_STEPS.update({EVENT_PREFIX + t: step for t, step in list(_STEPS.items())})  # lines carry "research/<name>"


def _apply(state: LedgerState, event: dict, copy_data: bool) -> LedgerState:
    t = event.get("type")
    if t is None:  # header line
        return state
    d = event.get("data") or {}
    if copy_data:
        d = _copy(d)
    actor = event.get("actor") or {}
    seq = event.get("seq", 0)
    state.head_seq = seq
    state.events += 1
    step = _STEPS.get(t) if type(t) is str else None
    if step is None or not step(state, d, seq, actor):
        state.skipped.append(seq)
    return state


def apply(state: LedgerState, event: dict) -> LedgerState:
    """Apply one event line to *state* in place and return it (see module docstring). The state
    keeps a copy of the event's data; *event* stays untouched."""
    return _apply(state, event, True)


def fold(events: Iterable[dict]) -> LedgerState:
    """Fold event lines (in ledger order) into a new ``LedgerState``. Pure: the input is not
    changed and the same events give an equal state."""
    state = LedgerState()
    for e in events:
        _apply(state, e, True)
    return state


def fold_owned(events: Iterable[dict], state: LedgerState | None = None) -> LedgerState:
    """``fold`` for rows nobody else holds (the ledger's freshly decoded lines): the state keeps
    parts of them instead of copies. Gives a state equal to ``fold(events)``; the caller must
    not use or change the rows afterwards. With *state*, continues that state (in place)."""
    if state is None:
        state = LedgerState()
    for e in events:
        _apply(state, e, False)
    return state
