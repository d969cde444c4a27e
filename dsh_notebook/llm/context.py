"""Fitting the history to the model's context window (issue 19 "The context window is used").

Before each request the messages are fitted to ``context_window`` minus the output budget by
leaving out whole oldest turns: a turn is a user message and everything after it up to the
next user message, so a tool result never goes without its call and an assistant message
never without the ``reasoning_content`` its provider requires. The leading system messages and
the current turn are always sent.

Token counts are estimated, with no download (tiktoken's encodings are not reachable
offline): a CJK character or other non-Latin ideograph counts one token, other text one token
per four UTF-8 bytes, and each message four tokens of framing. The estimate is multiplied by a
``scale`` the client corrects from the prompt tokens the provider reports.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

__all__ = ["Fit", "estimate_tokens", "fit_messages", "message_tokens"]

_WIDE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f]")
_FRAME = 4  # tokens of framing per message (role, separators)


def estimate_tokens(text: str) -> int:
    """Tokens in ``text``, estimated (see the module docstring)."""
    if not text:
        return 0
    wide = len(_WIDE.findall(text))
    rest = len(text.encode("utf-8", "replace")) - 3 * wide
    return wide + math.ceil(max(rest, 0) / 4)


def message_tokens(message: dict) -> int:
    """The estimated tokens of one chat message (its text, tool calls and reasoning sent back)."""
    n = _FRAME
    content = message.get("content")
    if isinstance(content, str):
        n += estimate_tokens(content)
    elif content is not None:
        n += estimate_tokens(json.dumps(content, ensure_ascii=False))
    for key in ("reasoning_content", "tool_call_id"):
        if isinstance(message.get(key), str):
            n += estimate_tokens(message[key])
    if message.get("tool_calls"):
        n += estimate_tokens(json.dumps(message["tool_calls"], ensure_ascii=False))
    return n


@dataclass
class Fit:
    """What fitting did: the ``messages`` to send, how many whole turns and messages were left
    out, the estimated tokens sent and left out, and whether the current turn alone is over the
    budget (``over``)."""

    messages: list[dict]
    dropped_turns: int = 0
    dropped_messages: int = 0
    dropped_tokens: int = 0
    tokens: int = 0
    budget: int = 0
    over: bool = False


def fit_messages(messages: list[dict], budget: int, scale: float = 1.0, fixed: int = 0) -> Fit:
    """``messages`` fitted to ``budget`` tokens (``fixed`` of them already taken by tool
    schemas and the like), leaving out whole oldest turns (see the module docstring)."""
    head = 0
    while head < len(messages) and messages[head].get("role") == "system":
        head += 1
    starts = [i for i in range(head, len(messages)) if messages[i].get("role") == "user"]
    cost = [message_tokens(m) * scale for m in messages]
    total = sum(cost) + fixed
    if total <= budget or len(starts) < 2:
        return Fit(list(messages), tokens=math.ceil(total), budget=budget, over=total > budget)
    # turns before the current one: [starts[k], starts[k+1]); anything between the system
    # messages and the first user message goes with the first turn
    bounds = [head] + starts[1:]
    cut = head
    dropped = 0
    for k in range(len(bounds) - 1):
        if total <= budget:
            break
        lo, hi = bounds[k], bounds[k + 1]
        total -= sum(cost[lo:hi])
        cut = hi
        dropped += 1
    kept = messages[:head] + messages[cut:]
    return Fit(kept, dropped_turns=dropped, dropped_messages=cut - head,
               dropped_tokens=math.ceil(sum(cost[head:cut])), tokens=math.ceil(total), budget=budget,
               over=total > budget)
