"""The clearable results of a run, kept so that the cache-aware cut is found in ``O(log n)``.

The rule (the clearing guide, "Clearing and prompt caching"): among the cuts (clear every
candidate from index ``j`` on, candidates sorted by where they first change the history),
take the one with the largest net saving ``V_j = read * L * K_j - rewrite * (S_j - Kc_j)``
(``L`` the calls that will read the cleared history, ``K_j`` the tokens the cut saves,
``Kc_j`` those within the cached prefix, ``S_j`` the cached tokens after its first change).
Run before every model call over every candidate, that is quadratic in a long run whose
results rarely pay (they pile up as candidates). Here the same choice is incremental.

For a cached candidate ``j``, ``K_j = total - P_j`` and ``Kc_j = cached_total - P_j`` (``P_j``
the savings of the candidates before it) and ``S_j = cached_tokens - A_j`` (``A_j`` the
tokens before its position), so ``V_j`` is a constant plus
``g(j) = rewrite * A_j - (read * L + rewrite) * P_j``, which depends only on ``j`` and the
candidates before it. A running argmax of ``g`` over each prefix then answers the question
for any prefix (the cuts that save at least ``clear_at_least`` form one) by a lookup; new
candidates usually arrive at the end (newer results), so the running argmax only grows.
Candidates after the cached prefix (``position >= cache_end``) rewrite nothing: the best cut
among them is the first. ``A_j`` never changes while ``j`` waits: clears are suffixes, so
nothing before a waiting candidate is cleared.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any

from slimtools.clearing.pricing import CachePricing


class Candidates:
    """Clearable results sorted by first changed position, with the prefix sums of the rule."""

    __slots__ = ("_best", "_key", "before", "items", "positions", "prefix", "savings", "total")

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.positions: list[int] = []
        self.savings: list[int] = []
        self.prefix: list[int] = []  # savings of the candidates before each one
        self.before: list[int] = []  # tokens of the history before each one's position
        self.total = 0
        self._best: list[int] = []  # running argmax of g over each prefix, for _key
        self._key: tuple[float, float] | None = None

    def __len__(self) -> int:
        return len(self.items)

    def add(self, item: Any, position: int, saving: int, before: int) -> None:
        """File a candidate that first changes the history at ``position``."""
        i = bisect_right(self.positions, position)
        if i == len(self.items):
            self.items.append(item)
            self.positions.append(position)
            self.savings.append(saving)
            self.before.append(before)
            self.prefix.append(self.total)
            self.total += saving
            return
        self.items.insert(i, item)
        self.positions.insert(i, position)
        self.savings.insert(i, saving)
        self.before.insert(i, before)
        self.prefix.insert(i, 0)
        self._resum(i)

    def extend(
        self, items: list[Any], positions: list[int], savings: list[int], before: list[int]
    ) -> None:
        """:meth:`add` each candidate of the four columns, sorted by position: in one go when
        they come after every candidate filed (a one-pass clear's whole batch, and nearly
        every call of a per-round clearer). Columns, not a tuple per candidate: a
        10,000-result pass would allocate 10,000 tuples for nothing."""
        if not items:
            return
        if self.positions and positions[0] < self.positions[-1]:
            for candidate in zip(items, positions, savings, before, strict=True):
                self.add(*candidate)
            return
        running = self.total
        prefix = self.prefix
        for saving in savings:
            prefix.append(running)
            running += saving
        self.total = running
        self.items += items
        self.positions += positions
        self.savings += savings
        self.before += before

    def _resum(self, i: int) -> None:
        """Recompute the prefix sums from index ``i`` on, after a change there."""
        running = self.prefix[i - 1] + self.savings[i - 1] if i else 0
        for j in range(i, len(self.items)):
            self.prefix[j] = running
            running += self.savings[j]
        self.total = running
        del self._best[i:]

    def take(self, cut: int) -> list[Any]:
        """Remove and return the candidates from index ``cut`` on."""
        taken = self.items[cut:]
        self.total = self.prefix[cut] if cut < len(self.items) else self.total
        for column in (self.items, self.positions, self.savings, self.before, self.prefix):
            del column[cut:]
        del self._best[cut:]
        return taken

    def choose(
        self,
        cache_end: int,
        cached_tokens: int,
        calls: int,
        pricing: CachePricing,
        *,
        at_least: int = 0,
        need: int = 0,
    ) -> int | None:
        """The cut the rule picks: a test holds it to ``plan_clear``, the rule stated directly."""
        n = len(self.items)
        if not n:
            return None
        read, rewrite = pricing.read, pricing.rewrite
        slope = read * calls + rewrite
        cached = bisect_left(self.positions, cache_end)  # candidates [0, cached) are cached
        floor = need if need else at_least
        limit = self.total - floor  # a cut j must keep prefix[j] <= limit
        cut: int | None = None
        value = 0.0
        feasible = False
        last = bisect_right(self.prefix, limit, 0, cached) - 1
        if last >= 0:
            j = self._argmax(last, slope, rewrite)
            cached_total = self.prefix[cached] if cached < n else self.total
            value = read * calls * (self.total - self.prefix[j]) - rewrite * (
                cached_tokens - self.before[j] - (cached_total - self.prefix[j])
            )
            cut, feasible = j, True
        if cached < n and self.prefix[cached] <= limit:
            fresh = read * calls * (self.total - self.prefix[cached])
            if not feasible or fresh >= value:
                cut, value, feasible = cached, fresh, True
        if need:
            return cut if feasible else 0
        return cut if feasible and value > 0 else None

    def _argmax(self, last: int, slope: float, rewrite: float) -> int:
        """The index in ``[0, last]`` with the largest ``g`` (ties: the later one)."""
        if self._key != (slope, rewrite):
            self._key = (slope, rewrite)
            self._best.clear()
        best, before, prefix = self._best, self.before, self.prefix
        start = len(best)
        if start <= last:
            if not start:
                best.append(0)
                start = 1
            b = best[-1]
            g_b = rewrite * before[b] - slope * prefix[b]
            for j in range(start, last + 1):
                g_j = rewrite * before[j] - slope * prefix[j]
                if g_j >= g_b:
                    b, g_b = j, g_j
                best.append(b)
        return best[last]
