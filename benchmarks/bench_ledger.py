"""Folding a research ledger against just parsing it, side by side in one run.

Run from the repository root:

    python benchmarks/bench_ledger.py [--events 100000] [--repeat 5]

A generated ledger (``<tmp>/report.dsh/ledger/main.jsonl``) holds ``--events`` events written
as the writer writes them: the header, then one strict JSON line per event with ``seq`` counting
from 1, ``prev`` the sha256 of the previous line's bytes, each ``data`` normalised by its
pydantic model and each ``actor`` the role's own. The events follow research rounds of about
forty events each: a question and its plan, delegated and completed tasks, proposed and
verified sources (some mismatched or retracted), linked fulltext, extracted claims and an
experiment, claim verdicts, a decision, an objection with a review verdict, an adjudication
and an answer, a revision, a passing review, an approval request and the person's decision,
now and then a dismissed objection, a revision the person sends back, or an escalation. The
lines are built directly (not through ``Ledger.append``, which locks and fsyncs each line);
``Ledger.verify()`` re-checks the whole file once, outside the timed part, and must be ok.

Baseline: reading the file and ``json.loads`` of every line. Measured: ``Ledger(path).fold()``,
what a user calls to get the state (read, decode every line strictly, fold). Also shown: ``fold``
alone on the already-parsed events. Goal (issue): at most 2x the baseline. Each time is the best
of ``--repeat`` runs. This is a measurement, not a test: the exit code is always 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
import timeit
from datetime import datetime, timedelta, timezone
from pathlib import Path

from dsh_notebook.research import Ledger, fold, ledger_path
from dsh_notebook.research.events import EVENT_MODELS, EVENT_PREFIX, ROLE_AUTHORITY
from dsh_notebook.storage import dumps_line

START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
WORDS = ("aspirin", "cohort", "colorectal", "risk", "trial", "dose", "follow-up", "mortality", "adults",
         "randomised", "placebo", "incidence", "hazard", "ratio", "confidence", "interval", "bleeding")


def _actor(role: str, **extra: str) -> dict:
    out = {"role": role, "authority": ROLE_AUTHORITY[role]}
    if role not in ("runtime", "human"):
        out |= {"model": "deepseek-chat" if role != "lead" else "claude-sonnet", "prompt_version": f"{role}-v2"}
    return out | extra


ACTORS = {r: _actor(r) for r in ROLE_AUTHORITY if r != "human"}
LEAD_Q = _actor("lead", on_behalf_of="person")
PERSON = _actor("human", by="Ada Example", channel="explorer")


def _text(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def _round(r: int):
    """Yield ``(type, data, actor)`` for research round *r* (about forty events)."""
    q, d = f"q{r}", f"d{r}"
    yield "question-posed", {"question_id": q, "text": f"Does {_text(r, 6)} hold? (round {r})",
                             "scope": "adults, 2000-2025", "acceptance": ["RCT or cohort", "n >= 1000"]}, LEAD_Q
    yield "plan-recorded", {"question_id": q, "plan": ["search cohorts and trials", "verify sources",
                                                      "extract claims", "verify claims", "synthesise"]}, ACTORS["lead"]
    route = {"tier": "cheap", "provider": "deepseek", "model": "deepseek-chat", "effort": "low"}
    task = 0

    def delegated(role: str, duty: str, inputs: dict):
        nonlocal task
        task += 1
        tid = f"t{r}.{task}"
        return tid, ("task-delegated", {"task_id": tid, "role": role, "duty": duty, "inputs": inputs, "route": route,
                                        "budget": {"tokens": 20000, "seconds": 120}}, ACTORS["lead"])

    def completed(tid: str, k: int):
        return ("task-completed", {"task_id": tid, "status": "ok",
                                   "usage": {"input_tokens": 1200 + 37 * k, "output_tokens": 310 + 11 * k}},
                ACTORS["runtime"])

    sources = [f"s{r}.{k}" for k in range(4)]
    tid, ev = delegated("scout", f"find sources for {q}", {"question_id": q, "max_sources": 4})
    yield ev
    for k, sid in enumerate(sources):
        yield "source-proposed", {"source_id": sid, "kind": ("doi", "doi", "arxiv", "pmid")[k],
                                  "identifier": f"10.{1000 + r % 9000}/journal.{r}.{k}",
                                  "title": f"{_text(r + k, 8).capitalize()}: a {('cohort', 'trial')[k % 2]} study",
                                  "authors": ["Rothwell P", "Wilson M", f"Author{k} X"][:2 + k % 2],
                                  "year": 2001 + (r + k) % 24, "query": f"{_text(r, 3)} cohort"}, ACTORS["scout"]
    yield completed(tid, 1)
    tid, ev = delegated("bibliographic_verifier", "check the proposed sources", {"source_ids": sources})
    yield ev
    verdicts = ["verified", "verified", "verified", ("mismatch", "retracted", "inconclusive")[r % 3]]
    for k, sid in enumerate(sources):
        yield "source-verified", {"source_id": sid, "verdict": verdicts[k],
                                  "checks": {"title": round(0.9 + k / 100, 3), "authors": True, "year": k != 3},
                                  "metadata": {"container": "Lancet", "volume": str(300 + r % 90), "notices": []},
                                  "resolver": "crossref"}, ACTORS["bibliographic_verifier"]
    yield completed(tid, 2)
    shas = {}
    for k, sid in enumerate(sources[:3]):
        shas[sid] = hashlib.sha256(f"{sid} fulltext".encode()).hexdigest()
        yield "fulltext-linked", {"source_id": sid, "locator": f"fulltext/{sid}.pdf", "sha256": shas[sid],
                                  "bytes": 180_000 + 977 * k, "media_type": "application/pdf"}, ACTORS["lead"]
    claims = [f"c{r}.{k}" for k in range(5)]
    tid, ev = delegated("extractor", "extract claims with spans", {"source_ids": sources[:3]})
    yield ev
    for k, cid in enumerate(claims):
        sid = sources[k % 3]
        yield "claim-extracted", {"claim_id": cid, "source_id": sid, "text": f"{_text(r + k, 9)} (claim {k})",
                                  "span": {"locator": f"p{3 + k}, para {k + 1}",
                                           "quote": f"we found that {_text(r * 3 + k, 14)}",
                                           "fulltext_sha256": shas[sid]}}, ACTORS["extractor"]
    yield "experiment-extracted", {"experiment_id": f"e{r}", "source_id": sources[0], "design": "randomised trial",
                                   "population": "adults 40-75", "n": 14033 + r, "intervention": "aspirin 75 mg",
                                   "outcome": "colorectal cancer incidence", "effect": 0.76, "interval": [0.63, 0.94],
                                   "span": {"locator": "table 2", "quote": "HR 0.76 (0.63-0.94)",
                                            "fulltext_sha256": shas[sources[0]]}}, ACTORS["extractor"]
    yield completed(tid, 3)
    tid, ev = delegated("claim_verifier", "verify the claims against their spans", {"claim_ids": claims})
    yield ev
    cverdicts = ["supported", "supported", "partially_supported", ("unsupported", "uncertain", "supported")[r % 3],
                 "contradicted"]
    for k, cid in enumerate(claims):
        yield "claim-verified", {"claim_id": cid, "verdict": cverdicts[k],
                                 "rationale": f"the quote says {_text(r + 2 * k, 6)}"}, ACTORS["claim_verifier"]
    yield completed(tid, 4)
    cited = claims[:3]
    yield "decision-proposed", {"decision_id": d, "question_id": q, "statement": f"Probably yes: {_text(r, 10)}",
                                "claim_ids": cited, "confidence": 0.7,
                                "limitations": ["observational", "one population"]}, ACTORS["lead"]
    o1, o2 = f"o{r}.1", f"o{r}.2"
    yield "objection-raised", {"objection_id": o1, "target": {"kind": "decision", "id": d},
                               "reason": f"the statement overreaches: {_text(r + 5, 7)}",
                               "severity": "major"}, ACTORS["citation_auditor"]
    objections = [o1]
    if r % 4 == 0:
        yield "objection-raised", {"objection_id": o2, "target": {"kind": "claim", "id": cited[1]},
                                   "reason": "quote taken out of context", "severity": "minor"}, ACTORS["citation_auditor"]
        objections.append(o2)
    yield "review-verdict-recorded", {"decision_id": d, "revision": 1, "verdict": "objections",
                                      "objection_ids": objections}, ACTORS["citation_auditor"]
    yield "adjudication-recorded", {"objection_id": o1, "verdict": "upheld",
                                    "rationale": "the cohort cannot show causation"}, ACTORS["adjudicator"]
    if r % 4 == 0:
        yield "adjudication-recorded", {"objection_id": o2, "verdict": "dismissed",
                                        "rationale": "the quote is faithful"}, ACTORS["adjudicator"]
    yield "objection-answered", {"objection_id": o1, "response": "narrowed to an association"}, ACTORS["lead"]
    yield "decision-revised", {"decision_id": d, "revision": 2, "statement": f"Associated with lower risk: {_text(r, 8)}",
                               "claim_ids": cited, "confidence": "medium", "limitations": "observational",
                               "answers": [o1]}, ACTORS["lead"]
    if r % 10 == 3:
        yield "escalated", {"subject": {"kind": "decision", "id": d}, "reason": "budget", "to": "human"}, ACTORS["runtime"]
    revision = 2
    rounds = 2 if r % 5 == 1 else 1  # now and then the person sends it back once
    for n in range(rounds):
        yield "review-verdict-recorded", {"decision_id": d, "revision": revision, "verdict": "pass"}, ACTORS["citation_auditor"]
        yield "human-approval-requested", {"decision_id": d, "revision": revision}, ACTORS["lead"]
        last = n == rounds - 1
        verdict = ("approved" if r % 7 else "rejected") if last else "needs_revision"
        yield "human-decision-recorded", {"decision_id": d, "verdict": verdict, "note": "" if last else "cite the trial",
                                          "by": PERSON["by"]}, PERSON
        if not last:
            revision += 1
            yield "decision-revised", {"decision_id": d, "revision": revision, "statement": "Associated, trial-backed",
                                       "claim_ids": cited, "confidence": 0.8, "limitations": "observational"}, ACTORS["lead"]


def build(path: Path, n_events: int) -> int:
    """Write a valid ledger of exactly *n_events* events at *path* (a fresh ``Ledger`` makes the
    header); returns the file size in bytes."""
    Ledger(path)
    last = path.read_bytes()
    assert last.count(b"\n") == 1
    out = [last]
    seq, r = 0, 0
    cache: dict[str, type] = {}
    while seq < n_events:
        for t, data, actor in _round(r):
            if seq == n_events:
                break
            seq += 1
            model = cache.setdefault(t, EVENT_MODELS[t])
            line = dumps_line({"seq": seq, "ts": (START + timedelta(seconds=7 * seq)).isoformat(timespec="milliseconds")
                               .replace("+00:00", "Z"), "type": EVENT_PREFIX + t, "actor": actor,
                               "prev": hashlib.sha256(last).hexdigest(),
                               "data": model.model_validate(data).model_dump(mode="json")})
            out.append(line)
            last = line
        r += 1
    data = b"".join(out)
    path.write_bytes(data)
    return len(data)


def baseline(path: Path) -> int:
    n = 0
    for line in path.read_bytes().splitlines():
        json.loads(line)
        n += 1
    return n


def best(fn, repeat: int) -> float:
    """Best of *repeat* single calls, in seconds (timeit's perf_counter timer)."""
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = ledger_path(Path(tmp) / "report.ipynb")
        t = time.perf_counter()
        size = build(path, a.events)
        t_build = time.perf_counter() - t
        t = time.perf_counter()
        v = Ledger(path).verify()
        t_verify = time.perf_counter() - t
        # the two timed paths first, while no parsed ledger is held in memory (a held one would
        # make every full garbage collection during the fold walk it too)
        t_base = best(lambda: baseline(path), a.repeat)
        t_ledger = best(lambda: Ledger(path).fold(), a.repeat)
        events = Ledger(path).events()
        state = Ledger(path).fold()
        assert state == fold(events) and state.events == a.events and not state.skipped
        types = len({e["type"] for e in events})
        t_fold = best(lambda: fold(events), a.repeat)
    ratio = t_ledger / t_base
    print(f"ledger: {a.events} events of {types} types, {size / 1e6:.1f} MB, {len(state.questions)} questions, "
          f"{len(state.claims)} claims, {len(state.decisions)} decisions, {len(state.objections)} objections; "
          f"built in {t_build:.1f} s")
    print(f"Ledger.verify() (once, untimed): ok={v['ok']}, {len(v['problems'])} problem(s), {v['events']} events, "
          f"{t_verify:.1f} s")
    print(f"baseline (read the file + json.loads of every line): {t_base * 1e3:8.1f} ms")
    print(f"Ledger(path).fold() (read + strict decode + fold):   {t_ledger * 1e3:8.1f} ms")
    print(f"fold(events) alone, on the parsed events:            {t_fold * 1e3:8.1f} ms")
    print(f"GOAL {'PASS' if ratio <= 2 else 'FAIL'}: Ledger.fold / baseline = {ratio:.2f}x (goal <= 2x)")


if __name__ == "__main__":
    main()
