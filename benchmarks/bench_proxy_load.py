"""Issue 19.11: ``slimtools proxy --http`` under load, over loopback.

100 concurrent ``mcp.Client`` s make 100 calls each, first straight to an HTTP upstream
(``benchmarks/_echo_upstream.py``), then through a proxy in front of the same upstream
(``--upstream-url``; ``[tools.records]`` configured, so every answer is slimmed into an
envelope of sealed handles). Checked: no call lost, no answer crossed to another client
(every record names its client and call). Reported: p50 and p99 latency of each, and what
the proxy adds. Bounded: each phase stops after ``LIMIT`` seconds and says so.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from tests._ports import serving, slimtools

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = int(os.environ.get("BENCH_LOAD_CLIENTS", "100"))
CALLS = int(os.environ.get("BENCH_LOAD_CALLS", "100"))
LIMIT = 90.0
FAILURES: list[str] = []
CONFIG = """
[tools.records]
fields = ["id", "client", "call"]
key = "id"
limit = 5
"""


def _check(client: int, call: int, result: Any) -> bool:
    """True when every record of the answer names this client and call."""
    if result.is_error:
        return False
    body = json.loads(result.content[0].text)
    items = body["briefs"] if isinstance(body, dict) else body
    return bool(items) and all(r["client"] == client and r["call"] == call for r in items)


async def _phase(url: str) -> tuple[list[float], int, int, bool]:
    """Latencies, calls answered right, calls wrong or lost, and whether time ran out."""
    latencies: list[float] = []
    wrong = 0
    deadline = time.monotonic() + LIMIT
    cut = False

    async def one(client: int) -> None:
        nonlocal wrong, cut
        async with Client(url) as session:
            for call in range(CALLS):
                if time.monotonic() > deadline:
                    cut = True
                    return
                start = time.perf_counter()
                try:
                    result = await session.call_tool("records", {"client": client, "call": call})
                    ok = _check(client, call, result)
                    if not ok:
                        FAILURES.append(result.content[0].text[:300])
                except Exception as exc:
                    FAILURES.append(f"{type(exc).__name__}: {exc}"[:300])
                    ok = False
                latencies.append(time.perf_counter() - start)
                wrong += not ok

    gc.collect()
    async with anyio.create_task_group() as group:
        for client in range(CLIENTS):
            group.start_soon(one, client)
    return latencies, len(latencies) - wrong, wrong, cut


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _url(port: int) -> str:
    return f"http://127.0.0.1:{port}/mcp"


def main() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def upstream(port: int) -> list[str]:
        return [sys.executable, "-m", "benchmarks._echo_upstream", f"127.0.0.1:{port}"]

    with tempfile.TemporaryDirectory() as tmp, serving(upstream, env=env) as upstream_port:
        direct_url = _url(upstream_port)
        config = Path(tmp) / "slim.toml"
        config.write_text(CONFIG)

        def proxy(port: int) -> list[str]:
            return slimtools(
                "proxy", "--config", str(config), "--http", f"127.0.0.1:{port}",
                "--upstream-url", direct_url,
            )  # fmt: skip

        with serving(proxy, env=env) as proxy_port:
            proxy_url = _url(proxy_port)
            print(f"{CLIENTS} clients x {CALLS} calls each, loopback HTTP, at most {LIMIT:.0f} s")
            results = {}
            for name, url in (("direct", direct_url), ("proxy", proxy_url)):
                start = time.perf_counter()
                latencies, right, wrong, cut = anyio.run(_phase, url)
                took = time.perf_counter() - start
                results[name] = latencies
                lost = CLIENTS * CALLS - right - wrong
                print(
                    f"   {name:7} {right:6,} right, {wrong} wrong or crossed, {lost:,} not made"
                    f"{' (time limit)' if cut else ''}; {len(latencies) / took:6.0f} calls/s; "
                    f"p50 {_pct(latencies, 0.5) * 1e3:6.1f} ms, "
                    f"p99 {_pct(latencies, 0.99) * 1e3:6.1f} ms"
                )
    for reason in sorted(set(FAILURES))[:3]:
        print(f"   a failed call: {reason}")
    added50 = _pct(results["proxy"], 0.5) - _pct(results["direct"], 0.5)
    added99 = _pct(results["proxy"], 0.99) - _pct(results["direct"], 0.99)
    mean = statistics.mean(results["proxy"]) - statistics.mean(results["direct"])
    print(
        f"   added by the proxy: p50 {added50 * 1e3:+.1f} ms, p99 {added99 * 1e3:+.1f} ms, "
        f"mean {mean * 1e3:+.1f} ms (all on one 2-core machine: clients, proxy and upstream)"
    )


if __name__ == "__main__":
    main()
