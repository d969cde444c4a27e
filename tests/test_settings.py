"""One settings model (issue 13 part 4): ``dsh_notebook.settings`` reads ``settings.toml`` once per
load, validates every table with bounds, replaces a bad feature value by its default and reports
it, refuses a bad model-access value with ``SETTINGS``, and every feature takes its table from it."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest

from dsh_notebook.errors import DshError, SettingsError
from dsh_notebook.settings import (
    BUILTIN,
    AcademicSettings,
    BibliographicSettings,
    ResearchSettings,
    ReviewerSettings,
    SearchSettings,
    Settings,
    Table,
    default_settings,
    load_settings,
)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path))
    for var in ("DEEPSEEK_BASE_URL", "DSH_MODEL", "DSH_CROSSREF_URL", "DSH_ARXIV_URL", "DSH_PUBMED_URL", "DSH_DATACITE_URL"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def write(home, text: str) -> None:
    (home / "settings.toml").write_text(text, encoding="utf-8")


def test_every_field_has_a_description_and_numbers_have_bounds():
    def tables(cls):
        yield cls
        for field in cls.model_fields.values():
            if isinstance(field.annotation, type) and issubclass(field.annotation, Table):
                yield from tables(field.annotation)

    seen = set()
    for cls in [Settings, *tables(Settings)]:
        if cls in seen:
            continue
        seen.add(cls)
        for name, field in cls.model_fields.items():
            assert field.description, f"{cls.__name__}.{name} has no description"
    for cls in (SearchSettings, ReviewerSettings, BibliographicSettings):
        for name, field in cls.model_fields.items():
            if field.annotation in (int, float):
                kinds = {type(m).__name__ for m in field.metadata}
                assert kinds & {"Ge", "Gt"} and "Le" in kinds, f"{cls.__name__}.{name} is unbounded"


def test_a_rewritten_file_is_seen_at_the_next_load_even_with_the_same_size(home):
    write(home, "[reviewer]\ntimeout = 30\n")
    assert load_settings().reviewer.timeout == 30
    assert load_settings() is load_settings()  # unchanged: validated once, shared
    write(home, "[reviewer]\ntimeout = 40\n")  # same size, possibly the same mtime
    assert load_settings().reviewer.timeout == 40
    (home / "settings.toml").unlink()
    assert load_settings().reviewer.timeout == 180


def test_the_environment_applies_and_never_changes_the_builtins(home, monkeypatch):
    before = json.dumps(BUILTIN, sort_keys=True)
    monkeypatch.setenv("DEEPSEEK_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("DSH_CROSSREF_URL", "http://127.0.0.1:8/")
    s = load_settings()
    assert s.providers["deepseek"].base_url == "http://127.0.0.1:9"
    assert s.research.bibliographic.crossref_url == "http://127.0.0.1:8/"
    assert json.dumps(BUILTIN, sort_keys=True) == before
    monkeypatch.delenv("DEEPSEEK_BASE_URL")
    assert load_settings().providers["deepseek"].base_url == "https://api.deepseek.com"
    monkeypatch.setenv("DSH_MODEL", "deepseek-reasoner")
    assert load_settings().resolve()[2].id == "deepseek-reasoner"
    write(home, "research = 3\n")  # the environment cannot go under a value that is not a table
    assert load_settings().research.bibliographic.crossref_url == "https://api.crossref.org"
    assert default_settings().research.bibliographic.crossref_url == "http://127.0.0.1:8/"


def test_a_bad_model_access_value_raises_with_its_code(home):
    write(home, "[[providers.deepseek.models]]\nid = \"deepseek-chat\"\nmax_tokens = 0\n")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert info.value.code == "SETTINGS" and "providers.deepseek.models.0.max_tokens" in info.value.message
    write(home, "colour = 1\n")
    with pytest.raises(DshError, match="colour"):
        load_settings()


def test_bad_feature_values_never_cost_model_access(home):
    write(home, "search = 3\nreviewer = []\nacademic = 5\n[research]\nbudget_tokens = -1\n"
                "[research.bibliographic]\ntimeout = \"slow\"\n")
    s = load_settings()
    assert s.resolve()[2].id == "deepseek-chat"
    assert s.search == SearchSettings() and "[search] must be a table" in s.search.problems[0]
    assert s.reviewer == ReviewerSettings() and s.reviewer.problems == ("[reviewer] must be a table, not []; "
                                                                        "defaults are used",)
    assert s.academic.language == "auto" and "must be a table, not 5" in s.academic.problems[0]
    assert s.research.budget_tokens == 200_000
    assert s.research.problems_of("budget_tokens") == ("[research] budget_tokens must be a positive number of "
                                                       "tokens, not -1",)
    assert s.research.bibliographic.timeout == 15.0
    assert s.research.problems_of("bibliographic") == s.research.bibliographic.problems
    assert "timeout = 'slow'" in s.research.bibliographic.problems[0]


def test_reviewer_table_messages(home):
    write(home, "[reviewer]\ntimeout = 30\nhide_unverified = 1\npoll = true\nwindow_chars = 50000.0\ncolour = 1\n")
    t = load_settings().reviewer
    assert (t.timeout, t.poll, t.window_chars, t.hide_unverified) == (30.0, 5.0, 50_000, False)
    assert t.problems == ("[reviewer] poll = True is outside 0.2-3600; 5 is used",
                          "[reviewer] hide_unverified = 1 is not true or false",
                          "[reviewer] has no setting 'colour'")
    from dsh_notebook.reviewer.runner import reviewer_config

    config, problems = reviewer_config()
    assert config["timeout"] == 30.0 and config["max_chars"] == 50_000 and problems == list(t.problems)


def test_academic_language(home):
    from dsh_notebook.academic.shaping import language_setting

    write(home, '[academic]\nlanguage = "zh"\nother = 1\n')
    assert language_setting(load_settings()) == ("zh", None)
    write(home, '[academic]\nlanguage = "fr"\n')
    assert language_setting(load_settings()) == ("auto", "[academic] language = 'fr' is not auto, zh or en; "
                                                         "auto is used")
    assert AcademicSettings.model_validate({"language": "en"}).language == "en"


def test_the_router_refuses_its_bad_values_with_a_code(home):
    from dsh_notebook.research_pipeline.router import Router

    write(home, "[research]\nbudget_tokens = true\n")
    with pytest.raises(ValueError, match="budget_tokens must be a positive number of tokens, not True") as info:
        Router()
    assert isinstance(info.value, SettingsError) and info.value.code == "SETTINGS"
    write(home, '[research.tiers]\ncheap = { model = 5 }\n')
    with pytest.raises(SettingsError, match=r"\[research.tiers.cheap\] model = 5"):
        Router()
    write(home, '[research.tiers]\nstrong = { model = "nope" }\n')
    with pytest.raises(SettingsError, match=r"\[research.tiers.strong\] model: no model 'nope'"):
        Router()
    write(home, "[research]\ntiers = 3\nbudget_tokens = 1500.5\n")  # a shape problem is logged, not refused
    assert Router().budget_tokens == 1500.5


def test_bibliographic_settings_come_from_the_one_model(home, monkeypatch, caplog):
    from dsh_notebook.research_pipeline.bibliographic import (
        DEFAULTS,
        bibliographic_settings,
    )

    assert DEFAULTS == BibliographicSettings().model_dump()
    write(home, '[research.bibliographic]\ncrossref_url = "ftp://x"\nretries = 0\nmailto = "lab@example.org"\n')
    with caplog.at_level(logging.WARNING, logger="dsh_notebook.research_pipeline.bibliographic"):
        conf = bibliographic_settings({"timeout": 3})
    assert conf["crossref_url"] == "https://api.crossref.org" and conf["retries"] == 0 and conf["timeout"] == 3
    assert conf["mailto"] == "lab@example.org"
    assert "crossref_url = 'ftp://x' is not an http(s) URL" in caplog.text
    monkeypatch.setenv("DSH_ARXIV_URL", "http://127.0.0.1:7/")
    write(home, "[providers.deepseek]\nbase_url = 3\n")  # model access broken: the verifier goes on
    with caplog.at_level(logging.WARNING, logger="dsh_notebook.research_pipeline.bibliographic"):
        conf = bibliographic_settings()
    assert conf["arxiv_url"] == "http://127.0.0.1:7" and "ignoring settings.toml" in caplog.text


def test_research_table_other_keys_are_ignored():
    r = ResearchSettings.model_validate({"budget_tokens": 10, "notes": "x", "tiers": {"medium": {}}})
    assert r.budget_tokens == 10 and r.problems == ()


def test_the_settings_module_imports_only_the_base_layer():
    code = ("import json, sys, dsh_notebook.settings; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('dsh_notebook'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out))
    assert all(m in ("dsh_notebook", "dsh_notebook.version", "dsh_notebook.errors", "dsh_notebook.redact",
                     "dsh_notebook.secretscan", "dsh_notebook.settings") or
               m.startswith("dsh_notebook.storage") for m in loaded), loaded


def test_the_reckoner_engine_finds_the_home_without_pydantic():
    code = ("import sys, dsh_notebook.reckoner.engine as e; "
            "print(str(e.default_home()), 'pydantic' in sys.modules, 'httpx' in sys.modules)")
    env = {"DSH_NOTEBOOK_HOME": "/tmp/dsh-home-x", "PATH": "", "PYTHONPATH": ":".join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == ["/tmp/dsh-home-x/reckoner", "False", "False"]


@pytest.mark.parametrize("make, says", [
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: __import__("os").mkfifo(p), "not a regular file"),
    (lambda p: p.symlink_to("/dev/zero"), "not a regular file"),
    (lambda p: p.write_bytes(b"# x\n" * 300_000), "over the 1048576-byte limit"),
    (lambda p: p.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n"), "nests tables or arrays too deeply"),
    (lambda p: p.write_text("default_model = 1" + "0" * 5000 + "\n"), "holds a value that cannot be read"),
    (lambda p: p.write_bytes(b'default_model = "caf\xe9"\n'), "is not UTF-8 text"),
])
def test_a_settings_file_that_cannot_be_read_is_named_never_waited_on(home, make, says):
    """A folder, a fifo (never opened for a blocking read), /dev/zero, an over-long file, deep
    nesting, a huge integer, bad UTF-8: one SettingsError naming the file and the problem."""
    make(home / "settings.toml")
    with pytest.raises(SettingsError) as exc:
        load_settings()
    assert exc.value.code == "SETTINGS" and str(home / "settings.toml") in str(exc.value) and says in str(exc.value)


def test_a_key_written_where_its_variable_name_goes_is_refused_without_being_echoed(home):
    secret = "sk-live-REALSECRETKEY0123456789"
    write(home, f'[providers.deepseek]\napi_key_env = "{secret}"\n')
    with pytest.raises(SettingsError) as exc:
        load_settings()
    assert "api_key_env" in str(exc.value) and secret not in str(exc.value)


def test_credentials_that_are_not_utf8_are_a_missing_credential_without_their_text(home, monkeypatch):
    from dsh_notebook.errors import LLMError
    from dsh_notebook.settings import api_key

    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    cred = home / "credentials.toml"
    cred.write_bytes(b'[deepseek]\napi_key = "sk-\xff\xfesecretsecret"\n')
    cred.chmod(0o600)
    settings = load_settings()
    with pytest.raises(LLMError) as exc:
        api_key("deepseek", settings.providers["deepseek"])
    assert exc.value.code == "MISSING_CREDENTIAL" and "not UTF-8" in str(exc.value) and "secret" not in str(exc.value)


def test_a_model_id_that_is_not_a_string_is_a_settings_error(home):
    write(home, "[providers.deepseek]\nmodels = [{id = [1]}]\n")
    with pytest.raises(SettingsError) as exc:
        load_settings()
    assert "providers.deepseek.models" in str(exc.value)


def test_settings_problems_hide_url_passwords_and_stay_short(home):
    write(home, '[research.bibliographic]\ncrossref_url = "ftp://alice:hunter2@crossref.example"\n\n'
                '[search]\nprovider = "' + "A" * 50_000 + '"\n')
    settings = load_settings()
    problems = list(settings.research.bibliographic.problems) + list(settings.search.problems)
    assert problems and all("hunter2" not in p and len(p) <= 300 for p in problems), problems
    assert any("ftp://***@crossref.example" in p for p in problems)


def test_a_key_pasted_where_the_model_goes_is_never_echoed(home):
    """Issue 14: the UNKNOWN_MODEL message names what was asked for, with a pasted key masked."""
    from dsh_notebook.errors import LLMError
    from dsh_notebook.settings import load_settings

    key = "sk-" + "0123456789abcdef" * 2
    with pytest.raises(LLMError) as exc:
        load_settings().resolve(key)
    assert exc.value.code == "UNKNOWN_MODEL" and key not in str(exc.value) and "[key]" in str(exc.value)
    with pytest.raises(LLMError) as exc:
        load_settings().resolve("x" * 5000)
    assert len(str(exc.value)) < 1000
