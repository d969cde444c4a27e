"""Academic mode (spec: academic.md): one switch that makes every model call behave like a careful
researcher. :mod:`.prompt` is the single source of its text (identity, eight-chapter discipline,
ten-item self-check, gate notice and the exported ``SKILL.md``); :mod:`.shaping` changes each
request while the switch is on; :mod:`.gate` is the pre-delivery gate; :mod:`.state` the shared
on/off state. Plain Python: no IPython, no widgets.

:func:`register_llm_hooks` gives the model client academic mode's request hook and delivery gate
(:mod:`dsh_notebook.llm.hooks`); it is the entry point ``academic`` of the group
``dsh_notebook.llm_hooks``, so every client gets them without ``llm`` importing this package."""

from .prompt import (
    CHAPTER_TITLES,
    CHECKLIST,
    DISCIPLINE,
    ESCAPE_LINES,
    GATE_NOTICE,
    IDENTITY,
    LANGS,
    PROMPT_VERSION,
    SKILL_NAME,
    VERIFICATION_HEADINGS,
    discipline,
    gate_notice,
    identity,
    skill_body,
    skill_markdown,
)


def register_llm_hooks() -> None:
    """Register :func:`.shaping.academic_hook` and :data:`.gate.academic_gate` (an
    :class:`~.gate.AcademicGate`) as the model client's default hooks (both do nothing while the
    switch is off)."""
    from ..llm.hooks import register
    from .gate import academic_gate
    from .shaping import academic_hook

    register(request=academic_hook, stop=academic_gate)


__all__ = ["CHAPTER_TITLES", "CHECKLIST", "DISCIPLINE", "ESCAPE_LINES", "GATE_NOTICE", "IDENTITY", "LANGS",
           "PROMPT_VERSION", "SKILL_NAME", "VERIFICATION_HEADINGS", "discipline", "gate_notice", "identity",
           "register_llm_hooks", "skill_body", "skill_markdown"]
