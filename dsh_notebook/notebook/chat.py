"""``%%chat``: a conversation with a model from a notebook cell (spec: llm.md "``%%chat``",
"Presets from the reckoner seed"; storage.md "What goes into the notebook").

* ``%%chat [--session NAME] [--preset plain|reckoner|reckoner-with-search] [--model ID] [--new]``;
  the cell body is the user's message. A session continues across cells until ``--new``;
  ``--session NAME`` keeps parallel conversations apart, and naming a session id of this
  notebook's ``sessions/`` folder continues that logged session (its history is rebuilt
  from the log). A session cannot change preset or model once it has started.
* The turn runs on a worker thread; the kernel's main thread keeps the live view
  (:class:`~dsh_notebook.widgets.ChatView`) current. Its stop button, or interrupting the
  kernel, sets the turn's cancel event, honoured within ~50 ms even while the model is
  silent (:meth:`ChatClient.complete`). Either way the session log ends the turn with
  ``turn/end`` status ``cancelled``.
* When the turn ends, the cell emits one plain ``display_data``: ``text/html`` (the answer's
  Markdown, with unfenced code protected: public case P16, rendered inert by
  :func:`dsh_notebook.inert.markdown_html`: no raw HTML, no image loads, http(s)/mailto links
  only, maths left for MathJax), ``text/plain`` (the raw answer)
  and ``application/vnd.dsh.session+json`` (deterministic content; ids, paths, usage and
  times only in ``metadata.dsh``), so a re-run compares equal under nbval.
* The ``reckoner`` presets run the six engine tools on the kernel's ``%%reckon`` engine:
  the model's records land in the notebook's sidecar folder beside the cells' records.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotebookError
from ..formats import markdown_text
from ..inert import markdown_html
from ..llm import ChatClient, LLMError
from ..llm.agent import Agent, TurnResult
from ..llm.presets import (
    PERSONA_VERSION,
    PRESETS,
    engine_tools,
    system_prompt,
    system_sections,
)
from ..llm.session import EVENT_TYPES, SessionLog
from ..reckoner import list_records, read_record
from ..reckoner.display import value_text
from ..reckoner.values import parse_tagged
from ..storage import LockedError, read_jsonl
from ..version import __version__

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..artifact.paths import Location
    from ..llm.agent import Tool
    from ..llm.prompt import SystemPrompt
    from ..reckoner import Engine
    from ..reckoner.records import Record

MIME_SESSION = "application/vnd.dsh.session+json"

USAGE = """%%chat [--session NAME] [--preset plain|reckoner|reckoner-with-search|research] [--model ID] [--new]
YOUR MESSAGE

  --preset   plain (default): no tools; reckoner: the six calculation tools, records beside the
             notebook; reckoner-with-search: the same plus one search tool; research: the lead
             of the research ledger, with its five tools
  --session  a name for a separate conversation, or a session id from %chat list to continue it
  --model    a model id from settings.toml (default: DSH_MODEL or the provider's default)
  --new      start a new session under this name
%chat list   the chat sessions logged beside this notebook"""


class ChatUsageError(NotebookError, ValueError):
    """A malformed ``%%chat`` line or a request the session cannot take; nothing was sent."""

    code = "CHAT_USAGE"


class ChatInterrupted(NotebookError):
    """The kernel was interrupted during a turn: the cell stops "Run All" as an interrupt
    would, after showing what was logged."""

    code = "CHAT_INTERRUPTED"

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31mChatInterrupted: {self}\x1b[0m"]


class ChatFailed(NotebookError):
    """The turn ended with an error (its code and message are in the session log); ``code`` is
    the turn's error code (``CHAT_FAILED`` when it had none)."""

    code = "CHAT_FAILED"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code or type(self).code

    def _render_traceback_(self) -> list[str]:  # IPython: show this instead of a Python traceback
        return [f"\x1b[31mChatFailed: {self}\x1b[0m"]


@dataclass
class ChatOptions:
    session: str = "main"
    preset: str | None = None
    model: str | None = None
    new: bool = False


def parse_options(line: str) -> ChatOptions:
    """Read the ``%%chat`` line (``--opt value`` or ``--opt=value``, each at most once) with the
    magics' one parser (:mod:`.args`); raises :class:`ChatUsageError` naming the problem."""
    from . import args

    p = args.parser("%%chat", ChatUsageError)
    for flag in ("--session", "--preset", "--model"):
        p.add_argument(flag, action=args.Once, default=None)
    p.add_argument("--new", action="store_true")
    a = p.parse_line(args.split(line, ChatUsageError),
                     "unexpected {word!r} on the %%chat line; the message goes in the cell body, below it")
    for key in ("session", "preset", "model"):
        if getattr(a, key) is not None and not getattr(a, key).strip():
            raise ChatUsageError(f"--{key} was given an empty value")
    opts = ChatOptions(session=a.session or "main", preset=a.preset, model=a.model, new=a.new)
    if opts.preset is not None and opts.preset not in PRESETS:
        raise ChatUsageError(f"unknown preset {opts.preset!r}; the presets are {', '.join(PRESETS)}")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", opts.session):
        raise ChatUsageError(f"session name {opts.session!r}: use letters, digits, '_', '.', '-' (at most 64)")
    return opts


#: The shape of a session id (``new_session_id``): a name of this shape must be a logged session.
SESSION_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")


def same_model(wanted: str, session: ChatSession) -> bool:
    """Whether ``--model wanted`` names the session's model (``id`` or ``provider/id``)."""
    return wanted in (session.model, f"{session.client.provider_id}/{session.model}")


def _logged_start(path: Path) -> dict:
    """The ``session/start`` event of a logged session; :class:`ChatUsageError` when the
    file is not a chat session log."""
    try:
        read = read_jsonl(path)
    except (OSError, ValueError) as exc:
        raise ChatUsageError(f"{path.name} cannot be read as a session log ({exc})") from None
    events = read.rows
    if not events or events[0].get("type") != "session/start":
        raise ChatUsageError(f"{path.name} is not a chat session log (its first line is not session/start)")
    bad = next((e.get("type") for e in events if e.get("type") not in EVENT_TYPES), None)
    if bad is not None:
        raise ChatUsageError(f"{path.name} is not a chat session log (unknown event type {bad!r})")
    start = events[0]
    if start.get("preset") not in PRESETS:
        raise ChatUsageError(f"{path.name} was written with preset {start.get('preset')!r}, which this version does "
                             f"not have ({', '.join(PRESETS)}); start a new session with --new")
    return start


def logged_preset(folder: Path, name: str) -> str:
    """The preset a ``--session NAME`` would use: the logged session's, else ``plain``."""
    path = Path(folder) / f"{name}.jsonl"
    if path.exists():
        try:
            return _logged_start(path).get("preset", "plain")
        except ChatUsageError:
            return "plain"
    return "plain"


# --------------------------------------------------------------------------- rendering

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_CODE_LINE = re.compile(
    r"^\s*(?:import\s+\w|from\s+[\w.]+\s+import\s|def\s+\w+\s*\(|class\s+\w+[:(]|return\b|print\s*\("
    r"|(?:for|while|if|elif|with)\s.*:\s*$|else:\s*$|try:\s*$|except\b.*:\s*$"
    r"|[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*(?:[-+*/%]|\*\*|//)?=\s*\S"
    r"|[A-Za-z_][\w.]*\(.*\)\s*$)"
)
_HASH_LINE = re.compile(r"^\s{0,3}#")


def answer_markdown(text: str) -> str:
    """The Markdown view of a model reply (public case P16, jupyter-ai#492).

    A block of lines (between blank lines, outside code fences) that holds both ``#`` lines
    and lines that read as code has its code part (from the first ``#`` or code line to the
    last) wrapped in a code fence, so Python comments are never shown as headings; prose
    before and after stays prose, and a Markdown heading among prose stays a heading. The raw reply is
    kept unchanged in ``text/plain`` and in the session log.
    """
    lines = text.split("\n")
    out: list[str] = []
    block: list[str] = []
    in_fence = False

    def flush() -> None:
        if not block:
            return
        code_like = any(_CODE_LINE.match(x) for x in block if not _HASH_LINE.match(x))
        hashes = any(_HASH_LINE.match(x) for x in block)
        if code_like and hashes:
            codeish = [i for i, x in enumerate(block) if _HASH_LINE.match(x) or _CODE_LINE.match(x)]
            first, last = codeish[0], codeish[-1]
            out.extend([*block[:first], "```", *block[first:last + 1], "```", *block[last + 1:]])
        else:
            out.extend(block)
        block.clear()

    for line in lines:
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
            out.append(line)
        elif in_fence:
            out.append(line)
        elif not line.strip():
            flush()
            out.append(line)
        else:
            block.append(line)
    flush()
    return "\n".join(out)


def _record_lines(rec: Record) -> list[str]:
    """A model-written record, deterministic: title, status, the given values and results."""
    status = "closed" if rec.closed else "open"
    steps = sum(1 for _ in rec.steps)
    out = [f"Record: {rec.title} ({status}; {steps} calculation{'' if steps == 1 else 's'})"]
    for r in rec.rows:
        c = r.get("content") or {}
        try:
            if r.get("tool") == "search":
                out.append(f"  looked up: {c.get('question')} ({c.get('outcome')})")
            elif not r.get("ok"):
                error = str(c.get("error") or "")
                out.append(f"  ✗ {r.get('tool')}: {c.get('code')}: {error if len(error) <= 240 else error[:240] + '…'}")
            elif r.get("tool") == "set" and c.get("value") is not None:
                out.append(f"  {c.get('name')} = {value_text(parse_tagged(c['value']), 5)}")
            elif r.get("tool") == "eval":
                out.append(f"  {c.get('target')} = {c.get('formula')} = {value_text(parse_tagged(c['result']), 5)}")
        except Exception:  # noqa: BLE001 - a boundary: a row the view cannot render is still in the file
            out.append(f"  {r.get('tool')}: (not shown)")
    return out


# --------------------------------------------------------------------------- sessions


class ChatSession:
    """One conversation in this kernel: its log, client and agent."""

    def __init__(self, name: str, log: SessionLog, client: ChatClient, agent: Agent, preset: str) -> None:
        self.name, self.log, self.client, self.agent, self.preset = name, log, client, agent, preset

    @property
    def model(self) -> str:
        return self.client.model.id

    def close(self) -> None:
        self.log.close()
        self.client.close()


def _tools(preset: str, engine: Engine, client: ChatClient) -> list[Tool]:
    if preset == "plain":
        return []
    if preset == "research":
        from ..research import Ledger
        from ..research_pipeline.tools import research_tools

        return research_tools(Ledger(Path(engine.home) / "ledger" / "main.jsonl"), sidecar=Path(engine.home))
    tools = engine_tools(engine)
    if preset == "reckoner-with-search":
        from ..llm.search import search_tool

        tools.append(search_tool(engine, client))
    return tools


def open_session(folder: Path, name: str, opts: ChatOptions, engine: Engine) -> ChatSession:
    """Start (or, when ``name`` is a logged session id, continue) a session. Raises
    :class:`ChatUsageError` for a missing key, an unknown model or a preset/model change."""
    logged = folder / f"{name}.jsonl"
    start = None
    if logged.exists() and not opts.new:
        start = _logged_start(logged)
        preset = start.get("preset", "plain")
        if opts.preset and opts.preset != preset:
            raise ChatUsageError(f"session {name} uses preset {preset}; a session cannot change preset "
                                 f"(add --new to start another)")
        model = start.get("model")
        if isinstance(start.get("provider"), str) and isinstance(model, str):
            model = f"{start['provider']}/{model}"  # an undeclared model resolves only with its provider
    elif SESSION_ID.fullmatch(name) and not opts.new:
        raise ChatUsageError(f"no chat session {name} is logged in {folder} (see %chat list); to start one, "
                             f"give it a name of your own")
    else:
        preset, model = opts.preset or "plain", None
    try:
        client = ChatClient(model=opts.model or model)
        client.check_credentials()  # a missing key (or base URL) is named before a session starts
    except LLMError as exc:
        raise ChatUsageError(f"{exc.code}: {exc.message}") from None
    try:
        if start is not None:
            logged_provider = start.get("provider")
            if opts.model and (client.model.id != start.get("model")
                               or (isinstance(logged_provider, str) and client.provider_id != logged_provider)):
                raise ChatUsageError(f"session {name} uses model {start.get('model')}; add --new to change model")
            try:
                log = SessionLog.open(logged)
            except LockedError:
                raise ChatUsageError(f"session {name} is open in another kernel; continue it there, "
                                     f"or start a new one with --new") from None
        else:
            log = None
        tools = _tools(preset, engine, client)
        if log is None:
            persona = {"plain": None, "research": "research-lead/1"}.get(preset, PERSONA_VERSION)
            extra = {"name": name, "provider": client.provider_id, **({"persona": persona} if persona else {})}
            log = SessionLog.create(folder, model=client.model.id, preset=preset, tools=[t.name for t in tools],
                                    system=system_prompt(preset), **extra)
    except BaseException:
        client.close()
        raise
    return ChatSession(name, log, client, Agent(client, log, tools, system=_sections(log, preset)), preset)


def _sections(log: SessionLog, preset: str) -> SystemPrompt | None:
    """The preset's sections when they render to the text the log holds (a log written by
    another version keeps its own text, as one persona section)."""
    sections = system_sections(preset)
    start = next((e for e in log.events if e.get("type") == "session/start"), {})
    if sections is not None and sections.render() == start.get("system"):
        return sections
    return None


# --------------------------------------------------------------------------- one turn


def _in_kernel(shell: object) -> bool:
    return getattr(shell, "kernel", None) is not None


def run_turn(session: ChatSession, text: str, shell: InteractiveShell | None = None, engine: Engine | None = None, poll_interval: float = 0.05) -> dict:
    """Run one turn with a live view (in a Jupyter kernel) and return what the cell shows:
    ``{"result": TurnResult | None, "error": LLMError | None, "partial": str, "records": [...],
    "view": ChatView | None}``."""
    view = None
    if shell is not None and _in_kernel(shell):
        from IPython.display import display

        from ..widgets import ChatView

        view = ChatView(f"{session.name} · {session.preset} · {session.model}")
        display(view)
    cancel = view.cancel if view is not None else threading.Event()
    before = _record_state(engine)
    box: dict = {"result": None, "error": None}

    finished = threading.Event()  # not Thread.join: an interrupt inside join() can mark a live thread stopped

    def work() -> None:
        try:
            box["result"] = session.agent.run_turn(
                text, on_delta=view.on_delta if view is not None else None, cancel=cancel)
        except LLMError as exc:
            box["error"] = exc
        except BaseException as exc:  # noqa: BLE001 - the worker thread's boundary: the main thread re-raises it
            box["error"] = exc
        finally:
            finished.set()

    if view is not None:
        session.log.listeners.append(view.on_event)
    worker = threading.Thread(target=work, name=f"dsh-chat-{session.name}", daemon=True)
    interrupted = False
    try:
        while True:  # an interrupt anywhere in here cancels the turn; we still wait for its log
            try:
                if worker.ident is None and not cancel.is_set():
                    worker.start()
                while worker.ident is not None and not finished.is_set():
                    finished.wait(poll_interval)
                    if view is not None:
                        if cancel.is_set() and not view.stopping:
                            view.stop()  # a click heard on the shell-channel thread
                        view.refresh()
                break
            except KeyboardInterrupt:
                interrupted = True
                cancel.set()
                if view is not None:
                    view.stop()
    finally:
        if view is not None and view.on_event in session.log.listeners:
            session.log.listeners.remove(view.on_event)
    if worker.ident is None:  # stopped before the turn began: nothing was sent or logged
        box["result"] = TurnResult("cancelled", "", 0)
    partial = view.text if view is not None else ""
    closed_for_model = None
    if engine is not None and before.get("open") is None and engine.open_record is not None:
        # The model opened a record and did not close it: close it now, so that the next
        # %%reckon cell never writes into it.
        closed_for_model = engine.open_record["title"]
        engine.record_end("Closed at the end of the chat turn: the model did not close this record.")
    records = _new_records(engine, before)
    res: TurnResult | None = box["result"]
    if view is not None:
        if res is not None:
            n = len(res.tool_calls)
            view.finish(f"{res.status} · {res.steps} step{'s' if res.steps != 1 else ''}"
                        f"{f' · {n} tool call' + ('s' if n != 1 else '') if n else ''}")
        else:
            view.finish("error")
    return {"result": res, "error": box["error"], "partial": partial, "records": records, "view": view,
            "interrupted": interrupted, "closed_for_model": closed_for_model}


def _record_state(engine: Engine | None) -> dict[str, Any]:
    if engine is None:
        return {}
    info = list_records(engine.home)
    state = {s["id"]: s["steps"] for s in info["closed"]}
    if info["open"]:
        state[info["open"]["id"]] = -1
    state["open"] = engine.open_record["id"] if engine.open_record else None
    return state


def _new_records(engine: Engine | None, before: dict[str, Any]) -> list[Any]:
    """Records the turn opened or wrote to (read from their files)."""
    if engine is None:
        return []
    info = list_records(engine.home)
    out = []
    for s in info["closed"] + ([info["open"]] if info["open"] else []):
        if s["id"] not in before or (before[s["id"]] == -1):
            try:
                out.append(read_record(Path(s["path"])))
            except (OSError, ValueError):  # gone or unreadable (UnreadableRecord): not shown
                continue
    return out


# --------------------------------------------------------------------------- the cell's output


def turn_bundle(session: ChatSession, outcome: dict[str, Any], location: Location | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(data, metadata)`` of the cell's one ``display_data`` after a turn."""
    res: TurnResult | None = outcome["result"]
    status = res.status if res is not None else "error"
    answer = res.text if res is not None else ""
    md_parts, plain_parts = [], []
    if status == "cancelled":
        note = "(stopped: this turn was cancelled"
        partial = outcome.get("partial") or ""
        note += "; the partial reply below is not kept in the session)" if partial else ")"
        md_parts.append(f"*{note}*")
        plain_parts.append(note)
        if partial:
            md_parts.append(answer_markdown(partial))
            plain_parts.append(partial)
    elif answer.strip():
        md_parts.append(answer_markdown(answer))
        plain_parts.append(answer)
    elif res is not None and res.refusal.strip():
        pass
    else:
        md_parts.append("*(the model sent no text)*")
        plain_parts.append("(the model sent no text)")
    if res is not None and res.refusal.strip():
        note = f"(the model refused: {' '.join(res.refusal.split())})"
        md_parts.append(f"*{markdown_text(note)}*")
        plain_parts.append(note)
    if res is not None and res.notice and status in ("truncated", "filtered"):
        note = f"({'cut off' if status == 'truncated' else 'stopped'}: {res.notice})"
        md_parts.append(f"*{markdown_text(note)}*")
        plain_parts.append(note)
    for text in turn_notices(session):
        note = f"(note: {text})"
        md_parts.append(f"*{markdown_text(note)}*")
        plain_parts.append(note)
    if outcome.get("closed_for_model"):
        note = (f"(the model left the record {outcome['closed_for_model']!r} open; it was closed at the end of "
                f"the turn)")
        md_parts.append(f"*{markdown_text(note)}*")
        plain_parts.append(note)
    rec_view = []
    for rec in outcome["records"]:
        lines = _record_lines(rec)
        rec_view.append({"title": rec.title, "status": "closed" if rec.closed else "open",
                         "steps": sum(1 for _ in rec.steps)})
        plain_parts.append("\n".join(lines))
        md_parts.append("```text\n" + "\n".join(lines) + "\n```")
    turn = sum(1 for e in session.log.events if e.get("type") == "turn/start")
    content = {
        "session": session.name,
        "preset": session.preset,
        "model": session.model,
        "turn": turn,
        "status": status,
        "answer": answer,
        **({"notice": res.notice} if res is not None and res.notice else {}),
        **({"refusal": res.refusal} if res is not None and res.refusal else {}),
        "tool_calls": [{"name": c["name"], "ok": c["ok"]} for c in (res.tool_calls if res else [])],
        "records": rec_view,
    }
    usage = [e.get("usage") for e in session.log.events[-200:] if e.get("type") == "step/end"]
    meta = {
        "session_id": session.log.id,
        "sidecar": _relative(session.log.path, location),
        "events": len(session.log.events),
        "records": [r.id for r in outcome["records"] if r.closed],
        "open_record": next((r.id for r in outcome["records"] if not r.closed), None),
        "usage": usage[-1] if usage else None,
        "location": location.source if location is not None else None,
        "version": __version__,
    }
    # Model text is rendered inert here (raw HTML off, safe links, images as links, maths for
    # MathJax): a reply steered by a page or a log never runs in the browser (dsh_notebook.inert).
    data = {"text/plain": "\n\n".join(p for p in plain_parts if p), "text/html": markdown_html("\n\n".join(md_parts)),
            MIME_SESSION: content}
    return data, {"dsh": meta}


def failed_turn_bundle(outcome: dict, exc: BaseException) -> dict | None:
    """What a failed turn still shows before its error: the part of the reply (text or
    refusal) that arrived before the provider reported an error, marked incomplete; the note
    that a record the model left open was closed; the records the turn wrote. ``None`` when
    there is none of these. Rendered inert, as every answer."""
    md: list[str] = []
    plain: list[str] = []
    partial = getattr(exc, "partial", None)
    if partial is not None:
        text = partial.text or ""
        refusal = " ".join((partial.refusal or "").split())
        if text.strip() or refusal or partial.reasoning.strip():
            note = ("(incomplete: the provider reported an error before the reply finished: "
                    f"{getattr(exc, 'message', exc)})")
            md.append(f"*{markdown_text(note)}*")
            plain.append(note)
            if text.strip():
                md.append(answer_markdown(text))
                plain.append(text)
            if refusal:
                md.append(f"*{markdown_text(f'(the model refused: {refusal})')}*")
                plain.append(f"(the model refused: {refusal})")
            if not text.strip() and not refusal:
                md.append("*(only reasoning had arrived)*")
                plain.append("(only reasoning had arrived)")
    if outcome.get("closed_for_model"):
        note = (f"(the model left the record {outcome['closed_for_model']!r} open; it was closed at the end of "
                f"the turn)")
        md.append(f"*{markdown_text(note)}*")
        plain.append(note)
    for rec in outcome.get("records") or []:
        lines = _record_lines(rec)
        plain.append("\n".join(lines))
        md.append("```text\n" + "\n".join(lines) + "\n```")
    if not md:
        return None
    return {"text/plain": "\n\n".join(plain), "text/html": markdown_html("\n\n".join(md))}


def turn_notices(session: ChatSession) -> list[str]:
    """The notices for the person (``form: info``) the last turn logged: a model not declared
    in the settings, history left out to fit the context window, a generated tool-call id."""
    events = session.log.events
    start = max((i for i, e in enumerate(events) if e.get("type") == "turn/start"), default=0)
    return [" ".join(str(e.get("text", "")).split()) for e in events[start:]
            if e.get("type") == "notice" and e.get("form") == "info" and e.get("text")]


def _relative(path: Path, location: Location | None) -> str:
    if location is not None and location.notebook is not None:
        try:
            return str(Path(path).relative_to(Path(location.notebook).parent))
        except ValueError:
            pass
    return str(path)
