"""jupyterlab-chat ``.chat`` documents (dsh_notebook.reviewer.sources.jupyter_chat): every real
fixture in ../shared/fixtures/logs/jupyter-chat, then synthetic documents for the interrupted-
reply rule, bots, deleted messages, titles, bad files and listing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dsh_notebook.reviewer.sources import jupyter_chat


def _logs_dir() -> Path:
    shared = os.environ.get("DSH_SHARED_DIR")
    base = Path(shared) if shared else Path(__file__).resolve().parents[2] / "shared"
    return base / "fixtures" / "logs"


CHAT_DIR = _logs_dir() / "jupyter-chat"
needs_fixtures = pytest.mark.skipif(
    not CHAT_DIR.is_dir(), reason=f"shared fixtures not found at {CHAT_DIR} (set DSH_SHARED_DIR to the shared folder)"
)

FR = "jupyter-ai-acp-claude-tool-calls-fr.chat"
USER_ONLY = "jupyterlab-chat-user-only-attachment-edited.chat"

#: per fixture: markers in order, (user, AI) counts, title, id
EXPECTED = {
    FR: (["U1", "A1", "U2", "T2", "T2", "A2", "A2", "A2"], (2, 4), "jupyter-ai-acp-claude-tool-calls-fr", "c59a1c4d-5365-4a3c-9ee4-2accf4b63aea"),
    USER_ONLY: (["U1", "U2"], (2, 0), "jupyterlab-chat-user-only-attachment-edited", "14137bd5-f13b-4a3d-9301-c88bad2513ee"),
}


def fixture(name: str) -> Path:
    return CHAT_DIR / name


def texts(utterances, speaker=None) -> list[str]:
    return [u.text for u in utterances if speaker is None or u.speaker == speaker]


# --------------------------------------------------------------------------- every fixture


@needs_fixtures
def test_every_fixture_file_has_expectations():
    names = sorted(p.name for p in CHAT_DIR.iterdir() if p.is_file())
    assert names == sorted(EXPECTED), "a .chat fixture was added or removed: give it its expectations here"


@needs_fixtures
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_markers_counts_and_listing_entry(name):
    markers, (n_user, n_ai), title, cid = EXPECTED[name]
    us = jupyter_chat.read(fixture(name))
    assert [u.marker for u in us] == markers
    conv = jupyter_chat.conversation(fixture(name))
    assert (conv.source, conv.id, conv.title, conv.user_messages, conv.ai_messages) == ("chat", cid, title, n_user, n_ai)
    doc = json.loads(fixture(name).read_text(encoding="utf-8"))
    for u in us:
        assert u.key.split(":")[1] in {m["id"] for m in doc["messages"]}


@needs_fixtures
def test_french_prompt_persona_reply_tools_and_interrupted_draft():
    us = jupyter_chat.read(fixture(FR))
    assert texts(us, "user") == ["hi", "donne moi un résumé succinct de ce que fait ce notebook"]
    ai = texts(us, "assistant")
    assert ai[0] == "hi. ready."
    assert ai[1].startswith("Notebook chapitre 8 Manning — **stratégies d'indexation avancées pour RAG**")
    assert ai[2] == "hi."
    assert ai[3].startswith("Notebook chapitre 8 Manning — **stratégies d'indexation avancées RAG** sur Wikivoyage")
    assert ai[3].endswith("Plupart des ingestions commentées (déjà exécutées).")
    assert not any(t.endswith("— comp") for t in ai)  # the cut-short stream, resent in full
    tools = [u for u in us if u.speaker == "tool"]
    assert [u.key for u in tools] == [
        "message:3f7c2d55-0bd4-4320-8555-55019a25c60d:tool:toolu_01PkFkHcjxtKi827AJFFoqrw",
        "message:3f7c2d55-0bd4-4320-8555-55019a25c60d:tool:toolu_01SJkWiZBKcXTjKLFcyr9cEb",
    ]
    assert tools[0].text.startswith("jq -r '.cells[] | select(.cell_type==\"markdown\")")
    assert "(execute, completed)\n## 8.4/ Embedding strategy" in tools[0].text
    assert all(len(t.text) < 2400 for t in tools)
    conv = jupyter_chat.conversation(fixture(FR))
    assert (conv.started, conv.updated) == ("2026-08-20T07:19:24.323Z", "2026-08-20T07:27:00.514Z")


@needs_fixtures
def test_user_only_document_with_an_attachment():
    us = jupyter_chat.read(fixture(USER_ONLY))
    assert texts(us) == ["how to fix the code using ai jupyter lab", "can u fix the code\n[attached: file inheritance/Untitled.ipynb]"]
    assert not any(u.speaker == "assistant" for u in us)


@needs_fixtures
def test_listing_the_fixture_folder():
    convs = jupyter_chat.list_conversations(CHAT_DIR)
    assert [(c.title, c.user_messages, c.ai_messages) for c in convs] == [
        ("jupyter-ai-acp-claude-tool-calls-fr", 2, 4),
        ("jupyterlab-chat-user-only-attachment-edited", 2, 0),
    ]


# --------------------------------------------------------------------------- synthetic

ME = "c00bf7e697fa4fc79635815cbde28633"
BOT = "jupyter-ai-personas::jupyter_ai::Jupyternaut"
USERS = {ME: {"username": ME, "bot": False, "display_name": "Me"}, BOT: {"username": BOT, "bot": True}}


def msg(n: int, sender: str, body: str, **extra) -> dict:
    return {"id": f"m{n}", "sender": sender, "body": body, "time": 1_780_000_000 + n, "type": "msg", "raw_time": False, **extra}


def write(path: Path, messages: list[dict], users: dict | None = None, **extra) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"messages": messages, "users": USERS if users is None else users, "attachments": {}, "metadata": {}, **extra}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def summary(us) -> list[tuple[str, str]]:
    return [(u.marker, u.text) for u in us]


def test_interrupted_reply_rule(tmp_path):
    messages = [
        msg(1, ME, "explain"),
        msg(2, BOT, "Here is the"),  # an exact prefix of the resend
        msg(3, BOT, "Here is the answer in full."),
        msg(4, ME, "and?"),
        msg(5, BOT, "Short."),  # a user message follows: never a draft
        msg(6, ME, "more"),
        msg(7, BOT, "Sure."),
        msg(8, BOT, "The long part of the reply is longer and sta"),  # cut mid-word, resent re-tokenised
        msg(9, BOT, "The long part of the reply is longer and starts the same."),
        msg(10, BOT, "hi."),
        msg(11, BOT, "hi there, a longer message"),  # "hi." has no word to cut and is not a prefix: kept
    ]
    us = jupyter_chat.read(write(tmp_path / "a.chat", messages))
    assert summary(us) == [
        ("U1", "explain"),
        ("A1", "Here is the answer in full."),
        ("U2", "and?"),
        ("A2", "Short."),
        ("U3", "more"),
        ("A3", "Sure."),
        ("A3", "The long part of the reply is longer and starts the same."),
        ("A3", "hi."),
        ("A3", "hi there, a longer message"),
    ]


def test_bots_deleted_messages_tool_calls_and_keys(tmp_path):
    messages = [
        msg(1, ME, "run it", attachments=["att-1", "missing"]),
        msg(2, "someone-else", "a colleague's words"),
        msg(3, "some-bot-id", "", metadata={"tool_calls": [{"tool_call_id": "tc1", "title": "ls", "kind": "execute", "status": "failed", "raw_output": {"error": "denied"}}, {"title": "think", "status": "pending"}]}),
        msg(4, "some-bot-id", "deleted text", deleted=True),
        msg(5, "jupyter-ai-personas::x::Unknown", "a persona not in users"),
        {"id": "m6", "sender": ME, "body": "a notice", "type": "notice", "time": 1_780_000_006},
        msg(7, "some-bot-id", "done", metadata={"tool_calls": [{"tool_call_id": "tc2", "title": "cat a", "raw_output": "x" * 3000}]}),
        "junk",
    ]
    users = {**USERS, "some-bot-id": {"bot": True}, "someone-else": {"bot": False}}
    path = write(tmp_path / "b.chat", messages, users=users, attachments={"att-1": {"type": "notebook", "value": "a.ipynb"}})
    us = jupyter_chat.read(path)
    assert [(u.marker, u.key) for u in us] == [
        ("U1", "message:m1"),
        ("U2", "message:m2"),
        ("T2", "message:m3:tool:tc1"),
        ("T2", "message:m3:tool:1"),
        ("A2", "message:m5"),
        ("T2", "message:m7:tool:tc2"),
        ("A2", "message:m7"),
    ]
    assert us[0].text == "run it\n[attached: notebook a.ipynb]"
    assert us[2].text == 'ls (execute, failed)\n(error) {"error": "denied"}'
    assert us[3].text == "think (pending)\n(no output)"
    assert us[5].text.endswith("[… 1,000 more characters not shown]")


def test_untitled_documents_take_the_first_prompt_as_title(tmp_path):
    conv = jupyter_chat.conversation(write(tmp_path / "untitled1.chat", [msg(1, ME, "  why is   my plot empty?  "), msg(2, BOT, "Because.")]))
    assert (conv.title, conv.id, conv.user_messages, conv.ai_messages) == ("why is my plot empty?", "untitled1", 1, 1)
    assert conv.started == "2026-05-28T20:26:41.000Z"
    named = jupyter_chat.conversation(write(tmp_path / "plots.chat", [msg(1, ME, "hello")], metadata={"id": "abc"}))
    assert (named.title, named.id) == ("plots", "abc")


def test_bad_documents(tmp_path):
    torn = tmp_path / "torn.chat"
    torn.write_text('{"messages": [{"body": "hi"', encoding="utf-8")
    with pytest.raises(ValueError, match="torn.chat is not a jupyterlab-chat document: not JSON"):
        jupyter_chat.read(torn)
    wrong = tmp_path / "wrong.chat"
    wrong.write_text('{"messages": "no"}', encoding="utf-8")
    with pytest.raises(ValueError, match="expected an object with a 'messages' list"):
        jupyter_chat.read(wrong)


def test_listing_walks_folders_and_skips_hidden_ones(tmp_path, monkeypatch):
    write(tmp_path / "a" / "b" / "deep.chat", [msg(1, ME, "deep question"), msg(2, BOT, "deep answer")])
    write(tmp_path / "top.chat", [msg(5, ME, "top question")])
    write(tmp_path / ".ipynb_checkpoints" / "top-checkpoint.chat", [msg(9, ME, "a checkpoint copy")])
    write(tmp_path / "node_modules" / "x.chat", [msg(9, ME, "vendored")])
    write(tmp_path / "empty.chat", [])
    (tmp_path / "broken.chat").write_text("{", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a chat", encoding="utf-8")
    convs = jupyter_chat.list_conversations(tmp_path)
    assert [(c.title, c.user_messages, c.ai_messages) for c in convs] == [("top", 1, 0), ("deep", 1, 1)]
    monkeypatch.chdir(tmp_path / "a")
    assert jupyter_chat.default_root() == tmp_path / "a"
    assert [c.title for c in jupyter_chat.list_conversations()] == ["deep"]
