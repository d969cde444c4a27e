"""Academic mode's pre-delivery gate (spec: academic.md "The gate"; upstream-facts.md 2.3).

At the end of a turn, while the switch is on, a reply of at least :data:`MIN_CHARS`
characters (Python ``len`` of the reply text, code points; reasoning text not counted) is
sent back once when no assistant message of this turn has a verification-log section and
the reply does not carry the escape line. The steering text is logged as a ``notice`` with
``kind: academic-switch``, ``form: notice`` (never as user input); at most once per session
per turn (the agent runs each stop hook once per turn); cancelled turns never reach it.

A section counts when the heading ``核查记录`` or ``Verification log`` (English in any case)
is a Markdown heading of any level (ATX ``#`` .. ``######`` or setext), a bold line, or a
line ending with a colon, outside fenced code and HTML comments. The gate checks that the
section exists, not what it says. The notice is written in the language of the academic
sections (the setting, else the script of the user's message).
"""

from __future__ import annotations

import re

from ..errors import LLMError
from . import prompt
from .shaping import language_for, language_setting
from .state import is_enabled, record_gate

MIN_CHARS = 600
KIND = "academic-switch"

_NAMES = r"(?:核查记录|(?i:verification\s+log))"
_COLON = r"\s*[:：]?"
_ATX = re.compile(rf"^\s{{0,3}}#{{1,6}}\s+{_NAMES}{_COLON}\s*#*\s*$")
_BOLD = re.compile(rf"^\s*(?:\*\*|__){_NAMES}{_COLON}(?:\*\*|__){_COLON}\s*$")
_COLON_LINE = re.compile(rf"^\s*{_NAMES}\s*[:：]\s*$")
_PLAIN = re.compile(rf"^\s*{_NAMES}\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")


_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def visible_lines(text: str) -> list[str]:
    """The lines a reader sees as text: without HTML comments and without the lines inside
    fenced code blocks (a heading there is not a section)."""
    out: list[str] = []
    fence = False
    for line in _COMMENT.sub("", (text or "").replace("\r\n", "\n")).split("\n"):
        if _FENCE.match(line):
            fence = not fence
            out.append("")
            continue
        out.append("" if fence else line)
    return out


def has_verification_log(text: str) -> bool:
    """Whether ``text`` has a section headed 核查记录 / Verification log (see the module);
    lines in fenced code and HTML comments do not count."""
    lines = visible_lines(text)
    for i, line in enumerate(lines):
        if _ATX.match(line) or _BOLD.match(line) or _COLON_LINE.match(line):
            return True
        if _PLAIN.match(line) and i + 1 < len(lines) and _SETEXT.match(lines[i + 1]):
            return True
    return False


def is_escape(text: str) -> bool:
    """Whether a line of ``text`` is the escape sentence (本条无需核查记录 / "No verification
    log needed for this reply", English in any case, an end stop allowed)."""
    wanted = {s.casefold() for s in prompt.ESCAPE_LINES.values()}
    for line in visible_lines(text):
        core = line.strip().strip("*_").strip().rstrip(".。").strip()
        if core.casefold() in wanted:
            return True
    return False


def needs_log(turn_events: list[dict], answer: str) -> bool:
    """The gate's condition, without the switch: a long answer, no log in the turn, no escape."""
    if len(answer or "") < MIN_CHARS:
        return False
    texts = [e.get("text") or "" for e in turn_events if e.get("type") == "assistant/message"] + [answer]
    return not any(has_verification_log(t) for t in texts) and not is_escape(answer)


class AcademicGate:
    """The stop hook, ``academic_gate(turn_events, answer)``: the steering notice, or ``None`` to
    let the turn end. The notice is in the language of the academic sections: ``[academic]
    language``, else the script of the user's message in this turn. ``kind`` names the source
    the agent logs the notice under."""

    kind = KIND

    def __call__(self, turn_events: list[dict], answer: str) -> str | None:
        if not is_enabled() or not needs_log(turn_events, answer):
            return None
        record_gate()
        try:
            from ..settings import load_settings  # imported when used: %load_ext stays light (issue 22)

            setting, _ = language_setting(load_settings())
        except LLMError:
            setting = "auto"
        user = next((e.get("text") or "" for e in turn_events if e.get("type") == "user/message"), "")
        return prompt.GATE_NOTICE[language_for(user, setting)]


#: the one gate, registered as the model client's stop hook (:func:`dsh_notebook.academic.register_llm_hooks`)
academic_gate = AcademicGate()
