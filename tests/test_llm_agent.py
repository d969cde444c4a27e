"""The agent loop and the session log, through real HTTP against the scripted server."""

from __future__ import annotations

import json
import os
import threading

import pytest

from dsh_notebook.llm import ChatClient, LLMError
from dsh_notebook.llm.agent import Agent, Tool
from dsh_notebook.llm.session import SessionLog, history, read_events
from dsh_notebook.llm.testing import ScriptedServer
from dsh_notebook.reckoner import Engine
from dsh_notebook.reckoner.schemas import TOOL_SCHEMAS


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    return tmp_path


def make_agent(srv, folder, tools=(), **kw):
    os.environ["DEEPSEEK_BASE_URL"] = srv.base_url
    try:
        client = ChatClient(backoff=0.01)
    finally:
        del os.environ["DEEPSEEK_BASE_URL"]
    log = SessionLog.create(folder / "sessions", model=client.model.id, preset="test",
                            tools=[t.name for t in tools], system="You are a careful calculator.")
    return Agent(client, log, tools, **kw)


def engine_tools(engine: Engine) -> list[Tool]:
    return [Tool(name, spec["description"], spec["parameters"], lambda args, n=name: engine.call(n, args))
            for name, spec in TOOL_SCHEMAS.items()]


def call(i, name, args):
    return {"id": f"call_{i}", "name": name, "arguments": json.dumps(args)}


def test_a_turn_with_tool_calls_lands_in_a_record_and_the_log(env):
    engine = Engine(env / "calc")
    script = [
        {"expect": {"contains": "Ohm", "tools": list(TOOL_SCHEMAS)},
         "reply": {"tool_calls": [call(1, "record_start", {"title": "Ohm's law"}),
                                  call(2, "set", {"name": "V", "value": {"num": 12, "dim": "volt"}}),
                                  call(3, "set", {"name": "R", "value": {"num": 4, "dim": "ohm"}}),
                                  call(4, "eval", {"formula": "@V/@R", "target": "I"}),
                                  call(5, "get", {"name": "I"})], "chunk": 5}},
        {"reply": {"tool_calls": [call(6, "record_end", {"text": "I = 3 A"})]}},
        {"reply": {"content": "The current is 3 A."}},
    ]
    with ScriptedServer(script) as srv:
        agent = make_agent(srv, env, engine_tools(engine))
        result = agent.run_turn("Ohm: 12 V across 4 ohm?")
    assert result.status == "completed" and result.text == "The current is 3 A." and result.steps == 3
    [rec] = list((env / "calc" / "records").glob("*.jsonl"))
    rows = [json.loads(x) for x in rec.read_text().splitlines()]
    assert [r.get("tool") for r in rows[1:]] == ["record_start", "set", "set", "eval", "get", "record_end"]
    # the second request carried the tool results, derived from the log
    sent = srv.requests[1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "tool", "tool", "tool"]
    assert json.loads(sent[-1]["content"]) == {"ok": True, "name": "I", "value": {"num": 3.0, "dim": "ampere"}}
    types = [e["type"] for e in agent.log.events]
    assert types[:4] == ["session/start", "turn/start", "user/message", "step/start"] and types[-1] == "turn/end"


def test_history_rebuilt_from_the_log_sends_the_same_request(env):
    script = [{"reply": {"tool_calls": [call(1, "double", {"x": 21})]}}, {"reply": {"content": "42"}},
              {"reply": {"content": "again 42"}}, {"reply": {"content": "again 42"}}]
    double = Tool("double", "Double a number", {"type": "object", "properties": {"x": {"type": "number"}},
                                                "required": ["x"]}, lambda a: a["x"] * 2)
    with ScriptedServer(script) as srv:
        agent = make_agent(srv, env, [double])
        agent.run_turn("double 21")
        agent.run_turn("and again?")
        first = srv.requests[2]["body"]
        path = agent.log.path
        agent.log.close()
        del agent  # all in-memory state gone
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        cut = next(i for i, x in enumerate(lines) if '"type":"turn/start"' in x and '"turn":2' in x)
        copy = path.with_name("copy.jsonl")
        copy.write_text("".join(lines[:cut]), encoding="utf-8")  # the log as it was before turn 2
        rebuilt = Agent(make_agent(srv, env).client, SessionLog.open(copy), [double])
        rebuilt.run_turn("and again?")
        second = srv.requests[3]["body"]
    assert first["messages"] == second["messages"] and first == second


def test_bad_tool_arguments_and_unknown_tools_become_error_results(env):
    strict = Tool("sq", "Square", {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"],
                                   "additionalProperties": False}, lambda a: a["x"] ** 2)
    boom = Tool("boom", "Fails", {"type": "object"}, lambda a: 1 / 0)
    script = [{"reply": {"tool_calls": [call(1, "sq", {"x": "nine"}), call(2, "nope", {}), call(3, "boom", {}),
                                        {"id": "call_4", "name": "sq", "arguments": "{not json"}]}},
              {"reply": {"content": "sorry"}}]
    with ScriptedServer(script) as srv:
        agent = make_agent(srv, env, [strict, boom])
        assert agent.run_turn("go").status == "completed"
        results = [json.loads(m["content"]) for m in srv.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert "invalid arguments for sq: x" in results[0]["error"]
    assert "no tool 'nope'" in results[1]["error"]
    assert "ZeroDivisionError" in results[2]["error"]
    assert "not JSON" in results[3]["error"]


def test_a_stop_hook_steers_once_then_lets_the_turn_end(env):
    def gate(events, answer):
        return "Add a verification log." if "Verification log" not in answer else None

    script = [{"reply": {"content": "Long answer."}},
              {"reply": {"content": "Long answer, again without it."}}]
    with ScriptedServer(script) as srv:
        agent = make_agent(srv, env, stop_hooks=[gate], notice_kind="academic-switch")
        r = agent.run_turn("explain")
        steer = srv.requests[1]["body"]["messages"][-1]
    assert r.status == "completed" and r.text == "Long answer, again without it."
    assert steer == {"role": "system", "content": "Add a verification log."}
    notices = [e for e in agent.log.events if e["type"] == "notice"]
    assert len(notices) == 1 and notices[0]["kind"] == "academic-switch" and notices[0]["form"] == "notice"
    assert not any(e["type"] == "user/message" and "verification" in e["text"] for e in agent.log.events)


def test_step_limit_is_a_budget_error_logged_as_turn_end(env):
    loop = Tool("again", "Loop", {"type": "object"}, lambda a: "again")
    script = [{"reply": {"tool_calls": [call(i, "again", {})]}} for i in range(3)]
    with ScriptedServer(script) as srv:
        agent = make_agent(srv, env, [loop], max_steps=3)
        with pytest.raises(LLMError) as exc:
            agent.run_turn("go")
    assert exc.value.code == "BUDGET"
    assert agent.log.events[-1]["type"] == "turn/end" and agent.log.events[-1]["code"] == "BUDGET"


def test_cancel_ends_the_turn_cancelled(env):
    cancel = threading.Event()
    script = [{"reply": {"content": "y" * 300, "chunk": 1, "chunk_delay": 0.002}}]
    with ScriptedServer(script) as srv:
        agent = make_agent(srv, env)
        r = agent.run_turn("long", on_delta=lambda k, t: cancel.set(), cancel=cancel)
    assert r.status == "cancelled"
    assert agent.log.events[-1] == {**agent.log.events[-1], "type": "turn/end", "status": "cancelled"}
    # the log stays strict JSONL and a cancelled turn sends nothing half-finished next time
    assert history(read_events(agent.log.path))[-1]["role"] == "user"


def test_load_ext_imports_nothing_heavy_until_a_magic_needs_it(tmp_path):
    """Issue 13: jsonschema (about 1.7 s) is imported when a tool's arguments are first checked,
    not by ``%load_ext dsh_notebook``. Issue 22 (a fast load): the load registers the magics and
    imports none of the engine's or the model client's libraries (it used to import the agent,
    httpx, pydantic, pint's neighbours numpy and lark); the first ``%%reckon`` cell imports them."""
    import subprocess
    import sys

    heavy = ("jsonschema", "pint", "numpy", "lark", "httpx", "pydantic", "nbformat", "ipywidgets", "markdown_it",
             "detect_secrets", "cryptography", "zstandard", "rapidfuzz", "jupyter_server", "jinja2",
             "dsh_notebook.llm.agent", "dsh_notebook.reckoner")
    code = ("import sys\n"
            "from IPython.core.interactiveshell import InteractiveShell\n"
            "ip = InteractiveShell.instance()\n"
            "ip.run_line_magic('load_ext', 'dsh_notebook')\n"
            "assert {'ReckonMagics', 'ChatMagics', 'AcademicMagics', 'ReviewMagics', 'LedgerMagics'} <= "
            "set(ip.magics_manager.registry)\n"
            f"heavy = {heavy!r}\n"
            "print(sorted(m for m in heavy if m in sys.modules))\n"
            "r = ip.run_cell('%%reckon Wire\\ngiven L = 2 m\\nx = @L*3')\n"
            "assert r.error_in_exec is None, r.error_in_exec\n"
            "print(ip.user_ns['_reckon']['x'], sorted(m for m in ('pint', 'lark') if m in sys.modules))\n")
    env = {**os.environ, "IPYTHONDIR": str(tmp_path / "ipython"), "DSH_NOTEBOOK_HOME": str(tmp_path / "home"),
           "DSH_NOTEBOOK_PATH": str(tmp_path / "nb.ipynb"), "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                         check=True).stdout.splitlines()
    assert out[0] == "[]", out  # nothing heavy at load
    assert out[-1] == "6.0 meter ['lark', 'pint']", out  # the first cell computes, and imports the engine
    assert [p.suffix for p in (tmp_path / "nb.dsh" / "records").iterdir()] == [".jsonl"]  # its record
