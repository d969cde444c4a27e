"""The reckoner: a deterministic, units-checked calculation engine (spec: reckoner.md section 1).

Plain Python: no IPython, no widgets, no network. The person or the model writes
formulas; the engine owns the numbers and the dimension rules.

>>> from dsh_notebook.reckoner import Engine
>>> e = Engine("/tmp/calc")                                   # doctest: +SKIP
>>> e.record_start("Ohm's law")                               # doctest: +SKIP
{'ok': True}
>>> e.set("V", {"num": 12, "dim": "volt"})["rev"]             # doctest: +SKIP
1
"""

from .engine import TOOLS, Engine, MemoryEngine, default_home, replay, rerun
from .errors import ERROR_CODES, ERROR_TRIGGERS, EngineError
from .records import (
    Record,
    UnreadableRecord,
    close_set_aside,
    discard_set_aside,
    find_record,
    list_records,
    read_record,
)
from .schemas import TOOL_SCHEMAS

__all__ = [
    "ERROR_CODES",
    "ERROR_TRIGGERS",
    "TOOLS",
    "TOOL_SCHEMAS",
    "Engine",
    "EngineError",
    "MemoryEngine",
    "Record",
    "UnreadableRecord",
    "close_set_aside",
    "default_home",
    "discard_set_aside",
    "find_record",
    "list_records",
    "read_record",
    "replay",
    "rerun",
]
