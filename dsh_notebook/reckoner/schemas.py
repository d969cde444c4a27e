"""JSON Schemas of the six engine tools, for the model (spec: reckoner.md sections 1 and 4;
upstream-facts.md 3.2, 3.4).

``TOOL_SCHEMAS[name]`` is ``{"name", "description", "parameters"}``; ``parameters`` is a
JSON Schema (draft 2020-12) object. Wrap each in ``{"type": "function", "function": ...}``
for an OpenAI-compatible request.
"""

from __future__ import annotations

from .dims import NAMES

_NUMBER = {"type": "number"}
_DIM = {
    "description": "An SI table name (e.g. 'ohm', 'degC') or the 7 integer exponents [m,kg,s,A,K,mol,cd].",
    "anyOf": [
        {"type": "string", "enum": list(NAMES)},
        {"type": "array", "items": {"type": "integer"}, "minItems": 7, "maxItems": 7},
        {"type": "null"},
    ],
}
_ELEMENT = {
    "anyOf": [
        _NUMBER,
        {"type": "object", "properties": {"re": _NUMBER, "im": _NUMBER}, "required": ["re", "im"], "additionalProperties": False},
        {"type": "object", "properties": {"mag": _NUMBER, "ang": _NUMBER}, "required": ["mag", "ang"], "additionalProperties": False},
        {"type": "array", "items": {"$ref": "#/$defs/element"}},
    ]
}
_TAGGED = {
    "description": (
        "A tagged value: exactly one of {num}, {re, im}, {mag, ang} (radians), {array: [...]}, "
        "{object: {field: tagged value}}, with an optional dim (not beside object) and, for a temperature, an "
        "optional kind."
    ),
    "type": "object",
    "properties": {
        "num": _NUMBER,
        "re": _NUMBER,
        "im": _NUMBER,
        "mag": _NUMBER,
        "ang": _NUMBER,
        "array": {"type": "array", "items": {"$ref": "#/$defs/element"}},
        "object": {"type": "object", "additionalProperties": {"$ref": "#/$defs/tagged"}},
        "dim": _DIM,
        "kind": {
            "type": "string",
            "enum": ["point", "difference"],
            "description": "Optional, temperatures only: 'point' (a reading on a scale, with scale) or 'difference'. "
                           "Without it a temperature in K is thermodynamic and acts as either; dim 'degC' alone is a "
                           "Celsius point. Points do not add or scale by plain numbers (2*@T is refused); "
                           "point - point is a difference.",
        },
        "scale": {"type": "string", "enum": ["degC", "degF"],
                  "description": "The scale of a point (kind 'point'); the number is still in K with 7 integers."},
    },
    "additionalProperties": False,
}
_NAME = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$", "description": "A bare slot name (no @)."}
_DEFS = {"element": _ELEMENT, "tagged": _TAGGED}


def _obj(props: dict, required: list[str], defs: bool = False) -> dict:
    out = {"type": "object", "properties": props, "required": required, "additionalProperties": False}
    if defs:
        out["$defs"] = _DEFS
    return out


#: Every call writes a row into the record; when the disk refuses it the call fails (issue 16).
_IO = " ENGINE_IO: the record's row could not be written (a full disk); the call changed nothing."

TOOL_SCHEMAS: dict[str, dict] = {
    "set": {
        "name": "set",
        "description": "Write a slot (a value with its SI dimension), or delete it with value null. Arithmetic never happens here." + _IO,
        "parameters": _obj({"name": _NAME, "value": {"anyOf": [{"$ref": "#/$defs/tagged"}, {"type": "null"}]}},
                           ["name", "value"], defs=True),
    },
    "get": {
        "name": "get",
        "description": "Read a slot; the only way to see a value. Optional form (rect|polar), digits (significant), dim (a claim checked against the value; a table name converts, e.g. degC).",
        "parameters": _obj(
            {
                "name": _NAME,
                "form": {"type": "string", "enum": ["rect", "polar"]},
                "digits": {"type": "integer", "minimum": 1},
                "dim": _DIM,
            },
            ["name"],
        ),
    },
    "eval": {
        "name": "eval",
        "description": (
            "Evaluate one formula over slots (@name), numbers and $ notation ($pi, $sqrt(x), $sum_{k=1}^{n}(body), ...) "
            "and write the result into target. Dimensions are checked; the value is not returned." + _IO
        ),
        "parameters": _obj({"formula": {"type": "string"}, "target": _NAME,
                            "kind": {"type": "string", "enum": ["point", "difference"],
                                     "description": "Optional: declares a temperature result a point (with scale) or a "
                                                    "difference, e.g. for @p/(@rho*@R), which has no kind of its own."},
                            "scale": {"type": "string", "enum": ["degC", "degF", "K"],
                                      "description": "The scale of a declared point."}},
                           ["formula", "target"]),
    },
    "record_start": {
        "name": "record_start",
        "description": "Open a record (one calculation) with a title. Every other call needs an open record.",
        "parameters": _obj({"title": {"type": "string", "minLength": 1}}, ["title"]),
    },
    "record_message": {
        "name": "record_message",
        "description": "Add an explanation to the open record; hide=true keeps it for the article writer only.",
        "parameters": _obj({"text": {"type": "string", "minLength": 1}, "hide": {"type": "boolean"}}, ["text"]),
    },
    "record_end": {
        "name": "record_end",
        "description": "Close the open record, with an optional closing text. The slot table is cleared. ENGINE_IO when "
                       "the closing row cannot be written: the record stays open.",
        "parameters": _obj({"text": {"type": "string"}}, []),
    },
}
