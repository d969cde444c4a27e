"""The ledger explorer widget and ``%ledger`` (spec: research.md "The explorer"; issue 7 item 6)."""

from __future__ import annotations

import getpass
import hashlib
import json
import re

import pytest

from dsh_notebook.artifact import ledgers as LG
from dsh_notebook.research import Actor, Ledger, decision_status, ledger_path
from dsh_notebook.widgets import LedgerExplorer

SCOUT, BIB, EXT, CV = Actor("scout"), Actor("bibliographic_verifier"), Actor("extractor"), Actor("claim_verifier")
LEAD, AUDIT = Actor("lead"), Actor("citation_auditor")
FULLTEXT = b"Aspirin reduced the risk of colorectal cancer by 24% over 20 years."
SHA = hashlib.sha256(FULLTEXT).hexdigest()
MIME = "application/vnd.dsh.ledger+json"


def ok(receipt: dict) -> dict:
    assert receipt["ok"], receipt
    return receipt


def build(notebook, *, request: bool = True) -> Ledger:
    """A ledger up to a decision awaiting the person (with *request*), plus an unverified
    second source and a claim on it that is not eligible."""
    led = Ledger(ledger_path(notebook))
    ok(led.append("question-posed", {"question_id": "q1", "text": "Does aspirin prevent colorectal cancer?"}, LEAD))
    ok(led.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1016/S0140-6736(10)61543-7",
                                      "title": "Aspirin trial", "authors": ["Rothwell"], "year": 2010}, SCOUT))
    ok(led.append("source-verified", {"source_id": "s1", "verdict": "verified", "resolver": "crossref",
                                      "metadata": {"title": "Long-term effect of aspirin on colorectal cancer",
                                                   "authors": ["Peter M Rothwell", "Michelle Wilson"],
                                                   "year": 2010, "doi": "10.1016/S0140-6736(10)61543-7"}}, BIB))
    ok(led.append("fulltext-linked", {"source_id": "s1", "locator": "fulltext/s1.txt", "sha256": SHA,
                                      "bytes": len(FULLTEXT), "media_type": "text/plain"}, LEAD))
    ok(led.append("claim-extracted", {"claim_id": "c1", "source_id": "s1", "text": "Aspirin lowers CRC risk",
                                      "span": {"locator": "p1", "quote": "reduced the risk | by 24%",
                                               "fulltext_sha256": SHA}}, EXT))
    ok(led.append("claim-verified", {"claim_id": "c1", "verdict": "supported", "rationale": "quote"}, CV))
    ok(led.append("source-proposed", {"source_id": "s2", "kind": "arxiv", "identifier": "2101.00001",
                                      "title": "A preprint", "authors": ["Doe"], "year": 2021}, SCOUT))
    ok(led.append("source-verified", {"source_id": "s2", "verdict": "retracted", "resolver": "arxiv"}, BIB))
    ok(led.append("decision-proposed", {"decision_id": "d1", "question_id": "q1", "statement": "Probably yes",
                                        "claim_ids": ["c1"], "confidence": 0.7, "limitations": "one cohort"}, LEAD))
    ok(led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 1, "verdict": "pass"}, AUDIT))
    if request:
        ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD))
    return led


@pytest.fixture(autouse=True)
def own_home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(getpass, "getuser", lambda: "ana")


@pytest.fixture
def explorer(tmp_path):
    made = []

    def make(**kw):
        ex = LedgerExplorer(notebook=tmp_path / "nb.ipynb", **kw)
        made.append(ex)
        return ex

    yield make
    for ex in made:
        ex.close()


def test_no_buttons_until_the_decision_awaits_the_person(tmp_path, explorer):
    led = build(tmp_path / "nb.ipynb", request=False)
    ex = explorer(poll=60)
    assert repr(ex) == "[research ledger explorer]"
    assert ex.buttons == {} and ex.summary["decisions"][0]["status"] == "provisional"
    # the predicates' reasons are shown
    html = ex.decisions_box.children[0].children[0].value
    assert "can_request_human_approval" in html and "may be put to the person" in html
    assert "has_unresolved_objections" in html and "no unresolved objections" in html
    assert "eligible: verified source, linked fulltext" in html
    assert "latest verdict is &#x27;retracted&#x27;" in ex.sources_html.value or "retracted" in ex.sources_html.value
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD))
    ex.refresh()
    assert set(ex.buttons) == {"d1"} and set(ex.buttons["d1"]) == {"approved", "rejected", "needs_revision"}
    assert "Awaiting your decision" in ex.decisions_box.children[0].children[0].value


def test_confirmed_click_records_the_human_decision_and_a_second_is_refused(tmp_path, explorer):
    led = build(tmp_path / "nb.ipynb")
    ex = explorer(poll=60)
    before = len(led.events())
    ex.notes["d1"].value = "checked the quote"
    approve = ex.buttons["d1"]["approved"]
    approve.click()
    assert len(led.events()) == before  # a click only asks for confirmation
    assert ex.confirm_box.layout.display == "flex" and "approved" in ex.confirm_text.value
    ex.cancel_button.click()
    assert len(led.events()) == before and ex.confirm_box.layout.display == "none"
    approve.click()
    ex.confirm_button.click()
    last = led.events()[-1]
    assert last["type"] == "research/human-decision-recorded"
    assert last["actor"] == {"role": "human", "authority": "human_adjudication", "by": "ana", "channel": "explorer"}
    signature = last["data"].pop("signature")  # the deciding person's SSH signature (issue 15)
    assert last["data"] == {"decision_id": "d1", "verdict": "approved", "note": "checked the quote", "by": "ana",
                            "revision": 1}  # the revision the card showed
    assert signature.startswith("-----BEGIN SSH SIGNATURE-----")
    from dsh_notebook.artifact.seal import check_decisions

    assert [f.ok for f in check_decisions(led.path)] == [True]
    assert decision_status(led.fold(), "d1") == "approved"
    assert "Recorded" in ex.message.value and ex.buttons == {}
    # the old button again: refused, nothing written
    n = len(led.events())
    approve.click()
    assert "Refused" in ex.message.value and ex.confirm_box.layout.display == "none"
    ex.confirm_button.click()
    assert len(led.events()) == n
    assert led.verify()["ok"]
    # timeline shows actor and authority
    assert "human_adjudication" in ex.timeline_html.value and "ana · explorer" in ex.timeline_html.value


def test_confirm_refused_when_the_ledger_moved_on(tmp_path, explorer):
    from dsh_notebook.research.human import confirmed_actor

    led = build(tmp_path / "nb.ipynb")
    ex = explorer(poll=60)
    ex.buttons["d1"]["rejected"].click()
    ok(led.append("human-decision-recorded", {"decision_id": "d1", "verdict": "needs_revision"},
                  confirmed_actor("bo", "terminal")))
    n = len(led.events())
    receipt = ex.confirm()
    assert receipt["ok"] is False and receipt["code"] == "LEDGER_STATE"
    assert len(led.events()) == n and "Refused" in ex.message.value


def test_click_records_the_revision_the_card_showed_not_a_later_one(tmp_path, explorer):
    """A revision written behind the widget's back (no redraw yet): the button still carries the
    card's revision 1, so Confirm is refused with "reload" and nothing is written."""
    led = build(tmp_path / "nb.ipynb")
    ex = explorer(poll=600)
    assert "revision 1" in ex.decisions_box.children[0].children[0].value
    ok(led.append("decision-revised", {"decision_id": "d1", "revision": 2, "statement": "NO - the opposite",
                                       "claim_ids": ["c1"], "confidence": "high"}, LEAD))
    ok(led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 2, "verdict": "pass"}, AUDIT))
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 2}, LEAD))
    n = len(led.events())
    ex.buttons["d1"]["approved"].click()
    # the confirmation names the revision and the statement the person saw
    assert "revision 1" in ex.confirm_text.value and "Probably yes" in ex.confirm_text.value
    assert "NO - the opposite" not in ex.confirm_text.value
    receipt = ex.confirm()
    assert receipt["ok"] is False and receipt["code"] == "LEDGER_STATE" and "reload" in receipt["error"]
    assert len(led.events()) == n and led.fold().human_decisions_for("d1") == []
    assert "Refused" in ex.message.value
    # after the redraw the card shows revision 2 and its buttons carry it
    assert "NO - the opposite" in ex.decisions_box.children[0].children[0].value
    ex.buttons["d1"]["approved"].click()
    assert "revision 2" in ex.confirm_text.value and "NO - the opposite" in ex.confirm_text.value
    ok(ex.confirm())
    assert led.events()[-1]["data"]["revision"] == 2


def test_a_redraw_after_a_revision_drops_the_pending_confirmation(tmp_path, explorer):
    led = build(tmp_path / "nb.ipynb")
    ex = explorer(poll=600)
    ex.buttons["d1"]["approved"].click()
    ok(led.append("decision-revised", {"decision_id": "d1", "revision": 2, "statement": "NO",
                                       "claim_ids": ["c1"], "confidence": "high"}, LEAD))
    ok(led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 2, "verdict": "pass"}, AUDIT))
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 2}, LEAD))
    ex.refresh()
    assert ex.confirm_box.layout.display == "none" and "revised to revision 2" in ex.message.value
    n = len(led.events())
    assert ex.confirm() is None and len(led.events()) == n


def test_graph_names_decision_claims_and_sources(tmp_path, explorer):
    build(tmp_path / "nb.ipynb")
    ex = explorer(poll=60)
    svg = ex.graph_html.value
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    for name in ("d1", "c1", "s1", "s2", "Probably yes", "awaiting_human", "retracted"):
        assert f">{name}<" in svg, name
    assert svg.count("<line ") == 2  # d1 -> c1 -> s1


def test_poll_picks_up_a_change(tmp_path, explorer):
    import time

    led = build(tmp_path / "nb.ipynb", request=False)
    ex = explorer(poll=0.05)
    ok(led.append("human-approval-requested", {"decision_id": "d1", "revision": 1}, LEAD))
    deadline = time.time() + 60  # the explorer polls every 0.05 s; a bound, not a speed check
    while not ex.buttons and time.time() < deadline:
        time.sleep(0.05)
    assert "d1" in ex.buttons
    ex.close()
    ex._watcher.join(60)
    assert not ex._watcher.is_alive()


def test_exports(tmp_path):
    led = build(tmp_path / "nb.ipynb")
    state = led.fold()
    md = LG.evidence_markdown(state)
    row = next(r for r in md.splitlines() if r.startswith("| d1 |"))
    assert "c1: Aspirin lowers CRC risk" in row and "reduced the risk \\| by 24%" in row
    assert "| verified | supported | yes |" in row
    bib = LG.bibtex(state)
    assert bib.count("@article{") == 1  # s2 is retracted: not exported
    assert "@article{rothwell2010," in bib and "doi = {10.1016/S0140-6736(10)61543-7}" in bib
    assert "author = {Peter M Rothwell and Michelle Wilson}" in bib and "year = {2010}" in bib
    written = LG.export(led.path, state)
    assert [p.name for p in written] == ["main-evidence.md", "main-sources.bib"]
    assert all(p.parent == tmp_path / "nb.dsh" / "exports" for p in written)


# ----------------------------------------------------------------------------- %ledger


def _out(cap):
    outs = [o for o in cap.outputs if MIME in o.data]
    assert outs, [o.data.keys() for o in cap.outputs]
    return outs[-1]


def test_ledger_magic(sh):  # noqa: F811
    r, cap = sh.run("%ledger show")
    assert r.error_in_exec is not None and "no ledger 'main'" in str(r.error_in_exec)
    led = build(sh.folder / "nb.ipynb")
    r, cap = sh.run("%ledger show")
    assert r.error_in_exec is None, r.error_in_exec
    out = _out(cap)
    d = out.data[MIME]["decisions"][0]
    assert d["awaiting_person"] and d["status"] == "awaiting_human"
    assert "already awaits the person" in d["predicates"]["can_request_human_approval"]["reason"]
    assert "awaiting the person" in out.data["text/plain"] and "<h3>decision d1" in out.data["text/html"]
    assert out.metadata["dsh"]["ledger"] == "main.jsonl"

    r, cap = sh.run("%ledger verify")
    assert r.error_in_exec is None and _out(cap).data[MIME]["verify"]["ok"] is True

    r, cap = sh.run("%ledger export --format bibtex")
    out = _out(cap)
    assert out.data[MIME]["export"] == ["main-sources.bib"] and "main-sources.bib" in out.data["text/markdown"]
    assert (sh.sidecar / "exports" / "main-sources.bib").exists()
    assert not (sh.sidecar / "exports" / "main-evidence.md").exists()
    r, cap = sh.run("%ledger export")
    assert (sh.sidecar / "exports" / "main-evidence.md").exists()

    r, cap = sh.run("%ledger explore")
    assert r.error_in_exec is None
    widgets = [o for o in cap.outputs if "application/vnd.jupyter.widget-view+json" in o.data]
    assert widgets and widgets[-1].data["text/plain"] == "[research ledger explorer]"

    r, _ = sh.run("%ledger frobnicate")
    assert r.error_in_exec is not None and "%ledger show|explore|verify|export" in str(r.error_in_exec)
    r, _ = sh.run("%ledger show --format md")
    assert r.error_in_exec is not None and "--format is for export" in str(r.error_in_exec)

    # a damaged ledger: verify reports the line
    lines = led.path.read_bytes().splitlines(keepends=True)
    lines[2] = re.sub(rb'"Aspirin trial"', b'"Aspirin trail"', lines[2])
    led.path.write_bytes(b"".join(lines))
    r, cap = sh.run("%ledger verify")
    v = _out(cap).data[MIME]["verify"]
    assert v["ok"] is False and any(p["line"] == 4 for p in v["problems"]), json.dumps(v)
