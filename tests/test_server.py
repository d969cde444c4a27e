"""The jupyter-server extension: the side panel's routes and the pre-save hook (spec: storage.md
"Routes for the side panel" and "What goes into the notebook"; issue 8).

A real jupyter-server (pytest-jupyter's fixtures, imported into this module only so their
autouse fixtures stay here) serves a root folder holding a notebook whose sidecar was written
by the real engines: a reckoner record, a chat session from the agent against the scripted
server, reviews of that session, and a research ledger up to ``human-approval-requested``.
Tests are plain functions that drive the server's event loop with ``jp_fetch``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from http.cookies import SimpleCookie
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("jupyter_server", reason="jupyter-server is not installed (pip install '.[test]')")
pytest.importorskip("pytest_jupyter", reason="pytest-jupyter is not installed (pip install '.[test]')")

from pytest_jupyter.jupyter_server import *  # noqa: E402,F403 - jp_fetch, jp_serverapp, jp_root_dir, ...
from tornado.httpclient import HTTPClientError  # noqa: E402

from dsh_notebook.llm import ChatClient  # noqa: E402
from dsh_notebook.llm.agent import Agent  # noqa: E402
from dsh_notebook.llm.session import SessionLog  # noqa: E402
from dsh_notebook.llm.testing import ScriptedServer  # noqa: E402
from dsh_notebook.reckoner import Engine  # noqa: E402
from dsh_notebook.research import Ledger  # noqa: E402
from dsh_notebook.reviewer import sources  # noqa: E402
from dsh_notebook.reviewer.review import ReviewHistory, run_review  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_ledger_explorer import build  # noqa: E402

NB = "work/report.ipynb"
MIME_RECORD = "application/vnd.dsh.record+json"
REVIEW = {
    "verdict": "on-track", "headline": "The calculation answered the question asked.",
    "summary": "The person asked for a current; the AI computed it.",
    "insights": [{"title": "Answer matches the request",
                  "evidence": [{"marker": "U1", "quote": "12 V across 4 ohm"}],
                  "why": "It is what was asked.", "suggestion": "Keep the units in the question.",
                  "check": "The next answer names its units.", "confidence": "medium"}],
}


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"dsh_notebook": True}}}


@pytest.fixture(autouse=True)
def dsh_home(tmp_path, monkeypatch):
    """The server runs in this process: its academic state goes to this test's own home."""
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "dsh-home"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    return tmp_path / "dsh-home"


@pytest.fixture
def api(jp_fetch, jp_asyncio_loop):
    """``api("records", notebook=NB)`` -> ``(status, JSON)`` through jupyter-server (token header)."""

    def call(*route, method="GET", body=None, notebook=None, params=None, headers=None):
        params = dict(params or {})
        if notebook is not None:
            params["notebook"] = notebook
        if body is not None and not isinstance(body, (str, bytes)):
            body = json.dumps(body)
        try:
            r = jp_asyncio_loop.run_until_complete(
                jp_fetch("dsh", "api", *route, method=method, body=body, params=params, headers=headers))
        except HTTPClientError as exc:
            r = exc.response
        return r.code, json.loads(r.body) if r.body else None

    return call


@pytest.fixture
def raw(http_server_client, jp_asyncio_loop, jp_base_url):
    """Requests with no token header: ``raw(path, method=..., headers=..., body=...)`` -> response."""

    def fetch(path, **kw):
        try:
            return jp_asyncio_loop.run_until_complete(http_server_client.fetch(jp_base_url + path, **kw))
        except HTTPClientError as exc:
            return exc.response

    return fetch


def _client(srv) -> ChatClient:
    os.environ["DEEPSEEK_BASE_URL"] = srv.base_url
    try:
        return ChatClient(backoff=0.01)
    finally:
        del os.environ["DEEPSEEK_BASE_URL"]


@pytest.fixture
def artifact(jp_root_dir):
    """``work/report.ipynb`` and its sidecar, written by the real engines."""
    nb_path = jp_root_dir / NB
    sidecar = nb_path.with_name("report.dsh")
    # a closed record, then one left open
    e = Engine(sidecar)
    assert e.record_start("Ohm's law")["ok"]
    assert e.set("V", {"num": 12, "dim": "volt"})["ok"] and e.set("R", {"num": 4, "dim": "ohm"})["ok"]
    assert e.eval("@V/@R", "I")["ok"]
    assert not e.eval("@V+@R", "bad")["ok"]  # refused: volt + ohm
    closed = e.open_record["id"]
    assert e.record_end("I = 3 A")["ok"]
    assert e.record_start("Draft")["ok"]
    opened = e.open_record["id"]
    e.close()  # the draft stays open on disk
    # a chat session (the agent against the scripted server), reviewed twice
    script = [{"reply": {"content": "The current is 3 A."}},
              {"expect": {"stream": False}, "reply": {"content": json.dumps(REVIEW)}},
              {"expect": {"stream": False}, "reply": {"content": json.dumps({**REVIEW, "verdict": "drifting"})}}]
    with ScriptedServer(script) as srv:
        client = _client(srv)
        log = SessionLog.create(sidecar / "sessions", model=client.model.id, preset="plain", name="main")
        assert Agent(client, log).run_turn("What current flows for 12 V across 4 ohm?").status == "completed"
        log.close()
        target = {"source": "notebook", "path": str(log.path)}
        utterances = sources.read_target(f"notebook:{log.path}")
        history = ReviewHistory(sidecar / "reviews", target)
        first = run_review(utterances, focus="ai", client=client, target=target, generation=1)
        history.append(first)
        history.record_question(first["id"], "Was the unit right?", "Yes: ampere.")
        second = run_review(utterances, focus="me", client=client, target=target, generation=2)
        history.append(second)
    # a ledger up to human-approval-requested
    ledger = build(nb_path)
    # the notebook: one cell whose output names the closed record (written through the engine's
    # tools above, as a model does, not by %%reckon lines: verify's check 7 would name those)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("# Ohm's law, through the engine's tools")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "text/plain": "Ohm's law", "text/markdown": "**Ohm's law**",
        MIME_RECORD: {"title": "Ohm's law", "status": "closed", "steps": []}},
        metadata={"dsh": {"record_id": closed, "status": "closed", "sidecar": "report.dsh"}})]
    nb.cells = [cell]
    nbformat.write(nb, str(nb_path))
    return {"notebook": nb_path, "sidecar": sidecar, "closed": closed, "open": opened, "session": log.id,
            "reviews": (first, second), "ledger": ledger}


# ----------------------------------------------------------------------------- install


def test_jupyter_server_extension_list_shows_it_enabled_and_ok():
    """The wheel's jupyter_server_config.d file enables the extension (it is installed into this venv)."""
    probe = subprocess.run([sys.executable, "-m", "jupyter", "server", "--version"], capture_output=True, text=True,
                           timeout=120)
    if probe.returncode != 0:
        pytest.skip(f"jupyter-server's command line is not available here: {probe.stderr.strip()[:200]}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_")}
    r = subprocess.run([sys.executable, "-m", "jupyter", "server", "extension", "list"], capture_output=True,
                       text=True, timeout=120, env=env)
    out = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout + r.stderr)
    assert re.search(r"dsh_notebook\s+enabled", out), out
    assert re.search(r"dsh_notebook \S+ OK", out), out


def test_import_dsh_notebook_loads_no_server():
    code = ("import sys, dsh_notebook; dsh_notebook._jupyter_server_extension_points(); import dsh_notebook.server; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'IPython', 'jupyter_server', 'tornado'}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr


# ----------------------------------------------------------------------------- security


ROUTES = [("GET", "dsh/api/academic"), ("POST", "dsh/api/academic"), ("GET", f"dsh/api/records?notebook={NB}"),
          ("GET", f"dsh/api/records/1?notebook={NB}"), ("GET", f"dsh/api/sessions?notebook={NB}"),
          ("GET", f"dsh/api/reviews?notebook={NB}"), ("GET", f"dsh/api/ledgers?notebook={NB}"),
          ("GET", f"dsh/api/ledgers/main?notebook={NB}"), ("POST", f"dsh/api/ledgers/main/decision?notebook={NB}")]


@pytest.mark.parametrize("method, path", ROUTES)
def test_unauthenticated_requests_are_refused(raw, artifact, method, path):
    body = json.dumps({"enabled": True}) if method == "POST" else None
    for headers in ({}, {"Authorization": "token not-the-token"}):
        r = raw(path, method=method, body=body, headers=headers, follow_redirects=False)
        assert r.code in (401, 403), (path, r.code)
        assert "error" in json.loads(r.body)
    assert not (artifact["sidecar"] / "ledger" / "main.jsonl").read_text().count("human-decision-recorded")


def _cookies(response) -> dict:
    jar = SimpleCookie()
    for header in response.headers.get_list("Set-Cookie"):
        jar.load(header)
    return {k: v.value for k, v in jar.items()}


def test_a_cookie_authenticated_post_needs_the_xsrf_token(raw, jp_serverapp, dsh_home):
    token = jp_serverapp.identity_provider.token
    login = _cookies(raw("dsh/api/academic", headers={"Authorization": f"token {token}"}))
    [name] = [k for k in login if k.startswith("username-")]  # jupyter-server's login cookie
    xsrf = _cookies(raw("login"))["_xsrf"]
    cookie = f"{name}={login[name]}"
    # the login cookie alone authenticates a GET...
    r = raw("dsh/api/academic", headers={"Cookie": cookie})
    assert r.code == 200 and json.loads(r.body)["enabled"] is False
    # ...but a POST without the XSRF token is refused and changes nothing
    body = json.dumps({"enabled": True})
    r = raw("dsh/api/academic", method="POST", body=body, headers={"Cookie": cookie})
    assert r.code == 403 and "xsrf" in json.loads(r.body)["error"].lower()
    assert not (dsh_home / "academic.json").exists()
    r = raw("dsh/api/academic", method="POST", body=body, headers={"Cookie": f"{cookie}; _xsrf={xsrf}",
                                                                    "X-XSRFToken": "not-the-token"})
    assert r.code == 403
    # with the _xsrf cookie and the same token in X-XSRFToken it passes
    r = raw("dsh/api/academic", method="POST", body=body, headers={"Cookie": f"{cookie}; _xsrf={xsrf}",
                                                                    "X-XSRFToken": xsrf})
    assert r.code == 200 and json.loads(r.body)["enabled"] is True
    assert json.loads((dsh_home / "academic.json").read_text())["enabled"] is True


def test_paths_outside_the_root_are_refused(api, artifact, jp_root_dir, tmp_path):
    outside = tmp_path / "outside"
    (outside / "secret.dsh" / "records").mkdir(parents=True)
    (outside / "secret.ipynb").write_text("{}")
    (jp_root_dir / "link").symlink_to(outside, target_is_directory=True)
    (jp_root_dir / "work" / "moved.dsh").symlink_to(outside / "secret.dsh", target_is_directory=True)
    for route in ("records", "sessions", "reviews", "ledgers"):
        for bad in ("../outside/secret.ipynb", "work/../../outside/secret.ipynb", str(outside / "secret.ipynb"),
                    "/etc/x.ipynb", "link/secret.ipynb", "work/moved.ipynb"):
            status, body = api(route, notebook=bad)
            assert status == 403 and body["error"], (route, bad, status, body)
    status, body = api("records", artifact["closed"], notebook="link/secret.ipynb")
    assert status == 403
    status, body = api("ledgers", "main", notebook="../outside/secret.ipynb")
    assert status == 403
    # bad input names the problem
    status, body = api("records")
    assert status == 400 and "notebook query parameter" in body["error"]
    status, body = api("records", notebook="work/report.txt")
    assert status == 400 and ".ipynb" in body["error"]
    status, body = api("records", "..", notebook=NB)
    assert status in (400, 404)
    status, body = api("ledgers", "..", notebook=NB)
    assert status in (400, 404)
    status, body = api("ledgers", "a b", notebook=NB)
    assert status == 400 and "not a ledger name" in body["error"]
    status, body = api("records", notebook=".hidden/x.ipynb")  # jupyter-server serves no hidden files by default
    assert status == 403 and "hidden" in body["error"]
    assert api("records", notebook="./work//report.ipynb")[0] == 200


# ----------------------------------------------------------------------------- routes


def test_academic_get_and_post(api, dsh_home):
    from dsh_notebook.academic import state

    status, body = api("academic")
    assert status == 200
    assert body == {"ok": True, "enabled": False, "lastError": None, "applied": None,
                    "gate": {"count": 0, "lastAt": None}}
    status, body = api("academic", method="POST", body={"enabled": True})
    assert status == 200 and body["enabled"] is True and body["ok"] is True
    assert state.status()["enabled"] is True  # the same state %academic and the CLI read
    status, body = api("academic")
    assert body["enabled"] is True
    for bad, words in (({"enabled": "yes"}, "true or false"), ({}, "missing"), ([True], "JSON object"),
                       ({"enabled": True, "x": 1}, "unknown field"), ("{not json", "not JSON")):
        status, body = api("academic", method="POST", body=bad)
        assert status == 400 and words in body["error"], (bad, body)
    assert state.status()["enabled"] is True


def test_records_list_and_one_record(api, artifact):
    status, body = api("records", notebook=NB)
    assert status == 200
    assert [{k: r[k] for k in ("id", "title", "status", "steps", "refused")} for r in body] == [
        {"id": artifact["closed"], "title": "Ohm's law", "status": "refused", "steps": 1, "refused": 1},
        {"id": artifact["open"], "title": "Draft", "status": "open", "steps": 0, "refused": 0}]
    assert [r["current"] for r in body] == [True, True]  # the notebook names the first; the open one is live
    assert all(set(r) == {"id", "title", "status", "opened", "closed", "steps", "refused", "current"} for r in body)
    assert isinstance(body[0]["opened"], int) and body[0]["closed"] >= body[0]["opened"] and body[1]["closed"] is None

    status, rec = api("records", artifact["closed"], notebook=NB)
    assert status == 200
    assert rec["id"] == artifact["closed"] and rec["title"] == "Ohm's law" and rec["status"] == "closed"
    assert rec["header"] == {"seq": 0, "version": 1} and rec["problems"] == []
    on_disk = [json.loads(x) for x in (artifact["sidecar"] / "records" / f"{artifact['closed']}.jsonl")
               .read_text().splitlines()]
    assert rec["rows"] == on_disk[1:]  # as stored
    assert [r["tool"] for r in rec["rows"]] == ["record_start", "set", "set", "eval", "eval", "record_end"]
    status, rec = api("records", artifact["open"], notebook=NB)
    assert status == 200 and rec["status"] == "open" and rec["rows"][0]["tool"] == "record_start"

    status, body = api("records", "1795969445532", notebook=NB)
    assert status == 404 and "no record" in body["error"]
    assert api("records", notebook="work/nothing-here.ipynb") == (200, [])
    status, body = api("records", artifact["closed"], notebook="work/nothing-here.ipynb")
    assert status == 404


def test_sessions(api, artifact):
    status, body = api("sessions", notebook=NB)
    assert status == 200 and len(body) == 1
    [s] = body
    assert s["id"] == artifact["session"] and s["name"] == "main" and s["preset"] == "plain"
    assert s["title"] == "What current flows for 12 V across 4 ohm?" and s["turns"] == 1 and s["last"] == "completed"
    assert s["file"] == f"sessions/{artifact['session']}.jsonl" and "path" not in s
    assert s["model"] and s["started"] <= s["updated"]
    assert api("sessions", notebook="work/nothing-here.ipynb") == (200, [])


def test_reviews_latest_first_with_insights(api, artifact):
    first, second = artifact["reviews"]
    status, body = api("reviews", notebook=NB)
    assert status == 200 and [r["id"] for r in body] == [second["id"], first["id"]]
    latest, older = body
    assert latest["generation"] == 2 and latest["verdict"] == "drifting" and latest["status"] == "done"
    assert older["focus"] == "ai" and older["insights"] == first["insights"]
    assert older["insights"][0]["evidence"][0]["verified"] is True
    assert latest["target"] == {"source": "notebook", "path": f"report.dsh/sessions/{artifact['session']}.jsonl"}
    assert latest["file"].startswith("reviews/notebook-") and latest["seq"] == 3 and latest["ts"]
    assert older["questions"] == [{"seq": 2, "ts": older["questions"][0]["ts"], "question": "Was the unit right?",
                                   "answer": "Yes: ampere."}]
    assert latest["questions"] == []
    assert api("reviews", notebook="work/nothing-here.ipynb") == (200, [])


def test_ledgers_list_and_one_ledger(api, artifact):
    led: Ledger = artifact["ledger"]
    status, body = api("ledgers", notebook=NB)
    head = led.verify()["head"]
    assert status == 200 and body == [{"name": "main", "events": len(led.events()), "head": head, "intact": True,
                                       "awaiting": ["d1"]}]

    status, one = api("ledgers", "main", notebook=NB)
    assert status == 200
    assert {k: one[k] for k in ("name", "events", "head", "intact", "awaiting")} == body[0]
    [d1] = one["decisions"]
    assert d1["decision_id"] == "d1" and d1["status"] == "awaiting_human" and d1["awaiting_person"] is True
    assert set(d1["predicates"]) == {"can_request_human_approval", "has_unresolved_objections"}
    assert d1["predicates"]["can_request_human_approval"]["value"] is False  # a request is already pending
    assert d1["claims"] == [{"claim_id": "c1", "eligible": True, "reason": d1["claims"][0]["reason"]}]
    assert {c["claim_id"] for c in one["claims"]} == {"c1"} and {s["source_id"] for s in one["sources"]} == {"s1", "s2"}
    assert [s["retracted"] for s in one["sources"]] == [False, True]
    assert one["verify"] == {"ok": True, "problems": [], "events": len(led.events()), "head": head}
    assert [t["type"] for t in one["timeline"]][-1] == "human-approval-requested"
    assert one["timeline"][0]["authority"] == "synthesis"
    status, body = api("ledgers", "other", notebook=NB)
    assert status == 404 and "no ledger 'other'" in body["error"]
    assert api("ledgers", notebook="work/nothing-here.ipynb") == (200, [])


def test_the_decision_is_refused_unless_it_awaits_the_person(api, jp_root_dir, jp_serverapp):
    nb = jp_root_dir / "early.ipynb"
    led = build(nb, request=False)
    n = len(led.events())
    decision = {"decision_id": "d1", "revision": 1, "verdict": "approved", "note": "looks right"}
    status, body = api("ledgers", "main", "decision", method="POST", body=decision, notebook="early.ipynb")
    assert status == 409 and body["ok"] is False and body["code"] == "LEDGER_STATE"
    assert "does not await the person" in body["error"]
    status, body = api("ledgers", "main", "decision", method="POST", body={**decision, "decision_id": "d9"},
                       notebook="early.ipynb")
    assert status == 409 and body["code"] == "LEDGER_REFERENCE"
    assert len(led.events()) == n


def test_the_decision_when_it_awaits_the_person(api, artifact, jp_serverapp):
    led: Ledger = artifact["ledger"]
    n = len(led.events())
    for bad, words in (({"decision_id": "d1", "revision": 1, "verdict": "maybe"}, "verdict"),
                       ({"verdict": "approved", "revision": 1}, "decision_id"),
                       ({"decision_id": "d1", "revision": 1, "verdict": "approved", "note": 3}, "note"),
                       ({"decision_id": "d1", "revision": 1, "verdict": "approved", "by": "someone"}, "unknown field"),
                       ({"decision_id": "d1", "verdict": "approved"}, '"revision" is missing'),
                       ({"decision_id": "d1", "revision": "1", "verdict": "approved"}, '"revision" must be'),
                       ({"decision_id": "d1", "revision": True, "verdict": "approved"}, '"revision" must be'),
                       ({"decision_id": "d1", "revision": 0, "verdict": "approved"}, '"revision" must be'),
                       ("not json", "not JSON")):
        status, body = api("ledgers", "main", "decision", method="POST", body=bad, notebook=NB)
        assert status == 400 and words in body["error"], (bad, body)
    status, body = api("ledgers", "nope", "decision", method="POST",
                       body={"decision_id": "d1", "revision": 1, "verdict": "approved"}, notebook=NB)
    assert status == 404
    assert len(led.events()) == n

    decision = {"decision_id": "d1", "revision": 1, "verdict": "needs_revision", "note": "add a second cohort"}
    status, receipt = api("ledgers", "main", "decision", method="POST", body=decision, notebook=NB)
    assert status == 200 and receipt["ok"] is True and receipt["seq"] == n + 1 and len(receipt["hash"]) == 64
    last = led.events()[-1]
    assert last["type"] == "research/human-decision-recorded"
    assert last["actor"]["role"] == "human" and last["actor"]["channel"] == "server" and last["actor"]["by"]
    signature = last["data"].pop("signature")  # signed with the server user's key (issue 15)
    assert last["data"] == {"decision_id": "d1", "verdict": "needs_revision", "note": "add a second cohort",
                            "by": last["actor"]["by"], "revision": 1}
    from dsh_notebook.artifact.seal import check_decisions

    assert signature.startswith("-----BEGIN SSH SIGNATURE-----")
    assert [f.ok for f in check_decisions(artifact["ledger"].path)] == [True]
    assert led.verify()["ok"] is True
    # the same decision again: no longer awaiting the person
    status, body = api("ledgers", "main", "decision", method="POST", body=decision, notebook=NB)
    assert status == 409 and body["code"] == "LEDGER_STATE" and len(led.events()) == n + 1
    status, one = api("ledgers", "main", notebook=NB)
    assert one["awaiting"] == [] and one["decisions"][0]["status"] == "needs_revision"
    assert one["decisions"][0]["human_decisions"][0]["channel"] == "server"


# ----------------------------------------------------------------------------- saving


def _put(jp_fetch, jp_asyncio_loop, path: str, nb) -> int:
    model = {"type": "notebook", "format": "json", "content": nb}
    r = jp_asyncio_loop.run_until_complete(jp_fetch("api", "contents", path, method="PUT", body=json.dumps(model)))
    return r.code


def test_saving_through_the_contents_api_writes_the_index(jp_fetch, jp_asyncio_loop, artifact, jp_root_dir):
    from dsh_notebook.artifact.seal import sha256_file, verify

    nb = nbformat.read(str(artifact["notebook"]), as_version=4)
    assert "dsh" not in nb.metadata
    assert _put(jp_fetch, jp_asyncio_loop, NB, nb) == 200
    saved = nbformat.read(str(artifact["notebook"]), as_version=4)
    nbformat.validate(saved)
    index = saved.metadata["dsh"]
    rid = artifact["closed"]
    assert index["records"] == {rid: sha256_file(artifact["sidecar"] / "records" / f"{rid}.jsonl")}
    assert index["ledgers"] == {"main": {"head": artifact["ledger"].verify()["head"],
                                         "events": len(artifact["ledger"].events())}}
    assert saved.cells[0].metadata["dsh"] == {"records": [rid]}
    left = [f for f in verify(artifact["notebook"]) if f.ok is False]
    # the fixture shows a record the engine's tools wrote in a cell that does not run %%reckon:
    # check 7 names that (nothing made that rendering); everything the save hook wrote holds
    assert [(f.check, f.subject) for f in left] == [(7, "cell 1")], left
    # a notebook with nothing of dsh is saved as it came
    plain = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    assert _put(jp_fetch, jp_asyncio_loop, "plain.ipynb", plain) == 201  # created
    assert "dsh" not in nbformat.read(str(jp_root_dir / "plain.ipynb"), as_version=4).metadata


def test_a_failing_index_never_stops_the_save(jp_fetch, jp_asyncio_loop, artifact):
    nb = nbformat.read(str(artifact["notebook"]), as_version=4)
    nb.metadata["dsh"] = "not an index"  # sync cannot read it: the hook logs and leaves the notebook alone
    nb.cells.append(nbformat.v4.new_markdown_cell("saved anyway"))
    assert _put(jp_fetch, jp_asyncio_loop, NB, nb) == 200
    saved = nbformat.read(str(artifact["notebook"]), as_version=4)
    nbformat.validate(saved)
    assert saved.metadata["dsh"] == "not an index" and saved.cells[-1].source == "saved anyway"


def test_a_pre_save_hook_of_the_user_is_kept(tmp_path):
    from jupyter_server.services.contents.filemanager import FileContentsManager

    from dsh_notebook.server import install_pre_save_hook, pre_save_hook

    seen = []

    def theirs(model, path, contents_manager, **kw):
        seen.append(path)

    cm = FileContentsManager(root_dir=str(tmp_path))
    cm.pre_save_hook = theirs
    assert install_pre_save_hook(cm) and install_pre_save_hook(cm)  # twice: installed once
    assert cm.pre_save_hook is theirs and cm._pre_save_hooks.count(pre_save_hook) == 1
    (tmp_path / "x.dsh").mkdir()
    nb = nbformat.v4.new_notebook()
    cm.save({"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))}, "x.ipynb")
    assert seen == ["x.ipynb"]
    assert nbformat.read(str(tmp_path / "x.ipynb"), as_version=4).metadata["dsh"]["records"] == {}


# ----------------------------------------------------------------------------- the tester's findings


def test_a_click_on_an_older_revision_never_approves_the_new_one(api, jp_root_dir, jp_serverapp):
    """The person looks at revision 1; meanwhile the lead revises and requests approval of
    revision 2; the click on revision 1's card arrives: refused (409, reload), nothing written."""
    from dsh_notebook.research import Actor

    led = build(jp_root_dir / "race.ipynb")
    lead = Actor("lead")
    assert led.append("decision-revised", {"decision_id": "d1", "revision": 2, "statement": "No: the opposite",
                                           "claim_ids": ["c1"], "confidence": "high"}, lead)["ok"]
    assert led.append("review-verdict-recorded", {"decision_id": "d1", "revision": 2, "verdict": "pass"},
                      Actor("citation_auditor"))["ok"]
    assert led.append("human-approval-requested", {"decision_id": "d1", "revision": 2}, lead)["ok"]
    n = len(led.events())
    click = {"decision_id": "d1", "revision": 1, "verdict": "approved", "note": "looks right"}
    status, body = api("ledgers", "main", "decision", method="POST", body=click, notebook="race.ipynb")
    assert status == 409 and body["code"] == "LEDGER_STATE", body
    assert "decision d1 is at revision 2; you decided on revision 1: reload" in body["error"]
    status, body = api("ledgers", "main", "decision", method="POST", body={k: v for k, v in click.items()
                                                                          if k != "revision"}, notebook="race.ipynb")
    assert status == 400 and '"revision" is missing' in body["error"]
    assert len(led.events()) == n
    status, receipt = api("ledgers", "main", "decision", method="POST", body={**click, "revision": 2},
                          notebook="race.ipynb")
    assert status == 200 and receipt["ok"]
    assert led.fold().human_decisions_for("d1")[0].revision == 2


def test_the_anonymous_token_user_is_recorded_as_the_system_user(api, artifact, jp_serverapp):
    """Under token login jupyter-server makes up a random hex username per browser; the decision
    names the operating-system user who runs the server instead."""
    from dsh_notebook.artifact.ledgers import person_name

    decision = {"decision_id": "d1", "revision": 1, "verdict": "approved", "note": ""}
    status, receipt = api("ledgers", "main", "decision", method="POST", body=decision, notebook=NB)
    assert status == 200, receipt
    last = artifact["ledger"].events()[-1]
    assert last["actor"]["by"] == last["data"]["by"] == f"{person_name()} (JupyterLab)"


def test_person_for_keeps_a_real_identity():
    from jupyter_server.auth.identity import IdentityProvider, User

    from dsh_notebook.artifact.ledgers import person_name
    from dsh_notebook.server.handlers import is_anonymous, person_for

    provider = IdentityProvider()

    class Handler:  # what generate_anonymous_user needs
        class log:
            debug = staticmethod(lambda *a: None)

    anon = provider.generate_anonymous_user(Handler())
    assert is_anonymous(anon, provider) and person_for(anon, provider) == f"{person_name()} (JupyterLab)"
    hub_user = User("alice", name="Alice Example")
    assert person_for(hub_user, provider) == "alice"

    class HubProvider:  # another identity provider: its users are never taken for anonymous
        pass

    HubProvider.__module__ = "jupyterhub.singleuser"
    assert not is_anonymous(anon, HubProvider()) and person_for(anon, HubProvider()) == anon.username
    assert person_for(User("0123456789abcdef0123456789abcdef", name="Bob"), provider) == "0123456789abcdef0123456789abcdef"


def test_intact_uses_the_head_sealed_in_the_notebook(api, artifact):
    """A ledger whose last line was deleted keeps a valid chain; the head sealed by sync (in the
    notebook's metadata) shows it is not intact. Events appended after the seal are fine."""
    from dsh_notebook.artifact.seal import sync
    from dsh_notebook.research import Actor

    led: Ledger = artifact["ledger"]
    sync(artifact["notebook"])
    status, body = api("ledgers", notebook=NB)
    assert status == 200 and body[0]["intact"] is True
    good = led.path.read_bytes()
    led.path.write_bytes(b"".join(good.splitlines(keepends=True)[:-1]))
    status, body = api("ledgers", notebook=NB)
    assert body[0]["intact"] is False
    status, one = api("ledgers", "main", notebook=NB)
    assert one["intact"] is False and "ends before the head sealed by sync" in one["verify"]["problems"][0]["problem"]
    led.path.write_bytes(good)
    assert led.append("escalated", {"subject": {"kind": "decision", "id": "d1"}, "reason": "risk"},
                      Actor("runtime"))["ok"]
    status, one = api("ledgers", "main", notebook=NB)
    assert one["intact"] is True and one["verify"]["sealed"]["status"] == "appended"


def test_an_unknown_route_under_dsh_api_is_a_json_404(api, raw, artifact):
    """``GET /dsh/api/nothing`` (and any other path or method there with no route) answers JSON
    naming the path, not jupyter-server's HTML 404 page; without the token it is still refused."""
    for method, route, body in (("GET", ("nothing",), None), ("GET", ("records", "1", "extra"), None),
                                ("POST", ("nothing",), {"x": 1}), ("DELETE", ("ledgers", "main", "x"), None)):
        status, answer = api(*route, method=method, body=body, notebook=NB)
        assert status == 404, (method, route, status, answer)
        assert answer["error"].startswith(f"no such route: {method} /dsh/api/{'/'.join(route)}"), answer
        assert "/dsh/api/records" in answer["error"]  # it names the routes there are
    status, answer = api()  # /dsh/api itself
    assert status == 404 and answer["error"].startswith("no such route: GET /dsh/api")
    assert api("records", notebook=NB)[0] == 200  # the real routes still come first
    r = raw("dsh/api/nothing", follow_redirects=False)
    assert r.code in (401, 403) and "error" in json.loads(r.body)


def test_a_too_long_ledger_name_and_an_out_of_range_revision_are_400(api, artifact):
    """A 300-character ledger name gave a 500 (OSError: File name too long); a revision of
    10**30 a 409. Both are the client's mistake: 400, nothing written."""
    led = artifact["ledger"]
    n = len(led.events())
    long = "a" * 300
    status, body = api("ledgers", long, notebook=NB)
    assert status == 400 and "is not a ledger name" in body["error"] and "at most 100" in body["error"], body
    decision = {"decision_id": "d1", "revision": 1, "verdict": "approved", "note": ""}
    status, body = api("ledgers", long, "decision", method="POST", body=decision, notebook=NB)
    assert status == 400 and "is not a ledger name" in body["error"], body
    status, body = api("ledgers", "main", "decision", method="POST", body={**decision, "revision": 10**30},
                       notebook=NB)
    assert status == 400 and "out of range" in body["error"], body
    assert len(led.events()) == n


def test_a_long_id_a_deep_body_or_a_huge_body_is_a_400_naming_it(api, artifact):
    """Issue 14 item 4: never a 500 or a server path for a client's odd request."""
    led = artifact["ledger"]
    n = len(led.events())
    status, body = api("records", "1" * 5000, notebook=NB)
    assert status == 400 and "is not a record id" in body["error"] and len(body["error"]) < 200, body
    deep = "[" * 30_000 + "]" * 30_000  # 60 KB, under the size limit
    status, body = api("ledgers", "main", "decision", method="POST", body=deep, notebook=NB)
    assert status == 400 and "nests arrays or objects too deeply" in body["error"], body
    huge = json.dumps({"decision_id": "d1", "revision": 1, "verdict": "approved", "note": "x" * 200_000})
    status, body = api("ledgers", "main", "decision", method="POST", body=huge, notebook=NB)
    assert status == 400 and "over the 65536-byte limit" in body["error"], body
    assert len(led.events()) == n
    for _status, answer in (api("records", "1" * 5000, notebook=NB),):
        assert "/" not in answer["error"].replace("/dsh/api", "")  # no server path in the answer


def test_no_route_reads_through_a_symlink_below_the_sidecar(api, artifact, jp_root_dir, tmp_path):
    """Issue 14 item 4 (README: "a symlink ... gets 403"): a link below the sidecar, even one
    pointing inside the root, is refused by every route that would read through it, naming it;
    the decision route writes nothing through a linked ledger."""
    side = artifact["sidecar"]
    outside = tmp_path / "outside.jsonl"
    outside.write_text('{"type": "review", "review": {"headline": "planted"}}\n')
    other = jp_root_dir / "other.jsonl"
    other.write_text("{}\n")
    led = artifact["ledger"]
    n = len(led.events())
    cases = [
        ("records", side / "records" / "1795000000000.jsonl", outside, ("records",)),
        ("records", side / "stale", tmp_path, ("records", artifact["closed"])),
        ("sessions", side / "sessions" / "planted.jsonl", outside, ("sessions",)),
        ("reviews", side / "reviews" / "planted.jsonl", other, ("reviews",)),
        ("ledger", side / "ledger" / "copy.jsonl", led.path, ("ledgers",)),
    ]
    for _what, link, target, route in cases:
        link.symlink_to(target, target_is_directory=target.is_dir())
        status, body = api(*route, notebook=NB)
        assert status == 403 and "symbolic link" in body["error"] and link.name in body["error"], (route, body)
        assert str(tmp_path) not in body["error"]
        link.unlink()
        assert api(*route, notebook=NB)[0] == 200, route
    # a linked ledger: no read, no decision written through it
    (side / "ledger" / "linked.jsonl").symlink_to(led.path)
    for route in (("ledgers", "main"), ("ledgers", "linked")):
        assert api(*route, notebook=NB)[0] == 403
    status, body = api("ledgers", "linked", "decision", method="POST", notebook=NB,
                       body={"decision_id": "d1", "revision": 1, "verdict": "approved", "note": ""})
    assert status == 403 and len(led.events()) == n
    (side / "ledger" / "linked.jsonl").unlink()
    # the sidecar itself a link (to a folder inside the root)
    moved = jp_root_dir / "elsewhere.dsh"
    side.rename(moved)
    side.symlink_to(moved, target_is_directory=True)
    for route in (("records",), ("sessions",), ("reviews",), ("ledgers",)):
        status, body = api(*route, notebook=NB)
        assert status == 403 and "report.dsh is a symbolic link" in body["error"], (route, body)
