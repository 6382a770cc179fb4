"""Pausing the cyclic garbage collector around a pass that makes no reference cycles.

A long clearing pass allocates tens of thousands of containers (result records, copied
messages) that all survive it, so the collector fired over and over within one pass (at
10,000 turns 105 young and 9 middle-generation collections), each costing more the longer
the history. The pass creates no cycles (its records are tuples and the copied messages
plain models), so reference counting frees whatever it drops and nothing collectable waits
for the collector; what is left is one young collection of what the pass made, at the
caller's next allocation. The pause ends with the pass (Mercurial's ``util.nogc`` pattern,
and ``timeit``'s).

The collector is a process-wide switch: one left off by the caller stays off, and one
turned off by another thread while a pass runs is turned back on when the pass ends.
"""

from __future__ import annotations

import gc
from types import TracebackType

__all__ = ["paused_collector"]


class paused_collector:  # noqa: N801 - a context manager, named like contextlib's
    """``with paused_collector():`` runs its body with the cyclic collector off, then
    turns it back on if it was on before (also when the body raises).

    ``paused_collector(when=False)`` leaves the collector alone: a short pass (a call per
    round reading two messages) allocates too little for the collector to fire twice, and
    switching it off and on costs more there than it saves."""

    __slots__ = ("_was_on", "_when")

    def __init__(self, when: bool = True) -> None:
        self._when = when

    def __enter__(self) -> None:
        self._was_on = self._when and gc.isenabled()
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
