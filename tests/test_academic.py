"""Academic mode: state, request shaping, the delivery gate and its surfaces, through real
HTTP against the scripted server (spec: academic.md; upstream-facts.md 2.3-2.5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from dsh_notebook.academic import gate, prompt, state
from dsh_notebook.llm import ChatClient
from dsh_notebook.llm.agent import Agent
from dsh_notebook.llm.presets import system_sections
from dsh_notebook.llm.session import SessionLog, read_events
from dsh_notebook.llm.testing import ScriptedServer

USER = [{"role": "user", "content": "How far is the Moon?"}]
LONG = "The mean Earth-Moon distance is about 384,400 km. " * 14  # > 600 characters, no log
LOG = LONG + "\n\n## Verification log\n- opened the NASA Moon fact sheet\n- Self-check: 10/10 passed\n"

EFFORT_SETTINGS = """
[[providers.deepseek.models]]
id = "deepseek-chat"
reasoning_efforts = ["low", "medium", "high", "max"]
default_max_tokens = 8000
max_tokens = 16000
"""


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(h))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    return h


def client(srv, **kw) -> ChatClient:
    os.environ["DEEPSEEK_BASE_URL"] = srv.base_url
    try:
        return ChatClient(backoff=0.01, **kw)
    finally:
        del os.environ["DEEPSEEK_BASE_URL"]


# --------------------------------------------------------------------------- state


def test_state_defaults_off_and_switches(home):
    assert state.status() == {"ok": True, "enabled": False, "lastError": None, "applied": None,
                              "gate": {"count": 0, "lastAt": None}}
    st = state.set_enabled(True)
    assert st["enabled"] is True
    saved = json.loads((home / "academic.json").read_text(encoding="utf-8"))
    assert saved["enabled"] is True and saved["title"] == "学术模式"
    assert state.set_enabled(False)["enabled"] is False
    with pytest.raises(TypeError, match="true or false"):
        state.set_enabled("yes")
    assert state.status()["enabled"] is False  # the refused call changed nothing


def test_a_malformed_state_file_reads_as_off_and_says_why(home):
    (home / "academic.json").write_text('{"enabled": "sure"}', encoding="utf-8")
    st = state.status()
    assert st["enabled"] is False and "cannot be read" in st["lastError"] and "'enabled'" in st["lastError"]
    assert (home / "academic.json").read_text(encoding="utf-8") == '{"enabled": "sure"}'  # a reader never rewrites
    assert state.set_enabled(True)["enabled"] is True  # switching again repairs it


# --------------------------------------------------------------------------- shaping


def test_off_changes_nothing(home):
    with ScriptedServer([{"reply": {"content": "a"}}, {"reply": {"content": "b"}}]) as srv:
        r1 = client(srv).complete(USER)
        r2 = client(srv, hooks=[]).complete(USER)
    assert r1.shaping == [] and srv.requests[0]["body"] == srv.requests[1]["body"]


def test_on_adds_both_sections_in_order_and_the_budget(home):
    (home / "settings.toml").write_text(EFFORT_SETTINGS, encoding="utf-8")
    state.set_enabled(True)
    with ScriptedServer([{"reply": {"content": "ok"}}]) as srv:
        log = SessionLog.create(home / "s", model="deepseek-chat", preset="reckoner",
                                system=system_sections("reckoner").render())
        agent = Agent(client(srv), log, system=system_sections("reckoner"), stop_hooks=[])
        agent.run_turn("What current does a 2 kW kettle draw at 230 V?")
        log.close()
    body = srv.requests[0]["body"]
    system = body["messages"][0]["content"]
    persona = system.index("You are a careful calculation assistant")
    ident = system.index(prompt.identity("en"))
    disc = system.index(prompt.discipline("en"))
    manual = system.index("How the engine works:")
    assert persona < ident < disc < manual
    assert body["reasoning_effort"] == "max" and body["max_tokens"] == 8000
    assert body["model"] == "deepseek-chat"  # never switched
    # what was changed is logged with the assistant message, and kept as `applied`
    shaping = next(e for e in read_events(log.path) if e["type"] == "assistant/message")["shaping"]
    assert any("academic/" in n for n in shaping) and "reasoning_effort None -> 'max'" in shaping
    applied = state.status()["applied"]
    assert {k: applied[k] for k in ("provider", "model", "reasoningEffort", "maxTokens")} == \
        {"provider": "deepseek", "model": "deepseek-chat", "reasoningEffort": "max", "maxTokens": 8000}


def test_chinese_questions_get_the_chinese_text_and_a_larger_budget_is_kept(home):
    state.set_enabled(True)
    with ScriptedServer([{"reply": {"content": "ok"}}]) as srv:
        client(srv).complete([{"role": "user", "content": "月球有多远？"}], max_tokens=7000)
    body = srv.requests[0]["body"]
    assert body["messages"][0]["content"] == prompt.identity("zh") + "\n\n" + prompt.discipline("zh")
    assert body["max_tokens"] == 7000  # larger than default_max_tokens (4096): kept
    assert "reasoning_effort" not in body  # deepseek-chat declares no efforts


def test_a_failed_capability_lookup_sends_the_request_unchanged(home):
    state.set_enabled(True)
    with ScriptedServer([{"reply": {"content": "a"}}, {"reply": {"content": "b"}}]) as srv:
        c = client(srv)  # resolved while the settings were fine
        (home / "settings.toml").write_text("this is = = not toml", encoding="utf-8")
        r = c.complete(USER)
    assert r.shaping == [] and srv.requests[0]["body"]["messages"] == USER
    err = state.status()["lastError"]
    assert "capability lookup for deepseek/deepseek-chat failed" in err and "unchanged" in err


# --------------------------------------------------------------------------- the gate


@pytest.mark.parametrize("text", [
    "## Verification log\n- x", "# verification LOG", "###### 核查记录", "**Verification log**", "**核查记录：**",
    "Verification log:", "核查记录：", "Verification log\n================", "核查记录\n---",
    "## Verification Log:",
])
def test_verification_log_headings_are_recognised(text):
    assert gate.has_verification_log("Some answer.\n\n" + text)


@pytest.mark.parametrize("text", [
    "```\n## Verification log\n```", "~~~md\n核查记录：\n~~~", "<!-- ## Verification log -->",
    "<!--\n**Verification log**\n-->",
    "I will add a verification log later.", "See the verification log below", "#Verification log",
    "> ## Verification log", "Verification logs:", "    核查记录 is mentioned in an indented code block here",
])
def test_mentions_are_not_headings(text):
    assert not gate.has_verification_log(text)


def test_the_gate_counts_code_points_and_honours_the_escape(home):
    state.set_enabled(True)
    zh_turn = [{"type": "user/message", "text": "月球有多远？"}]
    assert gate.academic_gate(zh_turn, "月" * 599) is None
    assert gate.academic_gate(zh_turn, "月" * 600) == prompt.GATE_NOTICE["zh"]  # the user's language
    assert gate.academic_gate([{"type": "user/message", "text": "How far?"}], "月" * 600) == prompt.GATE_NOTICE["en"]
    assert gate.academic_gate([], "x" * 600 + "\n\n本条无需核查记录") is None
    assert gate.academic_gate([], "x" * 600 + "\n\nNo verification log needed for this reply.") is None
    state.set_enabled(False)
    assert gate.academic_gate([], "x" * 2000) is None


def gate_script(*replies):
    return [{"reply": {"content": r}} for r in replies]


def run_agent(home, srv, text="How far is the Moon?"):
    log = SessionLog.create(home / "sessions", model="deepseek-chat")
    agent = Agent(client(srv), log)  # default stop hooks: academic mode's gate
    result = agent.run_turn(text)
    log.close()
    return result, read_events(log.path)


def test_a_long_reply_without_a_log_is_sent_back_once(home):
    state.set_enabled(True)
    with ScriptedServer(gate_script(LONG, LONG)) as srv:
        result, events = run_agent(home, srv)
    assert result.status == "completed" and len(srv.requests) == 2
    [notice] = [e for e in events if e["type"] == "notice"]
    assert notice["kind"] == "academic-switch" and notice["form"] == "notice" and notice["text"] == \
        prompt.GATE_NOTICE["en"]
    # the steer went to the model as a system notice, never as user input
    sent = srv.requests[1]["body"]["messages"]
    assert sent[-1] == {"role": "system", "content": prompt.GATE_NOTICE["en"]}
    assert [m for m in sent if m["role"] == "user"] == [{"role": "user", "content": "How far is the Moon?"}]
    assert state.status()["gate"]["count"] == 1 and state.status()["gate"]["lastAt"]
    # the next turn may be sent back again (once per turn)
    with ScriptedServer(gate_script(LONG, LOG)) as srv:
        log = SessionLog.open(next((home / "sessions").glob("*.jsonl")))
        Agent(client(srv), log).run_turn("And the Sun?")
        log.close()
    assert len(srv.requests) == 2 and state.status()["gate"]["count"] == 2


@pytest.mark.parametrize("reply", [LOG, LONG[:500], LONG + "\n本条无需核查记录"])
def test_replies_the_gate_lets_through(home, reply):
    state.set_enabled(True)
    with ScriptedServer(gate_script(reply)) as srv:
        result, events = run_agent(home, srv)
    assert len(srv.requests) == 1 and not [e for e in events if e["type"] == "notice"]


def test_a_log_in_an_earlier_message_of_the_turn_counts(home):
    state.set_enabled(True)
    tool = {"id": "c1", "name": "nothing", "arguments": "{}"}
    script = [{"reply": {"content": "## Verification log\n- ran nothing", "tool_calls": [tool]}},
              {"reply": {"content": LONG}}]
    from dsh_notebook.llm.agent import Tool

    with ScriptedServer(script) as srv:
        log = SessionLog.create(home / "sessions", model="deepseek-chat")
        Agent(client(srv), log, [Tool("nothing", "does nothing", {"type": "object"}, lambda a: "ok")]).run_turn("q")
        log.close()
    assert len(srv.requests) == 2 and state.status()["gate"]["count"] == 0


def test_cancelled_turns_are_skipped(home):
    state.set_enabled(True)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    with ScriptedServer([{"reply": {"content": LONG, "chunk": 1, "chunk_delay": 0.01}}]) as srv:
        log = SessionLog.create(home / "sessions", model="deepseek-chat")
        result = Agent(client(srv), log).run_turn("q", cancel=cancel)
        log.close()
    assert result.status == "cancelled" and state.status()["gate"]["count"] == 0


# --------------------------------------------------------------------------- surfaces


def cli(*args, home):
    env = {**os.environ, "DSH_NOTEBOOK_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "dsh_notebook.cli", *args], capture_output=True, text=True,
                          env=env, timeout=60)


def test_cli_switches_and_reports(home):
    r = cli("academic", "on", home=home)
    assert r.returncode == 0 and "Academic mode: on" in r.stdout
    assert state.status()["enabled"] is True  # this process sees the other's change without a restart
    r = cli("academic", "status", "--json", home=home)
    assert json.loads(r.stdout)["enabled"] is True
    assert "Academic mode: off" in cli("academic", "off", home=home).stdout
    r = cli("academic", "maybe", home=home)
    assert r.returncode == 2 and "invalid choice" in r.stderr


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_cli_export_writes_the_skill_byte_identical(home, tmp_path, lang):
    out = tmp_path / f"skill-{lang}"
    out.mkdir()
    r = cli("academic", "export", "--format", "skill", "--lang", lang, "--out", str(out), home=home)
    assert r.returncode == 0, r.stderr
    text = (out / "SKILL.md").read_text(encoding="utf-8")
    assert text == prompt.skill_markdown(lang)
    assert prompt.skill_body(text) == prompt.identity(lang) + "\n\n" + prompt.discipline(lang)


def test_the_magic_and_the_widget_share_the_state(home, tmp_path, monkeypatch, new_kernel):
    from IPython.utils.capture import capture_output

    monkeypatch.setenv("DSH_NOTEBOOK_PATH", str(tmp_path / "nb.ipynb"))
    ip = new_kernel()
    from dsh_notebook.widgets import AcademicToggle

    toggle = AcademicToggle(poll=0.05)
    try:
        assert repr(toggle) == "[academic mode toggle]" and toggle.button.value is False
        assert "dsh-academic-on" not in toggle.button._dom_classes
        with capture_output() as cap:
            ip.run_line_magic("academic", "on")
        assert "Academic mode: on" in cap.stdout
        deadline = time.monotonic() + 60  # the widget polls every 0.05 s; a bound, not a speed check
        while not toggle.button.value and time.monotonic() < deadline:
            time.sleep(0.05)
        assert toggle.button.value is True and "dsh-academic-on" in toggle.button._dom_classes
        assert toggle.button.tooltip.startswith("Academic mode (学术模式) is on")
        toggle.button.value = False  # a click
        assert state.status()["enabled"] is False
        with capture_output() as cap:
            ip.run_line_magic("academic", "status")
        assert "Academic mode: off" in cap.stdout and "Delivery gate: sent 0" in cap.stdout
        r = ip.run_cell("%academic sideways")
        assert "unknown action" in str(r.error_in_exec)
    finally:
        toggle.close()


# --------------------------------------------------------------------------- from a bad-input review


def test_a_home_that_is_a_file_never_stops_a_request(tmp_path, monkeypatch):
    home = tmp_path / "not-a-folder"
    home.write_text("x", encoding="utf-8")
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(home))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    st = state.status()
    assert st["enabled"] is False and "cannot be read" in st["lastError"]
    with ScriptedServer([{"reply": {"content": "ok"}}]) as srv:
        assert client(srv).complete(USER).text == "ok"


def test_malformed_fields_of_the_state_are_ignored(home):
    (home / "academic.json").write_text('{"enabled": true, "applied": "x", "lastError": 5, '
                                        '"gate": {"count": true}}', encoding="utf-8")
    st = state.status()
    assert st == {"ok": True, "enabled": True, "lastError": None, "applied": None, "gate": {"count": 0, "lastAt": None}}
    assert "Academic mode: on" in state.status_text()


def test_a_bad_academic_setting_is_reported_not_fatal(home):
    (home / "settings.toml").write_text('[academic]\nlanguage = "fr"\n', encoding="utf-8")
    state.set_enabled(True)
    with ScriptedServer([{"reply": {"content": "ok"}}]) as srv:
        client(srv).complete(USER, max_tokens=6000.0)
    body = srv.requests[0]["body"]
    assert body["messages"][0]["content"].startswith(prompt.identity("en")) and body["max_tokens"] == 6000
    assert "language = 'fr' is not auto, zh or en" in state.status()["lastError"]


def test_chinese_in_content_parts_and_extension_b(home):
    state.set_enabled(True)
    with ScriptedServer([{"reply": {"content": "a"}}, {"reply": {"content": "b"}}]) as srv:
        client(srv).complete([{"role": "user", "content": [{"type": "text", "text": "光速是多少？"}]}])
        client(srv).complete([{"role": "user", "content": "\U00020000"}])
    assert all(r["body"]["messages"][0]["content"].startswith(prompt.identity("zh")) for r in srv.requests)


def test_the_toggle_refuses_a_poll_that_would_spin(home):
    from dsh_notebook.widgets import AcademicToggle

    with pytest.raises(ValueError, match="positive number"):
        AcademicToggle(poll=0)


def test_export_into_a_new_folder(home, tmp_path):
    r = cli("academic", "export", "--lang", "en", "--out", str(tmp_path / "skills" / "academic-mode"), home=home)
    assert r.returncode == 0 and (tmp_path / "skills" / "academic-mode" / "SKILL.md").is_file()


def test_the_readmes_sample_verification_log_passes_the_gate(home):
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Academic mode"):readme.index("## The reviewer")]
    sample = re.search(r"```markdown\n(.*?)```", section, re.S).group(1)
    assert gate.has_verification_log(sample)
    state.set_enabled(True)
    assert gate.academic_gate([], LONG + "\n\n" + sample) is None
    assert gate.academic_gate([], LONG) is not None  # without it, the same reply is sent back


def test_a_client_with_its_own_settings_is_shaped_by_its_own_model(home, monkeypatch):
    """A client given a Settings object of its own (a model settings.toml does not list) is shaped
    with the capabilities the client resolved, not looked up again in settings.toml."""
    from dsh_notebook.settings import BUILTIN, Settings

    state.set_enabled(True)
    monkeypatch.setenv("LOCAL_KEY", "test-key-not-real")
    with ScriptedServer([{"reply": {"content": "ok"}}]) as srv:
        own = Settings.model_validate({**BUILTIN, "default_model": "local/m", "providers": {**BUILTIN["providers"], "local": {
            "base_url": srv.base_url, "api_key_env": "LOCAL_KEY",
            "models": [{"id": "m", "reasoning_efforts": ["low", "max"], "default_max_tokens": 2048}]}}})
        r = ChatClient(settings=own, backoff=0.01).complete(USER)
    body = srv.requests[0]["body"]
    assert body["reasoning_effort"] == "max" and body["max_tokens"] == 2048
    assert body["messages"][0]["content"].startswith(prompt.identity("en")[:40]) and r.text == "ok"
    assert state.status()["lastError"] is None
