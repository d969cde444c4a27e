"""The reviewer panel (spec: reviewer.md "Surface", "Runs and states", "History and
follow-up", "Boundaries").

``ReviewerPanel(reviewer=None)`` shows the kernel's reviewer (:func:`kernel_reviewer`,
shared with ``%review`` and ``%%chat``) as an ipywidgets view: a target picker (source,
path, a listing of the conversations a source holds, Review), the focus buttons, Re-review,
Stop and Pause/Resume, a status line, the insight list (each insight a ``<details>`` item
with its evidence quotes, why, suggestion and check; a quote not found in the transcript is
marked unverified), a history of completed reviews that switches the one shown, a question
box bound to the shown review, and a new-result notice.

Before the first review of a target the panel says, once, that the selected evidence is sent
to the configured model service (which may be remote) and that key-shaped strings are
masked; the review starts when the person confirms.

The panel is the reviewer's ``on_change`` (a callback that was there before is still
called, and comes back on :meth:`ReviewerPanel.close`); the reviewer calls it from its
worker threads, so each refresh is a few small trait updates under one lock. Listing and
questions run in threads of their own, cancelled on close. Errors of a click show in the
panel (readable ones on its message line, anything else in its ``Output``). The
``text/plain`` fallback is a fixed sentence, so a notebook showing the panel compares equal
under nbval (public case P14).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlparse

import ipywidgets as W

from ..kernel import kernel_reviewer
from ..reviewer import sources
from ..reviewer.payloads import Evidence, Insight, Review
from ..reviewer.review import WINDOW_CHARS, ReviewHistory, ask
from ..reviewer.targets import ReviewUsageError, resolve_target
from .templating import render

if TYPE_CHECKING:
    from ..reviewer.runner import Reviewer

#: The target picker's sources: (label, value). ``this`` and ``session`` are read as ``notebook``.
SOURCE_OPTIONS = [
    ("this notebook's chat", "this"),
    ("another notebook's chat", "session"),
    ("DeepSeek Harness session", "dsh"),
    ("Codex CLI conversation", "codex"),
    ("Claude Code conversation", "claude"),
    ("jupyter-ai chat (.chat)", "chat"),
]
FOCUS_OPTIONS = [("me · 审我", "me"), ("dialogue · 审对话", "dialogue"), ("AI · 审AI", "ai")]
_PLACEHOLDER = {
    "this": "this notebook's newest chat session (or List and pick one)",
    "session": "a notebook (.ipynb), its .dsh folder, or one of its session files",
}
_RED = "#c62828"
_GREY = "#57606a"
_WARN = "#b26a00"
_KNOWN_ERRORS = (ReviewUsageError, ValueError, LookupError, RuntimeError, OSError)


def _when(at: object) -> str:
    """``2026-05-01T12:34:56.789+00:00`` -> ``2026-05-01 12:34 UTC``."""
    return f"{str(at)[:16].replace('T', ' ')} UTC" if at else ""


def _target_label(target: dict | None) -> str:
    if not target:
        return ""
    return f"{target.get('source')}: {Path(str(target.get('path', ''))).name}"


def model_service(reviewer: Reviewer) -> tuple[str | None, bool | None]:
    """``(host, remote)`` of the model service the reviewer's requests go to, from its
    ``client_factory`` or the settings; ``(None, None)`` when that cannot be told. Nothing is
    sent to find out."""
    try:
        if reviewer.client_factory is not None:
            client = reviewer.client_factory()
            try:
                url = client.url
            finally:
                close = getattr(client, "close", None)
                if close is not None:
                    close()
        else:
            from ..settings import load_settings

            _pid, provider, _model = load_settings().resolve(None)
            url = provider.base_url
        host = urlparse(str(url)).hostname
    except Exception:  # noqa: BLE001 - the notice then says "may be remote"
        return None, None
    if not host:
        return None, None
    local = host in ("localhost", "::1") or host.startswith("127.")
    return host, not local


def notice_html(target_label: str, host: str | None, remote: bool | None, max_chars: int) -> str:
    """The sentence shown before the first review of a target (where the evidence goes: *host*,
    and whether it is *remote*, ``None`` when that cannot be told), every text escaped."""
    return render("review.html.j2", mode="notice", target=target_label, host=host, remote=remote,
                  max_chars=max_chars, warn=_WARN)


def evidence_html(e: Evidence) -> str:
    """One quote of an insight as an HTML ``<li>`` (an unverified one marked, with why), escaped."""
    return render("review.html.j2", mode="evidence", item=e)


def insight_html(i: int, ins: Insight) -> str:
    """Insight number *i* as an HTML ``<details>`` item, every text escaped."""
    return render("review.html.j2", mode="insight", index=i, item=ins)


def review_html(review: Review | None, hide_unverified: bool = False) -> str:
    """One review as HTML: verdict, headline, summary, then each insight as a ``<details>``
    item (unverified quotes marked; with ``hide_unverified``, insights with one are left out
    and counted)."""
    if review is None:
        return ""
    insights = review.get("insights") or []
    hidden = 0
    if hide_unverified:
        hidden = sum(1 for ins in insights if not ins.get("verified", True))
        insights = [ins for ins in insights if ins.get("verified", True)]
    return render("review.html.j2", mode="review", review=review, insights=insights, hidden=hidden,
                  when=_when(review.get("at")), grey=_GREY)


class ReviewerPanel(W.VBox):
    """``ReviewerPanel(reviewer=None)``: the panel on ``reviewer`` (default: the kernel's,
    :func:`~dsh_notebook.kernel.kernel_reviewer`). Parts, as attributes:
    ``source``, ``path``, ``list_button``, ``listing``, ``review_button``; ``notice``,
    ``confirm_button``, ``cancel_button``; ``focus``; ``rereview_button``, ``stop_button``,
    ``pause_button``; ``status``; ``new_button``; ``history``, ``hide_unverified``;
    ``insights``; ``question``, ``ask_button``, ``answers``; ``message``, ``output``.
    ``refresh()`` shows the reviewer's state now, ``wait()`` waits for the panel's and the
    reviewer's threads (tests), ``close()`` gives the reviewer its previous ``on_change``."""

    def __init__(self, reviewer: Reviewer | None = None) -> None:
        if reviewer is None:
            from IPython import get_ipython

            shell = get_ipython()
            if shell is None:
                raise RuntimeError("ReviewerPanel() without a reviewer needs an IPython kernel; outside one pass "
                                   "reviewer=Reviewer(...)")
            reviewer = kernel_reviewer(shell)
        self.reviewer = reviewer
        self._lock = threading.RLock()
        self._quiet = False
        self._closed = False
        self._cancel = threading.Event()
        self._threads: list[threading.Thread] = []
        self._follow = True  # show the newest review as it arrives (off while an older one is picked)
        self._shown_id: str | None = None
        self._acknowledged: set[tuple[str, str]] = set()  # targets whose notice was confirmed here
        self._pending: tuple[str, Path] | None = None  # the target waiting for the notice's confirmation
        self._asking: dict[str, str] = {}  # review id -> the question being answered

        # (1) target picker
        self.source = W.Dropdown(options=SOURCE_OPTIONS, value="this", description="Review",
                                 layout=W.Layout(width="auto"))
        self.path = W.Text(value="", layout=W.Layout(flex="1 1 auto", min_width="16em"))
        self.list_button = W.Button(description="List", icon="list", tooltip="List the conversations this source holds",
                                    layout=W.Layout(width="auto"))
        self.review_button = W.Button(description="Review", icon="search", button_style="primary",
                                      tooltip="Choose this target and review it now", layout=W.Layout(width="auto"))
        self.listing = W.Dropdown(options=[], value=None, description="Pick", layout=W.Layout(width="100%"))
        self.listing.layout.display = "none"
        self.notice = W.HTML("")
        self.confirm_button = W.Button(description="Send and review", button_style="warning", icon="paper-plane",
                                       layout=W.Layout(width="auto"))
        self.cancel_button = W.Button(description="Cancel", layout=W.Layout(width="auto"))
        self._notice_box = W.VBox([self.notice, W.HBox([self.confirm_button, self.cancel_button])])
        self._notice_box.layout.display = "none"
        self.message = W.HTML("")
        # (2) focus, (3) controls
        self.focus = W.ToggleButtons(options=FOCUS_OPTIONS, value=reviewer.focus, tooltips=[
            "the person's goals, constraints and choices", "whether the back-and-forth moves the task forward",
            "whether the AI answered what was asked, within the given material"])
        self.rereview_button = W.Button(description="Re-review", icon="refresh", layout=W.Layout(width="auto"))
        self.stop_button = W.Button(description="Stop", icon="stop", layout=W.Layout(width="auto"))
        self.pause_button = W.Button(description="Pause", icon="pause", layout=W.Layout(width="auto"))
        # (4) status, (8) new-result notice
        self.status = W.HTML("")
        self.new_button = W.Button(description="", icon="bell", button_style="info", layout=W.Layout(width="auto"))
        self.new_button.layout.display = "none"
        # (5) insights, (6) history
        self.history = W.Dropdown(options=[], value=None, description="History", layout=W.Layout(width="auto"))
        self.hide_unverified = W.Checkbox(value=bool(getattr(reviewer, "hide_unverified", False)),
                                          description="hide insights with an unverified quote", indent=False)
        self.insights = W.HTML("")
        # (7) question box
        self.question = W.Text(placeholder="Ask about the review shown above…",
                               layout=W.Layout(flex="1 1 auto"))
        self.ask_button = W.Button(description="Ask", icon="question", layout=W.Layout(width="auto"))
        self.answers = W.HTML("")
        self.output = W.Output()

        super().__init__([
            W.HBox([self.source, self.path, self.list_button, self.review_button]),
            self.listing, self._notice_box, self.message,
            W.HBox([self.focus, self.rereview_button, self.stop_button, self.pause_button]),
            self.status, self.new_button,
            W.HBox([self.history, self.hide_unverified]),
            self.insights,
            W.HBox([self.question, self.ask_button]), self.answers,
            self.output,
        ], layout=W.Layout(border="1px solid #d0d7de", padding="4px 8px"))

        self.source.observe(self._guard(self._source_changed), "value")
        self.listing.observe(self._guard(self._listing_picked), "value")
        self.list_button.on_click(self._guard(self._list_clicked))
        self.review_button.on_click(self._guard(self._review_clicked))
        self.confirm_button.on_click(self._guard(self._confirm_clicked))
        self.cancel_button.on_click(self._guard(self._cancel_clicked))
        self.focus.observe(self._guard(self._focus_changed), "value")
        self.rereview_button.on_click(self._guard(self._rereview_clicked))
        self.stop_button.on_click(self._guard(lambda _b: self.reviewer.stop()))
        self.pause_button.on_click(self._guard(self._pause_clicked))
        self.new_button.on_click(self._guard(self._new_clicked))
        self.history.observe(self._guard(self._history_picked), "value")
        self.hide_unverified.observe(self._guard(lambda _c: self.refresh()), "value")
        self.ask_button.on_click(self._guard(self._ask_clicked))

        self._show_target(reviewer.target)
        self._source_changed(None)
        self._previous = reviewer.on_change
        reviewer.on_change = self._on_change
        self.refresh()

    def __repr__(self) -> str:  # the text/plain fallback: fixed, so nbval compares it
        return "[reviewer panel]"

    # ------------------------------------------------------------------ plumbing

    def _guard(self, fn: Callable[..., object]) -> Callable[..., None]:
        """Run a handler inside the panel's Output: a readable error goes to the message
        line, anything unexpected shows its traceback in the Output."""

        def run(*args: object) -> None:
            if self._closed:
                return
            with self.output:
                try:
                    fn(*args)
                except _KNOWN_ERRORS as exc:
                    self._tell(str(exc) or type(exc).__name__, error=True)

        return run

    def _tell(self, text: str, error: bool = False) -> None:
        self.message.value = render("review.html.j2", mode="message", text=text, colour=_RED if error else _GREY)

    def _spawn(self, fn: Callable[..., None], *args: object, name: str) -> None:
        t = threading.Thread(target=fn, args=args, name=name, daemon=True)
        self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()

    def _on_change(self, reviewer: Reviewer) -> None:
        """The reviewer's ``on_change`` (any thread): the previous callback, then a refresh."""
        previous = self._previous
        if previous is not None:
            try:
                previous(reviewer)
            except Exception:  # noqa: BLE001, S110 - another view's failure never stops this one
                pass
        if self._closed:
            return
        try:
            self.refresh()
        except Exception as exc:  # noqa: BLE001 - shown in the panel, never lost
            self.output.append_stdout(f"reviewer panel: {type(exc).__name__}: {exc}\n")

    def wait(self, timeout: float = 30.0) -> None:
        """Wait for the panel's threads (listing, questions) and the reviewer's runs."""
        for t in list(self._threads):
            t.join(timeout)
        self.reviewer.wait(timeout)
        for t in list(self._threads):
            t.join(timeout)

    def close(self) -> None:
        """Stop the panel's threads and give the reviewer back its previous ``on_change``
        (the reviewer itself goes on: it belongs to the kernel)."""
        if getattr(self, "_closed", True):  # closed already, or __init__ refused
            return super().close()
        self._closed = True
        self._cancel.set()
        rv = self.reviewer
        if rv.on_change == self._on_change:
            rv.on_change = self._previous
        super().close()

    # ------------------------------------------------------------------ the target picker

    def _show_target(self, target: dict | None) -> None:
        """Put the reviewer's current target into the picker."""
        if not target:
            return
        path = Path(str(target.get("path", "")))
        sidecar = self.reviewer.sidecar
        if target.get("source") == "notebook":
            mine = sidecar is not None and path.parent == Path(sidecar).resolve() / "sessions"
            self.source.value = "this" if mine else "session"
            self.path.value = "" if mine else str(path)
        elif target.get("source") in sources.SOURCES:
            self.source.value = target["source"]
            self.path.value = str(path)

    def _source_changed(self, _change: object) -> None:
        src = self.source.value
        self.path.disabled = src == "this"
        self.path.placeholder = _PLACEHOLDER.get(src) or f"{sources.WHAT[src]} (or a folder, then List)"
        if src == "this":
            self.path.value = ""
        with self._lock:
            self._quiet = True
            try:
                self.listing.options = []
            finally:
                self._quiet = False
        self.listing.layout.display = "none"
        self._hide_notice()
        self._tell("")

    def _list_root(self) -> tuple[str, Path | str | None]:
        src, text = self.source.value, self.path.value.strip()
        if src == "this":
            if self.reviewer.sidecar is None:
                raise ReviewUsageError("this notebook's folder is not known yet: run a %%chat cell first")
            return "notebook", self.reviewer.sidecar
        if src == "session":
            if not text:
                raise ReviewUsageError("give the notebook (.ipynb) or its .dsh folder, then List")
            return "notebook", text
        root = Path(text).expanduser() if text else None
        return src, (root if root is not None and root.is_dir() else None)

    def _list_clicked(self, _b: object) -> None:
        source, root = self._list_root()
        self.list_button.disabled = True
        self._tell(f"listing {source} conversations…")
        self._spawn(self._list, source, root, name="dsh-review-list")

    def _list(self, source: str, root: Path | str | None) -> None:
        try:
            convs = sources.list_source(source, root)
        except Exception as exc:  # noqa: BLE001 - shown in the panel
            convs, problem = None, f"cannot list: {exc}"
        if self._closed or self._cancel.is_set():
            return
        try:
            if convs is None:
                self._tell(problem, error=True)
                return
            options = []
            for c in convs:
                when = (c.updated or c.started or "")[:16].replace("T", " ")
                title = c.title if len(c.title) <= 60 else c.title[:59] + "…"
                options.append((f"{title} · {when} · {c.user_messages} user / {c.ai_messages} AI", str(c.path)))
            with self._lock:
                self._quiet = True
                try:
                    self.listing.options = options
                    self.listing.value = None
                finally:
                    self._quiet = False
            self.listing.layout.display = "" if options else "none"
            self._tell(f"{len(options)} conversation(s); pick one, then Review" if options else
                       "no conversations found there")
        finally:
            self.list_button.disabled = False

    def _listing_picked(self, change: dict[str, Any]) -> None:
        with self._lock:
            if self._quiet:
                return
        if change["new"] and self.source.value != "this":
            self.path.value = change["new"]
        self._hide_notice()

    def chosen_target(self) -> tuple[str, Path]:
        """``(source, path)`` the picker names now. Raises a readable ``ValueError``."""
        src, text = self.source.value, self.path.value.strip()
        if src == "this":
            pick = self.listing.value
            source, path = ("notebook", Path(pick)) if pick else resolve_target(["this"], self.reviewer.sidecar)
        elif not text:
            raise ReviewUsageError("give a path (or List and pick a conversation)")
        else:
            source, path = resolve_target([src, text], None)
        sources.parse_target(f"{source}:{path}")  # a readable error for a missing or wrong file
        return source, path

    def _needs_notice(self, source: str, path: Path) -> bool:
        key = (source, str(path.resolve()))
        if key in self._acknowledged:
            return False
        folder = self.reviewer.folder()
        try:
            return not ReviewHistory(folder, {"source": source, "path": key[1]}).events()
        except Exception:  # noqa: BLE001 - an unreadable history: say it again rather than not at all
            return True

    def _review_clicked(self, _b: object) -> None:
        source, path = self.chosen_target()
        if self._needs_notice(source, path):
            host, remote = model_service(self.reviewer)
            self._pending = (source, path)
            self.notice.value = notice_html(f"{source}: {path.name}", host, remote,
                                            self.reviewer.max_chars or WINDOW_CHARS)
            self._notice_box.layout.display = ""
            self._tell("")
            return
        self._start(source, path)

    def _confirm_clicked(self, _b: object) -> None:
        if self._pending is None:
            return
        source, path = self._pending
        self._acknowledged.add((source, str(path.resolve())))
        self._hide_notice()
        self._start(source, path)

    def _cancel_clicked(self, _b: object) -> None:
        self._hide_notice()
        self._tell("nothing was sent")

    def _hide_notice(self) -> None:
        self._pending = None
        self._notice_box.layout.display = "none"

    def _start(self, source: str, path: Path) -> None:
        self._tell("")
        self._follow, self._shown_id = True, None
        self.reviewer.set_target(source, path)

    # ------------------------------------------------------------------ focus and controls

    def _focus_changed(self, change: dict[str, Any]) -> None:
        with self._lock:
            if self._quiet:
                return
        self._follow = True
        self.reviewer.set_focus(change["new"])

    def _rereview_clicked(self, _b: object) -> None:
        self._follow = True
        self.reviewer.review_now()

    def _pause_clicked(self, _b: object) -> None:
        if self.reviewer.paused:
            self.reviewer.resume()
        else:
            self.reviewer.pause()

    def _new_clicked(self, _b: object) -> None:
        self._follow, self._shown_id = True, None
        self.reviewer.mark_read()  # its on_change refreshes: the newest review is shown

    def _history_picked(self, change: dict[str, Any]) -> None:
        with self._lock:
            if self._quiet or not change["new"]:
                return
            newest = self.history.options[0][1] if self.history.options else None
            self._shown_id = change["new"]
            self._follow = change["new"] == newest
        self.refresh()

    # ------------------------------------------------------------------ questions

    def _ask_clicked(self, _b: object) -> None:
        q = self.question.value.strip()
        if not q:
            raise ReviewUsageError("type a question first")
        rid = self._shown_id
        hist = self.reviewer.history()
        if rid is None or hist is None:
            raise ReviewUsageError("there is no completed review to ask about yet")
        self._asking[rid] = q
        self.question.value = ""
        self.ask_button.disabled = True
        self._tell("")
        self.refresh()
        self._spawn(self._ask, hist, q, rid, name="dsh-review-ask")

    def _ask(self, hist: ReviewHistory, question: str, rid: str) -> None:
        from ..errors import LLMError

        try:
            rv = self.reviewer
            if rv.client_factory is not None:
                client = rv.client_factory()
            else:
                from ..llm import ChatClient

                client = ChatClient()
            event = ask(hist, question, client=client, which=rid, cancel=self._cancel)
            if event.get("error"):
                self._tell(f"the question was not answered: {event['error']}", error=True)
        except LLMError as exc:  # cancelled: the panel was closed
            if not self._closed:
                self._tell(f"the question was not answered: {exc.message}", error=True)
        except Exception as exc:  # noqa: BLE001 - shown in the panel
            if not self._closed:
                self._tell(f"the question was not answered: {type(exc).__name__}: {exc}", error=True)
        finally:
            self._asking.pop(rid, None)
            if not self._closed:
                self.ask_button.disabled = False
                self.refresh()

    # ------------------------------------------------------------------ the view

    def refresh(self) -> None:
        """Show the reviewer's state now (any thread; small trait updates under one lock)."""
        if self._closed:
            return
        with self._lock:
            self._quiet = True
            try:
                self._refresh()
            finally:
                self._quiet = False

    def _reviews(self, st: dict) -> tuple[list[dict], ReviewHistory | None]:
        hist = self.reviewer.history()
        try:
            reviews = [r for r in hist.reviews() if r.get("status") == "done"] if hist else []
        except Exception:  # noqa: BLE001 - a history being written may be unreadable for a moment
            reviews = []
        latest = st.get("latest")
        if latest and latest.get("id") not in {r.get("id") for r in reviews}:
            reviews.append(latest)  # the history could not be written: the review is still shown
        return reviews, hist

    def _refresh(self) -> None:
        st = self.reviewer.status()
        reviews, hist = self._reviews(st)
        by_id = {r.get("id"): r for r in reviews}
        if self._follow or self._shown_id not in by_id:
            shown = reviews[-1] if reviews else None
        else:
            shown = by_id[self._shown_id]
        self._shown_id = shown.get("id") if shown else None

        # controls
        has_target = bool(st["target"])
        self.focus.value = st["focus"]
        self.rereview_button.disabled = not has_target
        self.stop_button.disabled = st["state"] != "reviewing"
        self.pause_button.disabled = not has_target
        self.pause_button.description = "Resume" if st["paused"] else "Pause"
        self.pause_button.icon = "play" if st["paused"] else "pause"

        # status line: never "reviewed" without a completed review
        self.status.value = self._status_html(st, shown, reviews[-1] if reviews else None)

        # new-result notice
        latest = st.get("latest")
        if st["unread"] and latest:
            first = (latest.get("insights") or [{}])[0].get("title")
            text = first or latest.get("headline") or "a new review"
            self.new_button.description = "New: " + (text if len(text) <= 80 else text[:79] + "…")
            self.new_button.tooltip = f"{latest.get('headline', '')} (show the newest review)"
            self.new_button.layout.display = ""
        else:
            self.new_button.layout.display = "none"

        # history, newest first, numbered as %review --history numbers them
        options = [(self._history_label(n, r), r.get("id")) for n, r in reversed(list(enumerate(reviews, 1)))]
        if list(self.history.options) != options:
            self.history.options = options
        self.history.value = self._shown_id
        self.history.layout.display = "" if options else "none"

        # the review shown
        if shown is not None:
            self.insights.value = review_html(cast(Review, shown), self.hide_unverified.value)
        elif st["state"] == "reviewing":
            self.insights.value = render("review.html.j2", mode="running", grey=_GREY)
        else:
            self.insights.value = ""

        # questions about the shown review
        self.question.disabled = self.ask_button.disabled = shown is None or bool(self._asking)
        self.answers.value = self._answers_html(hist, self._shown_id)

    @staticmethod
    def _history_label(n: int, r: dict) -> str:
        head = r.get("headline") or ""
        head = head if len(head) <= 60 else head[:59] + "…"
        return f"{n}. {_when(r.get('at'))} · {r.get('focus')} · {r.get('verdict')} · {head}"

    def _status_html(self, st: dict[str, Any], shown: dict[str, Any] | None, newest: dict[str, Any] | None) -> str:
        """The status line: the state, the target and focus, the last completed review's time, the
        last run's error and the shown review's coverage note, every text escaped."""
        note = ""
        if shown is not None:
            note = (shown.get("coverage") or {}).get("note") or ""
            if shown.get("masked"):
                note += f" {shown['masked']} key-shaped string(s) were masked before sending."
        return render("review.html.j2", mode="status", state=st["state"], target=_target_label(st["target"]),
                      path=(st["target"] or {}).get("path"), focus=st["focus"],
                      newest_at=_when(newest.get("at")) if newest else "", error=st.get("error"),
                      note=note.strip(), red=_RED, grey=_GREY)

    def _answers_html(self, hist: ReviewHistory | None, rid: str | None) -> str:
        if hist is None or rid is None:
            return ""
        try:
            asked = hist.questions(rid)
        except Exception:  # noqa: BLE001 - a history being written may be unreadable for a moment
            asked = []
        return render("review.html.j2", mode="answers", asked=asked, waiting=self._asking.get(rid), red=_RED)
