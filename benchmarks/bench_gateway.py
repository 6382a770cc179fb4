"""``slimtools gateway`` between an agent and its model API.

1. added latency per request over a direct connection to one scripted upstream on loopback:
   the clearing gateway and a pass-through gateway of the same stack (uvicorn + starlette +
   aiohttp, ``create_app(clear=False)``), requests interleaved, p50 and p99 of each difference
   and the share of the gateway's added time that clearing takes (goal: p50 under 2 ms,
   clearing at most 15% of it), beside the floor of any clearing on the wire (parsing and
   serializing each body); time to first streamed byte through each; the first
   request of each stack (imports, the first upstream connection) apart from the rest;
2. time per request as a conversation grows to 1,000 rounds (the I/O-free core), first
   hundred against last hundred;
3. memory per conversation held in the cache, and time per request of 12 and 100 workers
   sharing a first message against as many with their own;
4. a soak: 200 clients x 50 rounds through the gateway with faults mixed in (abandoned
   requests, odd headers both ways, upstream errors), then an ordinary request's time and
   the retained state against its byte bound;
5. the shared transcripts replayed through the gateway's core: tokens upstream against tokens
   the agent sent, and the ledger's cached cost against no gateway, per source.
"""

from __future__ import annotations

import asyncio
import gc
import socket
import statistics
import time
import tracemalloc
from typing import Any

import httpx
import orjson

from benchmarks._timing import SHARED_DATA
from benchmarks.peers.ledger import measure_steps
from benchmarks.results import record
from slimtools.clearing import ClearingPolicy
from slimtools.gateway import ConversationCache, create_app
from slimtools.ledger import TokenLedger
from slimtools.transcripts import iter_transcripts, transcript_files
from tests.gateway.gateway_upstream import (
    FakeUpstream,
    Script,
    create_upstream,
    serve,
    worker_history,
)

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
    """Added latency per request over a direct connection, and clearing's share of it."""
    fake = FakeUpstream(Script(rounds=0))
    requests = conversation(30)
    policy = ClearingPolicy()
    with serve(create_upstream(fake)) as up, serve(create_app(up, policy)) as gw, \
            serve(create_app(up, policy, clear=False)) as plain, \
            httpx.Client(transport=httpx.HTTPTransport(socket_options=NODELAY)) as client:  # fmt: skip
        added: dict[str, list[float]] = {"gateway": [], "pass-through": []}
        first: dict[str, list[float]] = {"gateway": [], "pass-through": []}
        stacks = [("gateway", gw), ("pass-through", plain), ("direct", up)]
        cold = {}
        for name, url in stacks:
            start = time.perf_counter()
            client.post(url + "/v1/messages", content=orjson.dumps(
                {"model": "m", "max_tokens": 8, "messages": requests[0]}))  # fmt: skip
            cold[name] = time.perf_counter() - start
        for i, history in enumerate(requests * 3):
            # Rotate which stack goes first, so none always meets a warmer machine.
            order = stacks[i % 3 :] + stacks[: i % 3]
            body = orjson.dumps({"model": "m", "max_tokens": 8, "messages": history,
                                 "tools": TOOLS})  # fmt: skip
            times = {}
            gc.collect()
            for name, url in order:
                start = time.perf_counter()
                client.post(url + "/v1/messages", content=body)
                times[name] = time.perf_counter() - start
            for name, values in added.items():
                values.append(times[name] - times["direct"])
            stream = orjson.dumps({"model": "m", "max_tokens": 8, "messages": history,
                                   "stream": True})  # fmt: skip
            for name, url in [(n, u) for n, u in order if n != "direct"]:
                start = time.perf_counter()
                with client.stream("POST", url + "/v1/messages", content=stream) as answer:
                    chunks = answer.iter_raw()
                    next(chunks)
                    first[name].append(time.perf_counter() - start)
                    for _ in chunks:
                        pass
    print("first request of each stack (cold: imports, first upstream connection): "
          + ", ".join(f"{name} {t * 1e3:.1f} ms" for name, t in cold.items()))  # fmt: skip
    for name, values in added.items():
        values.sort()
        p50, p99 = values[len(values) // 2], values[int(len(values) * 0.99)]
        print(f"added latency over a direct connection, {name} ({len(values)} requests, "
              f"1-30 rounds of 6 KB results): p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms")  # fmt: skip
    gateway_p50 = statistics.median(added["gateway"])
    clearing = gateway_p50 - statistics.median(added["pass-through"])
    print(f"clearing's share of the gateway's added p50: {max(clearing, 0) * 1e3:.2f} ms of "
          f"{gateway_p50 * 1e3:.2f} ms ({max(clearing, 0) / gateway_p50:.0%}; goal: p50 under "
          f"2 ms, clearing at most 15%)")  # fmt: skip
    floor = []
    for history in requests:
        body = orjson.dumps({"model": "m", "max_tokens": 8, "messages": history, "tools": TOOLS})
        gc.collect()
        start = time.perf_counter()
        orjson.dumps(orjson.loads(body))
        floor.append(time.perf_counter() - start)
    parse = statistics.median(floor)
    print(f"floor of clearing on the wire (parse and serialize each body, nothing cleared): "
          f"{parse * 1e3:.2f} ms ({parse / gateway_p50:.0%} of the gateway's added p50)")  # fmt: skip
    passing = statistics.median(added["pass-through"])
    record("added latency over a direct connection on loopback, p50 (goal: under 2 ms)",
           baseline=f"pass-through of the same stack: {passing * 1e3:.2f} ms",
           measured=f"{gateway_p50 * 1e3:.2f} ms", ratio=f"{gateway_p50 / passing:.2f}x",
           gateway_ms=gateway_p50 * 1e3, pass_through_ms=passing * 1e3)  # fmt: skip
    record("clearing's share of the added p50 (goal: at most 15%)",
           baseline=f"floor, parse and serialize each body: {parse * 1e3:.2f} ms "
                    f"({parse / gateway_p50:.0%})",
           measured=f"{max(clearing, 0) * 1e3:.2f} ms ({max(clearing, 0) / gateway_p50:.0%})",
           ratio=f"{max(clearing, 0) / parse:.2f}x the floor",
           clearing_ms=max(clearing, 0) * 1e3, floor_ms=parse * 1e3)  # fmt: skip
    if first["gateway"] and first["pass-through"]:
        g, p = statistics.median(first["gateway"]), statistics.median(first["pass-through"])
        print(f"time to first streamed byte: gateway {g * 1e3:.2f} ms, pass-through "
              f"{p * 1e3:.2f} ms (ratio {g / p:.2f})")  # fmt: skip


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
    record("memory held per conversation, 200 rounds", baseline=f"its history as JSON: "
           f"{size / 1e6:.2f} MB", measured=f"{held / 1e6:.2f} MB", ratio=f"{held / size:.2f}x",
           held_mb=held / 1e6)  # fmt: skip


def workers() -> None:
    """Time per request of parallel workers sharing a first message against distinct ones."""
    rounds = 40
    for count in (12, 100):
        results = {}
        for shared in (True, False):
            requests = [[orjson.dumps(worker_history(w, r, shared=shared, size=1500))
                         for w in range(count)] for r in range(1, rounds + 1)]  # fmt: skip
            cache = ConversationCache(ClearingPolicy())
            gc.collect()
            start = time.perf_counter()
            replayed = 0
            for round_bodies in requests:
                for raw in round_bodies:
                    replayed += cache.clear(orjson.loads(raw), "anthropic").replayed
            elapsed = (time.perf_counter() - start) / (count * rounds)
            results[shared] = (elapsed, replayed, len(cache))
        (s_time, s_replay, s_kept), (d_time, d_replay, d_kept) = results[True], results[False]
        print(f"{count} workers x {rounds} rounds, shared first message against distinct: "
              f"{s_time * 1e3:.3f} ms against {d_time * 1e3:.3f} ms a request "
              f"(x{s_time / d_time:.2f}); calls replayed {s_replay} against {d_replay}; "
              f"conversations kept {s_kept} against {d_kept}")  # fmt: skip


SOAK_CLIENTS, SOAK_ROUNDS, SOAK_STATE = 200, 50, 16 * 1024 * 1024


async def soak_client(
    client: httpx.AsyncClient, url: str, worker: int, fake: FakeUpstream
) -> dict[str, int]:
    """One client's 50 rounds; every fifth round also sends one fault."""
    seen = {"ok": 0, "error": 0, "dropped": 0, "fault": 0}
    for rounds in range(SOAK_ROUNDS):
        if len(fake.received) > 1000:  # the recorder's own memory is not the gateway's
            fake.received.clear()
        body = orjson.dumps({"model": "m", "max_tokens": 8, "tools": TOOLS,
                             "messages": worker_history(worker, rounds, shared=True, size=200)})  # fmt: skip
        try:
            answer = await client.post(url + "/v1/messages", content=body)
            seen["ok" if answer.status_code == 200 else "error"] += 1
        except httpx.TransportError:  # a keep-alive connection closed as it was reused
            seen["dropped"] += 1
        if rounds % 5 == 4:
            kind = (worker + rounds) % 4
            try:
                if kind == 0:  # abandoned: the client gives up after 50 ms
                    await client.get(url + "/fault/slow?seconds=5", timeout=0.05)
                elif kind == 1:
                    await client.get(url + "/fault/odd-header")
                elif kind == 2:
                    await client.get(url + "/fault/error")
                else:
                    await client.post(url + "/v1/messages", content=body,
                                      headers={"x-title": "café ☃".encode()})  # fmt: skip
            except httpx.TransportError:  # the abandoned request, or a dropped connection
                pass
            seen["fault"] += 1
    return seen


def soak() -> None:
    """200 clients x 50 rounds with faults mixed in; then one ordinary request, timed."""
    from slimtools.gateway._upstream import Upstream
    from slimtools.gateway.app import gateway_of

    fake = FakeUpstream(Script(rounds=0))
    app = create_app("http://placeholder", ClearingPolicy(), max_state_bytes=SOAK_STATE)
    state = gateway_of(app)
    with serve(create_upstream(fake)) as up:
        state.upstream = Upstream(up, state.limits)
        with serve(app) as gw:

            async def run() -> list[dict[str, int]]:
                limits = httpx.Limits(max_connections=SOAK_CLIENTS)
                async with httpx.AsyncClient(limits=limits, timeout=60) as client:
                    return await asyncio.gather(
                        *(soak_client(client, gw, w, fake) for w in range(SOAK_CLIENTS))
                    )

            gc.collect()
            start = time.perf_counter()
            seen = asyncio.run(run())
            elapsed = time.perf_counter() - start
            fake.received.clear()
            ordinary = orjson.dumps({"model": "m", "max_tokens": 8,
                                     "messages": worker_history(999, 3, shared=False, size=6000)})  # fmt: skip
            start = time.perf_counter()
            answer = httpx.post(gw + "/v1/messages", content=ordinary, timeout=10)
            after = time.perf_counter() - start
    ok, faults = sum(s["ok"] for s in seen), sum(s["fault"] for s in seen)
    errors, dropped = sum(s["error"] for s in seen), sum(s["dropped"] for s in seen)
    print(f"soak: {SOAK_CLIENTS} clients x {SOAK_ROUNDS} rounds ({ok:,} model requests "
          f"answered, {errors} with an error status, {dropped} dropped connections; "
          f"{faults:,} faults mixed in) in {elapsed:.1f} s; then an ordinary request "
          f"answered {answer.status_code} in {after * 1e3:.1f} ms (goal: within 1 s); state "
          f"held {state.cache.size / 2**20:.1f} MiB in {len(state.cache)} conversations "
          f"against a bound of {SOAK_STATE / 2**20:.0f} MiB; upstream cancelled "
          f"{fake.cancelled} abandoned requests")  # fmt: skip
    record(f"soak, {SOAK_CLIENTS} clients x {SOAK_ROUNDS} rounds, {faults:,} faults mixed in: "
           "an ordinary request afterwards (goal: within 1 s)",
           baseline=f"{ok:,} answered, {errors} error statuses, {dropped} dropped",
           measured=f"{after * 1e3:.0f} ms, state {state.cache.size / 2**20:.1f} MiB",
           ratio=f"{state.cache.size / SOAK_STATE:.0%} of the byte bound",
           after_ms=after * 1e3, state_mib=state.cache.size / 2**20)  # fmt: skip


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
            gw = measure_steps(t.messages, lambda h, f=t.format, c=cache:
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
    workers()
    soak()
    transcripts()


if __name__ == "__main__":
    main()
