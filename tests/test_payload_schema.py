"""The typed boundaries (issue 22, item 4): the route payloads' JSON Schema and the panel's
TypeScript types are generated from the TypedDicts and committed; these tests fail when either
falls out of step, and check that what the routes really answer fits the types."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_ledger_explorer import build

from dsh_notebook.server import schema as S

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "labextension"
TS_FILE = LAB / "src" / "generated" / "payloads.ts"


def test_the_committed_json_schema_is_generated_from_the_typeddicts():
    committed = (ROOT / S.SCHEMA_FILE).read_text(encoding="utf-8")
    assert committed == S.schema_text(), (
        "labextension/schema/payloads.schema.json is out of step with the TypedDicts: run "
        "python -m dsh_notebook.server.schema, then npm run gen:types in labextension/")
    defs = json.loads(committed)["$defs"]
    for name in ("AcademicStatus", "Insight", "Review", "DecisionCard", "RecordSummary", "RecordDetail",
                 "LedgerFold", "LedgerBrief", "SessionRow", "LedgerAccepted", "LedgerRefused"):
        assert name in defs, name
    card = defs["DecisionCard"]
    assert {"decision_id", "revision", "statement", "status", "awaiting_person", "predicates"} <= set(card["required"])


def test_the_check_command_names_a_stale_schema(tmp_path, capsys):
    (tmp_path / S.SCHEMA_FILE).parent.mkdir(parents=True)
    (tmp_path / S.SCHEMA_FILE).write_text("{}\n", encoding="utf-8")
    assert S.main(["--root", str(tmp_path), "--check"]) == 1
    assert "is not in step" in capsys.readouterr().err
    assert S.main(["--root", str(tmp_path)]) == 0
    assert S.main(["--root", str(tmp_path), "--check"]) == 0


def test_the_committed_typescript_is_generated_from_the_schema(tmp_path):
    json2ts = LAB / "node_modules" / ".bin" / "json2ts"
    if not json2ts.exists() or shutil.which("node") is None:
        pytest.skip("json-schema-to-typescript is not installed (run npm install in labextension/); "
                    "the JSON Schema comparison above still ran")
    out = tmp_path / "payloads.ts"
    script = json.loads((LAB / "package.json").read_text(encoding="utf-8"))["scripts"]["gen:types"]
    args = script.split()[1:]
    args[args.index("--output") + 1] = str(out)
    args[args.index("--input") + 1] = str(ROOT / S.SCHEMA_FILE)
    args = [a.strip('"') for a in args]
    r = subprocess.run([str(json2ts), *args], capture_output=True, text=True, cwd=LAB, timeout=120)
    assert r.returncode == 0, r.stderr
    assert out.read_text(encoding="utf-8") == TS_FILE.read_text(encoding="utf-8"), (
        "labextension/src/generated/payloads.ts is out of step with the schema: run npm run gen:types")


def test_api_ts_uses_the_generated_types():
    api = (LAB / "src" / "api.ts").read_text(encoding="utf-8")
    assert "from './generated/payloads'" in api
    for old, new in (("IDecisionView", "DecisionCard"), ("IInsight", "Insight"), ("IAcademicStatus", "AcademicStatus"),
                     ("IRecordSummary", "RecordSummary"), ("ILedgerFold", "LedgerFold")):
        assert f"export type {old} = {new};" in api
        assert f"interface {old}" not in api


def test_what_the_routes_answer_fits_the_types(tmp_path, monkeypatch):
    from pydantic import TypeAdapter

    from dsh_notebook.server import payloads as P
    from dsh_notebook.server import views

    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    build(nb)
    fold = views.ledger(nb, tmp_path, "main")
    TypeAdapter(P.LedgerFold).validate_python(fold, strict=True)
    [brief] = views.ledgers(nb, tmp_path)
    TypeAdapter(P.LedgerBrief).validate_python(brief, strict=True)
    assert fold["decisions"][0]["awaiting_person"] is True and brief["awaiting"] == ["d1"]
    TypeAdapter(P.AcademicStatus).validate_python(views.academic_status(), strict=True)
    TypeAdapter(list[P.RecordSummary]).validate_python(views.records(nb, tmp_path), strict=True)


def test_the_package_is_typed():
    assert (ROOT / "dsh_notebook" / "py.typed").is_file()
