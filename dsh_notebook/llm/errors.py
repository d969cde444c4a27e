"""The model client's failure vocabulary (spec: llm.md "Providers and models")."""

from __future__ import annotations

MISSING_CREDENTIAL = "MISSING_CREDENTIAL"
UNKNOWN_MODEL = "UNKNOWN_MODEL"
HTTP_STATUS = "HTTP_STATUS"
TIMEOUT = "TIMEOUT"
PROTOCOL = "PROTOCOL"
CANCELLED = "CANCELLED"
BUDGET = "BUDGET"
SETTINGS = "SETTINGS"

CODES = (MISSING_CREDENTIAL, UNKNOWN_MODEL, HTTP_STATUS, TIMEOUT, PROTOCOL, CANCELLED, BUDGET, SETTINGS)


class LLMError(Exception):
    """A model call failed: ``code`` is one of :data:`CODES`; ``status`` is the HTTP status
    for ``HTTP_STATUS``. Messages never contain a key."""

    def __init__(self, code: str, message: str, status: int | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"
