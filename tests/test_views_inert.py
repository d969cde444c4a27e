"""Each Python view draws from its typed payload through autoescaped Jinja2 templates (issue 22,
item 3), and text from models and logs stays inert in every one of them: a ``<script>``, an
``<img onerror>`` and a ``javascript:`` link in a payload show as text, never as live HTML."""

from __future__ import annotations

import re

import pytest
from test_magic import bundle

HOSTILE = ("<script>alert(1)</script> <img src=x onerror=alert(2)> "
           "[click](javascript:alert(3)) <a href=\"javascript:alert(4)\">x</a>")


def assert_inert(page: str) -> None:
    """No live tag or script URL from HOSTILE in *page*, and the text is there, escaped."""
    assert "<script" not in page and "<img" not in page and "<a href=" not in page, page
    assert not re.search(r"""href\s*=\s*["']?\s*javascript:""", page, re.I), page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;img src=x onerror=alert(2)&gt;" in page, page


def review_payload() -> dict:
    return {"verdict": HOSTILE, "headline": HOSTILE, "summary": HOSTILE, "focus": HOSTILE,
            "at": "2026-05-01T12:34:56.789Z", "model": HOSTILE,
            "insights": [{"title": HOSTILE, "confidence": HOSTILE, "verified": False, "why": HOSTILE,
                          "suggestion": HOSTILE, "check": HOSTILE,
                          "evidence": [{"marker": HOSTILE, "quote": HOSTILE, "verified": False, "why": HOSTILE}]}]}


def decision_payload() -> dict:
    pred = {"value": False, "reason": HOSTILE}
    return {"decision_id": HOSTILE, "question_id": HOSTILE, "revision": 1, "statement": HOSTILE, "status": HOSTILE,
            "confidence": HOSTILE, "limitations": HOSTILE, "awaiting_person": True,
            "predicates": {"can_request_human_approval": pred, "has_unresolved_objections": pred},
            "claims": [{"claim_id": HOSTILE, "eligible": False, "reason": HOSTILE}],
            "human_decisions": [{"revision": 1, "verdict": HOSTILE, "by": HOSTILE, "channel": HOSTILE,
                                 "note": HOSTILE}]}


def test_the_reviewer_views_escape_model_text():
    from dsh_notebook.widgets.reviewer import evidence_html, insight_html, notice_html, review_html

    review = review_payload()
    for page in (review_html(review), insight_html(1, review["insights"][0]),
                 evidence_html(review["insights"][0]["evidence"][0]), notice_html(HOSTILE, HOSTILE, True, 60_000)):
        assert_inert(page)
    page = review_html(review)
    assert page.startswith("<div class='dsh-review'>") and "unverified: not found in the transcript" in page


def test_the_ledger_views_escape_model_text():
    from dsh_notebook.widgets.ledger import claims_html, decision_html, objections_html, sources_html, timeline_html

    page = decision_html(decision_payload())
    assert_inert(page)
    assert "<b>Awaiting your decision</b>" in page and "human decision, revision 1" in page
    summary = {
        "claims": [{"claim_id": HOSTILE, "source_id": HOSTILE, "text": HOSTILE, "quote": HOSTILE,
                    "verdicts": [{"verdict": HOSTILE}], "eligible": False, "reason": HOSTILE}],
        "sources": [{"source_id": HOSTILE, "identifier": HOSTILE, "title": HOSTILE, "verdict": HOSTILE,
                     "retracted": False, "withdrawn": False, "notices": [HOSTILE], "fulltext": None}],
        "objections": [{"objection_id": HOSTILE, "target": {"kind": HOSTILE, "id": HOSTILE}, "reason": HOSTILE,
                        "severity": HOSTILE, "answers": [HOSTILE],
                        "adjudication": {"verdict": HOSTILE, "rationale": HOSTILE}, "state": "open"}],
    }
    for page in (claims_html(summary), sources_html(summary), objections_html(summary),
                 timeline_html([{"seq": 1, "ts": HOSTILE, "type": HOSTILE, "subject": HOSTILE, "role": HOSTILE,
                                 "authority": HOSTILE, "by": HOSTILE, "channel": HOSTILE}])):
        assert_inert(page)


def test_the_chat_view_escapes_model_text():
    from dsh_notebook.widgets.chat import ChatView

    view = ChatView(HOSTILE)
    assert_inert(view._status.value)
    view.add_text(HOSTILE)
    view.add_reasoning(HOSTILE)
    view.on_event({"type": "tool/call", "id": "t1", "name": HOSTILE, "arguments": HOSTILE})
    view.on_event({"type": "tool/result", "id": "t1", "ok": False, "content": HOSTILE})
    view.refresh()
    for part in (view._status, view._think, view._tools, view._answer):
        assert_inert(part.value)
    assert view._tools.value.startswith("<details style='margin:2px 0;border-left:3px solid #c62828")
    view.finish(HOSTILE)
    assert_inert(view._status.value)


def test_the_notebook_bundles_escape_model_text(tmp_path):
    from dsh_notebook.notebook.review import review_bundle

    data, _meta = review_bundle(review_payload(), {"state": "idle", "target": None, "focus": "ai"})
    for mime, value in data.items():
        if isinstance(value, str) and mime in ("text/html", "text/markdown"):
            assert "<script" not in value and "<img" not in value, (mime, value)


def test_a_reckon_title_and_note_stay_text(sh):  # noqa: F811
    _, cap = sh.reckon(f"given x = 2 m\nnote {HOSTILE}\nend {HOSTILE}", line="Hostile <script>alert(5)</script>")
    data = bundle(cap).data
    assert_inert(data["text/html"])
    # Markdown passes raw HTML through, so the Markdown view escapes it too (LaTeX is never HTML)
    assert "<script" not in data["text/markdown"] and "<img" not in data["text/markdown"], data["text/markdown"]


@pytest.mark.parametrize("template", ["review.html.j2", "decision.html.j2"])
def test_the_templates_ship_in_the_package_and_autoescape(template):
    from importlib.resources import files

    from dsh_notebook.widgets.templating import _env, render

    assert files("dsh_notebook.widgets").joinpath("templates", template).is_file()
    assert _env().autoescape is True
    assert render("review.html.j2", mode="evidence", item={"marker": "<b>", "quote": "q", "verified": True}) == (
        "<li><code>[&lt;b&gt;]</code> “q”</li>")
