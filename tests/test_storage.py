"""dsh_notebook.storage: strict JSONL writing/reading, locking, atomic files (storage.md "Writing rules")."""

from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_notebook.storage import (
    JsonlWriter,
    LockedError,
    Problem,
    StorageError,
    atomic_rename,
    atomic_write_bytes,
    atomic_write_text,
    dumps_line,
    is_locked,
    read_jsonl,
)

ROOT = Path(__file__).resolve().parents[1]
NOTE = "压力单位换算：千帕"


def run_py(code: str, env_extra: dict[str, str] | None = None, **kw) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONUTF8", "PYTHONIOENCODING"))}
    env["PYTHONPATH"] = str(ROOT)
    env.update(env_extra or {})
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


# ---------------------------------------------------------------- dumps_line


def test_dumps_line_is_compact_utf8_single_line():
    line = dumps_line({"note": NOTE, "text": "a\nb\u2028c", "n": 1, "ok": True, "x": None})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert NOTE.encode("utf-8") in line  # ensure_ascii=False: raw UTF-8, not \\u escapes
    assert line.startswith(b'{"note":"')
    assert json.loads(line) == {"note": NOTE, "text": "a\nb\u2028c", "n": 1, "ok": True, "x": None}


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float32("nan"), np.float64("inf"),
                                 np.array([1.0, np.nan])])
def test_non_finite_refused_with_storage_error(bad):
    with pytest.raises(StorageError, match="non-finite") as info:
        dumps_line({"steps": [{"value": bad}]})
    assert isinstance(info.value, ValueError)
    assert "$.steps[0].value" in str(info.value)


@pytest.mark.parametrize("bad", [1 + 2j, np.complex64(1), object()])
def test_unserialisable_values_refused(bad):
    with pytest.raises(StorageError):
        dumps_line({"v": bad})


def test_case_P10_numpy_scalars_written_as_plain_numbers(tmp_path):
    p = tmp_path / "rec.jsonl"
    row = {"f32": np.float32(1.5), "i64": np.int64(7), "f64": np.float64(0.1), "b": np.bool_(True),
           "u8": np.uint8(255), "arr": np.arange(3), "m": np.array([[1.5, 2.0]], dtype=np.float32),
           np.int64(3): "int key"}
    with JsonlWriter(p) as w:
        w.append(row)
    assert p.read_bytes() == (b'{"f32":1.5,"i64":7,"f64":0.1,"b":true,"u8":255,"arr":[0,1,2],'
                              b'"m":[[1.5,2.0]],"3":"int key"}\n')
    back = read_jsonl(p).rows[0]
    assert back["f32"] == np.float32(1.5) and back["i64"] == np.int64(7) and back["f64"] == 0.1
    assert back["b"] is True and back["arr"] == [0, 1, 2]


def test_case_P10_float32_non_representable_reads_back_equal(tmp_path):
    p = tmp_path / "rec.jsonl"
    value = np.float32(0.1)
    with JsonlWriter(p) as w:
        w.append({"v": value})
    assert np.float32(read_jsonl(p).rows[0]["v"]) == value


# ---------------------------------------------------------------- writer


def test_refused_append_leaves_file_unchanged(tmp_path):
    p = tmp_path / "ledger.jsonl"
    with JsonlWriter(p) as w:
        w.append({"seq": 1})
        before = p.read_bytes()
        with pytest.raises(StorageError):
            w.append({"seq": 2, "v": math.nan})
        with pytest.raises(StorageError):
            w.append_many([{"seq": 2}, {"seq": 3, "v": math.inf}])
        assert p.read_bytes() == before
        w.append({"seq": 2})
    assert [r["seq"] for r in read_jsonl(p).rows] == [1, 2]


def test_case_P09_value_that_would_be_nan_is_refused_not_written(tmp_path):
    p = tmp_path / "x.dsh" / "open-record.jsonl"
    with JsonlWriter(p) as w:
        w.append({"seq": 1, "type": "given", "value": 1.0})
        with np.errstate(invalid="ignore"):
            would_be_nan = np.float64(0.0) / np.float64(0.0)
        with pytest.raises(StorageError, match="NaN|nan"):
            w.append({"seq": 2, "type": "error", "value": would_be_nan})
    data = p.read_bytes()
    assert b"NaN" not in data and b"Infinity" not in data
    json.loads(data)  # strict: the standard library accepts it ...
    read = read_jsonl(p)
    assert read.ok and len(read.rows) == 1


def test_append_returns_bytes_and_flushes_immediately(tmp_path):
    p = tmp_path / "s.jsonl"
    w = JsonlWriter(p)
    line = w.append({"seq": 1})
    assert p.read_bytes() == line == b'{"seq":1}\n'  # visible before close: nothing buffered
    assert w.append_many([{"seq": 2}, {"seq": 3}]) == [b'{"seq":2}\n', b'{"seq":3}\n']
    w.close()
    w.close()  # idempotent
    assert w.closed
    with pytest.raises(StorageError, match="closed"):
        w.append({"seq": 4})
    assert p.read_bytes().count(b"\n") == 3


def test_second_holding_writer_gets_locked_error(tmp_path):
    p = tmp_path / "open-record.jsonl"
    with JsonlWriter(p):
        assert is_locked(p)
        with pytest.raises(LockedError, match="another writer") as info:
            JsonlWriter(p)
        assert str(p) in str(info.value) and "kernel" in str(info.value)
        with pytest.raises(LockedError):  # a per-append writer times out too
            JsonlWriter(p, hold_lock=False, lock_timeout=0.2).append({"x": 1})
    assert not is_locked(p)
    with JsonlWriter(p) as w:  # released on close
        w.append({"x": 2})


def test_lock_held_by_other_process(tmp_path):
    p = tmp_path / "session.jsonl"
    proc = run_py(f"""
        import sys
        from dsh_notebook.storage import JsonlWriter
        w = JsonlWriter({str(p)!r})
        print("ready", flush=True)
        sys.stdin.readline()
        w.close()
    """, stdin=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == b"ready"
        assert is_locked(p)
        with pytest.raises(LockedError, match="another writer"):
            JsonlWriter(p)
    finally:
        proc.communicate(b"\n", timeout=30)
    assert proc.returncode == 0
    assert not is_locked(p)


def test_two_processes_appending_never_interleave(tmp_path):
    p = tmp_path / "ledger" / "main.jsonl"
    code = """
        import sys
        from dsh_notebook.storage import JsonlWriter
        who = sys.argv[1]
        w = JsonlWriter({path!r}, hold_lock=False)
        for i in range(5000):
            w.append({{"who": who, "i": i, "pad": who * (1000 + 37 * (i % 50))}})
        w.close()
    """.format(path=str(p))
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), who],
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT) for who in "ab"]
    assert [pr.wait(timeout=120) for pr in procs] == [0, 0]
    read = read_jsonl(p)
    assert read.problems == []
    assert len(p.read_bytes().split(b"\n")) == 10001
    for who in "ab":
        assert [r["i"] for r in read.rows if r["who"] == who] == list(range(5000))
        assert all(r["pad"] == who * len(r["pad"]) for r in read.rows if r["who"] == who)


def test_case_P11_note_written_as_utf8_under_non_utf8_locale(tmp_path):
    p = tmp_path / "notes.jsonl"
    proc = run_py(f"""
        import locale, sys
        assert not sys.flags.utf8_mode
        enc = locale.getpreferredencoding(False)
        from dsh_notebook.storage import JsonlWriter, read_jsonl
        with JsonlWriter({str(p)!r}) as w:
            w.append({{"type": "note", "text": {ascii(NOTE)}}})
        back = read_jsonl({str(p)!r}).rows[0]["text"]
        print(enc, ascii(back))
    """, {"LC_ALL": "C", "LANG": "C", "PYTHONIOENCODING": "cp1252", "PYTHONUTF8": "0",
          "PYTHONCOERCECLOCALE": "0"})
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode(errors="replace")
    enc, back = out.decode("ascii").split()
    assert enc.lower().replace("-", "") != "utf8"  # the simulation really ran without UTF-8
    assert back == ascii(NOTE)
    data = p.read_bytes()
    assert data == ('{"type":"note","text":"' + NOTE + '"}\n').encode("utf-8")
    assert read_jsonl(p).rows == [{"type": "note", "text": NOTE}]


def test_case_P11_invalid_utf8_line_reported_rest_loads(tmp_path):
    p = tmp_path / "sidecar.jsonl"
    p.write_bytes(b'{"seq":1}\n{"seq":2,"t":"\xff\xfe bad"}\n\n{"seq":3,"t":"' + NOTE.encode() + b'"}\n')
    read = read_jsonl(p)
    assert [r["seq"] for r in read.rows] == [1, 3]
    assert read.line_numbers == [1, 4]
    assert len(read.problems) == 1 and read.problems[0].line == 2
    assert "UTF-8" in read.problems[0].reason


def test_reader_reports_bad_lines_without_raising(tmp_path):
    p = tmp_path / "mixed.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"seq":1}\n[1,2]\n{"v":NaN}\n{"v":1e999}\nnot json\r\n   \n{"seq":2}\r\n')
    read = read_jsonl(p)
    assert read.rows == [{"seq": 1}, {"seq": 2}] and read.line_numbers == [1, 7]
    assert [pr.line for pr in read.problems] == [2, 3, 4, 5]
    assert "not a JSON object" in read.problems[0].reason
    assert "NaN" in read.problems[1].reason and "infinity" in read.problems[2].reason
    assert not read.ok
    with pytest.raises(FileNotFoundError):
        read_jsonl(tmp_path / "missing.jsonl")


def test_torn_last_line_reported_and_next_append_starts_fresh(tmp_path):
    p = tmp_path / "open-record.jsonl"
    good = dumps_line({"seq": 1}) + dumps_line({"seq": 2, "note": NOTE})
    p.write_bytes(good + dumps_line({"seq": 3, "note": NOTE})[:-6])  # cut inside a UTF-8 character
    read = read_jsonl(p)
    assert [r["seq"] for r in read.rows] == [1, 2]
    assert read.problems == [Problem(3, "torn last line (incomplete write)")]
    for hold in (True, False):
        with JsonlWriter(p, hold_lock=hold) as w:
            w.append({"seq": 4 if hold else 5})
    assert p.read_bytes().endswith(b'\n{"seq":4}\n{"seq":5}\n')
    read = read_jsonl(p)
    assert [r["seq"] for r in read.rows] == [1, 2, 4, 5] and read.line_numbers == [1, 2, 4, 5]
    assert [pr.line for pr in read.problems] == [3]
    assert read.problems[0].reason != "torn last line (incomplete write)"  # now a complete bad line


def test_unterminated_but_valid_last_line_is_kept(tmp_path):
    p = tmp_path / "hand-edited.jsonl"
    p.write_bytes(b'{"seq":1}\n{"seq":2}')
    assert read_jsonl(p).rows == [{"seq": 1}, {"seq": 2}]
    with JsonlWriter(p, hold_lock=False) as w:
        w.append({"seq": 3})
    assert p.read_bytes() == b'{"seq":1}\n{"seq":2}\n{"seq":3}\n'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(), kids, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(st.text(), json_values, max_size=5), max_size=5))
def test_roundtrip_property(tmp_path_factory, rows):
    p = tmp_path_factory.mktemp("rt") / "rows.jsonl"
    data = b"".join(dumps_line(r) for r in rows)
    assert data.count(b"\n") == len(rows)
    p.write_bytes(data)
    read = read_jsonl(p)
    assert read.problems == []
    assert read.rows == rows


# ---------------------------------------------------------------- atomic helpers


def test_atomic_write_replaces_whole_content_no_temp_left(tmp_path):
    p = tmp_path / "sub" / "settings.toml"
    atomic_write_text(p, "old = 1\n")
    atomic_write_text(p, f"note = '{NOTE}'\n")
    assert p.read_bytes() == f"note = '{NOTE}'\n".encode("utf-8")
    atomic_write_bytes(p, b"\x00\x01")
    assert p.read_bytes() == b"\x00\x01"
    assert sorted(x.name for x in p.parent.iterdir()) == ["settings.toml"]


def test_atomic_write_failure_keeps_old_content(tmp_path, monkeypatch):
    p = tmp_path / "academic.json"
    atomic_write_text(p, '{"enabled":false}')

    def boom(*a):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(p, '{"enabled":true}')
    monkeypatch.undo()
    assert p.read_text(encoding="utf-8") == '{"enabled":false}'
    assert [x.name for x in tmp_path.iterdir()] == ["academic.json"]


def test_atomic_rename_closes_record_read_only(tmp_path):
    d = tmp_path / "report.dsh"
    src = d / "open-record.jsonl"
    with JsonlWriter(src) as w:
        w.append({"seq": 1})
    dst = d / "records" / "r1.jsonl"
    atomic_rename(src, dst, make_read_only=True)
    assert not src.exists()
    assert dst.read_bytes() == b'{"seq":1}\n'
    if os.name == "posix":
        assert stat.S_IMODE(dst.stat().st_mode) == 0o444
    with pytest.raises(FileNotFoundError):
        atomic_rename(src, dst)


def test_append_after_numbers_lines_across_processes(tmp_path):
    """Two processes append 300 lines each with seq = last + 1 computed under the lock:
    the file holds 1..600 with no gap or duplicate, and a torn tail is not a last line."""
    import subprocess
    import sys

    path = tmp_path / "shared.jsonl"
    script = (
        "import sys\nfrom dsh_notebook.storage import JsonlWriter\n"
        "w = JsonlWriter(sys.argv[1], hold_lock=False)\n"
        "for i in range(300):\n"
        "    w.append_after(lambda last, line: {'seq': (last or {'seq': 0})['seq'] + 1, 'who': sys.argv[2]})\n"
        "w.close()\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), who]) for who in ("a", "b")]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    rows = read_jsonl(path).rows
    assert [r["seq"] for r in rows] == list(range(1, 601))
    with open(path, "ab") as fh:
        fh.write(b'{"seq": 999, "torn')
    w = JsonlWriter(path, hold_lock=False)
    line = w.append_after(lambda last, raw: {"seq": last["seq"] + 1, "prev_len": len(raw)})
    w.close()
    assert json.loads(line)["seq"] == 601


def test_append_after_sets_a_torn_tail_aside_for_chained_files(tmp_path):
    """``torn="set_aside"``: a crashed writer's fragment is moved to ``<path>.torn-<time>`` and cut
    off (never closed off and chained over); the writer reports the file it made."""
    from dsh_notebook.storage import set_aside_torn

    p = tmp_path / "chain.jsonl"
    p.write_bytes(b'{"seq":0}\n{"seq":1,"x":"hal')
    w = JsonlWriter(p, hold_lock=False)
    try:
        seen = []
        w.append_after(lambda last, line: seen.append((last, line)) or {"seq": last["seq"] + 1}, torn="set_aside")
    finally:
        w.close()
    assert seen == [({"seq": 0}, b'{"seq":0}\n')]
    assert p.read_bytes() == b'{"seq":0}\n{"seq":1}\n'
    assert w.set_aside is not None and w.set_aside.name.startswith("chain.jsonl.torn-")
    assert w.set_aside.read_bytes() == b'{"seq":1,"x":"hal'
    assert w.stat_after is not None and w.stat_after.st_size == p.stat().st_size
    assert set_aside_torn(p) is None  # nothing torn now


def test_set_aside_refuses_a_whole_object_missing_its_newline(tmp_path):
    from dsh_notebook.storage import UnterminatedLineError, set_aside_torn

    p = tmp_path / "chain.jsonl"
    p.write_bytes(b'{"seq":0}\n{"seq":1}')
    with pytest.raises(UnterminatedLineError, match="line 2"):
        set_aside_torn(p)
    assert p.read_bytes() == b'{"seq":0}\n{"seq":1}' and not list(tmp_path.glob("*.torn-*"))


@pytest.mark.parametrize("last", [b"garbage\n", b"\xff\xfe{}\n", b"[1,2]\n", b'{"x":NaN}\n', b"   \n"])
def test_append_after_never_raises_for_an_undecodable_last_line(tmp_path, last):
    """The last line is handed over raw; its decoding is ``None`` when it is not a strict JSON
    object (the caller decides), never a JSONDecodeError or UnicodeDecodeError."""
    p = tmp_path / "x.jsonl"
    p.write_bytes(b'{"seq":0}\n' + last)
    seen = []
    with JsonlWriter(p, hold_lock=False) as w:
        w.append_after(lambda row, line: seen.append((row, line)) or {"seq": 9})
    assert seen == [(None, last)]


def test_set_aside_leaves_a_file_without_any_newline_alone(tmp_path):
    from dsh_notebook.storage import UnterminatedLineError, set_aside_torn

    p = tmp_path / "notes.jsonl"
    p.write_bytes(b"some text, not lines")
    with pytest.raises(UnterminatedLineError, match="no complete line"):
        set_aside_torn(p)
    assert p.read_bytes() == b"some text, not lines" and not list(tmp_path.glob("*.torn-*"))


def test_an_atomic_write_keeps_the_mode_and_writes_through_a_symlink(tmp_path):
    """A private notebook (0600) stays private after sync's atomic write, and a symlinked notebook
    keeps its link: the target gets the new content."""
    import os
    import stat

    from dsh_notebook.storage import atomic_write_text

    private = tmp_path / "nb.ipynb"
    private.write_text("old")
    os.chmod(private, 0o600)
    atomic_write_text(private, "new")
    assert private.read_text() == "new" and stat.S_IMODE(private.stat().st_mode) == 0o600
    link = tmp_path / "link.ipynb"
    link.symlink_to(private)
    atomic_write_text(link, "newer")
    assert link.is_symlink() and private.read_text() == "newer"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
