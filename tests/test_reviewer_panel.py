"""The reviewer panel, driven through its widgets in-process against the scripted server
(spec: reviewer.md "Surface", "Runs and states", "History and follow-up", "Boundaries")."""

from __future__ import annotations

import json
import os
import types

import IPython
import pytest

from dsh_notebook.kernel import current_reviewer
from dsh_notebook.llm import ChatClient
from dsh_notebook.llm.session import SessionLog
from dsh_notebook.llm.testing import ScriptedServer
from dsh_notebook.reviewer.runner import Reviewer
from dsh_notebook.widgets import ReviewerPanel

REPLY = {"verdict": "on-track", "headline": "The question was answered.", "summary": "One question, one answer.",
         "insights": [{"title": "Answered with a number",
                       "evidence": [{"marker": "U1", "quote": "How far is the Moon"},
                                    {"marker": "A1", "quote": "a quote nobody wrote"}],
                       "why": "A bare number has no source.", "suggestion": "Ask for the source.",
                       "check": "A source is named.", "confidence": "medium"},
                      {"title": "Short answer", "evidence": [{"marker": "A1", "quote": "384,400 km"}],
                       "why": "w", "suggestion": "s", "check": "c", "confidence": "low"}]}


def reply(headline="The question was answered.", title="Answered with a number", **kw):
    insights = [{**REPLY["insights"][0], "title": title}, REPLY["insights"][1]]
    return {"expect": {"stream": False},
            "reply": {"content": json.dumps({**REPLY, "headline": headline, "insights": insights}), **kw}}


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    return tmp_path


def session(folder, *turns):
    log = SessionLog.create(folder, model="deepseek-chat", name="main")
    for user, answer in turns:
        log.append("turn/start", turn=1)
        log.append("user/message", text=user)
        log.append("assistant/message", text=answer, tool_calls=[])
        log.append("turn/end", status="completed")
    return log


def make_reviewer(srv, sidecar, **kw):
    def factory():
        os.environ["DEEPSEEK_BASE_URL"] = srv.base_url
        try:
            return ChatClient(backoff=0.01)
        finally:
            del os.environ["DEEPSEEK_BASE_URL"]

    changes: list[str] = []
    rv = Reviewer(sidecar, client_factory=factory, on_change=lambda r: changes.append(r.state), **kw)
    rv.changes = changes
    return rv


def chosen(panel):
    """Click Review, and confirm the first-review notice when it shows."""
    panel.review_button.click()
    if panel._notice_box.layout.display != "none":
        panel.confirm_button.click()


def panel_on_moon(home, srv):
    sidecar = home / "nb.dsh"
    log = session(sidecar / "sessions", ("How far is the Moon?", "About 384,400 km."))
    rv = make_reviewer(srv, sidecar)
    panel = ReviewerPanel(rv)
    panel.source.value = "this"
    chosen(panel)
    panel.wait()
    return rv, panel, log


def test_choosing_a_target_says_where_the_evidence_goes_first_then_shows_the_insights(home):
    sidecar = home / "nb.dsh"
    log = session(sidecar / "sessions", ("How far is the Moon?", "About 384,400 km."))
    with ScriptedServer([reply(), reply("Again.")]) as srv:
        rv = make_reviewer(srv, sidecar)
        panel = ReviewerPanel(rv)
        assert repr(panel) == "[reviewer panel]"
        assert "No target chosen" in panel.status.value and panel.insights.value == ""
        assert panel.rereview_button.disabled and panel.pause_button.disabled and panel.stop_button.disabled
        panel.source.value = "this"
        panel.review_button.click()
        # the notice comes before anything is sent
        assert panel._notice_box.layout.display != "none"
        notice = panel.notice.value
        assert "sent to the configured model service" in notice and "127.0.0.1" in notice
        assert "on this machine" in notice and "masked" in notice and "60,000" in notice
        assert srv.requests == [] and rv.state == "no-target"
        panel.confirm_button.click()
        assert panel._notice_box.layout.display == "none"
        assert rv.state == "reviewing" and "Reviewing" in panel.status.value
        assert "running" in panel.insights.value and "completed review" not in panel.status.value
        panel.wait()
        assert rv.target["source"] == "notebook" and rv.target["path"] == str(log.path.resolve())
        html = panel.insights.value
        assert "The question was answered." in html and "<details" in html
        assert "[U1]</code> “How far is the Moon”" in html and "a quote nobody wrote" in html
        assert html.count("unverified: not found in the transcript") == 1  # only the made-up quote
        assert "A bare number has no source." in html and "Ask for the source." in html
        assert "A source is named." in html and "confidence medium" in html
        assert "Watching" in panel.status.value and "last completed review" in panel.status.value
        assert "The whole conversation was read." in panel.status.value
        # the same target again: no second notice, the review starts at once
        panel.review_button.click()
        assert panel._notice_box.layout.display == "none" and rv.state == "reviewing"
        panel.wait()
    assert len(srv.requests) == 2 and "tools" not in srv.requests[0]["body"]
    assert "Again." in panel.insights.value
    panel.close()
    log.close()


def test_hiding_unverified_insights_is_a_display_setting(home):
    with ScriptedServer([reply()]) as srv:
        rv, panel, log = panel_on_moon(home, srv)
    assert not panel.hide_unverified.value
    panel.hide_unverified.value = True
    assert "Answered with a number" not in panel.insights.value and "Short answer" in panel.insights.value
    assert "1 insight(s) with an unverified quote hidden" in panel.insights.value
    assert len(rv.history().get()["insights"]) == 2  # the history keeps it
    panel.close()
    log.close()


def test_a_listed_conversation_and_a_cancelled_notice(home):
    folder = home / "chats"
    folder.mkdir()
    doc = folder / "talk.chat"
    doc.write_text(json.dumps({"messages": [
        {"type": "msg", "time": 1781232974.0, "body": "How far is the Moon?", "sender": "u1", "id": "m0"},
        {"type": "msg", "time": 1781232975.0, "body": "About 384,400 km.", "sender": "bot", "id": "m1"}],
        "users": {"u1": {"username": "u1", "name": "Me", "bot": False},
                  "bot": {"username": "bot", "name": "Jupyternaut", "bot": True}},
        "attachments": {}, "metadata": {}}), encoding="utf-8")
    with ScriptedServer([reply()]) as srv:
        rv = make_reviewer(srv, home / "nb.dsh")
        panel = ReviewerPanel(rv)
        panel.source.value = "chat"
        panel.path.value = str(folder)
        panel.list_button.click()
        panel.wait()
        [(label, value)] = panel.listing.options
        assert "talk" in label and "1 user / 1 AI" in label and panel.listing.layout.display != "none"
        panel.listing.value = value
        assert panel.path.value == str(doc)
        panel.review_button.click()
        panel.cancel_button.click()
        assert "nothing was sent" in panel.message.value and rv.state == "no-target" and srv.requests == []
        chosen(panel)
        panel.wait()
    assert rv.target == {"source": "chat", "path": str(doc.resolve())}
    assert "How far is the Moon" in panel.insights.value
    panel.close()


def test_bad_choices_are_told_in_the_panel(home):
    rv = Reviewer(home / "nb.dsh")
    panel = ReviewerPanel(rv)
    panel.source.value = "this"
    panel.review_button.click()
    assert "no chat yet" in panel.message.value and "#c62828" in panel.message.value
    panel.source.value = "codex"
    assert panel.message.value == "" and "Codex" in panel.path.placeholder
    panel.review_button.click()
    assert "give a path" in panel.message.value
    panel.path.value = str(home / "missing.jsonl")
    panel.review_button.click()
    assert "no such file" in panel.message.value and rv.state == "no-target"
    panel.close()


def test_a_focus_change_reviews_again(home):
    with ScriptedServer([reply(), reply("Seen as a dialogue.")]) as srv:
        rv, panel, log = panel_on_moon(home, srv)
        assert panel.focus.value == rv.focus == "me"
        panel.focus.value = "dialogue"
        assert rv.focus == "dialogue" and rv.state == "reviewing"
        panel.wait()
    assert len(srv.requests) == 2 and "Focus: the dialogue" in srv.requests[1]["body"]["messages"][0]["content"]
    assert "Seen as a dialogue." in panel.insights.value and "focus dialogue" in panel.status.value
    panel.close()
    log.close()


def test_history_switches_the_review_and_questions_go_to_the_one_shown(home):
    with ScriptedServer([reply("First."), reply("Second."), reply("Third.", title="Third insight"),
                         {"expect": {"contains": "evidence"}, "reply": {"content": "The quote of U1."}}]) as srv:
        rv, panel, log = panel_on_moon(home, srv)
        panel.rereview_button.click()
        panel.wait()
        labels = [label for label, _ in panel.history.options]
        assert len(labels) == 2 and labels[0].startswith("2. ") and "Second." in labels[0] and "First." in labels[1]
        assert "Second." in panel.insights.value
        panel.history.value = panel.history.options[1][1]  # the older review
        assert "First." in panel.insights.value and "Second." not in panel.insights.value
        # a newer review arrives (started by watching, not from the panel) while an older one is
        # shown: the notice, not a switch
        rv.mark_read()
        assert panel.new_button.layout.display == "none"
        rv.review_now()
        panel.wait()
        assert "First." in panel.insights.value and rv.unread
        assert panel.new_button.layout.display != "none" and panel.new_button.description == "New: Third insight"
        # the question is bound to the review shown
        panel.question.value = "What is the evidence?"
        panel.ask_button.click()
        panel.wait()
        asked = srv.requests[3]["body"]["messages"]
        assert "First." in asked[0]["content"] and "Second." not in asked[0]["content"]
        assert "Third." not in asked[0]["content"] and asked[-1]["content"] == "What is the evidence?"
        assert "The quote of U1." in panel.answers.value and "What is the evidence?" in panel.answers.value
        [q] = rv.history().questions(rv.history().get(1)["id"])
        assert q["answer"] == "The quote of U1."
        # opening the notice shows the newest review and clears it
        panel.new_button.click()
    assert "Third." in panel.insights.value and not rv.unread and panel.new_button.layout.display == "none"
    assert panel.history.value == panel.history.options[0][1] and panel.answers.value == ""
    panel.close()
    log.close()


def test_pause_resume_and_stop_buttons(home):
    with ScriptedServer([reply(), reply(delay=3.0)]) as srv:
        sidecar = home / "nb.dsh"
        log = session(sidecar / "sessions", ("How far is the Moon?", "Far."))
        rv = make_reviewer(srv, sidecar)
        panel = ReviewerPanel(rv)
        rv.set_target("notebook", log.path)  # chosen elsewhere (%review): the panel follows
        panel.wait()
        assert "The question was answered." in panel.insights.value
        panel.pause_button.click()
        assert rv.state == "paused" and rv.paused and panel.pause_button.description == "Resume"
        assert "Paused on" in panel.status.value
        panel.pause_button.click()
        assert rv.state == "watching" and not rv.paused and panel.pause_button.description == "Pause"
        panel.rereview_button.click()
        assert rv.state == "reviewing" and not panel.stop_button.disabled
        panel.stop_button.click()
        assert rv.state == "watching" and rv.error == "stopped" and panel.stop_button.disabled
        assert "Last run: stopped" in panel.status.value and "#c62828" in panel.status.value
        panel.wait(5)
    panel.close()
    log.close()


def test_connected_is_never_shown_as_reviewed(home):
    sidecar = home / "nb.dsh"
    log = session(sidecar / "sessions", ("How far is the Moon?", "Far."))
    with ScriptedServer([reply(delay=3.0)]) as srv:
        rv = make_reviewer(srv, sidecar)
        panel = ReviewerPanel(rv)
        rv.set_target("notebook", log.path)
        rv.stop()
        rv.wait(5)
    assert rv.state == "watching" and "no completed review yet" in panel.status.value
    assert "reviewed" not in panel.status.value and panel.insights.value == ""
    assert panel.ask_button.disabled and panel.history.options == ()
    panel.close()
    log.close()


def test_the_panel_chains_on_change_and_close_gives_it_back(home):
    with ScriptedServer([reply()]) as srv:
        sidecar = home / "nb.dsh"
        log = session(sidecar / "sessions", ("How far is the Moon?", "Far."))
        rv = make_reviewer(srv, sidecar)
        previous = rv.on_change
        panel = ReviewerPanel(rv)
        assert rv.on_change == panel._on_change
        panel.source.value = "this"
        chosen(panel)
        panel.wait()
        assert rv.changes[0] == "reviewing" and rv.changes[-1] == "watching"  # still called
        panel.close()
        assert rv.on_change is previous
        before = panel.status.value
        rv.pause()
    assert panel.status.value == before and rv.changes[-1] == "paused"
    log.close()


def test_the_kernels_reviewer_by_default(home, monkeypatch):
    shell = types.SimpleNamespace(magics_manager=types.SimpleNamespace(registry={}))
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    panel = ReviewerPanel()
    assert panel.reviewer is current_reviewer(shell) and panel.reviewer.state == "no-target"
    panel.close()
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    with pytest.raises(RuntimeError, match="IPython kernel"):
        ReviewerPanel()
