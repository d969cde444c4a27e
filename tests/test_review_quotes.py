"""The reviewer's evidence check (issue 21, item 4): a faithful quote written with typographic
quotes, apostrophes, dashes or a non-breaking space is verified; digits, superscripts and
letters are never folded; an ellipsis never bridges, and a quote whose elided part removes a
negation stays unverified, with the reason the person sees."""

from __future__ import annotations

import pytest

from dsh_notebook.notebook.review import review_bundle
from dsh_notebook.quotes import find_quote, fold
from dsh_notebook.reviewer.review import verify_evidence
from dsh_notebook.reviewer.transcript import number

UTTERANCES = number([
    ("user", "don't change the \"public\" API -- it's used by 3 teams; keep 10^6 rows as 10**6", "line:1"),
    ("assistant", "I will not touch the public API, and I will never drop rows.", "line:2"),
])


def verified(marker: str, quote: str) -> dict:
    ins = {"title": "t", "evidence": [{"marker": marker, "quote": quote}], "why": "w", "suggestion": "s",
           "check": "c", "confidence": "low"}
    return verify_evidence([ins], UTTERANCES)[0]["evidence"][0]


@pytest.mark.parametrize("quote", [
    "don’t change the “public” API — it’s used by 3 teams",
    "don't change the \u201cpublic\u201d API \u2013 it's used",
    "used by\u00a03\u202fteams",
    "don’t  change\n the",
])
def test_typographic_forms_of_what_the_person_typed_are_verified(quote):
    assert verified("U1", quote)["verified"] is True


@pytest.mark.parametrize("quote", ["keep 106 rows", "used by three teams", "Don't change", "keep 10⁶ rows"])
def test_digits_superscripts_case_and_words_are_not_folded(quote):
    e = verified("U1", quote)
    assert e["verified"] is False and e["why"]


def test_superscripts_against_digits_both_ways():
    assert not find_quote("10⁶", "106") and not find_quote("106", "10⁶") and not find_quote("x²", "x2")
    assert fold("a\u00a0\u2014\u2009b…") == "a - b..."


def test_an_ellipsis_never_bridges_and_fragments_keep_their_order():
    assert verified("U1", "don’t change … used by 3 teams")["verified"] is True
    e = verified("U1", "used by 3 teams … don't change")
    assert e["verified"] is False and "fragment 2 of 2" in e["why"]
    assert verified("U1", "don't change [...] 3 teams")["verified"] is True
    assert verified("U1", "...")["verified"] is False


@pytest.mark.parametrize("quote", ["I will … touch the public API", "and I will … drop rows"])
def test_an_elision_that_removes_a_negation_stays_unverified(quote):
    e = verified("A1", quote)
    assert e["verified"] is False and "left out" in e["why"]


def test_without_is_a_negation_and_a_literal_ellipsis_still_matches():
    assert not find_quote("ran … tests", "ran without tests")
    assert find_quote("wait... what", "he said wait… what?")


def test_the_reason_is_shown_next_to_an_unverified_quote():
    ins = {"title": "Touches the API", "evidence": [{"marker": "A1", "quote": "I will … touch the public API"}],
           "why": "w", "suggestion": "s", "check": "c", "confidence": "low"}
    review = {"id": "r1", "status": "done", "verdict": "drifting", "headline": "h", "summary": "s",
              "insights": verify_evidence([ins], UTTERANCES), "coverage": {"note": "The whole conversation was read."},
              "focus": "ai"}
    data, _ = review_bundle(review, {"state": "done"})
    html = data["text/html"]
    assert "unverified: not found in the transcript</em> (the part left out before fragment 2 holds 'not'" in html


def test_a_note_is_never_evidence():
    utts = number([("user", "go", "line:1"), ("note", "[compacted history] Codex compacted the conversation here.",
                                              "line:2"), ("assistant", "done", "line:3")])
    ins = {"title": "t", "evidence": [{"marker": "N1", "quote": "Codex compacted"}], "why": "w", "suggestion": "s",
           "check": "c", "confidence": "low"}
    [e] = verify_evidence([ins], utts)[0]["evidence"]
    assert e["verified"] is False and e["speaker"] == "note" and "not words of either side" in e["why"]


def test_the_panel_shows_the_reason_as_text_never_as_html():
    from dsh_notebook.widgets.reviewer import evidence_html

    e = {"marker": "A1", "quote": "<b>x</b>", "verified": False,
         "why": "fragment 1 of 2 ('<img src=x onerror=alert(1)>') does not occur"}
    html = evidence_html(e)
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html and "<b>" not in html


@pytest.mark.parametrize("quote, text", [
    ("The treatment was ... safe", "The treatment was unsafe for most patients."),
    ("the effect was ... significant", "the effect was insignificant."),
    ("the effect was ... significant", "the effect was non-significant."),
    ("it is ... effective", "it is ineffective in adults."),
])
def test_an_elision_never_cuts_inside_a_word(quote, text):
    from dsh_notebook.quotes import find_quote

    r = find_quote(quote, text)
    assert not r.found and ("inside a word" in r.reason or "'non-'" in r.reason)
