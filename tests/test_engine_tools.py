"""Engine.call (JSON tool calls) and TOOL_SCHEMAS (upstream-facts.md 3.2; reckoner.md 1 and 4)."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from dsh_notebook.reckoner import TOOL_SCHEMAS, TOOLS, Engine

SIX = {"set", "get", "eval", "record_start", "record_message", "record_end"}

VALID = {
    "set": [
        {"name": "R", "value": {"num": 4.7, "dim": "ohm"}},
        {"name": "Z", "value": {"re": 3, "im": 4, "dim": [2, 1, -3, -2, 0, 0, 0]}},
        {"name": "P", "value": {"mag": 1, "ang": 0.5}},
        {"name": "a", "value": {"array": [1, {"re": 1, "im": 2}, {"mag": 1, "ang": 0}], "dim": "metre"}},
        {"name": "m", "value": {"array": [[1, 2], [3, 4]]}},
        {"name": "o", "value": {"object": {"x": {"num": 1, "dim": "volt"}, "y": {"object": {"z": {"num": 2}}}}}},
        {"name": "R", "value": None},
    ],
    "get": [{"name": "Z"}, {"name": "Z", "form": "polar", "digits": 3, "dim": "ohm"},
            {"name": "Z", "dim": [2, 1, -3, -2, 0, 0, 0], "form": "rect"}],
    "eval": [{"formula": "@Z*2", "target": "Z2"}],
    "record_message": [{"text": "note"}, {"text": "hidden", "hide": True}],
    "record_end": [{}, {"text": "done"}],
    "record_start": [{"title": "next"}],
}

INVALID = {
    "set": [{"name": "R"}, {"name": "R", "value": {"num": 1}, "extra": 1}, {"name": "@R", "value": {"num": 1}},
            {"name": "R", "value": {"num": "1"}}, {"name": "R", "value": {"num": 1, "unit": "ohm"}},
            {"name": "R", "value": {"num": 1, "dim": "kohm"}}],
    "get": [{}, {"name": "R", "form": "degrees"}, {"name": "R", "digits": 0}, {"name": "R", "dim": [1, 0]}],
    "eval": [{"formula": "1"}, {"target": "x"}, {"formula": 1, "target": "x"}],
    "record_start": [{}, {"title": ""}],
    "record_message": [{}, {"text": ""}, {"text": "x", "hide": "yes"}],
    "record_end": [{"text": 3}, {"reason": "x"}],
}


def test_tool_schemas_are_the_six_tools():
    assert set(TOOL_SCHEMAS) == SIX
    assert set(TOOLS) == SIX
    for name, spec in TOOL_SCHEMAS.items():
        assert spec["name"] == name
        assert isinstance(spec["description"], str) and spec["description"].strip()
        assert spec["parameters"]["type"] == "object"
        json.dumps(spec)  # plain JSON


@pytest.mark.parametrize("tool", sorted(SIX))
def test_parameters_are_valid_json_schema(tool):
    schema = TOOL_SCHEMAS[tool]["parameters"]
    Draft202012Validator.check_schema(schema)
    v = Draft202012Validator(schema)
    for example in VALID[tool]:
        assert not list(v.iter_errors(example)), example
    for example in INVALID[tool]:
        assert list(v.iter_errors(example)), example


def test_valid_examples_run_through_call(tmp_path):
    e = Engine(tmp_path / "h")
    try:
        assert e.call("record_start", {"title": "tools"}) == {"ok": True}
        for args in VALID["set"]:
            assert e.call("set", json.loads(json.dumps(args)))["ok"], args
        e.call("set", {"name": "Z", "value": {"re": 3, "im": 4, "dim": "ohm"}})
        for tool in ("get", "eval", "record_message"):
            for args in VALID[tool]:
                r = e.call(tool, args)
                assert r["ok"], (tool, args, r)
        assert e.call("get", {"name": "Z", "form": "polar", "digits": 3}) == {
            "ok": True, "name": "Z", "value": {"mag": 5.0, "ang": 0.927, "dim": "ohm"}}
        assert e.call("eval", {"formula": "@Z*2", "target": "Z2"}) == {"ok": True, "target": "Z2", "rev": 2}
        assert e.call("record_end", {"text": "done"}) == {"ok": True}
        assert e.call("record_start", {"title": "again"}) == {"ok": True}
        assert e.call("record_end", {}) == {"ok": True}
        assert e.call("record_start", {"title": "third"}) == {"ok": True}
        assert e.call("record_end", None) == {"ok": True}
    finally:
        e.close()


@pytest.fixture
def opened(tmp_path):
    e = Engine(tmp_path / "h")
    e.call("record_start", {"title": "t"})
    yield e
    e.close()


@pytest.mark.parametrize("tool", ["search", "delete", "SET", "", None, 5, ["set"]])
def test_unknown_tool(opened, tool):
    r = opened.call(tool, {"name": "x"})
    assert r["ok"] is False and r["code"] == "ENGINE_INVALID_ARGS"
    for name in SIX:
        assert name in r["error"]


@pytest.mark.parametrize("tool, args, needle", [
    ("set", {"name": "x", "value": {"num": 1}, "rev": 3}, "rev"),
    ("set", {"name": "x"}, "value"),
    ("set", {"value": {"num": 1}}, "name"),
    ("get", {"name": "x", "unit": "ohm"}, "unit"),
    ("get", {}, "name"),
    ("eval", {"formula": "1"}, "target"),
    ("eval", {"target": "x"}, "formula"),
    ("eval", {"formula": "1", "target": "x", "digits": 3}, "digits"),
    ("record_message", {"message": "hi"}, "message"),
    ("record_end", {"title": "x"}, "title"),
    ("record_start", {}, "title"),
])
def test_unknown_or_missing_arguments(opened, tool, args, needle):
    before = dict(opened.slots())
    r = opened.call(tool, args)
    assert r["ok"] is False and r["code"] == "ENGINE_INVALID_ARGS", r
    assert needle in r["error"]
    assert dict(opened.slots()) == before


@pytest.mark.parametrize("args", ["name=x", ["x"], 3])
def test_arguments_must_be_an_object(opened, args):
    r = opened.call("get", args)
    assert r["ok"] is False and r["code"] == "ENGINE_INVALID_ARGS"


def test_call_is_the_same_as_the_method(opened):
    assert opened.call("set", {"name": "x", "value": {"num": 2, "dim": "volt"}}) == {
        "ok": True, "name": "x", "rev": 1, "value": {"num": 2.0, "dim": [2, 1, -3, -1, 0, 0, 0]}}
    assert opened.call("get", {"name": "x"}) == opened.get("x")
    assert opened.call("eval", {"formula": "@x + 1", "target": "y"}) == opened.eval("@x + 1", "y")
    assert opened.call("set", {"name": "x", "value": None}) == {"ok": True, "name": "x", "rev": None, "value": None}
