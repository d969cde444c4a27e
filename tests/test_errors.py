"""One root exception (issue 13 part 6): every public exception of the package is a
:class:`~dsh_notebook.errors.DshError` with a code, and the old bases still catch it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import dsh_notebook
from dsh_notebook.errors import DshError, LLMError, NotebookError, SettingsError


def _modules():
    for info in pkgutil.walk_packages(dsh_notebook.__path__, "dsh_notebook."):
        yield importlib.import_module(info.name)


def public_exceptions() -> list[type[BaseException]]:
    """Every exception class defined (not imported) in a module of the package whose name and
    module path hold no private part."""
    found = {}
    for module in _modules():
        if any(part.startswith("_") and part != "__init__" for part in module.__name__.split(".")):
            continue
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__
                    and not name.startswith("_")):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


def test_every_public_exception_is_a_dsh_error_with_a_code():
    classes = public_exceptions()
    assert len(classes) >= 25, [c.__name__ for c in classes]
    for cls in classes:
        assert issubclass(cls, DshError), f"{cls.__module__}.{cls.__name__} is not a DshError"
        assert isinstance(cls.code, str) and cls.code and cls.code == cls.code.upper(), cls


def test_codes_are_distinct_per_class_except_engine_defaults():
    codes: dict[str, list[str]] = {}
    for cls in public_exceptions():
        if "code" in vars(cls):
            codes.setdefault(cls.code, []).append(cls.__name__)
    shared = {code: names for code, names in codes.items() if len(names) > 1}
    assert shared == {}, shared


def test_old_bases_still_catch():
    from dsh_notebook.reckon.cell import GivenValueError, ReckonUsageError
    from dsh_notebook.research.ledger import LedgerPathError
    from dsh_notebook.research_pipeline.bibliographic import IdentifierError, normalize
    from dsh_notebook.storage import LockedError, StorageError, dumps_line

    for cls in (StorageError, LockedError, IdentifierError, ReckonUsageError, GivenValueError, SettingsError):
        assert issubclass(cls, ValueError), cls
    assert issubclass(LedgerPathError, OSError) and issubclass(LedgerPathError, ValueError)
    assert issubclass(GivenValueError, NotebookError)
    with pytest.raises(ValueError) as info:
        normalize("10.1/x")
    assert isinstance(info.value, DshError) and info.value.code == "IDENTIFIER_INVALID"
    with pytest.raises(DshError) as info:
        dumps_line({"x": float("nan")})
    assert info.value.code == "STORAGE_REFUSED" and "NaN" in str(info.value)


def test_a_bad_settings_value_raises_a_settings_error(tmp_path, monkeypatch):
    from dsh_notebook.settings import load_settings

    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path))
    (tmp_path / "settings.toml").write_text('default_model = 3\n', encoding="utf-8")
    with pytest.raises(DshError) as info:
        load_settings()
    assert isinstance(info.value, SettingsError) and isinstance(info.value, LLMError)
    assert info.value.code == "SETTINGS" and "default_model" in info.value.message
    (tmp_path / "settings.toml").write_text('[providers.deepseek\n', encoding="utf-8")
    with pytest.raises(LLMError) as info:
        load_settings()
    assert info.value.code == "SETTINGS" and "not valid TOML" in info.value.message


def test_an_unknown_model_is_an_llm_error_with_its_code(tmp_path, monkeypatch):
    from dsh_notebook.settings import load_settings

    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path))
    with pytest.raises(DshError) as info:
        load_settings().resolve("nope")
    assert isinstance(info.value, LLMError) and info.value.code == "UNKNOWN_MODEL"
    assert "deepseek/deepseek-chat" in info.value.message


def test_the_engine_still_answers_with_receipts(tmp_path):
    from dsh_notebook.reckoner import Engine

    engine = Engine(tmp_path)
    receipt = engine.call("set", {"name": "x", "value": 1})
    assert receipt["ok"] is False and receipt["code"] == "ENGINE_OPEN_RECORD_NOT_FOUND"
