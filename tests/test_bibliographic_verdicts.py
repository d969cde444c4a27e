"""Bibliographic verdicts as curators give them (issue 21, items 1-2; research.md "Running the
roles", the bibliographic verifier, and "Events": ``source-verified``).

Titles that mark a retraction, withdrawal or concern (case P21 and its siblings), Crossref's
Retraction Watch entries and ``relation``, arXiv withdrawals (the new ``withdrawn`` verdict, through
the ledger's schema, fold, predicates and explorer), an older arXiv version cited, PubMed book
articles and DataCite DOIs. The bodies are real recorded ones or real ones minimally edited; each
is named in ``tests/data/README.md`` (or the shared fixtures' README)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_notebook.research import Actor, Ledger, is_eligible_for_synthesis, ledger_path
from dsh_notebook.research_pipeline.bibliographic import (
    bibliographic_settings,
    check_source,
    parse_pubmed,
    title_notice,
)
from dsh_notebook.research_pipeline.testing import FakeResolverServer, crossref_body_from_partial

DATA = Path(__file__).resolve().parent / "data"
SHARED = Path(os.environ.get("DSH_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURES = SHARED / "fixtures" / "bibliographic"
needs_fixtures = pytest.mark.skipif(not (FIXTURES / "README.md").is_file(),
                                    reason=f"the recorded bibliographic responses are not at {FIXTURES}"
                                           " (kept outside the project: set DSH_SHARED_DIR to the shared folder)")

P21_BODY = DATA / "crossref" / "crossref-work-title-retracted-P21-10.1063_1.4938384.json"
P21_DOI = "10.1063/1.4938384"
ORIGINAL_TITLE = ("Effect of native oxide layers on copper thin-film tensile properties: "
                  "A reactive molecular dynamics study")


@pytest.fixture
def srv():
    with FakeResolverServer() as s:
        yield s


def check(srv, identifier, claimed=None, **kw):
    return check_source(identifier, claimed, settings=srv.settings(), **kw)


def detail(result, name):
    return " | ".join(c["detail"] for c in result["checks"] if c["name"] == name)


def crossref_with_title(title: str) -> bytes:
    """The P21 body (itself the recorded ordinary body with its title changed) with
    ``message.title[0]`` changed again: a test-time derivation (tests/data/README.md)."""
    raw = P21_BODY.read_bytes()
    old = json.dumps("Retracted: " + ORIGINAL_TITLE).encode()
    assert raw.count(old) == 1
    return raw.replace(old, json.dumps(title).encode())


# ----------------------------------------------------------------------------- P21: titles


def test_case_P21_crossref_work_retracted_by_renaming_is_never_verified(srv):
    """A Crossref work titled ``Retracted: ...`` with no update-to/updated-by: never verified."""
    body = json.loads(P21_BODY.read_bytes())["message"]
    assert not body.get("update-to") and not body.get("updated-by") and body["relation"] == {}
    srv.add("crossref", P21_DOI, P21_BODY.read_bytes())
    r = check(srv, P21_DOI, {"title": ORIGINAL_TITLE, "authors": "Skarlinski; Quesnel", "year": 2015})
    assert r["verdict"] == "retracted", r["checks"]
    assert "the title marks a retracted work: 'Retracted: Effect of native oxide layers" in detail(r, "title_notice")
    # the title comparison alone would have passed: the verdict comes from the title's marker
    assert [c["ok"] for c in r["checks"] if c["name"] == "title"] == [True]
    assert r["metadata"]["title_marks"] == "a retracted work"


@pytest.mark.parametrize("title, verdict, marks", [
    ("RETRACTED: " + ORIGINAL_TITLE, "retracted", "a retracted work"),
    ("retracted: " + ORIGINAL_TITLE.lower(), "retracted", "a retracted work"),
    (ORIGINAL_TITLE + " [Retracted]", "retracted", "a retracted work"),
    (ORIGINAL_TITLE + " (Retracted article)", "retracted", "a retracted work"),
    ("[RETRACTED ARTICLE] " + ORIGINAL_TITLE, "retracted", "a retracted work"),
    ("Retraction notice", "retracted", "a retraction notice"),
    ("Retraction Note to: " + ORIGINAL_TITLE, "retracted", "a retraction notice"),
    ("Retraction of \u201c" + ORIGINAL_TITLE + "\u201d", "retracted", "a retraction notice"),
    ("Retraction : " + ORIGINAL_TITLE, "retracted", "a retraction notice"),
    ("Withdrawn: " + ORIGINAL_TITLE, "withdrawn", "a withdrawn work"),
    ("WITHDRAWN: " + ORIGINAL_TITLE, "withdrawn", "a withdrawn work"),
    ("Expression of concern: " + ORIGINAL_TITLE, "expression_of_concern", "an expression of concern"),
    ("EXPRESSION OF CONCERN", "expression_of_concern", "an expression of concern"),
])
def test_P21_siblings_title_markers_give_the_curators_verdict(srv, title, verdict, marks):
    srv.add("crossref", P21_DOI, crossref_with_title(title))
    r = check(srv, P21_DOI)
    assert r["verdict"] == verdict, r["checks"]
    assert f"the title marks {marks}: {title!r}" in detail(r, "title_notice")
    if marks.endswith("notice") or marks.startswith("an expression"):
        assert "this record is the notice, not the work" in detail(r, "title_notice")


@pytest.mark.parametrize("title", [
    "Retractions in science: a study of their causes",
    "Retracted papers and their continued citation",
    "Why retraction notices fail: " + ORIGINAL_TITLE,
    "Withdrawn from therapy: outcomes after stopping treatment",
    "Retraction of the gingiva after orthodontic treatment",
    "Editors issue expressions of concern more often",
    ORIGINAL_TITLE,
])
def test_a_paper_about_retractions_is_not_caught(srv, title):
    srv.add("crossref", P21_DOI, crossref_with_title(title))
    r = check(srv, P21_DOI)
    assert r["verdict"] == "verified", r["checks"]
    assert detail(r, "title_notice") == "" and title_notice(title) is None


def test_title_markers_ignore_markup_and_entities():
    assert title_notice("<i>RETRACTED</i>: a study")["verdict"] == "retracted"
    assert title_notice("Expression of concern &#8211; a trial")["verdict"] == "expression_of_concern"
    assert title_notice(None) is None and title_notice("") is None


# ----------------------------------------------------------------------------- Crossref notices


def test_crossref_relation_retraction_is_read(srv):
    body = DATA / "crossref" / "crossref-work-relation-retraction-10.1063_1.4938384.json"
    srv.add("crossref", P21_DOI, body.read_bytes())
    r = check(srv, P21_DOI)
    assert r["verdict"] == "retracted", r["checks"]
    assert "retraction 10.1063/1.4938385 (relation is-retracted-by" in detail(r, "notice")


@needs_fixtures
def test_retraction_watch_entries_name_their_record(srv):
    name = "crossref-trimmed-cache-retracted-retraction-watch-10.1016_s0140-6736-97-11096-0.json"
    path = FIXTURES / "partial" / name
    doi = json.loads(path.read_text())["message"]["DOI"]
    srv.add("crossref", doi, crossref_body_from_partial(path))
    r = check(srv, doi)
    assert r["verdict"] == "retracted"
    assert "Retraction Watch record 4036" in detail(r, "notice")
    # the title says so too ("RETRACTED: Ileal-lymphoid-nodular hyperplasia ...")
    assert "RETRACTED: Ileal-lymphoid-nodular" in detail(r, "title_notice")


@needs_fixtures
def test_a_notice_record_keeps_its_notice_of_treatment(srv):
    """The corrigendum notice in the sample list points at the work it corrects (update-to)."""
    with FakeResolverServer.from_fixtures(FIXTURES) as full:
        r = check(full, "10.1016/j.soilbio.2024.109532")
    assert r["verdict"] == "corrected"
    assert "not the work itself" in detail(r, "notice_of")


# ----------------------------------------------------------------------------- arXiv withdrawals


def test_arxiv_withdrawn_by_comment_is_withdrawn_not_verified(srv):
    srv.add("arxiv", "1605.08386", (DATA / "arxiv" / "arxiv-atom-1605.08386-withdrawn-comment.xml").read_bytes())
    r = check(srv, "arXiv:1605.08386", {"title": "Heat-bath random walks with Markov bases"})
    assert r["verdict"] == "withdrawn", r["checks"]
    assert "v1 comment: 'This paper has been withdrawn by the author" in detail(r, "withdrawn")
    assert [c["ok"] for c in r["checks"] if c["name"] == "withdrawn"] == [False]


def test_cited_old_version_whose_latest_abstract_is_a_withdrawal(srv):
    srv.add("arxiv", "1111.2011v1", (DATA / "arxiv" / "arxiv-atom-1111.2011v1-older-version.xml").read_bytes())
    srv.add("arxiv", "1111.2011",
            (DATA / "arxiv" / "arxiv-atom-1111.2011-latest-v2-abstract-withdrawn.xml").read_bytes())
    r = check(srv, "1111.2011v1")
    assert r["verdict"] == "withdrawn", r["checks"]
    assert "v2 abstract is a withdrawal note: 'This paper has been withdrawn by the authors.'" in detail(r, "withdrawn")
    assert detail(r, "latest_version") == ("v1 is cited (dated 2011-11-08); the latest is v2 (dated 2012-04-02, "
                                           "first version 2011-11-08)")
    assert [q["query"]["id_list"] for q in srv.requests] == ["1111.2011v1", "1111.2011"]


@needs_fixtures
def test_cited_old_version_is_reported_with_the_dates(srv):
    srv.add("arxiv", "1111.2011v1", (DATA / "arxiv" / "arxiv-atom-1111.2011v1-older-version.xml").read_bytes())
    srv.add("arxiv", "1111.2011", (FIXTURES / "arxiv-atom-1111.2011v2-versioned-2016.xml").read_bytes())
    r = check(srv, "arXiv:1111.2011v1")
    assert r["verdict"] == "verified", r["checks"]
    assert "v1 is cited (dated 2011-11-08); the latest is v2 (dated 2012-04-02" in detail(r, "latest_version")
    assert r["metadata"]["latest_version"] == 2


# ----------------------------------------------------------------------------- PubMed books

BOOK = DATA / "pubmed" / "pubmed-book-article-whole-book-pmid29465922.xml"


def _efetch(element: bytes) -> bytes:
    return b'<?xml version="1.0" ?>\n<PubmedArticleSet>\n' + element.strip() + b"\n</PubmedArticleSet>\n"


def test_pubmed_book_resolves_instead_of_no_record(srv):
    srv.add("efetch", "29465922", _efetch(BOOK.read_bytes()))
    r = check(srv, "PMID:29465922", {"title": "Safer Healthcare: Strategies for the Real World",
                                     "authors": "Vincent; Amalberti", "year": 2016})
    assert r["verdict"] == "verified", r["checks"]
    meta = r["metadata"]
    assert meta["title"] == "Safer Healthcare: Strategies for the Real World"
    assert meta["authors"] == ["Charles Vincent", "René Amalberti"] and meta["year"] == 2016
    assert meta["book"] == "Safer Healthcare: Strategies for the Real World" and meta["type"] == "book-book"
    assert meta["publisher"] == "Springer" and meta["doi"] == "10.1007/978-3-319-25559-0"
    assert "has no record" not in json.dumps(r["checks"])


def test_pubmed_book_chapter_resolves_with_its_book(srv):
    # test-time derivation (tests/data/README.md): an ArticleTitle added (the record's own chapter 4
    # SectionTitle) and the PMID changed to 29465923
    raw = BOOK.read_bytes().replace(b"29465922", b"29465923").replace(
        b"<Language>eng</Language>",
        "<ArticleTitle book=\"spr9783319255590\" part=\"ch4\">Seeing Safety Through the Patient’s Eyes"
        "</ArticleTitle><Language>eng</Language>".encode())
    assert len(parse_pubmed(_efetch(raw).decode())) == 1
    srv.add("efetch", "29465923", _efetch(raw))
    r = check(srv, "29465923")
    assert r["verdict"] == "verified"
    meta = r["metadata"]
    assert meta["title"] == "Seeing Safety Through the Patient’s Eyes" and meta["type"] == "book-chapter"
    assert meta["book"] == "Safer Healthcare: Strategies for the Real World" and meta["year"] == 2016


# ----------------------------------------------------------------------------- DataCite

DATACITE = {
    "10.5061/dryad.8515": ("datacite-dois-dataset-dryad-10.5061_dryad.8515.json",
                           "Data from: A new malaria agent in African hominids.", 2011, "Dataset", "Dryad"),
    "10.6084/m9.figshare.1449060": ("datacite-dois-figshare-10.6084_m9.figshare.1449060.json",
                                    "Drosophila melanogaster wing images from low and high altitude populations in "
                                    "Ethiopia and Zambia.", 2020, "Dataset", "figshare"),
    "10.5281/zenodo.48440": ("datacite-dois-software-zenodo-10.5281_zenodo.48440.json",
                             "Analysis Tools for Crossover Experiment of UI using Choice Architecture", 2016,
                             "Software", "Zenodo"),
}


@pytest.mark.parametrize("doi", sorted(DATACITE))
def test_datacite_doi_resolves_after_crossref_404(srv, doi):
    name, title, year, kind, publisher = DATACITE[doi]
    srv.add("datacite", doi, (DATA / "datacite" / name).read_bytes())
    r = check(srv, f"https://doi.org/{doi}", {"title": title, "year": year})
    assert r["verdict"] == "verified", r["checks"]
    assert r["resolver"]["service"] == "datacite"
    assert [q["service"] for q in srv.requests] == ["crossref", "datacite"]
    assert r["metadata"]["title"] == title and r["metadata"]["type"] == kind
    assert r["metadata"]["publisher"] == publisher and r["metadata"]["authors"]
    assert "Crossref has no work" in detail(r, "crossref")


def test_datacite_unknown_doi_is_inconclusive_never_verified(srv):
    r = check(srv, "10.5061/dryad.nothere")
    assert r["verdict"] == "inconclusive"
    assert "DataCite has no DOI 10.5061/dryad.nothere" in detail(r, "datacite")
    # no service holds it: Crossref's 404 is the answer shown, DataCite's and PubMed's tries listed
    assert r["resolver"]["service"] == "crossref" and "Crossref has no work" in detail(r, "resolved")
    assert [q["service"] for q in srv.requests] == ["crossref", "datacite", "esearch"]
    assert len(r["resolver"]["requests"]) == 3


def test_datacite_goes_through_the_retry_policy_and_the_cache(srv, tmp_path):
    doi = "10.5281/zenodo.48440"
    body = (DATA / "datacite" / DATACITE[doi][0]).read_bytes()
    srv.queue("datacite", doi, b"busy", status=503, content_type="text/plain", headers={"Retry-After": "0"})
    srv.add("datacite", doi, body)
    first = check(srv, doi, cache_dir=tmp_path)
    assert first["verdict"] == "verified"
    assert [c["status"] for c in first["resolver"]["requests"]] == [404, 503, 200]
    second = check(srv, doi, cache_dir=tmp_path)
    assert second["verdict"] == "verified" and second["resolver"]["cached"] is True
    assert [q["service"] for q in srv.requests].count("datacite") == 2  # the 503 and the 200; then the cache


def test_datacite_url_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path))
    monkeypatch.setenv("DSH_DATACITE_URL", "http://127.0.0.1:8/")
    assert bibliographic_settings()["datacite_url"] == "http://127.0.0.1:8"
    (tmp_path / "settings.toml").write_text('[research.bibliographic]\ndatacite_url = "http://mirror.example/"\n')
    monkeypatch.delenv("DSH_DATACITE_URL")
    assert bibliographic_settings()["datacite_url"] == "http://mirror.example"


def test_check_source_cli_reads_DSH_DATACITE_URL(srv):
    doi = "10.5061/dryad.8515"
    srv.add("datacite", doi, (DATA / "datacite" / DATACITE[doi][0]).read_bytes())
    env = {**os.environ, **{v: srv.base_url for v in ("DSH_CROSSREF_URL", "DSH_ARXIV_URL", "DSH_PUBMED_URL",
                                                        "DSH_DATACITE_URL")}}
    out = subprocess.run([sys.executable, "-m", "dsh_notebook.cli", "ledger", "check-source", doi, "--json"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["verdict"] == "verified" and r["metadata"]["title"].startswith("Data from: A new malaria agent")


# ----------------------------------------------------------------------------- the ledger

SHA = hashlib.sha256(b"text").hexdigest()


def test_withdrawn_is_a_source_verdict_that_blocks_synthesis(tmp_path):
    from dsh_notebook.artifact import ledgers as LG
    from dsh_notebook.widgets.ledger import sources_html

    led = Ledger(ledger_path(tmp_path / "report.ipynb"))
    scout, bib, lead = Actor("scout"), Actor("bibliographic_verifier"), Actor("lead")
    ext, cv = Actor("extractor"), Actor("claim_verifier")
    assert led.append("source-proposed", {"source_id": "s1", "kind": "arxiv", "identifier": "1605.08386",
                                          "title": "<b>Heat-bath</b> random walks", "authors": ["Doe"],
                                          "year": 2016}, scout)["ok"]
    r = led.append("source-verified", {"source_id": "s1", "verdict": "withdrawn", "resolver": "arxiv",
                                       "checks": [{"name": "withdrawn", "ok": False, "detail": "comment"}]}, bib)
    assert r["ok"], r
    assert led.append("fulltext-linked", {"source_id": "s1", "locator": "f.txt", "sha256": SHA, "bytes": 4,
                                           "media_type": "text/plain"}, lead)["ok"]
    assert led.append("claim-extracted", {"claim_id": "c1", "source_id": "s1", "text": "t",
                                          "span": {"locator": "p1", "quote": "text", "fulltext_sha256": SHA}},
                      ext)["ok"]
    assert led.append("claim-verified", {"claim_id": "c1", "verdict": "supported", "rationale": "r"}, cv)["ok"]
    state = led.fold()
    assert state.sources["s1"].verdict == "withdrawn"
    ok, why = is_eligible_for_synthesis(state, "c1")
    assert ok is False and "latest verdict is 'withdrawn'" in why
    view = LG.source_view(state, "s1")
    assert view["withdrawn"] is True and view["notices"] == ["withdrawn"]
    shown = sources_html(LG.summary(state))
    assert "withdrawn" in shown and "<b>Heat-bath</b>" not in shown and "&lt;b&gt;Heat-bath" in shown
    bad = led.append("source-verified", {"source_id": "s1", "verdict": "pulled"}, bib)
    assert bad["ok"] is False and bad["code"] == "LEDGER_SCHEMA"


# ----------------------------------------------------------------------------- from the attack on issue 21


@pytest.mark.parametrize("title, caught", [
    ("WITHDRAWN--a resource for withdrawn and discontinued drugs", False),  # a database's name
    ("Withdrawn drugs in Europe, 2000-2020", False),
    ("Statement of Retraction: Effect of oxide layers", True),
    ("Retracted; Effect of oxide layers", True),
    ("Retracted\uff1aEffect of oxide layers", True),
    ("Withdrawal: Effect of oxide layers", True),
    ("Retracted article - Effect of oxide layers", True),
])
def test_title_markers_need_a_separator_a_name_does_not_have(title, caught):
    assert bool(title_notice(title)) is caught


@pytest.mark.parametrize("text, withdrawn", [
    ("Withdrawn from NeurIPS 2021; accepted at ICLR 2022", False),
    ("Withdrawn drugs are a burden on health systems", False),
    ("The authors withdraw this paper because of an error in Lemma 2.", True),
    ("We withdraw this paper.", True),
    ("The submission has been withdrawn", True),
    ("arXiv admin note: This submission has been withdrawn by arXiv administrators due to a dispute", True),
    ("12 pages. This paper has been withdrawn by the author", True),
    ("Withdrawn.", True),
])
def test_arxiv_withdrawal_notes_as_authors_and_arxiv_write_them(text, withdrawn):
    from dsh_notebook.research_pipeline.bibliographic import arxiv_withdrawal

    assert arxiv_withdrawal(text) is withdrawn


def test_a_cited_version_whose_latest_cannot_be_read_is_not_verified(srv):
    srv.add("arxiv", "1111.2011v1", (DATA / "arxiv" / "arxiv-atom-1111.2011v1-older-version.xml").read_bytes())
    srv.add("arxiv", "1111.2011", b"<html><body>Rate exceeded.</body></html>", status=503, content_type="text/html")
    r = check(srv, "1111.2011v1")
    assert r["verdict"] == "inconclusive" and "a withdrawal cannot be ruled out" in detail(r, "latest_version")


@needs_fixtures
@pytest.mark.parametrize("field, value", [
    ("updated-by", 5), ("title", [None]), ("author", ["Smith"]), ("issued", [2020]),
    ("issued", {"date-parts": [["n/a"]]}),
])
def test_a_crossref_record_of_an_odd_shape_is_inconclusive_not_a_crash(srv, field, value):
    body = json.loads((FIXTURES / "crossref-work-ordinary-10.1063_1.4938384.json").read_bytes())
    body["message"][field] = value  # derived from the recorded ordinary work: one field changed
    srv.add("crossref", P21_DOI, json.dumps(body))
    r = check(srv, P21_DOI)
    assert r["verdict"] in ("inconclusive", "verified", "mismatch")
    if r["verdict"] == "inconclusive":
        assert "unexpected shape" in detail(r, "resolved")


@needs_fixtures
def test_a_relation_of_the_work_to_itself_names_no_notice(srv):
    body = json.loads((FIXTURES / "crossref-work-ordinary-10.1063_1.4938384.json").read_bytes())
    body["message"]["relation"] = {"is-retracted-by": [{"id-type": "doi", "id": f"https://doi.org/{P21_DOI}",
                                                        "asserted-by": "subject"}]}
    srv.add("crossref", P21_DOI, json.dumps(body))
    assert check(srv, P21_DOI)["verdict"] == "verified"


def test_an_html_page_from_pubmed_is_not_called_no_record(srv):
    srv.add("efetch", "20301494", b"<!DOCTYPE html><html><body>Service unavailable</body></html>",
            content_type="text/html")
    r = check(srv, "PMID:20301494")
    assert r["verdict"] == "inconclusive"
    assert "no record" not in detail(r, "resolved") and "not a PubMed record set" in detail(r, "resolved")


def test_a_book_chapter_takes_neither_editors_for_authors_nor_misses_its_revision(srv):
    # test-time derivation (tests/data/README.md): the book's author list marked as its editors,
    # a chapter title added, a DateRevised of 2023 added, the PMID changed to 29465924
    raw = BOOK.read_bytes().replace(b"29465922", b"29465924").replace(
        b'<AuthorList Type="authors">', b'<AuthorList Type="editors">').replace(
        b"<Language>eng</Language>",
        b"<ArticleTitle>Seeing Safety</ArticleTitle><Language>eng</Language>"
        b"<DateRevised><Year>2023</Year><Month>01</Month><Day>05</Day></DateRevised>")
    srv.add("efetch", "29465924", _efetch(raw))
    r = check(srv, "29465924", {"title": "Seeing Safety", "year": 2023})
    assert r["metadata"]["authors"] == []  # editors are not the chapter's authors
    assert r["verdict"] == "verified", r["checks"]
