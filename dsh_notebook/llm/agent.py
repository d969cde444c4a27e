"""The agent loop: turns, steps, tools, stop hooks (spec: llm.md "Agent loop").

* A turn is the user's message and everything until the assistant stops; a step is one
  model request plus the tool calls it made. Every event goes to the session log first;
  the request is built from the log (:func:`.session.history`).
* Tools have a name, a description, a JSON Schema for their arguments (checked before the
  function runs) and a function returning a JSON value; invalid arguments or a raising
  function become an error result the model sees.
* Before a turn ends, stop hooks run in order; a hook may return one steering text, logged
  as a ``notice``, and the turn continues. ``max_steps`` (default 24) ends runaway turns
  with ``BUDGET``. Cancellation (``KeyboardInterrupt`` or the ``cancel`` event) ends the
  turn with ``turn/end`` status ``cancelled``.
* A reply cut at the output limit ends the turn ``truncated`` (a content filter's stop:
  ``filtered``) with a notice the model sees next time, its tool calls (cut with it) never run;
  an error inside a reply keeps what arrived as an assistant message marked ``incomplete``
  before the turn ends ``error`` (issue 19). Notices for the person only (``form: info``: a
  model not declared, history left out to fit the window, a generated tool-call id) are logged
  before the reply.
"""

from __future__ import annotations

import contextvars
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import BUDGET, CANCELLED, LLMError
from .client import ChatClient
from .hooks import StopHook, default_stop_hooks
from .prompt import SystemPrompt
from .session import SessionLog, history
from .stream import ChatResult, StreamError


@dataclass
class Tool:
    """A tool the model may call: ``fn(arguments) -> JSON value``. ``parameters`` is the JSON
    Schema sent to the model and, when ``validate``, checked before ``fn`` runs. A tool that
    checks its own arguments (the engine's, which records a refusal) sets ``validate=False``
    and may give ``refuse(message) -> result`` for arguments that are not JSON at all."""

    name: str
    description: str
    parameters: dict
    fn: Callable[[dict], Any]
    validate: bool = True
    refuse: Callable[[str], Any] | None = None

    def schema(self) -> dict:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}


#: The running turn's cancel event, for a tool that makes model calls of its own (the search
#: extraction): ``current_cancel.get()`` is the event, or ``None`` outside a turn.
current_cancel: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("current_cancel",
                                                                                      default=None)


@dataclass
class TurnResult:
    """``status`` is ``completed``, ``truncated`` (the reply was cut at the output limit),
    ``filtered`` (a content filter stopped it), ``cancelled`` or ``error``; ``text`` the final
    answer, ``refusal`` the model's refusal if it sent one, ``notice`` why a turn is
    incomplete."""

    status: str
    text: str = ""
    steps: int = 0
    error: str | None = None
    tool_calls: list[dict] = field(default_factory=list)
    notice: str | None = None
    refusal: str = ""


#: A stop hook sees the turn so far (its events) and the answer; it returns a steering text
#: to send the answer back once, or None to let the turn end.


class Agent:
    """``Agent(client, log, tools=(), stop_hooks=None, max_steps=24, system=None)``;
    ``run_turn(text)``. ``stop_hooks=None`` means :func:`default_stop_hooks` (academic
    mode's gate); a hook's ``kind`` attribute names the source of its notice. ``system`` is
    an optional :class:`~.prompt.SystemPrompt` replacing the logged system text in requests
    (it must render to the same text: the log stays the source)."""

    def __init__(self, client: ChatClient, log: SessionLog, tools: Iterable[Tool] = (),
                 stop_hooks: Iterable[StopHook] | None = None, max_steps: int = 24,
                 notice_kind: str = "steer", system: SystemPrompt | None = None) -> None:
        self.client = client
        self.log = log
        self.tools = {t.name: t for t in tools}
        self.stop_hooks: list[StopHook] = default_stop_hooks() if stop_hooks is None else list(stop_hooks)
        self.system = system
        self.max_steps = max_steps
        self.notice_kind = notice_kind

    def run_turn(self, text: str, on_delta: Callable[[str, str], None] | None = None,
                 cancel: threading.Event | None = None) -> TurnResult:
        token = current_cancel.set(cancel)
        try:
            return self._run_turn(text, on_delta, cancel)
        finally:
            current_cancel.reset(token)

    def _run_turn(self, text: str, on_delta: Callable[[str, str], None] | None,
                  cancel: threading.Event | None) -> TurnResult:
        log = self.log
        turn = 1 + sum(1 for e in log.events if e.get("type") == "turn/start")
        log.append("turn/start", turn=turn)
        turn_start = len(log.events) - 1
        calls_made: list[dict] = []
        steered: set[int] = set()
        step = 0
        try:
            log.append("user/message", text=text)
            while True:
                if step >= self.max_steps:
                    raise LLMError(BUDGET, f"the turn reached its limit of {self.max_steps} steps without an answer")
                step += 1
                log.append("step/start", step=step)
                schemas = [t.schema() for t in self.tools.values()] or None
                try:
                    result = self.client.complete(history(log.events, self.client.provider_id), tools=schemas,
                                                  on_delta=on_delta, cancel=cancel, system=self.system)
                except StreamError as exc:  # an error inside the reply: what arrived is kept, marked incomplete
                    if cancel is not None and cancel.is_set():
                        raise
                    try:
                        self._log_reply(exc.partial, incomplete=True)
                    except Exception:  # noqa: BLE001, S110 - the partial reply unlogged; the error ends the turn
                        pass
                    raise
                calls = self._log_reply(result)
                for c in calls:
                    if cancel is not None and cancel.is_set():
                        raise LLMError(CANCELLED, "the turn was cancelled")
                    log.append("tool/call", **c)
                    ok, content = self._run_tool(c)
                    if ok and isinstance(content, dict) and content.get("ok") is False:
                        ok = False  # the tool ran and refused (an engine receipt with ok: false)
                    log.append("tool/result", id=c["id"], name=c["name"], ok=ok, content=content)
                    calls_made.append({**c, "ok": ok})
                end: dict[str, Any] = {"usage": result.usage, "finish_reason": result.finish_reason}
                if result.served:
                    end["served"] = result.served
                log.append("step/end", step=step, **end)
                if calls:
                    continue
                if result.truncated or result.finish_reason == "content_filter":
                    status = "truncated" if result.truncated else "filtered"
                    why = result.truncation_notice() if result.truncated else \
                        "the provider's content filter stopped the reply; it is incomplete"
                    log.append("notice", kind=status, form="notice", text=f"(Note: {why}.)")
                    log.append("turn/end", status=status, reason=why)
                    return TurnResult(status, result.text, step, tool_calls=calls_made, notice=why,
                                      refusal=result.refusal)
                steer, hook_used = None, None
                for i, hook in enumerate(self.stop_hooks):
                    if i in steered:
                        continue
                    steer = hook(log.events[turn_start:], result.text)
                    if steer:
                        steered.add(i)
                        hook_used = hook
                        break
                if steer:
                    kind = getattr(hook_used, "kind", self.notice_kind)
                    log.append("notice", kind=kind, form="notice", text=steer)
                    continue
                log.append("turn/end", status="completed")
                return TurnResult("completed", result.text, step, tool_calls=calls_made, refusal=result.refusal)
        except (KeyboardInterrupt, LLMError) as exc:
            # a stop request may surface as a transport error when the connection is closed under it
            if isinstance(exc, KeyboardInterrupt) or exc.code == CANCELLED or (cancel is not None and cancel.is_set()):
                log.append("turn/end", status="cancelled")
                return TurnResult("cancelled", "", step, tool_calls=calls_made)
            failed: dict[str, Any] = {"status": "error", "code": exc.code, "error": exc.message}
            if isinstance(exc, StreamError) and exc.partial.text:
                failed["partial"] = True  # the assistant message before this holds what arrived
            log.append("turn/end", **failed)
            raise
        except Exception as exc:  # a fault of ours (or of a tool's value): the turn still ends in the log
            try:
                log.append("turn/end", status="error", code=type(exc).__name__, error=str(exc)[:500])
            except Exception:  # noqa: BLE001, S110 - the log itself failed; the original fault is raised
                pass
            raise

    def _log_reply(self, result: ChatResult, incomplete: bool = False) -> list[dict]:
        """Log one reply (its notices for the person first) and return its tool calls as
        logged. ``incomplete``: an error cut it (its tool calls are not kept: none is run)."""
        log = self.log
        start = max((i for i, e in enumerate(log.events) if e.get("type") == "turn/start"), default=0)
        said = {e.get("kind") for e in log.events[start:] if e.get("type") == "notice" and e.get("form") == "info"}
        for kind, text in result.notices:
            if kind in ("context", "model") and kind in said:
                continue  # once a turn: every step of a long turn may leave the same turns out
            said.add(kind)
            log.append("notice", kind=kind, form="info", text=text)
        calls = [] if incomplete else [{"id": c.id, "name": c.name, "arguments": c.arguments}
                                       for c in result.tool_calls]
        event: dict[str, Any] = {"text": result.text, "tool_calls": calls}
        if result.reasoning:
            event["reasoning"] = result.reasoning
        if result.refusal:
            event["refusal"] = result.refusal
        extras = {c.id: c.extra for c in result.tool_calls if c.extra and not incomplete}
        if result.opaque or extras:
            event["opaque"] = {"provider": self.client.provider_id, "message": result.opaque, "tool_calls": extras}
        if result.shaping:
            event["shaping"] = result.shaping
        if result.truncated:
            event["truncated"] = True
        if incomplete:
            event["incomplete"] = True
        log.append("assistant/message", **event)
        return calls

    def _run_tool(self, call: dict) -> tuple[bool, Any]:
        tool = self.tools.get(call["name"])
        if tool is None:
            return False, {"error": f"there is no tool {call['name']!r}; the tools are {', '.join(self.tools) or 'none'}"}
        try:
            args = json.loads(call.get("arguments") or "{}")
        except json.JSONDecodeError as exc:
            message = f"the arguments are not JSON ({exc.msg}); send a JSON object"
            if tool.refuse is not None:
                return False, tool.refuse(message)
            return False, {"error": message}
        if tool.validate:
            import jsonschema  # here, not at import: it costs %load_ext ~1.7 s (issue 13)

            try:
                jsonschema.validate(args, tool.parameters)
            except jsonschema.ValidationError as exc:
                where = "/".join(str(p) for p in exc.absolute_path) or "the arguments"
                return False, {"error": f"invalid arguments for {tool.name}: {where}: {exc.message}"}
        try:
            result = tool.fn(args)
        except Exception as exc:  # noqa: BLE001 - a tool's own fault: the model sees the failure; the turn goes on
            return False, {"error": f"{tool.name} failed: {type(exc).__name__}: {exc}"}
        try:
            json.dumps(result, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError) as exc:
            return False, {"error": f"{tool.name} returned a value that is not strict JSON ({type(exc).__name__}: "
                                    f"{str(exc)[:200]})"}
        return True, result
