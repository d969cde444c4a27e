"""``link_fulltext``: what a model-given locator may reach (research.md "Running the roles":
``research_link_fulltext``). Local files only inside the notebook's folder, URLs only on public
hosts (every redirect hop checked), bytes stored only once the ledger accepts the event."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from dsh_notebook.research import Actor, Ledger, ledger_path
from dsh_notebook.net import fetcher as NF
from dsh_notebook.research_pipeline import fulltext as FT
from dsh_notebook.research_pipeline.fulltext import link_fulltext

SECRET = "sk-FULLTEXT-TEST-SECRET-0123456789"
TEXT = b"In a randomised trial of 120 adults, daily walking reduced systolic blood pressure by 5 mmHg.\n"


@pytest.fixture
def nb(tmp_path, monkeypatch):
    """A notebook folder ``tmp/work`` with ``nb.ipynb`` (ledger with source s1) and ``paper.txt``."""
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DSH_FULLTEXT_ALLOW_PRIVATE", raising=False)
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "paper.txt").write_bytes(TEXT)
    led = Ledger(ledger_path(work / "nb.ipynb"))
    assert led.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1000/walk"},
                      Actor("scout"))["ok"]
    return work, led


def stored(work: Path) -> list[str]:
    folder = work / "nb.dsh" / "fulltext"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def refused(led, work, locator, code="FULLTEXT_REFUSED", **kw) -> str:
    before, copies = led.events(), stored(work)
    r = link_fulltext(led, "s1", locator, actor=Actor("lead"), **kw)
    assert r["ok"] is False and r["code"] == code, r
    assert "nothing was stored or recorded" in r["error"]
    assert led.events() == before and stored(work) == copies
    return r["error"]


# --------------------------------------------------------------------------- local files


@pytest.mark.parametrize("locator, why", [
    ("/proc/self/environ", "outside the notebook's folder"),
    ("/etc/passwd", "outside the notebook's folder"),
    ("file:///etc/hostname", "outside the notebook's folder"),
    ("../outside.txt", "outside the notebook's folder"),
    ("~/.bashrc", "'~' path is not expanded"),
    ("file://otherhost/paper.txt", "names a host"),
    ("ftp://example.org/paper.txt", "ftp: scheme is not supported"),
    ("", "the locator is empty"),
])
def test_local_locators_outside_the_notebook_folder_are_refused(nb, locator, why):
    work, led = nb
    (work.parent / "outside.txt").write_bytes(TEXT)
    assert why in refused(led, work, locator)


def test_environment_secret_cannot_be_linked(nb, monkeypatch):
    work, led = nb
    monkeypatch.setenv("DSH_TEST_SECRET", SECRET)
    err = refused(led, work, "/proc/self/environ")
    assert SECRET not in err


def test_symlinks_hidden_files_fifos_and_credentials_are_refused(nb, tmp_path, monkeypatch):
    work, led = nb
    (work.parent / "outside.txt").write_bytes(TEXT)
    (work / "link.txt").symlink_to(work.parent / "outside.txt")
    err = refused(led, work, str(work / "link.txt"))
    assert "outside the notebook's folder" in err and "resolves to" in err
    (work / "sub").mkdir()
    (work / "sub" / "etc").symlink_to("/etc")
    assert "outside the notebook's folder" in refused(led, work, "sub/etc/passwd")
    (work / ".env").write_text(f"DEEPSEEK_API_KEY={SECRET}\n")
    assert "hidden file" in refused(led, work, str(work / ".env"))
    (work / ".git").mkdir()
    (work / ".git" / "config").write_text("[core]\n")
    assert "hidden" in refused(led, work, ".git/config")
    (work / "alias.txt").symlink_to(work / ".env")  # a visible name pointing at a hidden file
    assert "hidden" in refused(led, work, "alias.txt")
    os.mkfifo(work / "pipe")
    assert "not a regular file" in refused(led, work, "pipe")
    assert "not a regular file" in refused(led, work, str(work / "sub"))
    (work / "empty.txt").write_bytes(b"")
    assert "empty full text" in refused(led, work, "empty.txt")
    # DSH_NOTEBOOK_HOME (credentials.toml) is refused even when it sits inside the notebook's folder
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(work / "dsh-home"))
    (work / "dsh-home").mkdir()
    (work / "dsh-home" / "credentials.toml").write_text(f'[deepseek]\napi_key = "{SECRET}"\n')
    assert "DSH_NOTEBOOK_HOME" in refused(led, work, "dsh-home/credentials.toml")
    # a missing file inside the folder is a read failure, named as such
    assert "no file at" in refused(led, work, "missing.txt", code="FULLTEXT_FETCH")


def test_files_inside_the_notebook_folder_are_linked(nb):
    work, led = nb
    r = link_fulltext(led, "s1", "paper.txt", actor=Actor("lead"))  # relative: from the notebook's folder
    assert r["ok"] and r["bytes"] == len(TEXT) and Path(r["path"]).read_bytes() == TEXT
    (work / "papers").mkdir()
    (work / "papers" / "walk.txt").write_bytes(TEXT + b"v2\n")
    r = link_fulltext(led, "s1", (work / "papers" / "walk.txt").as_uri(), actor=Actor("lead"))
    assert r["ok"], r
    assert led.fold().sources["s1"].fulltext["locator"] == (work / "papers" / "walk.txt").as_uri()
    assert len(stored(work)) == 2


def test_unsaved_notebook_reads_from_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    sidecar = tmp_path / "home" / "unsaved" / "kernel-1.dsh"
    led = Ledger(sidecar / "ledger" / "main.jsonl")
    assert led.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1000/walk"},
                      Actor("scout"))["ok"]
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "paper.txt").write_bytes(TEXT)
    (tmp_path / "elsewhere.txt").write_bytes(TEXT)
    monkeypatch.chdir(cwd)
    assert FT.allowed_folder(sidecar) == cwd.resolve()
    r = link_fulltext(led, "s1", str(tmp_path / "elsewhere.txt"), actor=Actor("lead"))
    assert r["ok"] is False and str(cwd) in r["error"]
    r = link_fulltext(led, "s1", "paper.txt", actor=Actor("lead"))
    assert r["ok"] and Path(r["path"]).parent == sidecar / "fulltext"
    # a kernel started in / would make the whole file system "the folder": no local file then
    monkeypatch.chdir("/")
    n = len(led.events())
    r = link_fulltext(led, "s1", "/etc/hostname", actor=Actor("lead"))
    assert r["ok"] is False and "file system's root" in r["error"] and len(led.events()) == n


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_followed(nb, monkeypatch):
    """The race: ``sub/`` passes the checks, then becomes a symlink out of the folder before the
    open (made deterministic with the hook between them); the openat walk refuses it."""
    work, led = nb
    outside = work.parent / "outside"
    outside.mkdir()
    (outside / "environ").write_text(f"KEY={SECRET}\n")
    (work / "sub").mkdir()
    (work / "sub" / "environ").write_bytes(TEXT)

    def swap(real):
        (work / "sub").rename(work.parent / "sub-away")
        (work / "sub").symlink_to(outside)

    monkeypatch.setattr(FT, "_checked", swap)
    err = refused(led, work, "sub/environ")
    assert "symlink" in err and SECRET not in err
    # a file replaced by another one (no symlink) between the check and the open: not the same inode
    (work / "sub").unlink()
    (work.parent / "sub-away").rename(work / "sub")

    def replace(real):
        (work / "sub" / "new").write_text(f"KEY={SECRET}\n")
        os.replace(work / "sub" / "new", real)

    monkeypatch.setattr(FT, "_checked", replace)
    assert "changed between the check and the open" in refused(led, work, "sub/environ")


def test_the_openat_walk_refuses_every_symlinked_component(nb):
    work, _led = nb
    (work / "sub").mkdir()
    (work / "sub" / "paper.txt").write_bytes(TEXT)
    (work / "alias").symlink_to(work / "sub")  # inside the folder, but a symlink
    fd = FT._open_nofollow((work / "sub" / "paper.txt").resolve())
    try:
        assert os.read(fd, 100) == TEXT
        assert FT._fd_path(fd) in (None, (work / "sub" / "paper.txt").resolve())
    finally:
        os.close(fd)
    with pytest.raises(OSError):
        FT._open_nofollow(work.resolve() / "alias" / "paper.txt")
    with pytest.raises(OSError):
        FT._open_nofollow(work.resolve() / "alias")


def test_hard_links_and_the_sidecar_folder_are_refused(nb):
    work, led = nb
    (work.parent / "outside.txt").write_text(f"KEY={SECRET}\n")
    os.link(work.parent / "outside.txt", work / "hard.txt")
    err = refused(led, work, "hard.txt")
    assert "2 hard links" in err and SECRET not in err
    for locator in ("nb.dsh/ledger/main.jsonl", str(work / "nb.dsh" / "ledger" / "main.jsonl")):
        assert "sidecar folder nb.dsh/" in refused(led, work, locator)


def test_no_local_file_when_the_folder_is_the_home_directory(tmp_path, monkeypatch):
    """An unsaved notebook whose kernel runs in ~ (or a notebook saved in ~ itself, or a kernel in
    DSH_NOTEBOOK_HOME) would open every non-hidden file under ~ to a model's locator."""
    user = tmp_path / "user"
    user.mkdir()
    (user / "notes.txt").write_bytes(TEXT)
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(user / ".dsh-notebook"))
    assert Path.home() == user
    led = Ledger(user / ".dsh-notebook" / "unsaved" / "kernel-1.dsh" / "ledger" / "main.jsonl")
    assert led.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1000/walk"},
                      Actor("scout"))["ok"]
    monkeypatch.chdir(user)
    r = link_fulltext(led, "s1", "notes.txt", actor=Actor("lead"))
    assert r["ok"] is False and r["code"] == "FULLTEXT_REFUSED"
    assert "your home directory" in r["error"] and "save the notebook in a project folder first" in r["error"]
    (user / ".dsh-notebook" / "x.txt").write_bytes(TEXT)
    monkeypatch.chdir(user / ".dsh-notebook")
    r = link_fulltext(led, "s1", "x.txt", actor=Actor("lead"))
    assert r["ok"] is False and "DSH_NOTEBOOK_HOME" in r["error"] and "project folder" in r["error"]
    saved = Ledger(ledger_path(user / "nb.ipynb"))  # a notebook saved in ~ itself
    assert saved.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1000/walk"},
                        Actor("scout"))["ok"]
    r = link_fulltext(saved, "s1", "notes.txt", actor=Actor("lead"))
    assert r["ok"] is False and "your home directory" in r["error"]
    (user / "project").mkdir()  # a project folder under ~ is fine
    (user / "project" / "paper.txt").write_bytes(TEXT)
    monkeypatch.chdir(user / "project")
    assert link_fulltext(led, "s1", "paper.txt", actor=Actor("lead"))["ok"]
    assert led.events()[-1]["type"].endswith("fulltext-linked")


# --------------------------------------------------------------------------- stored only when recorded


def test_bytes_are_not_stored_when_the_ledger_refuses_the_event(nb):
    work, led = nb
    before = led.events()
    r = link_fulltext(led, "s1", "paper.txt", actor=Actor("scout"))  # not the lead's authority
    assert r["ok"] is False and r["code"] == "LEDGER_AUTHORITY"
    r = link_fulltext(led, "nope", "paper.txt", actor=Actor("lead"))  # unknown source
    assert r["ok"] is False and r["code"] == "LEDGER_REFERENCE"
    assert led.events() == before and not (work / "nb.dsh" / "fulltext").exists()
    # an identical copy recorded earlier stays when a later link of the same bytes is refused
    r = link_fulltext(led, "s1", "paper.txt", actor=Actor("lead"))
    assert r["ok"]
    first = stored(work)
    r2 = link_fulltext(led, "s1", "paper.txt", actor=Actor("scout"))
    assert r2["ok"] is False and stored(work) == first and Path(r["path"]).read_bytes() == TEXT


# --------------------------------------------------------------------------- URLs


class _Server:
    """A local HTTP server: ``routes`` maps a path to ``(status, headers, body)``."""

    def __init__(self, routes: dict):
        self.routes, self.requests = routes, []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):  # noqa: N802
                outer.requests.append({"path": self.path, "host": self.headers.get("Host")})
                status, headers, body = outer.routes.get(self.path, (404, {}, b"not here"))
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v.format(port=outer.port))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = _Server({"/paper": (200, {"Content-Type": "text/plain"}, TEXT),
                 "/empty": (200, {"Content-Type": "text/plain"}, b""),
                 "/secret": (200, {"Content-Type": "text/plain"}, b"internal admin page"),
                 "/to-secret": (302, {"Location": "http://127.0.0.1:{port}/secret"}, b""),
                 "/loop": (302, {"Location": "/loop"}, b""),
                 "/to-ftp": (302, {"Location": "ftp://example.org/x"}, b"")})
    yield s
    s.close()


def test_local_services_are_refused_without_the_opt_in(nb, server):
    work, led = nb
    err = refused(led, work, server.url("/paper"))
    assert "127.0.0.1, which is a loopback address" in err and "DSH_FULLTEXT_ALLOW_PRIVATE=1" in err
    assert "localhost resolves to" in refused(led, work, server.url("/paper", "localhost"))
    assert "loopback" in refused(led, work, server.url("/paper", "[::ffff:127.0.0.1]"))
    assert server.requests == []  # refused before any connection
    assert "link-local" in refused(led, work, "http://169.254.169.254/latest/meta-data/")
    assert "private" in refused(led, work, "http://10.0.0.8/paper")
    assert "unspecified" in refused(led, work, "http://0.0.0.0:8080/paper")
    assert "multicast" in refused(led, work, "http://[ff02::1]/paper")


def test_opt_in_fetches_from_the_local_server(nb, server, monkeypatch):
    work, led = nb
    monkeypatch.setenv("DSH_FULLTEXT_ALLOW_PRIVATE", "1")
    r = link_fulltext(led, "s1", server.url("/paper"), actor=Actor("lead"))
    assert r["ok"] and r["media_type"] == "text/plain" and Path(r["path"]).read_bytes() == TEXT
    assert "more than 5 times" in refused(led, work, server.url("/loop"), code="FULLTEXT_FETCH")
    assert len([q for q in server.requests if q["path"] == "/loop"]) == 6  # the first request and 5 redirects
    assert "only http and https" in refused(led, work, server.url("/to-ftp"))


def test_every_redirect_hop_is_checked(nb, server, monkeypatch):
    """A public host that redirects to a loopback address: the second hop is refused, never fetched."""
    work, led = nb
    real = NF.check_host

    def fake(host, port, allow_private):  # papers.test stands for a public host (served here)
        return ["127.0.0.1"] if host == "papers.test" else real(host, port, allow_private)

    monkeypatch.setattr(NF, "check_host", fake)  # the network layer's fetcher checks URLs
    server.routes["/paper"] = (200, {"Content-Type": "text/plain"}, TEXT)
    r = link_fulltext(led, "s1", server.url("/paper", "papers.test"), actor=Actor("lead"))
    assert r["ok"], r
    assert server.requests[-1] == {"path": "/paper", "host": f"papers.test:{server.port}"}  # pinned, Host kept
    before = led.events()
    n = len(server.requests)
    r = link_fulltext(led, "s1", server.url("/to-secret", "papers.test"), actor=Actor("lead"))
    assert r["ok"] is False and r["code"] == "FULLTEXT_REFUSED"
    assert "redirects to" in r["error"] and "loopback" in r["error"]
    assert [q["path"] for q in server.requests[n:]] == ["/to-secret"]  # /secret never requested
    assert led.events() == before


def test_empty_response_is_refused(nb, server, monkeypatch):
    work, led = nb
    monkeypatch.setenv("DSH_FULLTEXT_ALLOW_PRIVATE", "1")
    assert "empty full text" in refused(led, work, server.url("/empty"))


def test_the_embedded_ipv4_of_6to4_and_teredo_addresses_is_checked(nb):
    import ipaddress

    work, led = nb
    err = refused(led, work, "http://[2002:7f00:1::]/paper")  # 6to4 of 127.0.0.1
    assert "loopback" in err and "127.0.0.1" in err
    assert "private" in refused(led, work, "http://[2002:a00:1::]/paper")  # 6to4 of 10.0.0.1
    assert NF.address_rule(ipaddress.ip_address("2002:808:808::")) is None  # 6to4 of 8.8.8.8: public


def test_a_trickling_host_is_cut_off_by_the_overall_deadline(nb):
    """Each byte comes within the read timeout, but the whole fetch has a deadline too."""
    import time

    work, led = nb

    class Trickle(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            for _ in range(40):
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.2)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/slow"
    try:
        # the trickle (a byte every 0.2 s for 8 s) never trips the per-read timeout: only the deadline
        # ends the fetch, and its message says which (no wall-clock assertion, issue 22)
        err = refused(led, work, url, code="FULLTEXT_FETCH", allow_private=True, timeout=1, deadline=1.0)
        assert "1-second deadline for the whole fetch" in err
        # the default deadline is 3 x the timeout (at most DEADLINE)
        err = refused(led, work, url, code="FULLTEXT_FETCH", allow_private=True, timeout=0.5)
        assert "1.5-second deadline" in err
    finally:
        httpd.shutdown()
        httpd.server_close()


# --------------------------------------------------------------------------- the lead's tool


def test_lead_tool_cannot_put_a_secret_in_a_prompt(tmp_path, monkeypatch, new_kernel):
    """The lead asks for /proc/self/environ: refused, and no request to the model carries the key."""
    from IPython.utils.capture import capture_output

    from dsh_notebook.llm.testing import ScriptedServer

    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DSH_NOTEBOOK_PATH", str(tmp_path / "nb.ipynb"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", SECRET)
    monkeypatch.delenv("DSH_FULLTEXT_ALLOW_PRIVATE", raising=False)
    led = Ledger(ledger_path(tmp_path / "nb.ipynb"))
    assert led.append("source-proposed", {"source_id": "s1", "kind": "doi", "identifier": "10.1000/walk"},
                      Actor("scout"))["ok"]
    ip = new_kernel()
    call = {"id": "call_1", "name": "research_link_fulltext",
            "arguments": json.dumps({"source_id": "s1", "locator": "/proc/self/environ"})}
    srv = ScriptedServer([{"reply": {"tool_calls": [call]}}, {"reply": {"content": "It was refused."}}]).start()
    monkeypatch.setenv("DEEPSEEK_BASE_URL", srv.base_url)
    try:
        with capture_output():
            r = ip.run_cell("%%chat --preset research --session lead\nLink the full text of s1.")
        assert r.error_in_exec is None, r.error_in_exec
        assert len(srv.requests) == 2
        tool_msg = [m for m in srv.requests[1]["body"]["messages"] if m["role"] == "tool"][0]
        result = json.loads(tool_msg["content"])
        assert result["ok"] is False and result["code"] == "FULLTEXT_REFUSED"
        assert "outside the notebook's folder" in result["error"]
        assert all(SECRET not in json.dumps(q["body"]) for q in srv.requests)
    finally:
        srv.stop()
        for s in ip.magics_manager.registry["ChatMagics"].sessions.values():
            s.close()
    assert led.fold().sources["s1"].fulltext is None
    assert not (tmp_path / "nb.dsh" / "fulltext").exists()
