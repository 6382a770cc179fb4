"""``slimtools gateway`` between an agent and its model API.

1. added latency per request: the clearing gateway against a pass-through gateway of the same
   stack (uvicorn + starlette + httpx, ``create_app(clear=False)``) over one scripted upstream
   on loopback, requests interleaved, p50 and p99 of the difference; time to first streamed
   byte through each;
2. time per request as a conversation grows to 1,000 rounds (the I/O-free core), first
   hundred against last hundred;
3. memory per conversation held in the cache;
4. the shared transcripts replayed through the gateway's core: tokens upstream against tokens
   the agent sent, and the ledger's cached cost against no gateway, per source.
"""

from __future__ import annotations

import gc
import socket
import statistics
import time
import tracemalloc
from typing import Any

import httpx
import orjson

from benchmarks._timing import SHARED_DATA
from slimtools.clearing import ClearingPolicy
from slimtools.gateway import ConversationCache, create_app
from slimtools.ledger import TokenLedger
from slimtools.transcripts import iter_transcripts, transcript_files
from tests.gateway.gateway_upstream import FakeUpstream, Script, create_upstream, serve

TOOLS = [{"name": "read_log", "input_schema": {"type": "object"}}]
WIRE = ("anthropic", "openai_chat", "openai_responses")
RUNS_PER_SOURCE = 3
# The benchmark's own client disables Nagle, as the SDKs' async clients do: otherwise each
# request waits on the server's delayed ACK and every figure carries ~40 ms of it.
NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


def log_text(n: int) -> str:
    return "\n".join(f"line {i} of log{n}: status ok, latency {i % 97} ms" for i in range(150))


def conversation(rounds: int) -> list[list[dict[str, Any]]]:
    """The request histories of an Anthropic run of ``rounds`` tool calls."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "Read the logs."}]
    out = [list(history)]
    for n in range(1, rounds + 1):
        history.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"toolu_{n}", "name": "read_log", "input": {"n": n}}
                ],
            }
        )
        history.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": log_text(n)}
                ],
            }
        )
        out.append(list(history))  # fmt: skip
    return out


def latency() -> None:
    """Added latency per request and time to first streamed byte, against a pass-through."""
    fake = FakeUpstream(Script(rounds=0))
    requests = conversation(30)
    policy = ClearingPolicy()
    with serve(create_upstream(fake)) as up, serve(create_app(up, policy)) as gw, \
            serve(create_app(up, policy, clear=False)) as plain, \
            httpx.Client(transport=httpx.HTTPTransport(socket_options=NODELAY)) as client:  # fmt: skip
        added, first = [], {"gateway": [], "pass-through": []}
        for i, history in enumerate(requests * 3):
            # Alternate which stack goes first, so neither always meets a warmer machine.
            order = [("gateway", gw), ("pass-through", plain)][:: 1 if i % 2 else -1]
            body = orjson.dumps({"model": "m", "max_tokens": 8, "messages": history,
                                 "tools": TOOLS})  # fmt: skip
            times = {}
            gc.collect()
            for name, url in order:
                start = time.perf_counter()
                client.post(url + "/v1/messages", content=body)
                times[name] = time.perf_counter() - start
            added.append(times["gateway"] - times["pass-through"])
            stream = orjson.dumps({"model": "m", "max_tokens": 8, "messages": history,
                                   "stream": True})  # fmt: skip
            for name, url in order:
                start = time.perf_counter()
                with client.stream("POST", url + "/v1/messages", content=stream) as answer:
                    chunks = answer.iter_raw()
                    next(chunks)
                    first[name].append(time.perf_counter() - start)
                    for _ in chunks:
                        pass
    added.sort()
    p50, p99 = added[len(added) // 2], added[int(len(added) * 0.99)]
    print(f"added latency per request over a pass-through ({len(added)} requests, 1-30 rounds): "
          f"p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms")  # fmt: skip
    g, p = statistics.median(first["gateway"]), statistics.median(first["pass-through"])
    print(f"time to first streamed byte: gateway {g * 1e3:.2f} ms, pass-through {p * 1e3:.2f} ms "
          f"(ratio {g / p:.2f})")  # fmt: skip


def growth() -> None:
    """Time per request as one conversation grows to 1,000 rounds (core, no HTTP)."""
    requests = conversation(1000)
    cache = ConversationCache(ClearingPolicy())
    gc.collect()
    times = []
    for history in requests[1:]:
        start = time.perf_counter()
        cache.clear(history, "anthropic")
        times.append(time.perf_counter() - start)
    early, late = statistics.mean(times[:100]), statistics.mean(times[-100:])
    body = orjson.dumps({"messages": requests[-1]})
    gc.collect()
    start = time.perf_counter()
    for _ in range(5):
        orjson.loads(body)
    parse = (time.perf_counter() - start) / 5
    print(f"time per request, 1,000 rounds: first 100 {early * 1e3:.3f} ms, last 100 "
          f"{late * 1e3:.3f} ms (x{late / early:.1f} for a history 10x longer: normalizing and "
          f"comparing the history grows, the clearing does not); parsing the last request's "
          f"{len(body) / 1e6:.1f} MB body alone takes {parse * 1e3:.1f} ms")  # fmt: skip


def memory() -> None:
    """Memory held per conversation (200 rounds, 6 KB results) against its history's size."""
    requests = conversation(200)
    size = len(orjson.dumps(requests[-1]))
    gc.collect()
    tracemalloc.start()
    cache = ConversationCache(ClearingPolicy())
    base = tracemalloc.get_traced_memory()[0]
    for history in requests[1:]:
        cache.clear(orjson.loads(orjson.dumps(history)), "anthropic")
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    print(f"memory per conversation (200 rounds, history {size / 1e6:.2f} MB as JSON): "
          f"{held / 1e6:.2f} MB ({held / size:.1f}x the JSON)")  # fmt: skip


def transcripts() -> None:
    """Shared transcripts through the gateway's core: tokens and cached cost per source."""
    root = SHARED_DATA / "transcripts"
    if not root.is_dir():
        print(f"shared transcripts: skipped ({root} not found)")
        return
    policy = ClearingPolicy()
    print(f"{'source':<16} {'runs':>4} {'sent':>11} {'upstream':>11} {'cost none':>11} "
          f"{'cost gw':>11} {'ratio':>6}")  # fmt: skip
    for source in sorted(p.name for p in root.iterdir() if p.is_dir()):
        files = list(transcript_files(root / source))[:RUNS_PER_SOURCE]
        sent = upstream = cost_none = cost_gw = runs = 0
        for t in iter_transcripts(*files):
            if t.format not in WIRE or runs >= RUNS_PER_SOURCE:
                continue
            runs += 1
            cache = ConversationCache(policy)
            gw = TokenLedger.measure(t.messages, clear=lambda h, f=t.format, c=cache:
                                     c.clear(list(h), f).messages, format=t.format)  # fmt: skip
            none = TokenLedger.measure(t.messages, format=t.format)
            sent += none.summary.billed
            upstream += gw.summary.billed
            cost_gw += gw.summary.billed_cached
            cost_none += none.summary.billed_cached
        if runs:
            print(f"{source:<16} {runs:>4} {sent:>11,} {upstream:>11,} {cost_none:>11,} "
                  f"{cost_gw:>11,} {cost_gw / max(cost_none, 1):>6.2f}")  # fmt: skip


def main() -> None:
    latency()
    growth()
    memory()
    transcripts()


if __name__ == "__main__":
    main()
