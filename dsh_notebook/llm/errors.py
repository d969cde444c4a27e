"""The model client's failure vocabulary (spec: llm.md "Providers and models").

:class:`LLMError` and its codes are defined in :mod:`dsh_notebook.errors` (the settings, a base
layer, raise them too); this module is where the model client's code imports them from.
"""

from __future__ import annotations

from ..errors import (
    BUDGET,
    CANCELLED,
    HTTP_STATUS,
    MISSING_CREDENTIAL,
    PROTOCOL,
    SETTINGS,
    TIMEOUT,
    UNKNOWN_MODEL,
    LLMError,
    SettingsError,
)
from ..errors import LLM_CODES as CODES

__all__ = ["BUDGET", "CANCELLED", "CODES", "HTTP_STATUS", "MISSING_CREDENTIAL", "PROTOCOL", "SETTINGS", "TIMEOUT",
           "UNKNOWN_MODEL", "LLMError", "SettingsError"]
