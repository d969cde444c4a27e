"""The ``search`` tool (spec: llm.md "Presets from the reckoner seed"; upstream-facts.md 3.13),
through real httpx against the fake SearXNG / Wikipedia servers and the scripted chat server."""

from __future__ import annotations

import json
import math
import threading
import time

import pytest

from dsh_notebook.llm import ChatClient
from dsh_notebook.llm.agent import Agent, Tool, current_cancel
from dsh_notebook.llm.search import (
    EXTRACT_SYSTEM,
    MATERIAL_MAX_CHARS,
    PROMPT_VERSION,
    SNIPPET_MAX_CHARS,
    TITLE_MAX_CHARS,
    URL_MAX_CHARS,
    SearchError,
    SearchPolicy,
    SearxngProvider,
    WikipediaProvider,
    host_matches,
    html_text,
    lookup,
    model_safe,
    parse_extraction,
    provider_from_settings,
    search_tool,
)
from dsh_notebook.llm.session import SessionLog
from dsh_notebook.llm.testing import FakeSearxng, FakeWikipedia, ScriptedServer
from dsh_notebook.reckoner import Engine, read_record, replay, rerun
from dsh_notebook.reckoner import records as R
from dsh_notebook.reckoner.schemas import TOOL_SCHEMAS
from dsh_notebook.settings import DEFAULT_ALLOWED_HOSTS, host_of, load_settings, normalize_host_pattern

Q = "What is the electrical resistivity of copper at 20 °C?"
ANSWER = "Copper has an electrical resistivity of 1.68×10⁻⁸ Ω·m at 20 °C."
RESULTS = [
    {"url": "https://evil.example.com/copper", "title": "Copper facts you won't believe",
     "content": "Copper resistivity is 9 Ω·m, trust us."},
    {"url": "https://en.wikipedia.org/wiki/Electrical_resistivity_and_conductivity",
     "title": "Electrical resistivity and conductivity",
     "content": "Copper 1.68×10⁻⁸ Ω·m at 20 °C", "publishedDate": "2024-05-01T00:00:00"},
    {"url": "https://www.nist.gov/copper", "title": "NIST copper data",
     "content": "Resistivity of annealed copper: 1.7241×10⁻⁸ Ω·m"},
]


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key-not-real")
    monkeypatch.delenv("DSH_MODEL", raising=False)
    return tmp_path


@pytest.fixture
def engine(env):
    e = Engine(env / "calc")
    assert e.record_start("copper wire") == {"ok": True}
    yield e
    e.close()


def chat_client(srv, monkeypatch) -> ChatClient:
    monkeypatch.setenv("DEEPSEEK_BASE_URL", srv.base_url)
    return ChatClient(backoff=0.01, max_retries=0)


def extraction(reply: dict | str, **expect) -> dict:
    """One scripted turn answering the extraction call (tool-free, not streamed)."""
    content = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
    return {"expect": {"stream": False, "tools": [], "contains": "Question:", **expect}, "reply": {"content": content}}


def search_rows(engine: Engine) -> list[dict]:
    return [r for r in read_record(engine.home / R.OPEN_FILE).rows if r.get("tool") == "search"]


# ------------------------------------------------------------------ outcomes


def test_answered_writes_candidates_used_and_synthesis(engine, monkeypatch):
    reply = "```json\n" + json.dumps({"answer": ANSWER, "used": [2, 1, 2, 9, 0, "x"], "insufficient": False}) + "\n```"
    script = [extraction(reply, params={"max_tokens": 800})]
    with FakeSearxng({Q: RESULTS}) as sx, ScriptedServer(script) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(),
                         provider=SearxngProvider(sx.base_url))
    assert receipt == {"ok": True, "answer": ANSWER, "origin": "allowlist"}
    # the provider got the question verbatim, as JSON
    assert sx.searches[0]["query"] == {"q": Q, "format": "json"}
    assert sx.searches[0]["user_agent"].startswith("dsh-notebook/")
    # the extraction call: our rules, the prompt's material format
    body = srv.requests[0]["body"]
    assert body["messages"][0] == {"role": "system", "content": EXTRACT_SYSTEM} and "tools" not in body
    user = body["messages"][1]["content"]
    assert user.startswith(f"Question: {Q}\n\nMaterial:\n[1] Electrical resistivity and conductivity\n"
                           "url: https://en.wikipedia.org/wiki/Electrical_resistivity_and_conductivity\n"
                           "published: 2024-05-01T00:00:00\nCopper 1.68×10⁻⁸ Ω·m at 20 °C\n\n[2] NIST copper data")
    assert "evil.example.com" not in user  # the strict tier never shows the extractor a disallowed source
    [row] = search_rows(engine)
    assert row["ok"] is True and isinstance(row["seq"], int) and isinstance(row["at"], int)
    fact = row["content"]
    assert fact["question"] == Q and fact["tier"] == "strict" and fact["outcome"] == "answered"
    assert [c["url"] for c in fact["candidates"]] == [r["url"] for r in RESULTS]
    assert fact["candidates"][0] == {"url": "https://evil.example.com/copper", "title": "Copper facts you won't believe",
                                     "snippet": "Copper resistivity is 9 Ω·m, trust us."}
    assert fact["used"] == fact["candidates"][1:]
    assert fact["used"][0]["publishedAt"] == "2024-05-01T00:00:00"
    assert fact["synthesis"] == {"provider": "deepseek", "model": "deepseek-chat", "promptVersion": PROMPT_VERSION,
                                 "answer": ANSWER, "used": [1, 0]}
    assert fact["policy"] == {"tier": "strict", "allowedHosts": list(DEFAULT_ALLOWED_HOSTS), "maxResults": 12,
                              "maxSearchesPerRecord": 4, "answerMaxChars": 1200, "enrichPages": 0,
                              "enrichCharsPerPage": 4000}
    assert isinstance(fact["durationMs"], int) and "code" not in fact and "error" not in fact
    assert engine.lookup_count() == 1


def test_origin_github_and_web_and_trimmed_answer(engine, monkeypatch):
    gh = [{"url": "https://github.com/org/lib/blob/main/README.md", "content": "max 40 mA"},
          {"url": "https://raw.githubusercontent.com/org/lib/main/spec.txt", "content": "40 mA per pin"}]
    long = "The absolute maximum current per pin is 40 mA. " * 40
    script = [extraction({"answer": long, "used": [1], "insufficient": False}),
              extraction({"answer": "Open web says 9 Ω·m.", "used": [1], "insufficient": False})]
    with FakeSearxng({"pin current": gh, Q: RESULTS}) as sx, ScriptedServer(script) as srv:
        client = chat_client(srv, monkeypatch)
        r1 = lookup(engine, "pin current", client=client, policy=SearchPolicy(answer_max_chars=120),
                    provider=SearxngProvider(sx.base_url))
        r2 = lookup(engine, Q, client=client, policy=SearchPolicy(tier="open"), provider=SearxngProvider(sx.base_url))
    assert r1["ok"] and r1["origin"] == "github"
    assert r1["answer"].endswith("…") and len(r1["answer"]) <= 121
    assert r2 == {"ok": True, "answer": "Open web says 9 Ω·m.", "origin": "web"}
    rows = search_rows(engine)
    assert rows[0]["content"]["synthesis"]["answer"] == r1["answer"]
    assert rows[1]["content"]["tier"] == "open" and len(rows[1]["content"]["used"]) == 3
    assert "evil.example.com" in srv.requests[1]["body"]["messages"][1]["content"]


def test_insufficient_when_nothing_is_allowed(engine, monkeypatch):
    results = [{"url": "https://evilwikipedia.org/wiki/Copper", "content": "Copper 1.68e-8"},
               {"url": "ftp://wikipedia.org/copper.txt", "content": "Copper 1.68e-8"},
               {"url": "https://example.com/copper", "content": "Copper 1.68e-8"}]
    with FakeSearxng({Q: results, "any": RESULTS}) as sx, ScriptedServer([]) as srv:
        client = chat_client(srv, monkeypatch)
        receipt = lookup(engine, Q, client=client, policy=SearchPolicy(), provider=SearxngProvider(sx.base_url))
        # an explicitly empty allow-list is honoured: the strict tier then reads nothing
        empty = lookup(engine, "any", client=client, policy=SearchPolicy(allowed_hosts=[]),
                       provider=SearxngProvider(sx.base_url))
    assert receipt["ok"] is False and receipt["code"] == "SEARCH_INSUFFICIENT"
    assert empty["code"] == "SEARCH_INSUFFICIENT"
    assert srv.requests == []  # no extraction call without material
    r1, r2 = search_rows(engine)
    assert r1["ok"] is False and r1["content"]["outcome"] == "insufficient"
    assert r1["content"]["code"] == "SEARCH_INSUFFICIENT" and "none of the 3 sources" in r1["content"]["error"]
    assert len(r1["content"]["candidates"]) == 3 and r1["content"]["used"] == []
    assert r2["content"]["policy"]["allowedHosts"] == [] and len(r2["content"]["candidates"]) == 3
    assert "synthesis" not in r1["content"]


def test_insufficient_when_the_extractor_says_so(engine, monkeypatch):
    said = ("The material gives copper's resistivity only at 25 °C "
            "(https://en.wikipedia.org/wiki/Copper), not at 20 °C.")
    script = [extraction({"answer": said, "used": [1, 2], "insufficient": True})]
    with FakeSearxng({Q: RESULTS}) as sx, ScriptedServer(script) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(),
                         provider=SearxngProvider(sx.base_url))
    assert receipt["ok"] is False and receipt["code"] == "SEARCH_INSUFFICIENT"
    assert "only at 25 °C" in receipt["error"] and "en.wikipedia.org" in receipt["error"]
    assert "https://" not in receipt["error"]  # a URL in the extractor's sentence is reduced to its host
    [row] = search_rows(engine)
    fact = row["content"]
    assert fact["outcome"] == "insufficient" and len(fact["used"]) == 2
    assert fact["synthesis"]["used"] == [] and fact["synthesis"]["promptVersion"] == PROMPT_VERSION


def test_budget_refuses_the_fifth_search_without_calling_the_provider(env, engine, monkeypatch):
    with FakeSearxng({}) as sx, ScriptedServer([]) as srv:
        client = chat_client(srv, monkeypatch)
        provider = SearxngProvider(sx.base_url)
        got = [lookup(engine, f"question {i}", client=client, policy=SearchPolicy(), provider=provider)
               for i in range(5)]
        assert len(sx.searches) == 4  # the fifth never reached the provider
        assert [g["code"] for g in got] == ["SEARCH_INSUFFICIENT"] * 4 + ["SEARCH_BUDGET_EXCEEDED"]
        assert "all 4 of its lookups" in got[4]["error"]
        rows = search_rows(engine)
        assert [r["content"]["outcome"] for r in rows] == ["insufficient"] * 4 + ["refused"]
        assert rows[4]["content"]["candidates"] == [] and rows[4]["content"]["code"] == "SEARCH_BUDGET_EXCEEDED"
        assert engine.lookup_count() == 5
        # the counter survives a crash: recovery counts the search rows it reads back
        engine.close()
        again = Engine(env / "calc")
        assert again.recovered and again.lookup_count() == 5
        refused = lookup(again, "question 6", client=client, policy=SearchPolicy(), provider=provider)
        assert refused["code"] == "SEARCH_BUDGET_EXCEEDED" and len(sx.searches) == 4
        # a new record has a new budget
        assert again.record_end()["ok"] and again.record_start("next") == {"ok": True}
        assert again.lookup_count() == 0
        assert lookup(again, "question 7", client=client, policy=SearchPolicy(), provider=provider)["code"] == \
            "SEARCH_INSUFFICIENT"
        again.close()
    assert srv.requests == []


def test_failed_when_the_provider_answers_500(engine, monkeypatch):
    with FakeSearxng({Q: RESULTS}, status=500) as sx, ScriptedServer([]) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(),
                         provider=SearxngProvider(sx.base_url))
    assert receipt["ok"] is False and receipt["code"] == "SEARCH_UNAVAILABLE"
    assert "http" not in receipt["error"] and "127.0.0.1" not in receipt["error"]
    [row] = search_rows(engine)
    assert row["ok"] is False and row["content"]["outcome"] == "failed"
    assert "HTTP 500" in row["content"]["error"] and row["content"]["candidates"] == []
    assert srv.requests == []


def test_a_busy_provider_is_asked_again_under_the_retry_policy():
    """A 503 (or 429) from the search endpoint is retried once, honouring Retry-After; a 500 that
    stays a 500 is reported after the retry (two requests, not a retry loop)."""
    with FakeSearxng({Q: RESULTS}) as sx:
        sx.fail_next = [503]
        found = SearxngProvider(sx.base_url).search(Q, 5)
        assert [c["url"] for c in found] == [r["url"] for r in RESULTS][:len(found)] and found
        assert len(sx.searches) == 2
        sx.status = 500
        with pytest.raises(SearchError, match="HTTP 500"):
            SearxngProvider(sx.base_url).search(Q, 5)
        assert len(sx.searches) == 4


def test_failed_when_no_provider_is_configured(engine, monkeypatch):
    with ScriptedServer([]) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(), provider=None)
    assert receipt["code"] == "SEARCH_UNAVAILABLE"
    [row] = search_rows(engine)
    assert row["content"]["outcome"] == "failed" and "settings.toml" in row["content"]["error"]


def test_failed_when_the_extraction_reply_is_unreadable(engine, monkeypatch):
    raw = "I believe it is roughly 1.7e-8 ohm metres, see https://en.wikipedia.org/wiki/Copper"
    script = [extraction(raw), extraction('{"answer": "   ", "used": [1], "insufficient": false}')]
    with FakeSearxng({Q: RESULTS}) as sx, ScriptedServer(script) as srv:
        client = chat_client(srv, monkeypatch)
        r1 = lookup(engine, Q, client=client, policy=SearchPolicy(), provider=SearxngProvider(sx.base_url))
        r2 = lookup(engine, Q, client=client, policy=SearchPolicy(), provider=SearxngProvider(sx.base_url))
    for r in (r1, r2):
        assert r["ok"] is False and r["code"] == "SEARCH_UNAVAILABLE"
        assert "1.7e-8" not in r["error"] and "wikipedia" not in r["error"]  # raw text never reaches the model
    rows = search_rows(engine)
    assert [x["content"]["outcome"] for x in rows] == ["failed", "failed"]
    assert "roughly 1.7e-8" in rows[0]["content"]["error"] and len(rows[0]["content"]["used"]) == 2


def test_no_open_record_writes_nothing(env, monkeypatch):
    e = Engine(env / "calc")
    with FakeSearxng({Q: RESULTS}) as sx, ScriptedServer([]) as srv:
        receipt = lookup(e, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(),
                         provider=SearxngProvider(sx.base_url))
    assert receipt["ok"] is False and receipt["code"] == "ENGINE_OPEN_RECORD_NOT_FOUND"
    assert sx.requests == [] and srv.requests == []
    assert not (env / "calc" / R.OPEN_FILE).exists() and list((env / "calc").glob("**/*.jsonl")) == []
    assert e.record_lookup({"outcome": "answered"})["code"] == "ENGINE_OPEN_RECORD_NOT_FOUND"
    assert e.lookup_count() == 0


def test_enrich_reads_allowed_pages_and_skips_failures(engine, monkeypatch):
    page = ("<html><head><title>T</title><script>steal()</script></head><body><h1>Copper</h1>"
            "<p>Resistivity: 1.68 &times; 10<sup>-8</sup> Ω·m at 20 °C.</p><style>p{}</style></body></html>")
    sx = FakeSearxng(lambda q: [{"url": sx.base_url + "/page/copper", "title": "Copper", "content": "short"},
                                {"url": sx.base_url + "/page/missing", "title": "Gone", "content": "gone snippet"}],
                     documents={"/page/copper": page})
    script = [extraction({"answer": "1.68 × 10 -8 Ω·m at 20 °C.", "used": [1], "insufficient": False})]
    with sx, ScriptedServer(script) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch),
                         policy=SearchPolicy(tier="open", enrich_pages=2, enrich_chars_per_page=200),
                         provider=SearxngProvider(sx.base_url, allow_private=True))  # pages on 127.0.0.1
    assert receipt["ok"] and receipt["origin"] == "web"
    user = srv.requests[0]["body"]["messages"][1]["content"]
    assert "Copper Resistivity: 1.68 × 10 -8 Ω·m at 20 °C." in user and "steal()" not in user
    assert "gone snippet" in user  # a page that fails keeps its snippet
    assert [r["path"] for r in sx.requests] == ["/search", "/page/copper", "/page/missing"]
    fact = search_rows(engine)[0]["content"]
    assert all(set(c) <= {"url", "title", "snippet", "publishedAt"} for c in fact["used"])  # no page text stored


def test_enrich_never_fetches_a_private_address_a_page_redirects_to(engine, monkeypatch):
    """A result on a public host whose page redirects to 127.0.0.1: the redirect is checked like
    the first hop (dsh_notebook.net.fetch), so the private page is never requested and the
    result keeps only its snippet; a result on a private address is not fetched at all."""
    from dsh_notebook.net import fetcher

    real = fetcher.check_host
    monkeypatch.setattr(fetcher, "check_host",  # public.test stands for a public host (served here)
                        lambda host, port, allow: ["127.0.0.1"] if host == "public.test" else real(host, port, allow))
    monkeypatch.setenv("DSH_FULLTEXT_ALLOW_PRIVATE", "1")  # the full texts' demo override does not reach search
    secret = "<p>admin console: the copper resistivity is 9 ohm m</p>"
    sx = FakeSearxng(lambda q: [{"url": f"http://public.test:{sx.port}/page/moved", "title": "Moved",
                                 "content": "moved snippet"},
                                {"url": sx.base_url + "/page/secret", "title": "Direct", "content": "direct snippet"}],
                     documents={"/page/secret": secret})
    sx.documents["/page/moved"] = (302, "text/plain", "", {"Location": sx.base_url + "/page/secret"})
    script = [extraction({"answer": "Nothing.", "used": [], "insufficient": True})]
    with sx, ScriptedServer(script) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch),
                         policy=SearchPolicy(tier="open", enrich_pages=2),
                         provider=SearxngProvider(sx.base_url))  # no allow_private: as in real use
    assert receipt["code"] == "SEARCH_INSUFFICIENT"
    assert [r["path"] for r in sx.requests] == ["/search", "/page/moved"]  # /page/secret never requested
    user = srv.requests[0]["body"]["messages"][1]["content"]
    assert "moved snippet" in user and "direct snippet" in user and "admin console" not in user


# ------------------------------------------------------------------ hosts, policy, settings


def test_host_matching_edge_cases():
    assert host_matches("en.wikipedia.org", "wikipedia.org") and host_matches("wikipedia.org", "wikipedia.org")
    assert not host_matches("evilwikipedia.org", "wikipedia.org")
    assert not host_matches("wikipedia.org.evil.com", "wikipedia.org")
    assert host_of("ftp://wikipedia.org/file") is None and host_of("mailto:x@wikipedia.org") is None
    assert host_of("HTTPS://EN.Wikipedia.ORG.:443/wiki/X") == "en.wikipedia.org" and host_of("not a url") is None
    assert normalize_host_pattern("  https://*.NIST.gov:8443/path?q=1 ") == "nist.gov"
    assert normalize_host_pattern(".arxiv.org") == "arxiv.org" and normalize_host_pattern("*.") == ""
    policy = SearchPolicy()
    assert policy.allows("https://en.wikipedia.org/wiki/Copper")
    assert not policy.allows("https://evilwikipedia.org/wiki/Copper")
    assert not policy.allows("ftp://en.wikipedia.org/x") and not policy.allows("https://127.0.0.1/")
    assert SearchPolicy(tier="open").allows("ftp://anything/x")
    assert not SearchPolicy(allowed_hosts=[]).allows("https://en.wikipedia.org/wiki/Copper")


def test_policy_defaults_and_out_of_range_values():
    d = SearchPolicy()
    assert (d.tier, d.max_results, d.max_searches_per_record, d.answer_max_chars, d.enrich_pages,
            d.enrich_chars_per_page, d.synthesis_model, d.synthesis_max_tokens) == ("strict", 12, 4, 1200, 0, 4000,
                                                                                  None, 800)
    assert len(d.allowed_hosts) == 12 and d.problems == ()
    p = SearchPolicy.from_config({"tier": "lax", "max_results": 51, "max_searches_per_record": 0,
                                  "answer_max_chars": 119, "enrich_pages": True, "enrich_chars_per_page": 200.0,
                                  "synthesis_max_tokens": 8193, "synthesis_model": "", "allowed_hosts": "nist.gov",
                                  "colour": "blue"})
    assert (p.tier, p.max_results, p.max_searches_per_record, p.answer_max_chars, p.enrich_pages,
            p.enrich_chars_per_page, p.synthesis_max_tokens, p.synthesis_model) == ("strict", 12, 4, 1200, 0, 4000,
                                                                                  800, None)
    assert p.allowed_hosts == DEFAULT_ALLOWED_HOSTS
    text = "\n".join(p.problems)
    for key in ("tier", "max_results", "max_searches_per_record", "answer_max_chars", "enrich_pages",
                "enrich_chars_per_page", "synthesis_max_tokens", "synthesis_model", "allowed_hosts", "colour"):
        assert key in text, key
    edge = SearchPolicy.from_config({"max_results": 50, "answer_max_chars": 120, "enrich_pages": 10, "tier": "open"})
    assert (edge.max_results, edge.answer_max_chars, edge.enrich_pages, edge.tier, edge.problems) == (50, 120, 10,
                                                                                                      "open", ())


def test_settings_search_table(env):
    home = env / "home"
    home.mkdir()
    (home / "settings.toml").write_text(
        '[search]\nprovider = "searxng"\nsearxng_url = "http://127.0.0.1:8888"\nmax_results = 99\n'
        'allowed_hosts = ["*.Wikipedia.org", "https://nist.gov:443/x", "", "NIST.gov"]\nmax_searches_per_record = 2\n',
        encoding="utf-8")
    settings = load_settings()
    policy = SearchPolicy.from_settings(settings)
    assert policy.max_results == 12 and any("max_results is 99" in p for p in policy.problems)
    assert policy.allowed_hosts == ("wikipedia.org", "nist.gov") and policy.max_searches_per_record == 2
    provider = provider_from_settings(settings)
    assert isinstance(provider, SearxngProvider) and provider.base_url == "http://127.0.0.1:8888"
    # an explicitly empty list is kept; a bad provider is reported and switches search off
    (home / "settings.toml").write_text('[search]\nallowed_hosts = []\nprovider = "bing"\n', encoding="utf-8")
    settings = load_settings()
    policy = SearchPolicy.from_settings(settings)
    assert policy.allowed_hosts == () and provider_from_settings(settings) is None
    assert any("provider is 'bing'" in p for p in policy.problems)
    (home / "settings.toml").write_text('[search]\nprovider = "wikipedia"\n', encoding="utf-8")
    wiki = provider_from_settings(load_settings())
    assert isinstance(wiki, WikipediaProvider) and wiki.base_url == "https://en.wikipedia.org"
    (home / "settings.toml").write_text('[search]\nprovider = "searxng"\n', encoding="utf-8")
    assert provider_from_settings(load_settings()) is None
    assert any("needs searxng_url" in p for p in SearchPolicy.from_settings(load_settings()).problems)
    (home / "settings.toml").unlink()
    # no [search] table: the defaults, nothing to report, no provider
    assert load_settings().search.problems == () and provider_from_settings(load_settings()) is None
    assert SearchPolicy.from_settings(load_settings()) == SearchPolicy()


def test_parse_extraction():
    assert parse_extraction('Sure! {"answer": "8.96 g/cm³", "used": [3, 1, 1, 0, 7], "insufficient": false} ok', 3) \
        == ("8.96 g/cm³", [2, 0], False)
    assert parse_extraction('{"answer": "not in the material", "used": [1], "insufficient": true}', 2) \
        == ("not in the material", [], True)
    assert parse_extraction('{"answer": "x"}', 1) == ("x", [], False)
    for bad in ("no json here", '{"answer": ""}', '{"answer": 5}', '["answer"]', '{"used": [1]}', "{broken"):
        assert parse_extraction(bad, 3) is None, bad


# ------------------------------------------------------------------ providers


def test_wikipedia_provider_parses_rest_search(engine, monkeypatch):
    pages = [{"key": "Electrical_resistivity_and_conductivity", "title": "Electrical resistivity and conductivity",
              "excerpt": 'The <span class="searchmatch">resistivity</span> of <span class="searchmatch">copper'
                         '</span> is 1.68&times;10<sup>−8</sup> Ω·m',
              "description": "Fundamental electrical property"},
             {"key": "Copper(II)_sulfate?", "title": "Copper(II) sulfate?", "excerpt": ""}]
    with FakeWikipedia({"copper resistivity": pages}) as wp, WikipediaProvider(wp.base_url) as provider:
        got = provider.search("copper resistivity", 5)
        assert provider.search("unknown question", 5) == []
    assert wp.searches[0]["query"] == {"q": "copper resistivity", "limit": "5"}
    assert got[0] == {"url": f"{wp.base_url}/wiki/Electrical_resistivity_and_conductivity",
                      "title": "Electrical resistivity and conductivity",
                      "snippet": "Fundamental electrical property — The resistivity of copper is 1.68×10 −8 Ω·m"}
    assert got[1] == {"url": f"{wp.base_url}/wiki/Copper(II)_sulfate%3F", "title": "Copper(II) sulfate?"}
    # through the whole lookup (the fake's host is not on the allow-list, so the open tier)
    script = [extraction({"answer": "1.68×10−8 Ω·m", "used": [1], "insufficient": False})]
    with FakeWikipedia({Q: pages}) as wp, ScriptedServer(script) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(tier="open"),
                         provider=WikipediaProvider(wp.base_url))
        strict = lookup(engine, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(),
                        provider=WikipediaProvider(wp.base_url))
    assert receipt == {"ok": True, "answer": "1.68×10−8 Ω·m", "origin": "web"}
    assert strict["code"] == "SEARCH_INSUFFICIENT"


def test_wikipedia_provider_error_status(engine, monkeypatch):
    with FakeWikipedia({}, status=503) as wp, ScriptedServer([]) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(),
                         provider=WikipediaProvider(wp.base_url))
    assert receipt["code"] == "SEARCH_UNAVAILABLE"
    assert "HTTP 503" in search_rows(engine)[0]["content"]["error"]


def test_searxng_without_json_format_is_an_error():
    with FakeSearxng({Q: RESULTS}) as sx:
        import httpx

        r = httpx.get(sx.base_url + "/search", params={"q": Q})
        assert r.status_code == 403
        assert httpx.get(sx.base_url + "/search", params={"q": "nothing", "format": "json"}).json()["results"] == []


# ------------------------------------------------------------------ engine rows


def test_search_rows_are_strict_json_and_skipped_by_replay_and_rerun(engine):
    assert engine.set("R", {"num": 2, "dim": "ohm"})["ok"]
    assert engine.record_lookup({"outcome": "failed", "x": math.nan})["code"] == "ENGINE_INVALID_ARGS"
    assert engine.record_lookup({"no": "outcome"})["code"] == "ENGINE_INVALID_ARGS"
    assert engine.lookup_count() == 0
    ok = engine.record_lookup({"question": "q", "outcome": "answered", "candidates": [], "used": []})
    assert ok["ok"] and engine.lookup_count() == 1
    assert engine.record_lookup({"question": "q", "outcome": "refused"})["ok"] and engine.lookup_count() == 2
    assert engine.eval("@R*3", "X")["ok"]
    assert engine.record_end()["ok"]
    rec = read_record(engine.last_closed)
    assert [r["tool"] for r in rec.rows] == ["record_start", "set", "search", "search", "eval", "record_end"]
    assert [r["ok"] for r in rec.rows if r["tool"] == "search"] == [True, False]
    assert [r["seq"] for r in rec.rows] == [1, 2, 3, 4, 5, 6]
    assert replay(rec)["differences"] == [] and replay(rec)["checked"] == 1
    assert rerun(rec)["differences"] == [] and rerun(rec)["checked"] == 1


# ------------------------------------------------------------------ the agent never sees sources


def engine_tools(engine: Engine) -> list[Tool]:
    return [Tool(name, spec["description"], spec["parameters"], lambda args, n=name: engine.call(n, args))
            for name, spec in TOOL_SCHEMAS.items()]


def test_the_model_never_receives_urls_titles_or_page_text(env, monkeypatch):
    engine = Engine(env / "calc")
    names = [*TOOL_SCHEMAS, "search"]

    def call(i, name, args):
        return {"id": f"call_{i}", "name": name, "arguments": json.dumps(args)}

    script = [
        {"expect": {"tools": names, "contains": "copper"},
         "reply": {"tool_calls": [call(1, "record_start", {"title": "Copper wire"}),
                                  call(2, "search", {"question": Q})]}},
        extraction({"answer": ANSWER, "used": [1], "insufficient": False}),
        {"expect": {"tools": names}, "reply": {"tool_calls": [call(3, "record_end", {"text": "looked up"})]}},
        {"expect": {"tools": names}, "reply": {"content": "ρ = 1.68×10⁻⁸ Ω·m (looked up)."}},
    ]
    with FakeSearxng({Q: RESULTS}) as sx, ScriptedServer(script) as srv:
        client = chat_client(srv, monkeypatch)
        tool = search_tool(engine, client, policy=SearchPolicy(), provider=SearxngProvider(sx.base_url))
        assert tool.name == "search" and tool.parameters["required"] == ["question"]
        assert tool.parameters["additionalProperties"] is False
        tools = [*engine_tools(engine), tool]
        log = SessionLog.create(env / "sessions", model=client.model.id, preset="reckoner-with-search",
                                tools=[t.name for t in tools])
        result = Agent(client, log, tools).run_turn("Resistance of a copper wire?")
    assert result.status == "completed" and not srv.mismatches and srv.remaining == 0
    agent_bodies = [json.dumps(r["body"], ensure_ascii=False) for r in srv.requests if r["body"].get("tools")]
    assert len(agent_bodies) == 3
    secrets = [r["url"] for r in RESULTS] + [r["title"] for r in RESULTS] + [r["content"] for r in RESULTS]
    secrets += ["wikipedia", "nist.gov", "2024-05-01"]
    for body in agent_bodies:
        for s in secrets:
            assert s not in body, s
    # the answer sentence (and only it) came back as the tool result
    sent = srv.requests[2]["body"]["messages"]
    results = [json.loads(m["content"]) for m in sent if m["role"] == "tool"]
    assert results[1] == {"ok": True, "answer": ANSWER, "origin": "allowlist"}
    # the extraction call did see the material (so the check above is meaningful)
    assert "https://www.nist.gov/copper" in json.dumps(srv.requests[1]["body"], ensure_ascii=False)
    [rec] = list((env / "calc" / "records").glob("*.jsonl"))
    rows = read_record(rec).rows
    assert [r["tool"] for r in rows] == ["record_start", "search", "record_end"]
    assert rows[1]["content"]["used"][0]["url"] == RESULTS[1]["url"]
    events = [e for e in log.events if e["type"] == "tool/result" and e["name"] == "search"]
    assert events[0]["content"] == {"ok": True, "answer": ANSWER, "origin": "allowlist"}
    log.close()
    engine.close()


def test_search_tool_reads_the_settings_at_every_call(env, engine, monkeypatch):
    home = env / "home"
    home.mkdir()
    with FakeSearxng({}) as sx, ScriptedServer([]) as srv:
        client = chat_client(srv, monkeypatch)
        tool = search_tool(engine, client)
        assert tool.fn({"question": "q0"})["code"] == "SEARCH_UNAVAILABLE"  # nothing configured yet
        settings = f'[search]\nsearxng_url = "{sx.base_url}"\nmax_searches_per_record = 2\n'
        (home / "settings.toml").write_text(settings, encoding="utf-8")
        assert tool.fn({"question": "q1"})["code"] == "SEARCH_INSUFFICIENT"
        assert tool.fn({"question": "q2"})["code"] == "SEARCH_BUDGET_EXCEEDED"  # 3 rows >= 2
        (home / "settings.toml").write_text(settings.replace("= 2", "= 4"), encoding="utf-8")
        assert tool.fn({"question": "q3"})["code"] == "SEARCH_INSUFFICIENT"  # no restart needed
    assert [r["query"]["q"] for r in sx.searches] == ["q1", "q3"]
    assert [r["content"]["outcome"] for r in search_rows(engine)] == ["failed", "insufficient", "refused",
                                                                      "insufficient"]


# ------------------------------------------------------------------ regressions (tester's report)


class RawReplyServer(ScriptedServer):
    """The scripted server, where a turn's ``reply`` may instead be ``{"raw": <JSON body>}``:
    that body is sent as it is (HTTP 200), to feed the client reply shapes nobody foresaw."""

    def _handle(self, h) -> None:
        with self._lock:
            turn = self.script[self._next] if self._next < len(self.script) else {}
        raw = (turn.get("reply") or {}).get("raw")
        if raw is None:
            return super()._handle(h)
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length") or 0)) or b"{}")
        with self._lock:
            self._next += 1
            self.requests.append({"path": h.path, "body": body, "authorized": bool(h.headers.get("Authorization"))})
        h._json(200, raw)


URL_FORMS = [  # (extractor's answer, what the model must get)
    ("See en.wikipedia.org/wiki/Copper?secret=1 : 1.68×10⁻⁸ Ω·m.", "See en.wikipedia.org : 1.68×10⁻⁸ Ω·m."),
    ("Copper: 1.68×10⁻⁸ Ω·m, per wikipedia.org/wiki/A", "Copper: 1.68×10⁻⁸ Ω·m, per wikipedia.org"),
    ("//en.wikipedia.org/wiki/Copper gives 1.68×10⁻⁸ Ω·m.", "en.wikipedia.org gives 1.68×10⁻⁸ Ω·m."),
    ("127.0.0.1:8080/path/x gives 1.68×10⁻⁸ Ω·m.", "gives 1.68×10⁻⁸ Ω·m."),
    ("https://user:pw@www.nist.gov:443/copper?x=1#f gives 1.7241×10⁻⁸ Ω·m.", "www.nist.gov gives 1.7241×10⁻⁸ Ω·m."),
    ("nist.gov:8443 and 10.0.0.1/admin and [::1]:8080/x and 192.168.1.1:80 agree: 1.68×10⁻⁸ Ω·m.",
     "nist.gov and and and agree: 1.68×10⁻⁸ Ω·m."),
    ("user:pw@evil.com/x, mailto:ops@nist.gov?s=1, hxxp://evil.com/a, https:\\\\evil.com\\b: 9 Ω·m.",
     "evil.com, nist.gov, evil.com, evil.com: 9 Ω·m."),
    ("(https://en.wikipedia.org/wiki/Copper_(element)) says 1.68×10⁻⁸ Ω·m.", "(en.wikipedia.org) says 1.68×10⁻⁸ Ω·m."),
    ("参见en.wikipedia.org/wiki/铜，电阻率为1.68×10⁻⁸ Ω·m。", "参见en.wikipedia.org，电阻率为1.68×10⁻⁸ Ω·m。"),
    ("http://127.0.0.1/x, https://[2001:db8::1]/y, data:text/html,<b>x</b> 5 V", ", , 5 V"),
]


def test_the_model_never_receives_url_like_tokens(engine, monkeypatch):
    answers = [a for a, _ in URL_FORMS]
    script = [extraction({"answer": a, "used": [1], "insufficient": False}) for a in answers]
    script.append(extraction({"answer": "Only at 25 °C, see en.wikipedia.org/wiki/Copper?secret=1 .", "used": [],
                              "insufficient": True}))
    policy = SearchPolicy(max_searches_per_record=len(script))
    with FakeSearxng({Q: RESULTS}) as sx, ScriptedServer(script) as srv:
        client = chat_client(srv, monkeypatch)
        got = [lookup(engine, Q, client=client, policy=policy, provider=SearxngProvider(sx.base_url))
               for _ in script]
    assert not srv.mismatches
    assert [g.get("answer") for g in got[:-1]] == [want for _, want in URL_FORMS]
    assert got[-1]["code"] == "SEARCH_INSUFFICIENT" and got[-1]["error"].endswith("see en.wikipedia.org .")
    rows = search_rows(engine)
    assert [r["content"]["synthesis"]["answer"] for r in rows[:-1]] == [want for _, want in URL_FORMS]
    for receipt in got:
        text = json.dumps(receipt, ensure_ascii=False)
        for leak in ("/", "secret", "8080", "127.0.0.1", "10.0.0.1", "::1", "pw@", "mailto", "data:", "<b>"):
            assert leak not in text, (leak, text)


def test_model_safe_keeps_numbers_units_and_prose():
    prose = ("Values: 1.68 Ω·m, 8.96 g/cm³, e.g. 20 °C, i.e. 293 K, J/(mol·K), version 1.2.3.4, 3.5/kg, Cu.Ni, "
             "ratio 1:2 at 12:30, a@b.com, bare host en.wikipedia.org.")
    assert model_safe(prose) == prose
    assert model_safe("  two\n lines ") == "two lines"
    assert model_safe("lone \ud800 and pair \ud83d\ude00") == "lone \ufffd and pair 😀"


@pytest.mark.parametrize("raw", [
    {"choices": ["x"]},
    {"choices": [{"index": 0, "message": "hi", "finish_reason": "stop"}]},
    {"choices": [{"index": 0, "message": {"role": "assistant", "content": 5}, "finish_reason": "stop"}]},
    {"no": "choices"},
    ["not", "an", "object"],
])
def test_a_bad_extraction_reply_shape_is_one_failed_row(engine, monkeypatch, raw):
    with FakeSearxng({Q: RESULTS}) as sx, RawReplyServer([{"reply": {"raw": raw}}]) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(),
                         provider=SearxngProvider(sx.base_url))
    assert len(srv.requests) == 1  # the provider and the model were called ...
    assert receipt["ok"] is False and receipt["code"] == "SEARCH_UNAVAILABLE"  # ... and lookup did not raise
    assert "could not be read" in receipt["error"]
    [row] = search_rows(engine)  # ... and exactly one row was written
    assert row["content"]["outcome"] == "failed" and row["content"]["code"] == "SEARCH_UNAVAILABLE"
    assert len(row["content"]["used"]) == 2 and row["content"]["error"]
    assert engine.lookup_count() == 1


def test_an_unexpected_error_in_the_extraction_step_is_one_failed_row(engine, monkeypatch):
    with FakeSearxng({Q: RESULTS}) as sx, ScriptedServer([]) as srv:
        client = chat_client(srv, monkeypatch)

        def broken(*a, **kw):
            raise AttributeError("'str' object has no attribute 'get'")

        monkeypatch.setattr(client, "complete", broken)
        receipt = lookup(engine, Q, client=client, policy=SearchPolicy(), provider=SearxngProvider(sx.base_url))
    assert receipt == {"ok": False, "code": "SEARCH_UNAVAILABLE",
                       "error": "the search results could not be read (the extraction step failed), so there is no "
                                "answer; treat the quantity as missing or try once more."}
    [row] = search_rows(engine)
    assert row["content"]["outcome"] == "failed"
    assert row["content"]["error"] == "the extraction step failed: AttributeError: 'str' object has no attribute 'get'"


def test_an_unexpected_error_anywhere_is_one_failed_row(engine, monkeypatch):
    class Odd:
        name = "odd"

        def search(self, query, max_results):
            return [{"url": "https://en.wikipedia.org/wiki/Copper", "title": "Copper"}]

    with ScriptedServer([]) as srv:
        client = chat_client(srv, monkeypatch)
        monkeypatch.setattr(SearchPolicy, "allows", lambda self, url: 1 / 0)
        receipt = lookup(engine, Q, client=client, policy=SearchPolicy(), provider=Odd())
    assert receipt["ok"] is False and receipt["code"] == "SEARCH_UNAVAILABLE"
    [row] = search_rows(engine)
    assert row["content"]["outcome"] == "failed" and "ZeroDivisionError" in row["content"]["error"]


def test_lone_surrogates_never_cost_the_row(engine, monkeypatch):
    results = [{**RESULTS[1], "title": "Electrical \ud800 resistivity", "content": "Copper \udfff 1.68×10⁻⁸ Ω·m"}]
    question = "resistivity of copper \ud800 \ud83d\ude00?"  # a lone surrogate and a pair split in two
    clean = "resistivity of copper \ufffd 😀?"
    script = [extraction({"answer": "1.68×10⁻⁸ Ω·m \ud800", "used": [1], "insufficient": False}),
              extraction({"answer": "1.68×10⁻⁸ Ω·m", "used": [1], "insufficient": False})]
    with FakeSearxng({Q: results, clean: results}) as sx, ScriptedServer(script) as srv:
        client = chat_client(srv, monkeypatch)
        r1 = lookup(engine, Q, client=client, policy=SearchPolicy(), provider=SearxngProvider(sx.base_url))
        r2 = lookup(engine, question, client=client, policy=SearchPolicy(), provider=SearxngProvider(sx.base_url))
    assert not srv.mismatches
    assert r1 == {"ok": True, "answer": "1.68×10⁻⁸ Ω·m \ufffd", "origin": "allowlist"}
    assert r2 == {"ok": True, "answer": "1.68×10⁻⁸ Ω·m", "origin": "allowlist"}
    assert [s["query"]["q"] for s in sx.searches] == [Q, clean]  # the provider got the repaired question
    assert "Electrical \ufffd resistivity" in srv.requests[0]["body"]["messages"][1]["content"]
    rows = search_rows(engine)
    assert len(rows) == 2 and engine.lookup_count() == 2  # both rows written: the budget counts them
    assert rows[0]["content"]["candidates"][0]["title"] == "Electrical \ufffd resistivity"
    assert rows[0]["content"]["candidates"][0]["snippet"] == "Copper \ufffd 1.68×10⁻⁸ Ω·m"
    assert rows[1]["content"]["question"] == clean


def test_stop_during_the_extraction_call_returns_promptly_with_one_failed_row(engine, monkeypatch):
    script = [{"expect": {"stream": False}, "reply": {"content": "{}", "delay": 60}}]
    with FakeSearxng({Q: RESULTS}) as sx, ScriptedServer(script) as srv:
        tool = search_tool(engine, chat_client(srv, monkeypatch), policy=SearchPolicy(),
                           provider=SearxngProvider(sx.base_url))
        cancel = threading.Event()
        # the stop comes once the extraction request is at the server, which holds its reply 60 s
        threading.Thread(target=lambda: (_wait_for(lambda: len(srv.requests) == 1), cancel.set()),
                         daemon=True).start()
        token = current_cancel.set(cancel)
        try:
            receipt = tool.fn({"question": Q})
        finally:
            current_cancel.reset(token)
    assert receipt["ok"] is False and receipt["code"] == "SEARCH_UNAVAILABLE" and "stopped" in receipt["error"]
    [row] = search_rows(engine)
    assert row["content"]["outcome"] == "failed" and row["content"]["error"] == "cancelled"
    assert row["content"]["code"] == "SEARCH_UNAVAILABLE" and len(row["content"]["used"]) == 2


def test_stop_during_the_provider_search_returns_promptly(engine, monkeypatch):
    cancel, release = threading.Event(), threading.Event()

    def slow(query):
        cancel.set()  # the stop comes while the provider holds its answer back
        release.wait(60)
        return RESULTS

    with FakeSearxng(slow) as sx, ScriptedServer([]) as srv:
        token = current_cancel.set(cancel)
        try:
            receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(),
                             provider=SearxngProvider(sx.base_url))
        finally:
            current_cancel.reset(token)
            release.set()
    assert receipt["code"] == "SEARCH_UNAVAILABLE" and srv.requests == []
    [row] = search_rows(engine)
    assert row["content"]["error"] == "cancelled" and row["content"]["candidates"] == []


def test_stop_during_a_search_ends_the_turn_as_cancelled(env, engine, monkeypatch):
    script = [{"expect": {"tools": ["search"]},
               "reply": {"tool_calls": [{"id": "call_1", "name": "search", "arguments": json.dumps({"question": Q})}]}},
              {"expect": {"stream": False}, "reply": {"content": "{}", "delay": 60}}]
    with FakeSearxng({Q: RESULTS}) as sx, ScriptedServer(script) as srv:
        client = chat_client(srv, monkeypatch)
        tool = search_tool(engine, client, policy=SearchPolicy(), provider=SearxngProvider(sx.base_url))
        log = SessionLog.create(env / "sessions", model=client.model.id, preset="reckoner-with-search",
                                tools=["search"])
        cancel = threading.Event()
        # set once the extraction request has reached the (silent) server
        threading.Thread(target=lambda: (_wait_for(lambda: len(srv.requests) == 2), cancel.set()),
                         daemon=True).start()
        result = Agent(client, log, [tool], stop_hooks=[]).run_turn("Resistivity of copper?", cancel=cancel)
    assert result.status == "cancelled", result  # not the reply the server holds back for 60 s
    assert len(srv.requests) == 2  # no model request after the stop
    [row] = search_rows(engine)
    assert row["content"]["error"] == "cancelled"
    assert log.events[-1]["type"] == "turn/end" and log.events[-1]["status"] == "cancelled"
    log.close()


def _wait_for(cond, timeout: float = 120.0) -> None:
    """Poll until ``cond()`` holds, for at most *timeout* seconds (nothing asserts how long)."""
    end = time.monotonic() + timeout
    while not cond() and time.monotonic() < end:
        time.sleep(0.01)


def test_candidates_are_capped_and_long_urls_dropped(engine, monkeypatch):
    huge = "Copper has a resistivity of 1.68×10⁻⁸ Ω·m at 20 °C. " * 20_000  # about 1 MB
    results = [{"url": "https://en.wikipedia.org/wiki/Copper", "title": "T" * 10_000, "content": huge,
                "publishedDate": "2024-" * 1000},
               {"url": "https://en.wikipedia.org/wiki/" + "x" * URL_MAX_CHARS, "title": "Too long", "content": "x"},
               RESULTS[2]]
    assert len(huge) > 1_000_000
    script = [extraction({"answer": "1.68×10⁻⁸ Ω·m", "used": [1], "insufficient": False})]
    with FakeSearxng({Q: results}) as sx, ScriptedServer(script) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(),
                         provider=SearxngProvider(sx.base_url))
    assert receipt["ok"] is True
    user = srv.requests[0]["body"]["messages"][1]["content"]
    assert len(user) < SNIPPET_MAX_CHARS + TITLE_MAX_CHARS + 2_000 and "Too long" not in user
    fact = search_rows(engine)[0]["content"]
    assert [c["url"] for c in fact["candidates"]] == [results[0]["url"], results[2]["url"]]
    first = fact["candidates"][0]
    assert len(first["title"]) == TITLE_MAX_CHARS and first["title"].endswith("…")
    assert len(first["snippet"]) <= SNIPPET_MAX_CHARS and first["snippet"].endswith("…")
    assert len(first["publishedAt"]) <= 100
    assert len(json.dumps(fact, ensure_ascii=False)) < 4 * (SNIPPET_MAX_CHARS + TITLE_MAX_CHARS + 1_000)


def test_the_material_sent_to_the_extraction_model_is_capped(engine, monkeypatch):
    results = [{"url": f"https://source{i}.example.org/page", "title": f"Source {i}", "content": f"{i} " * 1_500}
               for i in range(50)]
    pages = {"/page": "<p>" + "page text " * 10_000 + "</p>"}
    script = [extraction({"answer": "9 Ω·m", "used": [1, 40], "insufficient": False}),
              extraction({"answer": "9 Ω·m", "used": [1], "insufficient": False})]
    sx = FakeSearxng(lambda q: results if q == "snippets" else [{**r, "url": sx.base_url + "/page?" + str(i)}
                                                               for i, r in enumerate(results[:10])],
                     documents=pages)
    with sx, ScriptedServer(script) as srv:
        client = chat_client(srv, monkeypatch)
        r1 = lookup(engine, "snippets", client=client, policy=SearchPolicy(tier="open", max_results=50),
                    provider=SearxngProvider(sx.base_url))
        r2 = lookup(engine, "pages", client=client,
                    policy=SearchPolicy(tier="open", max_results=10, enrich_pages=10, enrich_chars_per_page=50_000),
                    provider=SearxngProvider(sx.base_url, allow_private=True))  # pages on 127.0.0.1
    assert r1["ok"] and r2["ok"]
    rows = search_rows(engine)
    for req, row in zip(srv.requests, rows):
        user = req["body"]["messages"][1]["content"]
        material = user.split("Material:\n", 1)[1]
        assert len(material) <= MATERIAL_MAX_CHARS
        sent = material.count("\nurl: ")
        assert 1 <= sent < len(row["content"]["candidates"])  # some items did not fit ...
        assert len(row["content"]["used"]) == sent  # ... and are not recorded as used
    assert rows[0]["content"]["synthesis"]["used"] == [0]  # item 40 was never sent
    assert len(sx.requests) == 1 + 1 + 10  # the pages were fetched (and cut), not the request


def test_search_that_is_not_a_table_never_breaks_the_settings(env, engine, monkeypatch):
    home = env / "home"
    home.mkdir()
    for value in ("3", '"searxng"', "[1, 2]"):
        (home / "settings.toml").write_text(f"search = {value}\n", encoding="utf-8")
        settings = load_settings()
        assert ChatClient(backoff=0.01, max_retries=0).model.id == "deepseek-chat"  # every model call still works
        policy = SearchPolicy.from_settings(settings)
        assert policy == SearchPolicy() and any("[search] must be a table" in p for p in policy.problems)
        assert provider_from_settings(settings) is None
    with ScriptedServer([]) as srv:
        receipt = search_tool(engine, chat_client(srv, monkeypatch)).fn({"question": Q})
    assert receipt["code"] == "SEARCH_UNAVAILABLE" and srv.requests == []
    [row] = search_rows(engine)
    assert "[search] must be a table" in row["content"]["error"]


def test_hosts_are_read_as_a_browser_reads_them(engine, monkeypatch):
    tricky = "https://evil.com\\@en.wikipedia.org/"
    assert host_of(tricky) == "evil.com"
    assert host_of("https://en.wikipedia.org@evil.com/") == "evil.com"
    assert host_of("http://evil.com#@en.wikipedia.org") == "evil.com"
    assert host_of("https:\\\\en.wikipedia.org\\wiki") == "en.wikipedia.org"
    assert host_of(" https://en.wiki\npedia.org/ ") == "en.wikipedia.org"
    assert host_of("https://en.wikipedia.org:99999/") is None
    policy = SearchPolicy()
    assert not policy.allows(tricky)
    # a browser reads en.wikipedia.org, httpx would connect to evil.com: refused
    assert host_of("https://en.wikipedia.org\\@evil.com/") == "en.wikipedia.org"
    assert not policy.allows("https://en.wikipedia.org\\@evil.com/")
    assert policy.allows("https://xn--bcher-kva.wikipedia.org/") and policy.allows("https://bücher.wikipedia.org/")
    results = [{"url": tricky, "content": "Copper 9 Ω·m"},
               {"url": "https://en.wikipedia.org\\@evil.com/", "content": "Copper 9 Ω·m"}]
    with FakeSearxng({Q: results}) as sx, ScriptedServer([]) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch), policy=SearchPolicy(),
                         provider=SearxngProvider(sx.base_url))
    assert receipt["code"] == "SEARCH_INSUFFICIENT" and srv.requests == []


def test_a_whole_top_level_domain_is_accepted_but_reported():
    for hosts in (["org"], ["*.org", "nist.gov"], [".ORG"]):
        p = SearchPolicy(allowed_hosts=hosts)
        assert "org" in p.allowed_hosts
        assert any("too broad" in x and "'org'" in x for x in p.problems), p.problems
        assert p.allows("https://en.wikipedia.org/wiki/Copper")
    p = SearchPolicy.from_config({"allowed_hosts": ["org"]})
    assert p.allowed_hosts == ("org",) and any("too broad" in x for x in p.problems)
    assert SearchPolicy(allowed_hosts=["wikipedia.org", "localhost"]).problems == ()


# ------------------------------------------------------------------ page text (issue 22 item 1: selectolax)

REAL_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Copper - Encyclopedia</title>
<style>.infobox { color: red }</style><script>window.track("<p>fake</p>");</script></head>
<body><nav aria-label="Main"><ul><li><a href="/">Home</a></li><li><a href="/random">Random page</a></li></ul></nav>
<main><h1>Copper</h1>
<p>Copper has an electrical resistivity of 1.68&nbsp;&times;&nbsp;10<sup>&minus;8</sup>&nbsp;&Omega;&middot;m
   at 20&nbsp;&deg;C&nbsp;&amp; a density of 8.96&#160;g/cm&#179;.</p>
<p>A page may quote markup: &lt;script&gt;alert(1)&lt;/script&gt; and &lt;img src=x onerror=alert(2)&gt;.</p>
<table class="infobox"><tr><th>Melting point</th><td>1084.62&nbsp;&deg;C</td></tr></table>
<noscript>Please enable JavaScript.</noscript><template><p>template text</p></template>
<svg viewBox="0 0 1 1"><text>svg label</text></svg><div hidden>hidden text</div>
<iframe src="https://ads.example/">iframe fallback</iframe><!-- a comment -->
</main><footer>Text is available under a licence.</footer></body></html>"""


def test_page_text_keeps_the_content_and_drops_what_a_reader_never_sees():
    text = html_text(REAL_PAGE)
    assert text == ("Copper Copper has an electrical resistivity of 1.68 × 10 −8 Ω·m at 20 °C & a density of "
                    "8.96 g/cm³. A page may quote markup: <script>alert(1)</script> and <img src=x onerror=alert(2)>. "
                    "Melting point 1084.62 °C Text is available under a licence.")
    for gone in ("Encyclopedia", "track", "fake", "infobox", "Home", "Random page", "enable JavaScript",
                 "template text", "svg label", "hidden text", "iframe fallback", "comment"):
        assert gone not in text, gone


def test_page_text_decodes_entities_once_and_never_makes_markup():
    """Escaped markup is text: decoded once (the model reads '<script>'), never parsed again into
    an element that would be dropped or run; a tag is never kept as text."""
    quoted = html_text("<p>&lt;b&gt;bold&lt;/b&gt; &amp;lt;i&amp;gt; &quot;q&quot; &#x3C;</p>")
    assert quoted == '<b>bold</b> &lt;i&gt; "q" <'
    assert html_text("<p>a<b>b</b><i>c</i></p><p>d</p>") == "a b c d"  # tags only separate words
    assert html_text("no markup at all, 3 < 4 > 2") == "no markup at all, 3 < 4 > 2"


def test_page_text_of_fragments_and_broken_markup():
    """Wikipedia's excerpts are fragments with highlight tags; broken markup is read as a browser
    reads it, never an exception; a lone surrogate (from a JSON reply) becomes U+FFFD."""
    excerpt = 'Electrical <span class="searchmatch">resistivity</span> of &lt;copper&gt;'
    assert html_text(excerpt) == "Electrical resistivity of <copper>"
    assert html_text("<div><p>unclosed <b>bold</div></span></td> tail <script>x(") == "unclosed bold tail"
    assert html_text("lone \ud800 surrogate") == "lone \ufffd surrogate"
    assert html_text("") == "" and html_text("<script>only()</script>") == ""


def test_enrich_drops_a_pages_navigation(engine, monkeypatch):
    """The page text the extraction model reads starts with the content, not the site's menus."""
    sx = FakeSearxng(lambda q: [{"url": sx.base_url + "/page/copper", "title": "Copper", "content": "short"}],
                     documents={"/page/copper": REAL_PAGE})
    script = [extraction({"answer": "1.68 × 10 −8 Ω·m at 20 °C.", "used": [1], "insufficient": False})]
    with sx, ScriptedServer(script) as srv:
        receipt = lookup(engine, Q, client=chat_client(srv, monkeypatch),
                         policy=SearchPolicy(tier="open", enrich_pages=1, enrich_chars_per_page=200),
                         provider=SearxngProvider(sx.base_url, allow_private=True))  # pages on 127.0.0.1
    assert receipt["ok"]
    user = srv.requests[0]["body"]["messages"][1]["content"]
    assert "Copper Copper has an electrical resistivity of 1.68 × 10 −8 Ω·m at 20 °C & a density of" in user
    assert "Random page" not in user and "track" not in user
