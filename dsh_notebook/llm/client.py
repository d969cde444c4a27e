"""``ChatClient``: one provider-neutral client for every model call (spec: llm.md "Client";
issue 19: every OpenAI-compatible provider as it really streams).

* OpenAI-compatible chat completions over httpx, sync (:meth:`ChatClient.complete`) and
  async (:meth:`ChatClient.acomplete`) sharing one request builder and one reply assembler
  (:mod:`.stream`).
* The provider's :class:`~dsh_notebook.settings.Capabilities` shape every request after the
  hooks ran: the output limit as ``max_tokens`` or ``max_completion_tokens``; no
  ``reasoning_effort`` where the provider takes none; ``reasoning_content`` sent back on the
  assistant messages of a user turn with tool calls (DeepSeek's thinking mode) and dropped
  elsewhere; tool-call ids of 9 letters and digits (Mistral); tool steps unstreamed where the
  server cannot stream tool calls. Authorisation is ``Authorization: Bearer``, ``api-key``
  (Azure) or none (local servers), with the provider's extra headers and query parameters;
  proxies and CA bundles come from the environment (httpx's ``trust_env``).
* The history is fitted to the context window before each request (:mod:`.context`).
* Failures carry the stable codes of :mod:`.errors`, naming provider, model and status; 429,
  5xx and connection errors (the request never reached the provider) are retried under the
  network layer's one retry policy (:class:`dsh_notebook.net.RetryPolicy`: at most
  ``max_retries`` times, exponential backoff with jitter, ``Retry-After`` as seconds or a date,
  each wait at most 60 s and 120 s in all; a cancel ends a wait at once), and so is an in-band
  error while nothing of the reply was shown.
* Request-shaping hooks run in order before each request and record what they changed
  (academic mode raises the reasoning effort and ``max_tokens`` there).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self, TypeVar
from urllib.parse import quote

import httpx

from ..errors import CANCELLED, HTTP_STATUS, PROTOCOL, SETTINGS, TIMEOUT, LLMError
from ..net import CONNECTION_ERRORS, RetryCancelled, RetryPolicy
from ..redact import redact_url_credentials, url_without_credentials
from ..secretscan import mask
from ..settings import Capabilities, ModelInfo, Settings, api_key, load_settings
from . import anthropic
from .context import Fit, estimate_tokens, fit_messages
from .hooks import RequestHook, default_request_hooks
from .prompt import SystemPrompt
from .stream import Assembler, ChatResult, StreamError, ToolCall, asse_data, parse_json, sse_data

__all__ = ["ChatClient", "ChatResult", "RequestContext", "StreamError", "ToolCall", "interruptible"]


@dataclass
class RequestContext:
    """What a request-shaping hook may read and change besides the body: the provider id,
    the model's declared capabilities, the last user message and the system prompt as
    ordered sections (rendered into the first message after every hook ran)."""

    provider_id: str
    model: ModelInfo
    system: SystemPrompt
    user_text: str = ""


#: What the client retries (llm.md "Client": 429 and 5xx), and how long it waits at most, seconds.
RETRY_STATUSES = frozenset({429, *range(500, 600)})
RETRY_MAX_WAIT = 60.0
RETRY_MAX_TOTAL = 120.0

T = TypeVar("T")

def interruptible(fn: Callable[[], T], cancel: threading.Event | None, cancelled: Callable[[], Exception]) -> T:
    """``fn()``, or ``raise cancelled()`` within ~50 ms of ``cancel`` being set.

    A blocked socket read cannot be interrupted from another thread, so ``fn`` runs on a
    daemon thread and the caller stops waiting instead; ``fn`` then finishes on its own and
    its result is dropped. Without ``cancel``, ``fn`` runs on this thread. Shared by the
    client (a silent model) and the search tool (a slow provider or page)."""
    if cancel is None:
        return fn()
    if cancel.is_set():
        raise cancelled()
    box: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="dsh-interruptible", daemon=True).start()
    while not done.wait(0.05):
        if cancel.is_set():
            raise cancelled()
    if "error" in box:
        raise box["error"]
    return box["value"]


_ALNUM9 = re.compile(r"[A-Za-z0-9]{9}")
#: What a streamed request asks for (as an SSE client does).
_SSE_HEADERS = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
#: Scale of the token estimate kept within these bounds when corrected from reported usage.
_SCALE_BOUNDS = (0.5, 3.0)


class ChatClient:
    """``ChatClient(model=None, settings=None, hooks=None, timeout=60, max_retries=2)``.

    ``complete(messages, tools=None, stream=True, on_delta=None, cancel=None, system=None,
    **params)`` returns a :class:`ChatResult`; ``messages`` are OpenAI-style dicts (an assistant
    message may carry ``reasoning_content``, kept or dropped as the provider requires), ``tools``
    OpenAI function tools, ``system`` an optional :class:`~.prompt.SystemPrompt`, ``params``
    extra request fields (``max_tokens``, ``reasoning_effort``, ``temperature``...; ``max_tokens``
    goes out as the provider's token parameter). ``cancel`` is a ``threading.Event``: once set
    the call stops with ``CANCELLED``. Raises :class:`LLMError` (:class:`StreamError`, code
    ``PROVIDER``, for an error inside a reply). ``hooks=None`` means the registered defaults
    (:func:`.hooks.default_request_hooks`: academic mode); pass ``[]`` for none.
    """

    def __init__(self, model: str | None = None, settings: Settings | None = None, hooks: tuple | list | None = None,
                 timeout: float = 60.0, max_retries: int = 2, backoff: float = 0.5,
                 transport: httpx.BaseTransport | None = None):
        self.settings = settings or load_settings()
        self.provider_id, self.provider, self.model = self.settings.resolve(model)
        self.capabilities: Capabilities = self.settings.capabilities(self.provider_id, self.model)
        self.declared = self.settings.declared(self.provider_id, self.model.id)
        self.hooks: list[RequestHook] = default_request_hooks() if hooks is None else list(hooks)
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self._transport = transport
        self._http: httpx.Client | None = None  # one connection pool (and TLS context) for every call
        self._scale = 1.0  # the token estimate's correction from reported usage
        self._announced = False

    @property
    def name(self) -> str:
        """``provider/model``, as errors and notices name it."""
        return f"{self.provider_id}/{self.model.id}"

    @property
    def undeclared_notice(self) -> str | None:
        """One line when the model is not declared in the settings (a hosted provider's
        defaults are assumed), else ``None``; local servers take any model silently."""
        if self.declared or self.provider.local:
            return None
        m = self.model
        return (f"{self.name} is not declared in the settings: {self.provider_id}'s defaults are used (context "
                f"window {m.context_window} tokens, output at most {m.max_tokens}); declare it under "
                f"[[providers.{self.provider_id}.models]] to give its limits")

    def _client(self) -> httpx.Client:
        if self._http is None or self._http.is_closed:
            self._http = httpx.Client(timeout=self.timeout, transport=self._transport, trust_env=True,
                                      **_verify_from_environment())
        return self._http

    def close(self) -> None:
        """Close the connection pool (a later call opens a new one)."""
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ request

    @property
    def anthropic(self) -> bool:
        """Whether the provider speaks Anthropic's Messages API (:mod:`.anthropic`)."""
        return self.provider.protocol == "anthropic-messages"

    @property
    def url(self) -> str:
        """The chat-completions URL (``{model}`` in the base URL replaced by the model id).
        Raises ``SETTINGS`` when the provider has no base URL (Azure before its endpoint is set)."""
        base = self.provider.base_url.strip()
        if not base:
            env = "AZURE_OPENAI_ENDPOINT" if self.provider_id == "azure" else f"{self.provider_id.upper()}_BASE_URL"
            raise LLMError(SETTINGS, f"provider {self.provider_id!r} has no base_url: set {env} or base_url under "
                                     f"[providers.{self.provider_id}] in settings.toml")
        path = "/v1/messages" if self.anthropic else "/chat/completions"
        url = base.replace("{model}", quote(self.model.id, safe="")).rstrip("/") + path
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, ValueError, TypeError):
            parsed = None
        if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
            raise LLMError(SETTINGS, f"the base_url of provider {self.provider_id!r} is not an http(s) URL with a host: "
                                     f"{url_without_credentials(_printable(base))[:120]!r}")
        return url

    def build(self, messages: list[dict], tools: list[dict] | None = None, stream: bool = True,
              system: SystemPrompt | None = None, **params: Any) -> tuple[dict, list[str]]:
        """The request body and the hooks' change notes (no I/O).

        ``system`` gives the system prompt as sections; without it, a leading system message
        is taken as the ``persona`` section. Hooks may add sections; the rendered prompt
        becomes the first message (none when it is empty). The provider's capabilities then
        shape the body, and the history is fitted to the context window."""
        body, notes, _ = self._build(messages, tools, stream, system, params)
        return body, notes

    def _build(self, messages: list[dict], tools: list[dict] | None, stream: bool, system: SystemPrompt | None,
               params: dict) -> tuple[dict, list[str], Fit]:
        rest = list(messages)
        lead = rest[0] if rest and rest[0].get("role") == "system" and isinstance(rest[0].get("content"), str) else None
        if lead is not None:
            rest = rest[1:]
        if system is None:
            system = SystemPrompt()
            if lead is not None:
                system.add("persona", lead["content"])
        else:
            system = system.copy()
        body: dict = {"model": self.model.id, "messages": rest, "stream": stream}
        if stream:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = tools
        body.update({k: v for k, v in params.items() if v is not None})
        user = next((m.get("content") for m in reversed(rest) if m.get("role") == "user"), "")
        if isinstance(user, list):  # content parts
            user = " ".join(p.get("text", "") for p in user if isinstance(p, dict) and isinstance(p.get("text"), str))
        ctx = RequestContext(self.provider_id, self.model, system, user if isinstance(user, str) else "")
        notes: list[str] = []
        for hook in self.hooks:
            notes += hook(body, ctx) or []
        text = ctx.system.render()
        body["messages"] = ([{"role": "system", "content": text}] if text else []) + body["messages"]
        notes += self._shape(body)
        limit = body.get(self.capabilities.token_param or "max_tokens")
        output = limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 \
            else self.model.default_max_tokens
        budget = max(self.model.context_window - output, 0)
        fixed = estimate_tokens(json.dumps(tools, ensure_ascii=False)) if tools else 0
        fit = fit_messages(body["messages"], budget, self._scale, fixed=round(fixed * self._scale))
        body["messages"] = fit.messages
        if self.anthropic:
            body = anthropic.request(body, self.model.default_max_tokens)
        return body, notes, fit

    def _shape(self, body: dict) -> list[str]:
        """The capabilities applied to a built body (see the module docstring); one note per
        change a person would want to know about."""
        caps = self.capabilities
        notes: list[str] = []
        param = caps.token_param or "max_tokens"
        other = "max_completion_tokens" if param == "max_tokens" else "max_tokens"
        if other in body:
            value = body.pop(other)
            body.setdefault(param, value)
            notes.append(f"{other} {value!r} sent as {param} ({self.name} takes {param})")
        if caps.tool_choice == "auto" and body.get("tools") and "tool_choice" not in body:
            body["tool_choice"] = "auto"
        if caps.effort == "none" and "reasoning_effort" in body:
            notes.append(f"reasoning_effort {body.pop('reasoning_effort')!r} not sent: {self.provider_id} takes none")
        msgs = [dict(m) for m in body["messages"]]
        passback = caps.reasoning_passback == "after-tool-calls"
        # user turns (from one user message to the next) in which the model made tool calls
        turn_of: list[int] = []
        turn = 0
        for m in msgs:
            turn += m.get("role") == "user"
            turn_of.append(turn)
        with_calls = {turn_of[i] for i, m in enumerate(msgs) if m.get("role") == "assistant" and m.get("tool_calls")}
        turn_has_calls = [t in with_calls for t in turn_of]
        ids: dict[str, str] = {}
        for i, m in enumerate(msgs):
            if m.get("role") == "assistant":
                if passback and turn_has_calls[i]:
                    r = m.get("reasoning_content")
                    m["reasoning_content"] = r if isinstance(r, str) else ""
                else:
                    m.pop("reasoning_content", None)
            if caps.tool_id == "alnum9":
                if m.get("tool_calls"):
                    m["tool_calls"] = [{**c, "id": _alnum9(c.get("id", ""), ids)} for c in m["tool_calls"]]
                if m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str):
                    m["tool_call_id"] = _alnum9(m["tool_call_id"], ids)
        body["messages"] = msgs
        return notes

    def check_credentials(self) -> None:
        """Raise now (no request) when the provider's key cannot be found (``MISSING_CREDENTIAL``)
        or it has no base URL (``SETTINGS``), so a caller can refuse before it writes anything."""
        api_key(self.provider_id, self.provider)
        _ = self.url

    def _headers(self) -> dict:
        """The request's headers: the provider's own (they win, compared without case: an
        ``Authorization`` of yours replaces the key, as Azure's Entra ID tokens need), then
        ``Content-Type`` and the key as ``auth`` says. Raises ``SETTINGS`` for a key an HTTP
        header cannot carry (never echoing it)."""
        headers = dict(self.provider.headers)
        given = {k.lower() for k in headers}
        if "content-type" not in given:
            headers["Content-Type"] = "application/json"
        key = api_key(self.provider_id, self.provider)
        if key and (not key.isascii() or not key.isprintable()):
            raise LLMError(SETTINGS, f"the key of provider {self.provider_id!r} ({self.provider.api_key_env} or "
                                     f"credentials.toml) holds characters an HTTP header cannot carry (non-ASCII or "
                                     f"control characters); paste it again")
        if key and self.provider.auth in ("api-key", "x-api-key") and self.provider.auth not in given:
            headers[self.provider.auth] = key
        elif key and self.provider.auth not in ("api-key", "x-api-key") and "authorization" not in given:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    @property
    def retry_policy(self) -> RetryPolicy:
        """The retry policy of every call: 429, 5xx and connection errors are retried at most
        ``max_retries`` times, ``backoff`` seconds growing exponentially with jitter or the
        provider's ``Retry-After``, each wait at most ``RETRY_MAX_WAIT`` and ``RETRY_MAX_TOTAL``
        seconds in all (see :mod:`dsh_notebook.net.retry`)."""
        return RetryPolicy(attempts=max(0, int(self.max_retries)) + 1, backoff=self.backoff, max_wait=RETRY_MAX_WAIT,
                           max_total=RETRY_MAX_TOTAL, statuses=RETRY_STATUSES, exceptions=CONNECTION_ERRORS)

    def _transport_error(self, exc: Exception) -> LLMError:
        """An httpx or SSE failure as the client's stable codes (shared by sync and async)."""
        if isinstance(exc, httpx.TimeoutException):
            return LLMError(TIMEOUT, f"no answer from {self.name} within {self.timeout:g} s")
        if isinstance(exc, httpx.ConnectError):
            return LLMError(HTTP_STATUS, f"could not connect to {url_without_credentials(self.url)} "
                                         f"({self._redact(str(exc)) or 'ConnectError'}); check the provider's "
                                         f"base_url ({self.provider_id.upper()}_BASE_URL for {self.provider_id})")
        if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
            return LLMError(PROTOCOL, f"the connection to {self.name} closed before the reply finished "
                                      f"({type(exc).__name__}: {self._redact(str(exc))[:200]})")
        return LLMError(HTTP_STATUS, f"the request to {self.name} failed: {type(exc).__name__}")

    def _redact(self, text: str) -> str:
        """``text`` without this client's key or anything shaped like a key or a bearer token
        (a provider may echo the request in its error)."""
        try:
            key = api_key(self.provider_id, self.provider)
        except LLMError:
            key = ""
        if key and len(key) >= 6:
            text = text.replace(key, "[key]")
        return redact_url_credentials(mask(text, "[key]")[0])

    def _scrub(self, exc: LLMError) -> LLMError:
        """``exc`` with its message (and a partial reply's text) redacted: a provider may echo
        the key inside a reply or an error event as well as in an error status."""
        exc.message = self._redact(exc.message)
        exc.args = (exc.message,)
        partial = getattr(exc, "partial", None)
        if partial is not None:
            partial.text = self._redact(partial.text)
        return exc

    def _status_error(self, response: httpx.Response) -> LLMError:
        status = response.status_code
        detail, code = _error_detail(response)
        detail = self._redact(detail)
        text = f"{self.name} answered HTTP {status}" + (f": {detail[:300]}" if detail else "")
        if code not in (None, ""):
            text += f" (code {self._redact(str(code))[:60]})"
        hint = _hint(detail, self.provider_id)
        if hint:
            text += f"; {hint}"
        err = LLMError(HTTP_STATUS, text, status)
        err.retry_after = response.headers.get("Retry-After")
        return err

    def _assembler(self, notes: list[str], on_delta: Callable[[str, str], None] | None, fit: Fit,
                   body: dict) -> Assembler:
        result = ChatResult(model=self.model.id, shaping=list(notes))
        if fit.dropped_turns:
            result.notices.append(("context", (
                f"left out the {fit.dropped_turns} oldest turn{'s' if fit.dropped_turns != 1 else ''} "
                f"({fit.dropped_messages} message{'s' if fit.dropped_messages != 1 else ''}, about {fit.dropped_tokens} "
                f"tokens) to fit {self.name}'s context window of {self.model.context_window} tokens less "
                f"{self.model.context_window - fit.budget} for the reply")))
        elif fit.over:
            result.notices.append(("context", (f"this turn alone is estimated at {fit.tokens} tokens, over the "
                                              f"{fit.budget} {self.name} can read besides its reply")))
        if not self._announced and self.undeclared_notice:
            result.notices.append(("model", self.undeclared_notice))
            self._announced = True
        limit = body.get(self.capabilities.token_param or "max_tokens")
        result.limit = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
        kind = anthropic.AnthropicAssembler if self.anthropic else Assembler
        return kind(result, on_delta, list(self.capabilities.reasoning_fields or ()), self.capabilities.tool_id or "any",
                    where=self.name)

    def _learn(self, result: ChatResult, fit: Fit) -> ChatResult:
        """Correct the token estimate from the prompt tokens the provider reported."""
        reported = result.usage.get("prompt_tokens")
        if isinstance(reported, int) and reported > 0 and fit.tokens > 0:
            ratio = reported / (fit.tokens / self._scale)
            if 0.2 <= ratio <= 5.0:  # a report further off than that is not believed
                lo, hi = _SCALE_BOUNDS
                self._scale = min(hi, max(lo, (self._scale + ratio) / 2))  # halfway: one report moves it half
        return result

    # ------------------------------------------------------------ sync

    def complete(self, messages: list[dict], tools: list[dict] | None = None, stream: bool = True,
                 on_delta: Callable[[str, str], None] | None = None, cancel: threading.Event | None = None,
                 **params: Any) -> ChatResult:
        if cancel is None:
            return self._complete(messages, tools, stream, on_delta, None, params)
        return self._complete_cancellable(messages, tools, stream, on_delta, cancel, params)

    def _complete_cancellable(self, messages: list[dict], tools: list[dict] | None, stream: bool,
                              on_delta: Callable[[str, str], None] | None, cancel: threading.Event,
                              params: dict) -> ChatResult:
        """The request on a helper thread (:func:`interruptible`): a stop is honoured even
        while the model is silent; the abandoned request's deltas are no longer delivered."""

        def deliver(kind: str, piece: str) -> None:
            if on_delta is not None and not cancel.is_set():  # deliver is used only with an on_delta
                on_delta(kind, piece)

        def cancelled() -> LLMError:
            return LLMError(CANCELLED, "the call was cancelled")

        return interruptible(lambda: self._complete(messages, tools, stream, deliver if on_delta else None, cancel,
                                                    params), cancel, cancelled)

    def _complete(self, messages: list[dict], tools: list[dict] | None, stream: bool,
                  on_delta: Callable[[str, str], None] | None, cancel: threading.Event | None,
                  params: dict) -> ChatResult:
        if tools and stream and self.capabilities.stream_tools is False:
            stream = False  # the server cannot stream tool calls: the step goes out whole
        body, notes, fit = self._build(messages, tools, stream, params.pop("system", None), params)
        url = self.url
        headers = self._headers()
        query = dict(self.provider.query)
        http = self._client()

        def attempt() -> ChatResult:
            asm = self._assembler(notes, on_delta, fit, body)
            if stream:
                with http.stream("POST", url, json=body, headers={**headers, **_SSE_HEADERS}, params=query) as resp:
                    if resp.status_code != 200:
                        resp.read()
                        raise self._status_error(resp)
                    if _is_json(resp):  # a server that ignored ``stream``
                        resp.read()
                        asm.body(parse_json(resp.text, self.name))
                        return asm.finish()
                    self._check_sse(resp)
                    for data in sse_data(resp.iter_lines()):
                        if cancel is not None and cancel.is_set():
                            raise LLMError(CANCELLED, "the call was cancelled")
                        if data == "[DONE]" or data.strip() == "[DONE]":
                            break
                        if data.strip():
                            asm.event(data)
            else:
                resp = http.post(url, json=body, headers=headers, params=query)
                if resp.status_code != 200:
                    raise self._status_error(resp)
                asm.body(self._whole_json(resp))
                return asm.finish()
            return asm.finish()

        try:
            return self._learn(self.retry_policy.call(attempt, cancel=cancel), fit)
        except RetryCancelled:
            raise LLMError(CANCELLED, "the call was cancelled") from None
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from None
        except LLMError as exc:
            raise self._scrub(exc) from None

    def _check_sse(self, resp: httpx.Response) -> None:
        """``PROTOCOL`` when a streamed answer is not a server-sent event stream."""
        kind = resp.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "text/event-stream":
            raise LLMError(PROTOCOL, f"{self.name} did not answer with a server-sent event stream (content type "
                                     f"{kind or 'missing'!r})")

    def _whole_json(self, resp: httpx.Response) -> Any:
        if not resp.content.strip():
            raise LLMError(PROTOCOL, f"{self.name} answered HTTP {resp.status_code} with an empty body")
        if _is_html(resp):
            raise LLMError(PROTOCOL, f"{self.name} answered HTTP {resp.status_code} with an HTML page, not JSON "
                                     f"(a proxy or gateway in between?)")
        return parse_json(resp.text, f"{self.name} (HTTP {resp.status_code})")

    # ------------------------------------------------------------ async

    async def acomplete(self, messages: list[dict], tools: list[dict] | None = None, stream: bool = True,
                        on_delta: Callable[[str, str], None] | None = None, **params: Any) -> ChatResult:
        """The async twin of :meth:`complete` (cancel it with ``task.cancel()``: ``CANCELLED``)."""
        if tools and stream and self.capabilities.stream_tools is False:
            stream = False
        body, notes, fit = self._build(messages, tools, stream, params.pop("system", None), params)
        url = self.url
        headers = self._headers()
        query = dict(self.provider.query)
        async with httpx.AsyncClient(timeout=self.timeout, trust_env=True, **_verify_from_environment()) as http:

            async def attempt() -> ChatResult:
                asm = self._assembler(notes, on_delta, fit, body)
                if stream:
                    async with http.stream("POST", url, json=body, headers={**headers, **_SSE_HEADERS},
                                           params=query) as resp:
                        if resp.status_code != 200:
                            await resp.aread()
                            raise self._status_error(resp)
                        if _is_json(resp):
                            await resp.aread()
                            asm.body(parse_json(resp.text, self.name))
                            return asm.finish()
                        self._check_sse(resp)
                        async for data in asse_data(resp.aiter_lines()):
                            if data == "[DONE]" or data.strip() == "[DONE]":
                                break
                            if data.strip():
                                asm.event(data)
                else:
                    resp = await http.post(url, json=body, headers=headers, params=query)
                    if resp.status_code != 200:
                        raise self._status_error(resp)
                    asm.body(self._whole_json(resp))
                    return asm.finish()
                return asm.finish()

            try:
                return self._learn(await self.retry_policy.acall(attempt), fit)
            except asyncio.CancelledError:
                raise LLMError(CANCELLED, "the call was cancelled") from None
            except httpx.HTTPError as exc:
                raise self._transport_error(exc) from None
            except LLMError as exc:
                raise self._scrub(exc) from None


# --------------------------------------------------------------------------- helpers


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def _alnum9(cid: str, seen: dict[str, str]) -> str:
    """A tool-call id as 9 letters and digits (Mistral's rule): kept when it is one, else a
    stable digest of it, the same for the call and its result."""
    if _ALNUM9.fullmatch(cid or ""):
        return cid
    if cid not in seen:
        digest = hashlib.sha256(cid.encode("utf-8", "replace")).digest()
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        seen[cid] = "".join(alphabet[b % 62] for b in digest[:9])
    return seen[cid]


def _verify_from_environment() -> dict:
    """``verify=`` for a CA bundle named the way other tools name it (``REQUESTS_CA_BUNDLE``,
    ``CURL_CA_BUNDLE``) when httpx's own ``SSL_CERT_FILE``/``SSL_CERT_DIR`` are not set."""
    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        return {}
    for var in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        path = os.environ.get(var)
        if path and os.path.isfile(path):
            return {"verify": ssl.create_default_context(cafile=path)}
    return {}


def _is_json(resp: httpx.Response) -> bool:
    return resp.headers.get("content-type", "").split(";")[0].strip().lower() == "application/json"


def _is_html(resp: httpx.Response) -> bool:
    kind = resp.headers.get("content-type", "").split(";")[0].strip().lower()
    head = resp.content[:200].lstrip().lower()
    return kind in ("text/html", "application/xhtml+xml") or head.startswith((b"<!doctype html", b"<html"))


def _error_detail(response: httpx.Response) -> tuple[str, Any]:
    """``(message, code)`` of an error response as providers write it: ``{"error": {...}}``
    (OpenAI, DeepSeek, OpenRouter), ``{"message": ..., "code": ...}`` (Mistral), a list of
    those (Gemini), ``{"detail": ...}`` (vLLM, FastAPI); an HTML page or other text in brief."""
    try:
        data = response.json()
    except Exception:  # noqa: BLE001 - not JSON: describe the body instead
        if not response.content.strip():
            return "an empty body", None
        if _is_html(response):
            return "an HTML page, not the provider's JSON (a proxy or gateway in between?)", None
        return " ".join(response.text[:200].split()), None
    if isinstance(data, list) and data:
        data = data[0]
    if not isinstance(data, dict):
        return " ".join(json.dumps(data)[:200].split()), None
    err = data.get("error", data)
    if isinstance(err, str):
        return err, data.get("code")
    if not isinstance(err, dict):
        return json.dumps(err)[:200], None
    message = err.get("message", err.get("detail", ""))
    if not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False)
    code = err.get("code", err.get("type"))
    return message, code


def _hint(detail: str, provider_id: str) -> str:
    """What to change, for the errors a setting fixes."""
    low = detail.lower()
    if "max_completion_tokens" in low and "max_tokens" in low:
        return (f'give this model capabilities = {{ token_param = "max_completion_tokens" }} under '
                f"[[providers.{provider_id}.models]] in settings.toml")
    if "tool call id" in low and "length of 9" in low:
        return f'give provider {provider_id} capabilities = {{ tool_id = "alnum9" }} in settings.toml'
    if "reasoning_content" in low and ("missing" in low or "passed back" in low):
        return (f'give provider {provider_id} capabilities = {{ reasoning_passback = "after-tool-calls" }} '
                f"in settings.toml")
    return ""
