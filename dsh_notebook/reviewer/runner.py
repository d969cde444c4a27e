"""The reviewer's lifecycle: target, focus, states, generations, watching (spec: reviewer.md
"Runs and states"; upstream-facts.md 4.7).

States: ``no-target`` -> ``reviewing`` -> ``watching`` (or ``failed``, with a readable
``error``, also watching) -> a new user message in the target, or a re-review ->
``reviewing``; ``watching`` <-> ``paused``. Choosing a target starts one review at once.

* Stale results never win: each run carries a generation number; a result that arrives
  after the target or focus changed, or after a newer run began, is kept in the history
  marked ``superseded`` and never becomes the latest.
* Stop cancels the running review (its model call returns within ~50 ms); a review that
  takes longer than ``timeout`` seconds (default 180) fails with a message that says so.
* Watching: for this notebook's chat, :meth:`Reviewer.turn_completed` (called by
  ``%%chat`` after a turn) starts a review when the target gained a user message; for
  external logs a thread polls the file's size and mtime every ``poll`` seconds (default
  5) and reviews once it has been quiet for ``debounce`` seconds and holds a new user
  message.
* Target, focus and pause persist in ``$DSH_NOTEBOOK_HOME/reviewer.json`` and the
  notebook's ``<stem>.dsh/reviewer.json``; :meth:`Reviewer.restore` brings them back
  without starting a review (a notebook restores its own target only; the user-wide file
  gives focus and pause). A user message that arrives during a review is reviewed when
  that review ends.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import LLMError
from ..settings import load_settings
from ..storage import atomic_write_text, home
from . import sources
from .review import FOCUSES, ReviewHistory, run_review

if TYPE_CHECKING:
    from ..llm.client import ChatClient

STATES = ("no-target", "reviewing", "watching", "paused")


def state_path() -> Path:
    return home() / "reviewer.json"


class Reviewer:
    """``Reviewer(sidecar=None, client_factory=None, timeout=180, poll=5, debounce=2,
    on_change=None)``. ``sidecar`` is the notebook's folder (reviews go to its
    ``reviews/``; without one, to ``$DSH_NOTEBOOK_HOME/reviews``). ``client_factory()``
    returns a :class:`~dsh_notebook.llm.ChatClient` (default: a new one per run).
    ``on_change(reviewer)`` is called after every state change (from any thread)."""

    def __init__(self, sidecar: Path | None = None, client_factory: Callable[[], ChatClient] | None = None,
                 timeout: float = 180.0, poll: float = 5.0, debounce: float = 2.0,
                 on_change: Callable[[Reviewer], None] | None = None, max_chars: int | None = None,
                 hide_unverified: bool = False) -> None:
        if not timeout > 0 or not poll > 0 or debounce < 0:
            raise ValueError("timeout and poll must be positive and debounce not negative (seconds)")
        self.sidecar = Path(sidecar) if sidecar else None
        self.client_factory = client_factory
        self.timeout, self.poll, self.debounce = float(timeout), float(poll), float(debounce)
        self.on_change = on_change
        self.max_chars = max_chars
        #: display setting (off by default): views leave out insights with an unverified quote
        self.hide_unverified = bool(hide_unverified)
        self.config_problems: list[str] = []
        self.target: dict | None = None
        self.focus = "me"
        self.paused = False
        self.state = "no-target"
        self.generation = 0
        self.error: str | None = None
        self.latest: dict | None = None
        self.unread = False
        self._lock = threading.RLock()
        self._cancel: threading.Event | None = None
        self._runs: list[threading.Thread] = []
        self._watch_stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._seen_users: int | None = None
        self._pending = False  # a new user message arrived while a review was running

    # ------------------------------------------------------------------ persistence

    def folder(self) -> Path:
        """Where this reviewer's histories are kept: ``<sidecar>/reviews``, or
        ``$DSH_NOTEBOOK_HOME/reviews`` without a notebook."""
        return (self.sidecar / "reviews") if self.sidecar else state_path().parent / "reviews"

    def history(self) -> ReviewHistory | None:
        return ReviewHistory(self.folder(), self.target) if self.target else None

    def _save(self) -> None:
        data = json.dumps({"target": self.target, "focus": self.focus, "paused": self.paused}, ensure_ascii=False,
                          indent=2) + "\n"
        for path in [state_path()] + ([self.sidecar / "reviewer.json"] if self.sidecar else []):
            try:
                atomic_write_text(path, data)
            except OSError:
                pass  # a folder that cannot be written loses the setting, never the review

    def restore(self) -> bool:
        """Bring back target, focus and pause (the notebook's own file first) without
        starting a review. Returns whether a target was restored."""
        own = [self.sidecar / "reviewer.json"] if self.sidecar else []
        for path in own + [state_path()]:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):
                continue
            if not isinstance(data, dict):
                continue
            with self._lock:
                target = data.get("target")
                # another notebook's target never carries over: the user-wide file gives the
                # target only to a kernel without a notebook folder of its own
                if (path in own or not self.sidecar) and isinstance(target, dict) \
                        and target.get("source") in sources.SOURCES and isinstance(target.get("path"), str) \
                        and target["path"]:
                    self.target = {"source": target["source"], "path": target["path"]}
                if data.get("focus") in FOCUSES:
                    self.focus = data["focus"]
                self.paused = data.get("paused") is True
                if self.target:
                    self.state = "paused" if self.paused else "watching"
                    hist = self.history()
                    try:
                        self.latest = hist.get() if hist else None
                    except LookupError:
                        self.latest = None
                    self._seen_users = self._count_users()
                    self._start_watcher()
            self._changed()
            return self.target is not None
        return False

    # ------------------------------------------------------------------ controls

    def set_target(self, source: str, path: str | Path, focus: str | None = None) -> int:
        """Choose what to review and start a review at once; returns its generation.
        Raises ``ValueError`` for an unknown source or focus, ``FileNotFoundError`` for a
        missing log."""
        if source not in sources.SOURCES:
            raise ValueError(f"unknown source {source!r}; the sources are {', '.join(sources.SOURCES)}")
        if focus is not None and focus not in FOCUSES:
            raise ValueError(f"unknown focus {focus!r}; the focuses are {', '.join(FOCUSES)}")
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"{p} does not exist")
        try:  # a file that is not a log of this kind is refused before it becomes the target
            sources.read_target(f"{source}:{p}")
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        with self._lock:
            self.target = {"source": source, "path": str(p.resolve())}
            if focus:
                self.focus = focus
            self.latest = None
            self.unread = False
            self._save()
            self._seen_users = self._count_users()
            self._start_watcher()
        return self.review_now()

    def set_focus(self, focus: str) -> int | None:
        """Change the focus; with a target, review again now."""
        if focus not in FOCUSES:
            raise ValueError(f"unknown focus {focus!r}; the focuses are {', '.join(FOCUSES)}")
        with self._lock:
            self.focus = focus
            self._save()
        return self.review_now() if self.target else None

    def review_now(self) -> int:
        """Re-review: start a run with the current target and focus (a running one is
        superseded). Returns the new generation. ``RuntimeError`` without a target."""
        with self._lock:
            if not self.target:
                raise RuntimeError("choose a target first")
            if self._cancel is not None:
                self._cancel.set()
            self.generation += 1
            gen = self.generation
            cancel = self._cancel = threading.Event()
            self.state, self.error = "reviewing", None
            target, focus = dict(self.target), self.focus
            t = threading.Thread(target=self._run, args=(gen, target, focus, cancel), name=f"dsh-review-{gen}",
                                 daemon=True)
            self._runs.append(t)
        self._changed()
        t.start()
        return gen

    def stop(self) -> None:
        """Cancel the running review; the reviewer goes back to watching (or paused)."""
        with self._lock:
            if self._cancel is not None:
                self._cancel.set()
            self.generation += 1  # whatever arrives now is stale
            if self.state == "reviewing":
                self.state = "paused" if self.paused else "watching"
                self.error = "stopped"
        self._changed()

    def pause(self) -> None:
        with self._lock:
            self.paused = True
            if self.state != "reviewing" and self.target:
                self.state = "paused"
            self._save()
        self._changed()

    def resume(self) -> None:
        with self._lock:
            self.paused = False
            if self.state == "paused":
                self.state = "watching"
            self._seen_users = self._count_users()
            self._save()
        self._changed()

    def mark_read(self) -> None:
        with self._lock:
            self.unread = False
        self._changed()

    def wait(self, timeout: float = 30.0) -> None:
        """Wait for the runs started so far (tests, the command line)."""
        deadline = time.monotonic() + timeout
        for t in list(self._runs):
            t.join(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        self._watch_stop.set()
        with self._lock:
            if self._cancel is not None:
                self._cancel.set()

    # ------------------------------------------------------------------ watching

    def _count_users(self) -> int | None:
        if not self.target:
            return None
        try:
            utts = sources.read_target(f"{self.target['source']}:{self.target['path']}")
        except Exception:  # noqa: BLE001 - a log being written may be unreadable for a moment
            return None
        return sum(1 for u in utts if u.speaker == "user")

    def turn_completed(self, session_path: str | Path) -> bool:
        """``%%chat`` calls this after each turn: reviews when the target is that session
        and it gained a user message (not while paused). Returns whether a review started."""
        with self._lock:
            if not self.target or self.paused or self.target["source"] != "notebook":
                return False
            if Path(self.target["path"]) != Path(session_path).resolve():
                return False
            users = self._count_users()
            if users is None or (self._seen_users is not None and users <= self._seen_users):
                return False
            self._seen_users = users
        self.review_now()
        return True

    def _start_watcher(self) -> None:
        if self.target and self.target["source"] != "notebook" and (self._watcher is None or not self._watcher.is_alive()):
            self._watch_stop.clear()
            self._watcher = threading.Thread(target=self._watch, name="dsh-review-watch", daemon=True)
            self._watcher.start()

    def _stamp(self) -> tuple[int, int] | None:
        if self.target is None:
            return None
        try:
            st = Path(self.target["path"]).stat()
            return (st.st_size, st.st_mtime_ns)
        except (OSError, TypeError, KeyError):
            return None

    def _watch(self) -> None:
        seen = self._stamp()
        changed_at = None
        while not self._watch_stop.wait(self.poll):
            if not self.target or self.target["source"] == "notebook":
                return
            stamp = self._stamp()
            if stamp != seen:
                seen, changed_at = stamp, time.monotonic()
                continue
            if changed_at is None or time.monotonic() - changed_at < self.debounce:
                continue
            changed_at = None
            with self._lock:
                if self.paused:
                    continue
                users = self._count_users()
                if users is None:
                    continue
                if self._seen_users is not None and users < self._seen_users:
                    self._seen_users = users  # the log was truncated or replaced: count from here
                    continue
                if self._seen_users is not None and users == self._seen_users:
                    continue
                self._seen_users = users
                if self.state == "reviewing":
                    self._pending = True  # reviewed as soon as the running review ends
                    continue
            self.review_now()

    # ------------------------------------------------------------------ one run

    def _run(self, gen: int, target: dict, focus: str, cancel: threading.Event) -> None:
        from ..errors import CANCELLED, LLMError

        timer = threading.Timer(self.timeout, cancel.set)
        timer.daemon = True
        timer.start()
        started = time.monotonic()
        review = None
        try:
            utts = sources.read_target(f"{target['source']}:{target['path']}")
            client = self.client_factory() if self.client_factory else _default_client(self.timeout)
            kw = {"max_chars": self.max_chars} if self.max_chars else {}
            review = run_review(utts, focus=focus, client=client, target=target, cancel=cancel, generation=gen, **kw)
        except LLMError as exc:
            timed_out = exc.code == CANCELLED and time.monotonic() - started >= self.timeout - 0.05
            error = (f"the review took longer than {self.timeout:g} s and was stopped (timeout)" if timed_out else
                     "stopped" if exc.code == CANCELLED else f"{exc.code}: {exc.message}")
            review = {"target": target, "focus": focus, "generation": gen, "status": "failed", "error": error,
                      "insights": []}
        except Exception as exc:  # noqa: BLE001 - a readable failure state, never a silent spinner
            review = {"target": target, "focus": focus, "generation": gen, "status": "failed",
                      "error": f"{type(exc).__name__}: {exc}", "insights": []}
        finally:
            timer.cancel()
        with self._lock:
            stale = gen != self.generation or target != self.target or focus != self.focus
            if stale:
                review = {**review, "status": "superseded", "superseded_status": review.get("status")}
            try:
                if review.get("status") != "failed" or review.get("error") != "stopped":
                    ReviewHistory(self.folder(), target).append(review)
            except OSError:
                pass
            if stale:
                return
            self.state = "paused" if self.paused else "watching"
            if review.get("status") == "done":
                self.latest, self.unread, self.error = review, True, None
            else:
                self.error = review.get("error")
            again = self._pending and not self.paused
            self._pending = False
        self._changed()
        if again:
            self.review_now()

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change(self)
            except Exception:  # noqa: BLE001, S110 - a view's failure never stops the reviewer
                pass

    def status(self) -> dict:
        """``{state, target, focus, paused, generation, error, unread, latest}``."""
        with self._lock:
            return {"state": self.state, "target": self.target, "focus": self.focus, "paused": self.paused,
                    "generation": self.generation, "error": self.error, "unread": self.unread,
                    "latest": self.latest}


def _default_client(timeout: float) -> ChatClient:
    from ..llm import ChatClient

    return ChatClient(timeout=timeout)  # the review's own timeout bounds the request, not the client's 60 s


def reviewer_config() -> tuple[dict, list[str]]:
    """The ``[reviewer]`` table of the settings (:class:`~dsh_notebook.settings.ReviewerSettings`)
    as Reviewer arguments, and its problems: a value out of range (or a settings file that
    cannot be read) falls back to the default, named in the returned problems."""
    try:
        table = load_settings().reviewer
    except LLMError as exc:
        return {}, [f"settings.toml cannot be read ({exc.message}); reviewer defaults are used"]
    return ({"timeout": table.timeout, "poll": table.poll, "debounce": table.debounce, "max_chars": table.window_chars,
             "hide_unverified": table.hide_unverified}, list(table.problems))
