"""The bibliographic verifier (research.md "Running the roles"): identifiers, the real recorded
Crossref / arXiv / PubMed bodies replayed by a fake server on 127.0.0.1 and read through the real
httpx client, every verdict, the cache and ``dsh-notebook ledger check-source``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_notebook.research_pipeline.bibliographic import (
    IdentifierError,
    check_source,
    crossref_notices,
    normalize,
)
from dsh_notebook.research_pipeline.testing import FakeResolverServer, crossref_body_from_partial

SHARED = Path(os.environ.get("DSH_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURES = SHARED / "fixtures" / "bibliographic"
needs_fixtures = pytest.mark.skipif(not (FIXTURES / "README.md").is_file(),
                                    reason=f"the recorded bibliographic responses are not at {FIXTURES}"
                                           " (kept outside the project: set DSH_SHARED_DIR to the shared folder)")


@pytest.fixture
def srv():
    if not (FIXTURES / "README.md").is_file():
        pytest.skip(f"the recorded bibliographic responses are not at {FIXTURES}"
                    " (kept outside the project: set DSH_SHARED_DIR to the shared folder)")
    with FakeResolverServer.from_fixtures(FIXTURES) as s:
        yield s


def check(srv, identifier, claimed=None, **kw):
    return check_source(identifier, claimed, settings=srv.settings(), **kw)


def names(result, ok=None):
    return [c["name"] for c in result["checks"] if ok is None or c["ok"] is ok]


# ----------------------------------------------------------------------------- identifiers


@pytest.mark.parametrize("text, kind, canonical", [
    ("10.1063/1.4938384", "doi", "10.1063/1.4938384"),
    ("doi:10.1073/PNAS.1414271111", "doi", "10.1073/pnas.1414271111"),
    ("DOI: 10.1073/pnas.1414271111", "doi", "10.1073/pnas.1414271111"),
    ("https://doi.org/10.1016/s0140-6736(97)11096-0", "doi", "10.1016/s0140-6736(97)11096-0"),
    ("http://dx.doi.org/10.1063%2F1.4938384", "doi", "10.1063/1.4938384"),
    ("  10.1371/journal.pone.0033693 ", "doi", "10.1371/journal.pone.0033693"),
    ("1605.08386", "arxiv", "1605.08386"),
    ("arXiv:1111.2011v2", "arxiv", "1111.2011v2"),
    ("https://arxiv.org/abs/2104.12255v1", "arxiv", "2104.12255v1"),
    ("https://arxiv.org/pdf/2104.12255v1.pdf", "arxiv", "2104.12255v1"),
    ("astro-ph/0601001", "arxiv", "astro-ph/0601001"),
    ("arxiv:math.GT/0309136v3", "arxiv", "math.GT/0309136v3"),
    ("pmid:10066780", "pmid", "10066780"),
    ("27508352", "pmid", "27508352"),
    ("https://pubmed.ncbi.nlm.nih.gov/11748933/", "pmid", "11748933"),
    ("ISBN 0-306-40615-2", "isbn", "9780306406157"),
    ("isbn:978-0-306-40615-7", "isbn", "9780306406157"),
    ("080442957X", "isbn", "9780804429573"),
    ("https://example.org/paper", "url", "https://example.org/paper"),
])
def test_normalize(text, kind, canonical):
    n = normalize(text)
    assert (n["kind"], n["identifier"]) == (kind, canonical)


def test_normalize_arxiv_version():
    assert normalize("1111.2011v2")["version"] == 2
    assert normalize("1605.08386")["version"] is None


@pytest.mark.parametrize("text, why", [
    ("", "empty"),
    ("   ", "empty"),
    ("doi:banana", "not a DOI"),
    ("10.1/x", "not a DOI"),
    ("10.1063/ 1.4938384", "not a DOI"),
    ("https://doi.org/", "not a DOI"),
    ("arxiv:abc", "not an arXiv id"),
    ("pmid:12a", "not a PMID"),
    ("pmid:0", "not a PMID"),
    ("isbn:0-306-40615-3", "check digit"),
    ("978-0-306-40615-8", "check digit"),
    ("isbn:12345", "not an ISBN"),
    ("ftp://example.org/x", "is not a DOI, arXiv id"),
    ("hello world", "is not a DOI, arXiv id"),
])
def test_normalize_refuses(text, why):
    with pytest.raises(IdentifierError) as err:
        normalize(text)
    assert why in str(err.value) and "\n" not in str(err.value)


def test_normalize_caps_the_length_before_any_request():
    with pytest.raises(IdentifierError) as err:
        normalize("10.1063/" + "a" * 100_000)
    assert "100,008 characters long (at most 2,000)" in str(err.value) and "\n" not in str(err.value)
    assert normalize("10.1063/" + "a" * 1_992)["kind"] == "doi"  # 2,000 exactly is accepted


@pytest.mark.parametrize("text", ["10.48550/arXiv.", "10.48550/arXiv", "doi:10.48550/ARXIV.", "https://doi.org/10.48550/arXiv."])
def test_normalize_datacite_prefix_without_an_id_is_refused(text):
    with pytest.raises(IdentifierError) as err:
        normalize(text)
    assert "no arXiv id after it" in str(err.value)


def test_normalize_is_nfkc_then_ascii_digits():
    """A full-width DOI reads as its ASCII form; a digit of another script is refused everywhere,
    a non-ASCII suffix letter accepted everywhere (the rule no longer depends on where it sits)."""
    assert normalize("10.1063/\uff11.4938384")["identifier"] == "10.1063/1.4938384"
    assert normalize("10.\uff11\uff10\uff16\uff13/1.4938384")["identifier"] == "10.1063/1.4938384"
    assert normalize("\uff44\uff4f\uff49:10.1063/1.4938384")["identifier"] == "10.1063/1.4938384"
    assert normalize("10.1063/\u00fcn\u00efc\u00f8d\u00e9")["identifier"] == "10.1063/\u00fcn\u00efc\u00f8d\u00e9"
    with pytest.raises(IdentifierError) as err:
        normalize("10.1/\u00fcn\u00efc\u00f8d\u00e9")
    assert "registrant code after '10.' must be 4 to 9 digits" in str(err.value)
    for text in ("10.\u0661\u0660\u0666\u0663/x", "\u0661\u0662\u0663", "pmid:\u0661\u0662\u0663"):
        with pytest.raises(IdentifierError):
            normalize(text)
    with pytest.raises(IdentifierError) as err:
        normalize("10.1063/1.4938384\u200b")
    assert "U+200B" in str(err.value)


def test_kind_forced():
    assert normalize("https://doi.org/10.1063/1.4938384", kind="doi")["identifier"] == "10.1063/1.4938384"
    with pytest.raises(IdentifierError):
        normalize("pmid:123", kind="doi")
    with pytest.raises(IdentifierError):
        normalize("https://example.org/", kind="doi")


def test_research_package_does_not_import_httpx():
    code = "import dsh_notebook.research, sys; assert 'httpx' not in sys.modules; " \
           "import dsh_notebook.research_pipeline.testing; assert 'httpx' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------------- Crossref


def test_crossref_ordinary_is_verified_and_polite(srv):
    r = check_source("10.1063/1.4938384", settings={**srv.settings(), "mailto": "team@example.org"})
    assert r["verdict"] == "verified" and r["kind"] == "doi"
    assert r["metadata"]["title"].startswith("Effect of native oxide layers")
    assert r["metadata"]["year"] == 2015 and len(r["metadata"]["authors"]) == 2
    assert set(r) >= {"identifier", "kind", "verdict", "checks", "metadata", "resolver"}
    req = srv.requests[-1]
    assert req["service"] == "crossref" and req["key"] == "10.1063/1.4938384"
    assert req["query"].get("mailto") == "team@example.org"
    assert "mailto" not in r["resolver"]["url"]


@pytest.mark.parametrize("doi, notice", [
    ("10.1073/pnas.1414271111", "10.1073/pnas.1507001112"),
    ("10.1371/journal.pone.0033693", "10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda"),
])
def test_crossref_corrected_by_updated_by(srv, doi, notice):
    r = check(srv, doi)
    assert r["verdict"] == "corrected"
    assert [n["doi"] for n in r["metadata"]["notices"]] == [notice]


def test_new_version_self_reference_is_not_a_notice(srv):
    r = check(srv, "10.1371/journal.ppat.1008184")
    assert r["verdict"] == "verified", r["checks"]
    assert r["metadata"]["notices"] == [] and r["metadata"]["notice_of"] == []


def test_corrigendum_notice_through_update_to(srv):
    r = check(srv, "10.1016/j.soilbio.2024.109532")
    assert r["verdict"] == "corrected"
    assert r["metadata"]["notice_of"][0]["doi"] == "10.1016/j.soilbio.2024.109456"
    assert "notice_of" in names(r, ok=False)
    # the ordinary items of the same recorded list are verified
    assert check(srv, "10.1046/j.1365-2168.2000.01374.x")["verdict"] == "verified"


def test_unknown_doi_is_inconclusive_never_verified(srv):
    r = check(srv, "10.9999/not.there")
    assert r["verdict"] == "inconclusive"
    assert any("Resource not found." in c["detail"] for c in r["checks"])


def test_datacite_arxiv_doi_recorded_as_not_found_on_crossref_goes_to_arxiv(srv):
    # the recorded 404 is Crossref's answer for this very DOI: a DataCite DOI is never sent there
    r = check(srv, "10.48550/arxiv.2312.07559")
    assert r["kind"] == "arxiv" and r["identifier"] == "2312.07559" and r["doi"] == "10.48550/arxiv.2312.07559"
    assert r["verdict"] == "inconclusive" and "empty feed" in r["checks"][-1]["detail"]
    assert [q["service"] for q in srv.requests] == ["arxiv"]


def test_crossref_validation_failure_is_inconclusive(srv):
    body = (FIXTURES / "crossref-400-validation-failure-query-on-single-work.json").read_bytes()
    srv.queue("crossref", "10.1063/1.4938384", body, status=400)
    r = check(srv, "10.1063/1.4938384")
    assert r["verdict"] == "inconclusive"
    assert "HTTP 400" in r["checks"][-1]["detail"] and "field query" in r["checks"][-1]["detail"]


def test_fake_server_answers_query_params_like_crossref(srv):
    import httpx

    resp = httpx.get(f"{srv.base_url}/works/10.1371/journal.pone.0033693", params={"query.author": "carl"})
    assert resp.status_code == 400 and resp.json()["message-type"] == "validation-failure"
    resp = httpx.get(f"{srv.base_url}/works/10.9999%2Fnope")
    assert resp.status_code == 404 and resp.text == "Resource not found."


def _serve_partial(srv, name):
    path = FIXTURES / "partial" / name
    doi = json.loads(path.read_text(encoding="utf-8"))["message"]["DOI"]
    srv.add("crossref", doi, crossref_body_from_partial(path))
    return doi


def test_retraction_through_updated_by_only(srv):
    doi = _serve_partial(srv, "crossref-trimmed-cache-retracted-retraction-watch-10.1016_s0140-6736-97-11096-0.json")
    r = check(srv, doi)
    assert r["verdict"] == "retracted"
    assert {n["type"] for n in r["metadata"]["notices"]} == {"correction", "retraction"}


def test_concern_then_retraction_most_severe_wins(srv):
    doi = _serve_partial(srv, "crossref-trimmed-cache-concern-then-retracted-retraction-watch-10.1056_nejmoa2007621.json")
    assert check(srv, doi)["verdict"] == "retracted"


def test_expression_of_concern_deduplicated(srv):
    doi = _serve_partial(
        srv, "crossref-trimmed-cache-expression-of-concern-publisher-and-retraction-watch-10.1016_j.ejogrb.2014.02.038.json")
    r = check(srv, doi)
    assert r["verdict"] == "expression_of_concern"
    assert len(r["metadata"]["notices"]) == 1
    assert r["metadata"]["notices"][0]["source"] == "publisher, retraction-watch"


def test_retraction_in_update_to_makes_a_notice():
    # a notice's update-to: the same direction as the recorded corrigendum, with a retraction type
    message = {"DOI": "10.1/notice", "update-to": [{"DOI": "10.1/work", "type": "retraction", "source": "publisher"}]}
    assert crossref_notices(message)["update_to"][0]["verdict"] == "retracted"


def test_rate_limited_then_success(srv):
    srv.queue("crossref", "10.1063/1.4938384", '{"status":"failed"}', status=429, headers={"Retry-After": "0"})
    r = check(srv, "10.1063/1.4938384")
    assert r["verdict"] == "verified"
    assert [c["status"] for c in r["resolver"]["requests"]] == [429, 200]


def test_doi_unknown_to_crossref_found_on_pubmed(srv):
    body = (FIXTURES / "pubmed-efetch-retraction-notice-pmid27508352.xml").read_bytes()
    srv.add("efetch", "29913552", body.replace(b"27508352", b"29913552"))
    r = check(srv, "10.4014/jmb.1812.02044")
    assert [q["service"] for q in srv.requests[-4:]] == ["crossref", "datacite", "esearch", "efetch"]
    assert r["resolver"]["service"] == "pubmed" and r["verdict"] == "retracted"


# ----------------------------------------------------------------------------- claimed metadata


def test_claimed_metadata_agrees(srv):
    claimed = {"title": "Effect of native oxide layers on copper thin film tensile properties: a reactive "
                        "molecular dynamics study", "authors": ["M. J. Skarlinski", "D. J. Quesnel"], "year": 2015}
    r = check(srv, "10.1063/1.4938384", claimed)
    assert r["verdict"] == "verified" and {"title", "authors", "year"} <= set(names(r, ok=True))


@pytest.mark.parametrize("claimed, failing", [
    ({"title": "Quantum gravity in the early universe"}, "title"),
    ({"authors": "Skarlinski; Einstein"}, "authors"),
    ({"year": 2011}, "year"),
    ({"year": "soon"}, "year"),
])
def test_mismatch(srv, claimed, failing):
    r = check(srv, "10.1063/1.4938384", claimed)
    assert r["verdict"] == "mismatch" and failing in names(r, ok=False)


def test_retraction_outranks_mismatch(srv):
    r = check(srv, "10066780", {"title": "Something else entirely about physics"})
    assert r["verdict"] == "retracted" and "title" in names(r, ok=False)


# ----------------------------------------------------------------------------- arXiv


def test_arxiv_unversioned_gets_latest(srv):
    r = check(srv, "1605.08386")
    assert r["verdict"] == "verified" and r["metadata"]["version"] == 1
    assert r["metadata"]["title"] == "Heat-bath random walks with Markov bases"
    assert srv.requests[-1]["query"]["id_list"] == "1605.08386"


def test_arxiv_versioned_2016_format(srv):
    r = check(srv, "arXiv:1111.2011v2", {"year": 2012})
    assert r["verdict"] == "verified" and r["metadata"]["version"] == 2
    assert r["metadata"]["doi"] == "10.1103/physrevb.85.115117"
    assert r["metadata"]["title"].startswith("Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large Connectivity")


def test_arxiv_title_zero_is_kept(srv):
    r = check(srv, "2104.12255v1", {"title": "0"})
    assert r["metadata"]["title"] == "0"
    assert r["verdict"] == "verified" and "title" in names(r, ok=True)


def test_arxiv_old_style(srv):
    r = check(srv, "astro-ph/0601001")
    assert r["verdict"] == "verified" and r["metadata"]["journal_ref"] == "ActaAstron.56:1-50,2006"
    assert srv.requests[-1]["query"]["id_list"] == "astro-ph/0601001"


def test_arxiv_empty_feed_is_inconclusive(srv):
    r = check(srv, "0000.0000")
    assert r["verdict"] == "inconclusive" and "empty feed" in r["checks"][-1]["detail"]


def test_arxiv_error_feed_is_not_a_paper(srv):
    body = (FIXTURES / "arxiv-atom-abc-malformed-id-error-400-2026.xml").read_bytes()
    srv.add("arxiv", "1234.5678", body, status=400)
    r = check(srv, "1234.5678")
    assert r["verdict"] == "inconclusive" and r["metadata"] == {}
    assert "incorrect id format for abc" in r["checks"][-1]["detail"]


def test_arxiv_version_mismatch(srv):
    body = (FIXTURES / "arxiv-atom-1605.08386-2026.xml").read_bytes()
    srv.add("arxiv", "1605.08386v3", body)
    r = check(srv, "1605.08386v3")
    assert "version" in names(r, ok=False)


@pytest.mark.parametrize("text, arxiv_id, version", [
    ("10.48550/arXiv.1605.08386", "1605.08386", None),
    ("10.48550/ARXIV.1605.08386", "1605.08386", None),
    ("doi:10.48550/arxiv.1605.08386", "1605.08386", None),
    ("DOI: 10.48550/arXiv.1111.2011v2", "1111.2011v2", 2),
    ("https://doi.org/10.48550/arXiv.1111.2011v2", "1111.2011v2", 2),
    ("http://dx.doi.org/10.48550%2FarXiv.astro-ph%2F0601001", "astro-ph/0601001", None),
    ("10.48550/arXiv.hep-th/9901001", "hep-th/9901001", None),
    ("10.48550/arXiv.math.GT/0309136v3", "math.GT/0309136v3", 3),
])
def test_normalize_datacite_arxiv_doi(text, arxiv_id, version):
    n = normalize(text)
    assert (n["kind"], n["identifier"], n["version"]) == ("arxiv", arxiv_id, version)
    assert n["datacite"] is True and n["doi"] == f"10.48550/arxiv.{arxiv_id}".lower()
    assert normalize(text, kind="doi")["identifier"] == arxiv_id  # a source proposed as kind "doi"


def test_normalize_datacite_doi_with_a_suffix_that_is_no_arxiv_id():
    with pytest.raises(IdentifierError) as err:
        normalize("10.48550/arXiv.abc")
    assert "arXiv DOI" in str(err.value) and "'abc' is not an arXiv id" in str(err.value)


@pytest.mark.parametrize("doi, title, version", [
    ("10.48550/arXiv.1605.08386", "Heat-bath random walks with Markov bases", 1),
    ("https://doi.org/10.48550/ARXIV.1111.2011v2", "Quantum Criticality for Extended Nodes", 2),
    ("doi:10.48550/arXiv.astro-ph/0601001", None, 1),
])
def test_datacite_arxiv_doi_is_resolved_through_arxiv(srv, doi, title, version):
    r = check(srv, doi, kind="doi")
    assert r["verdict"] == "verified" and r["kind"] == "arxiv", r["checks"]
    assert r["metadata"]["version"] == version and r["resolver"]["service"] == "arxiv"
    if title:
        assert r["metadata"]["title"].startswith(title)
    # Crossref is never asked; a cited version is looked up, then the latest (for a withdrawal)
    assert {q["service"] for q in srv.requests} == {"arxiv"}
    assert srv.requests[0]["query"]["id_list"] == r["identifier"]
    dc = [c for c in r["checks"] if c["name"] == "datacite_doi"]
    assert len(dc) == 1 and dc[0]["ok"] is True
    assert "DataCite arXiv DOI" in dc[0]["detail"] and "resolved through arXiv" in dc[0]["detail"]


def test_datacite_arxiv_doi_claimed_metadata_is_compared(srv):
    r = check(srv, "10.48550/arXiv.1605.08386", {"title": "Heat-bath random walks with Markov bases", "year": 2016})
    assert r["verdict"] == "verified" and {"title", "year"} <= set(names(r, ok=True))


# ----------------------------------------------------------------------------- PubMed


def test_pubmed_retracted_publication(srv):
    r = check(srv, "pmid:10066780", {"title": "CREB-binding protein interacts with the homeodomain protein Cdx2 "
                                              "and enhances transcriptional activity", "year": 1999})
    assert r["verdict"] == "retracted"
    assert {n["type"] for n in r["metadata"]["notices"]} == {"RetractionIn", "ErratumIn"}
    assert "title" in names(r, ok=True)  # PubMed's [corrected] marker is ignored


def test_pubmed_retraction_notice(srv):
    r = check(srv, "27508352")
    assert r["verdict"] == "retracted"
    assert r["metadata"]["notice_of"][0]["pmid"] == "26435620"


@pytest.mark.parametrize("pmid", ["11748933", "11700088"])
def test_pubmed_ordinary(srv, pmid):
    r = check(srv, pmid)
    assert r["verdict"] == "verified" and r["metadata"]["pmid"] == pmid and r["metadata"]["authors"]


def test_pubmed_unknown_is_inconclusive(srv):
    assert check(srv, "99999999")["verdict"] == "inconclusive"


# ----------------------------------------------------------------------------- no resolver, network, cache


def test_isbn_and_url_are_inconclusive_without_a_request(srv):
    before = len(srv.requests)
    for ident in ("isbn:978-0-306-40615-7", "https://example.org/paper"):
        r = check(srv, ident)
        assert r["verdict"] == "inconclusive" and "resolver" in names(r)
    assert len(srv.requests) == before


def test_network_failure_is_inconclusive():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    base = f"http://127.0.0.1:{port}"
    r = check_source("10.1063/1.4938384", settings={"crossref_url": base, "retries": 0, "timeout": 2})
    assert r["verdict"] == "inconclusive" and "could not be reached" in r["checks"][-1]["detail"]


def test_environment_sets_the_base_urls(srv, monkeypatch):
    for var in ("DSH_CROSSREF_URL", "DSH_ARXIV_URL", "DSH_PUBMED_URL", "DSH_DATACITE_URL"):
        monkeypatch.setenv(var, srv.base_url + "/")
    assert check_source("10.1063/1.4938384")["verdict"] == "verified"
    assert check_source("1605.08386")["verdict"] == "verified"
    assert check_source("11748933")["verdict"] == "verified"


def test_cache_is_dated_and_reused(srv, tmp_path):
    cache = tmp_path / "cache"
    first = check(srv, "10.1063/1.4938384", cache_dir=cache)
    n = len(srv.requests)
    second = check(srv, "10.1063/1.4938384", cache_dir=cache)
    assert len(srv.requests) == n and second["resolver"]["cached"] and not first["resolver"]["cached"]
    assert second["verdict"] == first["verdict"] == "verified"
    files = list(cache.glob("crossref-*.json"))
    assert len(files) == 1
    rec = json.loads(files[0].read_text(encoding="utf-8"))
    assert rec["status"] == 200 and rec["fetched"] == first["resolver"]["fetched"]
    # older than a day: fetched again
    rec["fetched"] = "2000-01-01T00:00:00+00:00"
    files[0].write_text(json.dumps(rec), encoding="utf-8")
    third = check(srv, "10.1063/1.4938384", cache_dir=cache)
    assert len(srv.requests) == n + 1 and not third["resolver"]["cached"]


def test_errors_are_not_cached(srv, tmp_path):
    srv.queue("crossref", "10.1063/1.4938384", "busy", status=503)
    r = check_source("10.1063/1.4938384", settings={**srv.settings(), "retries": 0}, cache_dir=tmp_path)
    assert r["verdict"] == "inconclusive" and not list(tmp_path.glob("*.json"))
    assert check(srv, "10.1063/1.4938384", cache_dir=tmp_path)["verdict"] == "verified"


# ----------------------------------------------------------------------------- CLI


def _cli(srv, *args):
    env = {**os.environ, "DSH_CROSSREF_URL": srv.base_url, "DSH_ARXIV_URL": srv.base_url,
           "DSH_PUBMED_URL": srv.base_url, "DSH_DATACITE_URL": srv.base_url}
    return subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "ledger", "check-source", *args],
                          env=env, capture_output=True, text=True, timeout=60)


def test_cli_json(srv):
    p = _cli(srv, "https://doi.org/10.1073/pnas.1414271111", "--json", "--verbose")
    assert p.returncode == 0
    out = json.loads(p.stdout)
    assert out["verdict"] == "corrected" and {"verdict", "checks", "metadata"} <= set(out)
    assert "HTTP 200" in p.stderr and "HTTP 200" not in p.stdout.replace('"status": 200', "")


def test_cli_table_and_claims(srv):
    p = _cli(srv, "10.1063/1.4938384", "--title", "A study of something unrelated", "--year", "2015")
    assert p.returncode == 0 and p.stdout.startswith("doi 10.1063/1.4938384: mismatch")
    assert "title" in p.stdout and p.stderr == ""


def test_cli_malformed_identifier(srv):
    p = _cli(srv, "doi:banana", "--json")
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and "not a DOI" in p.stderr


def test_cli_network_failure_is_inconclusive(tmp_path):
    env = {**os.environ, "DSH_CROSSREF_URL": "http://127.0.0.1:9"}
    p = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "ledger", "check-source", "10.1063/1.4938384",
                        "--json", "--no-cache"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and json.loads(p.stdout)["verdict"] == "inconclusive"
    # the connection failure is reported once per lookup, with the number of attempts (not once per retry)
    lines = [x for x in p.stderr.splitlines() if "127.0.0.1:9" in x]
    assert len(lines) == 1 and "(after 3 attempts)" in lines[0], p.stderr


def _plain_cli(*args):
    return subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "ledger", "check-source", *args],
                          env={**os.environ, "DSH_CROSSREF_URL": "http://127.0.0.1:9"}, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("args, named", [
    (("--title", ""), "--title is empty"),
    (("--title", "   "), "--title is empty"),
    (("--authors", ";;;"), "--authors is empty"),
    (("--year", ""), "--year is empty"),
    (("--title", "", "--authors", " ; "), "--title and --authors are empty"),
])
def test_cli_refuses_empty_claimed_values(args, named):
    p = _plain_cli("10.1063/1.4938384", *args)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and named in p.stderr and "leave the option out" in p.stderr


@pytest.mark.parametrize("identifier, why", [
    ("10.1063/" + "a" * 100_000, "characters long (at most 2,000)"),
    ("10.48550/arXiv.", "no arXiv id after it"),
])
def test_cli_malformed_identifier_is_exit_2_without_a_lookup(identifier, why):
    p = _plain_cli(identifier, "--json")
    assert p.returncode == 2 and p.stdout == "" and why in p.stderr
    assert "Traceback" not in p.stderr and "127.0.0.1:9" not in p.stderr  # refused before any request


def test_cli_cache_in_notebook_sidecar(srv, tmp_path):
    nb = tmp_path / "report.ipynb"
    p = _cli(srv, "1605.08386", "--notebook", str(nb))
    assert p.returncode == 0
    assert list((tmp_path / "report.dsh" / "bibliographic-cache").glob("arxiv-*.json"))


def test_settings_file_sets_the_base_urls(srv, tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path))
    for var in ("DSH_CROSSREF_URL", "DSH_ARXIV_URL", "DSH_PUBMED_URL", "DSH_DATACITE_URL"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "settings.toml").write_text(
        f'[research.bibliographic]\ncrossref_url = "{srv.base_url}"\nmailto = "lab@example.org"\n', encoding="utf-8")
    assert check_source("10.1063/1.4938384")["verdict"] == "verified"
    assert srv.requests[-1]["query"]["mailto"] == "lab@example.org"
    monkeypatch.setenv("DSH_CROSSREF_URL", "http://127.0.0.1:9")  # the environment wins over the file
    assert check_source("10.1063/1.4938384", settings={"retries": 0})["verdict"] == "inconclusive"


def test_a_research_table_in_settings_does_not_break_model_access(tmp_path, monkeypatch):
    from dsh_notebook.settings import load_settings

    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path))
    (tmp_path / "settings.toml").write_text('[research.bibliographic]\ncrossref_url = "http://127.0.0.1:9"\n',
                                            encoding="utf-8")
    assert load_settings().resolve()[2].id == "deepseek-chat"


# ----------------------------------------------------------------------------- needs judgment

GREY_TITLE = "Native oxide layers and the tensile strength of copper thin films: a molecular dynamics study"


def test_grey_zone_title_needs_judgment(srv):
    from dsh_notebook.research_pipeline.bibliographic import TITLE_JUDGE, TITLE_OK, _title_score

    r = check(srv, "10.1063/1.4938384", {"title": GREY_TITLE})
    score = _title_score(GREY_TITLE, r["metadata"]["title"])
    assert TITLE_JUDGE <= score < TITLE_OK
    assert r["needs_judgment"] is True and r["verdict"] == "mismatch"
    assert "needs judgment" in [c for c in r["checks"] if c["name"] == "title"][0]["detail"]


@pytest.mark.parametrize("claimed", [
    {"title": GREY_TITLE, "year": 2011},  # a definite failure decides it
    {"title": GREY_TITLE, "authors": "Einstein"},
    {"title": "Quantum gravity in the early universe"},  # below the grey zone
    {"title": "Effect of native oxide layers on copper thin film tensile properties: a reactive molecular "
              "dynamics study"},  # agrees
])
def test_no_judgment_when_the_code_decided(srv, claimed):
    assert check(srv, "10.1063/1.4938384", claimed)["needs_judgment"] is False
