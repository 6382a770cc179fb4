"""A ledger's rows as columns of machine integers (one long run has tens of thousands)."""

from __future__ import annotations

from array import array

from slimtools.clearing.pricing import DEFAULT_PRICING, CachePricing, pricing_of
from slimtools.ledger._rows import LedgerRow, LedgerSummary, summarize


class LedgerColumns:
    """A ledger's rows as columns of machine integers: 48 bytes a model call, where
    :class:`~slimtools.ledger.LedgerRow` objects take about 230 (a long session has
    tens of thousands of calls per strategy).

    Attributes are ``array("q")`` columns, one value per model call, named as the
    :class:`~slimtools.ledger.LedgerRow` fields (``cache_broken`` holds 0 or 1).
    """

    __slots__ = (
        "cache_broken",
        "cache_read",
        "cache_write",
        "cleared",
        "input_tokens",
        "tool_tokens",
    )

    def __init__(self) -> None:
        self.input_tokens = array("q")
        self.tool_tokens = array("q")
        self.cache_read = array("q")
        self.cache_write = array("q")
        self.cache_broken = array("q")
        self.cleared = array("q")

    def __len__(self) -> int:
        return len(self.input_tokens)

    def append(
        self, input_tokens: int, tool_tokens: int, read: int, broken: bool, cleared: int
    ) -> None:
        """Add the next model call (what was not read from the cache was written to it)."""
        self.input_tokens.append(input_tokens)
        self.tool_tokens.append(tool_tokens)
        self.cache_read.append(read)
        self.cache_write.append(input_tokens - read)
        self.cache_broken.append(broken)
        self.cleared.append(cleared)

    def rows(self) -> tuple[LedgerRow, ...]:
        """The rows, as :class:`~slimtools.ledger.LedgerRow` objects."""
        columns = zip(
            self.input_tokens,
            self.tool_tokens,
            self.cache_read,
            self.cache_write,
            self.cache_broken,
            self.cleared,
            strict=True,
        )
        return tuple(
            LedgerRow(n, i, t, r, w, bool(b), c) for n, (i, t, r, w, b, c) in enumerate(columns, 1)
        )

    def summary(self, cache: CachePricing | str | None = DEFAULT_PRICING) -> LedgerSummary:
        """The totals of the rows billed at ``cache`` prices, without building the rows."""
        return summarize(
            self.tool_tokens,
            self.input_tokens,
            self.cache_read,
            self.cache_write,
            self.cache_broken,
            pricing=pricing_of(cache),
        )
