"""ChatClient against a bare httpx streaming loop on the same scripted server, in one run.

Run from the repository root (about 1.5 to 2 minutes on 2 cores at the default size):

    python benchmarks/bench_llm.py [--replies 200] [--tokens 2000] [--rounds 5] [--wire both]

Each reply streams ``--tokens`` content deltas (one short word each) from
``dsh_notebook.llm.testing.ScriptedServer`` on 127.0.0.1, in this process (its thread's work
is in every timing alike), once as OpenAI-compatible chat-completion chunks and once as
Anthropic's Messages events (``--wire``; issue 20), each against its own bare loop.

* Baseline (the goal's): httpx streaming the same request, ``iter_lines``, ``json.loads`` of
  each ``data:`` line, the content deltas appended and joined into the reply's text (no
  assembly of reasoning or tool calls, no retries, no error mapping, no SSE field rules).
* Measured: ``ChatClient.complete(stream=True)`` (server-sent event reading, delta assembly, error mapping).
* Reference only: the same bare loop decoding with ``json.JSONDecoder().raw_decode``, the
  call ChatClient's streaming path makes, so the ratio to it shows what is left of the
  client's own overhead.

Each round times every variant once, in a rotating order; each variant's best round is
kept, and the ratio is best to best. Goal (issue 4): at most 1.1x the baseline. This is a
measurement, not a test: the exit code is always 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import httpx

from dsh_notebook.llm import ChatClient
from dsh_notebook.llm.testing import ScriptedServer

USER = [{"role": "user", "content": "stream please"}]
GOAL = 1.1


def bare(http: httpx.Client, url: str, n: int, decode=json.loads) -> int:
    """``n`` streamed replies read by hand; the total length of their texts."""
    got = 0
    body = {"model": "deepseek-chat", "messages": USER, "stream": True}
    for _ in range(n):
        parts = []
        with http.stream("POST", url, json=body, headers={"Authorization": "Bearer x"}) as r:
            for line in r.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    chunk = decode(line[6:])
                    for c in chunk.get("choices") or []:
                        piece = (c.get("delta") or {}).get("content")
                        if piece:
                            parts.append(piece)
        got += len("".join(parts))
    return got


def bare_anthropic(http: httpx.Client, url: str, n: int, decode=json.loads) -> int:
    """The same for Anthropic's events: ``text_delta`` pieces joined (no thinking, tool input,
    usage or stop reason read)."""
    got = 0
    body = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "stream please"}],
            "max_tokens": 8192, "stream": True}
    for _ in range(n):
        parts = []
        with http.stream("POST", url, json=body, headers={"x-api-key": "x"}) as r:
            for line in r.iter_lines():
                if line.startswith("data: "):
                    event = decode(line[6:])
                    if event.get("type") == "content_block_delta":
                        d = event.get("delta") or {}
                        if d.get("type") == "text_delta":
                            parts.append(d.get("text") or "")
        got += len("".join(parts))
    return got


def stream_size(http: httpx.Client, url: str, body: dict) -> tuple[int, int]:
    """One reply's SSE events and bytes, as streamed."""
    with http.stream("POST", url, json=body, headers={"Authorization": "Bearer x"}) as r:
        raw = r.read()
    return raw.count(b"\n\n") , len(raw)


_scan = json.JSONDecoder().raw_decode


def _raw_decode(text: str):
    return _scan(text)[0]


WIRES = {
    "openai": {"model": "deepseek/deepseek-chat", "path": "/chat/completions", "bare": bare, "env": "DEEPSEEK",
               "label": "OpenAI-compatible chat completions (deepseek)"},
    "anthropic": {"model": "anthropic/claude-sonnet-4-5", "path": "/v1/messages", "bare": bare_anthropic,
                  "env": "ANTHROPIC", "label": "Anthropic Messages events (anthropic)"},
}


def measure(wire: str, a) -> bool:
    w = WIRES[wire]
    words = "word " * a.tokens
    reply = {"reply": {"content": words, "chunk": 5}}
    os.environ.setdefault(f"{w['env']}_API_KEY", "benchmark-key-not-real")
    names = ["bare", "client", "bare_raw"]
    times: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[float]] = {k: [] for k in names}  # process CPU time: client and server threads
    started = time.perf_counter()
    with ScriptedServer([reply] * (len(names) * (a.replies * a.rounds + 1) + 2)) as srv:
        os.environ[f"{w['env']}_BASE_URL"] = srv.base_url
        url = srv.base_url + w["path"]
        with ChatClient(model=w["model"]) as client, httpx.Client(timeout=60) as http:
            runs = {"bare": lambda n: w["bare"](http, url, n),
                    "client": lambda n: sum(len(client.complete(USER).text) for _ in range(n)),
                    "bare_raw": lambda n: w["bare"](http, url, n, _raw_decode)}
            n_events, stream_bytes = stream_size(http, url, client.build(USER)[0])
            assert client.complete(USER).text == words  # warm-up: both connection pools exist before timing
            for k in ("bare", "bare_raw"):
                assert runs[k](1) == len(words), k
            for r in range(a.rounds):
                for k in names[r % len(names):] + names[:r % len(names)]:
                    t, c = time.perf_counter(), time.process_time()
                    n = runs[k](a.replies)
                    times[k].append(time.perf_counter() - t)
                    cpu[k].append(time.process_time() - c)
                    assert n == a.replies * len(words), (k, n)
    elapsed = time.perf_counter() - started

    best = {k: min(v) for k, v in times.items()}
    ratio = best["client"] / best["bare"]
    per_round = [c / b for c, b in zip(times["client"], times["bare"])]
    print(f"== {w['label']}")
    print(f"{a.replies} streamed replies x {a.tokens} content deltas from the scripted server on 127.0.0.1 "
          f"(per reply {n_events} SSE events, {stream_bytes / 1e3:.0f} kB; per timing "
          f"{a.replies * n_events:,} events, {a.replies * stream_bytes / 1e6:.1f} MB)")
    n_events *= a.replies
    print(f"best of {a.rounds} rounds, variants interleaved; best / median / worst, spread = worst/best - 1")
    labels = {"bare": "baseline: bare httpx loop (iter_lines, json.loads, text joined)",
              "client": "ChatClient.complete(stream=True)",
              "bare_raw": "reference: bare loop decoding with raw_decode"}
    for k in ("bare", "client", "bare_raw"):
        v = times[k]
        print(f"  {labels[k]:<66s} {best[k]:6.2f} / {statistics.median(v):6.2f} / {max(v):6.2f} s"
              f"  ({best[k] / n_events * 1e6:5.2f} us/event, spread {max(v) / best[k] - 1:4.1%})")
    print(f"ChatClient / baseline per round: {', '.join(f'{x:.3f}' for x in per_round)} "
          f"(median {statistics.median(per_round):.3f})")
    print(f"ChatClient / reference (raw_decode bare loop), best to best: {best['client'] / best['bare_raw']:.3f}x")
    cbest = {k: min(v) for k, v in cpu.items()}
    print(f"process CPU seconds (client + server threads; less sensitive to other jobs), best of {a.rounds}: "
          + ", ".join(f"{k} {cbest[k]:.2f}" for k in names)
          + f"; ChatClient / baseline {cbest['client'] / cbest['bare']:.3f}x, / reference "
            f"{cbest['client'] / cbest['bare_raw']:.3f}x")
    print(f"GOAL {'PASS' if ratio <= GOAL else 'FAIL'}: ChatClient / baseline = {ratio:.3f}x best to best "
          f"(goal <= {GOAL}x); {elapsed:.0f} s")
    return ratio <= GOAL


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replies", type=int, default=200, help="streamed replies per timing (default 200)")
    ap.add_argument("--tokens", type=int, default=2000, help="content deltas per reply (default 2000)")
    ap.add_argument("--rounds", type=int, default=5, help="timings of each variant; the best is kept (default 5)")
    ap.add_argument("--wire", choices=["openai", "anthropic", "both"], default="both",
                    help="which provider wire to stream (default both, one after the other)")
    a = ap.parse_args()
    for wire in (["openai", "anthropic"] if a.wire == "both" else [a.wire]):
        measure(wire, a)


if __name__ == "__main__":
    main()
