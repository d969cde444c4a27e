"""The shape every transcript source produces (spec: reviewer.md "Targets", "A review").

A conversation is read into numbered :class:`Utterance` items: the turn number goes up by one
at each user utterance, and the marker is the speaker's letter and the turn (``U3`` the
user's words in turn 3, ``A3`` the AI's, ``T3`` a tool's output, ``N3`` a note: a label the
reader puts where the log holds something that is neither side's words, such as a compaction
summary, a sub-agent's work or a history replayed on resume), as the reviewer model sees them. Each item keeps a stable ``key`` pointing back into its file (``line:17``,
``seq:2041``, ``message:<id>``), so evidence can be traced to the log.

:class:`Conversation` is one entry of a source's listing: id, title, times and message
counts.

The small text helpers every source shares live here too, so that the sources cut titles
and tool output, write times and show tool calls the same way: :func:`short_title`,
:func:`cut`, :func:`clip`, :func:`iso_utc`, :func:`modified_utc`, :func:`loads_lenient`,
:func:`arguments_text` and :func:`tool_text`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

SPEAKERS = {"user": "U", "assistant": "A", "tool": "T", "note": "N"}
#: What a ``note`` utterance is: a label the reader adds where the log's own tool wrote
#: something that is neither side's words (a compaction summary, a sub-agent's transcript, a
#: history replayed when a thread was resumed or forked). Its text starts with a bracketed
#: label (:func:`note_text`); it never starts a turn and is not counted as a message.
NOTE_LABELS = ("replayed history", "forked", "compacted history", "compaction summary", "sub-agent")
#: Longest listing title (a first prompt used as the title is cut to this).
TITLE_CHARS = 80
#: Longest tool output shown in a tool utterance before the rest is left out with a note.
TOOL_CHARS = 2000
#: Longest call line (the arguments after ``name:``) shown in a tool utterance.
ARGS_CHARS = 300
#: Epoch values at or above this magnitude are milliseconds, below it seconds (see
#: :func:`iso_utc`): 1e11 seconds is the year 5138, 1e11 milliseconds is 3 March 1973.
EPOCH_MS_FROM = 1e11


@dataclass(frozen=True)
class Utterance:
    """One numbered utterance: ``marker`` (``U3``/``A3``/``T3``/``N3``), ``speaker`` (``user``,
    ``assistant``, ``tool`` or ``note``), ``turn`` (from 1; 0 for anything before the first user
    utterance), ``text`` and the source ``key``."""

    marker: str
    speaker: str
    turn: int
    text: str
    key: str

    def as_dict(self) -> dict:
        return {"marker": self.marker, "speaker": self.speaker, "turn": self.turn, "text": self.text}


@dataclass
class Conversation:
    """One conversation a source holds: ``source`` (``notebook``, ``dsh``, ``codex``,
    ``claude`` or ``chat``), ``id``, ``path``, ``title``, ``started``/``updated`` (ISO 8601
    UTC or ``None``), ``user_messages`` and ``ai_messages``."""

    source: str
    id: str
    path: Path
    title: str
    started: str | None
    updated: str | None
    user_messages: int
    ai_messages: int

    def as_dict(self) -> dict:
        d = asdict(self)
        d["path"] = str(self.path)
        return d


def number(items: list[tuple[str, str, str]]) -> list[Utterance]:
    """Number ``(speaker, text, key)`` items in order. Empty texts are dropped; consecutive
    items keep their own markers (two ``A3`` items are two utterances of the same turn)."""
    out: list[Utterance] = []
    turn = 0
    for speaker, text, key in items:
        if speaker not in SPEAKERS:
            raise ValueError(f"unknown speaker {speaker!r}; speakers are {', '.join(SPEAKERS)}")
        if not text or not text.strip():
            continue
        if speaker == "user":
            turn += 1
        out.append(Utterance(f"{SPEAKERS[speaker]}{turn}", speaker, turn, text, key))
    return out


def note_text(label: str, text: str = "") -> str:
    """A note's text: ``[label] text`` (``label`` one of :data:`NOTE_LABELS`)."""
    return f"[{label}] {text}".rstrip()


def counts(utterances: list[Utterance]) -> tuple[int, int]:
    """``(user messages, AI messages)``."""
    return (sum(1 for u in utterances if u.speaker == "user"), sum(1 for u in utterances if u.speaker == "assistant"))


# --- shared text helpers -----------------------------------------------------------------


def short_title(text: str | None, limit: int = TITLE_CHARS) -> str:
    """``text`` as a one-line title: whitespace runs collapsed to one space, cut to ``limit``
    characters, trailing space removed; ``""`` for ``None`` or blank text."""
    return " ".join((text or "").split())[:limit].rstrip()


def cut(text: str, limit: int = TOOL_CHARS) -> str:
    """``text`` cut to ``limit`` characters, with a note on its own line saying how much was
    left out (``[… 1,234 more characters not shown]``); unchanged when it fits."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… {len(text) - limit:,} more characters not shown]"


def clip(text: str, limit: int) -> str:
    """``text`` on one line (whitespace runs collapsed to one space), cut to ``limit``
    characters and ending in `` […]`` when it was longer."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " […]"


def iso_utc(value: object) -> str | None:
    """A time as ISO 8601 UTC with milliseconds and ``Z`` (``2026-08-16T17:36:49.409Z``), so
    that the strings of every source sort as times.

    ``value`` is an epoch number or an ISO 8601 string. An epoch number is taken as
    milliseconds when its magnitude is at least :data:`EPOCH_MS_FROM` (``1e11``) and as
    seconds below it: every time from 3 March 1973 to the year 5138 reads right in either
    unit. An ISO string without a zone is taken as UTC; one with a zone is converted.
    ``None`` for anything else (``bool``, unreadable strings, out-of-range numbers)."""
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            seconds = value / 1000 if abs(value) >= EPOCH_MS_FROM else float(value)
            when = datetime.fromtimestamp(seconds, tz=UTC)
        elif isinstance(value, str):
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))  # noqa: FURB162 - reads 2024-01-01Z too
            when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def modified_utc(path: Path) -> str | None:
    """The file's modification time as :func:`iso_utc` writes it (the fallback ``updated``
    of a log whose lines carry no time); ``None`` when the file cannot be read."""
    try:
        return iso_utc(path.stat().st_mtime)
    except OSError:
        return None


def loads_lenient(text: object) -> object:
    """The JSON value of ``text``, or ``None`` when it is not a string, is blank or does not
    parse (a torn last line, a damaged one, nesting too deep)."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def arguments_text(arguments: object) -> str:
    """Call arguments for reading: an object (or JSON text of one) as ``key=value; ...`` with
    string values unquoted and others as JSON; a list (or JSON text of one) or another value
    as JSON; any other string (free-form input, text that is not JSON) as it is; ``None`` as
    ``""``."""
    value = loads_lenient(arguments) if isinstance(arguments, str) else arguments
    if isinstance(arguments, str) and not isinstance(value, (dict, list)):
        return arguments
    if isinstance(value, dict):
        return "; ".join(
            f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}" for k, v in value.items()
        )
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def tool_text(name: object, arguments: object, output: str, failed: bool = False) -> str:
    """A tool utterance as every source writes one: the call on the first line, ``name``
    (``tool`` when empty) then ``: `` and :func:`arguments_text` clipped to
    :data:`ARGS_CHARS` (no ``:`` when there are no arguments; a source that builds its own
    call line passes it as ``name`` with ``arguments=None``), then the output stripped and
    :func:`cut` to :data:`TOOL_CHARS` with a note, ``(no output)`` when empty, prefixed
    ``(error) `` when the tool failed."""
    head = str(name or "tool")
    args = arguments_text(arguments)
    if args.strip():
        head += ": " + clip(args, ARGS_CHARS)
    body = cut(output.strip()) or "(no output)"
    return f"{head}\n{'(error) ' if failed else ''}{body}"
