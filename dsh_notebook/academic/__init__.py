"""Academic mode (spec: academic.md): one switch that makes every model call behave like a careful
researcher. :mod:`.prompt` is the single source of its text (identity, eight-chapter discipline,
ten-item self-check, gate notice and the exported ``SKILL.md``); :mod:`.shaping` changes each
request while the switch is on; :mod:`.gate` is the pre-delivery gate; :mod:`.state` the shared
on/off state. Plain Python: no IPython, no widgets."""

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

__all__ = ["CHAPTER_TITLES", "CHECKLIST", "DISCIPLINE", "ESCAPE_LINES", "GATE_NOTICE", "IDENTITY", "LANGS",
           "PROMPT_VERSION", "SKILL_NAME", "VERIFICATION_HEADINGS", "discipline", "gate_notice", "identity",
           "skill_body", "skill_markdown"]
