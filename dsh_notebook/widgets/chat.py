"""The live view of a ``%%chat`` turn (spec: llm.md "``%%chat``").

While a turn runs, the answer streams into an ipywidgets view with a stop button (heard
while the cell runs: see :meth:`ChatView._hear_clicks_while_busy`); reasoning and every tool
call appear as collapsible cards. When the turn ends the view shrinks to a
one-line summary with the tool cards, and the magic emits the answer as a plain
``display_data`` (the view's updates are comm messages, which nbval ignores). The view's
``text/plain`` fallback is a fixed sentence, so a notebook showing it compares equal under
nbval (public case P14).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from .templating import render


def _card(accent: str, summary: str, body: str) -> str:
    """A collapsible card (a tool call and its result, or the reasoning), every text escaped."""
    return render("chat.html.j2", part="card", accent=accent, summary=summary, body=body)


def _status(title: str, state: str) -> str:
    return render("chat.html.j2", part="status", title=title, state=state)


def _short(obj: object, limit: int = 400) -> str:
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


class ChatView(W.VBox):
    """``ChatView(title)``: ``.cancel`` is the :class:`threading.Event` the stop button sets;
    ``add_text``/``add_reasoning`` take streamed pieces, ``on_event`` takes session-log
    events (tool calls and results become cards), ``refresh()`` pushes what arrived to the
    front end, ``finish(summary)`` collapses the view."""

    def __init__(self, title: str):
        self.cancel = threading.Event()
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._cards: dict[str, dict[str, Any]] = {}
        self._order: list[str] = []
        self._dirty = False
        self._lock = threading.Lock()
        self._status = W.HTML(_status(title, "waiting for the model…"))
        self._stop = W.Button(description="Stop", icon="stop", button_style="warning",
                              tooltip="Stop this turn (the log records it as cancelled)",
                              layout=W.Layout(width="auto"))
        self._stop.on_click(lambda _b: self.stop())
        self.hears_stop = self._hear_clicks_while_busy()
        self._think = W.HTML("")
        self._tools = W.HTML("")
        self._answer = W.HTML("")
        self._title = title
        super().__init__([W.HBox([self._status, self._stop]), self._think, self._tools, self._answer],
                         layout=W.Layout(border="1px solid #d0d7de", padding="4px 8px"))

    def __repr__(self) -> str:  # the text/plain fallback: fixed, so nbval compares it
        return "[live view of this chat turn; the answer follows]"

    def _hear_clicks_while_busy(self) -> bool:
        """Let a click on Stop reach us while the cell still runs.

        The kernel handles widget messages on its main thread only between cells. ipykernel
        7 first reads every comm message on its shell-channel thread to choose the subshell
        that handles it (``BaseComm._reply_subshell_for``); the stop button's comm looks at
        the message there, and a click sets :attr:`cancel` at once. Elsewhere (ipykernel 6,
        a terminal) interrupting the kernel is the way to stop. Returns whether it applies.
        """
        comm = getattr(self._stop, "comm", None)
        route = getattr(comm, "_reply_subshell_for", None)
        if comm is None or route is None:
            return False

        def hear(data: object, default: object, _route: Callable[[object, object], object] = route,
                 _cancel: threading.Event = self.cancel) -> object:
            if isinstance(data, dict) and data.get("method") == "custom" and \
                    isinstance(data.get("content"), dict) and data["content"].get("event") == "click":
                _cancel.set()
            return _route(data, default)

        comm._reply_subshell_for = hear
        return True

    # ------------------------------------------------------------ input (any thread)

    def stop(self) -> None:
        self.cancel.set()
        self._stop.disabled = True
        self._stop.description = "Stopping…"

    @property
    def stopping(self) -> bool:
        """The Stop button has been pressed (or :meth:`stop` called): the view shows "Stopping…"."""
        return bool(self._stop.disabled)

    @property
    def text(self) -> str:
        """The answer streamed so far (the pieces given to :meth:`add_text`, joined)."""
        with self._lock:
            return "".join(self._text)

    def add_text(self, piece: str) -> None:
        with self._lock:
            self._text.append(piece)
            self._dirty = True

    def add_reasoning(self, piece: str) -> None:
        with self._lock:
            self._reasoning.append(piece)
            self._dirty = True

    def on_delta(self, kind: str, piece: str) -> None:
        (self.add_reasoning if kind == "reasoning" else self.add_text)(piece)

    def on_event(self, event: dict[str, Any]) -> None:
        t = event.get("type")
        with self._lock:
            if t == "tool/call":
                key = event.get("id") or str(len(self._order))
                self._cards[key] = {"name": event.get("name", "?"), "args": event.get("arguments", ""), "result": None}
                self._order.append(key)
            elif t == "tool/result" and event.get("id") in self._cards:
                self._cards[event["id"]]["result"] = (bool(event.get("ok")), event.get("content"))
            elif t == "step/start":
                self._text.clear()  # a new step's answer replaces the tool-calling step's text
            else:
                return
            self._dirty = True

    # ------------------------------------------------------------ output (the kernel's main thread)

    def _cards_html(self) -> str:
        out = []
        for key in self._order:
            c = self._cards[key]
            args = c["args"]
            try:
                args = json.dumps(json.loads(args), ensure_ascii=False)
            except (TypeError, ValueError):
                pass
            res = c["result"]
            if res is None:
                accent, mark, body = "#9e9e9e", "…", _short(args)
            else:
                ok, content = res
                if isinstance(content, dict) and content.get("ok") is False:
                    ok = False
                accent, mark = ("#2e7d32", "✓") if ok else ("#c62828", "✗")
                body = f"{_short(args)}\n→ {_short(content)}"
            out.append(_card(accent, f"{mark} {c['name']}", body))
        return "".join(out)

    def refresh(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            self._dirty = False
            text, reasoning = "".join(self._text), "".join(self._reasoning)
            cards = self._cards_html()
        if reasoning:
            self._think.value = _card("#6a1b9a", "reasoning", reasoning[-4000:])
        self._tools.value = cards
        self._answer.value = render("chat.html.j2", part="answer", text=text)
        if text or cards:
            self._status.value = _status(self._title, "answering…")

    def finish(self, summary: str) -> None:
        self._dirty = True
        self.refresh()
        self._status.value = _status(self._title, summary)
        self._stop.layout.display = "none"
        self._answer.value = ""  # the answer itself is the cell's display_data below
