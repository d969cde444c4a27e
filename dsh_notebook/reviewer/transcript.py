"""The shape every transcript source produces (spec: reviewer.md "Targets", "A review").

A conversation is read into numbered :class:`Utterance` items: the turn number goes up by one
at each user utterance, and the marker is the speaker's letter and the turn (``U3`` the
user's words in turn 3, ``A3`` the AI's, ``T3`` a tool's output), as the reviewer model
sees them. Each item keeps a stable ``key`` pointing back into its file (``line:17``,
``seq:2041``, ``message:<id>``), so evidence can be traced to the log.

:class:`Conversation` is one entry of a source's listing: id, title, times and message
counts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

SPEAKERS = {"user": "U", "assistant": "A", "tool": "T"}


@dataclass(frozen=True)
class Utterance:
    """One numbered utterance: ``marker`` (``U3``/``A3``/``T3``), ``speaker`` (``user``,
    ``assistant`` or ``tool``), ``turn`` (from 1; 0 for anything before the first user
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


def counts(utterances: list[Utterance]) -> tuple[int, int]:
    """``(user messages, AI messages)``."""
    return (sum(1 for u in utterances if u.speaker == "user"), sum(1 for u in utterances if u.speaker == "assistant"))
