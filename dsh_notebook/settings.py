"""Providers, models and credentials (spec: llm.md "Providers and models").

* ``settings.toml`` in ``DSH_NOTEBOOK_HOME`` merges into the built-in ``deepseek`` provider
  key by key; models merge by ``id``. ``DEEPSEEK_BASE_URL`` overrides the built-in base URL,
  ``DSH_MODEL`` picks the default model (``provider/model`` or a bare model id).
* Validation is pydantic's: a bad file gets an error naming the field (code ``SETTINGS``).
* Keys come from the environment variable a provider names, or from ``credentials.toml`` in
  the home folder (mode 0600 required); they are never echoed or logged.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from .errors import MISSING_CREDENTIAL, UNKNOWN_MODEL, LLMError, SettingsError
from .storage import home


class ModelInfo(BaseModel):
    """One model: ``context_window`` and ``max_tokens`` (ceiling) in tokens,
    ``default_max_tokens`` sent when nothing else sets it, ``reasoning_efforts`` weakest to
    strongest (empty when none), ``input`` kinds."""

    model_config = {"extra": "forbid"}

    id: str = Field(min_length=1)
    context_window: int = Field(default=131072, gt=0)
    max_tokens: int = Field(default=8192, gt=0)
    default_max_tokens: int = Field(default=4096, gt=0)
    reasoning_efforts: list[str] = Field(default_factory=list)
    input: list[Literal["text", "image"]] = Field(default_factory=lambda: ["text"])

    @model_validator(mode="after")
    def _budget(self) -> "ModelInfo":
        if self.default_max_tokens > self.max_tokens:
            raise ValueError(f"default_max_tokens {self.default_max_tokens} exceeds max_tokens {self.max_tokens}")
        return self

    @property
    def strongest_effort(self) -> str | None:
        return self.reasoning_efforts[-1] if self.reasoning_efforts else None


class Provider(BaseModel):
    model_config = {"extra": "forbid"}

    base_url: str = Field(min_length=1)
    api_key_env: str = Field(min_length=1)
    protocol: Literal["openai-chat"] = "openai-chat"
    models: list[ModelInfo] = Field(default_factory=list)

    def model(self, model_id: str) -> ModelInfo | None:
        return next((m for m in self.models if m.id == model_id), None)


class SearchSettings(BaseModel):
    """The ``[search]`` table: the outside lookup's provider and policy (upstream-facts.md 3.13).

    Every key is optional and loosely typed on purpose: :class:`~dsh_notebook.llm.search.SearchPolicy`
    checks the values, replaces an out-of-range one by its default and reports it in
    ``problems``, so a wrong number never costs the session its settings. Unknown keys are
    kept (and reported there too). A ``search`` value that is not a table at all (``search =
    3``) never refuses the settings either: it loads as :meth:`not_a_table`, which switches
    search off and makes the policy report ``[search] must be a table``.
    """

    model_config = {"extra": "allow"}

    #: The value ``search`` held when it was not a table (``None`` for a real table).
    _not_a_table: Any = PrivateAttr(default=None)
    _is_table: bool = PrivateAttr(default=True)

    @classmethod
    def not_a_table(cls, value: Any) -> "SearchSettings":
        """The settings of a ``search`` key that holds ``value`` instead of a table."""
        s = cls()
        s._not_a_table, s._is_table = value, False
        return s

    @property
    def problem(self) -> str | None:
        """Why this ``[search]`` cannot be used as a table, or ``None``."""
        if self._is_table:
            return None
        return f"[search] must be a table, not {self._not_a_table!r} ({type(self._not_a_table).__name__})"

    provider: Any = Field(default=None, description='"searxng" or "wikipedia"; unset: searxng when searxng_url is set')
    searxng_url: Any = Field(default=None, description="base URL of a SearXNG instance with the JSON format enabled")
    wikipedia_url: Any = Field(default=None, description="base URL of a Wikipedia (default https://en.wikipedia.org)")
    tier: Any = Field(default=None, description='"strict" (allow-listed hosts only, the default) or "open"')
    allowed_hosts: Any = Field(default=None, description="host suffixes a strict lookup may read; [] allows none")
    max_results: Any = Field(default=None, description="sources asked of the provider, 1-50 (12)")
    max_searches_per_record: Any = Field(default=None, description="lookups one record may hold, 1-50 (4)")
    answer_max_chars: Any = Field(default=None, description="longest answer handed to the model, 120-10000 (1200)")
    enrich_pages: Any = Field(default=None, description="allowed pages fetched for their text, 0-10 (0)")
    enrich_chars_per_page: Any = Field(default=None, description="text kept per fetched page, 200-50000 (4000)")
    synthesis_model: Any = Field(default=None, description="model of the extraction step (default: the chat model)")
    synthesis_max_tokens: Any = Field(default=None, description="max_tokens of the extraction step, 128-8192 (800)")


class Settings(BaseModel):
    model_config = {"extra": "forbid"}

    default_model: str = "deepseek/deepseek-chat"
    providers: dict[str, Provider] = Field(default_factory=dict)
    search: SearchSettings | None = None
    #: the ``[academic]`` table as written (academic mode checks it and reports a bad value
    #: in ``lastError``; it never stops a request)
    academic: Any = None
    #: the ``[reviewer]`` table as written: ``timeout``, ``poll``, ``debounce`` (seconds),
    #: ``window_chars``, ``hide_unverified`` (checked by the reviewer; a bad value is reported)
    reviewer: Any = None
    #: the ``[research]`` table as written (the research roles and the bibliographic verifier
    #: read and check their own parts)
    research: Any = None

    @field_validator("search", mode="before")
    @classmethod
    def _search_table(cls, value: Any) -> Any:
        # A wrong [search] costs the lookup, never every model call: see SearchSettings.
        if value is None or isinstance(value, (dict, SearchSettings)):
            return value
        return SearchSettings.not_a_table(value)

    def resolve(self, model: str | None = None) -> tuple[str, Provider, ModelInfo]:
        """``(provider id, provider, model)`` for ``provider/model``, a bare model id, or the
        default. Raises :class:`LLMError` ``UNKNOWN_MODEL`` listing what exists."""
        want = model or self.default_model
        if "/" in want:
            pid, mid = want.split("/", 1)
            prov = self.providers.get(pid)
            found = prov.model(mid) if prov else None
            if found:
                return pid, prov, found
        else:
            for pid, prov in self.providers.items():
                found = prov.model(want)
                if found:
                    return pid, prov, found
        known = ", ".join(f"{p}/{m.id}" for p, pr in self.providers.items() for m in pr.models) or "(none)"
        raise LLMError(UNKNOWN_MODEL, f"no model {want!r} in the settings; known models: {known}")


BUILTIN = {
    "default_model": "deepseek/deepseek-chat",
    "providers": {
        "deepseek": {
            "base_url": "https://api.deepseek.com",
            "api_key_env": "DEEPSEEK_API_KEY",
            "protocol": "openai-chat",
            "models": [
                {"id": "deepseek-chat", "context_window": 131072, "max_tokens": 8192, "default_max_tokens": 4096,
                 "reasoning_efforts": [], "input": ["text"]},
                {"id": "deepseek-reasoner", "context_window": 131072, "max_tokens": 65536,
                 "default_max_tokens": 32768, "reasoning_efforts": [], "input": ["text"]},
            ],
        }
    },
}


def _merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for key, value in extra.items():
        if key == "models" and isinstance(value, list) and isinstance(out.get("models"), list):
            by_id = {m.get("id"): dict(m) for m in out["models"] if isinstance(m, dict)}
            order = [m.get("id") for m in out["models"] if isinstance(m, dict)]
            for m in value:
                if isinstance(m, dict) and m.get("id") in by_id:
                    by_id[m["id"]] = {**by_id[m["id"]], **m}
                elif isinstance(m, dict):
                    by_id[m.get("id")] = dict(m)
                    order.append(m.get("id"))
            out["models"] = [by_id[i] for i in order]
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def load_settings(path: Path | None = None) -> Settings:
    """The built-ins merged with ``settings.toml`` and the environment. Raises
    :class:`LLMError` ``SETTINGS`` naming the file, the field and the problem."""
    path = path or home() / "settings.toml"
    data = BUILTIN
    if path.exists():
        try:
            file_data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{path} is not valid TOML: {exc}") from None
        data = _merge(BUILTIN, file_data)
    data = _merge(data, {})
    if os.environ.get("DEEPSEEK_BASE_URL") and "deepseek" in data.get("providers", {}):
        data["providers"]["deepseek"] = {**data["providers"]["deepseek"], "base_url": os.environ["DEEPSEEK_BASE_URL"]}
    if os.environ.get("DSH_MODEL"):
        data = {**data, "default_model": os.environ["DSH_MODEL"]}
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise SettingsError(f"{path}: {where}: {first['msg']}") from None


def api_key(provider_id: str, provider: Provider) -> str:
    """The provider's key from its environment variable, else ``credentials.toml`` (mode
    0600, ``[provider] api_key = ...``). Raises ``MISSING_CREDENTIAL`` naming where to put it."""
    key = os.environ.get(provider.api_key_env)
    if key:
        return key
    cred = home() / "credentials.toml"
    if cred.exists():
        mode = stat.S_IMODE(cred.stat().st_mode)
        if mode & 0o077:
            raise LLMError(MISSING_CREDENTIAL, f"{cred} is readable by others (mode {mode:o}); chmod 600 it")
        try:
            entry = tomllib.loads(cred.read_text(encoding="utf-8")).get(provider_id) or {}
        except tomllib.TOMLDecodeError as exc:
            raise LLMError(MISSING_CREDENTIAL, f"{cred} is not valid TOML ({exc.__class__.__name__})") from None
        if isinstance(entry, dict) and isinstance(entry.get("api_key"), str) and entry["api_key"]:
            return entry["api_key"]
    raise LLMError(MISSING_CREDENTIAL, f"no API key for provider {provider_id!r}: set {provider.api_key_env} or add "
                                       f"[{provider_id}] api_key = \"...\" to {cred} (mode 600)")
