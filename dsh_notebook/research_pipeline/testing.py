"""A fake Crossref / arXiv / PubMed / DataCite server on 127.0.0.1 for the bibliographic verifier's tests
and demos (spec: research.md "Running the roles", the bibliographic verifier; standard library
only; it never imports httpx).

Routes, as the real services have them:

* ``GET /works/<doi>`` (Crossref; the DOI may be percent-encoded; a ``query.*`` parameter gets
  the recorded 400 ``validation-failure`` body when one was loaded, as Crossref answers);
  an unknown DOI gets HTTP 404 ``Resource not found.`` as ``text/plain``, exactly as Crossref;
* ``GET /dois/<doi>`` (DataCite's REST API, issue 21): an unknown DOI gets HTTP 404 with an empty
  body (no recorded DataCite error body was found, so none is made up);
* ``GET /api/query?id_list=<id>`` (arXiv): an unknown id gets an empty Atom feed (HTTP 200);
* ``GET /entrez/eutils/efetch.fcgi?id=<pmid>`` and ``GET /entrez/eutils/esearch.fcgi?term=<doi>``
  (PubMed): an unknown PMID gets an empty ``<PubmedArticleSet/>``, an unknown DOI an esearch
  JSON with ``count`` "0".

``srv.add(service, key, body, status=200, content_type=None, headers=None)`` sets a standing answer,
``srv.queue(...)`` a one-shot answer served before it (a 429 then success); every request is kept
in ``srv.requests`` as ``{"service", "key", "path", "query"}``. ``FakeResolverServer.from_fixtures(dir)``
loads the recorded bodies of ``shared/fixtures/bibliographic`` (see its README) under their
identifiers; ``srv.settings()`` gives the ``settings`` that point the verifier at the server.
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from ..loopback import LoopbackServer, QuietHandler

SERVICES = ("crossref", "arxiv", "efetch", "esearch", "datacite")
_CT = {"crossref": "application/json", "datacite": "application/json; charset=utf-8", "arxiv": "application/atom+xml; charset=utf-8",
       "efetch": "text/xml; charset=UTF-8", "esearch": "application/json; charset=UTF-8"}
EMPTY_FEED = ('<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" '
              'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"><id>https://arxiv.org/api/fake</id>'
              '<title>arXiv Query</title><opensearch:totalResults>0</opensearch:totalResults></feed>\n')


def crossref_body_from_partial(path: str | Path) -> str:
    """A Crossref ``work`` body around a ``partial/`` trimmed cache record's ``message`` (its values
    are the server's; only the fields it kept are there). The README forbids serving the file
    itself as a body: this wraps its message the way Crossref wraps a work."""
    rec = json.loads(Path(path).read_text(encoding="utf-8"))
    return json.dumps({"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": rec["message"]})


class FakeResolverServer(LoopbackServer):
    """``with FakeResolverServer() as srv: ... srv.base_url ...``"""

    name = "fake-resolver"

    def __init__(self, port: int = 0):
        self.routes: dict[tuple[str, str], dict] = {}
        self.queued: dict[tuple[str, str], deque] = defaultdict(deque)
        self.requests: list[dict] = []
        self.crossref_validation_failure: bytes | None = None
        self.empty_feed: bytes = EMPTY_FEED.encode()
        self._lock = threading.Lock()
        server = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                server._handle(self)

        self.bind(Handler, port)
        self.start()  # serving from construction, as its callers expect

    # ------------------------------------------------------------------ set-up

    @staticmethod
    def _key(service: str, key: str) -> tuple[str, str]:
        if service not in SERVICES:
            raise ValueError(f"unknown service {service!r} (one of {', '.join(SERVICES)})")
        return service, key.lower() if service in ("crossref", "esearch", "datacite") else key

    @staticmethod
    def _answer(body: object, status: int, content_type: str | None, headers: dict | None, service: str) -> dict:
        data = body if isinstance(body, bytes) else str(body).encode("utf-8")
        return {"status": status, "body": data, "content_type": content_type or _CT[service],
                "headers": dict(headers or {})}

    def add(self, service: str, key: str, body: object, status: int = 200, content_type: str | None = None,
            headers: dict | None = None) -> None:
        self.routes[self._key(service, key)] = self._answer(body, status, content_type, headers, service)

    def queue(self, service: str, key: str, body: object, status: int = 200, content_type: str | None = None,
              headers: dict | None = None) -> None:
        self.queued[self._key(service, key)].append(self._answer(body, status, content_type, headers, service))

    def settings(self) -> dict:
        return {"crossref_url": self.base_url, "arxiv_url": self.base_url, "pubmed_url": self.base_url,
                "datacite_url": self.base_url,
                "retries": 2, "max_retry_wait": 0.2, "timeout": 5.0}

    @classmethod
    def from_fixtures(cls, folder: str | Path, port: int = 0) -> FakeResolverServer:
        """A server answering with the recorded bodies in ``folder`` (shared/fixtures/bibliographic)."""
        folder = Path(folder)
        srv = cls(port)
        for f in sorted(folder.glob("crossref-work-*.json")):
            raw = f.read_bytes()
            doc = json.loads(raw)
            if doc.get("message-type") == "work":
                srv.add("crossref", doc["message"]["DOI"], raw)
            elif doc.get("message-type") == "work-list":  # each item as its own work body
                for item in doc["message"]["items"]:
                    srv.add("crossref", item["DOI"], json.dumps(
                        {"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": item}))
        vf = folder / "crossref-400-validation-failure-query-on-single-work.json"
        if vf.is_file():
            srv.crossref_validation_failure = vf.read_bytes()
        nf = folder / "crossref-404-resource-not-found.txt"
        if nf.is_file():  # the DOI it was recorded for; any other unknown DOI gets the same body
            srv.add("crossref", "10.48550/arxiv.2312.07559", nf.read_bytes(), status=404, content_type="text/plain")
        for f in sorted(folder.glob("arxiv-atom-*.xml")):
            m = re.match(r"arxiv-atom-(.+?)-(?:no-match|versioned|explicit|malformed|old-style|\d{4})", f.name)
            if not m:
                continue
            key = m.group(1).replace("_", "/")
            status = 400 if "error-400" in f.name else 200
            srv.add("arxiv", key, f.read_bytes(), status=status)
            base = re.sub(r"v\d+$", "", key)
            if base != key and status == 200 and srv._key("arxiv", base) not in srv.routes:
                # a versioned recording also answers for its base id (the verifier asks for the
                # latest version), as arXiv does while that version is the latest
                srv.add("arxiv", base, f.read_bytes())
            if "empty-feed" in f.name:
                srv.empty_feed = f.read_bytes()
        for f in sorted(folder.glob("pubmed-efetch-*.xml")):
            raw = f.read_bytes()
            if b"<PubmedArticleSet" not in raw:  # the retractobot file is a bare <PubmedArticle>
                raw = b'<?xml version="1.0" ?>\n<PubmedArticleSet>\n' + raw.strip() + b"\n</PubmedArticleSet>\n"
            pmids = re.findall(r"pmid(\d+(?:-\d+)*)", f.name)[0].split("-")
            for p in pmids:
                srv.add("efetch", p, raw)
            srv.add("efetch", ",".join(pmids), raw)
        for f in sorted(folder.glob("datacite-dois-*.json")):  # tests/data/datacite (recorded DataCite bodies)
            raw = f.read_bytes()
            srv.add("datacite", json.loads(raw)["data"]["id"], raw)
        es = folder / "pubmed-esearch-doi-to-pmid-29913552.json"
        if es.is_file():
            srv.add("esearch", "10.4014/jmb.1812.02044", es.read_bytes())
        return srv

    # ------------------------------------------------------------------ serving

    def _route(self, path: str, query: dict) -> tuple[str | None, str | None]:
        if path.startswith("/works/"):
            return "crossref", unquote(path[len("/works/"):])
        if path.startswith("/dois/"):
            return "datacite", unquote(path[len("/dois/"):])
        if path == "/api/query":
            return "arxiv", (query.get("id_list") or [""])[0]
        if path == "/entrez/eutils/efetch.fcgi":
            return "efetch", (query.get("id") or [""])[0]
        if path == "/entrez/eutils/esearch.fcgi":
            return "esearch", (query.get("term") or [""])[0]
        return None, None

    def _default(self, service: str | None, key: str, query: dict) -> dict:
        if service == "crossref":
            if any(k.startswith("query.") for k in query) and self.crossref_validation_failure:
                return self._answer(self.crossref_validation_failure, 400, "application/json;charset=utf-8", None,
                                    service)
            return self._answer(b"Resource not found.", 404, "text/plain", None, service)
        if service == "datacite":
            return self._answer(b"", 404, "application/json; charset=utf-8", None, service)
        if service == "arxiv":
            return self._answer(self.empty_feed, 200, None, None, service)
        if service == "efetch":
            return self._answer(b'<?xml version="1.0" ?>\n<PubmedArticleSet></PubmedArticleSet>\n', 200, None, None,
                                service)
        if service == "esearch":
            return self._answer(json.dumps({"header": {"type": "esearch", "version": "0.3"}, "esearchresult": {
                "count": "0", "retmax": "0", "retstart": "0", "idlist": [], "translationset": []}}), 200, None, None,
                service)
        return self._answer(b"not found", 404, "text/plain", None, "crossref")

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        service, key = self._route(parts.path, query)
        with self._lock:
            self.requests.append({"service": service, "key": key, "path": parts.path,
                                  "query": {k: v[0] for k, v in query.items()}})
            answer = None
            if service and key is not None:  # _route gives both or neither
                k = self._key(service, key)
                if self.queued.get(k):
                    answer = self.queued[k].popleft()
                else:
                    answer = self.routes.get(k)
                if answer is not None and service == "crossref" and any(q.startswith("query.") for q in query) \
                        and self.crossref_validation_failure:
                    answer = None
            if answer is None:
                answer = self._default(service, key or "", query)
        h.send_response(answer["status"])
        h.send_header("Content-Type", answer["content_type"])
        h.send_header("Content-Length", str(len(answer["body"])))
        for name, value in answer["headers"].items():
            h.send_header(name, str(value))
        h.end_headers()
        h.wfile.write(answer["body"])

    def close(self) -> None:
        self.stop()
