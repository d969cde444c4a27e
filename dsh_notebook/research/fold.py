"""The research state as a pure fold over ledger events (spec: research.md "Fold and predicates").

Design:

- ``fold(events) -> LedgerState`` reads event lines (``{seq, ts, type, actor, prev, data}``;
  a header line without ``type`` is skipped) in order and never touches its input: the state
  holds deep copies, so the same events always give an equal state.
- The state keeps history, not statuses: every source and claim verdict, every decision
  revision, every objection answer and adjudication. "Latest" values are properties; what is
  allowed next is decided by the explicit predicates in ``predicates``, never by ordering statuses.
- ``apply(state, event)`` is the single step (the ledger uses it to keep its cache current); it
  assumes the event passed the writer's checks and skips one that refers to nothing it knows.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Iterable

from .events import short_type

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

    def reviews_for(self, decision_id: str, revision: int | None = None) -> list[Review]:
        return [r for r in self.reviews if r.decision_id == decision_id and (revision is None or r.revision == revision)]

    def approvals_for(self, decision_id: str, revision: int | None = None) -> list[Approval]:
        return [a for a in self.approvals if a.decision_id == decision_id and (revision is None or a.revision == revision)]

    def human_decisions_for(self, decision_id: str, revision: int | None = None) -> list[HumanDecision]:
        return [h for h in self.human_decisions
                if h.decision_id == decision_id and (revision is None or h.revision == revision)]

    def usage_total(self) -> dict[str, float]:
        """Sum of every completed task's ``usage`` by key (e.g. tokens)."""
        out: dict[str, float] = {}
        for t in self.tasks.values():
            for k, v in t.usage.items():
                out[k] = out.get(k, 0) + v
        return out


def apply(state: LedgerState, event: dict) -> LedgerState:
    """Apply one event line to *state* in place and return it (see module docstring)."""
    t = event.get("type")
    if t is None:  # header line
        return state
    t = short_type(t)
    d = copy.deepcopy(event.get("data") or {})
    seq = event.get("seq", 0)
    actor = event.get("actor") or {}
    state.head_seq = seq
    state.events += 1
    ok = True
    if t == "question-posed":
        state.questions[d["question_id"]] = Question(
            d["question_id"], d["text"], d.get("scope", ""), d.get("acceptance", ""), seq,
            on_behalf_of_person=actor.get("on_behalf_of") == "person")
    elif t == "plan-recorded":
        if ok := d["question_id"] in state.questions:
            state.questions[d["question_id"]].plans.append({"plan": d["plan"], "seq": seq})
    elif t == "task-delegated":
        state.tasks[d["task_id"]] = Task(d["task_id"], d["role"], d["duty"], d.get("inputs", {}),
                                         d.get("route", {}), d.get("budget", {}), seq)
    elif t == "task-completed":
        task = state.tasks.get(d["task_id"])
        if ok := task is not None:
            task.status, task.usage = d["status"], d.get("usage", {})
    elif t == "source-proposed":
        state.sources[d["source_id"]] = Source(d["source_id"], d["kind"], d["identifier"], d.get("title", ""),
                                               d.get("authors", []), d.get("year"), d.get("query", ""), seq)
    elif t == "source-verified":
        if ok := d["source_id"] in state.sources:
            state.sources[d["source_id"]].verdicts.append(
                {k: d.get(k) for k in ("verdict", "checks", "metadata", "resolver")} | {"seq": seq})
    elif t == "fulltext-linked":
        s = state.sources.get(d["source_id"])
        if ok := s is not None:
            s.fulltext = {k: d.get(k) for k in ("locator", "sha256", "bytes", "media_type")} | {"seq": seq}
    elif t == "claim-extracted":
        state.claims[d["claim_id"]] = Claim(d["claim_id"], d["source_id"], d["text"], d["span"], seq)
    elif t == "experiment-extracted":
        state.experiments[d["experiment_id"]] = Experiment(d["experiment_id"], d["source_id"], d, seq)
    elif t == "claim-verified":
        if ok := d["claim_id"] in state.claims:
            state.claims[d["claim_id"]].verdicts.append(
                {"verdict": d["verdict"], "rationale": d.get("rationale", ""), "seq": seq})
    elif t in ("decision-proposed", "decision-revised"):
        if t == "decision-proposed":
            state.decisions[d["decision_id"]] = Decision(d["decision_id"], d["question_id"])
        if ok := d["decision_id"] in state.decisions:
            state.decisions[d["decision_id"]].revisions.append({
                "revision": d.get("revision", 1), "statement": d["statement"], "claim_ids": d["claim_ids"],
                "confidence": d.get("confidence"), "limitations": d.get("limitations", ""),
                "answers": d.get("answers", []), "seq": seq})
    elif t == "objection-raised":
        state.objections[d["objection_id"]] = Objection(d["objection_id"], d["target"], d["reason"],
                                                        d.get("severity", "major"), seq)
    elif t == "objection-answered":
        if ok := d["objection_id"] in state.objections:
            state.objections[d["objection_id"]].answers.append({"response": d["response"], "seq": seq})
    elif t == "adjudication-recorded":
        if ok := d["objection_id"] in state.objections:
            state.objections[d["objection_id"]].adjudications.append(
                Adjudication(d["verdict"], d.get("rationale", ""), seq))
    elif t == "review-verdict-recorded":
        state.reviews.append(Review(d["decision_id"], d["revision"], d["verdict"], d.get("objection_ids", []), seq))
    elif t == "human-approval-requested":
        state.approvals.append(Approval(d["decision_id"], d["revision"], seq))
    elif t == "human-decision-recorded":
        dec = state.decisions.get(d["decision_id"])
        if ok := dec is not None:
            state.human_decisions.append(HumanDecision(d["decision_id"], dec.revision, d["verdict"], d.get("note", ""),
                                                       d["by"], actor.get("channel"), seq))
    elif t == "escalated":
        state.escalations.append(Escalation(d["subject"], d["reason"], d.get("to", "human"), seq))
    else:
        ok = False
    if not ok:
        state.skipped.append(seq)
    return state


def fold(events: Iterable[dict]) -> LedgerState:
    """Fold event lines (in ledger order) into a new ``LedgerState``. Pure: the input is not
    changed and the same events give an equal state."""
    state = LedgerState()
    for e in events:
        apply(state, e)
    return state
