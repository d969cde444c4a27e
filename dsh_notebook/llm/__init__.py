"""Model access (spec: llm.md): the provider-neutral ``ChatClient`` over httpx and a scripted test
server (the providers and models it reads are in :mod:`dsh_notebook.settings`). Never imports
IPython.

``ChatClient``, ``ChatResult`` and ``ToolCall`` are imported from :mod:`.client` when first used
(a module ``__getattr__``), so that importing a light submodule such as :mod:`.hooks` (``%load_ext``
registers academic mode's hooks there) does not import httpx and pydantic (issue 22: a fast load).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import LLM_CODES as CODES
from ..errors import LLMError

if TYPE_CHECKING:
    from .client import ChatClient, ChatResult, ToolCall

__all__ = ["CODES", "ChatClient", "ChatResult", "LLMError", "ToolCall"]

_FROM_CLIENT = ("ChatClient", "ChatResult", "ToolCall")


def __getattr__(name: str) -> Any:
    if name in _FROM_CLIENT:
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
