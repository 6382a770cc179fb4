"""Small timing helpers shared by the benchmarks (best of several repeats)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def best_seconds(fn: Callable[[], Any], *, repeat: int = 5, min_time: float = 0.2) -> float:
    """Seconds per call of ``fn``: the best of ``repeat`` runs of enough calls to last ``min_time``."""
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - start >= min_time / 4 or n >= 1 << 20:
            break
        n *= 2
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - start) / n)
    return best


def cpu_seconds(
    fns: Mapping[str, Callable[[], Any]], *, rounds: int = 15, min_time: float = 0.04
) -> dict[str, float]:
    """CPU seconds per call of each of ``fns``, all measured in the same run.

    Each round times every function once, in turn, so that load from other processes on a
    shared machine falls on all of them alike; a function's best round counts. Time is CPU
    time (``time.process_time``: waiting for a core is not counted) and ``gc.collect()``
    runs before each timed run, so one function's garbage is not collected in another's.
    """
    counts = {}
    for name, fn in fns.items():
        n = 1
        while True:
            gc.collect()
            start = time.process_time()
            for _ in range(n):
                fn()
            if time.process_time() - start >= min_time or n >= 1 << 20:
                break
            n *= 2
        counts[name] = n
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            n = counts[name]
            gc.collect()
            start = time.process_time()
            for _ in range(n):
                fn()
            best[name] = min(best[name], (time.process_time() - start) / n)
    return best


PEAK_MB = """
def peak_mb():
    # VmHWM belongs to this process's memory map, which exec replaced: ru_maxrss on Linux
    # also carries the parent's peak across fork and exec, so a child started by a large
    # benchmark process would report that process's peak as its own.
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
"""
"""Source of ``peak_mb()`` for the child scripts that measure peak RSS."""
