"""Model access (spec: llm.md): settings, the provider-neutral ``ChatClient`` over httpx and a
scripted test server. Never imports IPython."""

from .client import ChatClient, ChatResult, ToolCall
from .errors import CODES, LLMError
from .settings import ModelInfo, Provider, Settings, load_settings

__all__ = ["CODES", "ChatClient", "ChatResult", "LLMError", "ModelInfo", "Provider", "Settings", "ToolCall",
           "load_settings"]
