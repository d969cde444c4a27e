"""One review run, its evidence check, history and follow-up, through real HTTP against the
scripted server (spec: reviewer.md "A review", "An insight", "History and follow-up")."""

from __future__ import annotations

import json
import os

import pytest

from dsh_notebook.llm import ChatClient
from dsh_notebook.llm.testing import ScriptedServer
from dsh_notebook.reviewer.review import (
    PROMPT_VERSION,
    ReviewHistory,
    ask,
    mask_secrets,
    parse_reply,
    run_review,
    window,
)
from dsh_notebook.reviewer.transcript import number

CHAT = number([
    ("user", "Only reply 'received' until I say go. I am testing your instruction following.", "line:1"),
    ("assistant", "Received. Also, here is a summary of instruction following research...", "line:2"),
    ("user", "Please   compute the current for 12 V across 4 ohm.", "line:3"),
    ("assistant", "The current is 3 A.", "line:4"),
])

GOOD = {
    "verdict": "drifting",
    "headline": "The AI broke the person's test condition in its first reply.",
    "summary": "The person set a test: only reply 'received'. The AI added a summary. The later calculation was fine.",
    "insights": [
        {"title": "Test condition broken",
         "evidence": [{"marker": "U1", "quote": "Only reply 'received' until I say go."},
                      {"marker": "A1", "quote": "Also, here is a summary"}],
         "why": "The person was testing exactly this.", "suggestion": "Repeat the condition and restart the test.",
         "check": "The next reply is the single word 'received'.", "confidence": "high"},
        {"title": "An invented quote",
         "evidence": [{"marker": "U2", "quote": "compute the voltage"}],
         "why": "x", "suggestion": "y", "check": "z", "confidence": "low"},
    ],
}


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    return tmp_path


def client(srv) -> ChatClient:
    os.environ["DEEPSEEK_BASE_URL"] = srv.base_url
    try:
        return ChatClient(backoff=0.01)
    finally:
        del os.environ["DEEPSEEK_BASE_URL"]


TARGET = {"source": "notebook", "path": "nb.dsh/sessions/20261129-101010-abcdef.jsonl"}


def test_a_review_checks_every_quote(home):
    with ScriptedServer([{"expect": {"stream": False}, "reply": {"content": json.dumps(GOOD)}}]) as srv:
        review = run_review(CHAT, focus="ai", client=client(srv), target=TARGET)
    assert review["status"] == "done" and review["verdict"] == "drifting" and review["prompt_version"] == PROMPT_VERSION
    first, second = review["insights"]
    assert [e["verified"] for e in first["evidence"]] == [True, True] and first["verified"] is True
    assert first["evidence"][0]["speaker"] == "user" and first["evidence"][1]["turn"] == 1
    assert second["evidence"][0]["verified"] is False and second["verified"] is False  # kept, marked
    body = srv.requests[0]["body"]
    assert "tools" not in body  # the reviewer has no tools
    assert "Focus: the AI" in body["messages"][0]["content"]
    assert "[U2] Please   compute the current" in body["messages"][1]["content"]


def test_whitespace_differences_still_verify(home):
    reply = {**GOOD, "insights": [{**GOOD["insights"][0],
                                   "evidence": [{"marker": "U2", "quote": "Please compute the current"}]}]}
    with ScriptedServer([{"reply": {"content": "```json\n" + json.dumps(reply) + "\n```"}}]) as srv:
        review = run_review(CHAT, focus="me", client=client(srv), target=TARGET)
    assert review["insights"][0]["evidence"][0]["verified"] is True


def test_an_invalid_reply_is_sent_back_once(home):
    bad = {**GOOD, "verdict": "fine"}
    with ScriptedServer([{"reply": {"content": json.dumps(bad)}}, {"reply": {"content": json.dumps(GOOD)}}]) as srv:
        review = run_review(CHAT, focus="dialogue", client=client(srv), target=TARGET)
    assert review["status"] == "done" and review["attempts"] == 2
    retry = srv.requests[1]["body"]["messages"][-1]["content"]
    assert "verdict" in retry and "JSON object only" in retry


def test_two_invalid_replies_fail_readably(home):
    with ScriptedServer([{"reply": {"content": "I think it went well."}},
                         {"reply": {"content": "{\"verdict\": \"on-track\"}"}}]) as srv:
        review = run_review(CHAT, focus="ai", client=client(srv), target=TARGET)
    assert review["status"] == "failed" and "twice" in review["error"] and "headline" in review["error"]


def test_a_provider_failure_is_a_failed_review(home):
    with ScriptedServer([{"reply": {"status": 401}}]) as srv:
        review = run_review(CHAT, focus="ai", client=client(srv), target=TARGET)
    assert review["status"] == "failed" and review["error"].startswith("HTTP_STATUS")


def test_secrets_are_masked_before_sending(home):
    chat = number([("user", "my key is sk-abcdefghijklmnopqrstuvwx please use it", "line:1"),
                   ("assistant", "ok", "line:2")])
    with ScriptedServer([{"reply": {"content": json.dumps({**GOOD, "insights": GOOD["insights"][:1]})}}]) as srv:
        review = run_review(chat, focus="me", client=client(srv), target=TARGET)
    sent = json.dumps(srv.requests[0]["body"])
    assert "sk-abcdefghijklmnopqrstuvwx" not in sent and "[secret]" in sent and review["masked"] == 1
    assert mask_secrets("Bearer abcdefghijklmnopqrstuvwxyz")[1] == 1


def test_a_long_conversation_is_cut_to_a_tail_and_says_so():
    chat = number([(("user", "assistant")[i % 2], f"message {i} " + "x" * 1000, f"line:{i}") for i in range(200)])
    win = window(chat, 20_000)
    assert win.utterances[-1] == chat[-1] and len(win.utterances) < 25
    assert win.coverage["omitted_utterances"] == 200 - len(win.utterances)
    assert "earlier material was not seen" in win.coverage["note"] and win.coverage["total_turns"] == 100
    assert window(chat[:4]).coverage["note"] == "The whole conversation was read."


@pytest.mark.parametrize("text, problem", [
    ("no json here", "no JSON object"),
    ("{\"verdict\": \"on-track\", \"headline\": \"h\", \"summary\": \"s\", \"insights\": []}", "insights"),
    (json.dumps({**GOOD, "extra": 1}), "extra"),
    (json.dumps({**GOOD, "insights": [{**GOOD["insights"][0], "evidence": [{"marker": "X1", "quote": "q"}]}]}),
     "marker"),
])
def test_parse_reply_names_the_problem(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_reply(text)


def test_unknown_focus():
    with pytest.raises(ValueError, match="the focuses are me, dialogue, ai"):
        run_review(CHAT, focus="everything", client=None, target=TARGET)


def test_history_and_a_follow_up_bound_to_the_chosen_review(home):
    history = ReviewHistory(home / "nb.dsh" / "reviews", TARGET)
    second = {**GOOD, "headline": "Second review."}
    script = [{"reply": {"content": json.dumps(GOOD)}}, {"reply": {"content": json.dumps(second)}},
              {"expect": {"contains": "evidence for the first"}, "reply": {"content": "The quote of U1."}}]
    with ScriptedServer(script) as srv:
        c = client(srv)
        r1 = run_review(CHAT, focus="ai", client=c, target=TARGET)
        history.append(r1)
        history.append(run_review(CHAT, focus="ai", client=c, target=TARGET))
        event = ask(history, "What is the evidence for the first one?", client=c, which=1)
    assert event["review_id"] == r1["id"] and event["answer"] == "The quote of U1."
    sent = srv.requests[2]["body"]["messages"][0]["content"]
    assert "The AI broke the person's test condition" in sent and "Second review." not in sent
    assert history.get()["headline"] == "Second review." and history.get(1)["id"] == r1["id"]
    assert [e["seq"] for e in history.events()] == [1, 2, 3]
    assert history.path.name.startswith("notebook-20261129-101010-abcdef-") and history.path.suffix == ".jsonl"
    with pytest.raises(LookupError, match="there are 2 completed reviews"):
        history.get(5)


def test_two_conversations_never_share_a_history(tmp_path):
    from dsh_notebook.reviewer.review import target_id

    a = {"source": "dsh", "path": "/x/--home-a--/abc/session.jsonl.zstd"}
    b = {"source": "dsh", "path": "/x/--home-b--/def/session.jsonl.zstd"}
    assert target_id(a) != target_id(b) and target_id(a).startswith("dsh-abc-")
    assert target_id({"source": "chat", "path": "/p/untitled.chat"}) != target_id({"source": "chat",
                                                                                   "path": "/q/untitled.chat"})


def test_a_key_across_the_window_edge_is_masked_before_the_cut(home):
    key = "sk-proj-" + "Zq8Lm2Xv" * 6
    long = "x" * 30_000 + " " + key + " " + "y" * 40_000
    chat = number([("user", "look at this log", "line:1"), ("tool", long, "line:2")])
    with ScriptedServer([{"reply": {"content": json.dumps({**GOOD, "insights": GOOD["insights"][:1]})}}]) as srv:
        review = run_review(chat, focus="ai", client=client(srv), target=TARGET, max_chars=40_000)
    sent = json.dumps(srv.requests[0]["body"])
    assert "Zq8Lm2Xv" not in sent and review["masked"] == 1


@pytest.mark.parametrize("secret", [
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "hf_abcdefghijklmnopqrstuvwxyz", "glpat-abcdefghijklmnopqrst",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
])
def test_more_key_shapes_are_masked(secret):
    text, n = mask_secrets(f"here: {secret} done")
    assert n >= 1 and secret not in text
    assert mask_secrets("https://user:hunter2pass@example.org/x")[0] == "https://[secret]@example.org/x"


def test_the_window_keeps_the_turns_request_and_says_when_it_cut():
    chat = number([("user", "the request", "line:1")] + [("tool", "t" * 5000, f"line:{i}") for i in range(2, 20)])
    win = window(chat, 20_000)
    assert win.utterances[0].text == "the request" and win.utterances[0].marker == "U1"
    one = window(number([("user", "u" * 100_000, "line:1")]), 20_000)
    assert one.coverage["cut"] is True and "cut" in one.coverage["note"]


def test_a_quote_from_before_the_window_still_verifies(home):
    chat = number([("user", "early words that matter", "line:1")] + [(("assistant", "user")[i % 2], "z" * 3000,
                                                                      f"line:{i}") for i in range(2, 40)])
    reply = {**GOOD, "insights": [{**GOOD["insights"][0], "evidence": [{"marker": "U1",
                                                                         "quote": "early words that matter"}]}]}
    with ScriptedServer([{"reply": {"content": "Here it is: " + json.dumps(reply) + " {trailing}"}}]) as srv:
        review = run_review(chat, focus="me", client=client(srv), target=TARGET, max_chars=10_000)
    assert review["status"] == "done" and review["insights"][0]["evidence"][0]["verified"] is True


def test_a_quote_attributed_to_the_wrong_speaker_is_unverified(home):
    # the AI's words quoted as the person's: the marker U1 does not hold them
    reply = {**GOOD, "insights": [{**GOOD["insights"][0],
                                   "evidence": [{"marker": "U1", "quote": "Also, here is a summary"}]}]}
    with ScriptedServer([{"reply": {"content": json.dumps(reply)}}]) as srv:
        review = run_review(CHAT, focus="ai", client=client(srv), target=TARGET)
    ev = review["insights"][0]["evidence"][0]
    assert ev["verified"] is False and ev["speaker"] == "user"
