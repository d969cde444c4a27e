"""Research roles run end to end against the scripted model server (spec: research.md "Running
the roles"): authorities, invalid output, the code quote check, routing and the budget."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dsh_notebook.llm.client import ChatClient
from dsh_notebook.llm.testing import ScriptedServer
from dsh_notebook.research import Actor, Ledger, ledger_path
from dsh_notebook.research.claims import quote_in_fulltext
from dsh_notebook.research_pipeline.fulltext import link_fulltext
from dsh_notebook.research_pipeline.roles import PROMPT_VERSION, run_role
from dsh_notebook.research_pipeline.router import Router, over_budget, risk_reason
from dsh_notebook.research_pipeline.testing import FakeResolverServer
from dsh_notebook.settings import load_settings

TEXT = ("Background.\n\nIn a randomised trial of 120 adults, daily   walking\nreduced systolic blood "
        "pressure by 5 mmHg over twelve weeks.\n")


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    monkeypatch.delenv("DSH_MODEL", raising=False)
    (tmp_path / "home").mkdir()
    return tmp_path


def settings_toml(home, text: str) -> None:
    (home / "home" / "settings.toml").write_text(text, encoding="utf-8")


@pytest.fixture
def led(home):
    ledger = Ledger(ledger_path(home / "nb.ipynb"))
    assert ledger.append("question-posed", {"question_id": "q1", "text": "Does walking lower blood pressure?"},
                         Actor("lead"))["ok"]
    assert ledger.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1000/walk"},
                         Actor("scout"))["ok"]
    assert ledger.append("source-verified", {"source_id": "s1", "verdict": "verified"},
                         Actor("bibliographic_verifier"))["ok"]
    paper = home / "paper.txt"
    paper.write_text(TEXT, encoding="utf-8")
    r = link_fulltext(ledger, "s1", str(paper), actor=Actor("lead"), sidecar=home / "nb.dsh")
    assert r["ok"], r
    return ledger


def factory(monkeypatch, srv):
    monkeypatch.setenv("DEEPSEEK_BASE_URL", srv.base_url)
    return lambda route: ChatClient(model=f"{route['provider']}/{route['model']}", hooks=[], backoff=0.01)


def lines(ledger):
    return [(e["type"].split("/")[1], e["actor"]["role"], e["actor"]["authority"]) for e in ledger.events()]


# --------------------------------------------------------------------------- fulltext and the quote check


def test_link_fulltext_copies_the_bytes_and_records_the_hash(home, led):
    src = led.fold().sources["s1"]
    sha = src.fulltext["sha256"]
    stored = home / "nb.dsh" / "fulltext" / f"{sha}.txt"
    assert stored.read_bytes() == TEXT.encode() and src.fulltext["bytes"] == len(TEXT.encode())
    assert src.fulltext["media_type"] == "text/plain"
    # only the lead's authority links fulltext; a missing file writes nothing
    r = link_fulltext(led, "s1", str(home / "paper.txt"), actor=Actor("scout"), sidecar=home / "nb.dsh")
    assert r["ok"] is False and r["code"] == "LEDGER_AUTHORITY"
    before = len(led.events())
    r = link_fulltext(led, "s1", str(home / "missing.txt"), actor=Actor("lead"), sidecar=home / "nb.dsh")
    assert r["ok"] is False and r["code"] == "FULLTEXT_FETCH" and len(led.events()) == before


def test_link_fulltext_fetches_a_url(home, led, monkeypatch):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):  # noqa: N802
            body = b"<html><body><p>Walking &amp; blood pressure.</p></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/paper"
        # a loopback address is refused unless a test opts in (tests/test_fulltext.py has the rules)
        r = link_fulltext(led, "s1", url, actor=Actor("lead"), sidecar=home / "nb.dsh")
        assert r["ok"] is False and r["code"] == "FULLTEXT_REFUSED" and "loopback" in r["error"]
        monkeypatch.setenv("DSH_FULLTEXT_ALLOW_PRIVATE", "1")
        r = link_fulltext(led, "s1", url, actor=Actor("lead"), sidecar=home / "nb.dsh")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert r["ok"] and r["media_type"] == "text/html" and r["path"].endswith(".html")
    state = led.fold()
    assert led.append("claim-extracted", {"claim_id": "c9", "source_id": "s1", "text": "t", "span": {
        "locator": "p1", "quote": "Walking & blood pressure.", "fulltext_sha256": r["sha256"]}},
        Actor("extractor"))["ok"]
    state = led.fold()
    assert quote_in_fulltext(state, "c9", sidecar=home / "nb.dsh")[0] is True


def test_quote_check_normalises_whitespace_and_reports_pdf(home, led):
    sha = led.fold().sources["s1"].fulltext["sha256"]
    for cid, quote in (("c1", "daily walking reduced systolic blood pressure"), ("c2", "walking cured hypertension")):
        assert led.append("claim-extracted", {"claim_id": cid, "source_id": "s1", "text": "x", "span": {
            "locator": "p1", "quote": quote, "fulltext_sha256": sha}}, Actor("extractor"))["ok"]
    state = led.fold()
    assert quote_in_fulltext(state, "c1", sidecar=home / "nb.dsh")[0] is True
    ok, why = quote_in_fulltext(state, "c2", sidecar=home / "nb.dsh")
    assert ok is False and "does not occur" in why
    pdf = home / "paper.pdf"
    pdf.write_bytes(b"%PDF-1.4\n1 0 obj <<>> stream\nx\x9c\x00\nendstream\n%%EOF\n")
    assert led.append("source-proposed", {"source_id": "s2", "kind": "doi", "identifier": "10.1000/pdf"},
                      Actor("scout"))["ok"]
    r = link_fulltext(led, "s2", str(pdf), actor=Actor("lead"), sidecar=home / "nb.dsh")
    assert r["media_type"] == "application/pdf"
    assert led.append("claim-extracted", {"claim_id": "c3", "source_id": "s2", "text": "x", "span": {
        "locator": "p1", "quote": "anything", "fulltext_sha256": r["sha256"]}}, Actor("extractor"))["ok"]
    ok, why = quote_in_fulltext(led.fold(), "c3", sidecar=home / "nb.dsh")
    assert ok is False and "PDF" in why


# --------------------------------------------------------------------------- the runner


def test_extractor_run_writes_claims_under_the_extractor_authority(home, led, monkeypatch):
    reply = {"claims": [{"text": "Walking lowers systolic pressure by 5 mmHg.",
                         "quote": "daily walking reduced systolic blood pressure by 5 mmHg", "locator": "p2"}],
             "verified": True}  # an overreaching key is never written
    usage = {"prompt_tokens": 900, "completion_tokens": 100, "total_tokens": 1000}
    with ScriptedServer([{"expect": {"stream": False, "model": "deepseek-chat"},
                          "reply": {"content": json.dumps(reply), "usage": usage}}]) as srv:
        res = run_role(led, "extractor", "Extract the blood-pressure effect", {"source_id": "s1", "question_id": "q1"},
                       client_factory=factory(monkeypatch, srv), task_id="t1", router=Router(load_settings()))
        body = srv.requests[0]["body"]
    assert res["status"] == "ok", res
    assert "tools" not in body and body["response_format"] == {"type": "json_object"}
    assert "daily   walking" in body["messages"][1]["content"]  # the stored fulltext is the context
    assert lines(led)[-3:] == [("task-delegated", "lead", "synthesis"),
                               ("claim-extracted", "extractor", "evidence_extraction"),
                               ("task-completed", "runtime", "runtime")]
    ev = led.events()[-2]
    assert ev["actor"]["prompt_version"] == PROMPT_VERSION and ev["actor"]["model"] == "deepseek-chat"
    assert "verified" not in ev["data"]
    state = led.fold()
    claim = state.claims["t1-c1"]
    assert claim.span["fulltext_sha256"] == state.sources["s1"].fulltext["sha256"]
    assert state.tasks["t1"].status == "ok" and state.tasks["t1"].usage == usage
    assert state.tasks["t1"].route["tier"] == "cheap"


def test_invalid_output_twice_is_invalid_output_and_escalated(home, led, monkeypatch):
    with ScriptedServer([{"reply": {"content": "I think the claim is supported."}},
                         {"reply": {"content": json.dumps({"claims": [{"text": "no quote"}]})}}]) as srv:
        res = run_role(led, "extractor", "Extract", {"source_id": "s1"}, client_factory=factory(monkeypatch, srv),
                       task_id="t2", router=Router(load_settings()))
        assert len(srv.requests) == 2
        retry = srv.requests[1]["body"]["messages"]
    assert "Your reply was invalid" in retry[-1]["content"]
    assert res["status"] == "invalid_output" and res["escalated"] == "invalid_output"
    assert lines(led)[-3:] == [("task-delegated", "lead", "synthesis"), ("task-completed", "runtime", "runtime"),
                               ("escalated", "runtime", "runtime")]
    state = led.fold()
    assert state.tasks["t2"].status == "invalid_output" and state.tasks["t2"].usage["total_tokens"] > 0
    assert state.escalations[-1].subject == {"kind": "task", "id": "t2"}
    assert state.escalations[-1].reason == "invalid_output"
    assert not [c for c in state.claims if c.startswith("t2")]


def test_one_invalid_output_then_a_valid_one_is_ok(home, led, monkeypatch):
    with ScriptedServer([{"reply": {"content": "{not json"}},
                         {"reply": {"content": json.dumps({"sources": [{"kind": "doi", "identifier": "10.1/x"}]})}},
                         ]) as srv:
        res = run_role(led, "scout", "Find trials", {"query": "walking"}, client_factory=factory(monkeypatch, srv),
                       task_id="t3", router=Router(load_settings()))
    assert res["status"] == "ok" and res["escalated"] is None
    state = led.fold()
    assert state.sources["t3-s1"].identifier == "10.1/x" and state.sources["t3-s1"].query == "walking"
    assert lines(led)[-2] == ("source-proposed", "scout", "discovery")


def test_claim_verifier_without_the_quote_is_uncertain_without_a_model_call(home, led, monkeypatch):
    sha = led.fold().sources["s1"].fulltext["sha256"]
    assert led.append("claim-extracted", {"claim_id": "c1", "source_id": "s1", "text": "Walking cures.", "span": {
        "locator": "p2", "quote": "walking cured hypertension", "fulltext_sha256": sha}}, Actor("extractor"))["ok"]
    with ScriptedServer([]) as srv:
        res = run_role(led, "claim_verifier", "Verify", {"claim_id": "c1"}, client_factory=factory(monkeypatch, srv),
                       task_id="t4", router=Router(load_settings()))
        assert srv.requests == []
    assert res["status"] == "ok"
    c = led.fold().claims["c1"]
    assert c.verdict == "uncertain" and "does not occur" in c.verdicts[-1]["rationale"]
    assert lines(led)[-2] == ("claim-verified", "claim_verifier", "claim_verification")


def test_claim_verifier_asks_the_model_when_the_quote_is_there(home, led, monkeypatch):
    sha = led.fold().sources["s1"].fulltext["sha256"]
    assert led.append("claim-extracted", {"claim_id": "c1", "source_id": "s1", "text": "Walking lowers BP.", "span": {
        "locator": "p2", "quote": "reduced systolic blood pressure by 5 mmHg", "fulltext_sha256": sha}},
        Actor("extractor"))["ok"]
    reply = {"verdict": "supported", "rationale": "The span reports a 5 mmHg reduction."}
    with ScriptedServer([{"reply": {"content": json.dumps(reply)}}]) as srv:
        res = run_role(led, "claim_verifier", "Verify", {"claim_id": "c1"}, client_factory=factory(monkeypatch, srv),
                       task_id="t5", router=Router(load_settings()))
    assert res["status"] == "ok" and led.fold().claims["c1"].verdict == "supported"


def test_citation_auditor_objections_are_raised_under_review(home, led, monkeypatch):
    sha = led.fold().sources["s1"].fulltext["sha256"]
    led.append("claim-extracted", {"claim_id": "c1", "source_id": "s1", "text": "Walking lowers BP.", "span": {
        "locator": "p2", "quote": "reduced systolic blood pressure", "fulltext_sha256": sha}}, Actor("extractor"))
    led.append("claim-verified", {"claim_id": "c1", "verdict": "supported"}, Actor("claim_verifier"))
    assert led.append("decision-proposed", {"decision_id": "d1", "question_id": "q1", "statement": "Walking cures.",
                                            "claim_ids": ["c1"], "confidence": "high"}, Actor("lead"))["ok"]
    reply = {"verdict": "objections", "objections": [
        {"target": {"kind": "decision", "id": "d1"}, "reason": "'cures' overstates a 5 mmHg drop.",
         "severity": "major"}]}
    with ScriptedServer([{"reply": {"content": json.dumps(reply)}}]) as srv:
        res = run_role(led, "citation_auditor", "Audit d1", {"decision_id": "d1"},
                       client_factory=factory(monkeypatch, srv), task_id="t6", router=Router(load_settings()))
    assert res["status"] == "ok", res
    assert lines(led)[-3:-1] == [("objection-raised", "citation_auditor", "review"),
                                 ("review-verdict-recorded", "citation_auditor", "review")]
    state = led.fold()
    assert state.reviews[-1].objection_ids == ["t6-o1"] and state.objections["t6-o1"].target["id"] == "d1"


def test_bibliographic_verifier_is_code(home, led, monkeypatch):
    from dsh_notebook.research_pipeline import roles

    seen = {}

    def fake_check(identifier, claimed=None, **kw):
        seen["id"] = identifier
        return {"verdict": "retracted", "checks": [{"name": "retraction", "ok": False, "detail": "x"}],
                "metadata": {"title": "T"}, "resolver": {"service": "crossref"}, "needs_judgment": False}

    monkeypatch.setattr("dsh_notebook.research_pipeline.bibliographic.check_source", fake_check)
    res = roles.run_role(led, "bibliographic_verifier", "Check s1", {"source_id": "s1"},
                         client_factory=lambda route: pytest.fail("no model"), task_id="t7",
                         router=Router(load_settings()))
    assert res["status"] == "ok" and res["route"]["tier"] == "code" and seen["id"] == "10.1000/walk"
    assert lines(led)[-2] == ("source-verified", "bibliographic_verifier", "bibliographic_verification")
    assert led.fold().sources["s1"].verdict == "retracted"


# --------------------------------------------------------------------------- the bibliographic judgment

SHARED = Path(os.environ.get("DSH_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURES = SHARED / "fixtures" / "bibliographic"
ORDINARY = "10.1063/1.4938384"  # recorded Crossref work, "Effect of native oxide layers on copper thin-film ..."
GREY_TITLE = "Native oxide layers and the tensile strength of copper thin films: a molecular dynamics study"
CORRECTED = "10.1073/pnas.1414271111"  # recorded Crossref work with a correction in updated-by
CORRECTED_GREY = "Functional musculoskeletal tissue engineering through hypoxia and lysyl oxidase collagen crosslinking"
TIERS = """
[research.tiers]
cheap = { model = "deepseek/deepseek-chat" }
strong = { model = "deepseek/deepseek-reasoner" }
"""


@pytest.fixture
def resolver(home, monkeypatch):
    if not (FIXTURES / "README.md").is_file():
        pytest.skip(f"the recorded bibliographic responses are not at {FIXTURES}"
                    " (kept outside the project: set DSH_SHARED_DIR to the shared folder)")
    with FakeResolverServer.from_fixtures(FIXTURES) as srv:
        for var in ("DSH_CROSSREF_URL", "DSH_ARXIV_URL", "DSH_PUBMED_URL", "DSH_DATACITE_URL"):
            monkeypatch.setenv(var, srv.base_url)
        yield srv


def propose(led, sid, identifier, title, **more):
    assert led.append("source-proposed", {"source_id": sid, "kind": "doi", "identifier": identifier, "title": title,
                                          **more}, Actor("scout"))["ok"]


def judge(verdict, rationale="The titles name the same study of oxide layers on copper films.", usage=None):
    reply = {"content": json.dumps({"verdict": verdict, "rationale": rationale})}
    if usage:
        reply["usage"] = usage
    return {"expect": {"model": "deepseek-reasoner", "stream": False}, "reply": reply}


def test_grey_zone_title_is_judged_by_the_model_on_the_strong_tier(home, led, resolver, monkeypatch):
    from dsh_notebook.research_pipeline.bibliographic import TITLE_JUDGE, TITLE_OK, _title_score

    settings_toml(home, TIERS)
    propose(led, "s2", ORDINARY, GREY_TITLE, year=2015)
    usage = {"prompt_tokens": 700, "completion_tokens": 40, "total_tokens": 740}
    with ScriptedServer([judge("verified", usage=usage)]) as srv:
        res = run_role(led, "bibliographic_verifier", "Check s2", {"source_id": "s2", "question_id": "q1"},
                       client_factory=factory(monkeypatch, srv), task_id="t1", router=Router(load_settings()))
        assert len(srv.requests) == 1 and srv.mismatches == []
        body = srv.requests[0]["body"]
    assert res["status"] == "ok" and res["escalate_reason"] == "needs_judgment", res
    assert res["verdict"] == "verified" and res["verdict_by"] == "model"
    system, user = body["messages"][0]["content"], json.loads(body["messages"][1]["content"])
    assert "same work" in system and PROMPT_VERSION in system and '"inconclusive"' in system
    assert user["claimed"]["title"] == GREY_TITLE and user["resolved"]["title"].startswith("Effect of native oxide")
    assert user["code_verdict"] == "mismatch" and "title" in [c["name"] for c in user["checks"]]
    assert TITLE_JUDGE <= _title_score(GREY_TITLE, user["resolved"]["title"]) < TITLE_OK
    assert lines(led)[-3:] == [("task-delegated", "lead", "synthesis"),
                               ("source-verified", "bibliographic_verifier", "bibliographic_verification"),
                               ("task-completed", "runtime", "runtime")]
    ev = led.events()[-2]
    assert ev["actor"]["model"] == "deepseek-reasoner" and ev["actor"]["prompt_version"] == PROMPT_VERSION
    checks = ev["data"]["checks"]
    assert [c["name"] for c in checks][-1] == "model_judgment" and {"resolved", "title", "year"} <= {
        c["name"] for c in checks}
    assert checks[-1]["ok"] is True and "same study of oxide layers" in checks[-1]["detail"]
    state = led.fold()
    assert state.sources["s2"].verdict == "verified"
    assert state.tasks["t1"].route["tier"] == "strong" and state.tasks["t1"].route["model"] == "deepseek-reasoner"
    assert state.tasks["t1"].usage == usage and state.tasks["t1"].status == "ok"
    assert sum(1 for e in led.events() if e["type"].endswith("source-verified")) == 2  # s1's and this ONE


def test_model_judges_a_different_work_mismatch(home, led, resolver, monkeypatch):
    settings_toml(home, TIERS)
    propose(led, "s2", ORDINARY, GREY_TITLE)
    with ScriptedServer([judge("mismatch", "The claimed paper is about tensile strength, not this one.")]) as srv:
        res = run_role(led, "bibliographic_verifier", "Check s2", {"source_id": "s2"},
                       client_factory=factory(monkeypatch, srv), task_id="t1", router=Router(load_settings()))
    assert res["status"] == "ok" and led.fold().sources["s2"].verdict == "mismatch"
    assert led.events()[-2]["data"]["checks"][-1]["ok"] is False


def test_the_notices_verdict_is_never_changed_by_the_model(home, led, resolver, monkeypatch):
    settings_toml(home, TIERS)
    propose(led, "s2", CORRECTED, CORRECTED_GREY)
    with ScriptedServer([judge("verified", "Same study of engineered musculoskeletal tissue.")]) as srv:
        res = run_role(led, "bibliographic_verifier", "Check s2", {"source_id": "s2"},
                       client_factory=factory(monkeypatch, srv), task_id="t1", router=Router(load_settings()))
        assert len(srv.requests) == 1
    assert res["status"] == "ok" and res["verdict"] == "corrected"
    assert led.fold().sources["s2"].verdict == "corrected"
    checks = led.events()[-2]["data"]["checks"]
    assert "notice" in [c["name"] for c in checks]
    assert checks[-1]["name"] == "model_judgment" and "'corrected' stands" in checks[-1]["detail"]


def test_invalid_judgment_twice_writes_the_code_verdict_and_escalates(home, led, resolver, monkeypatch):
    settings_toml(home, TIERS)
    propose(led, "s2", ORDINARY, GREY_TITLE)
    with ScriptedServer([{"reply": {"content": "Probably the same paper."}},
                         {"reply": {"content": json.dumps({"verdict": "same", "rationale": "x"})}}]) as srv:
        res = run_role(led, "bibliographic_verifier", "Check s2", {"source_id": "s2"},
                       client_factory=factory(monkeypatch, srv), task_id="t1", router=Router(load_settings()))
        assert len(srv.requests) == 2 and "Your reply was invalid" in srv.requests[1]["body"]["messages"][-1]["content"]
        assert {r["body"]["model"] for r in srv.requests} == {"deepseek-reasoner"}
    assert res["status"] == "invalid_output" and res["escalated"] == "invalid_output"
    assert lines(led)[-4:] == [("task-delegated", "lead", "synthesis"),
                               ("source-verified", "bibliographic_verifier", "bibliographic_verification"),
                               ("task-completed", "runtime", "runtime"), ("escalated", "runtime", "runtime")]
    ev = led.events()[-3]
    assert ev["data"]["verdict"] == "inconclusive" and "model" not in ev["actor"]
    assert ev["data"]["checks"][-1]["name"] == "model_judgment" and ev["data"]["checks"][-1]["ok"] is None
    state = led.fold()
    assert state.sources["s2"].verdict == "inconclusive" and state.tasks["t1"].status == "invalid_output"
    assert state.tasks["t1"].usage["total_tokens"] > 0
    assert state.escalations[-1].subject == {"kind": "task", "id": "t1"}


def test_no_model_when_the_code_decides(home, led, resolver, monkeypatch):
    propose(led, "s2", ORDINARY, "Effect of native oxide layers on copper thin-film tensile properties: a reactive "
                                 "molecular dynamics study", authors=["Skarlinski", "Quesnel"], year=2015)
    propose(led, "s3", ORDINARY, GREY_TITLE, year=2011)  # a definite year failure: mismatch, no judgment
    for sid in ("s2", "s3"):
        res = run_role(led, "bibliographic_verifier", f"Check {sid}", {"source_id": sid},
                       client_factory=lambda route: pytest.fail("no model"), task_id=f"t-{sid}",
                       router=Router(load_settings()))
        assert res["status"] == "ok" and res["route"]["tier"] == "code" and res["verdict_by"] == "code"
    state = led.fold()
    assert state.sources["s2"].verdict == "verified" and state.sources["s3"].verdict == "mismatch"


def test_datacite_arxiv_doi_source_is_checked_on_arxiv(home, led, resolver):
    propose(led, "s2", "https://doi.org/10.48550/arXiv.1605.08386", "Heat-bath random walks with Markov bases")
    res = run_role(led, "bibliographic_verifier", "Check s2", {"source_id": "s2"},
                   client_factory=lambda route: pytest.fail("no model"), task_id="t1", router=Router(load_settings()))
    assert res["status"] == "ok"
    v = led.fold().sources["s2"].verdicts[-1]
    assert v["verdict"] == "verified" and v["resolver"] == "arxiv"
    assert any(c["name"] == "datacite_doi" and "resolved through arXiv" in c["detail"] for c in v["checks"])
    assert [r["service"] for r in resolver.requests] == ["arxiv"]


# --------------------------------------------------------------------------- routing and budget


def test_routing_defaults_and_configured_tiers(home):
    r = Router(load_settings())
    assert r.route("extractor") == {"tier": "cheap", "provider": "deepseek", "model": "deepseek-chat", "effort": ""}
    assert r.route("bibliographic_verifier")["tier"] == "code"
    for reason in ("invalid_output", "uncertain", "disagreement", "cited_by_decision", "retracted", "needs_judgment"):
        assert r.route("claim_verifier", escalate_reason=reason)["tier"] == "strong"
    with pytest.raises(ValueError):
        r.route("scout", escalate_reason="because")
    assert r.budget_tokens == 200_000
    settings_toml(home, """
[[providers.deepseek.models]]
id = "deepseek-reasoner"
reasoning_efforts = ["low", "medium", "high"]

[research]
budget_tokens = 5000

[research.tiers]
cheap = { model = "deepseek-chat" }
strong = { model = "deepseek/deepseek-reasoner" }
""")
    r = Router(load_settings())
    assert r.route("scout") == {"tier": "cheap", "provider": "deepseek", "model": "deepseek-chat", "effort": ""}
    assert r.route("scout", escalate_reason="retracted") == {
        "tier": "strong", "provider": "deepseek", "model": "deepseek-reasoner", "effort": "high"}
    assert r.budget_tokens == 5000
    assert r.route("scout") == Router(load_settings()).route("scout")  # deterministic


def test_risk_reasons_from_the_ledger(home, led):
    sha = led.fold().sources["s1"].fulltext["sha256"]
    led.append("claim-extracted", {"claim_id": "c1", "source_id": "s1", "text": "x", "span": {
        "locator": "p", "quote": "daily walking", "fulltext_sha256": sha}}, Actor("extractor"))
    assert risk_reason(led.fold(), "claim_verifier", {"claim_id": "c1"}) is None
    led.append("claim-verified", {"claim_id": "c1", "verdict": "uncertain"}, Actor("claim_verifier"))
    assert risk_reason(led.fold(), "claim_verifier", {"claim_id": "c1"}) == "uncertain"
    led.append("claim-verified", {"claim_id": "c1", "verdict": "supported"}, Actor("claim_verifier"))
    assert risk_reason(led.fold(), "claim_verifier", {"claim_id": "c1"}) == "disagreement"
    led.append("decision-proposed", {"decision_id": "d1", "question_id": "q1", "statement": "s", "claim_ids": ["c1"],
                                     "confidence": "low"}, Actor("lead"))
    assert risk_reason(led.fold(), "claim_verifier", {"claim_id": "c1"}) == "cited_by_decision"
    led.append("source-verified", {"source_id": "s1", "verdict": "retracted"}, Actor("bibliographic_verifier"))
    assert risk_reason(led.fold(), "claim_verifier", {"claim_id": "c1"}) == "retracted"
    assert risk_reason(led.fold(), "extractor", {"source_id": "s1"}) == "retracted"


def test_over_budget_stops_and_escalates_to_the_person(home, led, monkeypatch):
    settings_toml(home, "[research]\nbudget_tokens = 1500\n")
    router = Router(load_settings())
    reply = {"sources": []}
    with ScriptedServer([{"reply": {"content": json.dumps(reply),
                                    "usage": {"prompt_tokens": 1000, "completion_tokens": 600,
                                              "total_tokens": 1600}}}]) as srv:
        res = run_role(led, "scout", "Find", {"question_id": "q1"}, client_factory=factory(monkeypatch, srv),
                       task_id="t8", router=router)
        assert res["status"] == "ok"
        state = led.fold()
        assert over_budget(state, "q1", router.budget_tokens)[0] is True
        assert over_budget(state, "q2", router.budget_tokens)[0] is False
        res = run_role(led, "scout", "Find more", {"question_id": "q1"}, client_factory=factory(monkeypatch, srv),
                       task_id="t9", router=router)
        assert len(srv.requests) == 1  # no second model call
    assert res["status"] == "over_budget" and res["escalated"] == "budget"
    state = led.fold()
    assert "t9" not in state.tasks
    assert state.escalations[-1].subject == {"kind": "question", "id": "q1"} and state.escalations[-1].reason == "budget"


# --------------------------------------------------------------------------- %%chat --preset research


def test_chat_research_preset_queries_the_ledger(tmp_path, monkeypatch, new_kernel):
    from IPython.utils.capture import capture_output

    from dsh_notebook.research_pipeline.tools import RESEARCH_TOOL_NAMES

    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DSH_NOTEBOOK_PATH", str(tmp_path / "nb.ipynb"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    ledger = Ledger(ledger_path(tmp_path / "nb.ipynb"))
    assert ledger.append("question-posed", {"question_id": "q1", "text": "Does walking lower blood pressure?"},
                         Actor("lead"))["ok"]
    ip = new_kernel()
    call = {"id": "call_1", "name": "research_ledger_query", "arguments": json.dumps({"kind": "questions"})}
    srv = ScriptedServer([{"expect": {"tools": list(RESEARCH_TOOL_NAMES)}, "reply": {"tool_calls": [call]}},
                          {"reply": {"content": "One question is open: q1."}}]).start()
    monkeypatch.setenv("DEEPSEEK_BASE_URL", srv.base_url)
    try:
        with capture_output():
            r = ip.run_cell("%%chat --preset research --session lead\nWhat is open?")
        assert r.error_in_exec is None, r.error_in_exec
        assert srv.mismatches == []
        system = srv.requests[0]["body"]["messages"][0]
        assert system["role"] == "system" and "no truth" in system["content"]
        tool_msg = [m for m in srv.requests[1]["body"]["messages"] if m["role"] == "tool"][0]
        result = json.loads(tool_msg["content"])
        assert result["ok"] is True and result["rows"] == [{"question_id": "q1",
                                                            "text": "Does walking lower blood pressure?"}]
    finally:
        srv.stop()
        for s in ip.magics_manager.registry["ChatMagics"].sessions.values():
            s.close()


def test_lead_tools_propose_only_eligible_claims_and_request_approval(home, led, monkeypatch):
    from dsh_notebook.research_pipeline.tools import research_tools

    sha = led.fold().sources["s1"].fulltext["sha256"]
    led.append("claim-extracted", {"claim_id": "c1", "source_id": "s1", "text": "Walking lowers BP.", "span": {
        "locator": "p2", "quote": "reduced systolic blood pressure", "fulltext_sha256": sha}}, Actor("extractor"))
    reply = {"verdict": "supported", "rationale": "5 mmHg reduction in the span."}
    audit = {"verdict": "pass", "objections": []}
    with ScriptedServer([{"reply": {"content": json.dumps(reply)}}, {"reply": {"content": json.dumps(audit)}}]) as srv:
        tools = {t.name: t for t in research_tools(led, sidecar=home / "nb.dsh", client_factory=factory(monkeypatch, srv),
                                                   router=Router(load_settings()))}
        args = {"decision_id": "d1", "question_id": "q1", "statement": "Walking lowers BP a little.",
                "claim_ids": ["c1"], "confidence": "medium"}
        r = tools["research_propose_decision"].fn(args)
        assert r["ok"] is False and r["code"] == "NOT_ELIGIBLE"  # no claim verdict yet
        r = tools["research_delegate"].fn({"role": "claim_verifier", "duty": "Verify c1", "inputs": {"claim_id": "c1"}})
        assert r["ok"] is True and "supported" in r["summary"]
        assert tools["research_propose_decision"].fn(args)["ok"] is True
        r = tools["research_request_approval"].fn({"decision_id": "d1"})
        assert r["ok"] is False and "no review verdict" in r["error"]
        r = tools["research_delegate"].fn({"role": "citation_auditor", "duty": "Audit", "inputs": {"decision_id": "d1"}})
        assert r["ok"] is True and r["summary"] == "review pass"
    r = tools["research_request_approval"].fn({"decision_id": "d1"})
    assert r["ok"] is True, r
    rows = tools["research_ledger_query"].fn({"kind": "claims", "filter": {"eligible": True}})["rows"]
    assert [c["claim_id"] for c in rows] == ["c1"]
    assert lines(led)[-1] == ("human-approval-requested", "lead", "synthesis")
