"""Tokens saved by clearing, by message position: prefix sums for the cache-aware decision.

The decision needs, for a message position ``p``, how many tokens the current (already
cleared) history holds before ``p``: the original count up to ``p`` minus what clearing saved
there. Clears land anywhere (a write confirmation of turn 5 may go after search results of
turn 20), so the savings live in a Fenwick tree: once built, an update and a prefix sum cost
``O(log n)``. It is built lazily, on the first prefix sum asked for: a one-pass clear asks
none after it writes, and pays nothing here.
"""

from __future__ import annotations


class SavingsIndex:
    """Tokens saved at each message position, with ``O(log n)`` prefix sums."""

    __slots__ = ("_at", "_tree", "total")

    def __init__(self) -> None:
        self._tree: list[int] | None = None
        self._at: dict[int, int] = {}
        self.total = 0

    def __bool__(self) -> bool:
        return self.total != 0

    def add(self, position: int, saved: int) -> None:
        """Record ``saved`` more tokens saved in the message at ``position``."""
        at = self._at
        at[position] = at.get(position, 0) + saved
        self.total += saved
        tree = self._tree
        if tree is None:
            return
        n = len(tree)
        if position >= n:
            self._tree = None  # rebuilt, larger, on the next prefix sum
            return
        i = position
        while i < n:
            tree[i] += saved
            i |= i + 1

    def add_many(self, pairs: list[tuple[int, int]]) -> None:
        """:meth:`add` each ``(position, saved)``; before the first prefix sum, in one go."""
        if self._tree is not None:
            for position, saved in pairs:
                self.add(position, saved)
            return
        at = self._at
        for position, saved in pairs:
            at[position] = at.get(position, 0) + saved
        self.total += sum(saved for _, saved in pairs)

    def before(self, position: int) -> int:
        """Tokens saved in the messages before ``position``."""
        tree = self._tree
        if tree is None or position > len(tree):
            tree = self._build(max(position, *self._at) + 1 if self._at else position)
        i = position - 1
        total = 0
        while i >= 0:
            total += tree[i]
            i = (i & (i + 1)) - 1
        return total

    def _build(self, needed: int) -> list[int]:
        size = 64
        while size < needed:
            size *= 2
        tree = [0] * size
        for position, saved in self._at.items():
            tree[position] += saved
        for i in range(size):  # the linear-time Fenwick construction
            parent = i | (i + 1)
            if parent < size:
                tree[parent] += tree[i]
        self._tree = tree
        return tree
