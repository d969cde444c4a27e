"""``%%chat`` through a real IPython shell and the scripted server over HTTP (spec: llm.md
"``%%chat``", "Presets from the reckoner seed"; public case P16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_notebook.notebook.chat import answer_markdown

MIME = "application/vnd.dsh.session+json"
RECORD = "application/vnd.dsh.record+json"
SIX = ["set", "get", "eval", "record_start", "record_message", "record_end"]


def call(i, name, args):
    return {"id": f"call_{i}", "name": name, "arguments": json.dumps(args)}


def answer(cap):
    outs = [o for o in cap.outputs if MIME in o.data]
    assert len(outs) == 1, [o.data.keys() for o in cap.outputs]
    return outs[0]


# --------------------------------------------------------------------------- plain


def test_plain_chat_answers_once_and_logs_the_turn(sh, server):
    srv = server([{"expect": {"contains": "boiling point", "stream": True},
                   "reply": {"content": "Water boils at 100 °C at 101.325 kPa.", "chunk": 4}}])
    r, cap = sh.chat("What is the boiling point of water at sea level?")
    assert r.error_in_exec is None
    out = answer(cap)
    assert out.data["text/plain"] == "Water boils at 100 °C at 101.325 kPa."
    assert out.data["text/html"] == '<div class="dsh-inert mathjax_ignore tex2jax_ignore"><p>Water boils at 100 °C at 101.325 kPa.</p>\n</div>'
    assert "text/markdown" not in out.data  # a frontend would render raw HTML in it
    content = out.data[MIME]
    assert content == {"session": "main", "preset": "plain", "model": "deepseek-chat", "turn": 1,
                       "status": "completed", "answer": "Water boils at 100 °C at 101.325 kPa.",
                       "tool_calls": [], "records": []}
    meta = out.metadata["dsh"]
    [log] = sh.sessions()
    assert meta["session_id"] == log.stem and meta["sidecar"] == f"nb.dsh/sessions/{log.name}"
    types = [e["type"] for e in sh.events(log)]
    assert types == ["session/start", "turn/start", "user/message", "step/start", "assistant/message",
                     "step/end", "turn/end"]
    # the plain preset sends no tools and no system prompt; the key never reaches the log
    body = srv.requests[0]["body"]
    assert "tools" not in body and [m["role"] for m in body["messages"]] == ["user"]
    assert "test-key-not-real" not in log.read_text()


def test_the_session_continues_until_new(sh, server):
    srv = server([{"reply": {"content": "First answer."}}, {"reply": {"content": "Second answer."}},
                  {"reply": {"content": "Fresh answer."}}])
    sh.chat("first question")
    r, cap = sh.chat("second question")
    assert answer(cap).data[MIME]["turn"] == 2
    sent = srv.requests[1]["body"]["messages"]
    assert [(m["role"], m["content"]) for m in sent] == [("user", "first question"), ("assistant", "First answer."),
                                                         ("user", "second question")]
    r, cap = sh.chat("third question", "--new")
    assert answer(cap).data[MIME]["turn"] == 1
    assert [m["content"] for m in srv.requests[2]["body"]["messages"]] == ["third question"]
    assert len(sh.sessions()) == 2


def test_named_sessions_are_separate_and_a_logged_session_can_be_continued(sh, server):
    srv = server([{"reply": {"content": "A1"}}, {"reply": {"content": "B1"}}, {"reply": {"content": "A2"}}])
    sh.chat("to a", "--session a")
    sh.chat("to b", "--session b")
    sid = next(p.stem for p in sh.sessions() if sh.events(p)[0].get("name") == "a")
    # a new kernel (reloaded extension) continues session a by its id, rebuilt from the log
    sh.ip.extension_manager.reload_extension("dsh_notebook")
    r, cap = sh.chat("again to a", f"--session {sid}")
    assert r.error_in_exec is None
    assert [m["content"] for m in srv.requests[2]["body"]["messages"]] == ["to a", "A1", "again to a"]


def test_a_session_cannot_change_preset_or_model(sh, server):
    server([{"reply": {"content": "ok"}}])
    sh.chat("hello")
    r, cap = sh.chat("now calculate", "--preset reckoner")
    assert r.error_in_exec is not None and "cannot change preset" in str(r.error_in_exec)
    r, cap = sh.chat("hello", "--model deepseek-reasoner")
    assert "add --new" in str(r.error_in_exec)


@pytest.mark.parametrize("line, message", [
    ("--preset nonsense", "unknown preset 'nonsense'"),
    ("--session", "--session needs a value"),
    ("--temperature 2", "unknown option '--temperature'"),
    ("--session ../../etc", "session name"),
])
def test_bad_options_are_refused_before_anything_is_sent(sh, server, line, message):
    srv = server([])
    r, cap = sh.chat("hello", line)
    assert r.error_in_exec is not None and message in str(r.error_in_exec)
    assert srv.requests == [] and sh.sessions() == []


def test_an_empty_message_is_refused(sh, server):
    srv = server([])
    r, cap = sh.run("%%chat\n   \n")
    assert "no message" in str(r.error_in_exec) and srv.requests == []


def test_a_missing_key_names_the_variable(sh, server, monkeypatch):
    server([])
    monkeypatch.delenv("DEEPSEEK_API_KEY")
    r, cap = sh.chat("hello")
    assert "MISSING_CREDENTIAL" in str(r.error_in_exec) and "DEEPSEEK_API_KEY" in str(r.error_in_exec)
    assert sh.sessions() == []


def test_a_failed_turn_raises_without_a_traceback_and_is_logged(sh, server):
    server([{"reply": {"status": 401, "message": "invalid api key"}}])
    r, cap = sh.chat("hello")
    exc = r.error_in_exec
    assert type(exc).__name__ == "ChatFailed" and "HTTP_STATUS" in str(exc)
    assert exc._render_traceback_() == [f"\x1b[31mChatFailed: {exc}\x1b[0m"]
    [log] = sh.sessions()
    end = sh.events(log)[-1]
    assert end["type"] == "turn/end" and end["status"] == "error" and end["code"] == "HTTP_STATUS"


def test_chat_list_shows_the_sessions(sh, server):
    server([{"reply": {"content": "x"}}])
    sh.chat("hello", "--session notes")
    r, cap = sh.run("%chat list")
    assert "notes" in cap.stdout and "plain" in cap.stdout and "completed" in cap.stdout


# --------------------------------------------------------------------------- P16


P16_REPLY = """Here is how to compute it:
# step 1: read the data
data = load("x.csv")
# step 2: average
mean = sum(data) / len(data)

## Result
The mean is printed above."""


def test_P16_comment_lines_are_not_headings(sh, server):
    server([{"reply": {"content": P16_REPLY}}])
    r, cap = sh.chat("how do I average a column?")
    out = answer(cap)
    assert out.data["text/plain"] == P16_REPLY  # stored raw
    [log] = sh.sessions()
    assert next(e for e in sh.events(log) if e["type"] == "assistant/message")["text"] == P16_REPLY
    page = out.data["text/html"]
    # the unfenced code block is fenced; the real heading stays a heading
    assert page.startswith('<div class="dsh-inert mathjax_ignore tex2jax_ignore"><p>Here is how to compute it:</p>\n<pre><code># step 1: read the data')
    assert "mean = sum(data) / len(data)\n</code></pre>" in page
    assert "<h2>Result</h2>\n<p>The mean is printed above.</p>" in page


def _tags(page: str) -> list[tuple[str, list]]:
    """The elements an HTML parser (as a browser would) finds in *page*, with their attributes."""
    from html.parser import HTMLParser

    found: list[tuple[str, list]] = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    P().feed(page)
    return found


def test_a_reply_carrying_html_or_script_links_is_shown_as_text(sh, server):
    """A reply steered into markup (by a search result, a full text, a log) is drawn, never run:
    tags are text, javascript:/data: links are not links, images are not loaded, maths stays TeX."""
    reply = ('Result <img src=x onerror="alert(1)"> <script>alert(2)</script> <svg onload=alert(3)>'
             '<iframe src="https://example.org"></iframe> [click](javascript:alert(4)) '
             '![pic](https://example.org/p.png) [ok](https://example.org/paper) $R = \\rho L/A$')
    server([{"reply": {"content": reply}}])
    r, cap = sh.chat("resistance?")
    out = answer(cap)
    page = out.data["text/html"]
    tags = _tags(page)
    assert {t for t, _ in tags} <= {"div", "p", "a", "span"}, tags  # no img, script, svg, iframe element
    assert all(not k.startswith("on") and k != "src" for _, attrs in tags for k, _v in attrs)
    assert all(v.startswith("https://") for t, attrs in tags if t == "a" for k, v in attrs if k == "href")
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page and "&lt;script&gt;alert(2)" in page
    assert '<a href="https://example.org/p.png" rel="noopener noreferrer nofollow" target="_blank">[image: pic]</a>' in page
    assert '<a href="https://example.org/paper"' in page and "[click](javascript:alert(4))" in page  # text, not a link
    assert '<span class="math mathjax_process tex2jax_process">\\(R = \\rho L/A\\)</span>' in page
    assert out.data["text/plain"] == reply and "text/markdown" not in out.data


@pytest.mark.parametrize("text", [
    "## Summary\nThe resistance is 0.127 Ω.",
    "# Title\n\nSome prose with x = 5 in it.",
    "```python\n# a comment in a fence\nx = 1\n```",
    "No hashes at all.\ny = 2",
])
def test_P16_markdown_without_unfenced_code_is_unchanged(text):
    assert answer_markdown(text) == text


def test_P16_code_with_comments_after_prose_block_is_fenced():
    text = "Try this:\n\nimport numpy as np\n# the grid\nx = np.linspace(0, 1)\n\nThat is all."
    assert answer_markdown(text) == ("Try this:\n\n```\nimport numpy as np\n# the grid\nx = np.linspace(0, 1)\n```"
                                     "\n\nThat is all.")


# --------------------------------------------------------------------------- the reckoner preset


def rows_without_volatile(path: Path) -> list[dict]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    out = []
    for r in rows[1:]:  # the header line names the record's own id and time
        r = {k: v for k, v in r.items() if k != "at"}
        if r.get("tool") in ("record_start", "record_end"):
            r["content"] = {k: v for k, v in r["content"].items() if k != "record"}
        out.append(r)
    return out


def test_reckoner_preset_tool_calls_make_the_same_record_as_a_reckon_cell(sh, server):
    r, _ = sh.run("%%reckon Current through a resistor\ngiven V = 12 V\ngiven R = 4 ohm\n"
                  "note Ohm's law.\nI = @V/@R\nend The current is 3 A.")
    assert r.error_in_exec is None
    [cell_record] = sorted((sh.sidecar / "records").glob("*.jsonl"))
    srv = server([
        {"expect": {"tools": SIX, "contains": "12 V"},
         "reply": {"tool_calls": [call(1, "record_start", {"title": "Current through a resistor"}),
                                  call(2, "set", {"name": "V", "value": {"num": 12, "dim": "volt"}}),
                                  call(3, "set", {"name": "R", "value": {"num": 4, "dim": "ohm"}}),
                                  call(4, "record_message", {"text": "Ohm's law."}),
                                  call(5, "eval", {"formula": "@V/@R", "target": "I"}),
                                  call(6, "record_end", {"text": "The current is 3 A."})], "chunk": 7}},
        {"reply": {"content": "The current is 3 A."}},
    ])
    r, cap = sh.chat("A 12 V source drives a 4 ohm resistor. What current flows?", "--preset reckoner")
    assert r.error_in_exec is None
    records = sorted((sh.sidecar / "records").glob("*.jsonl"))
    assert len(records) == 2
    chat_record = next(p for p in records if p != cell_record)
    # the same rows, but for the display units the cell's given lines were written in (issue 18):
    # the model's tool calls give SI values, shown in SI
    cell_rows = rows_without_volatile(cell_record)
    assert [r["content"].pop("unit", None) for r in cell_rows] == [
        None, [["V", 1, 1.0, [2, 1, -3, -1, 0, 0, 0]]], [["Ω", 1, 1.0, [2, 1, -3, -2, 0, 0, 0]]], None,
        [["A", 1, 1.0, [0, 0, 0, 1, 0, 0, 0]]], None]  # V/Ω composes to a unit that hides the simpler A
    assert rows_without_volatile(chat_record) == cell_rows
    out = answer(cap)
    assert out.data[MIME]["records"] == [{"title": "Current through a resistor", "status": "closed", "steps": 1}]
    assert out.metadata["dsh"]["records"] == [chat_record.stem]
    assert "I = @V/@R = 3 A" in out.data["text/plain"]
    # the persona and exactly the six tools were sent
    body = srv.requests[0]["body"]
    assert body["messages"][0]["role"] == "system" and "Never compute a number in your head" in \
        body["messages"][0]["content"]
    assert sorted(t["function"]["name"] for t in body["tools"]) == sorted(SIX)
    # the engine's receipt went back to the model as the tool result
    tool_msgs = [m for m in srv.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert json.loads(tool_msgs[4]["content"])["ok"] is True


def test_reckoner_preset_refusals_go_back_to_the_model(sh, server):
    srv = server([
        {"reply": {"tool_calls": [call(1, "record_start", {"title": "A mistake"}),
                                  call(2, "set", {"name": "V", "value": {"num": 12, "dim": "volt"}}),
                                  call(3, "set", {"name": "R", "value": {"num": 4, "dim": "ohm"}}),
                                  call(4, "eval", {"formula": "@V+@R", "target": "x"})]}},
        {"reply": {"tool_calls": [call(5, "record_end", {"text": "Stopped: the sum has no meaning."})]}},
        {"reply": {"content": "Volts and ohms cannot be added."}},
    ])
    r, cap = sh.chat("add 12 V and 4 ohm", "--preset reckoner")
    assert r.error_in_exec is None
    refusal = json.loads([m for m in srv.requests[1]["body"]["messages"] if m["role"] == "tool"][-1]["content"])
    assert refusal["ok"] is False and refusal["code"] == "ENGINE_INCOMPATIBLE_DIMENSION"
    out = answer(cap)
    assert {"name": "eval", "ok": False} in out.data[MIME]["tool_calls"]  # the engine refused it
    assert "✗ eval: ENGINE_INCOMPATIBLE_DIMENSION: '+' at position" in out.data["text/plain"]


def test_sync_and_verify_name_the_session_and_the_model_record(sh, server, tmp_path):
    import nbformat

    from dsh_notebook.artifact.seal import sync, verify

    server([{"reply": {"tool_calls": [call(1, "record_start", {"title": "Ohm"}),
                                      call(2, "set", {"name": "V", "value": {"num": 12, "dim": "volt"}}),
                                      call(3, "set", {"name": "R", "value": {"num": 4, "dim": "ohm"}}),
                                      call(4, "eval", {"formula": "@V/@R", "target": "I"}),
                                      call(5, "record_end", {"text": "3 A"})]}},
            {"reply": {"content": "3 A."}}])
    r, cap = sh.chat("12 V over 4 ohm", "--preset reckoner")
    out = answer(cap)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%chat --preset reckoner\n12 V over 4 ohm")
    cell.outputs = [nbformat.v4.new_output("display_data", data=out.data, metadata=out.metadata)]
    nb.cells = [cell]
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    index = sync(tmp_path / "nb.ipynb")
    [log] = sh.sessions()
    assert index["sessions"][0]["id"] == log.stem and list(index["records"]) == out.metadata["dsh"]["records"]
    assert all(f.ok for f in verify(tmp_path / "nb.ipynb") if f.ok is not None)
    # the chat going on after sync (or an edit) shows up
    with open(log, "a", encoding="utf-8") as fh:
        fh.write('{"seq": 99, "ts": "x", "type": "notice", "text": "edited"}\n')
    bad = [f for f in verify(tmp_path / "nb.ipynb") if f.ok is False]
    assert bad and "session" in bad[0].subject and "compare it with your own copy" in bad[0].detail


def test_a_session_open_in_another_kernel_is_refused(sh, server):
    from dsh_notebook.llm.session import SessionLog

    srv = server([])
    other = SessionLog.create(sh.sidecar / "sessions", model="deepseek-chat", name="x")  # another kernel holds it
    try:
        r, cap = sh.chat("hello", f"--session {other.id}")
        assert "open in another kernel" in str(r.error_in_exec) and srv.requests == []
    finally:
        other.close()


def test_reckoner_with_search_stores_the_lookup_in_the_record(sh, server, tmp_path, monkeypatch):
    from dsh_notebook.llm.testing import FakeSearxng

    candidates = {"What is the electrical resistivity of copper at 20 °C?": [
        {"url": "https://en.wikipedia.org/wiki/Electrical_resistivity_and_conductivity", "title": "Electrical resistivity",
         "content": "Copper: resistivity at 20 °C 1.68×10⁻⁸ Ω·m."},
        {"url": "https://example-blog.invalid/copper", "title": "A blog", "content": "copper is about 1.7e-8"}]}
    with FakeSearxng(candidates) as sx:
        home = tmp_path / "home"
        home.mkdir()
        (home / "settings.toml").write_text(f'[search]\nprovider = "searxng"\nsearxng_url = "{sx.base_url}"\n',
                                            encoding="utf-8")
        monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(home))
        srv = server([
            {"expect": {"tools": [*SIX, "search"]},
             "reply": {"tool_calls": [call(1, "record_start", {"title": "Resistance of 25 m of copper wire"}),
                                      call(2, "search", {"question": "What is the electrical resistivity of copper "
                                                                     "at 20 °C?"})]}},
            {"expect": {"contains": "Question: What is the electrical resistivity of copper"},  # the extraction
             "reply": {"content": '{"answer": "The resistivity of copper at 20 °C is 1.68×10⁻⁸ Ω·m.", "used": [1], '
                                  '"insufficient": false}'}},
            {"reply": {"tool_calls": [call(3, "set", {"name": "rho", "value": {"num": 1.68e-8, "dim": [3, 1, -3, -2, 0, 0, 0]}}),
                                      call(4, "record_end", {"text": "rho recorded."})]}},
            {"reply": {"content": "Copper's resistivity is 1.68×10⁻⁸ Ω·m."}},
        ])
        r, cap = sh.chat("Resistance of 25 m of copper wire? Start with the resistivity.", "--preset reckoner-with-search")
    assert r.error_in_exec is None, r.error_in_exec
    [rec] = sorted((sh.sidecar / "records").glob("*.jsonl"))
    rows = [json.loads(x) for x in rec.read_text(encoding="utf-8").splitlines()]
    [lookup] = [x for x in rows if x.get("tool") == "search"]
    c = lookup["content"]
    assert lookup["ok"] is True and c["outcome"] == "answered" and c["tier"] == "strict"
    assert [u["url"] for u in c["candidates"]] == [x["url"] for x in candidates[c["question"]]]
    assert [u["url"] for u in c["used"]] == ["https://en.wikipedia.org/wiki/Electrical_resistivity_and_conductivity"]
    assert c["synthesis"]["promptVersion"] == "search-extract/1"
    # the model got one sentence, never the URLs or the snippets
    after = json.dumps(srv.requests[2]["body"]["messages"], ensure_ascii=False)
    assert "1.68×10⁻⁸ Ω·m" in after and "wikipedia.org" not in after and "example-blog" not in after
    assert "looked up: What is the electrical resistivity of copper at 20 °C? (answered)" in answer(cap).data["text/plain"]


# --------------------------------------------------------------------------- bad input (from a review)


def test_a_refused_new_leaves_the_current_session_usable(sh, server):
    srv = server([{"reply": {"content": "one"}}, {"reply": {"content": "two"}}])
    sh.chat("first")
    r, _ = sh.chat("other", "--new --model nonexistent")
    assert "UNKNOWN_MODEL" in str(r.error_in_exec)
    r, cap = sh.chat("second")
    assert r.error_in_exec is None and answer(cap).data[MIME]["turn"] == 2 and len(srv.requests) == 2


def test_the_model_may_be_named_with_its_provider_in_every_cell(sh, server):
    srv = server([{"expect": {"model": "deepseek-reasoner"}, "reply": {"content": "a"}},
                  {"expect": {"model": "deepseek-reasoner"}, "reply": {"content": "b"}}])
    for _ in range(2):
        r, _ = sh.chat("hi", "--model deepseek/deepseek-reasoner")
        assert r.error_in_exec is None
    assert len(srv.requests) == 2


def test_the_reckoner_preset_refuses_while_a_reckon_record_is_open(sh, server):
    srv = server([])
    r, _ = sh.run("%%reckon --continue Kettle\ngiven V = 230 V")
    assert r.error_in_exec is None
    r, _ = sh.chat("compute the current", "--preset reckoner")
    assert "is still open" in str(r.error_in_exec) and srv.requests == []
    r, _ = sh.run("%%reckon --continue\ngiven P = 2 kW\nI = @P/@V\nend done")
    assert r.error_in_exec is None and sh.ns["_reckon"]["I"].magnitude == pytest.approx(2000 / 230)


def test_a_record_the_model_leaves_open_is_closed_at_the_end_of_the_turn(sh, server):
    server([{"reply": {"tool_calls": [call(1, "record_start", {"title": "Left open"}),
                                      call(2, "set", {"name": "V", "value": {"num": 1, "dim": "volt"}})]}},
            {"reply": {"content": "Done."}}])
    r, cap = sh.chat("go", "--preset reckoner")
    assert "the model left the record 'Left open' open; it was closed" in answer(cap).data["text/plain"]
    rows = [json.loads(x) for x in next((sh.sidecar / "records").glob("*.jsonl")).read_text().splitlines()]
    assert rows[-1]["tool"] == "record_end" and "did not close" in rows[-1]["content"]["text"]
    r, _ = sh.run("%%reckon Next\ngiven x = 1 m\nend")  # a fresh record, not the model's
    assert r.error_in_exec is None and sh.ns["_reckon"].title == "Next"


def test_malformed_engine_calls_leave_a_refused_row(sh, server):
    srv = server([{"reply": {"tool_calls": [call(1, "record_start", {"title": "Bad calls"}),
                                            call(2, "set", {"name": "V", "value": {"num": 12, "dim": "meter"}}),
                                            {"id": "call_3", "name": "set", "arguments": "{not json"},
                                            call(4, "record_end", {})]}},
                  {"reply": {"content": "I could not store the voltage."}}])
    r, cap = sh.chat("12 V?", "--preset reckoner")
    rows = [json.loads(x) for x in next((sh.sidecar / "records").glob("*.jsonl")).read_text().splitlines()]
    refused = [x for x in rows if x.get("ok") is False]
    assert [x["content"]["code"] for x in refused] == ["ENGINE_INVALID_DIMENSION", "ENGINE_INVALID_ARGS"]
    sent = [json.loads(m["content"]) for m in srv.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert sent[1]["code"] == "ENGINE_INVALID_DIMENSION" and "not JSON" in sent[2]["error"]


@pytest.mark.parametrize("reply", [
    {"content": "Done \ud83d\ude00 ok", "chunk": 6},  # an emoji split across two deltas
])
def test_split_surrogate_pairs_are_joined(sh, server, reply):
    server([{"reply": reply}])
    r, cap = sh.chat("smile")
    assert r.error_in_exec is None and answer(cap).data["text/plain"] == "Done 😀 ok"


def test_every_failed_turn_ends_in_the_log(sh, server):
    server([{"reply": {"content": "x", "malformed": '{"choices": 5}'}}])
    r, _ = sh.chat("hello")
    assert type(r.error_in_exec).__name__ == "ChatFailed" and "PROTOCOL" in str(r.error_in_exec)
    [log] = sh.sessions()
    end = sh.events(log)[-1]
    assert end["type"] == "turn/end" and end["status"] == "error" and end["code"] == "PROTOCOL"


def test_a_key_echoed_by_the_provider_is_never_stored(sh, server):
    server([{"reply": {"status": 401, "message": "Incorrect API key provided: test-key-not-real (Bearer "
                                                 "test-key-not-real)"}}])
    r, _ = sh.chat("hello")
    assert "test-key-not-real" not in str(r.error_in_exec) and "[key]" in str(r.error_in_exec)
    [log] = sh.sessions()
    assert "test-key-not-real" not in log.read_text(encoding="utf-8")


@pytest.mark.parametrize("line, message", [
    ("--model ''", "empty value"),
    ("--session a --session b", "given twice"),
    ("hello there", "goes in the cell body"),
])
def test_more_bad_options(sh, server, line, message):
    server([])
    r, _ = sh.chat("hi", line)
    assert message in str(r.error_in_exec)


def test_equals_options_and_a_made_up_session_id(sh, server):
    srv = server([{"reply": {"content": "ok"}}])
    r, _ = sh.chat("hi", "--preset=plain --session=notes")
    assert r.error_in_exec is None and len(srv.requests) == 1
    r, _ = sh.chat("hi", "--session 20990101-000000-abcdef")
    assert "no chat session 20990101-000000-abcdef is logged" in str(r.error_in_exec)


def test_a_foreign_file_in_sessions_is_refused_clearly(sh, server):
    server([])
    folder = sh.sidecar / "sessions"
    folder.mkdir(parents=True)
    (folder / "bogus.jsonl").write_text('{"type": "weird"}\n', encoding="utf-8")
    r, _ = sh.chat("hi", "--session bogus")
    assert "is not a chat session log" in str(r.error_in_exec)
    assert (folder / "bogus.jsonl").read_text(encoding="utf-8") == '{"type": "weird"}\n'


def test_unknown_chat_subcommand(sh):
    r, _ = sh.run("%chat frobnicate")
    assert "unknown subcommand 'frobnicate'" in str(r.error_in_exec)


def test_a_message_with_a_lone_surrogate_is_refused_before_anything_is_written(sh, server):
    srv = server([])
    sh.ip.user_ns["bad"] = "bad \ud800"
    r, _ = sh.run("%%chat\nbad \ud800 text")
    assert "lone surrogate" in str(r.error_in_exec) and srv.requests == [] and sh.sessions() == []


def test_an_empty_reply_is_said_plainly(sh, server):
    server([{"reply": {"content": "", "reasoning": "thinking only"}}])
    r, cap = sh.chat("hi")
    assert answer(cap).data["text/plain"] == "(the model sent no text)"
