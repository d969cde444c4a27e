"""DeepSeek Harness session logs as transcripts (dsh_notebook.reviewer.sources.dsh): every real
fixture in ../shared/fixtures/logs/dsh, the three on-disk layouts, zstd frames (a false magic,
a damaged frame, a torn end), torn lines and unknown events."""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import pytest
import zstandard

from dsh_notebook.reviewer.sources import dsh


def _logs_dir() -> Path:
    shared = os.environ.get("DSH_SHARED_DIR")
    base = Path(shared) if shared else Path(__file__).resolve().parents[2] / "shared"
    return base / "fixtures" / "logs"


DSH_DIR = _logs_dir() / "dsh"
needs_fixtures = pytest.mark.skipif(not DSH_DIR.is_dir(), reason=f"shared fixtures not found at {DSH_DIR} "
                                    "(set DSH_SHARED_DIR to the shared folder)")

G0 = "dsh-g0-2026-06-tool-call-turn.jsonl"
G1 = "dsh-g1-2026-07-steering-message.jsonl"
G2_STEER = "dsh-g2-2026-08-desktop-midturn-user-steer-window.jsonl"
G2_ZSTD = "dsh-g2-2026-08-desktop-turns1-2.jsonl.zstd"

#: per fixture: generation, markers in order, (user, AI) counts, title
EXPECTED = {
    G0: ("g0", ["U1", "T1", "A1"], (1, 1),
         "Use the bash tool to run exactly: echo SNAPSHOT_OK. Then reply with the single w"),
    G1: ("g1", ["U1", "T1", "U2", "A2"], (2, 1), "Use the ask_user_question tool to"),
    G2_STEER: ("g2", ["A0", "T0", "U1", "A1", "T1"], (1, 2), "便携版一定不要改动，这是我最后的希望"),
    G2_ZSTD: ("g2", ["U1", "T1", "A1", "T1", "T1", "A1", "T1", "A1",
                     "U2", "A2", "T2", "T2", "A2", "T2", "T2", "A2", "T2", "A2", "T2", "T2", "A2", "T2", "A2"],
              (2, 9), "测试写入权限"),
}


def fixture(name: str) -> Path:
    return DSH_DIR / name


def texts(utterances, speaker=None) -> list[str]:
    return [u.text for u in utterances if speaker is None or u.speaker == speaker]


# --------------------------------------------------------------------------- every fixture


@needs_fixtures
def test_every_fixture_file_has_expectations():
    names = sorted(p.name for p in DSH_DIR.iterdir() if p.is_file())
    assert names == sorted(EXPECTED), "a DSH fixture was added or removed: give it its expectations here"


@needs_fixtures
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_reads_whole(name):
    gen, markers, (users, ais), title = EXPECTED[name]
    log = dsh.load(fixture(name))
    assert log.skipped == 0 and log.header is not None and log.header["type"] == "session"
    assert dsh.generation(log) == gen
    utterances = dsh.read(fixture(name))
    assert [u.marker for u in utterances] == markers
    conv = dsh.conversation(fixture(name))
    assert (conv.source, conv.title, conv.user_messages, conv.ai_messages) == ("dsh", title, users, ais)
    assert conv.started < conv.updated
    # reasoning is never text, and every key points at an event of the file
    seqs = {e.get("seq") for e in log.events}
    for u in utterances:
        assert u.key.startswith("seq:") and int(u.key[4:]) in seqs
    for e in log.events:
        if e["type"] == "assistant/message":
            content = (e["data"].get("message") or e["data"])["content"]
            for part in content:
                if part["type"] == "reasoning":
                    assert part["text"] not in texts(utterances)


@needs_fixtures
def test_g0_tool_call_turn():
    u = dsh.read(fixture(G0))
    assert u[0].text.startswith("Use the bash tool to run exactly: echo SNAPSHOT_OK.") and u[0].key == "seq:1"
    assert u[1].speaker == "tool" and u[1].key == "seq:57"
    assert u[1].text.startswith("bash: command=echo SNAPSHOT_OK; description=Run the exact echo command requested")
    assert u[1].text.endswith("\nSNAPSHOT_OK") and "(error)" not in u[1].text
    assert (u[2].text, u[2].key) == ("DONE", "seq:95")  # the final text, not the "D"/"ONE" deltas
    conv = dsh.conversation(fixture(G0))
    assert conv.id == "8c1d42ba-5f00-44bb-aaa1-0832fae5c24a"
    assert conv.started == "2026-06-18T19:46:07.162Z"  # header createdAt 1781811967162
    assert conv.updated == "2026-06-18T19:46:09.423Z"  # turn/end at 1781811969423


@needs_fixtures
def test_g1_steering_message_and_banana():
    u = dsh.read(fixture(G1))
    assert u[0].text.startswith('Use the ask_user_question tool to ask me exactly one question with id "checkpoint"')
    assert u[1].text.startswith("ask_user_question: questions=")
    assert u[1].text.endswith('{"answers":[{"id":"checkpoint","selected":["Yes"]}]}')
    steer = u[2]
    assert (steer.speaker, steer.marker, steer.key) == ("user", "U2", "seq:91")
    assert steer.text == "Interjection: include the word BANANA in your final reply."
    assert (u[3].marker, u[3].text, u[3].key) == ("A2", "Great, let's move forward. BANANA!", "seq:140")
    # the packed text-chunks row (seq0 125) is not a second copy of the reply
    assert sum("BANANA!" in t for t in texts(u)) == 1


@needs_fixtures
def test_g2_steer_window_midturn_user_message():
    u = dsh.read(fixture(G2_STEER))
    # the window opens inside turn 4: what comes before the steer is numbered turn 0
    assert u[0].text == "`G:\\新建文件夹` 的 resources 是**空的**（残缺拷贝）。对比其他目录："
    assert u[1].text.startswith("pwsh: command=foreach ($d in @(") and "count=9" in u[1].text
    steer = u[2]
    assert (steer.speaker, steer.text, steer.key) == ("user", "便携版一定不要改动，这是我最后的希望", "seq:29556")
    # the agent/inbox/spliced queue entries (seq 29413 and 29554) are not utterances
    assert all(x.key not in ("seq:29413", "seq:29554") for x in u)
    assert u[3].text.startswith("明白，**便携版我绝不动**——只读不写") and u[3].key == "seq:31106"
    assert u[4].key == "seq:31108" and "node: True" in u[4].text
    conv = dsh.conversation(fixture(G2_STEER))
    assert conv.id == "session-2d7d25bf-c4f9-4dcd-911b-f75be0cc8885"
    assert (conv.started, conv.updated) == ("2026-08-16T17:36:49.409Z", "2026-08-16T17:46:31.174Z")


@needs_fixtures
def test_g2_zstd_turns_1_and_2():
    data = fixture(G2_ZSTD).read_bytes()
    content = dsh.decompress(data)
    assert len(content.splitlines()) == 384  # the header plus 383 records, from 208 frames
    assert dsh._scan_frames(data) == content  # the frame-by-frame fallback reads the same
    u = dsh.read(fixture(G2_ZSTD))
    users = [x for x in u if x.speaker == "user"]
    assert [(x.marker, x.text, x.key) for x in users] == [("U1", "测一下有没有写入权限", "seq:15"),
                                                         ("U2", "为什么不行，你以前都行的", "seq:1162")]
    # injected context (plugin user-approval, @deepseek-ai/dsh-system-prompt snapshot) is skipped
    joined = "\n".join(texts(u))
    assert "The approval policy changed" not in joined and "Current runtime context" not in joined
    tools = [x for x in u if x.speaker == "tool"]
    assert len(tools) == 12
    assert [x.text.startswith(f"{n}: ") for x, n in zip(tools[:3], ["write", "read", "edit"])] == [True] * 3
    refused = [x.key for x in tools if "\n(error) Error: 用户未同意此命令" in x.text]
    assert refused == ["seq:376", "seq:1792", "seq:2678"]
    assert u[2].text == "写入成功。再验证一下读取和编辑权限："
    assert u[-1].marker == "A2" and "**根本原因：审批策略从 `ask` 改成了 `never`**" in u[-1].text
    conv = dsh.conversation(fixture(G2_ZSTD))
    assert conv.title == "测试写入权限"  # the model's title, written after the fallback title
    assert (conv.started, conv.updated) == ("2026-08-16T17:36:49.409Z", "2026-08-16T17:38:28.335Z")


# --------------------------------------------------------------------------- synthetic logs


def header(sid="s-1", created=1785000000000, **more) -> dict:
    return {"type": "session", "version": 0, "id": sid, "createdAt": created, "cwd": "/p", **more}


def g1_events(prompt="hello", reply="hi there", title=None, t0=1785000000000) -> list[dict]:
    ev = [{"type": "turn/start", "seq": 0, "time": t0, "data": {"turn": 1, "trigger": {"kind": "message"}}},
          {"type": "user/message", "seq": 1, "time": t0 + 1,
           "data": {"content": [{"type": "text", "text": prompt}], "source": {"kind": "user"}}}]
    if title:
        ev.append({"type": "session/title", "seq": 2, "time": t0 + 2, "data": {"title": title}})
    ev += [{"type": "assistant/message", "seq": 3, "time": t0 + 3,
            "data": {"turn": 1, "step": 1, "content": [{"type": "reasoning", "text": "think"},
                                                       {"type": "text", "text": reply}],
                     "provenance": {"provider": "p", "model": "m"}}},
           {"type": "turn/end", "seq": 4, "time": t0 + 4, "data": {"turn": 1, "reason": {"kind": "completed"}}}]
    return ev


def lines(rows) -> list[bytes]:
    return [(json.dumps(r, ensure_ascii=False) + "\n").encode() for r in rows]


def write_plain(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines(rows)))
    return path


def write_zstd(path: Path, rows) -> Path:
    """One checksummed frame for the header, then one per event (as the harness flushes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    c = zstandard.ZstdCompressor(write_checksum=True)
    path.write_bytes(b"".join(c.compress(line) for line in lines(rows)))
    return path


def raw_frame(content: bytes) -> bytes:
    """A valid zstd frame holding ``content`` in one raw (stored) block: its bytes appear
    verbatim, so a magic inside the content is a false magic inside a frame."""
    assert len(content) <= 4096  # no content size, no checksum, a 4 KiB window
    return b"\x28\xb5\x2f\xfd" + bytes([0x00, 0x10]) + (1 | len(content) << 3).to_bytes(3, "little") + content


def test_false_magic_inside_frame_data_and_a_broken_frame(tmp_path, monkeypatch):
    good = lines([header()] + g1_events(prompt="first"))
    inside = raw_frame(good[0] + b"\x28\xb5\x2f\xfd not a frame\n" + good[1] + good[2])
    rest = zstandard.ZstdCompressor(write_checksum=True).compress(b"".join(good[3:]))
    garbage = b"\x28\xb5\x2f\xfd\x00\x01\x02 torn write"
    damaged = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(b"".join(good[3:])))
    damaged[-1] ^= 0xFF  # its checksum no longer matches
    # the stream reader reads the magic inside the raw block as data (the bad line is skipped)
    p = tmp_path / "a.jsonl.zstd"
    p.write_bytes(inside + rest)
    log = dsh.load(p)
    assert log.skipped == 1 and [u.text for u in dsh.read(p)] == ["first", "hi there"]
    assert dsh._scan_frames(inside + rest) == dsh.decompress(inside + rest)
    # a garbage magic and a damaged frame between good frames: the fallback skips both
    scans = []
    monkeypatch.setattr(dsh, "_scan_frames", lambda data, scan=dsh._scan_frames: scans.append(1) or scan(data))
    p.write_bytes(inside + garbage + bytes(damaged) + rest)
    assert dsh.decompress(p.read_bytes()) == b"".join(good[:1]) + b"\x28\xb5\x2f\xfd not a frame\n" + b"".join(good[1:])
    assert [u.marker for u in dsh.read(p)] == ["U1", "A1"]
    assert scans  # the stream reader gave up and the frame scan read the file


def test_skippable_frame_with_a_magic_inside(tmp_path):
    good = lines([header()] + g1_events())
    skippable = struct.pack("<II", 0x184D2A50, 12) + b"\x28\xb5\x2f\xfd12345678"
    c = zstandard.ZstdCompressor(write_checksum=True)
    p = tmp_path / "s.jsonl.zstd"
    p.write_bytes(c.compress(good[0]) + skippable + c.compress(b"".join(good[1:])))
    assert [u.text for u in dsh.read(p)] == ["hello", "hi there"]
    p.write_bytes(skippable + c.compress(b"".join(good)))  # a file may even start with one
    assert [u.text for u in dsh.read(p)] == ["hello", "hi there"]


def test_zstd_cut_short_keeps_the_complete_lines(tmp_path):
    p = write_zstd(tmp_path / "t.jsonl.zstd", [header()] + g1_events())
    data = p.read_bytes()
    p.write_bytes(data[:-12])  # the last frame (turn/end) is cut mid-write
    log = dsh.load(p)
    assert [u.text for u in dsh.read(p)] == ["hello", "hi there"]
    assert [e["type"] for e in log.events][-1] in ("assistant/message", "turn/end")


def test_torn_last_line_and_unknown_events(tmp_path):
    rows = [header()] + g1_events()
    rows.insert(3, {"type": "future/thing", "seq": 9, "time": 1785000000001, "data": {"x": [1, 2]}})
    rows.insert(4, {"type": "user/message", "seq": 10, "time": 1785000000001, "data": "not an object"})
    rows.insert(5, {"type": "tool/result", "seq": 11, "time": 1785000000001})
    p = write_plain(tmp_path / "x.jsonl", rows)
    with p.open("ab") as f:
        f.write(b'[1, 2]\n{"no": "type"}\n{"type":"assistant/message","seq":12,"time":1785000000009,"data":{"content":[{"type":"te')
    log = dsh.load(p)
    assert log.skipped == 3
    u = dsh.read(p)
    assert [(x.marker, x.text) for x in u] == [("U1", "hello"), ("T1", "tool\n(no output)"), ("A1", "hi there")]


def test_plain_file_named_zstd_and_zstd_named_plain(tmp_path):
    rows = [header()] + g1_events()
    a = write_plain(tmp_path / "a.jsonl.zstd", rows)  # compression "none" under either name
    b = write_zstd(tmp_path / "b.jsonl", rows)
    assert [u.text for u in dsh.read(a)] == [u.text for u in dsh.read(b)] == ["hello", "hi there"]


def test_injected_steering_and_catalog_shapes(tmp_path):
    t = 1785000000000
    rows = [header(),
            {"type": "user/message", "seq": 0, "time": t,
             "data": {"content": [{"type": "text", "text": "plugin notice"}],
                      "source": {"kind": "oh-my-agent", "form": "notice", "summary": "x"}}},
            {"type": "user/message", "seq": 1, "time": t,
             "data": {"message": {"content": [{"type": "text", "text": "wrapped prompt"}], "source": {"kind": "user"}}}},
            {"type": "steering/message", "seq": 2, "time": t,
             "data": {"turn": 1, "content": [{"type": "text", "text": "injected steer"}],
                      "source": {"kind": "review-mode", "form": "notice"}}},
            {"type": "steering/message", "seq": 3, "time": t,
             "data": {"turn": 1, "message": {"content": [{"type": "text", "text": "catalog steer"}],
                                             "source": {"kind": "user"}}}},
            {"type": "prompt/blocked", "seq": 4, "time": t,
             "data": {"content": [{"type": "text", "text": "blocked"}], "source": {"kind": "user"}, "reason": "r"}},
            {"type": "tool/call", "seq": 5, "time": t, "data": {"callId": "c1", "name": "read", "arguments": "not json"}},
            {"type": "tool/result", "seq": 6, "time": t,
             "data": {"turn": 1, "step": 1, "message": {"content": "x" * 5000, "isError": True},
                      "error": {"name": "E", "code": "io"}, "callId": "c1"}},
            {"type": "assistant/message", "seq": 7, "time": t, "data": {"message": {"content": "plain string reply"}}}]
    p = write_plain(tmp_path / "c.jsonl", rows)
    u = dsh.read(p)
    assert [(x.marker, x.text[:18]) for x in u] == [("U1", "wrapped prompt"), ("U2", "catalog steer"),
                                                   ("T2", "read: not json\n(er"), ("A2", "plain string reply")]
    tool = u[2].text
    assert tool.startswith("read: not json\n(error) " + "x" * 2000) and tool.endswith("[… 3,000 more characters not shown]")


def test_generation_from_shape_not_header():
    g1 = dsh.SessionLog(Path("x"), header(version=0), g1_events())
    assert dsh.generation(g1) == "g1"
    g0 = dsh.SessionLog(Path("x"), header(version=1), [])
    assert dsh.generation(g0) == "g0"
    assert dsh.generation(dsh.SessionLog(Path("x"), header(), [])) is None


# --------------------------------------------------------------------------- layouts


def test_default_root(monkeypatch, tmp_path):
    monkeypatch.delenv("DSH_SESSIONS_DIR", raising=False)
    assert dsh.default_root() == Path.home() / ".dsh" / "sessions"
    monkeypatch.setenv("DSH_SESSIONS_DIR", str(tmp_path))
    assert dsh.default_root() == tmp_path
    write_plain(tmp_path / "cwd-0123456789ab" / "s-9.jsonl", [header("s-9")] + g1_events())
    assert [c.id for c in dsh.list_conversations()] == ["s-9"]


def test_three_layouts_synthetic(tmp_path):
    root = tmp_path / "sessions"
    day = 86_400_000
    # current: --<normalized-cwd>--/<encoded-id>/session.jsonl.zstd, or session.jsonl, or _no-cwd/
    write_zstd(root / "--home-user-proj--" / "a%3A1" / "session.jsonl.zstd",
               [header("a:1", 1785000000000)] + g1_events("one", title="Title A", t0=1785000000000))
    write_plain(root / "_no-cwd" / "b" / "session.jsonl", [header("b", 1785000000000 + day)]
                + g1_events("two", t0=1785000000000 + day))
    # older: cwd-<hash>/<id>.jsonl.zstd (a header without an id: the file names it)
    h = header(created=1785000000000 + 2 * day)
    del h["id"]
    write_zstd(root / "cwd-0123456789ab" / "c%20d.jsonl.zstd", [h] + g1_events("three", t0=1785000000000 + 2 * day))
    write_plain(root / "_no-cwd" / "e.jsonl", [header("e", 1785000000000 + 3 * day)]
                + g1_events("four", t0=1785000000000 + 3 * day))
    # review-mode: <bucket>/session-<id>/session.v*.jsonl.zstd, the highest version wins
    write_zstd(root / "2026-07" / "session-f" / "session.v2.jsonl.zstd",
               [header("session-f", 1)] + g1_events("old version", t0=1))
    write_zstd(root / "2026-07" / "session-f" / "session.v3.jsonl.zstd",
               [header("session-f", 1785000000000 + 4 * day)] + g1_events("five", t0=1785000000000 + 4 * day))
    # not sessions: another JSONL, a subagent, stray files
    write_plain(root / "cwd-0123456789ab" / "notes.jsonl", [{"hello": 1}])
    write_plain(root / "cwd-0123456789ab" / "sub.jsonl", [header("sub", 1785000000000, delegationDepth=1)]
                + g1_events("delegated"))
    (root / "cwd-0123456789ab" / "README.txt").write_text("x")
    (root / "stray.jsonl").write_text("{}")

    convs = dsh.list_conversations(root)
    assert [(c.id, c.title) for c in convs] == [("session-f", "five"), ("e", "four"), ("c d", "three"),
                                                ("b", "two"), ("a:1", "Title A")]
    assert all((c.source, c.user_messages, c.ai_messages) == ("dsh", 1, 1) for c in convs)
    assert convs[0].path.name == "session.v3.jsonl.zstd"
    assert convs[-1].started == "2026-07-25T17:20:00.000Z" and convs[-1].updated == "2026-07-25T17:20:00.004Z"
    assert "sub" in [c.id for c in dsh.list_conversations(root, include_subagents=True)]
    assert dsh.list_conversations(tmp_path / "missing") == []


@needs_fixtures
def test_three_layouts_with_the_fixtures(tmp_path):
    root = tmp_path / "sessions"
    targets = {
        G2_ZSTD: root / "--G-dsh--" / "session-2d7d25bf-c4f9-4dcd-911b-f75be0cc8885" / "session.jsonl.zstd",
        G1: root / "cwd-a1b2c3d4e5f6" / "steer.jsonl",
        G0: root / "_no-cwd" / "8c1d42ba.jsonl",
        G2_STEER: root / "2026-08" / "session-window" / "session.v3.jsonl.zstd",
    }
    for name, target in targets.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        if name == G2_STEER:  # a plain fixture, compressed here frame per line
            write_zstd(target, [json.loads(line) for line in fixture(name).read_text(encoding="utf-8").splitlines()])
        else:
            shutil.copyfile(fixture(name), target)
    convs = {c.path: c for c in dsh.list_conversations(root)}
    assert set(convs) == set(targets.values())
    for name, target in targets.items():
        c = convs[target]
        assert (c.title, c.user_messages, c.ai_messages) == (EXPECTED[name][3], *EXPECTED[name][2])
        assert [u.marker for u in dsh.read(target)] == EXPECTED[name][1]


def test_other_jsonl_files_are_not_sessions(tmp_path):
    root = tmp_path / "sessions"
    write_plain(root / "cwd-0123456789ab" / "claude.jsonl", [{"type": "user", "message": {"content": "hi"}}])
    write_plain(root / "cwd-0123456789ab" / "headless.jsonl", g1_events())  # a log whose header line was lost
    assert [c.id for c in dsh.list_conversations(root)] == ["headless"]
