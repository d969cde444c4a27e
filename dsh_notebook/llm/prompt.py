"""The system prompt as ordered sections (spec: academic.md "What the switch changes": the
harness's section ordering, which academic mode's two sections slot into).

``SystemPrompt`` holds named sections with an order; :meth:`SystemPrompt.render` joins them
by order (ties keep insertion order) with a blank line between. The reserved orders follow
the harness (upstream-facts.md 2.1): identity -1000, persona 0, academic identity 100, plan
policy 500, team policy 600, academic discipline 650, tool descriptions from 1000.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Reserved section orders (upstream-facts.md 2.1).
ORDERS = {
    "identity": -1000,
    "persona": 0,
    "academic-identity": 100,
    "plan-policy": 500,
    "team-policy": 600,
    "academic-discipline": 650,
    "tools": 1000,
}


@dataclass(frozen=True)
class Section:
    name: str
    order: int
    text: str


@dataclass
class SystemPrompt:
    """``SystemPrompt([Section(...), ...])``; ``add(name, text, order=None)`` (order from
    :data:`ORDERS` when the name is reserved; ``ValueError`` for an unknown name without an
    order or a name already present), ``remove(name)``, ``names``, ``render()``."""

    sections: list[Section] = field(default_factory=list)

    def add(self, name: str, text: str, order: int | None = None) -> None:
        if order is None:
            if name not in ORDERS:
                raise ValueError(f"section {name!r} needs an order (reserved names: {', '.join(ORDERS)})")
            order = ORDERS[name]
        if any(s.name == name for s in self.sections):
            raise ValueError(f"the system prompt already has a section {name!r}")
        self.sections.append(Section(name, int(order), text))

    def remove(self, name: str) -> bool:
        before = len(self.sections)
        self.sections = [s for s in self.sections if s.name != name]
        return len(self.sections) != before

    @property
    def names(self) -> list[str]:
        return [s.name for s in self._ordered()]

    def _ordered(self) -> list[Section]:
        return [s for _, s in sorted(enumerate(self.sections), key=lambda p: (p[1].order, p[0]))]

    def render(self) -> str:
        return "\n\n".join(s.text for s in self._ordered() if s.text)

    def copy(self) -> SystemPrompt:
        return SystemPrompt(list(self.sections))

    def __bool__(self) -> bool:
        return any(s.text for s in self.sections)
