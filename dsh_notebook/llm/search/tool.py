"""The ``search`` agent tool of the ``reckoner-with-search`` preset: its schema, its
description for the model, and the call into :func:`~.pipeline.lookup` (spec: llm.md "Presets
from the reckoner seed"; upstream-facts.md 3.13).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ...errors import LLMError
from ...settings import load_settings
from ..agent import Tool
from ..client import ChatClient
from .pipeline import lookup
from .policy import SearchPolicy
from .providers import provider_from_settings
from .shapes import SearchProvider

if TYPE_CHECKING:
    from ...reckoner.engine import Engine

_log = logging.getLogger(__name__)

SEARCH_PARAMETERS = {"type": "object", "properties": {"question": {"type": "string", "minLength": 1}},
                     "required": ["question"], "additionalProperties": False}

SEARCH_DESCRIPTION = (
    "Look up one fact you do not have (a material property, a standard value, device data) in "
    "allowed reference sources. Ask one plain question, as you would ask a colleague; you get back "
    "one short answer text (and its origin), or a failure with a code. Never ask it to compute, "
    "convert, round or derive anything, or for something the record already holds. Store the "
    "answer's number with set, copying number and unit exactly. If it finds nothing, the quantity "
    "is missing."
)


def search_tool(engine: Engine, client: ChatClient, policy: SearchPolicy | None = None,
                provider: SearchProvider | None = None) -> Tool:
    """The ``search`` agent tool on ``engine`` (arguments ``{"question": text}``).

    With ``policy``/``provider`` left ``None`` both are read from ``settings.toml`` at every
    call, so a settings change takes effect on the next lookup (an unreadable settings file
    falls back to ``client.settings``). The tool's result is :func:`~.pipeline.lookup`'s receipt.
    """

    def run(args: dict[str, Any]) -> dict[str, Any]:
        settings = None
        if policy is None or provider is None:
            try:
                settings = load_settings()
            except LLMError as exc:
                _log.warning("search: settings.toml is unreadable (%s); using the chat client's settings", exc)
                settings = client.settings
        pol = policy if policy is not None else SearchPolicy.from_settings(settings)
        if provider is not None:
            return lookup(engine, args["question"], client=client, policy=pol, provider=provider)
        own = provider_from_settings(settings)  # made for this call, closed after it
        try:
            return lookup(engine, args["question"], client=client, policy=pol, provider=own)
        finally:
            if own is not None:
                own.close()

    return Tool("search", SEARCH_DESCRIPTION, SEARCH_PARAMETERS, run)
