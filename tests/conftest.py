"""Shared fixtures for the test suite (keep minimal)."""

from __future__ import annotations

import os
import tempfile

import pytest

# DSH_NOTEBOOK_HOME is pointed at a temporary folder by the repository's root conftest.py.


@pytest.fixture
def engine(tmp_path):
    """An ``Engine(tmp_path / "home")`` with a record already started."""
    from dsh_notebook.reckoner import Engine

    e = Engine(tmp_path / "home")
    assert e.record_start("test record") == {"ok": True}
    yield e
    e.close()


@pytest.fixture
def calc(engine):
    """``calc(formula)`` evaluates into the slot ``_out`` and returns the ``get`` value;
    on refusal it returns the failure receipt. ``calc(formula, **get_options)`` passes options."""

    def run(formula, **opts):
        r = engine.eval(formula, "_out")
        if not r["ok"]:
            return r
        g = engine.get("_out", **opts)
        assert g["ok"], g
        return g["value"]

    return run


# tests/data holds artifacts the tests copy and check (notebooks made by earlier versions, with
# their sidecars): they are data, not notebooks for nbval to run.
collect_ignore_glob = ["data/*"]
