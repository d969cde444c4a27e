"""Our own %%chat session logs as transcripts (dsh_notebook.reviewer.sources.notebook): a session
written with SessionLog is read back, notices are not the person's words, listings by notebook,
sidecar or sessions folder."""

from __future__ import annotations

from dsh_notebook.llm.session import SessionLog
from dsh_notebook.reviewer.sources import notebook

GATE = "Before you deliver: state the assumptions and check the units."


def chat(folder, name="units-check", prompt="How long does 3 km take at 5 km/h?") -> SessionLog:
    """One turn: a tool call and its result, a first answer, the academic gate's notice, the
    final answer; then a second turn whose tool refuses."""
    log = SessionLog.create(folder, model="deepseek-v4-flash", preset="reckoner", tools=["eval"], system="sys",
                            name=name)
    log.append("turn/start", turn=1)
    log.append("user/message", text=prompt)
    log.append("step/start", step=1)
    call = {"id": "call_1", "name": "eval", "arguments": '{"formula": "3 km / (5 km/h)", "slot": "t"}'}
    log.append("assistant/message", text="", tool_calls=[call], reasoning="I should compute it.")
    log.append("tool/call", **call)
    log.append("tool/result", id="call_1", name="eval", ok=True, content={"ok": True, "value": "0.6 h"})
    log.append("step/end", step=1)
    log.append("step/start", step=2)
    log.append("assistant/message", text="It takes 0.6 h.", tool_calls=[])
    log.append("step/end", step=2)
    log.append("notice", kind="academic-switch", form="notice", text=GATE)
    log.append("step/start", step=3)
    log.append("assistant/message", text="Assuming a constant 5 km/h, it takes 0.6 h (36 min).", tool_calls=[])
    log.append("step/end", step=3)
    log.append("turn/end", status="completed")
    log.append("turn/start", turn=2)
    log.append("user/message", text="And 1e400 km?")
    log.append("step/start", step=1)
    bad = {"id": "call_2", "name": "eval", "arguments": '{"formula": "1e400 km"}'}
    log.append("assistant/message", text="Let me try.", tool_calls=[bad])
    log.append("tool/call", **bad)
    log.append("tool/result", id="call_2", name="eval", ok=False, content={"ok": False, "error": "x" * 3000})
    log.append("step/end", step=1)
    log.append("turn/end", status="error", code="BUDGET", error="stopped")
    return log


def test_read_back_a_session(tmp_path):
    with chat(tmp_path / "report.dsh" / "sessions") as log:
        path = log.path
    u = notebook.read(path)
    assert [(x.marker, x.speaker) for x in u] == [("U1", "user"), ("T1", "tool"), ("A1", "assistant"),
                                                  ("A1", "assistant"), ("U2", "user"), ("A2", "assistant"),
                                                  ("T2", "tool")]
    assert u[0].text == "How long does 3 km take at 5 km/h?"
    assert u[1].text == 'eval: formula=3 km / (5 km/h); slot=t\n{"ok": true, "value": "0.6 h"}'
    assert [x.text for x in u[2:4]] == ["It takes 0.6 h.", "Assuming a constant 5 km/h, it takes 0.6 h (36 min)."]
    # the gate's notice is not the person's (and reasoning is nobody's utterance)
    assert all(GATE not in x.text and "I should compute" not in x.text for x in u)
    assert u[6].text.startswith('eval: formula=1e400 km\n(error) {"ok": false, "error": "xxx')
    assert u[6].text.endswith("more characters not shown]") and len(u[6].text) < 2100
    seqs = [e["seq"] for e in log.events]
    assert all(x.key.startswith("seq:") and int(x.key[4:]) in seqs for x in u)
    assert u[0].key == "seq:3"


def test_listing_by_notebook_sidecar_and_folder(tmp_path):
    sessions = tmp_path / "report.dsh" / "sessions"
    with chat(sessions, prompt="  How long\n does 3 km take at 5 km/h, if the walker never stops and the path is flat? ") as a:
        pass
    with SessionLog.create(sessions, model="m", name="empty-one") as b:  # no user message yet
        b.append("turn/start", turn=1)
    for where in (tmp_path / "report.ipynb", tmp_path / "report.dsh", sessions):
        convs = {c.id: c for c in notebook.list_conversations(where)}
        assert set(convs) == {a.id, b.id}
        first = convs[a.id]
        assert first.source == "notebook" and first.path == a.path
        assert first.title == "How long does 3 km take at 5 km/h, if the walker never stops and the path is flat"[:80]
        assert len(first.title) == 80
        assert (first.user_messages, first.ai_messages) == (2, 3)
        assert first.started == a.events[0]["ts"].replace("+00:00", "Z")
        assert first.updated == a.events[-1]["ts"].replace("+00:00", "Z") and first.updated.endswith("Z")
        assert convs[b.id].title == "empty-one" and (convs[b.id].user_messages, convs[b.id].ai_messages) == (0, 0)
    assert notebook.conversation(a.path) == convs[a.id]
    assert notebook.list_conversations(tmp_path / "other.ipynb") == []
    assert notebook.list_conversations(tmp_path / "missing.dsh") == []


def test_torn_last_line_and_unknown_events(tmp_path):
    with chat(tmp_path / "s") as log:
        path = log.path
    with path.open("a", encoding="utf-8") as f:
        f.write('{"seq": 99, "ts": "2026-01-01T00:00:00.000+00:00", "type": "future/event", "x": 1}\n')
        f.write('{"seq": 100, "type": "user/message", "text": "half a li')
    u = notebook.read(path)
    assert [x.marker for x in u][-1] == "T2" and len(u) == 7
    assert notebook.conversation(path).updated == "2026-01-01T00:00:00.000Z"
