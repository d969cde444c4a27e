"""``%ledger ask``: the research pipeline from a question to a decision awaiting the person,
against the scripted model server and the fake bibliographic resolver."""

from __future__ import annotations

import json

import pytest
from test_chat import Shell, sh  # noqa: F401 - fixtures

from dsh_notebook.llm.client import ChatClient
from dsh_notebook.llm.testing import ScriptedServer
from dsh_notebook.notebook import ledger as LG
from dsh_notebook.research import Ledger, ledger_path
from dsh_notebook.research.pipeline import STAGES, ask
from dsh_notebook.research.predicates import decision_status
from dsh_notebook.research.router import Router
from dsh_notebook.research.testing import FakeResolverServer

TEXT = ("Background.\n\nIn a randomised trial of 120 adults, daily   walking\nreduced systolic blood "
        "pressure by 5 mmHg over twelve weeks.\n")
DOI = "10.1000/walk"
QUESTION = "Does walking lower blood pressure?"


def crossref_work() -> str:
    return json.dumps({"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": {
        "DOI": DOI, "title": ["Daily walking and blood pressure"], "type": "journal-article",
        "author": [{"given": "Ann", "family": "Lee", "sequence": "first"}],
        "issued": {"date-parts": [[2020, 1, 2]]}, "container-title": ["J Walk"]}})


def script(paper, *, no_locator_doi=None) -> list[dict]:
    sources = [{"kind": "doi", "identifier": DOI, "title": "Daily walking and blood pressure",
                "authors": ["Ann Lee"], "year": 2020, "locator": str(paper)}]
    if no_locator_doi:
        sources.append({"kind": "doi", "identifier": no_locator_doi, "title": "Unknown work"})
    scout = {"sources": sources}
    extract = {"claims": [{"text": "Walking lowers systolic pressure by 5 mmHg.",
                           "quote": "daily walking reduced systolic blood pressure by 5 mmHg", "locator": "p2"}]}
    verdict = {"verdict": "supported", "rationale": "The span reports the 5 mmHg reduction."}
    decision = {"statement": "Daily walking lowered systolic blood pressure by about 5 mmHg in one trial.",
                "claim_ids": ["q1-t4-c1"], "confidence": "medium", "limitations": "One trial of 120 adults."}
    audit = {"verdict": "pass"}
    return [{"expect": {"stream": False}, "reply": {"content": json.dumps(r)}}
            for r in (scout, extract, verdict, decision, audit)]


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    monkeypatch.delenv("DSH_MODEL", raising=False)
    (tmp_path / "home").mkdir()
    paper = tmp_path / "paper.txt"
    paper.write_text(TEXT, encoding="utf-8")
    with FakeResolverServer() as resolver:
        resolver.add("crossref", DOI, crossref_work())
        for var in ("DSH_CROSSREF_URL", "DSH_ARXIV_URL", "DSH_PUBMED_URL"):
            monkeypatch.setenv(var, resolver.base_url + "/")
        yield tmp_path, paper, resolver


def types(ledger) -> list[tuple[str, str]]:
    return [(e["type"].split("/")[1], e["actor"]["role"]) for e in ledger.events()]


def test_ask_runs_every_stage_and_leaves_the_decision_awaiting_the_person(env, monkeypatch):
    tmp, paper, resolver = env
    led = Ledger(ledger_path(tmp / "nb.ipynb"))
    ticks = []
    with ScriptedServer(script(paper, no_locator_doi="10.1000/unknown")) as srv:
        monkeypatch.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        res = ask(led, QUESTION, client_factory=lambda route: ChatClient(
            model=f"{route['provider']}/{route['model']}", hooks=[], backoff=0.01),
            sidecar=tmp / "nb.dsh", progress=lambda *a: ticks.append(a), router=Router())
        assert len(srv.requests) == 5
        lead_body = srv.requests[3]["body"]
    assert res["status"] == "awaiting_person", res
    assert res["question_id"] == "q1" and res["decision_id"] == "q1-d1"
    assert "awaits the person" in res["message"] and "%ledger explore" in res["message"]
    assert [s["stage"] for s in res["stages"]] == list(STAGES)
    assert [r["key"] for r in resolver.requests if r["service"] == "crossref"][:2] == [DOI, "10.1000/unknown"]
    assert any("q1-t1-s2" in n for n in res["stages"][2]["notes"])  # the unverified source is noted
    assert "q1-t4-c1" in lead_body["messages"][1]["content"]
    assert types(led) == [
        ("question-posed", "lead"),
        ("task-delegated", "lead"), ("source-proposed", "scout"), ("source-proposed", "scout"),
        ("task-completed", "runtime"),
        ("task-delegated", "lead"), ("source-verified", "bibliographic_verifier"), ("task-completed", "runtime"),
        ("task-delegated", "lead"), ("source-verified", "bibliographic_verifier"), ("task-completed", "runtime"),
        ("fulltext-linked", "lead"),
        ("task-delegated", "lead"), ("claim-extracted", "extractor"), ("task-completed", "runtime"),
        ("task-delegated", "lead"), ("claim-verified", "claim_verifier"), ("task-completed", "runtime"),
        ("decision-proposed", "lead"),
        ("task-delegated", "lead"), ("review-verdict-recorded", "citation_auditor"), ("task-completed", "runtime"),
        ("human-approval-requested", "lead"),
    ]
    ev = led.events()
    assert ev[0]["actor"].get("on_behalf_of") == "person"
    state = led.fold()
    assert state.sources["q1-t1-s1"].verdict == "verified"
    assert state.sources["q1-t1-s2"].verdict != "verified" and state.sources["q1-t1-s2"].fulltext is None
    assert state.decisions["q1-d1"].claim_ids == ["q1-t4-c1"]
    assert decision_status(state, "q1-d1") == "awaiting_human" and LG.awaiting_person(state, "q1-d1")
    assert not state.human_decisions_for("q1-d1")
    # progress: each stage starts at 0 and ends complete
    for stage in STAGES:
        mine = [t for t in ticks if t[0] == stage]
        assert mine[0][1] == 0 and mine[-1][1] == mine[-1][2], (stage, mine)
    assert led.verify()["ok"]


def test_ask_stops_with_the_reason_when_no_claim_is_eligible(env, monkeypatch):
    tmp, paper, _resolver = env
    led = Ledger(ledger_path(tmp / "nb.ipynb"))
    replies = script(paper)
    replies[0] = {"reply": {"content": json.dumps({"sources": [
        {"kind": "doi", "identifier": DOI, "title": "Daily walking and blood pressure", "authors": ["Ann Lee"],
         "year": 2020}]})}}
    with ScriptedServer(replies[:1]) as srv:
        monkeypatch.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        res = ask(led, QUESTION, client_factory=lambda route: ChatClient(
            model=f"{route['provider']}/{route['model']}", hooks=[], backoff=0.01), sidecar=tmp / "nb.dsh")
        assert len(srv.requests) == 1
    assert res["status"] == "stopped" and res["decision_id"] is None
    assert "no verified source had a full text" in res["message"]
    assert any("skipped" in n for n in res["stages"][3]["notes"])
    assert not led.fold().decisions


def test_ledger_ask_magic_in_the_shell(sh, env, monkeypatch):  # noqa: F811
    _tmp, paper, _resolver = env
    srv = ScriptedServer(script(paper)).start()
    try:
        monkeypatch.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        r, cap = sh.run(f'%ledger ask "{QUESTION}"')
        assert r.error_in_exec is None, r.error_in_exec
    finally:
        srv.stop()
    outs = [o for o in cap.outputs if LG.MIME_LEDGER in o.data]
    assert outs, [o.data.keys() for o in cap.outputs]
    out = outs[-1]
    assert out.data[LG.MIME_LEDGER]["ask"]["status"] == "awaiting_person"
    assert "awaits the person: use %ledger explore to decide" in out.data["text/plain"]
    assert "decision q1-d1 (revision 1): awaiting_human" in out.data["text/plain"]
    # a progress bar per stage was displayed before the summary
    assert sum("IntProgress" in o.data.get("text/plain", "") or "HBox" in o.data.get("text/plain", "")
               or "application/vnd.jupyter.widget-view+json" in o.data for o in cap.outputs) == len(STAGES)
    path = sh.sidecar / "ledger" / "main.jsonl"
    state, _ = LG.read_state(path)
    assert LG.awaiting_person(state, "q1-d1")
    r, _cap = sh.run("%ledger ask")
    assert r.error_in_exec is not None and "question in quotes" in str(r.error_in_exec)
