"""Helpers the SQLite and Redis store tests share: many writers at once, a toolkit on a store.

Every record the writers store names its own key (``{"key": key}``), so a record that lands
under another key, or comes back for the wrong one, is caught by comparing the two.
Processes are spawned (not forked) so that each opens its store from scratch, as separate
workers of an application do.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from typing import Any

from slimtools import Toolkit, paginate, summarize_with_handle
from slimtools.typing import HandleStore, Scope

SPAWN = multiprocessing.get_context("spawn")


def written_keys(kind: str, workers: int, batches: int, size: int) -> list[str]:
    """Every key ``workers`` writers of one kind ("t" threads, "p" processes) write."""
    return [
        f"{kind}{w}:{n}:{j}" for w in range(workers) for n in range(batches) for j in range(size)
    ]


def write_and_read_back(
    store: HandleStore, scope: Scope, writer: str, neighbour: str, batches: int, size: int
) -> list[str]:
    """Write ``batches`` batches, reading each back with one of a neighbour's keys.

    Returns:
        The keys that came back missing or holding another key's record.
    """
    problems: list[str] = []
    for n in range(batches):
        batch = {key: {"key": key} for key in (f"{writer}:{n}:{j}" for j in range(size))}
        store.put_many(scope, batch)
        got = store.get_many(scope, [*batch, f"{neighbour}:{n}:0"])
        problems.extend(k for k in batch if got.get(k) != {"key": k})
        problems.extend(k for k, v in got.items() if v != {"key": k})
    return problems


def run_threads(store: HandleStore, scope: Scope, *, batches: int, size: int) -> list[str]:
    """Eight threads write and read ``store`` at once; the problems any of them saw."""
    problems: list[str] = []

    def work(t: int) -> None:
        problems.extend(
            write_and_read_back(store, scope, f"t{t}", f"t{(t + 1) % 8}", batches, size)
        )

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return problems


def _process(
    open_store: Callable[[], HandleStore], scope: Scope, w: int, batches: int, size: int
) -> list[str]:
    store = open_store()
    try:
        return write_and_read_back(store, scope, f"p{w}", f"p{(w + 1) % 4}", batches, size)
    finally:
        store.close()


def run_processes(
    open_store: Callable[[], HandleStore], scope: Scope, *, batches: int, size: int
) -> list[str]:
    """Four spawned processes, each with a store from ``open_store`` (picklable): problems."""
    with SPAWN.Pool(4) as pool:
        results = pool.starmap(_process, [(open_store, scope, w, batches, size) for w in range(4)])
    return [key for problems in results for key in problems]


def misplaced(store: HandleStore, scope: Scope, keys: list[str]) -> list[str]:
    """The keys that read back missing or holding another key's record."""
    got = store.get_many(scope, keys)
    return [key for key in keys if got.get(key) != {"key": key}]


def logs_toolkit(store: HandleStore | str) -> Toolkit:
    """A "logs" toolkit on ``store``: search_logs answers 12 rows, 3 a page, ``id`` handles.

    Each row carries a ``"tenant":"t-9"`` that only the full record (get_record) shows.
    """
    kit = Toolkit("logs", store=store)

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=3)
    def search_logs(query: str) -> list[dict[str, Any]]:
        """Search the logs."""
        return [{"id": i, "message": f"{query} #{i}", "tenant": "t-9"} for i in range(12)]

    return kit
