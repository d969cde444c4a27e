"""The reviewer's lifecycle through real HTTP against the scripted server: targets, states,
generations (stale results never win), stop, timeout, watching, pause, restore (spec:
reviewer.md "Runs and states")."""

from __future__ import annotations

import json
import os
import time

import pytest

from dsh_notebook.llm import ChatClient
from dsh_notebook.llm.session import SessionLog
from dsh_notebook.llm.testing import ScriptedServer
from dsh_notebook.reviewer.runner import Reviewer

REPLY = {"verdict": "on-track", "headline": "The question was answered.", "summary": "One question, one answer.",
         "insights": [{"title": "Answered", "evidence": [{"marker": "U1", "quote": "How far is the Moon?"}],
                       "why": "w", "suggestion": "s", "check": "c", "confidence": "medium"}]}


def reply(headline="The question was answered.", **kw):
    return {"reply": {"content": json.dumps({**REPLY, "headline": headline}), **kw}}


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    return tmp_path


def session(folder, *turns):
    log = SessionLog.create(folder, model="deepseek-chat", name="main")
    for user, answer in turns:
        add_turn(log, user, answer)
    return log


def add_turn(log, user, answer):
    log.append("turn/start", turn=1)
    log.append("user/message", text=user)
    log.append("assistant/message", text=answer, tool_calls=[])
    log.append("turn/end", status="completed")


def reviewer(srv, sidecar, **kw):
    def factory():
        os.environ["DEEPSEEK_BASE_URL"] = srv.base_url
        try:
            return ChatClient(backoff=0.01)
        finally:
            del os.environ["DEEPSEEK_BASE_URL"]

    changes = []
    r = Reviewer(sidecar, client_factory=factory, on_change=lambda rv: changes.append(rv.state), **kw)
    r.changes = changes
    return r


def test_choosing_a_target_reviews_at_once_and_keeps_history(home):
    sidecar = home / "nb.dsh"
    log = session(sidecar / "sessions", ("How far is the Moon?", "About 384,400 km."))
    with ScriptedServer([reply()]) as srv:
        r = reviewer(srv, sidecar)
        assert r.state == "no-target"
        r.set_target("notebook", log.path, focus="ai")
        assert r.state == "reviewing"
        r.wait()
    st = r.status()
    assert st["state"] == "watching" and st["unread"] and st["latest"]["headline"] == "The question was answered."
    assert st["latest"]["insights"][0]["evidence"][0]["verified"] is True
    assert r.changes[0] == "reviewing" and r.changes[-1] == "watching"
    [event] = r.history().events()
    assert event["type"] == "review" and event["review"]["focus"] == "ai"
    saved = json.loads((home / "home" / "reviewer.json").read_text(encoding="utf-8"))
    assert saved == {"target": {"source": "notebook", "path": str(log.path.resolve())}, "focus": "ai", "paused": False}
    assert json.loads((sidecar / "reviewer.json").read_text(encoding="utf-8")) == saved
    log.close()


def at_server(cond) -> None:
    """Wait until ``cond()`` holds (what the scripted server saw): polls for at most 120 s, then
    fails; nothing is asserted about how long it took (issue 22: no test depends on timing)."""
    for _ in range(12000):
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError("the server never saw what the test waits for")


def test_a_stale_result_never_wins(home):
    sidecar = home / "nb.dsh"
    log = session(sidecar / "sessions", ("How far is the Moon?", "Far."))
    with ScriptedServer([reply("old focus", delay=3.0), reply("new focus")]) as srv:
        r = reviewer(srv, sidecar)
        r.set_target("notebook", log.path, focus="me")
        at_server(lambda: srv.remaining == 1)  # the first request is at the server
        r.set_focus("dialogue")  # the first run is still waiting for its (held) reply
        r.wait(120)
    assert r.status()["latest"]["headline"] == "new focus"
    statuses = [e["review"]["status"] for e in r.history().events()]
    assert sorted(statuses) == ["done", "superseded"]  # kept, marked
    log.close()


def test_stop_and_timeout_give_readable_states(home):
    sidecar = home / "nb.dsh"
    log = session(sidecar / "sessions", ("How far is the Moon?", "Far."))
    with ScriptedServer([reply(delay=30.0), reply(delay=30.0)]) as srv:  # held far past the 0.5 s timeout
        r = reviewer(srv, sidecar)
        r.set_target("notebook", log.path)
        at_server(lambda: srv.remaining == 1)  # the review's request is held by the server
        r.stop()
        assert r.state == "watching" and r.error == "stopped"
        r.wait(5)
        assert r.status()["latest"] is None
        slow = reviewer(srv, sidecar, timeout=0.5)
        slow.set_target("notebook", log.path)
        slow.wait(60)  # a bound: the 0.5 s timeout ends it
    assert slow.state == "watching" and "longer than 0.5 s" in slow.error and "timeout" in slow.error
    log.close()


def test_this_notebooks_chat_is_reviewed_after_a_turn_with_a_new_user_message(home):
    sidecar = home / "nb.dsh"
    log = session(sidecar / "sessions", ("How far is the Moon?", "Far."))
    with ScriptedServer([reply(), reply("second")]) as srv:
        r = reviewer(srv, sidecar)
        r.set_target("notebook", log.path)
        r.wait()
        assert r.turn_completed(log.path) is False  # nothing new
        add_turn(log, "And the Sun?", "Farther.")
        r.pause()
        assert r.turn_completed(log.path) is False and r.state == "paused"
        r.resume()
        add_turn(log, "And Mars?", "It depends.")
        assert r.turn_completed(log.path) is True
        r.wait()
    assert r.status()["latest"]["headline"] == "second" and len(srv.requests) == 2
    log.close()


def chat_doc(*bodies):
    return json.dumps({"messages": [{"type": "msg", "time": 1781232974.0 + i, "body": b, "sender": "u1", "id": f"m{i}"}
                                    for i, b in enumerate(bodies)],
                       "users": {"u1": {"username": "u1", "name": "Me", "bot": False}},
                       "attachments": {}, "metadata": {}})


def test_external_logs_are_polled_and_debounced(home):
    doc = home / "talk.chat"
    doc.write_text(chat_doc("How far is the Moon?"), encoding="utf-8")
    with ScriptedServer([reply(), reply("after the new message")]) as srv:
        r = reviewer(srv, home / "nb.dsh", poll=0.05, debounce=0.1)
        r.set_target("chat", doc)
        r.wait()
        doc.write_text(chat_doc("How far is the Moon?", "And the Sun?"), encoding="utf-8")
        at_server(lambda: len(srv.requests) == 2)
        r.wait()
        r.close()
    assert r.status()["latest"]["headline"] == "after the new message"


def test_restore_brings_back_the_choice_without_reviewing(home):
    sidecar = home / "nb.dsh"
    log = session(sidecar / "sessions", ("How far is the Moon?", "Far."))
    with ScriptedServer([reply()]) as srv:
        r = reviewer(srv, sidecar)
        r.set_target("notebook", log.path, focus="dialogue")
        r.wait()
        r.pause()
        again = reviewer(srv, sidecar)
        assert again.restore() is True
    st = again.status()
    assert st["target"]["path"] == str(log.path.resolve()) and st["focus"] == "dialogue" and st["paused"]
    assert st["state"] == "paused" and st["latest"]["headline"] == "The question was answered."
    assert len(srv.requests) == 1  # the restore itself asked nothing
    log.close()


def test_bad_choices_are_refused(home):
    r = Reviewer(home / "nb.dsh")
    with pytest.raises(ValueError, match="the sources are"):
        r.set_target("slack", home)
    with pytest.raises(FileNotFoundError):
        r.set_target("codex", home / "missing.jsonl")
    with pytest.raises(ValueError, match="focuses"):
        r.set_focus("everything")
    with pytest.raises(RuntimeError, match="target"):
        r.review_now()
    assert r.state == "no-target"


def test_a_message_during_a_review_is_reviewed_when_it_ends(home):
    doc = home / "talk.chat"
    doc.write_text(chat_doc("How far is the Moon?"), encoding="utf-8")
    with ScriptedServer([reply("first", delay=3.0), reply("after the message")]) as srv:
        r = reviewer(srv, home / "nb.dsh", poll=0.05, debounce=0.05)
        r.set_target("chat", doc)
        at_server(lambda: len(srv.requests) == 1)  # the first review is under way (its reply held 3 s)
        doc.write_text(chat_doc("How far is the Moon?", "And the Sun?"), encoding="utf-8")
        at_server(lambda: len(srv.requests) == 2)
        r.wait()
        r.close()
    assert r.status()["latest"]["headline"] == "after the message"


def test_a_new_notebook_does_not_take_another_notebooks_target(home):
    sidecar = home / "a.dsh"
    log = session(sidecar / "sessions", ("How far is the Moon?", "Far."))
    with ScriptedServer([reply()]) as srv:
        reviewer(srv, sidecar).set_target("notebook", log.path, focus="ai")
        other = reviewer(srv, home / "b.dsh")
        assert other.restore() is False
    assert other.target is None and other.focus == "ai"  # focus and pause carry over, the target does not
    log.close()


def test_a_file_of_another_kind_is_refused_as_a_target(home):
    bogus = home / "notes.txt"
    bogus.write_text("just some text\n", encoding="utf-8")
    r = Reviewer(home / "nb.dsh")
    with pytest.raises(ValueError):
        r.set_target("claude", bogus)
    assert r.target is None and r.state == "no-target"
