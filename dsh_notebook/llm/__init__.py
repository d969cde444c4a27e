"""Model access (spec: llm.md): the provider-neutral ``ChatClient`` over httpx and a scripted test
server (the providers and models it reads are in :mod:`dsh_notebook.settings`). Never imports
IPython."""

from ..errors import LLM_CODES as CODES
from ..errors import LLMError
from .client import ChatClient, ChatResult, ToolCall

__all__ = ["CODES", "ChatClient", "ChatResult", "LLMError", "ToolCall"]
