"""The figures ``analyze`` adds up: counts, tokens per tool, and each strategy's totals and
per-round ledger, for one file, one source or everything (see :mod:`slimtools.ledger.analyze`)."""

from __future__ import annotations

import dataclasses
import math
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from slimtools.clearing.pricing import CachePricing
from slimtools.ledger._columns import LedgerColumns
from slimtools.ledger._rows import LedgerSummary, cached_cost
from slimtools.ledger.stream import NO_CLEARING, RunFigures

__all__ = ["Figures", "RoundSeries", "ToolTally", "Totals", "percentile"]


def percentile(values: Sequence[int], p: float) -> int:
    """The nearest-rank ``p``-th percentile of ``values`` (0 when there are none)."""
    if not values:
        return 0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@dataclass
class ToolTally:
    """One tool's calls and the tokens of each of its results."""

    calls: int = 0
    tokens: array[int] = field(default_factory=lambda: array("q"))

    @property
    def results(self) -> int:
        """Results returned."""
        return len(self.tokens)

    @property
    def total(self) -> int:
        """Tokens of all its results."""
        return sum(self.tokens)

    def merge(self, other: ToolTally) -> None:
        """Add another tally of the same tool."""
        self.calls += other.calls
        self.tokens.extend(other.tokens)


def _column() -> array[int]:
    return array("q")


@dataclass
class RoundSeries:
    """One strategy's ledger added up round by round over runs (round 1 of every run, ...).

    Each column holds one value per round, as machine integers (``array("q")``, 8 bytes a
    round: one long session has tens of thousands); ``runs[r]`` is how many runs reached
    round ``r + 1``, so a single run's series is its own ledger.
    """

    runs: array[int] = field(default_factory=_column)
    input_tokens: array[int] = field(default_factory=_column)
    tool_tokens: array[int] = field(default_factory=_column)
    cache_read: array[int] = field(default_factory=_column)
    cache_write: array[int] = field(default_factory=_column)
    cache_breaks: array[int] = field(default_factory=_column)
    cleared: array[int] = field(default_factory=_column)

    def add(self, ledger: LedgerColumns) -> None:
        """Add one run's ledger."""
        self._extend(len(ledger))
        pairs = (
            (self.input_tokens, ledger.input_tokens),
            (self.tool_tokens, ledger.tool_tokens),
            (self.cache_read, ledger.cache_read),
            (self.cache_write, ledger.cache_write),
            (self.cache_breaks, ledger.cache_broken),
            (self.cleared, ledger.cleared),
        )
        for mine, theirs in pairs:
            for i, value in enumerate(theirs):
                mine[i] += value
        runs = self.runs
        for i in range(len(ledger)):
            runs[i] += 1

    def merge(self, other: RoundSeries) -> None:
        """Add another series."""
        self._extend(len(other.runs))
        for name in _SERIES:
            mine, theirs = getattr(self, name), getattr(other, name)
            for i, value in enumerate(theirs):
                mine[i] += value

    def cost(self, pricing: CachePricing | None) -> list[float]:
        """Each round's input bill under ``pricing`` (None: every token at the input price)."""
        pairs = zip(self.cache_read, self.cache_write, strict=True)
        return [cached_cost(r, w, pricing) for r, w in pairs]

    def _extend(self, rounds: int) -> None:
        missing = rounds - len(self.runs)
        if missing > 0:
            zeros = array("q", [0]) * missing
            for name in _SERIES:
                getattr(self, name).extend(zeros)


_SERIES = tuple(f.name for f in dataclasses.fields(RoundSeries))


@dataclass
class Totals:
    """Figures of one strategy over a group of runs (tokens summed over the runs).

    Attributes:
        runs: runs replayed.
        rounds: model calls replayed.
        resident_peak: the largest resident tool tokens of each run, summed.
        resident_end: resident tool tokens at each run's last call, summed.
        billed: input tokens billed without caching.
        cached: the cached bill, in input-token equivalents (unrounded).
        breaks: calls whose cached prefix a rewrite broke.
        worse: runs whose cached bill is above the same run's without clearing.
        base_resident: ``resident_end`` of the same replayed histories without clearing.
        base_cached: ``cached`` of the same replayed histories without clearing (a peer that
            replays a converted history is measured against that history).
    """

    runs: int = 0
    rounds: int = 0
    resident_peak: int = 0
    resident_end: int = 0
    billed: int = 0
    cached: float = 0.0
    breaks: int = 0
    worse: int = 0
    base_resident: int = 0
    base_cached: float = 0.0
    pricing: CachePricing | None = field(default=None, repr=False)

    def add(self, summary: LedgerSummary, baseline: LedgerSummary) -> None:
        """Count one run, ``baseline`` being no clearing on the same replayed history."""
        cached = cached_cost(summary.cache_read, summary.cache_write, self.pricing)
        base_cost = cached_cost(baseline.cache_read, baseline.cache_write, self.pricing)
        self.base_resident += baseline.resident_end
        self.base_cached += base_cost
        self.worse += cached > base_cost + 1e-9
        self.runs += 1
        self.rounds += summary.rounds
        self.resident_peak += summary.resident_peak
        self.resident_end += summary.resident_end
        self.billed += summary.billed
        self.cached += cached
        self.breaks += summary.cache_breaks

    @property
    def resident_ratio(self) -> float:
        """Resident tool tokens at the end against no clearing of the same histories."""
        return self.resident_end / self.base_resident if self.base_resident else 1.0

    @property
    def cost_ratio(self) -> float:
        """The cached cost against no clearing of the same histories."""
        return self.cached / self.base_cached if self.base_cached else 1.0


@dataclass
class Figures:
    """Counts, per-tool tokens and per-strategy results of a set of runs.

    Attributes:
        runs: runs replayed.
        messages: messages read.
        model_calls: model calls (each a ledger row).
        tool_calls: tool calls made.
        tool_results: tool results returned.
        tools: per tool name, its calls and result tokens.
        strategies: per strategy label (``"no clearing"`` first), the totals over the runs
            (see :class:`Totals`; ratios against no clearing).
        series: per strategy label, the ledgers added up by round.
        resident_by_tool: per strategy label, tool-result tokens per tool in the prompt of
            each run's last model call, summed.
    """

    runs: int = 0
    messages: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    tools: dict[str, ToolTally] = field(default_factory=dict)
    strategies: dict[str, Totals] = field(default_factory=dict)
    series: dict[str, RoundSeries] = field(default_factory=dict)
    resident_by_tool: dict[str, Counter[str]] = field(default_factory=dict)

    @property
    def tool_tokens(self) -> int:
        """Tokens of every tool result."""
        return sum(t.total for t in self.tools.values())

    def add_run(self, run: RunFigures, pricing: CachePricing | None) -> None:
        """Add one replayed run, billed under ``pricing``."""
        self.runs += 1
        self.messages += run.messages
        self.model_calls += run.model_calls
        self.tool_calls += run.tool_calls
        self.tool_results += run.tool_results
        # First-seen order, not a set's: ties on tokens must list alike under any hash seed.
        for name in dict.fromkeys([*run.calls_by_tool, *run.result_tokens]):
            tally = self.tools.setdefault(name, ToolTally())
            tally.calls += run.calls_by_tool.get(name, 0)
            tally.tokens.extend(run.result_tokens.get(name, ()))
        baseline = run.ledgers[NO_CLEARING].summary(pricing)
        for label, ledger in run.ledgers.items():
            summary = ledger.summary(pricing)
            totals = self.strategies.setdefault(label, Totals(pricing=pricing))
            totals.add(summary, baseline)
            self.series.setdefault(label, RoundSeries()).add(ledger)
            self.resident_by_tool.setdefault(label, Counter()).update(run.resident_by_tool[label])

    def merge(self, other: Figures) -> None:
        """Add the figures of other runs."""
        self.runs += other.runs
        self.messages += other.messages
        self.model_calls += other.model_calls
        self.tool_calls += other.tool_calls
        self.tool_results += other.tool_results
        for name, tally in other.tools.items():
            self.tools.setdefault(name, ToolTally()).merge(tally)
        for label, totals in other.strategies.items():
            mine = self.strategies.setdefault(label, Totals(pricing=totals.pricing))
            for f in dataclasses.fields(Totals):
                if f.name != "pricing":
                    setattr(mine, f.name, getattr(mine, f.name) + getattr(totals, f.name))
        for label, series in other.series.items():
            self.series.setdefault(label, RoundSeries()).merge(series)
        for label, by_tool in other.resident_by_tool.items():
            self.resident_by_tool.setdefault(label, Counter()).update(by_tool)

    def to_dict(self, *, rounds: bool = True) -> dict[str, Any]:
        """The figures as JSON-ready data (``rounds=False`` leaves the per-round ledger out)."""
        total = self.tool_tokens
        out: dict[str, Any] = {
            "runs": self.runs,
            "messages": self.messages,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "tool_results": self.tool_results,
            "tool_tokens": total,
            "by_tool": {
                name: {
                    "calls": t.calls,
                    "results": t.results,
                    "tokens": t.total,
                    "share": round(t.total / total, 4) if total else 0.0,
                    "p50": percentile(t.tokens, 50),
                    "p95": percentile(t.tokens, 95),
                    "max": max(t.tokens, default=0),
                }
                for name, t in sorted(self.tools.items(), key=lambda kv: -kv[1].total)
            },
            "savings": {label: _savings(t) for label, t in self.strategies.items()},
            "resident_by_tool": {
                label: dict(counts.most_common()) for label, counts in self.resident_by_tool.items()
            },
        }
        if rounds:
            out["ledger"] = {
                label: {"round": list(range(1, len(s.runs) + 1))}
                | {name: list(getattr(s, name)) for name in _SERIES}
                for label, s in self.series.items()
            }
        return out


def _savings(t: Totals) -> dict[str, Any]:
    return {
        "resident_peak": t.resident_peak,
        "resident_end": t.resident_end,
        "resident_ratio": round(t.resident_ratio, 4),
        "billed": t.billed,
        "billed_cached": round(t.cached),
        "cost_ratio": round(t.cost_ratio, 4),
        "cache_breaks": t.breaks,
        "worse": t.worse,
    }
