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
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import jsonschema

from .client import ChatClient
from .errors import BUDGET, CANCELLED, LLMError
from .session import SessionLog, history


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict
    fn: Callable[[dict], Any]

    def schema(self) -> dict:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}


@dataclass
class TurnResult:
    """``status`` is ``completed``, ``cancelled`` or ``error``; ``text`` the final answer."""

    status: str
    text: str = ""
    steps: int = 0
    error: str | None = None
    tool_calls: list[dict] = field(default_factory=list)


#: A stop hook sees the turn so far (its events) and the answer; it returns a steering text
#: to send the answer back once, or None to let the turn end.
StopHook = Callable[[list[dict], str], "str | None"]


class Agent:
    """``Agent(client, log, tools=(), stop_hooks=(), max_steps=24)``; ``run_turn(text)``."""

    def __init__(self, client: ChatClient, log: SessionLog, tools=(), stop_hooks=(), max_steps: int = 24,
                 notice_kind: str = "steer"):
        self.client = client
        self.log = log
        self.tools = {t.name: t for t in tools}
        self.stop_hooks: list[StopHook] = list(stop_hooks)
        self.max_steps = max_steps
        self.notice_kind = notice_kind

    def run_turn(self, text: str, on_delta=None, cancel: threading.Event | None = None) -> TurnResult:
        log = self.log
        turn = 1 + sum(1 for e in log.events if e.get("type") == "turn/start")
        log.append("turn/start", turn=turn)
        log.append("user/message", text=text)
        turn_start = len(log.events) - 2
        calls_made: list[dict] = []
        steered: set[int] = set()
        step = 0
        try:
            while True:
                if step >= self.max_steps:
                    raise LLMError(BUDGET, f"the turn reached its limit of {self.max_steps} steps without an answer")
                step += 1
                log.append("step/start", step=step)
                schemas = [t.schema() for t in self.tools.values()] or None
                result = self.client.complete(history(log.events), tools=schemas, on_delta=on_delta, cancel=cancel)
                calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in result.tool_calls]
                event = {"text": result.text, "tool_calls": calls}
                if result.reasoning:
                    event["reasoning"] = result.reasoning
                if result.shaping:
                    event["shaping"] = result.shaping
                log.append("assistant/message", **event)
                for c in calls:
                    if cancel is not None and cancel.is_set():
                        raise LLMError(CANCELLED, "the turn was cancelled")
                    log.append("tool/call", **c)
                    ok, content = self._run_tool(c)
                    log.append("tool/result", id=c["id"], name=c["name"], ok=ok, content=content)
                    calls_made.append({**c, "ok": ok})
                log.append("step/end", step=step, usage=result.usage, finish_reason=result.finish_reason)
                if calls:
                    continue
                steer = None
                for i, hook in enumerate(self.stop_hooks):
                    if i in steered:
                        continue
                    steer = hook(log.events[turn_start:], result.text)
                    if steer:
                        steered.add(i)
                        break
                if steer:
                    log.append("notice", kind=self.notice_kind, form="notice", text=steer)
                    continue
                log.append("turn/end", status="completed")
                return TurnResult("completed", result.text, step, tool_calls=calls_made)
        except (KeyboardInterrupt, LLMError) as exc:
            # a stop request may surface as a transport error when the connection is closed under it
            cancelled = (isinstance(exc, KeyboardInterrupt) or exc.code == CANCELLED
                         or (cancel is not None and cancel.is_set()))
            if cancelled:
                log.append("turn/end", status="cancelled")
                return TurnResult("cancelled", "", step, tool_calls=calls_made)
            log.append("turn/end", status="error", code=exc.code, error=exc.message)
            raise

    def _run_tool(self, call: dict) -> tuple[bool, Any]:
        tool = self.tools.get(call["name"])
        if tool is None:
            return False, {"error": f"there is no tool {call['name']!r}; the tools are {', '.join(self.tools) or 'none'}"}
        try:
            args = json.loads(call.get("arguments") or "{}")
        except json.JSONDecodeError as exc:
            return False, {"error": f"the arguments are not JSON ({exc.msg}); send a JSON object"}
        try:
            jsonschema.validate(args, tool.parameters)
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "the arguments"
            return False, {"error": f"invalid arguments for {tool.name}: {where}: {exc.message}"}
        try:
            return True, tool.fn(args)
        except Exception as exc:  # the model sees the failure; the turn goes on
            return False, {"error": f"{tool.name} failed: {type(exc).__name__}: {exc}"}
