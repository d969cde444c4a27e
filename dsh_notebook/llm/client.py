"""``ChatClient``: one provider-neutral client for every model call (spec: llm.md "Client").

* OpenAI-compatible chat completions over httpx, sync (:meth:`ChatClient.complete`) and
  async (:meth:`ChatClient.acomplete`) sharing one request builder and one stream assembler.
* Streaming is server-sent events (httpx-sse): text deltas, ``reasoning_content`` deltas,
  tool-call deltas whose arguments arrive in pieces, usage and the finish reason.
* Failures carry the stable codes of :mod:`.errors`; 429, 5xx and connection errors (the
  request never reached the provider) are retried under the network layer's one retry policy
  (:class:`dsh_notebook.net.RetryPolicy`: at most ``max_retries`` times, exponential backoff
  with jitter, ``Retry-After`` as seconds or a date, each wait at most 60 s and 120 s in all; a
  cancel ends a wait at once).
* Request-shaping hooks run in order before each request and record what they changed
  (academic mode raises the reasoning effort and ``max_tokens`` there).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from httpx_sse import SSEError, aconnect_sse, connect_sse

from ..errors import CANCELLED, HTTP_STATUS, PROTOCOL, TIMEOUT, LLMError
from ..net import CONNECTION_ERRORS, RetryCancelled, RetryPolicy
from ..redact import redact_url_credentials, url_without_credentials
from ..secretscan import mask
from ..settings import ModelInfo, Settings, api_key, load_settings
from .hooks import RequestHook, default_request_hooks
from .prompt import SystemPrompt


@dataclass
class RequestContext:
    """What a request-shaping hook may read and change besides the body: the provider id,
    the model's declared capabilities, the last user message and the system prompt as
    ordered sections (rendered into the first message after every hook ran)."""

    provider_id: str
    model: ModelInfo
    system: SystemPrompt
    user_text: str = ""


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it

    def parsed(self) -> Any:
        """The arguments as JSON; :class:`LLMError` ``PROTOCOL`` when they are not JSON."""
        try:
            return json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise LLMError(PROTOCOL, f"the arguments of tool call {self.name!r} are not JSON ({exc})") from None


@dataclass
class ChatResult:
    """One reply: ``text``, ``reasoning``, ``tool_calls``, ``finish_reason``, ``usage``
    (token counts as the provider reports them), ``model``, and ``shaping`` (what the hooks
    changed, one line each)."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict = field(default_factory=dict)
    model: str = ""
    shaping: list[str] = field(default_factory=list)


class _Assembler:
    """Folds streamed chunks (or one non-streamed body) into a :class:`ChatResult`."""

    def __init__(self, result: ChatResult, on_delta: Callable[[str, str], None] | None):
        self.r = result
        self.on_delta = on_delta
        self.calls: dict[int, dict] = {}
        self.text: list[str] = []
        self.reasoning: list[str] = []

    def event(self, data: str) -> None:
        """One streamed event's ``data`` (JSON text; the caller stops at ``[DONE]``)."""
        # ``raw_decode`` is ``json.loads`` minus its whitespace and trailing-data checks (about
        # 0.8 of 2 us per event); text it does not consume whole goes through ``json.loads``,
        # which decides (whitespace around the object, extra data, the error message).
        try:
            obj, end = _raw_decode(data)
        except json.JSONDecodeError:
            end = -1
        if end != len(data):
            obj = _json(data)
        # Fast path for the common delta: one choice carrying text only (no reasoning, tool
        # calls, finish reason or usage). Anything else goes through :meth:`chunk`.
        try:
            choices = obj.get("choices")
        except AttributeError:
            raise LLMError(PROTOCOL, "a stream event is not a JSON object") from None
        if isinstance(choices, list) and len(choices) == 1 and not obj.get("usage") and type(choices[0]) is dict:
            choice = choices[0]
            d = choice.get("delta")
            if type(d) is dict and not choice.get("finish_reason"):
                piece = d.get("content")
                if type(piece) is str and piece and \
                        (len(d) == 1 or not (d.get("reasoning_content") or d.get("tool_calls"))):
                    self.text.append(piece)
                    if self.on_delta is not None:
                        self.on_delta("text", piece)
                    return
        self.chunk(obj)

    def chunk(self, data: dict) -> None:
        if not isinstance(data, dict):
            raise LLMError(PROTOCOL, "a stream event is not a JSON object")
        try:
            self._chunk(data)
        except (AttributeError, TypeError, ValueError, KeyError) as exc:
            raise LLMError(PROTOCOL, f"a stream event has an unexpected shape ({type(exc).__name__}: {exc}): "
                                     f"{_excerpt(data)}") from None

    def _chunk(self, data: dict) -> None:
        if data.get("usage"):
            self.r.usage = _usage(data["usage"])
        for choice in data.get("choices") or []:
            d = choice.get("delta") or {}
            piece = _text(d.get("reasoning_content"))
            if piece:
                self.reasoning.append(piece)
                if self.on_delta is not None:
                    self.on_delta("reasoning", piece)
            piece = _text(d.get("content"))
            if piece:
                self.text.append(piece)
                if self.on_delta is not None:
                    self.on_delta("text", piece)
            for tc in d.get("tool_calls") or []:
                slot = self.calls.setdefault(int(tc.get("index", 0)), {"id": "", "name": "", "arguments": ""})
                slot["id"] = _text(tc.get("id")) or slot["id"]
                fn = tc.get("function") or {}
                slot["name"] = _text(fn.get("name")) or slot["name"]
                slot["arguments"] += _text(fn.get("arguments")) or ""
            if choice.get("finish_reason"):
                self.r.finish_reason = choice["finish_reason"]

    def body(self, data: dict) -> None:
        try:
            choice = data["choices"][0]
            msg = choice.get("message") or {}
            self.text = [_text(msg.get("content")) or ""]
            self.reasoning = [_text(msg.get("reasoning_content")) or ""]
            for i, tc in enumerate(msg.get("tool_calls") or []):
                fn = tc.get("function") or {}
                self.calls[i] = {"id": _text(tc.get("id")) or "", "name": _text(fn.get("name")) or "",
                                 "arguments": _text(fn.get("arguments")) or ""}
            self.r.finish_reason = choice.get("finish_reason")
            self.r.usage = _usage(data.get("usage"))
        except (KeyError, IndexError, TypeError, AttributeError, ValueError):
            raise LLMError(PROTOCOL, f"the reply has no usable choices[0].message: {_excerpt(data)}") from None

    def finish(self) -> ChatResult:
        self.r.text = _utf8("".join(self.text))
        self.r.reasoning = _utf8("".join(self.reasoning))
        self.r.tool_calls = [ToolCall(_utf8(c["id"]), _utf8(c["name"]), _utf8(c["arguments"]))
                             for _, c in sorted(self.calls.items())]
        if self.r.finish_reason is None:
            raise LLMError(PROTOCOL, "the stream ended without a finish reason")
        return self.r


#: What the client retries (llm.md "Client": 429 and 5xx), and how long it waits at most, seconds.
RETRY_STATUSES = frozenset({429, *range(500, 600)})
RETRY_MAX_WAIT = 60.0
RETRY_MAX_TOTAL = 120.0

_SURROGATE = re.compile("[\ud800-\udfff]")


def interruptible(fn: Callable[[], Any], cancel: threading.Event | None, cancelled: Callable[[], Exception]):
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


def _text(value) -> str | None:
    """A text field of the reply: a string, or ``None`` when absent; anything else is a
    protocol error (raised by the caller as ``PROTOCOL``)."""
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"expected text, got {type(value).__name__}")


def _utf8(text: str) -> str:
    """Text that encodes as UTF-8: surrogate pairs split across deltas (JSON ``\\ud83d``
    then ``\\ude00``) are joined, lone surrogates become U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _usage(value) -> dict:
    """Token counts as reported, keeping only whole numbers (nested one level)."""
    if not isinstance(value, dict):
        return {}
    out: dict = {}
    for k, v in value.items():
        if isinstance(v, int) and not isinstance(v, bool):
            out[str(k)] = v
        elif isinstance(v, dict):
            inner = {str(a): b for a, b in v.items() if isinstance(b, int) and not isinstance(b, bool)}
            if inner:
                out[str(k)] = inner
    return out


def _excerpt(data) -> str:
    try:
        text = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(data)
    return text if len(text) <= 160 else text[:160] + "…"


class ChatClient:
    """``ChatClient(model=None, settings=None, hooks=None, timeout=60, max_retries=2)``.

    ``complete(messages, tools=None, stream=True, on_delta=None, cancel=None, system=None,
    **params)`` returns a :class:`ChatResult`; ``messages`` are OpenAI-style dicts, ``tools``
    OpenAI function tools, ``system`` an optional :class:`~.prompt.SystemPrompt`, ``params``
    extra request fields (``max_tokens``, ``reasoning_effort``, ``temperature``...).
    ``cancel`` is a ``threading.Event``: once set the call stops with ``CANCELLED``. Raises
    :class:`LLMError`. ``hooks=None`` means the registered defaults (:func:`.hooks.default_request_hooks`: academic mode); pass
    ``[]`` for none.
    """

    def __init__(self, model: str | None = None, settings: Settings | None = None, hooks: tuple | list | None = None,
                 timeout: float = 60.0, max_retries: int = 2, backoff: float = 0.5,
                 transport: httpx.BaseTransport | None = None):
        self.settings = settings or load_settings()
        self.provider_id, self.provider, self.model = self.settings.resolve(model)
        self.hooks: list[RequestHook] = default_request_hooks() if hooks is None else list(hooks)
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self._transport = transport
        self._http: httpx.Client | None = None  # one connection pool (and TLS context) for every call

    def _client(self) -> httpx.Client:
        if self._http is None or self._http.is_closed:
            self._http = httpx.Client(timeout=self.timeout, transport=self._transport)
        return self._http

    def close(self) -> None:
        """Close the connection pool (a later call opens a new one)."""
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ request

    @property
    def url(self) -> str:
        return self.provider.base_url.rstrip("/") + "/chat/completions"

    def build(self, messages: list[dict], tools: list[dict] | None = None, stream: bool = True,
              system: SystemPrompt | None = None, **params) -> tuple[dict, list[str]]:
        """The request body and the hooks' change notes (no I/O).

        ``system`` gives the system prompt as sections; without it, a leading system message
        is taken as the ``persona`` section. Hooks may add sections; the rendered prompt
        becomes the first message (none when it is empty)."""
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
        return body, notes

    def check_credentials(self) -> None:
        """Raise ``MISSING_CREDENTIAL`` now (no request) when the provider's key cannot be found,
        so a caller can refuse before it writes anything."""
        api_key(self.provider_id, self.provider)

    def _headers(self) -> dict:
        return {"Authorization": f"Bearer {api_key(self.provider_id, self.provider)}",
                "Content-Type": "application/json"}

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
            return LLMError(TIMEOUT, f"no answer from {self.provider_id} within {self.timeout:g} s")
        if isinstance(exc, SSEError):
            return LLMError(PROTOCOL, f"the reply is not a server-sent event stream ({exc})")
        if isinstance(exc, httpx.ConnectError):
            return LLMError(HTTP_STATUS, f"could not connect to {url_without_credentials(self.url)} "
                                         f"({self._redact(str(exc)) or 'ConnectError'}); "
                                         f"check the provider's base_url (DEEPSEEK_BASE_URL for deepseek)")
        return LLMError(HTTP_STATUS, f"the request to {self.provider_id} failed: {type(exc).__name__}")

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

    def _status_error(self, response: httpx.Response) -> LLMError:
        try:
            detail = response.json().get("error", {}).get("message", "")
            detail = detail if isinstance(detail, str) else json.dumps(detail)
        except Exception:
            detail = response.text[:200] if hasattr(response, "_content") else ""
        detail = self._redact(detail)
        err = LLMError(HTTP_STATUS, f"the provider answered HTTP {response.status_code}"
                                    + (f": {detail[:300]}" if detail else ""), response.status_code)
        err.retry_after = response.headers.get("Retry-After")
        return err

    # ------------------------------------------------------------ sync

    def complete(self, messages: list[dict], tools: list[dict] | None = None, stream: bool = True,
                 on_delta: Callable[[str, str], None] | None = None, cancel: threading.Event | None = None,
                 **params) -> ChatResult:
        if cancel is None:
            return self._complete(messages, tools, stream, on_delta, None, params)
        return self._complete_cancellable(messages, tools, stream, on_delta, cancel, params)

    def _complete_cancellable(self, messages, tools, stream, on_delta, cancel: threading.Event,
                              params: dict) -> ChatResult:
        """The request on a helper thread (:func:`interruptible`): a stop is honoured even
        while the model is silent; the abandoned request's deltas are no longer delivered."""

        def deliver(kind: str, piece: str) -> None:
            if not cancel.is_set():
                on_delta(kind, piece)

        def cancelled() -> LLMError:
            return LLMError(CANCELLED, "the call was cancelled")

        return interruptible(lambda: self._complete(messages, tools, stream, deliver if on_delta else None, cancel,
                                                    params), cancel, cancelled)

    def _complete(self, messages, tools, stream, on_delta, cancel: threading.Event | None, params: dict) -> ChatResult:
        body, notes = self.build(messages, tools, stream, **params)
        headers = self._headers()
        http = self._client()

        def attempt() -> ChatResult:
            asm = _Assembler(ChatResult(model=self.model.id, shaping=list(notes)), on_delta)
            if stream:
                with connect_sse(http, "POST", self.url, json=body, headers=headers) as source:
                    resp = source.response
                    if resp.status_code != 200:
                        resp.read()
                        raise self._status_error(resp)
                    for event in source.iter_sse():
                        if cancel is not None and cancel.is_set():
                            raise LLMError(CANCELLED, "the call was cancelled")
                        data = event.data
                        if data == "[DONE]":
                            break
                        asm.event(data)
            else:
                resp = http.post(self.url, json=body, headers=headers)
                if resp.status_code != 200:
                    raise self._status_error(resp)
                asm.body(_json(resp.text))
            return asm.finish()

        try:
            return self.retry_policy.call(attempt, cancel=cancel)
        except RetryCancelled:
            raise LLMError(CANCELLED, "the call was cancelled") from None
        except (httpx.HTTPError, SSEError) as exc:
            raise self._transport_error(exc) from None

    # ------------------------------------------------------------ async

    async def acomplete(self, messages: list[dict], tools: list[dict] | None = None, stream: bool = True,
                        on_delta: Callable[[str, str], None] | None = None, **params) -> ChatResult:
        """The async twin of :meth:`complete` (cancel it with ``task.cancel()``: ``CANCELLED``)."""
        body, notes = self.build(messages, tools, stream, **params)
        headers = self._headers()
        async with httpx.AsyncClient(timeout=self.timeout) as http:

            async def attempt() -> ChatResult:
                asm = _Assembler(ChatResult(model=self.model.id, shaping=list(notes)), on_delta)
                if stream:
                    async with aconnect_sse(http, "POST", self.url, json=body, headers=headers) as source:
                        resp = source.response
                        if resp.status_code != 200:
                            await resp.aread()
                            raise self._status_error(resp)
                        async for event in source.aiter_sse():
                            data = event.data
                            if data == "[DONE]":
                                break
                            asm.event(data)
                else:
                    resp = await http.post(self.url, json=body, headers=headers)
                    if resp.status_code != 200:
                        raise self._status_error(resp)
                    asm.body(_json(resp.text))
                return asm.finish()

            try:
                return await self.retry_policy.acall(attempt)
            except asyncio.CancelledError:
                raise LLMError(CANCELLED, "the call was cancelled") from None
            except (httpx.HTTPError, SSEError) as exc:
                raise self._transport_error(exc) from None


_raw_decode = json.JSONDecoder().raw_decode


def _json(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LLMError(PROTOCOL, f"the provider sent something that is not JSON ({exc.msg} at {exc.pos})") from None
