"""The academic-mode toggle (spec: academic.md "State and surface", the look of
upstream-facts.md 2.1).

``AcademicToggle()`` is an ipywidgets toggle button on the shared state file
(``$DSH_NOTEBOOK_HOME/academic.json``): a neutral outline when off, a dark-blue gradient when
on (JupyterLab theme colours, so the dark theme works); its tooltip shows the last shaped request (``applied``) and the gate count. Clicking it
switches the mode for every model call of the kernel from the next request on; errors of the
click show in the widget's ``Output``. It watches the file (every ``poll`` seconds, on its
mtime), so a change made by ``%academic``, the command line or the side panel shows without
a restart. Its ``text/plain`` fallback is a fixed sentence (public case P14: nbval compares
that, never the view).
"""

from __future__ import annotations

import threading
from typing import Any

import ipywidgets as W

from ..academic import state
from ..academic.payloads import AcademicStatus
from .templating import render


def style_html() -> str:
    """The toggle's ``<style>`` (an outline when off, a gradient when on), in JupyterLab theme
    colours so the dark theme works."""
    return render("academic.html.j2")


def tooltip(st: AcademicStatus) -> str:
    """The toggle's tooltip for a status object."""
    head = (f"Academic mode ({state.TITLE}) is on" if st["enabled"] else f"Academic mode ({state.TITLE}) is off")
    parts = [head]
    a = st.get("applied")
    if a:
        parts.append(f"last shaped request: {a.get('provider')}/{a.get('model')}, reasoning effort "
                     f"{a.get('reasoningEffort') or 'none'}, max_tokens {a.get('maxTokens')} ({a.get('at')})")
    n = (st.get("gate") or {}).get("count", 0)
    parts.append("delivery gate sent back no reply yet" if not n else
                 f"delivery gate sent back {n} long repl{'y' if n == 1 else 'ies'} for a verification log")
    if st.get("lastError"):
        parts.append(f"last error: {st['lastError']}")
    return " · ".join(parts)


class AcademicToggle(W.VBox):
    """``AcademicToggle(poll=1.0)``: the switch as a widget; ``.close()`` stops watching."""

    def __init__(self, poll: float = 1.0):
        if not isinstance(poll, (int, float)) or isinstance(poll, bool) or not poll > 0:
            raise ValueError(f"poll must be a positive number of seconds, not {poll!r}")
        st = state.status()
        self.button = W.ToggleButton(value=st["enabled"], description="Academic mode",  # 学术模式 in the tooltip: many systems lack a CJK font
                                     icon="graduation-cap", layout=W.Layout(width="auto"))
        self.button.add_class("dsh-academic-toggle")
        self.output = W.Output()
        self._quiet = False
        self._stop = threading.Event()
        self._poll = poll
        super().__init__([W.HTML(style_html()), self.button, self.output])
        self._show(st)
        self.button.observe(self._clicked, "value")
        self._watcher = threading.Thread(target=self._watch, name="dsh-academic-toggle", daemon=True)
        self._watcher.start()

    def __repr__(self) -> str:  # the text/plain fallback: fixed, so nbval compares it
        return "[academic mode toggle]"

    def _show(self, st: AcademicStatus) -> None:
        if st["enabled"]:
            self.button.add_class("dsh-academic-on")
        else:
            self.button.remove_class("dsh-academic-on")
        self.button.tooltip = tooltip(st)
        if self.button.value != st["enabled"]:
            self._quiet = True
            try:
                self.button.value = st["enabled"]
            finally:
                self._quiet = False

    def _clicked(self, change: dict[str, Any]) -> None:
        if self._quiet:
            return
        with self.output:
            self.output.clear_output()
            try:
                st = state.set_enabled(bool(change["new"]))
            except Exception as exc:  # noqa: BLE001 - shown in the widget; the button shows the real state
                print(f"academic mode could not be switched: {type(exc).__name__}: {exc}")
                st = state.status()
            self._show(st)

    def refresh(self) -> None:
        """Show the state file as it is now."""
        self._show(state.status())

    def _watch(self) -> None:
        path = state.state_path()
        seen = None
        while not self._stop.wait(self._poll):
            try:
                st = path.stat()
                key = (st.st_mtime_ns, st.st_size)
            except FileNotFoundError:
                key = None
            if key != seen:
                seen = key
                try:
                    self.refresh()
                except Exception as exc:  # noqa: BLE001 - shown in the widget, never lost
                    with self.output:
                        print(f"academic toggle: cannot read {path}: {exc}")

    def close(self) -> None:
        stop = getattr(self, "_stop", None)  # __del__ may run on a toggle whose __init__ refused
        if stop is not None:
            stop.set()
        super().close()
