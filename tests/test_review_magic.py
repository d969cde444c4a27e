"""``%review`` in a real IPython shell against the scripted server (spec: reviewer.md
"Surface", "Runs and states")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_notebook.kernel import current_reviewer

REVIEW = {"verdict": "on-track", "headline": "The question was answered.", "summary": "One question, one answer.",
          "insights": [{"title": "Answered with a number", "evidence": [{"marker": "U1", "quote": "How far is the Moon"},
                                                                         {"marker": "A1", "quote": "made up"}],
                        "why": "w", "suggestion": "Ask for the source.", "check": "A source is named.",
                        "confidence": "medium"}]}
MIME = "application/vnd.dsh.review+json"


def review_reply(headline="The question was answered."):
    return {"expect": {"stream": False}, "reply": {"content": json.dumps({**REVIEW, "headline": headline})}}


@pytest.fixture(autouse=True)
def own_home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))


def shown(cap):
    outs = [o for o in cap.outputs if MIME in o.data]
    assert outs, [o.data.keys() for o in cap.outputs]
    return outs[-1]


def test_review_this_notebooks_chat_then_watch_the_next_turn(sh, server):  # noqa: F811
    srv = server([{"reply": {"content": "About 384,400 km."}}, review_reply(),
                  {"reply": {"content": "About 150 million km."}}, review_reply("Second review.")])
    sh.chat("How far is the Moon?")
    r, cap = sh.run("%review --target this --focus ai --wait")
    assert r.error_in_exec is None, r.error_in_exec
    out = shown(cap)
    assert out.data[MIME]["headline"] == "The question was answered."
    assert "[U1] \"How far is the Moon\"" in out.data["text/plain"] and "(unverified)" in out.data["text/plain"]
    assert out.metadata["dsh"]["prompt_version"] == "review/2"
    # the reviewer request was tool-free and non-streaming; the review never went back into the chat
    assert "tools" not in srv.requests[1]["body"] and srv.requests[1]["body"]["stream"] is False
    sh.chat("And the Sun?")
    rv = current_reviewer(sh.ip)
    rv.wait(10)
    assert rv.status()["latest"]["headline"] == "Second review."
    assert all("The question was answered" not in json.dumps(r["body"]) for r in srv.requests[2:3])
    r, cap = sh.run("%review --history")
    assert "The question was answered." in cap.stdout and "Second review." in cap.stdout


def test_ask_about_an_older_review(sh, server):  # noqa: F811
    srv = server([{"reply": {"content": "Far."}}, review_reply("First."), review_reply("Second."),
                  {"expect": {"contains": "evidence"}, "reply": {"content": "The quote of U1."}}])
    sh.chat("How far is the Moon?")
    sh.run("%review --target this --wait")
    sh.run("%review --focus dialogue --wait")
    r, cap = sh.run('%review --ask "What is the evidence?" --review 1')
    assert r.error_in_exec is None and "The quote of U1." in cap.outputs[-1].data["text/plain"]
    assert "First." in srv.requests[3]["body"]["messages"][0]["content"]
    assert "Second." not in srv.requests[3]["body"]["messages"][0]["content"]


def test_pause_resume_stop_and_state(sh, server):  # noqa: F811
    server([{"reply": {"content": "Far."}}, review_reply()])
    r, cap = sh.run("%review")
    assert "No target chosen" in cap.outputs[-1].data["text/plain"]
    sh.chat("How far is the Moon?")
    sh.run("%review --target this --wait")
    r, cap = sh.run("%review --pause")
    assert "paused" in cap.stdout and current_reviewer(sh.ip).state == "paused"
    r, cap = sh.run("%review --resume")
    assert current_reviewer(sh.ip).state == "watching"
    saved = json.loads((sh.sidecar / "reviewer.json").read_text(encoding="utf-8"))
    assert saved["paused"] is False and saved["target"]["source"] == "notebook"


@pytest.mark.parametrize("line, message", [
    ("--focus everything", "invalid choice"),
    ("--target this extra", "takes no path"),
    ("--target slack x", "unknown target"),
    ("--target this", "no chat yet"),
    ("--pause --resume", "not allowed with"),
    ('--ask "why?"', "choose a target first"),
])
def test_bad_review_options(sh, line, message):  # noqa: F811
    r, _ = sh.run(f"%review {line}")
    assert message in str(r.error_in_exec)


def test_review_an_outside_log(sh, server, tmp_path):  # noqa: F811
    import os

    shared = Path(os.environ["DSH_SHARED_DIR"]) if os.environ.get("DSH_SHARED_DIR") else \
        Path(__file__).resolve().parents[2] / "shared"
    fixtures = shared / "fixtures" / "logs" / "claude"
    if not fixtures.is_dir():
        pytest.skip(f"the shared fixtures are not at {fixtures} (set DSH_SHARED_DIR to the shared folder)")
    log = tmp_path / "t.jsonl"
    log.write_bytes((fixtures / "claude-2.0.64-three-turns-write-edit-bash.jsonl").read_bytes())
    srv = server([review_reply()])
    r, cap = sh.run(f"%review --target claude {log} --wait")
    assert r.error_in_exec is None and shown(cap).data[MIME]["verdict"] == "on-track"
    assert "[U1]" in srv.requests[0]["body"]["messages"][1]["content"]
    current_reviewer(sh.ip).close()


def test_sync_and_verify_name_the_review_history(sh, server, tmp_path):  # noqa: F811
    import nbformat

    from dsh_notebook.artifact.seal import sync, verify

    server([{"reply": {"content": "Far."}}, review_reply()])
    sh.chat("How far is the Moon?")
    r, cap = sh.run("%review --target this --wait")
    out = shown(cap)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%review --target this --wait")
    cell.outputs = [nbformat.v4.new_output("display_data", data=out.data, metadata=out.metadata)]
    nb.cells = [cell]
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    index = sync(tmp_path / "nb.ipynb")
    assert index["reviews"][0]["file"] == out.metadata["dsh"]["reviews_file"]
    assert not [f for f in verify(tmp_path / "nb.ipynb") if f.ok is False]
    with open(sh.sidecar / index["reviews"][0]["file"], "a", encoding="utf-8") as fh:
        fh.write('{"seq": 9, "type": "review", "review": {}}\n')
    bad = [f for f in verify(tmp_path / "nb.ipynb") if f.ok is False]
    assert bad and "review history differs" in bad[0].detail and "compare it with your own copy" in bad[0].detail


def test_reviewer_settings_and_hiding_unverified_insights(sh, server, tmp_path):  # noqa: F811
    home = Path(__import__("os").environ["DSH_NOTEBOOK_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.toml").write_text("[reviewer]\ntimeout = 30\nhide_unverified = true\npoll = -1\ncolour = 1\n",
                                        encoding="utf-8")
    sh.ip.extension_manager.reload_extension("dsh_notebook")
    server([{"reply": {"content": "Far."}}, review_reply()])
    sh.chat("How far is the Moon?")
    r, cap = sh.run("%review --target this --wait")
    rv = current_reviewer(sh.ip)
    assert rv.timeout == 30 and rv.poll == 5 and rv.hide_unverified is True
    assert "poll = -1 is outside" in cap.stdout and "no setting 'colour'" in cap.stdout
    out = shown(cap)
    assert "1 insight(s) with an unverified quote hidden" in out.data["text/plain"]
    assert "Answered with a number" not in out.data["text/plain"]
    assert rv.history().get()["insights"][0]["title"] == "Answered with a number"  # stored, only hidden


def test_model_text_cannot_inject_markup():
    from dsh_notebook.notebook.review import review_bundle

    review = {"verdict": "drifting", "headline": "<img src=x onerror=alert(1)>", "summary": "# not a heading",
              "insights": [{"title": "t", "confidence": "low", "why": "w", "suggestion": "s", "check": "c",
                            "evidence": [{"marker": "U1", "quote": "line one\n# line two", "verified": False}]}]}
    data, _ = review_bundle(review, {"state": "watching"})
    page = data["text/html"]
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page and "<h1>" not in page
    assert "<blockquote>\n<p>[U1] line one\n# line two — <em>unverified" in page
    assert "text/markdown" not in data


@pytest.mark.parametrize("line, message", [('--ask ""', "needs a question"), ("--review 1", "use it with --ask")])
def test_ask_options(sh, line, message):  # noqa: F811
    r, _ = sh.run(f"%review {line}")
    assert message in str(r.error_in_exec)
