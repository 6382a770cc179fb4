"""Small timing helpers shared by the benchmarks (best of several repeats)."""

from __future__ import annotations

import time
from collections.abc import Callable
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
