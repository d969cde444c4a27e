"""The engine's failure vocabulary (spec: reckoner.md section 1; upstream-facts.md 3.10).

* Every engine call returns a receipt; a failure receipt is ``{"ok": False, "code", "error"}``.
* Inside the engine a failure travels as :class:`EngineError`, raised at the point that
  knows the value, the rule and the fix, and turned into a receipt at the call boundary.
* The first 19 codes are upstream's 0.1.0 names; the 20th, ``ENGINE_IO``, is this engine's
  (deliberate difference 6: upstream swallows a trace row it cannot write, this engine refuses
  the call and rolls it back, issue 16). Nothing else is ever returned.
"""

from __future__ import annotations

from ..errors import DshError

INVALID_FORMULA = "ENGINE_INVALID_FORMULA"
INVALID_NUMBER = "ENGINE_INVALID_NUMBER"
INVALID_IDENTIFIER = "ENGINE_INVALID_IDENTIFIER"
INVALID_DIMENSION = "ENGINE_INVALID_DIMENSION"
INVALID_NOTATION = "ENGINE_INVALID_NOTATION"
INVALID_ARITY = "ENGINE_INVALID_ARITY"
SLOT_NOT_FOUND = "ENGINE_SLOT_NOT_FOUND"
NAME_NOT_BOUND = "ENGINE_NAME_NOT_BOUND"
INCOMPATIBLE_DIMENSION = "ENGINE_INCOMPATIBLE_DIMENSION"
UNSUPPORTED_OPERATION = "ENGINE_UNSUPPORTED_OPERATION"
INVALID_INDEX = "ENGINE_INVALID_INDEX"
UNDEFINED_RESULT = "ENGINE_UNDEFINED_RESULT"
UNSUPPORTED_INDEX = "ENGINE_UNSUPPORTED_INDEX"
FIELD_NOT_FOUND = "ENGINE_FIELD_NOT_FOUND"
UNSUPPORTED_SYMBOL = "ENGINE_UNSUPPORTED_SYMBOL"
INVALID_ARGS = "ENGINE_INVALID_ARGS"
OPEN_RECORD_NOT_FOUND = "ENGINE_OPEN_RECORD_NOT_FOUND"
OPEN_RECORD_FOUND = "ENGINE_OPEN_RECORD_FOUND"
UNKNOWN_ERROR = "ENGINE_UNKNOWN_ERROR"
IO_ERROR = "ENGINE_IO"

#: All 20 codes: upstream's 19 in upstream's order (engine.md section 8.2), then ``ENGINE_IO``.
ERROR_CODES: tuple[str, ...] = (
    INVALID_FORMULA,
    INVALID_NUMBER,
    INVALID_IDENTIFIER,
    INVALID_DIMENSION,
    INVALID_NOTATION,
    INVALID_ARITY,
    SLOT_NOT_FOUND,
    NAME_NOT_BOUND,
    INCOMPATIBLE_DIMENSION,
    UNSUPPORTED_OPERATION,
    INVALID_INDEX,
    UNDEFINED_RESULT,
    UNSUPPORTED_INDEX,
    FIELD_NOT_FOUND,
    UNSUPPORTED_SYMBOL,
    INVALID_ARGS,
    OPEN_RECORD_NOT_FOUND,
    OPEN_RECORD_FOUND,
    UNKNOWN_ERROR,
    IO_ERROR,
)

#: One line per code: when it is raised (used by the README table and the magic's help).
ERROR_TRIGGERS: dict[str, str] = {
    INVALID_FORMULA: "not one grammatical expression: a character outside the charset, `$`/`@` without a name, a trailing token, an unclosed bracket, `^{` outside a notation",
    INVALID_NUMBER: "a number literal that is not complete, such as `2e` or `4.`",
    INVALID_IDENTIFIER: "a letter right after a number (`2x`, `1E5`), or a slot, target or field name that breaks the name rule",
    INVALID_DIMENSION: "a `dim` that is neither a table name nor exactly 7 integers; in `%%reckon`, a unit pint cannot read or one outside the seven SI base dimensions",
    INVALID_NOTATION: "an unknown `$name`, a constant written with `(` or `_`, a function without `(`, a bounded form without its bounds",
    INVALID_ARITY: "a wrong number of arguments, a missing bound variable, `$limit` written with `=`, a missing upper bound",
    SLOT_NOT_FOUND: "`@name` or `get` names a slot that does not exist",
    NAME_NOT_BOUND: "a bare name that no enclosing `$sum`/`$prod`/`$seq` binds",
    INCOMPATIBLE_DIMENSION: "adding different dimensions, a dimensional exponent or function argument, a fractional dimension written into a slot, a `get`/`show` unit that does not match",
    UNSUPPORTED_OPERATION: "an operator or function applied to an object, or an object as an array element",
    INVALID_INDEX: "an index or bound that is not a dimensionless integer, out of range, or a lower bound above the upper",
    UNDEFINED_RESULT: "division by zero, a logarithm or square root outside its domain, a non-finite (infinite or NaN) result",
    UNSUPPORTED_INDEX: "`.field` on a value that is not an object, `[i]` on a value that is not an array",
    FIELD_NOT_FOUND: "`.field` names a field the object does not have",
    UNSUPPORTED_SYMBOL: "evaluating `$integral`, `$limit` or `$diff` (symbolic forms): write the closed form",
    INVALID_ARGS: "a tool argument of the wrong shape, arrays of different lengths, an empty marker text",
    OPEN_RECORD_NOT_FOUND: "`set`, `get`, `eval`, `record_message` or `record_end` with no open record",
    OPEN_RECORD_FOUND: "`record_start` while a record is open (or another engine holds this folder's open record)",
    UNKNOWN_ERROR: "an internal fault that is not an engine refusal (`internal error: ...`)",
    IO_ERROR: "the record's row for the call could not be written (a full disk, a file size limit, an I/O error): the call is rolled back and changes nothing; a record whose closing could not reach the disk is left for `%reckon recover`",
}


class ReckonerError(DshError):
    """The root of the reckoner layer's exceptions (the engine, records, articles)."""

    code = "RECKONER"


class EngineError(ReckonerError):
    """A refusal: ``code`` is one of :data:`ERROR_CODES`, ``message`` one sentence.

    Raised only inside the engine; public calls turn it into a failure receipt.
    """

    code = UNKNOWN_ERROR  # the class default; every instance names its own code

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def receipt(self) -> dict:
        """The failure receipt ``{"ok": False, "code", "error"}``."""
        return {"ok": False, "code": self.code, "error": self.message}
