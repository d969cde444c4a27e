"""The settings: one pydantic model of ``settings.toml`` and the environment (spec: llm.md
"Providers and models" and issue 19's built-in providers and capabilities; storage.md "The user-wide home"; the ``[search]``, ``[reviewer]``,
``[research]`` and ``[academic]`` tables of upstream-facts.md 3.13, reviewer.md, research.md
"Running the roles" and academic.md "What the switch changes").

* :func:`load_settings` is the only reader of ``settings.toml`` (in :func:`~dsh_notebook.storage.home`):
  built-ins < the file < the environment (``<PROVIDER>_BASE_URL`` for each built-in provider,
  ``AZURE_OPENAI_ENDPOINT`` and ``AZURE_OPENAI_API_VERSION``, ``DSH_MODEL``,
  ``DSH_CROSSREF_URL``, ``DSH_ARXIV_URL``, ``DSH_PUBMED_URL``). It reads the file once per call
  and validates only when the file's bytes or those variables changed (a small cache), so a
  rewritten file is seen at the next call. The :class:`Settings` it returns is frozen and
  shared: every feature takes its table from it (``settings.search``, ``settings.reviewer``,
  ``settings.research.tiers``, ``settings.research.bibliographic``, ``settings.academic``).
* Model access is strict: a file that is not TOML, or a provider, model or top-level key that
  fails validation, raises :class:`~dsh_notebook.errors.SettingsError` (code ``SETTINGS``, an
  ``LLMError``) naming the file, the field and the rule.
* The feature tables are lenient (:class:`Table`): a value of the wrong type or out of range is
  replaced by its default and described in the table's ``problems``, which the feature reports
  (the search tool's policy problems, the reviewer's ``config_problems``, academic mode's
  ``lastError``, the bibliographic verifier's log); a table that is not a table at all gets
  every default. A wrong feature value never costs the session its model access. The research
  router refuses its own bad values (``problems_of("budget_tokens")``, ``"tiers"``) with a
  ``SettingsError``, as it always did.
* Every field has bounds and a ``description`` (this module is the settings' reference).
* Keys come from the environment variable a provider names, or from ``credentials.toml`` in
  the home folder (mode 0600 required); they are never echoed or logged.
* URL settings are read as the search tool's strict tier reads them (:func:`host_of`,
  :func:`normalize_host_pattern`), so the settings and the tool never disagree about a host.

Imports nothing of the package but :mod:`.errors` and :mod:`.storage`.
"""

from __future__ import annotations

import math
import os
import re
import stat
import threading
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Self, cast
from urllib.parse import unquote, urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictFloat,
    StrictInt,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_validator,
)

from .errors import MISSING_CREDENTIAL, UNKNOWN_MODEL, LLMError, SettingsError
from .redact import redact_url_credentials
from .secretscan import mask
from .storage import home

__all__ = [
    "BUILTIN",
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_CAPABILITIES",
    "DEFAULT_WIKIPEDIA_URL",
    "ENVIRONMENT",
    "MAX_FILE_BYTES",
    "MODEL_PROVIDERS",
    "PROVIDERS",
    "TIERS",
    "AcademicSettings",
    "BibliographicSettings",
    "Capabilities",
    "ModelInfo",
    "ModelSpec",
    "Provider",
    "ReckonSettings",
    "ResearchSettings",
    "ReviewerSettings",
    "SearchSettings",
    "Settings",
    "Table",
    "TierSettings",
    "TiersSettings",
    "api_key",
    "default_settings",
    "host_of",
    "load_settings",
    "normalize_host_pattern",
    "parse_config",
    "read_config_file",
]

# --------------------------------------------------------------------------- hosts


def normalize_host_pattern(value: str) -> str:
    """One allow-list entry as matching uses it: trimmed, lowercase, without scheme, path,
    port or a leading ``*.``/``.`` (``"https://*.NIST.gov:443/x"`` -> ``"nist.gov"``); ``""``
    when nothing is left."""
    v = value.strip().lower().replace("\\", "/")
    v = re.sub(r"^[a-z][a-z0-9+.-]*://", "", v)
    v = re.split(r"[/?#]", v, maxsplit=1)[0]
    v = v.rsplit("@", 1)[-1]
    v = re.sub(r":\d*$", "", v)
    while v.startswith(("*.", ".")):
        v = v[2:] if v.startswith("*.") else v[1:]
    return v.rstrip(".")


_C0_AND_SPACE = "".join(chr(i) for i in range(0x21))
_IDEOGRAPHIC_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
_FORBIDDEN_HOST = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")


def host_of(url: str) -> str | None:
    """The lowercase host of an ``http``/``https`` URL as a browser reads it, without port or
    trailing dot; ``None`` for any other scheme (``ftp://``, ``mailto:``...) or a URL that
    cannot be read.

    As in the WHATWG URL standard for http(s): leading and trailing controls and spaces are
    dropped and tabs/newlines removed; a backslash is a path separator (so
    ``https://evil.com\\@en.wikipedia.org/`` is on ``evil.com``, the path being
    ``/@en.wikipedia.org/``); the authority ends at the first ``/``, ``\\``, ``?`` or ``#``,
    and userinfo (up to its last ``@``) is ignored; the host is percent-decoded; ideographic
    full stops count as dots; a port must be a number up to 65535."""
    if not isinstance(url, str):
        return None
    u = re.sub(r"[\t\n\r]", "", url.strip(_C0_AND_SPACE))
    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", u)
    if m is None or m.group(1).lower() not in ("http", "https"):
        return None
    rest = u[m.end():].replace("\\", "/").lstrip("/")
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        host, bracket, port = hostport[1:].partition("]")
        if not bracket or not re.fullmatch(r"[0-9A-Fa-f:.]+", host) or (port and not port.startswith(":")):
            return None
        port = port[1:]
    else:
        host, _, port = hostport.partition(":")
        try:
            host = unquote(host, errors="strict")
        except UnicodeDecodeError:
            return None
        host = host.translate(_IDEOGRAPHIC_DOTS)
        if _FORBIDDEN_HOST.search(host):
            return None
    if port and (not port.isascii() or not port.isdigit() or int(port) > 65535):
        return None
    host = host.lower().rstrip(".")
    return host or None


def _is_http_url(value: Any) -> bool:
    """``value`` is an http(s) URL with a host (as :func:`host_of` reads it)."""
    return isinstance(value, str) and urlsplit(value.strip()).scheme in ("http", "https") and bool(host_of(value))


def _http_url(value: str) -> str:
    if not _is_http_url(value):
        raise ValueError("not an http(s) URL with a host")
    return value


_HttpUrl = Annotated[str, Field(strict=True), AfterValidator(_http_url)]


# --------------------------------------------------------------------------- providers and models


TokenParam = Literal["max_tokens", "max_completion_tokens"]
ReasoningField = Literal["reasoning_content", "reasoning", "reasoning_details"]


class Capabilities(BaseModel):
    """How a provider's wire differs from OpenAI's, per model (issue 19; the key names are
    binding). Every key is optional: a model's table overrides its provider's, which
    overrides :data:`DEFAULT_CAPABILITIES`; :meth:`Settings.capabilities` gives the whole.

    ``token_param``: the field the output limit goes out as (OpenAI's reasoning families
    refuse ``max_tokens`` with HTTP 400). ``reasoning_fields``: the delta and message fields
    reasoning is read from, first present wins. ``reasoning_passback``: ``after-tool-calls``
    sends an assistant message's ``reasoning_content`` back in every later request once the
    model made tool calls in that user turn (DeepSeek's thinking-mode rule, api-docs.deepseek.com
    guides/thinking_mode "Tool Calls"). ``stream_tools``: false when the server cannot stream
    tool calls (such steps go out without streaming). ``tool_id``: ``alnum9`` when tool-call ids
    must be 9 letters or digits (Mistral). ``effort``: ``none`` when the provider takes no
    ``reasoning_effort``. ``tool_choice``: ``auto`` to say ``tool_choice: "auto"`` whenever
    tools go out (llama-cpp-python's server calls no tool unless asked so; OpenAI's default
    already is ``auto``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    token_param: TokenParam | None = Field(None, description="max_tokens or max_completion_tokens")
    reasoning_fields: list[ReasoningField] | None = Field(
        None, description="fields reasoning arrives in: reasoning_content, reasoning, reasoning_details")
    reasoning_passback: Literal["none", "after-tool-calls"] | None = Field(
        None, description="after-tool-calls: send reasoning_content back once the model made tool calls")
    stream_tools: bool | None = Field(None, description="false when tool-call steps must go out unstreamed")
    tool_id: Literal["any", "alnum9"] | None = Field(None, description="alnum9: tool-call ids of 9 letters/digits")
    effort: Literal["reasoning_effort", "none"] | None = Field(None, description="none: never send reasoning_effort")
    tool_choice: Literal["default", "auto"] | None = Field(
        None, description="auto: send tool_choice \"auto\" with tools (llama-cpp-python uses no tool without it)")

    def over(self, base: Capabilities) -> Capabilities:
        """These capabilities, with every key left unset taken from ``base``."""
        return base.model_copy(update={k: v for k, v in self if v is not None})


#: What a provider that says nothing is assumed to do (OpenAI's chat completions).
DEFAULT_CAPABILITIES = Capabilities(token_param="max_tokens",
                                    reasoning_fields=["reasoning_content", "reasoning", "reasoning_details"],
                                    reasoning_passback="none", stream_tools=True, tool_id="any",
                                    effort="reasoning_effort", tool_choice="default")

#: OpenAI's reasoning families (o1, o3, o4..., gpt-5 and later), declared or not, under any
#: provider prefix (``openai/o3`` at OpenRouter): they take ``max_completion_tokens``.
OPENAI_REASONING = re.compile(r"(?:^|/)(?:o[1-9][0-9]*|gpt-(?:[5-9]|[1-9][0-9]+))(?![0-9])(?:[-.:_][^/]*)?$")


class ModelSpec(BaseModel):
    """A model's limits and capabilities without its id: ``context_window`` and
    ``max_tokens`` (ceiling) in tokens, ``default_max_tokens`` (the output limit academic mode
    asks for; a request without one leaves the provider's own),
    ``reasoning_efforts`` weakest to strongest (empty when none), ``input`` kinds, and the
    ``capabilities`` that differ from its provider's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    context_window: int = Field(default=131072, gt=0, description="tokens the model reads at most")
    max_tokens: int = Field(default=8192, gt=0, description="the most tokens a reply may ask for (ceiling)")
    default_max_tokens: int = Field(default=4096, gt=0,
                                    description="the output limit academic mode asks for (at most max_tokens); "
                                                "without a limit in the request the provider's own applies")
    reasoning_efforts: list[str] = Field(default_factory=list,
                                         description="reasoning_effort values, weakest to strongest; [] when none")
    input: list[Literal["text", "image"]] = Field(default_factory=lambda: list[Literal["text", "image"]](["text"]),
                                                  description="what a message may hold: text, image")
    capabilities: Capabilities = Field(default_factory=Capabilities,
                                       description="wire differences overriding the provider's (see Capabilities)")

    @model_validator(mode="after")
    def _budget(self) -> Self:
        if self.default_max_tokens > self.max_tokens:
            raise ValueError(f"default_max_tokens {self.default_max_tokens} exceeds max_tokens {self.max_tokens}")
        return self

    @property
    def strongest_effort(self) -> str | None:
        return self.reasoning_efforts[-1] if self.reasoning_efforts else None


class ModelInfo(ModelSpec):
    """One model: its ``id`` at the provider and its :class:`ModelSpec`."""

    id: str = Field(min_length=1, description="the model's id at the provider, e.g. deepseek-chat")


_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$")


def _headers(value: Any) -> Any:
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str) or not _HEADER_NAME.match(k):
                raise ValueError(f"{k!r} is not an HTTP header name")
            if not isinstance(v, str) or not v.isascii() or re.search(r"[\x00-\x1f\x7f]", v):
                raise ValueError(f"the value of header {k} must be ASCII text on one line")
    return value


class Provider(BaseModel):
    """One provider: where it is (``base_url``, ``{model}`` standing for the model id where the
    model is part of the path, as Azure's deployments), how a request is authorised (``auth``:
    ``bearer``, ``api-key`` or ``none``), the environment variable that holds its key, extra
    ``headers`` and ``query`` parameters sent with every request, whether it is a ``local``
    server (any model name is accepted and no key is needed), its ``capabilities``, the
    ``model_defaults`` of a model it does not declare, and its declared ``models``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field("", description="the API's base URL, e.g. https://api.deepseek.com ({model}: the model id)")
    api_key_env: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                             description="the name of the environment variable that holds the key (letters, "
                                         "digits and _; never the key itself)")
    protocol: Literal["openai-chat", "anthropic-messages"] = Field(
        "openai-chat", description="the wire protocol: OpenAI chat completions, or Anthropic's Messages API")
    auth: Literal["bearer", "api-key", "x-api-key", "none"] = Field(
        "bearer", description="Authorization: Bearer KEY, api-key: KEY (Azure), x-api-key: KEY (Anthropic), or "
                              "none (a key, if set, as bearer)")
    headers: Annotated[dict[str, str], BeforeValidator(_headers)] = Field(
        default_factory=dict, description="headers sent with every request")
    query: dict[str, str] = Field(default_factory=dict, description="query parameters of every request (api-version)")
    local: bool = Field(False, description="a server on the person's machine: any model name, no key needed")
    capabilities: Capabilities = Field(default_factory=Capabilities, description="the provider's wire differences")
    model_defaults: ModelSpec = Field(default_factory=ModelSpec, description="limits of a model not declared")
    models: list[ModelInfo] = Field(default_factory=list, description="the models, merged with the built-ins by id")

    def model(self, model_id: str) -> ModelInfo | None:
        return next((m for m in self.models if m.id == model_id), None)

    def undeclared(self, model_id: str) -> ModelInfo:
        """``model_id`` with this provider's :attr:`model_defaults`."""
        return ModelInfo(id=model_id, **dict(self.model_defaults))


# --------------------------------------------------------------------------- lenient tables


class Table(BaseModel):
    """A feature's table: frozen, and lenient (see the module docstring).

    Validation (a wrap validator around pydantic's own) never raises for a value: each field
    that fails is dropped (so its default is used) and described by :meth:`_bad_value`; unknown
    keys are described by :meth:`_unknown` (tables that ``ignore`` extra keys never see them);
    a value that is not a table gives every default and :meth:`_not_a_table`; ``None`` stands
    for "unset". :meth:`_finish` adds what only the whole table can tell (cross-field rules,
    warnings about kept values). A nested table's problems are its parent's too.
    ``problems`` lists them all; ``problems_of(key)`` those of one field. Equality compares the
    values only.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: the table's name in messages, e.g. ``[reviewer]``
    _table: ClassVar[str] = "[table]"
    #: ``(key, message)``; key ``""`` for the table itself
    _issues: tuple[tuple[str, str], ...] = PrivateAttr(default=())

    @property
    def problems(self) -> tuple[str, ...]:
        """What was wrong in the table, and what is used instead."""
        return tuple(message for _, message in self._issues)

    def problems_of(self, key: str) -> tuple[str, ...]:
        """The problems of one field (``""``: of the table itself; ``"tiers.cheap.model"``: of a
        field of a nested table), those of a nested table's fields included."""
        return tuple(message for k, message in self._issues if k == key or (key and k.startswith(key + ".")))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Table) or type(self) is not type(other):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def from_table(cls, table: Table) -> Self:
        """``table`` as an instance of ``cls``, a subclass of its class that adds behaviour (the
        search tool's policy): the same values and problems, no second validation."""
        if not issubclass(cls, type(table)):
            raise TypeError(f"{cls.__name__} is not a view of {type(table).__name__}")
        out = cast(Self, cls.model_construct(_fields_set=set(table.model_fields_set), **dict(table)))
        out.__pydantic_private__ = dict(table.__pydantic_private__ or {})
        return out

    @classmethod
    def _bad_value(cls, key: str, value: Any, error: dict) -> str | None:
        """The problem of a field whose value failed (``None``: reported by :meth:`_finish`)."""
        default = cls.model_fields[key].get_default(call_default_factory=True)
        return f"{cls._table} {key} = {value!r} is not allowed ({error['msg'].lower()}); {default!r} is used"

    @classmethod
    def _unknown(cls, keys: list[str]) -> list[str]:
        return [f"{cls._table} has no setting {key!r}" for key in keys]

    @classmethod
    def _not_a_table(cls, value: Any) -> str:
        return f"{cls._table} must be a table, not {value!r}; defaults are used"

    @classmethod
    def _finish(cls, raw: dict, table: Self) -> list[tuple[str, str]]:
        return []

    @model_validator(mode="wrap")
    @classmethod
    def _replace_bad_values(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        if isinstance(data, BaseModel):
            return handler(data)
        issues: list[tuple[str, str]] = []
        if data is None:
            data = {}
        elif not isinstance(data, Mapping):
            issues.append(("", cls._not_a_table(data)))
            data = {}
        raw = {str(k): v for k, v in data.items() if v is not None}
        clean = dict(raw)
        while True:
            try:
                table = handler(clean)
                break
            except ValidationError as exc:
                failed: dict[str, Any] = {}
                for err in exc.errors():
                    if not err["loc"] or str(err["loc"][0]) not in clean:
                        raise  # a rule of the whole table failed: a bug of this module, not of the file
                    failed.setdefault(str(err["loc"][0]), err)
                unknown = sorted(k for k in failed if k not in cls.model_fields)
                issues += [(k, m) for k in cls.model_fields if k in failed
                           for m in [cls._bad_value(k, raw[k], failed[k])] if m]
                issues += [("", m) for m in cls._unknown(unknown)]
                for key in failed:
                    del clean[key]
        for name in cls.model_fields:
            value = getattr(table, name)
            if isinstance(value, Table):
                issues += [(f"{name}.{k}" if k else name, m) for k, m in value._issues]
        issues += cls._finish(raw, table)
        table._issues = tuple((k, _shown_problem(m)) for k, m in issues)
        return table




#: The longest problem message kept, characters (a bad value is quoted in it).
MAX_PROBLEM_CHARS = 300


def _shown_problem(message: str) -> str:
    """A problem as it is reported: a URL's user:password shown as ``***@`` and any other secret as
    ``[secret]`` (the value quoted may be a URL with credentials, or a key pasted into the wrong
    field), and at most :data:`MAX_PROBLEM_CHARS` characters."""
    text = mask(redact_url_credentials(message))[0]
    return text if len(text) <= MAX_PROBLEM_CHARS else text[:MAX_PROBLEM_CHARS - 1] + "…"


def _bounds(cls: type[Table], key: str) -> tuple[Any, Any]:
    """``(ge, le)`` of a field."""
    meta = cls.model_fields[key].metadata
    return (next(m.ge for m in meta if getattr(m, "ge", None) is not None),
            next(m.le for m in meta if getattr(m, "le", None) is not None))


# --------------------------------------------------------------------------- [search]

TIERS = ("strict", "open")
PROVIDERS = ("searxng", "wikipedia")
#: Reference hosts a strict lookup may read when the settings name none.
DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = (
    "wikipedia.org", "github.com", "githubusercontent.com", "stackoverflow.com", "stackexchange.com",
    "developer.mozilla.org", "docs.python.org", "nist.gov", "iso.org", "ietf.org", "rfc-editor.org", "arxiv.org",
)
DEFAULT_WIKIPEDIA_URL = "https://en.wikipedia.org"
_PROVIDER_KEYS = ("provider", "searxng_url", "wikipedia_url")


def _lower_stripped(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def _host_patterns(value: Any) -> Any:
    if not isinstance(value, (list, tuple)):
        raise ValueError("not a list of host names")  # noqa: TRY004 - pydantic wants ValueError
    kept = [normalize_host_pattern(h) for h in value if isinstance(h, str)]
    return tuple(dict.fromkeys(h for h in kept if h))


def _model_name(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("not a non-empty model name")
    return value.strip()


def _count(lo: int, hi: int, default: int, description: str) -> Any:
    return Field(default, ge=lo, le=hi, strict=True, description=f"{description}, {lo}-{hi} ({default})")


class SearchSettings(Table):
    """The ``[search]`` table: the outside lookup's provider and policy (upstream-facts.md 3.13).

    A value of the wrong type or out of range is replaced by its default and described in
    ``problems`` (in the words the search tool always used); host patterns are normalised with
    :func:`normalize_host_pattern` and an explicitly empty list is kept (a strict lookup then
    allows nothing); a single-label entry (a whole top-level domain such as ``org``) is kept but
    reported as too broad. A ``search`` value that is not a table switches search off.
    :attr:`provider_choice` is the provider the table names, or ``(None, None)``.
    """

    _table: ClassVar[str] = "[search]"
    #: ``(kind, base URL)`` of the provider the table names, ``(None, None)`` for none
    _provider: tuple[str | None, str | None] = PrivateAttr(default=(None, None))

    provider: Literal["searxng", "wikipedia"] | None = Field(
        None, description='"searxng" or "wikipedia"; unset: searxng when searxng_url is set, wikipedia when '
                          'wikipedia_url is set, else no search')
    searxng_url: str | None = Field(None, strict=True,
                                    description="base URL of a SearXNG instance with the JSON format enabled")
    wikipedia_url: str | None = Field(None, strict=True,
                                      description=f"base URL of a Wikipedia (default {DEFAULT_WIKIPEDIA_URL})")
    tier: Annotated[Literal["strict", "open"], BeforeValidator(_lower_stripped)] = Field(
        "strict", description='"strict" (allow-listed hosts only, the default) or "open" (any source)')
    allowed_hosts: Annotated[tuple[str, ...], BeforeValidator(_host_patterns)] = Field(
        DEFAULT_ALLOWED_HOSTS, description="host suffixes a strict lookup may read; [] allows none (default: "
                                           "Wikipedia, GitHub, Stack Overflow, MDN, Python docs, NIST, ISO, IETF, "
                                           "arXiv)")
    max_results: int = _count(1, 50, 12, "sources asked of the provider")
    max_searches_per_record: int = _count(1, 50, 4, "lookups one record may hold")
    answer_max_chars: int = _count(120, 10_000, 1200, "longest answer handed to the model")
    enrich_pages: int = _count(0, 10, 0, "allowed pages fetched for their text")
    enrich_chars_per_page: int = _count(200, 50_000, 4000, "text kept per fetched page")
    synthesis_model: Annotated[str | None, BeforeValidator(_model_name)] = Field(
        None, description="model of the extraction step (default: the chat model)")
    synthesis_max_tokens: int = _count(128, 8192, 800, "max_tokens of the extraction step")

    @property
    def provider_choice(self) -> tuple[str | None, str | None]:
        """``(kind, base URL)`` of the provider the table names, or ``(None, None)``."""
        return self._provider

    @classmethod
    def _bad_value(cls, key: str, value: Any, error: dict) -> str | None:
        if key in _PROVIDER_KEYS:
            return None  # the provider check below names it
        if key == "tier":
            return f"tier is {value!r}; it must be \"strict\" or \"open\"; using \"strict\""
        if key == "allowed_hosts":
            return f"allowed_hosts is {value!r}; it must be a list of host names; using the default list"
        if key == "synthesis_model":
            return f"synthesis_model is {value!r}; it must be a non-empty model name; using the chat model"
        lo, hi = _bounds(cls, key)
        return f"{key} is {value!r}; it must be a whole number from {lo} to {hi}; using {cls.model_fields[key].default}"

    @classmethod
    def _unknown(cls, keys: list[str]) -> list[str]:
        return [f"[search] has unknown key(s) {', '.join(keys)}; they are ignored"] if keys else []

    @classmethod
    def _not_a_table(cls, value: Any) -> str:
        return (f"[search] must be a table, not {value!r} ({type(value).__name__}); search is off and every "
                "policy value is its default")

    @classmethod
    def _finish(cls, raw: dict, table: Self) -> list[tuple[str, str]]:
        issues: list[tuple[str, str]] = []
        hosts = raw.get("allowed_hosts")
        if isinstance(hosts, (list, tuple)) and len(table.allowed_hosts) != len(hosts):
            dropped = [h for h in hosts if not isinstance(h, str) or not normalize_host_pattern(h)]
            if dropped:
                issues.append(("allowed_hosts", f"allowed_hosts keeps only non-empty host names; dropped {dropped!r}"))
        broad = [h for h in table.allowed_hosts if "." not in h and ":" not in h and h != "localhost"]
        if broad:
            issues.append(("allowed_hosts", (f"allowed_hosts {broad!r} name a whole top-level domain, which is too "
                                             "broad for an allow-list; they are kept, but name the sites instead")))
        kind, url, problem = _provider_choice(raw)
        table._provider = (kind, url)
        if problem:
            issues.append(("provider", problem))
        return issues


def _provider_choice(table: dict) -> tuple[str | None, str | None, str | None]:
    """``(provider kind, base URL, problem)`` from a ``[search]`` table as written."""
    kind, searxng, wiki = table.get("provider"), table.get("searxng_url"), table.get("wikipedia_url")
    if kind is None:
        kind = "searxng" if searxng is not None else "wikipedia" if wiki is not None else None
        if kind is None:
            return None, None, None
    if kind not in PROVIDERS:
        return None, None, f"provider is {kind!r}; it must be one of {', '.join(PROVIDERS)}; search is off"
    url = searxng if kind == "searxng" else (wiki if wiki is not None else DEFAULT_WIKIPEDIA_URL)
    if not isinstance(url, str) or not _is_http_url(url):
        why = "is missing" if url is None else f"is {url!r}, not an http(s) URL"
        return None, None, f"provider {kind} needs {kind}_url, which {why}; search is off"
    return kind, url.strip(), None


# --------------------------------------------------------------------------- [reviewer]


def _seconds(lo: float, hi: float, default: float, description: str) -> Any:
    return Field(default, ge=lo, le=hi, strict=True, description=f"{description}, {lo:g}-{hi:g} s ({default:g})")


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and math.isfinite(value) else value


class ReviewerSettings(Table):
    """The ``[reviewer]`` table (reviewer.md "Runs and states"): a value out of range is reported
    and its default used; an unknown key is reported."""

    _table: ClassVar[str] = "[reviewer]"

    timeout: float = _seconds(1.0, 3600.0, 180.0, "longest review before it fails")
    poll: float = _seconds(0.2, 3600.0, 5.0, "how often an external log is checked")
    debounce: float = _seconds(0.0, 600.0, 2.0, "quiet time before an external log is reviewed")
    window_chars: Annotated[int, BeforeValidator(_whole)] = Field(
        60_000, ge=2_000, le=1_000_000, strict=True,
        description="characters of the conversation's end sent for review, 2000-1000000 (60000)")
    hide_unverified: bool = Field(False, strict=True, description="views leave out insights with an unverified quote")

    @classmethod
    def _bad_value(cls, key: str, value: Any, error: dict) -> str | None:
        if key == "hide_unverified":
            return f"[reviewer] hide_unverified = {value!r} is not true or false"
        lo, hi = _bounds(cls, key)
        return f"[reviewer] {key} = {value!r} is outside {lo:g}-{hi:g}; {cls.model_fields[key].default:g} is used"


# --------------------------------------------------------------------------- [research]


class TierSettings(Table):
    """One tier of ``[research.tiers]``: ``model`` (``provider/model`` or a model id; default the
    settings' default model) and ``effort`` (one of the model's ``reasoning_efforts``; default
    none for ``cheap``, the strongest for ``strong``). The router checks both against the
    providers."""

    model_config = ConfigDict(extra="ignore")
    _table: ClassVar[str] = "[research.tiers]"

    model: Annotated[str | None, BeforeValidator(lambda v: v or None)] = Field(
        None, strict=True, min_length=1, description="provider/model or a model id (default: default_model)")
    effort: str | None = Field(None, strict=True,
                               description="reasoning effort (default: none for cheap, the strongest for strong)")

    @classmethod
    def _bad_value(cls, key: str, value: Any, error: dict) -> str | None:
        what = "a model name" if key == "model" else "a reasoning effort name"
        return f"{cls._table} {key} = {value!r} is not {what}"


class CheapTier(TierSettings):
    _table: ClassVar[str] = "[research.tiers.cheap]"


class StrongTier(TierSettings):
    _table: ClassVar[str] = "[research.tiers.strong]"


class TiersSettings(Table):
    """``[research.tiers]``: the ``cheap`` and ``strong`` tiers (other keys are ignored)."""

    model_config = ConfigDict(extra="ignore")
    _table: ClassVar[str] = "[research.tiers]"

    cheap: CheapTier = Field(default_factory=CheapTier, description="the tier every role starts on")
    strong: StrongTier = Field(default_factory=StrongTier, description="the tier of escalated tasks")


class BibliographicSettings(Table):
    """``[research.bibliographic]``: the bibliographic verifier's services and patience
    (research.md "Running the roles"). The environment (``DSH_CROSSREF_URL``,
    ``DSH_ARXIV_URL``, ``DSH_PUBMED_URL``, ``DSH_DATACITE_URL``) overrides the URLs; other keys are ignored."""

    model_config = ConfigDict(extra="ignore")
    _table: ClassVar[str] = "[research.bibliographic]"

    crossref_url: _HttpUrl = Field("https://api.crossref.org", description="Crossref's REST API base URL")
    arxiv_url: _HttpUrl = Field("https://export.arxiv.org", description="the arXiv API's base URL")
    pubmed_url: _HttpUrl = Field("https://eutils.ncbi.nlm.nih.gov", description="PubMed E-utilities' base URL")
    datacite_url: _HttpUrl = Field("https://api.datacite.org", description="DataCite's REST API base URL (issue 21)")
    mailto: str | None = Field(None, strict=True, min_length=3, max_length=254,
                               description="the address for Crossref's polite pool (sent, never cached)")
    timeout: float = Field(15.0, gt=0, le=600, strict=True, description="seconds per request, 0-600 (15)")
    retries: int = Field(2, ge=0, le=10, strict=True, description="retries of a 429/503 or a network failure, 0-10 (2)")
    max_retry_wait: float = Field(5.0, ge=0, le=600, strict=True,
                                  description="longest Retry-After honoured, seconds, 0-600 (5)")
    cache_max_age: int = Field(86400, ge=0, le=31_536_000, strict=True,
                               description="seconds a cached answer is reused, 0-31536000 (86400: a day)")

    @classmethod
    def _bad_value(cls, key: str, value: Any, error: dict) -> str | None:
        if key.endswith("_url"):
            return f"{cls._table} {key} = {value!r} is not an http(s) URL; {cls.model_fields[key].default!r} is used"
        return super()._bad_value(key, value, error)


#: a positive number of tokens, whole or not (never a bool)
_Tokens = Annotated[Annotated[StrictInt, Field(gt=0, le=10**10)] | Annotated[StrictFloat, Field(gt=0, le=1e10)],
                    Field()]


class ResearchSettings(Table):
    """``[research]``: the question's token budget, the router's tiers and the bibliographic
    verifier (research.md "Running the roles"). The router refuses a bad budget or tier
    (``problems_of("budget_tokens")``, ``problems_of("tiers")``); other keys are ignored."""

    model_config = ConfigDict(extra="ignore")
    _table: ClassVar[str] = "[research]"

    budget_tokens: _Tokens = Field(200_000, description="tokens one question may use (as the provider reports "
                                                        "them), more than 0, at most 1e10 (200000)")
    tiers: TiersSettings = Field(default_factory=TiersSettings, description="the cheap and strong tiers")
    bibliographic: BibliographicSettings = Field(default_factory=BibliographicSettings,
                                                 description="the bibliographic verifier's services")

    @classmethod
    def _bad_value(cls, key: str, value: Any, error: dict) -> str | None:
        if key == "budget_tokens":
            return f"[research] budget_tokens must be a positive number of tokens, not {value!r}"
        return super()._bad_value(key, value, error)


# --------------------------------------------------------------------------- [academic]


class AcademicSettings(Table):
    """``[academic]`` (academic.md "What the switch changes"): the sections' ``language``; a bad
    value is reported in ``lastError`` and ``auto`` used (it never stops a request)."""

    model_config = ConfigDict(extra="ignore")
    _table: ClassVar[str] = "[academic]"

    language: Literal["auto", "zh", "en"] = Field(
        "auto", description='"zh", "en" or "auto" (Chinese when the user writes CJK ideographs, else English)')

    @classmethod
    def _bad_value(cls, key: str, value: Any, error: dict) -> str | None:
        return f"[academic] language = {value!r} is not auto, zh or en; auto is used"

    @classmethod
    def _not_a_table(cls, value: Any) -> str:
        return f"[academic] in settings.toml must be a table, not {value!r}; language auto is used"


# --------------------------------------------------------------------------- [reckon]


def _unit_table(value: Any) -> Any:
    if not isinstance(value, dict):
        raise ValueError("not a table")  # noqa: TRY004 - pydantic reports ValueError from a validator
    if len(value) > 64 or not all(isinstance(k, str) and isinstance(v, str) and 0 < len(v) <= 64
                                  for k, v in value.items()):
        raise ValueError("not a table of QUANTITY = \"UNIT\" strings")
    return value


class ReckonSettings(Table):
    """``[reckon]`` (issue 18): ``[reckon.units]``, the preferred display units per quantity
    (``length = "mm"``), which ``%%reckon`` starts every kernel with (``%reckon units`` changes
    them for the notebook). The table is checked here for shape; each unit is read, and a bad one
    reported and left out, by the magic (pint is not imported with the settings)."""

    model_config = ConfigDict(extra="ignore")
    _table: ClassVar[str] = "[reckon]"

    units: Annotated[dict[str, str], BeforeValidator(_unit_table)] = Field(
        default_factory=dict, description='preferred display units, e.g. length = "mm", force = "kN"')

    @classmethod
    def _bad_value(cls, key: str, value: Any, error: dict) -> str | None:
        return f"[reckon] {key} = {value!r} is not a table of QUANTITY = \"UNIT\" strings; no preferred units are used"

    @classmethod
    def _not_a_table(cls, value: Any) -> str:
        return f"[reckon] in settings.toml must be a table, not {value!r}; no preferred units are used"


# --------------------------------------------------------------------------- [signing]


def _key_file(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        return None
    return value


class SigningSettings(Table):
    """``[signing]`` (issue 15): ``key``, the person's OpenSSH private key file (or the ``.pub``
    of a key held by ssh-agent) that signs seals and human decisions; ``DSH_SIGNING_KEY``
    overrides it. A bad value is a problem that stops signing (a seal is never signed with a
    key the person did not name)."""

    _table: ClassVar[str] = "[signing]"

    key: Annotated[str | None, BeforeValidator(_key_file)] = Field(
        None, strict=True, max_length=4096,
        description='a private key file, e.g. "~/.ssh/id_ed25519" (default: the key dsh-notebook creates in the home)')

    @classmethod
    def _bad_value(cls, key: str, value: Any, error: dict) -> str | None:
        return f"[signing] {key} = {value!r} is not a file name; nothing is signed until it is fixed"

    @classmethod
    def _not_a_table(cls, value: Any) -> str:
        return f"[signing] in settings.toml must be a table, not {value!r}; nothing is signed until it is fixed"


# --------------------------------------------------------------------------- the settings


class Settings(BaseModel):
    """Everything ``settings.toml`` and the environment say (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    default_model: str = Field("deepseek/deepseek-chat",
                               description="provider/model or a bare model id (DSH_MODEL overrides it)")
    providers: dict[str, Provider] = Field(default_factory=dict, description="providers by id, merged with the "
                                                                             "built-in deepseek")
    search: SearchSettings = Field(default_factory=SearchSettings, description="the search tool's provider and "
                                                                               "policy")
    reviewer: ReviewerSettings = Field(default_factory=ReviewerSettings, description="the reviewer's timing and view")
    research: ResearchSettings = Field(default_factory=ResearchSettings, description="the research roles' budget, "
                                                                                     "tiers and verifier")
    academic: AcademicSettings = Field(default_factory=AcademicSettings, description="academic mode's language")
    reckon: ReckonSettings = Field(default_factory=ReckonSettings, description="%%reckon's preferred display units")
    signing: SigningSettings = Field(default_factory=SigningSettings, description="the key that signs seals")

    def resolve(self, model: str | None = None) -> tuple[str, Provider, ModelInfo]:
        """``(provider id, provider, model)`` for ``provider/model``, a bare model id, or the
        default. A model a provider does not declare gets the provider's ``model_defaults``
        (:meth:`declared` tells the two apart). Raises :class:`LLMError` ``UNKNOWN_MODEL``
        listing the providers and models there are, for an unknown provider or an undeclared
        bare model id."""
        want = model or self.default_model
        if "/" in want:
            pid, mid = want.split("/", 1)
            prov = self.providers.get(pid)
            if prov is not None and mid.strip() and mid == mid.strip() and len(mid) <= 256 \
                    and not _CONTROL.search(mid) and mid.strip(".") and "/../" not in f"/{mid}/" \
                    and "/./" not in f"/{mid}/":
                return pid, prov, prov.model(mid) or prov.undeclared(mid)
        else:
            for pid, prov in self.providers.items():
                found = prov.model(want)
                if found:
                    return pid, prov, found
        known = ", ".join(f"{p}/{m.id}" for p, pr in self.providers.items() for m in pr.models) or "(none)"
        shown = mask(want, "[key]")[0]  # a key pasted where the model goes is never echoed
        shown = shown if len(shown) <= 100 else shown[:99] + "…"
        raise LLMError(UNKNOWN_MODEL, f"no model {shown!r} in the settings: give it as provider/model with one of "
                                      f"the providers {', '.join(self.providers)}; declared models: {known}")

    def declared(self, provider_id: str, model_id: str) -> bool:
        """Whether the provider's settings declare the model (else it runs on the provider's defaults)."""
        prov = self.providers.get(provider_id)
        return prov is not None and prov.model(model_id) is not None

    def capabilities(self, provider_id: str, model: ModelInfo) -> Capabilities:
        """The whole :class:`Capabilities` of a model: its own table over the OpenAI reasoning
        families' ``max_completion_tokens`` (any id of :data:`OPENAI_REASONING`) over its
        provider's over :data:`DEFAULT_CAPABILITIES`."""
        prov = self.providers.get(provider_id)
        caps = prov.capabilities.over(DEFAULT_CAPABILITIES) if prov is not None else DEFAULT_CAPABILITIES
        if OPENAI_REASONING.search(model.id):
            caps = caps.model_copy(update={"token_param": "max_completion_tokens"})
        return model.capabilities.over(caps)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _provider(base_url: str, key_env: str, models: list[dict], **more: Any) -> dict:
    return {"base_url": base_url, "api_key_env": key_env, "protocol": "openai-chat", "models": models, **more}


def _m(model_id: str, context: int, most: int, default: int, efforts: tuple[str, ...] = (), **more: Any) -> dict:
    return {"id": model_id, "context_window": context, "max_tokens": most, "default_max_tokens": default,
            "reasoning_efforts": list(efforts), "input": ["text"], **more}


_OPENAI_EFFORTS = ("low", "medium", "high")
_CLAUDE_EFFORTS = ("low", "medium", "high")  # extended-thinking budgets (dsh_notebook.llm.anthropic)

#: The built-in providers (issue 19). Limits are the providers' published ones (context window,
#: most output tokens); a model not listed runs on its provider's ``model_defaults``.
BUILTIN: dict[str, Any] = {
    "default_model": "deepseek/deepseek-chat",
    "providers": {
        "deepseek": _provider("https://api.deepseek.com", "DEEPSEEK_API_KEY", [
            _m("deepseek-chat", 131072, 8192, 4096),
            _m("deepseek-reasoner", 131072, 65536, 32768),
        ], capabilities={"reasoning_fields": ["reasoning_content"], "reasoning_passback": "after-tool-calls"}),
        "openai": _provider("https://api.openai.com/v1", "OPENAI_API_KEY", [
            _m("gpt-4o", 128000, 16384, 4096),
            _m("gpt-4o-mini", 128000, 16384, 4096),
            _m("gpt-4.1", 1047576, 32768, 8192),
            _m("gpt-4.1-mini", 1047576, 32768, 8192),
            _m("o3", 200000, 100000, 32768, _OPENAI_EFFORTS),
            _m("o4-mini", 200000, 100000, 32768, _OPENAI_EFFORTS),
            _m("gpt-5", 400000, 128000, 32768, ("minimal", *_OPENAI_EFFORTS)),
            _m("gpt-5-mini", 400000, 128000, 32768, ("minimal", *_OPENAI_EFFORTS)),
        ], model_defaults={"context_window": 128000, "max_tokens": 16384, "default_max_tokens": 4096}),
        "openrouter": _provider("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", [],
                                capabilities={"token_param": "max_completion_tokens",
                                              "reasoning_fields": ["reasoning", "reasoning_details"]}),
        "azure": _provider("", "AZURE_OPENAI_API_KEY", [], auth="api-key", query={"api-version": "2024-10-21"},
                           model_defaults={"context_window": 128000, "max_tokens": 16384,
                                           "default_max_tokens": 4096}),
        "gemini": _provider("https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY", [
            _m("gemini-2.5-pro", 1048576, 65536, 8192, _OPENAI_EFFORTS),
            _m("gemini-2.5-flash", 1048576, 65536, 8192, _OPENAI_EFFORTS),
            _m("gemini-2.5-flash-lite", 1048576, 65536, 8192, _OPENAI_EFFORTS),
        ], capabilities={"reasoning_fields": ["reasoning_content", "reasoning"]}),
        "mistral": _provider("https://api.mistral.ai/v1", "MISTRAL_API_KEY", [
            _m("mistral-large-latest", 131072, 32768, 4096),
            _m("mistral-medium-latest", 131072, 32768, 4096),
            _m("mistral-small-latest", 131072, 32768, 4096),
            _m("magistral-medium-latest", 40960, 40960, 8192),
        ], capabilities={"tool_id": "alnum9", "effort": "none"}),
        "anthropic": _provider("https://api.anthropic.com", "ANTHROPIC_API_KEY", [
            _m("claude-sonnet-4-5", 200000, 64000, 16384, _CLAUDE_EFFORTS),
            _m("claude-opus-4-1", 200000, 32000, 16384, _CLAUDE_EFFORTS),
            _m("claude-haiku-4-5", 200000, 64000, 16384, _CLAUDE_EFFORTS),
            _m("claude-sonnet-4-0", 200000, 64000, 16384, _CLAUDE_EFFORTS),
            _m("claude-3-5-haiku-latest", 200000, 8192, 4096),
        ], protocol="anthropic-messages", auth="x-api-key", headers={"anthropic-version": "2023-06-01"},
            model_defaults={"context_window": 200000, "max_tokens": 32000, "default_max_tokens": 8192}),
        "ollama": _provider("http://127.0.0.1:11434/v1", "OLLAMA_API_KEY", [], auth="none", local=True,
                            capabilities={"reasoning_fields": ["reasoning", "reasoning_content"]},
                            model_defaults={"context_window": 8192, "max_tokens": 8192, "default_max_tokens": 2048}),
        "vllm": _provider("http://127.0.0.1:8000/v1", "VLLM_API_KEY", [], auth="none", local=True,
                          capabilities={"reasoning_fields": ["reasoning", "reasoning_content"]},
                          model_defaults={"context_window": 32768, "max_tokens": 8192, "default_max_tokens": 2048}),
        "llamacpp": _provider("http://127.0.0.1:8080/v1", "LLAMACPP_API_KEY", [], auth="none", local=True,
                              capabilities={"reasoning_fields": ["reasoning_content", "reasoning"],
                                            "stream_tools": False, "tool_choice": "auto"},
                              model_defaults={"context_window": 8192, "max_tokens": 8192,
                                              "default_max_tokens": 2048}),
    },
}

#: The built-in model providers' ids.
MODEL_PROVIDERS = tuple(BUILTIN["providers"])

#: Environment variables and the setting each overrides (a set, non-empty variable wins over the file).
ENVIRONMENT: dict[str, tuple[str, ...]] = {
    **{f"{pid.upper()}_BASE_URL": ("providers", pid, "base_url") for pid in MODEL_PROVIDERS},
    "AZURE_OPENAI_API_VERSION": ("providers", "azure", "query", "api-version"),
    "DSH_MODEL": ("default_model",),
    "DSH_CROSSREF_URL": ("research", "bibliographic", "crossref_url"),
    "DSH_ARXIV_URL": ("research", "bibliographic", "arxiv_url"),
    "DSH_PUBMED_URL": ("research", "bibliographic", "pubmed_url"),
    "DSH_DATACITE_URL": ("research", "bibliographic", "datacite_url"),
}
#: Read as well: Azure's resource endpoint, from which its base URL is made (``AZURE_BASE_URL`` wins).
AZURE_ENDPOINT = "AZURE_OPENAI_ENDPOINT"


def _merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for key, value in extra.items():
        if key == "models" and isinstance(value, list) and isinstance(out.get("models"), list):
            by_id = {m.get("id"): dict(m) for m in out["models"] if isinstance(m, dict)}
            order = [m.get("id") for m in out["models"] if isinstance(m, dict)]
            odd = []  # entries without a string id: left for validation to name
            for m in value:
                if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"] in by_id:
                    by_id[m["id"]] = {**by_id[m["id"]], **m}
                elif isinstance(m, dict) and isinstance(m.get("id"), str):
                    by_id[m["id"]] = dict(m)
                    order.append(m["id"])
                else:
                    odd.append(m)
            out["models"] = [by_id[i] for i in order] + odd
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _set_in(data: dict, where: tuple[str, ...], value: Any, create: bool) -> dict:
    """A copy of ``data`` with ``value`` at ``where``; ``data`` itself when a parent is not a
    table (or is missing and ``create`` is false)."""
    if len(where) == 1:
        return {**data, where[0]: value}
    child = data.get(where[0])
    if child is None and create:
        child = {}
    if not isinstance(child, dict):
        return data
    return {**data, where[0]: _set_in(child, where[1:], value, create)}


def _with_environment(data: dict, env: dict[str, str]) -> dict:
    """``data`` with each set variable of :data:`ENVIRONMENT` written at its place. A provider
    is never created (``DEEPSEEK_BASE_URL`` overrides the deepseek provider's URL); a research
    table is; a place under a value that is not a table is left alone (that table is reported)."""
    endpoint = env.get(AZURE_ENDPOINT, "").strip()
    if endpoint and not env.get("AZURE_BASE_URL"):
        data = _set_in(data, ("providers", "azure", "base_url"),
                       endpoint.rstrip("/") + "/openai/deployments/{model}", create=False)
    for var, where in ENVIRONMENT.items():
        if env.get(var):
            data = _set_in(data, where, env[var], create=where[0] != "providers" or where[-2] == "query")
    return data


_cache: dict[tuple, Settings] = {}
_cache_lock = threading.Lock()
_CACHE_SIZE = 16


def _build(file_data: dict, source: Path | str, env: dict[str, str]) -> Settings:
    data = _with_environment(_merge(BUILTIN, file_data), env)
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise SettingsError(f"{source}: {where}: {first['msg']}") from None


#: The largest ``settings.toml`` or ``credentials.toml`` read, bytes.
MAX_FILE_BYTES = 1024 * 1024


def read_config_file(path: Path) -> bytes | None:
    """The bytes of a settings or credentials file, ``None`` when there is none. Raises
    :class:`~dsh_notebook.errors.SettingsError` naming the file when it is not a regular file (a
    folder, a fifo, a device: never waited on), is over :data:`MAX_FILE_BYTES`, or cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):  # no file (or the home folder is not a folder)
        return None
    except IsADirectoryError:
        raise SettingsError(f"{path} is a folder, not a settings file") from None
    except OSError as exc:
        raise SettingsError(f"{path} cannot be read ({exc.strerror or type(exc).__name__})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise SettingsError(f"{path} is a folder, not a settings file")
        if not stat.S_ISREG(st.st_mode):
            raise SettingsError(f"{path} is not a regular file (a fifo or a device?); it is not read")
        if st.st_size > MAX_FILE_BYTES:
            raise SettingsError(f"{path} is {st.st_size} bytes, over the {MAX_FILE_BYTES}-byte limit for a settings file")
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise SettingsError(f"{path} cannot be read ({exc.strerror or type(exc).__name__})") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise SettingsError(f"{path} is over the {MAX_FILE_BYTES}-byte limit for a settings file")
    return data


def parse_config(data: bytes, path: Path) -> dict[str, Any]:
    """TOML *data* of the file at *path* as a dict; :class:`SettingsError` naming the file when it is
    not UTF-8 TOML (or nests too deeply, or holds a number Python will not read)."""
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise SettingsError(f"{path} nests tables or arrays too deeply to be read") from None
    except ValueError as exc:  # e.g. an integer over Python's digit limit
        raise SettingsError(f"{path} holds a value that cannot be read ({' '.join(str(exc).split())[:200]})") from None


def load_settings(path: Path | None = None) -> Settings:
    """The built-ins merged with ``settings.toml`` (``path``, default in the home folder) and the
    environment. Raises :class:`~dsh_notebook.errors.SettingsError` (an ``LLMError``, code
    ``SETTINGS``) naming the file, the field and the problem. The file is read at every call;
    it is parsed and validated again only when its bytes (or the environment) changed."""
    path = path or home() / "settings.toml"
    env = {var: os.environ.get(var, "") for var in (*ENVIRONMENT, AZURE_ENDPOINT)}
    content = read_config_file(path)
    key = (str(path), content, tuple(env.values()))
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None:
        return cached
    file_data: dict = {}
    if content is not None:
        file_data = parse_config(content, path)
    settings = _build(file_data, path, env)
    with _cache_lock:
        if len(_cache) >= _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = settings
    return settings


def default_settings() -> Settings:
    """The built-ins and the environment, without ``settings.toml``: what a feature that must
    go on uses when the file cannot be read (the bibliographic verifier)."""
    return _build({}, "the environment", {var: os.environ.get(var, "") for var in (*ENVIRONMENT, AZURE_ENDPOINT)})


def api_key(provider_id: str, provider: Provider) -> str:
    """The provider's key from its environment variable, else ``credentials.toml`` (mode
    0600, ``[provider] api_key = ...``); ``""`` for a provider with ``auth = "none"`` that has
    none. Raises ``MISSING_CREDENTIAL`` naming where to put it."""
    key = os.environ.get(provider.api_key_env)
    if key:
        return key
    if provider.auth == "none":  # a local server: a key only if one was given, never a refusal
        try:
            return _credentials_key(provider_id, provider)
        except LLMError:
            return ""
    return _credentials_key(provider_id, provider)


def _credentials_key(provider_id: str, provider: Provider) -> str:
    cred = home() / "credentials.toml"
    try:
        content = read_config_file(cred)
    except SettingsError as exc:
        raise LLMError(MISSING_CREDENTIAL, exc.message) from None
    if content is not None:
        mode = stat.S_IMODE(cred.stat().st_mode)
        if mode & 0o077:
            raise LLMError(MISSING_CREDENTIAL, f"{cred} is readable by others (mode {mode:o}); chmod 600 it")
        try:
            entry = parse_config(content, cred).get(provider_id) or {}
        except SettingsError as exc:  # never the file's text: it holds keys
            raise LLMError(MISSING_CREDENTIAL, exc.message) from None
        if isinstance(entry, dict) and isinstance(entry.get("api_key"), str) and entry["api_key"]:
            return entry["api_key"]
    if provider.auth == "none":
        return ""
    raise LLMError(MISSING_CREDENTIAL, f"no API key for provider {provider_id!r}: set {provider.api_key_env} or add "
                                       f"[{provider_id}] api_key = \"...\" to {cred} (mode 600)")
