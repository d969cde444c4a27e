"""Academic mode's pre-delivery gate (spec: academic.md "The gate"; upstream-facts.md 2.3).

At the end of a turn, while the switch is on, a reply of at least :data:`MIN_CHARS`
characters (Python ``len`` of the reply text, code points; reasoning text not counted) is
sent back once when no assistant message of this turn has a verification-log section and
the reply does not carry the escape line. The steering text is logged as a ``notice`` with
``kind: academic-switch``, ``form: notice`` (never as user input); at most once per session
per turn (the agent runs each stop hook once per turn); cancelled turns never reach it.

A section counts when the heading ``核查记录`` or ``Verification log`` (English in any case)
is a Markdown heading of any level (ATX ``#`` .. ``######`` or setext), a bold line, or a
line ending with a colon. The gate checks that the section exists, not what it says.
"""

from __future__ import annotations

import re

from . import prompt
from .shaping import language_for
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


def has_verification_log(text: str) -> bool:
    """Whether ``text`` has a section headed 核查记录 / Verification log (see the module)."""
    lines = (text or "").replace("\r\n", "\n").split("\n")
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
    for line in (text or "").split("\n"):
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


def academic_gate(turn_events: list[dict], answer: str) -> str | None:
    """The stop hook: the steering notice, or ``None`` to let the turn end."""
    if not is_enabled() or not needs_log(turn_events, answer):
        return None
    record_gate()
    return prompt.GATE_NOTICE[language_for(answer)]


academic_gate.kind = KIND  # the agent logs the notice under this source kind
