"""``%%chat`` in a real Jupyter kernel: the stop button heard while the cell runs, and a
kernel interrupt, both ending the turn as ``cancelled`` in the session log (spec: llm.md
"Agent loop", "``%%chat``")."""

from __future__ import annotations

import json
import queue
import time

import pytest

jupyter_client = pytest.importorskip("jupyter_client", reason="jupyter_client is not installed (pip install ipykernel)")
from jupyter_client.manager import start_new_kernel  # noqa: E402

SETUP = """
import os
from dsh_notebook.llm.testing import ScriptedServer
srv = ScriptedServer([{"reply": {"content": "x" * 3000, "chunk": 1, "chunk_delay": 0.005}}]).start()
os.environ["DEEPSEEK_BASE_URL"] = srv.base_url
os.environ["DEEPSEEK_API_KEY"] = "scripted"
%load_ext dsh_notebook
"""


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_PATH", str(tmp_path / "nb.ipynb"))
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        reply = kc.execute_interactive(SETUP, timeout=60)
        assert reply["content"]["status"] == "ok"
        yield km, kc, tmp_path / "nb.dsh" / "sessions"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def streaming(folder) -> bool:
    """Whether the turn is under way: its user message is in the session log."""
    return any('"user/message"' in log.read_text(encoding="utf-8") for log in folder.glob("*.jsonl"))


def run_and(kc, action, sessions, limit: float = 120.0):
    """Execute a ``%%chat`` cell; once the live view is up and the turn is under way (its user
    message logged; the reply then streams for 15 s), call ``action(button_comm_id)``. Returns
    (outputs, seconds until idle, seconds at action). ``limit`` only bounds a hung cell."""
    msg_id = kc.execute("%%chat\nwrite a long answer")
    button, acted, outputs = None, None, []
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        try:
            m = kc.get_iopub_msg(timeout=0.2)
        except queue.Empty:
            m = None
        if m is not None and m["parent_header"].get("msg_id") == msg_id:
            t = m["msg_type"]
            if t == "comm_open" and m["content"]["data"]["state"].get("_model_name") == "ButtonModel":
                button = m["content"]["comm_id"]
            elif t in ("display_data", "error", "stream"):
                outputs.append(m["content"])
            elif t == "status" and m["content"]["execution_state"] == "idle":
                return outputs, time.monotonic() - t0, acted
        if button and acted is None and streaming(sessions):
            action(button)
            acted = time.monotonic() - t0
    raise AssertionError("the cell did not finish")


def last_event(folder):
    [log] = list(folder.glob("*.jsonl"))
    return json.loads(log.read_text(encoding="utf-8").splitlines()[-1])


def test_the_stop_button_is_heard_while_the_cell_runs(kernel):
    km, kc, sessions = kernel

    def click(comm_id):  # what the browser sends when Stop is clicked
        kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {
            "method": "custom", "content": {"event": "click"}}}))

    outputs, _took, clicked = run_and(kc, click, sessions)
    # the reply would stream for 15 s; the click ends it: the turn ends cancelled, not done (no timing asserted)
    assert clicked is not None
    assert last_event(sessions) == {**last_event(sessions), "type": "turn/end", "status": "cancelled"}
    final = outputs[-1]["data"]
    assert final["application/vnd.dsh.session+json"]["status"] == "cancelled"
    assert final["text/plain"].startswith("(stopped: this turn was cancelled")
    assert outputs[0]["data"]["text/plain"] == "[live view of this chat turn; the answer follows]"


def test_interrupting_the_kernel_cancels_the_turn(kernel):
    km, kc, sessions = kernel
    outputs, _took, acted = run_and(kc, lambda _c: km.interrupt_kernel(), sessions)
    assert acted is not None
    assert last_event(sessions)["type"] == "turn/end" and last_event(sessions)["status"] == "cancelled", outputs
    assert not any("Traceback" in json.dumps(o) for o in outputs)
    # like any interrupted cell, it stops "Run All": the cell ends with an error, shown in one line
    [err] = [o for o in outputs if "ename" in o]
    assert err["ename"] == "ChatInterrupted" and len(err["traceback"]) == 1
