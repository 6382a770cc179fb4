"""Pausing the cyclic garbage collector around a pass that makes no reference cycles.

A long clearing pass allocates tens of thousands of containers (result records, copied
messages) that all survive it, so the collector's generational thresholds fire over and
over, and each older-generation collection walks the whole heap: the caller's history and
everything else the process holds. The time per message then grows with the history, and
in a real agent process (far larger than the history) the more so. The pass creates no
cycles (its records are tuples and the copied messages plain models), so reference
counting frees whatever it drops, and nothing collectable waits for the collector; the
pause ends with the pass (Mercurial's ``util.nogc`` pattern, and ``timeit``'s).

The collector is a process-wide switch: one left off by the caller stays off, and one
turned off by another thread while a pass runs is turned back on when the pass ends.
"""

from __future__ import annotations

import gc
from types import TracebackType

__all__ = ["paused_collector"]


class paused_collector:  # noqa: N801 - a context manager, named like contextlib's
    """``with paused_collector():`` runs its body with the cyclic collector off, then
    turns it back on if it was on before (also when the body raises)."""

    __slots__ = ("_was_on",)

    def __enter__(self) -> None:
        self._was_on = gc.isenabled()
        if self._was_on:
            gc.disable()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._was_on:
            gc.enable()
