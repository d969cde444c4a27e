"""Text that a lookup stores or sends is made safe first (spec: llm.md "Presets from the reckoner
seed"): strict UTF-8 (a lone surrogate from a provider's JSON becomes U+FFFD, so a row is never
lost to a stray ``\\ud800``) and cut to a cap with "…".
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_safe(text: str) -> str:
    """``text`` as strict UTF-8 can hold it: a valid surrogate pair becomes its character, a
    lone surrogate U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def json_safe(value: Any) -> Any:
    """``value`` with every text (keys too) passed through :func:`utf8_safe`; lists, tuples and
    dicts are rebuilt, anything else is kept."""
    if isinstance(value, str):
        return utf8_safe(value)
    if isinstance(value, dict):
        return {(utf8_safe(k) if isinstance(k, str) else k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def cut_text(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its start ending in "…"."""
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"
