"""Academic mode's request shaping (spec: academic.md "What the switch changes";
upstream-facts.md 2.1 and 2.4).

:func:`academic_hook` is one of every :class:`~dsh_notebook.llm.ChatClient`'s default hooks.
While the switch is on, before each request it:

* adds the identity section (order 100, right after the persona) and the discipline
  section (order 650, after the policies, before tool descriptions), both or neither, in
  the language of ``[academic] language`` in ``settings.toml`` (``auto``: Chinese when the
  last user message holds CJK ideographs, else English);
* sets ``reasoning_effort`` to the strongest effort the model declares in the settings (the
  last of its ordered ``reasoning_efforts``), none when it declares none;
* raises ``max_tokens`` to the model's ``default_max_tokens``, keeping a larger value;
* never changes the provider or the model.

The model's capabilities are looked up in the settings at each request; if that fails the
request goes out unchanged and ``lastError`` says why. What it changed is returned as
notes (``ChatResult.shaping``, logged with the assistant message) and kept as ``applied``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import LLMError
from . import prompt
from .state import is_enabled, now, record_applied

if TYPE_CHECKING:
    from ..llm.client import RequestContext
    from ..settings import Settings

_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")


def language_for(text: str, setting: str = "auto") -> str:
    """``zh`` or ``en`` for the academic sections: the setting, or for ``auto`` the text's
    script (CJK ideographs, including the compatibility block and extensions B-G, mean
    Chinese)."""
    if setting in ("zh", "en"):
        return setting
    return "zh" if _CJK.search(text or "") else "en"


def language_setting(settings: Settings) -> tuple[str, str | None]:
    """``([academic] language, problem)`` from ``settings.academic``
    (:class:`~dsh_notebook.settings.AcademicSettings`): ``auto`` with the problem named when the
    table or the value is not one the settings allow (a bad value never stops a request)."""
    table = settings.academic
    return table.language, "; ".join(table.problems) or None


def academic_hook(body: dict, ctx: RequestContext) -> list[str]:
    """The request-shaping hook (see the module docstring); ``ctx`` is a
    :class:`~dsh_notebook.llm.client.RequestContext`. Returns one note per change."""
    if not is_enabled():
        return []
    where = f"{ctx.provider_id}/{ctx.model.id}"
    info = ctx.model  # the capabilities the client itself resolved (its own settings, if it was given some)
    try:
        from ..settings import load_settings  # imported when used: %load_ext stays light (issue 22)

        settings = load_settings()  # for [academic] language
    except LLMError as exc:
        record_applied(None, f"capability lookup for {where} failed ({exc.code}: {exc.message}); "
                             "the request went out unchanged")
        return []
    setting, problem = language_setting(settings)
    lang = language_for(ctx.user_text, setting)
    notes: list[str] = []
    added: list[str] = []
    try:
        for name, text in (("academic-identity", prompt.identity(lang)), ("academic-discipline", prompt.discipline(lang))):
            ctx.system.add(name, text)
            added.append(name)
    except ValueError as exc:  # both or neither
        for name in added:
            ctx.system.remove(name)
        record_applied(None, f"the academic sections were not added ({exc}); the request went out unchanged")
        return []
    notes.append(f"academic mode: identity and discipline sections added ({prompt.PROMPT_VERSION}, {lang})")
    effort = info.strongest_effort
    if effort is not None and body.get("reasoning_effort") != effort:
        notes.append(f"reasoning_effort {body.get('reasoning_effort')!r} -> {effort!r}")
        body["reasoning_effort"] = effort
    wanted = info.default_max_tokens
    current = body.get("max_tokens")
    if isinstance(current, float) and current.is_integer():
        current = body["max_tokens"] = int(current)
    if not isinstance(current, int) or isinstance(current, bool) or current < wanted:
        notes.append(f"max_tokens {current!r} -> {wanted}")
        body["max_tokens"] = wanted
    record_applied({"provider": ctx.provider_id, "model": ctx.model.id, "reasoningEffort": body.get("reasoning_effort"),
                    "maxTokens": body.get("max_tokens"), "at": now()}, problem)
    return notes
