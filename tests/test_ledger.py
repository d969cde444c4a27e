"""Research ledger: writer checks, authority table, fold, predicates, verify (research.md)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import time

import pytest

from dsh_notebook.research import (
    LEDGER_AUTHORITY,
    LEDGER_REFERENCE,
    LEDGER_SCHEMA,
    LEDGER_STATE,
    Actor,
    Ledger,
    can_request_human_approval,
    decision_status,
    fold,
    has_unresolved_objections,
    is_eligible_for_synthesis,
    ledger_path,
)
from dsh_notebook.research.human import confirmed_actor

SCOUT, BIB, EXT, CV = Actor("scout"), Actor("bibliographic_verifier"), Actor("extractor"), Actor("claim_verifier")
LEAD, AUDIT, ADJ, RUN = Actor("lead"), Actor("citation_auditor"), Actor("adjudicator"), Actor("runtime")
FULLTEXT = b"Aspirin reduced the risk of colorectal cancer by 24% over 20 years."
SHA = hashlib.sha256(FULLTEXT).hexdigest()


def ok(receipt: dict) -> dict:
    assert receipt["ok"], receipt
    return receipt


def refused(receipt: dict, code: str) -> dict:
    assert receipt["ok"] is False and receipt["code"] == code, receipt
    assert receipt["error"]
    return receipt


@pytest.fixture
def led(tmp_path) -> Ledger:
    return Ledger(ledger_path(tmp_path / "report.ipynb"))


def evidence(led: Ledger, sid: str = "s1", cid: str = "c1", *, verify_claim: str = "supported") -> None:
    """A verified source with linked fulltext and one verified claim."""
    if sid not in led.fold().sources:
        ok(led.append("source-proposed", {"source_id": sid, "kind": "doi", "identifier": f"10.1000/{sid}",
                                          "title": "Aspirin", "authors": ["Rothwell"], "year": 2010}, SCOUT))
        ok(led.append("source-verified", {"source_id": sid, "verdict": "verified", "resolver": "crossref"}, BIB))
        ok(led.append("fulltext-linked", {"source_id": sid, "locator": "fulltext/s1.txt", "sha256": SHA,
                                          "bytes": len(FULLTEXT), "media_type": "text/plain"}, LEAD))
    ok(led.append("claim-extracted", {"claim_id": cid, "source_id": sid, "text": "Aspirin lowers CRC risk",
                                      "span": {"locator": "p1", "quote": "reduced the risk",
                                               "fulltext_sha256": SHA}}, EXT))
    ok(led.append("claim-verified", {"claim_id": cid, "verdict": verify_claim, "rationale": "quote says so"}, CV))


def proposed(led: Ledger, claims=("c1",)) -> None:
    ok(led.append("question-posed", {"question_id": "q1", "text": "Does aspirin prevent CRC?"}, LEAD))
    for c in claims:
        evidence(led, cid=c)
    ok(led.append("decision-proposed", {"decision_id": "d1", "question_id": "q1", "statement": "Probably yes",
                                        "claim_ids": list(claims), "confidence": 0.7,
                                        "limitations": "one cohort"}, LEAD))


def reviewed(led: Ledger) -> None:
    proposed(led)
    ok(led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 1, "verdict": "pass"}, AUDIT))


# ----------------------------------------------------------------------------- happy path


def test_happy_path_with_predicates(led):
    assert led.path.name == "main.jsonl" and led.path.parent.name == "ledger"
    assert led.path.parent.parent.name == "report.dsh"
    header = json.loads(led.path.read_bytes().splitlines()[0])
    assert header["seq"] == 0 and header["version"] == 1 and header["name"] == "main" and header["created"]

    r = ok(led.append("question-posed", {"question_id": "q1", "text": "Does aspirin prevent CRC?",
                                         "scope": "adults", "acceptance": "RCT or cohort"}, LEAD))
    assert r["seq"] == 1 and len(r["hash"]) == 64
    ok(led.append("plan-recorded", {"question_id": "q1", "plan": ["search", "verify", "extract"]}, LEAD))
    ok(led.append("task-delegated", {"task_id": "t1", "role": "scout", "duty": "find cohorts",
                                     "route": {"tier": "cheap", "provider": "deepseek", "model": "chat",
                                               "effort": "low"}, "budget": {"tokens": 10000}}, LEAD))
    ok(led.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1016/x",
                                      "title": "Aspirin", "authors": ["Rothwell"], "year": 2010}, SCOUT))
    ok(led.append("task-completed", {"task_id": "t1", "status": "ok", "usage": {"tokens": 1234}}, RUN))
    ok(led.append("source-verified", {"source_id": "s1", "verdict": "verified", "checks": {"title": 0.98}}, BIB))
    ok(led.append("fulltext-linked", {"source_id": "s1", "locator": "fulltext/s1.txt", "sha256": SHA,
                                      "bytes": len(FULLTEXT), "media_type": "text/plain"}, LEAD))
    ok(led.append("claim-extracted", {"claim_id": "c1", "source_id": "s1", "text": "Aspirin lowers CRC risk",
                                      "span": {"locator": "p1", "quote": "reduced the risk",
                                               "fulltext_sha256": SHA}}, EXT))
    ok(led.append("experiment-extracted", {"experiment_id": "e1", "source_id": "s1", "design": "RCT follow-up",
                                           "n": 14033, "effect": 0.76, "interval": [0.63, 0.94],
                                           "span": {"locator": "p1", "quote": "24%", "fulltext_sha256": SHA}}, EXT))
    state = led.fold()
    eligible, why = is_eligible_for_synthesis(state, "c1")
    assert not eligible and "no verdict" in why
    ok(led.append("claim-verified", {"claim_id": "c1", "verdict": "supported", "rationale": "quote"}, CV))
    assert is_eligible_for_synthesis(led.fold(), "c1")[0]

    ok(led.append("decision-proposed", {"decision_id": "d1", "question_id": "q1", "statement": "Probably yes",
                                        "claim_ids": ["c1"], "confidence": "medium"}, LEAD))
    state = led.fold()
    allowed, why = can_request_human_approval(state, "d1")
    assert not allowed and "no review verdict" in why
    refused(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD), LEDGER_STATE)
    ok(led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 1, "verdict": "pass"}, AUDIT))
    assert can_request_human_approval(led.fold(), "d1")[0]
    assert has_unresolved_objections(led.fold(), "d1")[0] is False
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD))
    state = led.fold()
    assert decision_status(state, "d1") == "awaiting_human"
    assert "already awaits" in can_request_human_approval(state, "d1")[1]

    person = confirmed_actor("Ana Lima", "explorer")
    r = ok(led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "approved", "note": "ok"}, person))
    state = led.fold()
    assert decision_status(state, "d1") == "approved"
    (hd,) = state.human_decisions
    assert (hd.by, hd.channel, hd.revision, hd.verdict) == ("Ana Lima", "explorer", 1, "approved")
    assert state.questions["q1"].on_behalf_of_person and state.questions["q1"].plans
    assert state.tasks["t1"].usage == {"tokens": 1234} and state.usage_total() == {"tokens": 1234}
    assert state.sources["s1"].verdict == "verified" and state.sources["s1"].fulltext["sha256"] == SHA
    assert state.experiments["e1"].data["n"] == 14033
    last = json.loads(led.path.read_bytes().splitlines()[-1])
    assert last["type"] == "research/human-decision-recorded" and last["seq"] == r["seq"] == state.head_seq
    assert last["actor"] == {"role": "human", "authority": "human_adjudication", "by": "Ana Lima",
                             "channel": "explorer"}
    assert last["data"]["by"] == "Ana Lima"
    v = led.verify()
    assert v["ok"], v
    assert v["head"] == r["hash"] and v["events"] == state.events
    # a second decision for this revision is refused; the decision is closed
    refused(led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "rejected"}, person), LEDGER_STATE)


def test_line_format(led):
    ok(led.append("research/question-posed", {"question_id": "q1", "text": "?"}, Actor("lead", "m", "lead-v1")))
    lines = led.path.read_bytes().splitlines(keepends=True)
    row = json.loads(lines[1])
    assert set(row) == {"seq", "ts", "type", "actor", "prev", "data"}
    assert row["prev"] == hashlib.sha256(lines[0]).hexdigest()
    assert row["actor"] == {"role": "lead", "authority": "synthesis", "model": "m", "prompt_version": "lead-v1",
                            "on_behalf_of": "person"}
    assert row["ts"].endswith("Z")


def test_existing_file_is_reopened(led):
    proposed(led)
    again = Ledger(led.path)
    assert len(led.path.read_bytes().splitlines()) == 1 + len(again.events())  # no second header
    r = ok(again.append("review-verdict-recorded", {"decision_id": "d1", "revision": 1, "verdict": "pass"}, AUDIT))
    assert r["seq"] == len(again.events())
    # the first ledger object sees the other's append (its cache is keyed by the file's head)
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD))
    assert led.verify()["ok"]


# ----------------------------------------------------------------------------- refusals


def unchanged(led: Ledger, receipt: dict, code: str, before: bytes) -> dict:
    refused(receipt, code)
    assert led.path.read_bytes() == before
    return receipt


def test_schema_refusals(led):
    before = led.path.read_bytes()
    unchanged(led, led.append("no-such-type", {}, LEAD), LEDGER_SCHEMA, before)
    unchanged(led, led.append("question-posed", {"question_id": "q1"}, LEAD), LEDGER_SCHEMA, before)
    unchanged(led, led.append("question-posed", "not a dict", LEAD), LEDGER_SCHEMA, before)
    unchanged(led, led.append("question-posed", {"question_id": "q1", "text": "x", "color": 1}, LEAD),
              LEDGER_SCHEMA, before)
    unchanged(led, led.append("question-posed", {"question_id": "bad id!", "text": "x"}, LEAD), LEDGER_SCHEMA, before)
    unchanged(led, led.append("task-completed", {"task_id": "t", "status": "done"}, RUN), LEDGER_SCHEMA, before)
    unchanged(led, led.append("task-completed", {"task_id": "t", "status": "ok", "usage": {"tokens": float("nan")}},
                              RUN), LEDGER_SCHEMA, before)
    unchanged(led, led.append("review-verdict-recorded", {"decision_id": "d", "revision": 1,
                                                          "verdict": "objections"}, AUDIT), LEDGER_SCHEMA, before)
    unchanged(led, led.append(None, None, None), LEDGER_SCHEMA, before)


def test_reference_refusals(led):
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    before = led.path.read_bytes()
    span = {"locator": "p1", "quote": "q", "fulltext_sha256": SHA}
    cases = [
        ("plan-recorded", {"question_id": "nope", "plan": "x"}, LEAD),
        ("task-completed", {"task_id": "nope", "status": "ok"}, RUN),
        ("source-verified", {"source_id": "nope", "verdict": "verified"}, BIB),
        ("fulltext-linked", {"source_id": "nope", "locator": "f", "sha256": SHA, "bytes": 1}, LEAD),
        ("claim-extracted", {"claim_id": "c1", "source_id": "nope", "text": "t", "span": span}, EXT),
        ("claim-verified", {"claim_id": "nope", "verdict": "supported"}, CV),
        ("decision-proposed", {"decision_id": "d1", "question_id": "q1", "statement": "s", "claim_ids": ["nope"],
                               "confidence": 0.5}, LEAD),
        ("objection-raised", {"objection_id": "o1", "target": {"kind": "claim", "id": "nope"}, "reason": "r"}, AUDIT),
        ("objection-answered", {"objection_id": "nope", "response": "r"}, LEAD),
        ("adjudication-recorded", {"objection_id": "nope", "verdict": "upheld"}, ADJ),
        ("escalated", {"subject": {"kind": "task", "id": "nope"}, "reason": "budget"}, RUN),
        ("human-approval-requested", {"decision_id": "nope", "revision": 1}, LEAD),
        ("review-verdict-recorded", {"decision_id": "nope", "revision": 1, "verdict": "pass"}, AUDIT),
        ("human-decision-recorded", {"decision_id": "nope", "verdict": "approved"}, confirmed_actor("A", "server")),
    ]
    for t, data, actor in cases:
        r = led.append(t, data, actor)
        unchanged(led, r, LEDGER_REFERENCE, before)
        assert "nope" in r["error"], (t, r)


def test_state_refusals(led):
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    before = led.path.read_bytes()
    unchanged(led, led.append("question-posed", {"question_id": "q1", "text": "again"}, LEAD), LEDGER_STATE, before)
    ok(led.append("source-proposed", {"source_id": "s1", "kind": "arxiv", "identifier": "2101.00001"}, SCOUT))
    before = led.path.read_bytes()
    claim = {"claim_id": "c1", "source_id": "s1", "text": "t", "span": {"locator": "p", "quote": "q"}}
    r = unchanged(led, led.append("claim-extracted", claim, EXT), LEDGER_STATE, before)
    # linking the fulltext allows extraction from an unverified source, with a matching hash only
    ok(led.append("fulltext-linked", {"source_id": "s1", "locator": "f", "sha256": SHA, "bytes": 3}, LEAD))
    before = led.path.read_bytes()
    wrong = {**claim, "span": {"locator": "p", "quote": "q", "fulltext_sha256": "0" * 64}}
    unchanged(led, led.append("claim-extracted", wrong, EXT), LEDGER_STATE, before)
    ok(led.append("claim-extracted", {**claim, "span": {"locator": "p", "quote": "q", "fulltext_sha256": SHA}}, EXT))
    ok(led.append("task-delegated", {"task_id": "t1", "role": "extractor", "duty": "d", "route": {"tier": "cheap"}},
                  LEAD))
    ok(led.append("task-completed", {"task_id": "t1", "status": "failed"}, RUN))
    before = led.path.read_bytes()
    unchanged(led, led.append("task-completed", {"task_id": "t1", "status": "ok"}, RUN), LEDGER_STATE, before)
    ok(led.append("decision-proposed", {"decision_id": "d1", "question_id": "q1", "statement": "s",
                                        "claim_ids": ["c1"], "confidence": 0.2}, LEAD))
    before = led.path.read_bytes()
    rev = {"decision_id": "d1", "revision": 3, "statement": "s", "claim_ids": ["c1"], "confidence": 0.2}
    unchanged(led, led.append("decision-revised", rev, LEAD), LEDGER_STATE, before)
    unchanged(led, led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 2, "verdict": "pass"},
                              AUDIT), LEDGER_STATE, before)
    person = confirmed_actor("Ana", "terminal")
    r = unchanged(led, led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "approved"}, person),
                  LEDGER_STATE, before)
    assert "human-approval-requested" in r["error"]
    # the source is unverified, so the claim is not eligible and approval cannot be requested
    ok(led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 1, "verdict": "pass"}, AUDIT))
    before = led.path.read_bytes()
    r = unchanged(led, led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD),
                  LEDGER_STATE, before)
    assert "s1" in r["error"] and "verified" in r["error"]


def test_human_decision_needs_request_for_same_revision(led):
    reviewed(led)
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD))
    ok(led.append("decision-revised", {"decision_id": "d1", "revision": 2, "statement": "s2", "claim_ids": ["c1"],
                                       "confidence": 0.8}, LEAD))
    assert decision_status(led.fold(), "d1") == "provisional"
    person = confirmed_actor("Ana", "server")
    refused(led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "approved"}, person), LEDGER_STATE)
    ok(led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 2, "verdict": "pass"}, AUDIT))
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 2}, LEAD))
    ok(led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "needs_revision"}, person))
    assert decision_status(led.fold(), "d1") == "needs_revision"
    refused(led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "approved"}, person), LEDGER_STATE)
    ok(led.append("decision-revised", {"decision_id": "d1", "revision": 3, "statement": "s3", "claim_ids": ["c1"],
                                       "confidence": 0.8}, LEAD))
    ok(led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 3, "verdict": "pass"}, AUDIT))
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 3}, LEAD))
    ok(led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "rejected"}, person))
    assert decision_status(led.fold(), "d1") == "rejected"
    refused(led.append("decision-revised", {"decision_id": "d1", "revision": 4, "statement": "s", "claim_ids": ["c1"],
                                            "confidence": 0.8}, LEAD), LEDGER_STATE)
    assert led.verify()["ok"]


# ----------------------------------------------------------------------------- authority


def test_actor_human_is_refused():
    with pytest.raises(ValueError, match="confirmed_actor"):
        Actor("human")
    with pytest.raises(ValueError, match="unknown role"):
        Actor("oracle")
    with pytest.raises(ValueError):
        Actor("lead", by="Ana")
    with pytest.raises(ValueError, match="channel"):
        confirmed_actor("Ana", "email")
    with pytest.raises(ValueError):
        confirmed_actor("  ", "explorer")
    a = Actor("scout")
    assert a.authority == "discovery" and a == Actor("scout")
    with pytest.raises(AttributeError):
        a.role = "human"  # type: ignore[misc]


def test_authority_table_violations(led):
    reviewed(led)
    ok(led.append("objection-raised", {"objection_id": "o1", "target": {"kind": "decision", "id": "d1"},
                                       "reason": "one cohort only"}, AUDIT))
    before = led.path.read_bytes()
    span = {"locator": "p", "quote": "q", "fulltext_sha256": SHA}
    person = confirmed_actor("Ana", "explorer")
    cases = [
        # scout: any verification verdict or a verified flag
        ("source-verified", {"source_id": "s1", "verdict": "verified"}, SCOUT),
        ("source-proposed", {"source_id": "s9", "kind": "doi", "identifier": "10.1/x", "verified": True}, SCOUT),
        ("claim-verified", {"claim_id": "c1", "verdict": "supported"}, SCOUT),
        # bibliographic verifier: conclusions, claims
        ("claim-extracted", {"claim_id": "c9", "source_id": "s1", "text": "t", "span": span}, BIB),
        ("decision-proposed", {"decision_id": "d9", "question_id": "q1", "statement": "s", "claim_ids": ["c1"],
                               "confidence": 0.1}, BIB),
        ("source-verified", {"source_id": "s1", "verdict": "verified", "conclusion": "aspirin works"}, BIB),
        # extractor: verdicts
        ("claim-verified", {"claim_id": "c1", "verdict": "supported"}, EXT),
        ("claim-extracted", {"claim_id": "c9", "source_id": "s1", "text": "t", "span": span,
                             "verdict": "supported"}, EXT),
        ("source-verified", {"source_id": "s1", "verdict": "verified"}, EXT),
        # claim verifier: changing a claim's text or span
        ("claim-verified", {"claim_id": "c1", "verdict": "supported", "text": "better text"}, CV),
        ("claim-verified", {"claim_id": "c1", "verdict": "supported", "span": span}, CV),
        ("claim-extracted", {"claim_id": "c9", "source_id": "s1", "text": "t", "span": span}, CV),
        # lead: evidence spans, verdicts, approving or reviewing its own decision
        ("claim-extracted", {"claim_id": "c9", "source_id": "s1", "text": "t", "span": span}, LEAD),
        ("claim-verified", {"claim_id": "c1", "verdict": "supported"}, LEAD),
        ("source-verified", {"source_id": "s1", "verdict": "verified"}, LEAD),
        ("review-verdict-recorded", {"decision_id": "d1", "revision": 1, "verdict": "pass"}, LEAD),
        ("adjudication-recorded", {"objection_id": "o1", "verdict": "dismissed"}, LEAD),
        ("human-decision-recorded", {"decision_id": "d1", "verdict": "approved", "by": "lead"}, LEAD),
        # citation auditor: marking a decision rejected
        ("human-decision-recorded", {"decision_id": "d1", "verdict": "rejected", "by": "auditor"}, AUDIT),
        ("objection-raised", {"objection_id": "o9", "target": {"kind": "decision", "id": "d1"}, "reason": "r",
                              "verdict": "rejected"}, AUDIT),
        ("adjudication-recorded", {"objection_id": "o1", "verdict": "upheld"}, AUDIT),
        # adjudicator: a human decision
        ("human-decision-recorded", {"decision_id": "d1", "verdict": "approved", "by": "adjudicator"}, ADJ),
        ("adjudication-recorded", {"objection_id": "o1", "verdict": "upheld", "decision_id": "d1"}, ADJ),
        # runtime: everything else
        ("source-proposed", {"source_id": "s9", "kind": "doi", "identifier": "10.1/x"}, RUN),
        ("decision-proposed", {"decision_id": "d9", "question_id": "q1", "statement": "s", "claim_ids": ["c1"],
                               "confidence": 0.1}, RUN),
        ("human-decision-recorded", {"decision_id": "d1", "verdict": "approved", "by": "runtime"}, RUN),
        # the person: only human decisions
        ("decision-proposed", {"decision_id": "d9", "question_id": "q1", "statement": "s", "claim_ids": ["c1"],
                               "confidence": 0.1}, person),
        ("human-decision-recorded", {"decision_id": "d1", "verdict": "approved", "by": "Someone Else"}, person),
    ]
    for t, data, actor in cases:
        r = led.append(t, data, actor)
        unchanged(led, r, LEDGER_AUTHORITY, before)
    # not an Actor at all
    unchanged(led, led.append("question-posed", {"question_id": "q9", "text": "?"}, {"role": "lead"}),
              LEDGER_AUTHORITY, before)


def test_forged_human_actor_is_refused(led):
    import copy

    reviewed(led)
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD))
    before = led.path.read_bytes()
    data = {"decision_id": "d1", "verdict": "approved", "by": "Ana"}
    # a copy of a confirmed actor is not the confirmed actor
    forged = copy.copy(confirmed_actor("Ana", "explorer"))
    unchanged(led, led.append("human-decision-recorded", data, forged), LEDGER_AUTHORITY, before)
    # a model actor patched into a human
    patched = Actor("lead")
    object.__setattr__(patched, "role", "human")
    object.__setattr__(patched, "authority", "human_adjudication")
    object.__setattr__(patched, "by", "Ana")
    unchanged(led, led.append("human-decision-recorded", data, patched), LEDGER_AUTHORITY, before)
    # a lead whose authority field was patched
    sneaky = Actor("lead")
    object.__setattr__(sneaky, "authority", "human_adjudication")
    unchanged(led, led.append("human-decision-recorded", data, sneaky), LEDGER_AUTHORITY, before)


# ----------------------------------------------------------------------------- predicates


def test_upheld_objection_blocks_approval_until_a_revision_answers_it(led):
    reviewed(led)
    assert can_request_human_approval(led.fold(), "d1")[0]
    ok(led.append("objection-raised", {"objection_id": "o1", "target": {"kind": "claim", "id": "c1"},
                                       "reason": "effect size overstated", "severity": "major"}, AUDIT))
    state = led.fold()
    blocked, why = has_unresolved_objections(state, "d1")
    assert blocked and "o1" in why and "not adjudicated" in why
    allowed, why = can_request_human_approval(state, "d1")
    assert not allowed and "o1" in why
    ok(led.append("objection-answered", {"objection_id": "o1", "response": "we'll soften it"}, LEAD))
    assert has_unresolved_objections(led.fold(), "d1")[0]  # an answer alone does not resolve it
    ok(led.append("adjudication-recorded", {"objection_id": "o1", "verdict": "upheld", "rationale": "yes"}, ADJ))
    blocked, why = has_unresolved_objections(led.fold(), "d1")
    assert blocked and "upheld" in why
    refused(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD), LEDGER_STATE)
    # a revision that does not answer o1 does not help
    ok(led.append("decision-revised", {"decision_id": "d1", "revision": 2, "statement": "maybe", "claim_ids": ["c1"],
                                       "confidence": 0.5}, LEAD))
    assert has_unresolved_objections(led.fold(), "d1")[0]
    ok(led.append("decision-revised", {"decision_id": "d1", "revision": 3, "statement": "maybe, modestly",
                                       "claim_ids": ["c1"], "confidence": 0.4, "answers": ["o1"]}, LEAD))
    state = led.fold()
    assert has_unresolved_objections(state, "d1")[0] is False
    allowed, why = can_request_human_approval(state, "d1")
    assert not allowed and "revision 3 has no review verdict" in why
    ok(led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 3, "verdict": "pass"}, AUDIT))
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 3}, LEAD))


def test_dismissed_objection_resolves(led):
    reviewed(led)
    ok(led.append("objection-raised", {"objection_id": "o1", "target": {"kind": "source", "id": "s1"},
                                       "reason": "predatory journal?"}, AUDIT))
    assert not can_request_human_approval(led.fold(), "d1")[0]
    ok(led.append("adjudication-recorded", {"objection_id": "o1", "verdict": "dismissed"}, ADJ))
    assert can_request_human_approval(led.fold(), "d1")[0]


def test_retracted_source_makes_its_claims_ineligible(led):
    reviewed(led)
    assert is_eligible_for_synthesis(led.fold(), "c1")[0]
    ok(led.append("source-verified", {"source_id": "s1", "verdict": "retracted",
                                      "checks": {"updated-by": "retraction"}}, BIB))
    state = led.fold()
    eligible, why = is_eligible_for_synthesis(state, "c1")
    assert not eligible and "retracted" in why
    allowed, why = can_request_human_approval(state, "d1")
    assert not allowed and "retracted" in why
    refused(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD), LEDGER_STATE)


@pytest.mark.parametrize("verdict", ["corrected", "expression_of_concern", "mismatch", "inconclusive"])
def test_other_source_verdicts_are_ineligible(led, verdict):
    reviewed(led)
    ok(led.append("source-verified", {"source_id": "s1", "verdict": verdict}, BIB))
    assert not is_eligible_for_synthesis(led.fold(), "c1")[0]


@pytest.mark.parametrize("verdict,eligible", [("supported", True), ("partially_supported", True),
                                              ("unsupported", False), ("contradicted", False),
                                              ("uncertain", False)])
def test_claim_verdicts(led, verdict, eligible):
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    evidence(led, verify_claim=verdict)
    assert is_eligible_for_synthesis(led.fold(), "c1")[0] is eligible


def test_fulltext_relinked_with_other_hash_breaks_eligibility(led):
    reviewed(led)
    ok(led.append("fulltext-linked", {"source_id": "s1", "locator": "v2", "sha256": "a" * 64, "bytes": 9}, LEAD))
    eligible, why = is_eligible_for_synthesis(led.fold(), "c1")
    assert not eligible and "does not match" in why


def test_predicates_on_unknown_ids(led):
    state = led.fold()
    assert is_eligible_for_synthesis(state, "x") == (False, "claim 'x' is not in the ledger")
    assert has_unresolved_objections(state, "x")[0] is False
    assert can_request_human_approval(state, "x")[0] is False


def test_fold_is_pure(led):
    reviewed(led)
    ok(led.append("objection-raised", {"objection_id": "o1", "target": {"kind": "decision", "id": "d1"},
                                       "reason": "r"}, AUDIT))
    events = led.events()
    snapshot = json.dumps(events, sort_keys=True)
    a, b = fold(events), fold(events)
    assert a == b and a is not b
    assert json.dumps(events, sort_keys=True) == snapshot
    a.claims["c1"].verdicts.clear()
    assert fold(events) == b and events[0]["data"] == json.loads(snapshot)[0]["data"]
    assert led.fold() == b
    assert fold([]) == fold([json.loads(led.path.read_bytes().splitlines()[0])])  # header only


# ----------------------------------------------------------------------------- verify


def _lines(led: Ledger) -> list[bytes]:
    return led.path.read_bytes().splitlines(keepends=True)


def test_verify_detects_an_edited_line(led):
    reviewed(led)
    lines = _lines(led)
    row = json.loads(lines[3])
    row["data"]["title"] = "Something else"
    lines[3] = json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    led.path.write_bytes(b"".join(lines))
    v = led.verify()
    assert not v["ok"] and any(p["line"] == 5 and "prev" in p["problem"] for p in v["problems"]), v
    # appends are refused on a damaged ledger (fresh object: nothing cached)
    r = refused(Ledger(led.path).append("question-posed", {"question_id": "q2", "text": "?"}, LEAD), LEDGER_STATE)
    assert "line 5" in r["error"]


def test_verify_detects_a_deleted_line(led):
    reviewed(led)
    lines = _lines(led)
    del lines[4]
    led.path.write_bytes(b"".join(lines))
    v = led.verify()
    assert not v["ok"]
    assert any(p["line"] == 5 and "seq" in p["problem"] for p in v["problems"])
    assert any(p["line"] == 5 and "prev" in p["problem"] for p in v["problems"])


def test_verify_detects_a_reordered_line(led):
    reviewed(led)
    lines = _lines(led)
    lines[4], lines[5] = lines[5], lines[4]
    led.path.write_bytes(b"".join(lines))
    v = led.verify()
    assert not v["ok"] and {p["line"] for p in v["problems"]} >= {5, 6}


def test_verify_detects_a_torn_last_line_and_append_continues(led):
    reviewed(led)
    good = led.path.read_bytes()
    led.path.write_bytes(good + b'{"seq":99,"ts":"2026')
    v = led.verify()
    assert not v["ok"] and v["problems"][-1]["problem"].startswith("torn last line"), v
    assert len(led.events()) == len(good.splitlines()) - 1  # the torn line is not written
    r = ok(Ledger(led.path).append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD))
    rows = [json.loads(x) for x in good.splitlines()]
    assert r["seq"] == rows[-1]["seq"] + 1
    # the fragment was set aside (not chained over, not lost): the ledger verifies again
    aside = led.path.with_name(r["set_aside"])
    assert aside.name.startswith("main.jsonl.torn-") and aside.read_bytes() == b'{"seq":99,"ts":"2026'
    assert led.path.read_bytes().startswith(good) and led.path.read_bytes().count(b"\n") == len(rows) + 1
    v = led.verify()
    assert v["ok"] and v["problems"] == [], v


def test_verify_expected_head_and_missing_header(led):
    reviewed(led)
    head = led.verify()["head"]
    assert led.verify(expected_head=head)["ok"]
    assert not led.verify(expected_head="0" * 64)["ok"]
    led.path.write_bytes(b"".join(_lines(led)[1:]))
    v = led.verify()
    assert not v["ok"] and v["problems"][0]["line"] == 1


def test_verify_replays_authority(led):
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    ok(led.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1/x"}, SCOUT))
    lines = _lines(led)
    # a hand-written line claiming the scout verified its own source, with a valid chain
    forged = {"seq": 3, "ts": "2026-01-01T00:00:00Z", "type": "research/source-verified",
              "actor": {"role": "scout", "authority": "discovery"},
              "prev": hashlib.sha256(lines[-1]).hexdigest(), "data": {"source_id": "s1", "verdict": "verified"}}
    with open(led.path, "ab") as f:
        f.write(json.dumps(forged).encode() + b"\n")
    v = led.verify()
    assert not v["ok"] and v["problems"][0]["line"] == 4 and LEDGER_AUTHORITY in v["problems"][0]["problem"]


def test_a_writer_catches_up_with_lines_another_writer_appended(led):
    other = Ledger(led.path)
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    ok(other.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1/x"}, SCOUT))
    ok(other.append("plan-recorded", {"question_id": "q1", "plan": "search"}, LEAD))
    # led must see the other writer's source (a reference check) and its seq
    r = ok(led.append("source-verified", {"source_id": "s1", "verdict": "verified"}, BIB))
    assert r["seq"] == 4
    refused(other.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1/y"}, SCOUT),
            LEDGER_STATE)
    assert led.verify()["ok"] and led.fold() == other.fold() == fold(led.events())
    assert led.fold().sources["s1"].verdict == "verified"


def test_a_writer_refuses_to_append_after_a_broken_chain_it_did_not_write(led):
    other = Ledger(led.path)
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    ok(other.append("question-posed", {"question_id": "q2", "text": "?"}, LEAD))
    ok(other.append("question-posed", {"question_id": "q3", "text": "?"}, LEAD))
    lines = _lines(led)
    lines[2] = lines[2].replace(b'"q2"', b'"qX"')  # edits the other writer's line: q3's prev breaks
    led.path.write_bytes(b"".join(lines))
    r = refused(led.append("question-posed", {"question_id": "q4", "text": "?"}, LEAD), LEDGER_STATE)
    assert "line 4" in r["error"]


def test_a_writer_catches_up_across_a_torn_line_set_aside(led):
    other = Ledger(led.path)
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    with open(led.path, "ab") as f:
        f.write(b'{"seq":2,"ts":"20')  # a crash mid-write
    ok(other.append("question-posed", {"question_id": "q2", "text": "?"}, LEAD))  # sets the torn line aside
    ok(led.append("question-posed", {"question_id": "q3", "text": "?"}, LEAD))
    ok(other.append("question-posed", {"question_id": "q4", "text": "?"}, LEAD))
    r = ok(led.append("question-posed", {"question_id": "q5", "text": "?"}, LEAD))
    assert r["seq"] == 5 and list(led.fold().questions) == ["q1", "q2", "q3", "q4", "q5"]
    assert led.verify()["ok"]  # the torn fragment was set aside, never chained over
    assert [f.read_bytes() for f in led.path.parent.glob("main.jsonl.torn-*")] == [b'{"seq":2,"ts":"20']


# ----------------------------------------------------------------------------- concurrency

_WRITER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from dsh_notebook.research import Actor, Ledger
    path, who, n, folder = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    led = Ledger(path)
    lead = Actor("lead")
    (folder / f"ready-{who}").touch()
    deadline = time.monotonic() + 120
    while not (folder / "go").exists():  # the barrier: every writer starts appending at once
        assert time.monotonic() < deadline, "no go"
        time.sleep(0.001)
    for i in range(n):
        r = led.append("question-posed", {"question_id": f"{who}-{i}", "text": f"question {i} of {who}"}, lead)
        assert r["ok"], r
""")
WRITERS, EACH = 8, 1000


def test_eight_processes_append_1000_each(tmp_path):
    """Issue: eight processes appending 1,000 events each to one ledger: chain intact, no
    interleaving. Real processes, released together by a barrier file so their appends overlap."""
    path = ledger_path(tmp_path / "report.ipynb")
    Ledger(path)
    who = [f"w{k}" for k in range(WRITERS)]
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), w, str(EACH), str(tmp_path)]) for w in who]
    try:
        deadline = time.monotonic() + 120
        while not all((tmp_path / f"ready-{w}").exists() for w in who):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "a writer did not start"
            time.sleep(0.01)
        (tmp_path / "go").touch()
        assert [p.wait(timeout=600) for p in procs] == [0] * WRITERS
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    v = Ledger(path).verify()
    assert v["ok"], v["problems"][:5]
    assert v["events"] == WRITERS * EACH

    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.split(b"\n")[:-1]
    assert len(lines) == 1 + WRITERS * EACH  # the header and one line per append
    rows = [json.loads(line) for line in lines]  # every line is one whole JSON object, nothing else
    assert all(isinstance(r, dict) for r in rows)
    assert [r["seq"] for r in rows] == list(range(WRITERS * EACH + 1))
    for before, line in zip(lines, rows[1:]):
        assert line["prev"] == hashlib.sha256(before + b"\n").hexdigest()
    ids = [r["data"]["question_id"] for r in rows[1:]]
    for w in who:  # each writer's events in its own order
        assert [i for i in ids if i.split("-")[0] == w] == [f"{w}-{i}" for i in range(EACH)]
    runs = 1 + sum(a.split("-")[0] != b.split("-")[0] for a, b in zip(ids, ids[1:]))
    assert runs > WRITERS, "the writers never overlapped"
    assert len(Ledger(path).fold().questions) == WRITERS * EACH


def test_no_ui_or_http_imports():
    code = ("import sys, dsh_notebook.research, dsh_notebook.research.human; "
            "bad = [m for m in ('IPython', 'ipywidgets', 'httpx') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fold_skips_events_that_refer_to_nothing():
    events = [{"seq": 1, "type": "research/claim-verified", "actor": {}, "data": {"claim_id": "c9",
                                                                                  "verdict": "supported"}},
              {"seq": 2, "type": "research/unknown-thing", "actor": {}, "data": {}}]
    state = fold(events)
    assert state.skipped == [1, 2] and not state.claims and state.head_seq == 2


# ----------------------------------------------------------------------------- hardening (tester's findings)


def awaiting(led: Ledger) -> None:
    reviewed(led)
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD))


def revised_and_requested_again(led: Ledger) -> None:
    ok(led.append("decision-revised", {"decision_id": "d1", "revision": 2, "statement": "No, the opposite",
                                       "claim_ids": ["c1"], "confidence": "low"}, LEAD))
    ok(led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 2, "verdict": "pass"}, AUDIT))
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 2}, LEAD))


def test_a_human_decision_names_the_revision_the_person_saw(led):
    """Finding 1: the person's click on revision 1 must not approve revision 2, which the lead
    put up meanwhile; the writer checks the revision the person saw, under its lock."""
    awaiting(led)
    revised_and_requested_again(led)
    ana = confirmed_actor("ana", "explorer")
    size = led.path.stat().st_size
    r = refused(led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "approved", "revision": 1},
                           ana), LEDGER_STATE)
    assert "decision d1 is at revision 2; you decided on revision 1: reload" in r["error"]
    assert led.path.stat().st_size == size
    refused(led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "approved", "revision": "2"},
                       ana), LEDGER_SCHEMA)
    ok(led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "approved", "revision": 2}, ana))
    [h] = led.fold().human_decisions_for("d1")
    assert h.revision == 2 and led.events()[-1]["data"]["revision"] == 2
    assert led.verify()["ok"]


def test_a_human_decision_without_a_revision_stays_valid(led):
    """Older ledgers' human decisions carry no revision: still valid, and written without one."""
    awaiting(led)
    ok(led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "needs_revision"},
                  confirmed_actor("ana", "terminal")))
    assert "revision" not in led.events()[-1]["data"]
    assert led.verify()["ok"]


def test_record_decision_refuses_a_revision_that_landed_after_its_own_check(led, monkeypatch):
    """The race: ``record_decision`` reads the state (revision 1 awaits the person), then the lead
    revises and requests again before the append; the writer, under the lock, refuses."""
    from dsh_notebook.artifact import ledgers as LG

    awaiting(led)
    stale = LG.read_state(led.path)
    revised_and_requested_again(led)
    monkeypatch.setattr(LG, "read_state", lambda path: stale)
    r = LG.record_decision(led.path, "d1", "approved", "ok", by="ana", channel="explorer", revision=1)
    refused(r, LEDGER_STATE)
    assert "you decided on revision 1: reload" in r["error"]
    assert not led.fold().human_decisions_for("d1")


DAMAGED_TAILS = {
    "garbage": b"garbage\n",
    "bad utf-8": b"\xff\xfe{}\n",
    "blank": b"\n",
    "whitespace": b"   \n",
    "array": b"[1,2]\n",
    "NaN": b'{"seq":10,"x":NaN}\n',
    "no type": b'{"seq":3}\n',
}


@pytest.mark.parametrize("tail", DAMAGED_TAILS, ids=list(DAMAGED_TAILS))
def test_a_damaged_last_line_is_reported_and_refused_never_raised(led, tail):
    """Findings 3 and 6: the constructor, ``append``, ``verify``, ``fold`` and ``events`` never
    raise for a damaged file; ``append`` refuses naming the line and writes nothing."""
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    ok(led.append("question-posed", {"question_id": "q2", "text": "?"}, LEAD))
    with open(led.path, "ab") as f:
        f.write(DAMAGED_TAILS[tail])
    before = led.path.read_bytes()
    fresh = Ledger(led.path)
    for writer in (fresh, led):  # a new object and the cached one
        r = refused(writer.append("question-posed", {"question_id": "q3", "text": "?"}, LEAD), LEDGER_STATE)
        assert "damaged at line 4" in r["error"] and "dsh-notebook ledger verify" in r["error"]
    assert led.path.read_bytes() == before
    v = fresh.verify()
    assert not v["ok"] and v["problems"][0]["line"] == 4, v
    assert len(fresh.events()) == 2 and fresh.fold().events == 2


def test_a_file_of_one_newline_is_not_a_ledger_but_opens(tmp_path):
    path = tmp_path / "x.dsh" / "ledger" / "main.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n")
    led = Ledger(path)
    refused(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD), LEDGER_STATE)
    v = led.verify()
    assert not v["ok"] and {p["line"] for p in v["problems"]} == {1}
    assert path.read_bytes() == b"\n"


def test_paths_that_cannot_be_a_ledger_raise_one_clear_line(tmp_path):
    from dsh_notebook.research import LedgerPathError

    (tmp_path / "afile").write_text("x")
    (tmp_path / "folder.jsonl").mkdir()
    cases = {"": "empty", "a\x00b.jsonl": "NUL", str(tmp_path / "folder.jsonl"): "folder",
             str(tmp_path / "afile" / "ledger" / "main.jsonl"): "is a file", "/dev/null": "not a regular file"}
    for path, words in cases.items():
        with pytest.raises(LedgerPathError) as e:
            Ledger(path)
        assert isinstance(e.value, OSError) and isinstance(e.value, ValueError)
        assert words in str(e.value) and "\n" not in str(e.value), (path, str(e.value))
    assert (tmp_path / "afile").read_text() == "x"


def test_a_torn_tail_is_set_aside_but_a_line_missing_only_its_newline_is_refused(led):
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    good = led.path.read_bytes()
    # an editor removed the final newline: a whole event, not a crash -> refused, nothing changed
    led.path.write_bytes(good[:-1])
    r = refused(Ledger(led.path).append("question-posed", {"question_id": "q2", "text": "?"}, LEAD), LEDGER_STATE)
    assert "line 2" in r["error"] and "newline" in r["error"]
    assert led.path.read_bytes() == good[:-1] and not list(led.path.parent.glob("*.torn-*"))
    # a crash mid-line: the fragment goes aside and the append goes on
    led.path.write_bytes(good + b'{"seq":2,"ts":"2026-')
    r = ok(led.append("question-posed", {"question_id": "q2", "text": "?"}, LEAD))
    assert r["seq"] == 2 and led.path.with_name(r["set_aside"]).read_bytes() == b'{"seq":2,"ts":"2026-'
    assert led.verify()["ok"]


def test_a_garbage_middle_line_is_refused_like_a_bad_header(led):
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    ok(led.append("question-posed", {"question_id": "q2", "text": "?"}, LEAD))
    lines = _lines(led)
    lines.insert(2, b"not json at all\n")
    led.path.write_bytes(b"".join(lines))
    r = refused(Ledger(led.path).append("question-posed", {"question_id": "q3", "text": "?"}, LEAD), LEDGER_STATE)
    assert "damaged at line 3" in r["error"]


def test_a_catching_up_writer_refuses_an_unreplayable_line_another_process_chained(led):
    """Finding 6: the incremental catch-up applies the same rule as a full read: a line with a
    valid chain that fails the replay (a scout's self-verification) is refused, not folded."""
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    ok(led.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1/x"}, SCOUT))
    last = _lines(led)[-1]
    forged = {"seq": 3, "ts": "2026-01-01T00:00:00Z", "type": "research/source-verified",
              "actor": {"role": "scout", "authority": "discovery"}, "prev": hashlib.sha256(last).hexdigest(),
              "data": {"source_id": "s1", "verdict": "verified"}}
    with open(led.path, "ab") as f:
        f.write(json.dumps(forged, separators=(",", ":")).encode() + b"\n")
    r = refused(led.append("claim-extracted", {"claim_id": "c1", "source_id": "s1", "text": "t",
                                               "span": {"locator": "p", "quote": "q"}}, EXT), LEDGER_STATE)
    assert "damaged at line 4" in r["error"] and LEDGER_AUTHORITY in r["error"]


def test_a_cached_writer_notices_an_earlier_line_edited_in_place(led):
    """Finding 7: an edit that keeps the file's length (no other writer appending) is seen by the
    cached writer too, not only by a fresh one; so is a truncation of its last line."""
    other = Ledger(led.path)
    ok(led.append("question-posed", {"question_id": "q1", "text": "Q?"}, LEAD))
    ok(other.append("question-posed", {"question_id": "q2", "text": "?"}, LEAD))
    ok(led.append("question-posed", {"question_id": "q3", "text": "?"}, LEAD))
    raw = led.path.read_bytes()
    led.path.write_bytes(raw.replace(b'"text":"Q?"', b'"text":"Q!"'))
    r = refused(led.append("question-posed", {"question_id": "q4", "text": "?"}, LEAD), LEDGER_STATE)
    assert "damaged at line 3" in r["error"]
    led.path.write_bytes(raw)  # restored from a copy: appends go on
    ok(led.append("question-posed", {"question_id": "q4", "text": "?"}, LEAD))
    # its own last line removed: the chain left is valid, but this writer saw more
    led.path.write_bytes(b"".join(_lines(led)[:-1]))
    r = refused(led.append("question-posed", {"question_id": "q5", "text": "?"}, LEAD), LEDGER_STATE)
    assert "no longer holds the line seq 4" in r["error"]
    ok(Ledger(led.path).append("question-posed", {"question_id": "q5", "text": "?"}, LEAD))  # a new object accepts it


def test_a_cached_writer_accepts_the_same_file_replaced(led):
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    copy = led.path.with_name("copy.jsonl")
    copy.write_bytes(led.path.read_bytes())
    copy.replace(led.path)  # a new inode with the same bytes (a restore, a sync tool)
    ok(led.append("question-posed", {"question_id": "q2", "text": "?"}, LEAD))
    assert led.verify()["ok"]


BAD_VALUES = {
    "object": object(), "NaN": float("nan"), "inf": float("inf"), "set": {1, 2}, "bytes": b"abc",
    "huge int": 10**5000, "lone surrogate": "\ud800",
}


@pytest.mark.parametrize("what", BAD_VALUES, ids=list(BAD_VALUES))
def test_free_form_values_that_are_not_json_are_refused_naming_the_place(led, what):
    """Findings 4 and 5: never an exception, never a silent conversion (NaN to null, a set to a list)."""
    before = led.path.read_bytes()
    r = refused(led.append("task-delegated", {"task_id": "t1", "role": "scout", "duty": "d", "route": {"tier": "cheap"},
                                              "inputs": {"query": "q", "x": BAD_VALUES[what]}}, LEAD), LEDGER_SCHEMA)
    assert "inputs.x" in r["error"]
    assert led.path.read_bytes() == before


def test_circular_and_deep_free_form_values_are_refused(led):
    loop: dict = {}
    loop["self"] = loop
    deep: dict = {}
    cur = deep
    for _ in range(5000):
        cur["a"] = {}
        cur = cur["a"]
    for value, words in ((loop, "circular reference"), (deep, "nested deeper than")):
        r = refused(led.append("source-verified", {"source_id": "s1", "verdict": "verified", "metadata": value}, BIB),
                    LEDGER_SCHEMA)
        assert words in r["error"] and len(r["error"]) < 400
    refused(led.append("task-delegated", {"task_id": "t1", "role": "scout", "duty": "d", "route": {"tier": "c"},
                                          "inputs": {1: "int key"}}, LEAD), LEDGER_SCHEMA)


def test_json_like_values_are_written_as_plain_json(led):
    np = pytest.importorskip("numpy", reason="numpy is not installed (pip install numpy)")
    ok(led.append("task-delegated", {"task_id": "t1", "role": "scout", "duty": "d", "route": {"tier": "cheap"},
                                     "inputs": {"pair": (1, 2), "x": np.float64(1.5), "n": np.int64(3),
                                                "nested": [{"ok": True, "none": None}]}}, LEAD))
    assert led.events()[-1]["data"]["inputs"] == {"pair": [1, 2], "x": 1.5, "n": 3, "nested": [{"ok": True, "none": None}]}


@pytest.mark.parametrize("year", ["2015", 2015.0, 10**30, 999, 2201, True])
def test_years_are_strict_and_bounded(led, year):
    refused(led.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1/x", "year": year},
                       SCOUT), LEDGER_SCHEMA)


def test_other_typed_fields_are_strict(led):
    ok(led.append("question-posed", {"question_id": "q1", "text": "?"}, LEAD))
    evidence(led)
    for data in ({"confidence": True}, {"confidence": "0.5"}, {"statement": b"bytes"}):
        refused(led.append("decision-proposed", {"decision_id": "d1", "question_id": "q1", "statement": "s",
                                                 "claim_ids": ["c1"], "confidence": 0.5, **data}, LEAD), LEDGER_SCHEMA)
    refused(led.append("fulltext-linked", {"source_id": "s1", "locator": "x", "sha256": SHA, "bytes": 2.0}, LEAD),
            LEDGER_SCHEMA)
    refused(led.append("task-delegated", {"task_id": "t1", "role": "scout", "duty": "d", "route": {"tier": "c"},
                                          "budget": {"tokens": "100"}}, LEAD), LEDGER_SCHEMA)
    ok(led.append("decision-proposed", {"decision_id": "d1", "question_id": "q1", "statement": "s",
                                        "claim_ids": ["c1"], "confidence": 1}, LEAD))


def test_verify_names_windows_line_endings_and_a_bom_once(led):
    """Finding 8: CRLF (git autocrlf) or a BOM breaks every hash; verify says so once, not
    "the previous line was edited" on every line."""
    reviewed(led)
    good = led.path.read_bytes()
    led.path.write_bytes(good.replace(b"\n", b"\r\n"))
    v = led.verify()
    assert not v["ok"] and len(v["problems"]) == 1 and "Windows line endings (CRLF)" in v["problems"][0]["problem"]
    refused(Ledger(led.path).append("question-posed", {"question_id": "q9", "text": "?"}, LEAD), LEDGER_STATE)
    led.path.write_bytes(b"\xef\xbb\xbf" + good)
    v = led.verify()
    assert not v["ok"] and len(v["problems"]) == 1 and "byte-order mark" in v["problems"][0]["problem"]
    # CRLF plus a real edit: the edit is still reported as one
    lines = good.replace(b"\n", b"\r\n").splitlines(keepends=True)
    assert b'"title":"Aspirin"' in lines[2]
    lines[2] = lines[2].replace(b"Aspirin", b"Coffee!")
    led.path.write_bytes(b"".join(lines))
    assert any(p["line"] == 4 and "edited" in p["problem"] for p in led.verify()["problems"])


def test_verify_against_the_head_sealed_by_sync(led):
    """Finding 2: a deleted or edited last line keeps the chain; the sealed head catches it."""
    reviewed(led)
    sealed = led.verify()
    head, events = sealed["head"], sealed["events"]
    v = led.verify(head, expected_events=events)
    assert v["ok"] and v["sealed"]["status"] == "matches"
    good = led.path.read_bytes()
    led.path.write_bytes(b"".join(_lines(led)[:-1]))  # the last line deleted
    v = led.verify(head, expected_events=events)
    assert not v["ok"] and v["sealed"]["status"] == "ends before"
    assert "ends before the head sealed by sync" in v["problems"][0]["problem"]
    led.path.write_bytes(good.replace(b'"verdict":"pass"', b'"verdict":"pass" '))  # the last line edited
    v = led.verify(head, expected_events=events)
    assert not v["ok"] and v["sealed"]["status"] == "differs" and "edited or replaced" in v["problems"][0]["problem"]
    led.path.write_bytes(good)
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD))
    v = led.verify(head, expected_events=events)
    assert not v["ok"] and v["sealed"]["status"] == "appended" and v["sealed"]["appended"] == 1
    assert "goes on after the head sealed by sync" in v["problems"][0]["problem"]
    v = led.verify(head, expected_events=events, appended_ok=True)
    assert v["ok"] and v["sealed"] == {"head": head, "events": events, "line": events + 1, "status": "appended",
                                       "appended": 1}


def test_the_fold_indexes_follow_the_lists(led):
    """Lookups by decision and objections by target go through indexes (linear verify); they
    follow appends to the lists, also made by hand."""
    from dsh_notebook.research.fold import Approval

    awaiting(led)
    state = led.fold()
    assert [a.revision for a in state.approvals_for("d1")] == [1] and state.reviews_for("d1", 1)
    state.approvals.append(Approval("d1", 2, 99))
    assert [a.revision for a in state.approvals_for("d1")] == [1, 2] and state.approvals_for("d1", 2)
    state.approvals.clear()
    assert state.approvals_for("d1") == []
    built = led.fold()
    built.human_decisions_for("d1")  # indexes built on one state, not on the other: still equal
    assert built == fold(led.events()) and "_index" not in repr(built)


def test_a_file_that_is_one_unterminated_fragment_is_left_alone(tmp_path):
    path = tmp_path / "x.dsh" / "ledger" / "main.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a ledger at all")
    r = refused(Ledger(path).append("question-posed", {"question_id": "q1", "text": "?"}, LEAD), LEDGER_STATE)
    assert "no complete line" in r["error"] and path.read_bytes() == b"not a ledger at all"
    assert not Ledger(path).verify()["ok"]


def test_a_ledger_opened_for_reading_creates_nothing(tmp_path):
    """``Ledger(path, create=False)`` (the explorer's, the CLI's and the server's reader) leaves a
    missing ledger missing: no folder, no header; it reads an existing one as usual."""
    from dsh_notebook.research import Actor, Ledger

    missing = tmp_path / "nb.dsh" / "ledger" / "main.jsonl"
    led = Ledger(missing, create=False)
    assert led.events() == [] and not missing.parent.exists()
    Ledger(missing).append("question-posed", {"question_id": "q1", "text": "why?"}, Actor("lead"))
    assert [e["type"] for e in Ledger(missing, create=False).events()] == ["research/question-posed"]
