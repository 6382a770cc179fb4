"""The token bill of tool results: the closed-form model, and a ledger's rows and totals.

Two columns, as the README states the problem: tool-result tokens *resident* in the window
at each model call (caching does not help them), and input *billed* over the run (caching
makes the re-sent prefix cheap; clearing rewrites it, so breaks the cache from there on).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from slimtools.clearing.pricing import CachePricing


def tool_result_bill(rounds: int, per_result: int, *, every: int = 5) -> list[tuple[int, int, int]]:
    """Rows ``(round, resident, billed)`` for every ``every``-th round, no clearing, no cache.

    One ``per_result``-token result is added per round and never leaves: at round ``r``
    ``r * per_result`` tokens are resident, and the run has billed ``per_result * r(r+1)/2``
    input tokens for them (each round re-sends every earlier result)::

        >>> tool_result_bill(20, 5_000)[-1]
        (20, 100000, 1050000)

    Raises:
        ValueError: a negative count or a non-positive ``every``.
    """
    if rounds < 0 or per_result < 0 or every < 1:
        raise ValueError("rounds and per_result must be >= 0 and every >= 1")
    return [
        (r, r * per_result, per_result * r * (r + 1) // 2) for r in range(every, rounds + 1, every)
    ]


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One model call of a replayed run.

    Attributes:
        round: 1-based index of the model call.
        input_tokens: the whole prompt the model received.
        tool_tokens: tool-result tokens resident in that prompt (placeholders count as
            what they are, the text that replaced the original).
        cache_read: prompt tokens served from the cache (the unchanged prefix of the
            previous call's prompt).
        cache_write: prompt tokens written to the cache (everything after that prefix).
        cache_broken: True when a message the previous call had cached was rewritten, so
            the cache was read only up to it.
        cleared: tool results shown as cleared in this prompt.
    """

    round: int
    input_tokens: int
    tool_tokens: int
    cache_read: int
    cache_write: int
    cache_broken: bool
    cleared: int


@dataclass(frozen=True, slots=True)
class LedgerSummary:
    """Totals of a :class:`TokenLedger`.

    Attributes:
        rounds: model calls replayed.
        resident_end: tool-result tokens resident at the last call.
        resident_peak: the largest resident figure of any call.
        billed: input tokens billed without caching (sum of every prompt).
        cache_read: input tokens read from the cache over the run.
        cache_write: input tokens written to the cache over the run.
        billed_cached: the cached bill in plain-input-token equivalents,
            ``cache_read * pricing.read + cache_write * pricing.write``, rounded (equal to
            ``billed`` when the ledger models no caching).
        cache_breaks: calls whose cached prefix was broken by a rewrite.
    """

    rounds: int
    resident_end: int
    resident_peak: int
    billed: int
    cache_read: int
    cache_write: int
    billed_cached: int
    cache_breaks: int


def cached_cost(read: int, write: int, pricing: CachePricing | None) -> float:
    """Cache reads and writes in input-token equivalents (``pricing`` None: no caching,
    every token at the input price): the one cost rule of every ledger figure."""
    return float(read + write) if pricing is None else pricing.cost(read, write)


def summarize(
    tool_tokens: Sequence[int],
    input_tokens: Sequence[int],
    cache_read: Sequence[int],
    cache_write: Sequence[int],
    cache_broken: Sequence[int],
    *,
    pricing: CachePricing | None,
) -> LedgerSummary:
    """The :class:`LedgerSummary` of a ledger's columns, one value per model call each."""
    read, write = sum(cache_read), sum(cache_write)
    return LedgerSummary(
        rounds=len(input_tokens),
        resident_end=tool_tokens[-1] if tool_tokens else 0,
        resident_peak=max(tool_tokens, default=0),
        billed=sum(input_tokens),
        cache_read=read,
        cache_write=write,
        billed_cached=round(cached_cost(read, write, pricing)),
        cache_breaks=sum(cache_broken),
    )
