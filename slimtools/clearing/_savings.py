"""Tokens saved by clearing, by message position: prefix sums for the cache-aware decision.

The decision needs, for a message position ``p``, how many tokens the current (already
cleared) history holds before ``p``: the original count up to ``p`` minus what clearing saved
there. Clears land anywhere (a write confirmation of turn 5 may go after search results of
turn 20), so the savings live in a Fenwick tree: both an update and a prefix sum cost
``O(log n)``, and nothing is paid per ingested message (the tree grows by doubling, rebuilt
from the recorded savings, only when a clear lands past its capacity).
"""

from __future__ import annotations


class SavingsIndex:
    """Tokens saved at each message position, with ``O(log n)`` prefix sums."""

    __slots__ = ("_at", "_tree", "total")

    def __init__(self) -> None:
        self._tree: list[int] = []
        self._at: dict[int, int] = {}
        self.total = 0

    def __bool__(self) -> bool:
        return self.total != 0

    def add(self, position: int, saved: int) -> None:
        """Record ``saved`` more tokens saved in the message at ``position``."""
        self._at[position] = self._at.get(position, 0) + saved
        self.total += saved
        if position >= len(self._tree):
            self._rebuild(max(64, 2 * (position + 1)))
            return
        tree, i, n = self._tree, position, len(self._tree)
        while i < n:
            tree[i] += saved
            i |= i + 1

    def before(self, position: int) -> int:
        """Tokens saved in the messages before ``position``."""
        tree = self._tree
        i = min(position, len(tree)) - 1
        total = 0
        while i >= 0:
            total += tree[i]
            i = (i & (i + 1)) - 1
        return total

    def _rebuild(self, size: int) -> None:
        tree = [0] * size
        for position, saved in self._at.items():
            tree[position] += saved
        for i in range(size):  # the linear-time Fenwick construction
            parent = i | (i + 1)
            if parent < size:
                tree[parent] += tree[i]
        self._tree = tree
