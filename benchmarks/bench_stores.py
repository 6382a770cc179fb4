"""What durable handle stores cost a tool call, against the memory store.

1. The page-1 snapshot of a 10,000-row result (10 fields a row) is one value: the cost of
   writing and reading it in each store, and of the whole decorated tool call (page 1
   writes the snapshot and 20 records; page 2 reads the snapshot) per store.
2. Per tool call with a 100-brief envelope: ``put_many`` of 100 records and ``get_many`` of
   100 keys, latency (median, p95) and throughput, for memory, SQLite and Redis in one run;
   ratios against memory, and against a naive baseline that writes (and reads) one record
   per transaction or round trip.

3. The SQLite file's size while 50 calls each keep a 0.5 MB page-1 snapshot, while the calls
   go on an hour later (the first ones expired), and once all have expired; against a file
   made without auto-vacuum (as one created before the store set it), in the same run.
4. A hung Redis (``SIGSTOP``: connections accepted, nothing answered): what page 1, page 2
   and ``get_record`` cost a tool whose store was built from a Redis URL (0.5 s timeout, one
   retry), against page 1 with Redis answering.

Redis rows need ``redis-server`` on the PATH (started here on a free loopback port).
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from benchmarks._data import ROWS, log_row
from benchmarks.results import record
from slimtools import Toolkit, paginate, project_fields, summarize_with_handle
from slimtools._json import dumps
from slimtools.stores import SQLiteStore
from slimtools.stores.memory import MemoryStore
from slimtools.typing import HandleStore, Scope
from tests.stores.redis_fixtures import RedisServer, launch

SCOPE = Scope("bench")


def _timings(fn: Callable[[int], Any], calls: int, warmup: int = 3) -> list[float]:
    """Seconds of each of ``calls`` calls of ``fn(i)``, after a few warm-up calls."""
    for i in range(warmup):
        fn(-1 - i)
    out = []
    for i in range(calls):
        start = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - start)
    return out


def _p95(samples: list[float]) -> float:
    return sorted(samples)[int(len(samples) * 0.95) - 1]


@contextmanager
def _stores() -> Iterator[dict[str, Callable[[], HandleStore]]]:
    """Factories for a fresh store of each kind; Redis only where redis-server exists."""
    with tempfile.TemporaryDirectory(prefix="slimtools-bench-") as tmp:
        server = launch(Path(tmp))
        counter = iter(range(1_000_000))
        factories: dict[str, Callable[[], HandleStore]] = {
            "memory": lambda: MemoryStore(max_items=1_000_000, ttl=None),
            "sqlite": lambda: SQLiteStore(Path(tmp) / f"h{next(counter)}.db"),
        }
        if server is not None:
            from slimtools.stores import RedisStore

            factories["redis"] = lambda: RedisStore(server.url, prefix=f"b{next(counter)}")
        else:
            print("   (redis-server not found: Redis rows skipped; apt-get install redis-server)")
        try:
            yield factories
        finally:
            if server is not None:
                server.stop()


def _snapshot_costs(store: HandleStore, calls: int = 15) -> tuple[float, float]:
    """Median seconds to put, then to get, the 10,000-row snapshot as one value."""
    put = _timings(lambda i: store.put_many(SCOPE, {f"s:{i}": ROWS}), calls)
    get = _timings(lambda i: store.get_many(SCOPE, [f"s:{i % calls}"]), calls)
    return statistics.median(put), statistics.median(get)


def bench_snapshot(factories: dict[str, Callable[[], HandleStore]]) -> None:
    blob = dumps(ROWS)
    print(
        f"1. page-1 snapshot of 10,000 rows x 10 fields: one value, {len(blob) / 1e6:.1f} MB JSON"
    )
    parse = statistics.median(_timings(lambda i: orjson.loads(blob), 9))
    print(
        f"   for scale: parsing this result once from JSON (as an API client would) {parse * 1e3:.1f} ms"
    )
    print(f"   {'store':8} {'put ms':>8} {'get ms':>8} {'put/mem':>8} {'get/mem':>8}")
    base: dict[str, float] = {}
    for name, make in factories.items():
        store = make()
        put, get = _snapshot_costs(store)
        base = base or {"put": put, "get": get}
        print(
            f"   {name:8} {put * 1e3:8.2f} {get * 1e3:8.2f} "
            f"{put / base['put']:7.0f}x {get / base['get']:7.0f}x"
        )
        store.close()
    print("   the whole decorated call (project 4 fields, page of 20, handles by id)")
    print(f"   {'store':8} {'page 1 ms':>10} {'page 2 ms':>10} {'p1/mem':>7} {'p2/mem':>7}")
    calls: dict[str, float] = {}
    for name, make in factories.items():
        kit = Toolkit(f"bench-{name}", store=make())

        @kit.tool
        @summarize_with_handle(key="id")
        @paginate(limit=20)
        @project_fields(["id", "time", "level", "message"])
        def search_logs(query: str) -> list[dict[str, Any]]:
            """Search the logs."""
            return ROWS

        page1 = statistics.median(_timings(lambda i: search_logs(f"q{i}"), 15))
        page2 = statistics.median(_timings(lambda i: search_logs(f"q{i % 15}", page=2), 15))
        calls = calls or {"p1": page1, "p2": page2}
        print(
            f"   {name:8} {page1 * 1e3:10.2f} {page2 * 1e3:10.2f} "
            f"{page1 / calls['p1']:6.1f}x {page2 / calls['p2']:6.1f}x"
        )
        kit.store.close()


def _envelope(i: int) -> dict[str, Any]:
    return {f"r:search_logs:{i}:{j}": log_row(j) for j in range(100)}


def _measure(store: HandleStore, calls: int, *, naive: bool) -> tuple[list[float], list[float]]:
    """Per-call put and get timings of 100-record batches (naive: one record at a time)."""
    batches = {i: _envelope(i) for i in range(-3, calls)}

    def put(i: int) -> None:
        if naive:
            for key, value in batches[i].items():
                store.put_many(SCOPE, {key: value})
        else:
            store.put_many(SCOPE, batches[i])

    def get(i: int) -> None:
        keys = list(batches[i])
        if naive:
            for key in keys:
                store.get_many(SCOPE, [key])
        else:
            assert len(store.get_many(SCOPE, keys)) == 100

    return _timings(put, calls), _timings(get, calls)


def bench_envelope(factories: dict[str, Callable[[], HandleStore]]) -> None:
    print("2. per tool call with a 100-brief envelope: put_many 100 records, get_many 100 keys")
    head = f"   {'store':15} {'put p50':>9} {'p95':>8} {'puts/s':>7} {'get p50':>9} {'p95':>8}"
    print(head + f" {'gets/s':>7} {'put/mem':>8} {'get/mem':>8}  vs naive")
    rows: dict[str, tuple[list[float], list[float]]] = {}
    for name, make in factories.items():
        store = make()
        rows[name] = _measure(store, 300 if name == "memory" else 200, naive=False)
        store.close()
        if name != "memory":
            store = make()
            rows[f"{name} naive"] = _measure(store, 20, naive=True)
            store.close()
    mem_put, mem_get = (statistics.median(t) for t in rows["memory"])
    for name, (puts, gets) in rows.items():
        put, get = statistics.median(puts), statistics.median(gets)
        versus = ""
        if f"{name} naive" in rows:
            naive_put, naive_get = (statistics.median(t) for t in rows[f"{name} naive"])
            versus = f"  put {naive_put / put:.0f}x, get {naive_get / get:.0f}x faster"
        print(
            f"   {name:15} {put * 1e6:7.0f}us {_p95(puts) * 1e6:6.0f}us {1 / statistics.mean(puts):7.0f}"
            f" {get * 1e6:7.0f}us {_p95(gets) * 1e6:6.0f}us {1 / statistics.mean(gets):7.0f}"
            f" {put / mem_put:7.1f}x {get / mem_get:7.1f}x{versus}"
        )
        if name != "memory" and "naive" not in name:
            record(
                f"handle store, 100-record tool call put / get: {name}",
                baseline=f"memory: {mem_put * 1e6:.0f} / {mem_get * 1e6:.0f} µs",
                measured=f"{put * 1e6:.0f} / {get * 1e6:.0f} µs",
                ratio=f"{put / mem_put:.1f}x / {get / mem_get:.1f}x memory; {versus.strip()} "
                "than a record at a time",
                put_s=put,
                get_s=get,
            )


def _on_disk_mb(path: Path) -> float:
    """Megabytes of the database file and its write-ahead log."""
    files = (path, path.with_name(path.name + "-wal"))
    return sum(f.stat().st_size for f in files if f.exists()) / 1e6


def _space(path: Path, snapshot: list[dict[str, Any]]) -> tuple[float, float, float]:
    """File sizes: after 50 snapshot-keeping calls, 50 more an hour on, and once all expired."""
    now = [1_000_000.0]
    store = SQLiteStore(path, clock=lambda: now[0])
    sizes = []
    for hour in range(2):
        for i in range(50):
            store.put_many(SCOPE, {f"s:{hour}:{i}": snapshot})
        sizes.append(_on_disk_mb(path))
        now[0] += store.ttl + 1 if store.ttl is not None else 0
    store.put_many(SCOPE, {"after": 1})  # the first write after expiry removes the rest
    sizes.append(_on_disk_mb(path))
    store.close()
    return sizes[0], sizes[1], sizes[2]


def bench_sqlite_space(tmp: Path) -> None:
    one = len(dumps(log_row(0)))
    snapshot = [log_row(j) for j in range(500_000 // one)]
    mb = len(dumps(snapshot)) / 1e6
    print(f"3. SQLite file size: 50 calls keeping a {mb:.1f} MB page-1 snapshot each")
    old = tmp / "no-auto-vacuum.db"
    with sqlite3.connect(old) as conn:  # a file created before the store set auto-vacuum
        conn.execute("PRAGMA auto_vacuum = NONE")
        conn.execute("CREATE TABLE made_before (x)")
    conn.close()
    base = _space(old, snapshot)
    measured = _space(tmp / "space.db", snapshot)
    for name, (full, later, expired) in (("no auto-vacuum", base), ("sqlite", measured)):
        print(f"   {name:15} {full:6.1f} MB, an hour on {later:6.1f} MB, expired {expired:6.2f} MB")
    record(
        f"SQLite store file, 50 calls keeping a {mb:.1f} MB snapshot each",
        baseline=f"without auto-vacuum: {base[0]:.0f} / {base[1]:.0f} / {base[2]:.0f} MB",
        measured=f"{measured[0]:.0f} / {measured[1]:.0f} / {measured[2]:.2f} MB "
        "(written / an hour on / expired)",
        ratio=f"{measured[2] / measured[0]:.1%} of its written size once expired "
        f"(without auto-vacuum: {base[2] / base[0]:.0%})",
        snapshot_mb=mb,
        full_mb=measured[0],
        later_mb=measured[1],
        expired_mb=measured[2],
        base_full_mb=base[0],
        base_later_mb=base[1],
        base_expired_mb=base[2],
    )


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_hung_redis(server: RedisServer) -> None:
    print("4. a hung Redis (SIGSTOP), store built from its URL: one call's cost")
    kit = Toolkit("bench-hung", store=server.url)

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=20)
    @project_fields(["id", "time", "level", "message"])
    def search_logs(query: str) -> list[dict[str, Any]]:
        """Search the logs."""
        return ROWS[:100]

    answering = statistics.median(
        _timed(lambda i=i: kit.call("search_logs", {"query": f"warm{i}"})) for i in range(5)
    )
    handle = json.loads(kit.call("search_logs", {"query": "q"}).text)["briefs"][0]["id"]
    server.pause()
    try:
        page1 = _timed(lambda: kit.call("search_logs", {"query": "new"}))
        page2 = _timed(lambda: kit.call("search_logs", {"query": "q", "page": 2}))
        lookup = _timed(lambda: kit.call("get_record", {"handle": handle}))
    finally:
        server.resume()
    print(f"   answering: page 1 {answering * 1e3:.1f} ms")
    print(f"   hung: page 1 {page1:.2f} s, page 2 {page2:.2f} s, get_record {lookup:.2f} s")
    record(
        "Redis store hung (SIGSTOP): page 1 / page 2 / get_record",
        baseline=f"Redis answering: page 1 {answering * 1e3:.1f} ms",
        measured=f"{page1:.1f} / {page2:.1f} / {lookup:.1f} s",
        ratio="each call degrades after one 0.5 s timeout and one retry",
        page1_s=page1,
        page2_s=page2,
        get_record_s=lookup,
    )
    kit.store.close()


def main() -> None:
    with _stores() as factories:
        bench_snapshot(factories)
        bench_envelope(factories)
    with tempfile.TemporaryDirectory(prefix="slimtools-bench-") as tmp:
        bench_sqlite_space(Path(tmp))
        server = launch(Path(tmp))
        if server is not None:
            try:
                bench_hung_redis(server)
            finally:
                server.stop()


if __name__ == "__main__":
    main()
