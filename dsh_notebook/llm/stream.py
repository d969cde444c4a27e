"""Reply assembly: OpenAI-compatible chat-completion chunks (or one whole body) folded into a
:class:`ChatResult`, as real servers send them (spec: llm.md "Client"; issue 19 "Stream
assembly as real servers send it"; the recorded streams of ``../shared/fixtures/providers/``).

* **Tool calls** are keyed by id and index: a delta whose id is new starts a new call even at a
  repeated ``index`` (Ollama numbers parallel calls 0, 0...); a delta without an id goes to the
  latest call of its ``index``; a delta with neither (Gemini) continues the latest call unless
  it names a function again. A call left without an id gets a generated one, reported in
  ``notes``.
* ``content`` is a string or a list of typed parts (Mistral's ``text`` and ``thinking``).
* **Reasoning** is read from the capability's ``reasoning_fields`` (``reasoning_content``,
  ``reasoning``, ``reasoning_details``), the first present in a delta: vLLM sends the same text
  in two of them. OpenRouter's ``reasoning_details`` (text, summaries, encrypted blocks) and
  Gemini's ``extra_content``/``thought_signature`` are kept verbatim in ``opaque`` to be sent
  back.
* ``refusal`` deltas are kept apart; a ``content_filter`` stop is a finish reason of its own.
* An in-band ``error`` object (with or without ``finish_reason: "error"``) raises
  :class:`StreamError`, carrying the partial reply; ``finish_reason: "length"`` marks the
  reply ``truncated``.
* gpt-oss's harmony channels in ``content`` (llama.cpp without its reasoning parser) are split
  into reasoning and answer.
* What was served: the model the provider answered with, ``system_fingerprint``, usage (token
  counts, nested details, ``cost``) and llama.cpp's ``timings``.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import PROTOCOL, PROVIDER, LLMError

__all__ = ["Assembler", "ChatResult", "StreamError", "ToolCall", "asse_data", "generated_id", "parse_json", "sse_data"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_ALNUM = string.ascii_letters + string.digits


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it
    #: fields the provider sent with the call that must come back verbatim (Gemini's
    #: ``extra_content`` with its ``thought_signature``)
    extra: dict = field(default_factory=dict)

    def parsed(self) -> Any:
        """The arguments as JSON; :class:`LLMError` ``PROTOCOL`` when they are not JSON."""
        try:
            return json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise LLMError(PROTOCOL, f"the arguments of tool call {self.name!r} are not JSON ({exc})") from None


@dataclass
class ChatResult:
    """One reply: ``text``, ``reasoning``, ``refusal``, ``tool_calls``, ``finish_reason``,
    ``truncated`` (cut at the output limit, ``limit`` tokens when the request set one),
    ``usage`` (as the provider reports it), ``model`` (asked for) and ``served`` (the model the
    provider answered with, ``system_fingerprint``, cached and reasoning tokens, cost, timings),
    ``opaque`` (message fields to send back verbatim), ``shaping`` (what the hooks changed) and
    ``notices`` (``(kind, text)`` pairs for the person: an undeclared model, a generated tool-call
    id, history left out to fit the context window)."""

    text: str = ""
    reasoning: str = ""
    refusal: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    truncated: bool = False
    limit: int | None = None
    usage: dict = field(default_factory=dict)
    model: str = ""
    served: dict = field(default_factory=dict)
    opaque: dict = field(default_factory=dict)
    shaping: list[str] = field(default_factory=list)
    notices: list[tuple[str, str]] = field(default_factory=list)

    def truncation_notice(self) -> str:
        """One line for the person and the log: where the reply was cut."""
        limit = f"the output limit of {self.limit} tokens" if self.limit else "the provider's output limit"
        if not self.text.strip() and self.reasoning.strip() and not self.tool_calls:
            return f"the model's reasoning used {limit} before it wrote any answer; there is no answer"
        cut = " (a tool call was cut with it and was not run)" if self.served.get("cut_tool_calls") else ""
        return f"the reply was cut off at {limit}; it is incomplete{cut}"


class StreamError(LLMError):
    """The provider reported an error inside a reply (HTTP 200): code ``PROVIDER``, the
    provider's message and code; ``partial`` is what had arrived (marked incomplete) and
    ``shown`` whether any of it was delivered to the person."""

    def __init__(self, message: str, partial: ChatResult, shown: bool, status: int | None = None):
        super().__init__(PROVIDER, message, status)
        self.partial = partial
        self.shown = shown


def sse_data(lines: Iterable[str]) -> Iterator[str]:
    """The ``data`` of each server-sent event in a stream's lines (WHATWG HTML, "Server-sent
    events", interpreting an event stream): ``data`` lines joined by newlines (one space after
    the colon dropped), dispatched at a blank line; comments (``:``, OpenRouter's keep-alives),
    ``event``, ``id`` and ``retry`` lines ignored; an event left without its blank line when the
    stream ends is discarded. Lines come from httpx's ``iter_lines`` (CRLF, LF or CR
    ended). Read here rather than by a library: this is the loop every delta goes through
    (benchmarks/bench_llm.py)."""
    data: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            data.append(line[6:] if line.startswith("data: ") else line[5:])
        elif not line:
            if data:
                yield data[0] if len(data) == 1 else "\n".join(data)
                data = []
        elif line == "data":
            data.append("")


async def asse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """:func:`sse_data` over ``aiter_lines``."""
    data: list[str] = []
    async for line in lines:
        if line.startswith("data:"):
            data.append(line[6:] if line.startswith("data: ") else line[5:])
        elif not line:
            if data:
                yield data[0] if len(data) == 1 else "\n".join(data)
                data = []
        elif line == "data":
            data.append("")


def generated_id(kind: str = "any") -> str:
    """A tool-call id for a call the provider sent without one: ``call_`` and 24 hex digits, or
    9 letters and digits for ``alnum9`` providers."""
    if kind == "alnum9":
        return "".join(secrets.choice(_ALNUM) for _ in range(9))
    return "call_" + secrets.token_hex(12)


_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")
_ANTHROPIC_EVENTS = ("message_start", "content_block_start", "content_block_delta", "content_block_stop",
                     "message_delta", "message_stop", "ping")
_OPAQUE_MESSAGE = ("extra_content", "thought_signature")


class Assembler:
    """Folds streamed chunks (:meth:`event`) or one non-streamed body (:meth:`body`) into a
    :class:`ChatResult` (:meth:`finish`). ``on_delta(kind, piece)`` gets ``text``,
    ``reasoning`` and ``refusal`` pieces as they arrive."""

    def __init__(self, result: ChatResult, on_delta: Callable[[str, str], None] | None,
                 reasoning_fields: tuple[str, ...] | list[str] = _REASONING_FIELDS, tool_id: str = "any",
                 where: str = "the provider"):
        self.r = result
        self.on_delta = on_delta
        self.fields = tuple(f for f in reasoning_fields if f in _REASONING_FIELDS) or _REASONING_FIELDS
        self.tool_id = tool_id
        self.where = where
        self.calls: list[dict] = []
        self.by_id: dict[str, dict] = {}  # the latest call of each id, and of each index
        self.by_index: dict[int, dict] = {}
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.details: dict[tuple, dict] = {}  # reasoning_details by (index, type)
        self.shown = False
        self.events = 0
        self._meta_seen = False

    # ------------------------------------------------------------ streamed

    def event(self, data: str) -> None:
        """One streamed event's ``data`` (JSON text; the caller stops at ``[DONE]``)."""
        self.events += 1
        # ``raw_decode`` is ``json.loads`` minus its whitespace and trailing-data checks (about
        # 0.8 of 2 us per event); text it does not consume whole goes through ``json.loads``,
        # which decides (whitespace around the object, extra data, the error message).
        try:
            obj, end = _raw_decode(data)
        except (ValueError, RecursionError):  # not JSON, a number over Python's digit limit, nesting
            end = -1
        if end != len(data):
            obj = parse_json(data, self.where)
        try:
            choices = obj.get("choices")
        except AttributeError:
            raise LLMError(PROTOCOL, f"{self.where} sent a stream event that is not a JSON object") from None
        if not self._meta_seen:
            self._meta(obj)
        # Fast path for the common delta: one choice carrying text only (no reasoning, tool
        # calls, finish reason, usage or error). Anything else goes through :meth:`chunk`.
        if type(choices) is list and len(choices) == 1 and not obj.get("usage") and type(choices[0]) is dict \
                and "error" not in obj:
            choice = choices[0]
            d = choice.get("delta")
            if type(d) is dict and not choice.get("finish_reason"):
                piece = d.get("content")
                if type(piece) is str and piece and (len(d) == 1 or not (
                        d.get("tool_calls") or d.get("reasoning_content") or d.get("reasoning")
                        or d.get("reasoning_details") or d.get("refusal") or d.get("extra_content")
                        or d.get("thought_signature"))):
                    self.text.append(piece)
                    self.shown = True
                    if self.on_delta is not None:
                        self.on_delta("text", piece)
                    return
        self.chunk(obj)

    def chunk(self, data: dict) -> None:
        if not isinstance(data, dict):
            raise LLMError(PROTOCOL, f"{self.where} sent a stream event that is not a JSON object")
        if data.get("error") is not None:
            self._error(data)
        if "choices" not in data and data.get("type") in _ANTHROPIC_EVENTS:
            raise LLMError(PROTOCOL, f"{self.where} sent an Anthropic Messages stream ({data['type']} event), not "
                                     f"OpenAI chat completions: check the provider's base_url and protocol")
        try:
            self._chunk(data)
        except (AttributeError, TypeError, ValueError, KeyError, OverflowError) as exc:
            raise LLMError(PROTOCOL, f"{self.where} sent a stream event of an unexpected shape "
                                     f"({type(exc).__name__}: {exc}): {_excerpt(data)}") from None

    def _meta(self, data: dict) -> None:
        model = data.get("model")
        if isinstance(model, str) and model:
            self.r.served["model"] = model
            self._meta_seen = True
        fp = data.get("system_fingerprint")
        if isinstance(fp, str) and fp:
            self.r.served["system_fingerprint"] = fp

    def _chunk(self, data: dict) -> None:
        self._meta(data)
        if data.get("usage"):
            self.r.usage = _usage(data["usage"])
        if isinstance(data.get("timings"), dict):
            self.r.served["timings"] = _usage(data["timings"])
        for choice in data.get("choices") or []:
            if not isinstance(choice, dict):
                raise TypeError(f"a choice is {type(choice).__name__}, not an object")
            d = choice.get("delta") or {}
            if not isinstance(d, dict):
                raise TypeError(f"a delta is {type(d).__name__}, not an object")
            self._reasoning(d)
            self._content(d.get("content"))
            piece = _text(d.get("refusal"))
            if piece:
                self._piece("refusal", piece)
            for tc in d.get("tool_calls") or []:
                self._tool_delta(tc)
            for key in _OPAQUE_MESSAGE:
                if d.get(key) is not None:
                    self.r.opaque[key] = d[key]
            finish = choice.get("finish_reason")
            if finish:
                if not isinstance(finish, str):
                    raise TypeError(f"finish_reason is {type(finish).__name__}")
                if finish == "error":
                    self._error({"error": {"message": "the provider ended the reply with finish_reason 'error'"}})
                self.r.finish_reason = finish

    def _piece(self, kind: str, piece: str) -> None:
        {"text": self.text, "reasoning": self.reasoning, "refusal": self.refusal}[kind].append(piece)
        self.shown = True
        if self.on_delta is not None:
            self.on_delta(kind, piece)

    def _reasoning(self, d: dict) -> None:
        took = False
        for name in self.fields:
            value = d.get(name)
            if not value:
                continue
            if name == "reasoning_details":
                pieces = self._details(value)
                if not took and pieces:
                    self._piece("reasoning", pieces)
                    took = True
                continue
            piece = _text(value)
            if piece and not took:
                self._piece("reasoning", piece)
                took = True
        if "reasoning_details" not in self.fields and d.get("reasoning_details"):
            self._details(d["reasoning_details"])  # kept to be sent back even when not read as text

    def _details(self, value: object) -> str:
        """Merge streamed ``reasoning_details`` items by (index, type); their readable text."""
        if not isinstance(value, list):
            raise TypeError("reasoning_details is not a list")
        text = []
        for item in value:
            if not isinstance(item, dict):
                raise TypeError("a reasoning_details item is not an object")
            key = (item.get("index", len(self.details)), item.get("type"))
            slot = self.details.setdefault(key, {})
            for k, v in item.items():
                if k in ("text", "summary", "data") and isinstance(v, str):
                    slot[k] = slot.get(k, "") + v
                    if k in ("text", "summary"):
                        text.append(v)
                elif v not in (None, "") or k not in slot:
                    slot[k] = v
        return "".join(text)

    def _content(self, value: object) -> None:
        if value is None or isinstance(value, str):
            if value:
                self._piece("text", value)
            return
        if not isinstance(value, list):
            raise TypeError(f"content is {type(value).__name__}, neither text nor a list of parts")
        for part in value:
            if isinstance(part, str):
                if part:
                    self._piece("text", part)
                continue
            if not isinstance(part, dict):
                raise TypeError("a content part is not an object")
            kind = part.get("type")
            if kind == "text" and _text(part.get("text")):
                self._piece("text", part["text"])
            elif kind == "thinking":
                inner = part.get("thinking")
                pieces = inner if isinstance(inner, list) else [inner]
                for p in pieces:
                    t = p.get("text") if isinstance(p, dict) else p
                    if isinstance(t, str) and t:
                        self._piece("reasoning", t)
            elif kind == "refusal" and _text(part.get("refusal")):
                self._piece("refusal", part["refusal"])

    def _tool_delta(self, tc: object) -> None:
        if not isinstance(tc, dict):
            raise TypeError("a tool-call delta is not an object")
        cid = _text(tc.get("id")) or ""
        index = tc.get("index")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise TypeError(f"a tool-call index is {index!r}")
        fn = tc.get("function") or {}
        if not isinstance(fn, dict):
            raise TypeError("a tool call's function is not an object")
        name = _text(fn.get("name")) or ""
        slot = None
        if cid:
            slot = self.by_id.get(cid)
            if slot is not None and index is not None and slot["index"] is not None and slot["index"] != index:
                slot = None  # the same id at another index: another call (its id is made unique at the end)
            if slot is None and index is not None:
                # the first delta of a call may carry the index before its id (some servers)
                slot = self.by_index.get(index)
                if slot is not None and (slot["id"] or (slot["name"] and name)):
                    slot = None
        elif index is not None:
            slot = self.by_index.get(index)
        elif self.calls and not (name and self.calls[-1]["name"]):
            slot = self.calls[-1]
        if slot is None:
            slot = {"id": "", "index": index, "name": "", "arguments": [], "extra": {}}
            self.calls.append(slot)
        if index is not None:
            self.by_index[index] = slot
            if slot["index"] is None:
                slot["index"] = index
        if cid:
            slot["id"] = cid
            self.by_id[cid] = slot
        if name:
            slot["name"] = name
        args = fn.get("arguments")
        if args is not None:
            if isinstance(args, (dict, list)):  # a server that sends the arguments parsed
                args = json.dumps(args, ensure_ascii=False)
            slot["arguments"].append(_text(args) or "")
        for key in ("extra_content", "thought_signature"):
            if tc.get(key) is not None:
                slot["extra"][key] = tc[key]

    def _error(self, data: dict) -> None:
        err = data.get("error")
        message, code = _error_fields(err)
        partial = self._result()
        status = code if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599 else None
        if isinstance(code, str) and code.isascii() and code.isdigit() and len(code) == 3:
            status = int(code)
        if status is None and isinstance(err, dict) and err.get("type") in ("overloaded_error", "server_error"):
            status = 503
        text = f"{self.where} reported an error in the middle of its reply: {_one_line(message, 300) or 'no message'}"
        if code not in (None, ""):
            text += f" (code {_one_line(str(code), 60)})"
        # retried only while nothing was shown (the retry policy reads ``status``)
        raise StreamError(_utf8(text), partial, self.shown, None if self.shown else status)

    # ------------------------------------------------------------ whole body

    def body(self, data: Any) -> None:
        if isinstance(data, dict) and data.get("error") is not None and not data.get("choices"):
            self._error(data)
        try:
            self._meta(data)
            choice = data["choices"][0]
            msg = choice.get("message") or {}
            self._reasoning(msg)
            self._content(msg.get("content"))
            if _text(msg.get("refusal")):
                self.refusal.append(msg["refusal"])
            for tc in msg.get("tool_calls") or []:
                if not isinstance(tc, dict):
                    raise TypeError("a tool call is not an object")
                self.calls.append({"id": "", "index": None, "name": "", "arguments": [], "extra": {}})
                self._tool_delta({**{k: v for k, v in tc.items() if k not in ("index", "id")}, "index": None})
                self.calls[-1]["id"] = _text(tc.get("id")) or ""  # whole calls never continue each other
            for key in _OPAQUE_MESSAGE:
                if msg.get(key) is not None:
                    self.r.opaque[key] = msg[key]
            finish = choice.get("finish_reason")
            if finish is not None and not isinstance(finish, str):
                raise TypeError(f"finish_reason is {type(finish).__name__}")
            self.r.finish_reason = finish
            if self.r.finish_reason == "error":
                self._error({"error": {"message": "the provider ended the reply with finish_reason 'error'"}})
            self.r.usage = _usage(data.get("usage"))
        except (KeyError, IndexError, TypeError, AttributeError, ValueError, OverflowError):
            raise LLMError(PROTOCOL, f"{self.where} sent a reply with no usable choices[0].message: "
                                     f"{_excerpt(data)}") from None

    # ------------------------------------------------------------ the result

    def _result(self) -> ChatResult:
        r = self.r
        r.text = _utf8("".join(self.text))
        r.reasoning = _utf8("".join(self.reasoning))
        if r.text.startswith("<|channel|>"):  # gpt-oss's harmony format, served without a reasoning parser
            r.reasoning, r.text = _harmony(r.text, r.reasoning)
        r.refusal = _utf8("".join(self.refusal))
        if self.details:
            r.opaque["reasoning_details"] = [d for _, d in sorted(self.details.items(), key=lambda kv: str(kv[0]))]
        calls = []
        seen: set[str] = set()
        for c in self.calls:
            if not c["name"] and not c["arguments"]:
                continue
            cid = _utf8(c["id"])
            name = _utf8(c["name"])
            if not cid or cid in seen:
                new = generated_id(self.tool_id)
                why = "without an id" if not cid else f"with the id {_one_line(cid, 60)} of an earlier call"
                r.notices.append(("tool-id", (f"{self.where} sent tool call {_one_line(name, 60)!r} {why}; "
                                             f"it was given the id {new}")))
                cid = new
            seen.add(cid)
            calls.append(ToolCall(cid, name, _utf8("".join(c["arguments"])), _clean(c["extra"])))
        r.tool_calls = calls
        r.opaque = _clean(r.opaque)
        u = r.usage
        served = r.served
        cached = _dig(u, "prompt_tokens_details", "cached_tokens")
        if cached is None:
            cached = u.get("prompt_cache_hit_tokens", u.get("num_cached_tokens"))
        if cached is not None:
            served["cached_tokens"] = cached
        reasoning = _dig(u, "completion_tokens_details", "reasoning_tokens")
        if reasoning is not None:
            served["reasoning_tokens"] = reasoning
        if "cost" in u:
            served["cost"] = u["cost"]
        r.served = _clean(served)
        return r

    def finish(self) -> ChatResult:
        r = self._result()
        if r.finish_reason is None:
            if self.events == 0 and not r.text:
                raise LLMError(PROTOCOL, f"{self.where} answered HTTP 200 with an empty reply (no events)")
            raise LLMError(PROTOCOL, f"{self.where}'s reply stopped before it finished (no finish reason"
                                     f"{'; ' + str(len(r.text)) + ' characters of text had arrived' if r.text else ''})")
        if r.finish_reason in ("length", "max_tokens", "content_filter"):
            r.truncated = r.finish_reason != "content_filter"
            if r.tool_calls:
                # a call cut mid-arguments is never run
                r.served["cut_tool_calls"] = [c.name for c in r.tool_calls]
                r.tool_calls = []
        return r


# --------------------------------------------------------------------------- helpers


def _error_fields(err: object) -> tuple[str, Any]:
    """``(message, code)`` of an error object as providers write it."""
    if isinstance(err, str):
        return err, None
    if isinstance(err, list) and err:
        return _error_fields(err[0].get("error", err[0]) if isinstance(err[0], dict) else err[0])
    if not isinstance(err, dict):
        return "", None
    message = err.get("message")
    if not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False) if message is not None else ""
    code = err.get("code")
    if code is None:
        code = err.get("type")
    meta = err.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("raw"), str) and meta["raw"] not in message:
        message += f" ({meta['raw'][:200]})"
    return message, code


_HARMONY = re.compile(r"<\|channel\|>([A-Za-z_]+)(?:[^<]*)<\|message\|>(.*?)(?=<\|(?:end|start|return|call)\|>|$)", re.DOTALL)


def _harmony(text: str, reasoning: str) -> tuple[str, str]:
    """``(reasoning, answer)`` of a reply in OpenAI's harmony format (gpt-oss: ``<|channel|>analysis
    <|message|>...<|start|>assistant<|channel|>final<|message|>...``), as llama.cpp serves it
    when its reasoning parser is off; text in another shape is left as it is."""
    parts = _HARMONY.findall(text)
    if not parts:
        return reasoning, text
    thought = [body for channel, body in parts if channel == "analysis"]
    answer = [body for channel, body in parts if channel != "analysis"]
    return reasoning + "".join(thought), "".join(answer)


def _clean(value: Any, depth: int = 0) -> Any:
    """A value from the provider as a log can hold it: strings valid UTF-8 (lone surrogates as
    U+FFFD), non-finite numbers as ``None``, nesting beyond 32 levels dropped."""
    if isinstance(value, str):
        return _utf8(value)
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if depth > 32:
        return None
    if isinstance(value, dict):
        return {_utf8(str(k)): _clean(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v, depth + 1) for v in value]
    return value


def _one_line(text: str, limit: int) -> str:
    text = " ".join(_utf8(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _dig(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _text(value: object) -> str | None:
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


def _usage(value: object) -> dict:
    """Counts as reported: whole numbers and (for ``cost``) decimals, nested one level."""
    if not isinstance(value, dict):
        return {}
    out: dict = {}
    for k, v in value.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf"):
            out[str(k)] = v
        elif isinstance(v, dict):
            inner = {str(a): b for a, b in v.items()
                     if isinstance(b, (int, float)) and not isinstance(b, bool) and b == b and abs(b) != float("inf")}
            if inner:
                out[str(k)] = inner
    return out


def _excerpt(data: object) -> str:
    try:
        text = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(data)
    return text if len(text) <= 160 else text[:160] + "…"


_raw_decode = json.JSONDecoder().raw_decode


def parse_json(text: str, where: str = "the provider") -> Any:
    """``text`` as JSON; ``PROTOCOL`` naming ``where`` when it is not JSON Python can read."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LLMError(PROTOCOL, f"{where} sent something that is not JSON ({exc.msg} at {exc.pos})") from None
    except ValueError as exc:  # a number over Python's digit limit
        raise LLMError(PROTOCOL, f"{where} sent JSON that cannot be read ({' '.join(str(exc).split())[:120]})") from None
    except RecursionError:
        raise LLMError(PROTOCOL, f"{where} sent JSON nested too deeply to be read") from None
