"""Each Python view draws from its typed payload through autoescaped Jinja2 templates (issue 22,
item 3), and text from models and logs stays inert in every one of them: a ``<script>``, an
``<img onerror>`` and a ``javascript:`` link in a payload show as text, never as live HTML."""

from __future__ import annotations

import re

import pytest
from test_magic import bundle

HOSTILE = ("<script>alert(1)</script> <img src=x onerror=alert(2)> "
           "[click](javascript:alert(3)) <a href=\"javascript:alert(4)\">x</a>")
# closes an inline SVG early, so what follows would be HTML again
SVG_BREAK = "</svg><script>alert(6)</script>"


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


def test_the_reviewer_panel_lines_escape_model_and_log_text(tmp_path):
    """The panel's status line (target, focus, the last run's error, the coverage note), the
    answers to questions and the message line show hostile text as text."""
    import types

    from dsh_notebook.widgets.reviewer import ReviewerPanel

    st = {"state": "paused", "target": {"source": "codex", "path": f"/tmp/{HOSTILE}.jsonl"}, "focus": HOSTILE,
          "error": HOSTILE}
    shown = {"coverage": {"note": HOSTILE}, "masked": 2}
    page = ReviewerPanel._status_html(types.SimpleNamespace(), st, shown, {"at": "2026-05-01T12:34:56Z"})
    assert_inert(page)
    assert page.startswith("<div><b>Reviewer</b> · Paused on <span title='/tmp/&lt;script&gt;")
    assert "last completed review 2026-05-01 12:34 UTC" in page and "2 key-shaped string(s) were masked" in page
    for state in ("reviewing", "idle"):
        assert_inert(ReviewerPanel._status_html(types.SimpleNamespace(), {**st, "state": state}, None, None))

    class History:
        def questions(self, _rid: str) -> list[dict]:
            return [{"question": HOSTILE, "answer": HOSTILE}, {"question": HOSTILE, "error": HOSTILE}]

    page = ReviewerPanel._answers_html(types.SimpleNamespace(_asking={"r1": HOSTILE}), History(), "r1")
    assert_inert(page)
    assert page.count("<b>Q:</b>") == 3 and "not answered: &lt;script&gt;" in page and "waiting for the answer" in page

    told = types.SimpleNamespace(message=types.SimpleNamespace(value=""))
    ReviewerPanel._tell(told, HOSTILE, error=True)
    assert_inert(told.message.value)


def test_the_ledger_explorer_escapes_ledger_text(tmp_path):
    """A statement, claim text and source title from a model show as text in the explorer's
    decision card, header, confirmation sentence and graph; a ``</svg>`` cannot end the picture."""
    from test_ledger_explorer import BIB, EXT, FULLTEXT, LEAD, SCOUT, SHA, ok

    from dsh_notebook.research import Ledger, ledger_path
    from dsh_notebook.widgets import LedgerExplorer

    hostile = f"{HOSTILE} {SVG_BREAK}"
    led = Ledger(ledger_path(tmp_path / "nb.ipynb"))
    ok(led.append("question-posed", {"question_id": "q1", "text": hostile}, LEAD))
    ok(led.append("source-proposed", {"source_id": "s1", "kind": "url", "identifier": "javascript:alert(7)",
                                      "title": hostile, "authors": [hostile], "year": 2010}, SCOUT))
    ok(led.append("source-verified", {"source_id": "s1", "verdict": "retracted", "resolver": "crossref"}, BIB))
    ok(led.append("fulltext-linked", {"source_id": "s1", "locator": "fulltext/s1.txt", "sha256": SHA,
                                      "bytes": len(FULLTEXT), "media_type": "text/plain"}, LEAD))
    ok(led.append("claim-extracted", {"claim_id": "c1", "source_id": "s1", "text": hostile,
                                      "span": {"locator": "p1", "quote": hostile, "fulltext_sha256": SHA}}, EXT))
    ok(led.append("decision-proposed", {"decision_id": "d1", "question_id": "q1", "statement": hostile,
                                        "claim_ids": ["c1"], "confidence": 0.5, "limitations": hostile}, LEAD))
    ex = LedgerExplorer(notebook=tmp_path / "nb.ipynb", poll=60)
    try:
        svg = ex.graph_html.value
        assert_inert(svg)
        assert svg.startswith("<svg") and svg.endswith("</svg>") and svg.count("</svg>") == 1, svg
        assert "&lt;/svg&gt;&lt;script&gt;alert(6)" in svg and ">d1<" in svg and ">retracted<" in svg
        assert "#" not in svg.split("<g ")[0].replace("#1f2328", "").replace("#8c959f", ""), svg  # theme colours
        for page in (ex.header.value, ex.decisions_box.children[0].children[0].value, ex.sources_html.value):
            assert "<script" not in page and "<img" not in page, page
        assert ex.header.value.startswith("<b>Research ledger</b> <code>main.jsonl</code> · 6 event(s)")
        ex._set_pending(("d1", "approved", 1, hostile))
        assert_inert(ex.confirm_text.value)
        assert "(“&lt;script&gt;alert(1)&lt;/script&gt;" in ex.confirm_text.value
        ex._say(hostile)
        assert_inert(ex.message.value)
    finally:
        ex.close()


def test_the_academic_toggle_shows_its_state_as_text_in_theme_colours(tmp_path, monkeypatch):
    """The toggle's HTML is only its style, in JupyterLab theme variables (no written-out colour,
    so the dark theme works); an error in the state file reaches the tooltip, which is text."""
    from dsh_notebook.academic import state
    from dsh_notebook.widgets.academic import AcademicToggle, style_html, tooltip

    css = style_html()
    assert css.startswith("<style>") and css.endswith("</style>")
    assert not re.search(r"#[0-9a-fA-F]{3,8}\b|\b(?:rgba?|hsla?)\s*\(", css), css
    assert "var(--jp-brand-color0)" in css and "var(--jp-ui-inverse-font-color0)" in css
    assert tooltip({"enabled": False, "lastError": HOSTILE}).endswith(f"last error: {HOSTILE}")
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path))
    state.state_path().write_text('{"enabled": true, "lastError": %s}' % __import__("json").dumps(HOSTILE),
                                  encoding="utf-8")
    toggle = AcademicToggle(poll=60)
    try:
        assert toggle.button.value is True and HOSTILE in toggle.button.tooltip
        html_parts = [c.value for c in toggle.children if hasattr(c, "value") and isinstance(c.value, str)]
        assert html_parts == [css]
    finally:
        toggle.close()


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
