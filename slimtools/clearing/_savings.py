"""Tokens saved by clearing, by message position: prefix sums for the cache-aware decision.

The decision needs, for a message position ``p``, how many tokens the current (already
cleared) history holds before ``p``: the original count up to ``p`` minus what clearing saved
there. Clears land anywhere (a write confirmation of turn 5 may go after search results of
turn 20), so the savings live in a Fenwick tree: a prefix sum costs ``O(log n)``. It is
built lazily, on the first prefix sum asked for (a one-pass clear asks none after it
writes, and pays nothing here), and savings recorded since wait in a dict until a prefix
sum needs them. Most never do: a prefix sum past every saving is the total, answered in
``O(1)``, and that is what a per-round clearer asks about its newest messages.

A long run clears about one result a turn, so the index is kept lean: once the tree is built
the savings by position are not kept beside it (the tree grows by doubling instead of being
rebuilt from them), and it holds machine integers, 8 bytes a position (a list of Python
integers when a token counter gives other numbers, so any counter still works).
"""

from __future__ import annotations

from array import array
from collections.abc import MutableSequence

_FITS = 1 << 40
"""A saving that fits the tree's machine integers whatever their sum: a tree of 2**20
positions of savings under 2**40 tokens each stays far below 2**63."""


class SavingsIndex:
    """Tokens saved at each message position, with ``O(log n)`` prefix sums."""

    __slots__ = ("_at", "_last", "_tree", "total")

    def __init__(self) -> None:
        self._tree: MutableSequence[int] | None = None
        self._at: dict[int, int] = {}  # savings by position, until the tree is built
        self.total = 0
        # The last position holding a saving: before any later one lies everything saved,
        # the common question of a per-round clearer (its newest messages), answered in O(1).
        self._last = -1

    def __bool__(self) -> bool:
        return self.total != 0

    def add_many(self, pairs: list[tuple[int, int]]) -> None:
        """Record ``saved`` more tokens saved at ``position``, for each pair."""
        if not pairs:
            return
        at, total = self._at, self.total
        for position, saved in pairs:
            at[position] = at.get(position, 0) + saved
            total += saved
        self.total = total
        self._last = max(self._last, max(pairs)[0])  # the pair of the last position

    def before(self, position: int) -> int:
        """Tokens saved in the messages before ``position``."""
        if position > self._last:
            return self.total
        tree = self._tree
        if tree is None:
            tree = self._build(max(position, *self._at) + 1 if self._at else position)
        elif self._at:
            tree = self._flush(tree)
        i = min(position, len(tree)) - 1  # every saving lies in the tree
        total = 0
        while i >= 0:
            total += tree[i]
            i = (i & (i + 1)) - 1
        return total

    def _build(self, needed: int) -> MutableSequence[int]:
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
        fits = all(type(s) is int and -_FITS < s < _FITS for s in self._at.values())
        self._at = {}
        built: MutableSequence[int] = array("q", tree) if fits else tree
        self._tree = built
        return built

    def _flush(self, tree: MutableSequence[int]) -> MutableSequence[int]:
        """Add the savings recorded since the tree was built into it."""
        in_tree = self.total - sum(self._at.values())
        for position, saved in self._at.items():
            while position >= len(tree):
                tree = self._grow(tree, in_tree)
            if type(tree) is array and not (type(saved) is int and -_FITS < saved < _FITS):
                tree = self._tree = list(tree)
            n = len(tree)
            i = position
            while i < n:
                tree[i] += saved
                i |= i + 1
            in_tree += saved
        self._at = {}
        return tree

    def _grow(self, tree: MutableSequence[int], total: int) -> MutableSequence[int]:
        # Node i covers positions (i & (i + 1)) to i whatever the size, so doubling keeps
        # every node; of the new ones only the last, which covers everything (``total``,
        # what the tree holds), is not empty.
        n = len(tree)
        tree.extend([0] * n)
        tree[2 * n - 1] = total
        return tree
