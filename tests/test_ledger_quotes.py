"""The ledger's quote check (issue 21, item 4): ``quote_in_fulltext`` folds only typographic
punctuation and spacing, never digits, superscripts or letters, and an ellipsis never bridges
(each fragment verbatim and in order; an elision that leaves out a negation stays unfound).
The reviewer applies the same rule (tests/test_review_quotes.py)."""

from __future__ import annotations

import pytest

from dsh_notebook.research import Actor, Ledger, ledger_path
from dsh_notebook.research.claims import quote_in_fulltext
from dsh_notebook.research_pipeline.fulltext import link_fulltext

PAPER = ("Results.\n\nThe patients’ “resting” pressure fell by 5\u00a0mmHg – in twelve weeks.\n"
         "Cultures reached 10⁶ cells per millilitre.\n"
         "The drug is not safe in children, and it is safe in adults.\n")


@pytest.fixture
def led(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    ledger = Ledger(ledger_path(tmp_path / "nb.ipynb"))
    assert ledger.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1000/q"},
                         Actor("scout"))["ok"]
    paper = tmp_path / "paper.txt"
    paper.write_text(PAPER, encoding="utf-8")
    assert link_fulltext(ledger, "s1", str(paper), actor=Actor("lead"), sidecar=tmp_path / "nb.dsh")["ok"]
    return ledger


def check(led, quote: str) -> tuple[bool, str]:
    sha = led.fold().sources["s1"].fulltext["sha256"]
    cid = f"c{len(led.fold().claims) + 1}"
    assert led.append("claim-extracted", {"claim_id": cid, "source_id": "s1", "text": "x", "span": {
        "locator": "p1", "quote": quote, "fulltext_sha256": sha}}, Actor("extractor"))["ok"]
    return quote_in_fulltext(led.fold(), cid, sidecar=led.path.parent.parent)


def test_straight_quotes_dashes_and_spaces_match_the_typographic_text(led):
    ok, why = check(led, "The patients' \"resting\" pressure fell by 5 mmHg - in twelve weeks.")
    assert ok is True, why


def test_digits_and_superscripts_are_never_folded(led):
    ok, why = check(led, "Cultures reached 106 cells per millilitre.")
    assert ok is False and "does not occur" in why
    assert check(led, "Cultures reached 10⁶ cells")[0] is True


def test_case_is_not_folded(led):
    assert check(led, "the patients’ “resting” pressure")[0] is False


def test_an_ellipsis_checks_each_fragment_in_order(led):
    assert check(led, "The patients’ … fell by 5 mmHg")[0] is True
    ok, why = check(led, "fell by 5 mmHg … The patients’")
    assert ok is False and "fragment 2 of 2" in why


def test_an_elision_that_leaves_out_not_is_unverified(led):
    ok, why = check(led, "The drug is … safe in children")
    assert ok is False and "'not'" in why
