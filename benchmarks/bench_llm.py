"""ChatClient against a bare httpx streaming loop on the same scripted server, in one run.

Run from the repository root:

    python benchmarks/bench_llm.py [--replies 200] [--tokens 2000]

Each reply streams ``--tokens`` content deltas (one short word each) from
``dsh_notebook.llm.testing.ScriptedServer`` on 127.0.0.1. Baseline: httpx streaming the
same request and parsing each ``data:`` line with ``json`` (no assembly, no retries).
Measured: ``ChatClient.complete(stream=True)`` (httpx-sse, delta assembly, error mapping).
Goal (issue 4): at most 1.1x the baseline. This is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import httpx

from dsh_notebook.llm import ChatClient
from dsh_notebook.llm.testing import ScriptedServer

USER = [{"role": "user", "content": "stream please"}]


def bare(url: str, n: int) -> int:
    got = 0
    with httpx.Client(timeout=60) as http:
        for _ in range(n):
            body = {"model": "deepseek-chat", "messages": USER, "stream": True}
            with http.stream("POST", url, json=body, headers={"Authorization": "Bearer x"}) as r:
                for line in r.iter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        chunk = json.loads(line[6:])
                        for c in chunk.get("choices") or []:
                            got += len((c.get("delta") or {}).get("content") or "")
    return got


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replies", type=int, default=200)
    ap.add_argument("--tokens", type=int, default=2000)
    a = ap.parse_args()
    words = "word " * a.tokens
    reply = {"reply": {"content": words, "chunk": 5}}
    os.environ.setdefault("DEEPSEEK_API_KEY", "benchmark-key-not-real")
    with ScriptedServer([reply] * (a.replies * 2)) as srv:
        os.environ["DEEPSEEK_BASE_URL"] = srv.base_url
        client = ChatClient()
        t = time.perf_counter()
        n_bare = bare(srv.base_url + "/chat/completions", a.replies)
        t_bare = time.perf_counter() - t
        t = time.perf_counter()
        n_client = sum(len(client.complete(USER).text) for _ in range(a.replies))
        t_client = time.perf_counter() - t
    assert n_bare == n_client == a.replies * len(words), (n_bare, n_client)
    ratio = t_client / t_bare
    print(f"{a.replies} streamed replies of {a.tokens} deltas from the scripted server on 127.0.0.1")
    print(f"bare httpx streaming loop (json per line): {t_bare:7.2f} s")
    print(f"ChatClient.complete(stream=True):          {t_client:7.2f} s")
    print(f"GOAL {'PASS' if ratio <= 1.1 else 'FAIL'}: ChatClient / bare = {ratio:.2f}x (goal <= 1.1x)")


if __name__ == "__main__":
    main()
