"""Anthropic's Messages API as the ``anthropic-messages`` protocol (issue 20; Anthropic's
documentation "Messages", "Streaming Messages", "Extended thinking"; the recorded streams
``anthropic__*`` in ``../shared/fixtures/providers/``).

The client builds every request in the OpenAI shape first (hooks, capabilities, the context
window); :func:`request` then turns it into a Messages request:

* system messages at the head become ``system``; a system message later in the history (a
  steering notice) becomes a text block of the next user message, Anthropic having no system
  role inside a conversation;
* an assistant message becomes content blocks: its thinking blocks (kept verbatim with their
  signatures, as Anthropic requires them back before the tool results of the same turn), its
  text, then one ``tool_use`` block per tool call (the arguments as a JSON object);
* tool messages become ``tool_result`` blocks of one user message; messages of one role in a
  row are merged (Anthropic alternates user and assistant);
* ``max_tokens`` is always sent (the model's ``default_max_tokens`` when nothing set it);
  a ``reasoning_effort`` (academic mode's strongest) becomes an extended-thinking budget of
  :data:`THINKING_BUDGETS` tokens, at most half of ``max_tokens`` (none below 1024).

:class:`AnthropicAssembler` folds the streamed events (``message_start``,
``content_block_start``/``delta``/``stop`` with ``text_delta``, ``thinking_delta``,
``signature_delta`` and ``input_json_delta``, ``message_delta``, ``message_stop``, ``ping``,
``error``) or a whole body into the same :class:`~.stream.ChatResult` as the OpenAI wire:
``stop_reason`` ``max_tokens`` is a truncation, ``refusal`` a filtered stop, an ``error`` event
a :class:`~.stream.StreamError` (``overloaded_error`` retried as HTTP 529 while nothing was
shown).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from typing import Any

from ..errors import PROTOCOL, LLMError
from .stream import Assembler, ChatResult, _clean, _excerpt, _text, parse_json
from .stream import _usage as usage_counts

_raw_decode = json.JSONDecoder().raw_decode
_TOOL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

__all__ = ["ANTHROPIC_VERSION", "THINKING_BUDGETS", "AnthropicAssembler", "request"]

#: The ``anthropic-version`` header sent with every request.
ANTHROPIC_VERSION = "2023-06-01"
#: Extended-thinking budgets (tokens) for the efforts a model declares, weakest to strongest.
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "max": 32768}
#: The opaque field an assistant message's thinking blocks travel in (session log and history).
THINKING_FIELD = "anthropic_thinking"

_STOP = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
         "refusal": "content_filter", "pause_turn": "stop", "model_context_window_exceeded": "length"}


def _arguments(text: str) -> dict:
    """Tool-call arguments as the JSON object ``tool_use.input`` must be (a call whose
    arguments are not an object sends them under ``arguments``, so nothing is lost; numbers
    JSON cannot carry become null, lone surrogates U+FFFD)."""
    try:
        value = _clean(json.loads(text or "{}"))
    except (ValueError, RecursionError):
        return {"arguments": _clean(text)}
    return value if isinstance(value, dict) else {"arguments": value}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _tool_id(cid: object, seen: dict[str, str]) -> str:
    """A tool-call id as Anthropic takes it (``[A-Za-z0-9_-]``, at most 64): kept when it is one,
    else a stable digest, the same for the call and its result (ids of another provider, such as
    ``functions.get_weather:0``)."""
    text = str(cid or "")
    if _TOOL_ID.fullmatch(text):
        return text
    if text not in seen:
        seen[text] = "toolu_" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:24]
    return seen[text]


def _convert(body: dict, keep_thinking: bool) -> tuple[list[str], list[dict]]:
    """``(system texts, messages)`` of an OpenAI-shaped body; thinking blocks only if kept."""
    system: list[str] = []
    messages: list[dict] = []
    pending: list[dict] = []  # blocks waiting for the next user message (notices, tool results)
    ids: dict[str, str] = {}

    def add(role: str, blocks: list[dict]) -> None:
        if not blocks:
            return
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": list(blocks)})

    head = True
    for m in body.get("messages", []):
        role = m.get("role")
        if role == "system":
            text = _text_of(m.get("content"))
            if head:
                system.append(text)
            elif text.strip():  # Anthropic refuses text blocks of whitespace only
                pending.append({"type": "text", "text": text})
            continue
        head = False
        if role == "user":
            text = _text_of(m.get("content"))
            add("user", [*pending, {"type": "text", "text": text if text.strip() else "(no text)"}])
            pending = []
        elif role == "tool":
            add("user", [*pending, {"type": "tool_result", "tool_use_id": _tool_id(m.get("tool_call_id"), ids),
                                    "content": _text_of(m.get("content"))}])
            pending = []
        elif role == "assistant":
            if pending:
                add("user", pending)
                pending = []
            blocks: list[dict] = []
            for block in m.get(THINKING_FIELD) or [] if keep_thinking else []:
                if isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking"):
                    blocks.append(block)
            text = _text_of(m.get("content"))
            if text.strip():
                blocks.append({"type": "text", "text": text})
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                blocks.append({"type": "tool_use", "id": _tool_id(c.get("id"), ids), "name": str(fn.get("name", "")),
                               "input": _arguments(fn.get("arguments") or "")})
            add("assistant", blocks)  # an empty reply is left out: the user turns around it merge
    if pending:
        add("user", pending)
    return system, messages


def _loop_without_thinking(messages: list[dict]) -> bool:
    """Whether the request continues a tool loop whose last assistant message does not start
    with a thinking block (academic mode switched on inside a turn): Anthropic refuses thinking
    then ("a final assistant message must start with a thinking block")."""
    if not messages or messages[-1]["role"] != "user":
        return False
    if not any(b.get("type") == "tool_result" for b in messages[-1]["content"]):
        return False
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    return last is not None and last["content"][0].get("type") not in ("thinking", "redacted_thinking")


def request(body: dict, default_max_tokens: int) -> dict:
    """The Messages request for an OpenAI-shaped chat ``body`` (see the module docstring)."""
    limit = body.get("max_tokens") or body.get("max_completion_tokens") or default_max_tokens
    effort = body.get("reasoning_effort")
    budget = min(THINKING_BUDGETS.get(str(effort), 0), int(limit) // 2)
    thinking_on = bool(effort) and budget >= 1024
    system, messages = _convert(body, thinking_on)
    if thinking_on and _loop_without_thinking(messages):
        thinking_on = False  # thinking starts with the next user turn
        system, messages = _convert(body, False)
    out: dict = {"model": body["model"], "messages": messages}
    if any(system):
        out["system"] = "\n\n".join(s for s in system if s)
    out["max_tokens"] = int(limit)
    if body.get("stream"):
        out["stream"] = True
    if body.get("tools"):
        out["tools"] = [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
                         "input_schema": t["function"].get("parameters") or {"type": "object"}}
                        for t in body["tools"] if isinstance(t, dict) and isinstance(t.get("function"), dict)]
    if thinking_on:
        out["thinking"] = {"type": "enabled", "budget_tokens": budget}
    else:
        for key in ("temperature", "top_p"):
            if key in body:
                out[key] = body[key]
    if isinstance(body.get("stop"), (str, list)):
        out["stop_sequences"] = [body["stop"]] if isinstance(body["stop"], str) else body["stop"]
    return out


class AnthropicAssembler(Assembler):
    """Anthropic's events (or a whole Messages body) into a :class:`~.stream.ChatResult`."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.blocks: dict[int, dict] = {}  # content blocks by index, as they stream
        self.order: list[int] = []
        self.input_usage: dict = {}

    def event(self, data: str) -> None:
        self.events += 1
        try:  # as the OpenAI assembler: raw_decode, json.loads deciding anything it does not take whole
            obj, end = _raw_decode(data)
        except (ValueError, RecursionError):
            end = -1
        if end != len(data):
            obj = parse_json(data, self.where)
        # fast path: a text delta (most events of a reply)
        if type(obj) is dict and obj.get("type") == "content_block_delta":
            d = obj.get("delta")
            if type(d) is dict and d.get("type") == "text_delta":
                piece = d.get("text")
                if type(piece) is str:
                    if piece:
                        self.text.append(piece)
                        self.shown = True
                        if self.on_delta is not None:
                            self.on_delta("text", piece)
                    return
        if not isinstance(obj, dict):
            raise LLMError(PROTOCOL, f"{self.where} sent a stream event that is not a JSON object")
        self._guard(self._event, obj)

    def _guard(self, fn: Callable[[dict], None], obj: dict) -> None:
        try:
            fn(obj)
        except (AttributeError, TypeError, ValueError, KeyError, OverflowError) as exc:
            raise LLMError(PROTOCOL, f"{self.where} sent an event of an unexpected shape ({type(exc).__name__}: "
                                     f"{exc}): {_excerpt(obj)}") from None

    def _event(self, obj: dict) -> None:
        kind = obj.get("type")
        if kind == "error" or (obj.get("error") is not None and kind != "message_delta"):
            err = obj.get("error")
            if isinstance(err, dict) and err.get("type") == "overloaded_error":
                err = {**err, "code": 529}
            self._error({"error": err})
        if kind == "message_start":
            msg = obj.get("message") or {}
            self._meta(msg)
            self._usage(msg.get("usage"))
        elif kind == "content_block_start":
            self._start(int(obj["index"]), obj.get("content_block") or {})
        elif kind == "content_block_delta":
            self._delta(int(obj["index"]), obj.get("delta") or {})
        elif kind == "message_delta":
            delta = obj.get("delta") or {}
            stop = delta.get("stop_reason")
            if stop is not None:
                if not isinstance(stop, str):
                    raise TypeError(f"stop_reason is {type(stop).__name__}")
                self.r.finish_reason = _STOP.get(stop, stop)
            self._usage(obj.get("usage"))
        elif "choices" in obj:
            raise LLMError(PROTOCOL, f"{self.where} sent an OpenAI chat-completions stream, not Anthropic Messages: "
                                     f"check the provider's base_url and protocol")
        elif kind in ("ping", "content_block_stop", "message_stop", None):
            pass

    def _start(self, index: int, block: dict) -> None:
        kind = block.get("type")
        known = self.blocks.get(index)
        if known is not None and known.get("type") is not None:
            return  # a block started twice: the first start stands
        slot: dict = {"type": kind}
        if known is None:
            self.order.append(index)
        else:  # its deltas came first: keep what they carried
            slot.update({k: v for k, v in known.items() if k != "type"})
        self.blocks[index] = slot
        if kind == "text":
            if _text(block.get("text")):
                self._piece("text", block["text"])
        elif kind == "thinking":
            first = _text(block.get("thinking")) or ""
            slot["thinking"] = [first, *slot.get("thinking", [])]
            slot["signature"] = (_text(block.get("signature")) or "") + slot.get("signature", "")
            if first:
                self._piece("reasoning", first)
        elif kind == "redacted_thinking":
            slot["data"] = _text(block.get("data")) or ""
        elif kind in ("tool_use", "server_tool_use"):
            given = block.get("input")
            slot.update(id=_text(block.get("id")) or "", name=_text(block.get("name")) or "",
                        given=given if isinstance(given, dict) else {})
            slot.setdefault("json", [])

    def _delta(self, index: int, delta: dict) -> None:
        slot = self.blocks.get(index)
        if slot is None:  # a delta before its block started: kept for the start (or read alone)
            slot = self.blocks[index] = {"type": None}
            self.order.append(index)
        kind = delta.get("type")
        if kind == "text_delta":
            piece = _text(delta.get("text")) or ""
            if piece:
                self._piece("text", piece)
        elif kind == "thinking_delta":
            piece = _text(delta.get("thinking")) or ""
            slot.setdefault("thinking", []).append(piece)
            slot["type"] = "thinking"
            if piece:
                self._piece("reasoning", piece)
        elif kind == "signature_delta":
            slot["signature"] = slot.get("signature", "") + (_text(delta.get("signature")) or "")
        elif kind == "input_json_delta":
            slot.setdefault("json", []).append(_text(delta.get("partial_json")) or "")

    def _usage(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        self.input_usage.update(usage_counts(usage))
        u = self.input_usage
        prompt = sum(u.get(k, 0) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
                     if isinstance(u.get(k), (int, float)))
        out = u.get("output_tokens", 0)
        self.r.usage = dict(u)
        if math.isfinite(prompt) and math.isfinite(prompt + out):  # two huge floats may sum past the limit
            self.r.usage.update(prompt_tokens=prompt, completion_tokens=out, total_tokens=prompt + out)
        if "cache_read_input_tokens" in u:
            self.r.served["cached_tokens"] = u["cache_read_input_tokens"]

    def body(self, data: Any) -> None:
        """A whole (unstreamed) Messages reply."""
        if not isinstance(data, dict):
            raise LLMError(PROTOCOL, f"{self.where} sent a reply that is not a JSON object")

        def fold(obj: dict) -> None:
            if "choices" in obj:
                self._event(obj)  # names an OpenAI reply at an Anthropic provider
            if obj.get("type") == "error" or obj.get("error") is not None:
                self._event({"type": "error", "error": obj.get("error")})
            self._meta(obj)
            self._usage(obj.get("usage"))
            for i, block in enumerate(obj.get("content") or []):
                if not isinstance(block, dict):
                    raise TypeError("a content block is not an object")
                self._start(i, {**block, **({"text": ""} if block.get("type") == "text" else {})})
                if block.get("type") == "text" and _text(block.get("text")):
                    self._piece("text", block["text"])
                if block.get("type") in ("tool_use", "server_tool_use"):
                    self.blocks[i]["json"] = [json.dumps(block.get("input") or {}, ensure_ascii=False)]
            stop = obj.get("stop_reason")
            if stop is not None and not isinstance(stop, str):
                raise TypeError(f"stop_reason is {type(stop).__name__}")
            self.r.finish_reason = _STOP.get(stop, stop) if stop else None

        self._guard(fold, data)

    def _result(self) -> ChatResult:
        thinking: list[dict] = []
        for index in self.order:
            slot = self.blocks.get(index) or {}
            kind = slot.get("type")
            if kind == "thinking":
                thinking.append({"type": "thinking", "thinking": "".join(slot.get("thinking", [])),
                                 "signature": slot.get("signature", "")})
            elif kind == "redacted_thinking":
                thinking.append({"type": "redacted_thinking", "data": slot.get("data", "")})
            elif kind == "tool_use":  # a server tool (web search) ran at Anthropic: nothing to run here
                args = "".join(slot.get("json", [])) or json.dumps(slot.get("given") or {})
                self.calls.append({"id": slot.get("id", ""), "index": index, "name": slot.get("name", ""),
                                   "arguments": [args], "extra": {}})
        self.order = []  # folded once
        if thinking:
            self.r.opaque[THINKING_FIELD] = _clean(thinking)
        return super()._result()
