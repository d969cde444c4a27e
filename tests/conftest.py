"""Shared fixtures for the test suite (issue 22, item 7: one IPython set-up for every test file).

* ``engine`` / ``calc``: a reckoner engine with a record started, and a formula evaluator on it.
* ``new_kernel()``: IPython's test shell (started once for the session) with ``dsh_notebook``
  freshly (re)loaded, as a new kernel has it.
* ``sh``: that shell as a :class:`Shell` whose kernel writes beside ``nb.ipynb`` in the test's
  temporary folder, with a fake model key; the chat sessions it opened are closed afterwards.
* ``server``: ``server(script)`` starts a scripted model server the deepseek provider points at.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# DSH_NOTEBOOK_HOME is pointed at a temporary folder by the repository's root conftest.py.


@pytest.fixture
def engine(tmp_path):
    """An ``Engine(tmp_path / "home")`` with a record already started."""
    from dsh_notebook.reckoner import Engine

    e = Engine(tmp_path / "home")
    assert e.record_start("test record") == {"ok": True}
    yield e
    e.close()


@pytest.fixture
def calc(engine):
    """``calc(formula)`` evaluates into the slot ``_out`` and returns the ``get`` value;
    on refusal it returns the failure receipt. ``calc(formula, **get_options)`` passes options."""

    def run(formula, **opts):
        r = engine.eval(formula, "_out")
        if not r["ok"]:
            return r
        g = engine.get("_out", **opts)
        assert g["ok"], g
        return g["value"]

    return run


def load_fresh(ip):
    """(Re)load ``dsh_notebook`` in *ip*: a new kernel's state (sessions, records, reviewer)."""
    if "dsh_notebook" in ip.extension_manager.loaded:
        ip.extension_manager.reload_extension("dsh_notebook")
    else:
        ip.extension_manager.load_extension("dsh_notebook")
    return ip


@pytest.fixture
def new_kernel():
    """``new_kernel()``: IPython's test shell (``IPython.testing.globalipapp``, one for the
    session) with ``dsh_notebook`` freshly (re)loaded, as a new kernel has it. Call it after
    setting what the kernel reads when it starts (``DSH_NOTEBOOK_PATH``, ``DSH_NOTEBOOK_HOME``)."""
    from IPython.testing import globalipapp

    def start():
        globalipapp.start_ipython()
        return load_fresh(globalipapp.get_ipython())

    return start


class Shell:
    """The test shell whose kernel writes beside ``nb.ipynb`` in *folder* (sidecar ``nb.dsh``)."""

    def __init__(self, ip, folder: Path):
        self.ip, self.folder, self.sidecar = ip, folder, folder / "nb.dsh"

    def run(self, source: str):
        """Run a cell: ``(ExecutionResult, captured output)``."""
        from IPython.utils.capture import capture_output

        with capture_output() as cap:
            result = self.ip.run_cell(source)
        return result, cap

    def reckon(self, body: str, line: str = "Test"):
        return self.run(f"%%reckon {line}\n{body}")

    def chat(self, body: str, line: str = ""):
        return self.run(f"%%chat {line}\n{body}")

    def records(self) -> list[Path]:
        """The record files of the sidecar, sorted."""
        d = self.sidecar / "records"
        return sorted(d.glob("*.jsonl")) if d.exists() else []

    def sessions(self) -> list[Path]:
        """The chat session logs of the sidecar, sorted."""
        d = self.sidecar / "sessions"
        return sorted(d.glob("*.jsonl")) if d.exists() else []

    def rows(self, path: Path) -> list[dict]:
        """The JSON lines of a record or session file."""
        return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]

    events = rows

    @property
    def ns(self):
        return self.ip.user_ns


@pytest.fixture
def sh(tmp_path, monkeypatch):
    """A :class:`Shell` on a fresh kernel writing beside ``tmp_path / "nb.ipynb"``, with a fake
    ``DEEPSEEK_API_KEY`` (no model is reached: the chat tests point the provider at a scripted
    server). The chat sessions it opened are closed afterwards (their logs' locks released)."""
    from IPython.testing import globalipapp

    monkeypatch.setenv("DSH_NOTEBOOK_PATH", str(tmp_path / "nb.ipynb"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    globalipapp.start_ipython()
    ip = load_fresh(globalipapp.get_ipython())
    yield Shell(ip, tmp_path)
    chat = ip.magics_manager.registry.get("ChatMagics")
    for s in (chat.sessions.values() if chat is not None else ()):
        s.close()


@pytest.fixture
def server(monkeypatch):
    """``server(script)`` starts a scripted model server (:class:`dsh_notebook.llm.testing.ScriptedServer`)
    and points the deepseek provider at it; every server started is stopped afterwards."""
    from dsh_notebook.llm.testing import ScriptedServer

    started = []

    def start(script):
        srv = ScriptedServer(script).start()
        started.append(srv)
        monkeypatch.setenv("DEEPSEEK_BASE_URL", srv.base_url)
        return srv

    yield start
    for srv in started:
        srv.stop()


# tests/data holds artifacts the tests copy and check (notebooks made by earlier versions, with
# their sidecars): they are data, not notebooks for nbval to run.
collect_ignore_glob = ["data/*"]
