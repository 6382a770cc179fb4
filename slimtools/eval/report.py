"""Recall reports: each trial, and per setting the rate of each outcome with its interval.

Intervals are Wilson score intervals at 95% (:func:`wilson_interval`): unlike the textbook
``p ± 1.96·sqrt(p(1-p)/n)`` they stay inside [0, 1] and do not collapse to a width of zero
when a behaviour was seen 0 or n times, which at K = 20 repeats is the common case.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

Outcome = Literal["refetched", "from_placeholder", "from_memory", "fabricated", "declined"]
OUTCOMES: tuple[Outcome, ...] = (
    "refetched",
    "from_placeholder",
    "from_memory",
    "fabricated",
    "declined",
)
"""The five behaviours, in the order of the rules that assign them."""

Z95 = 1.959963984540054
"""The two-sided 95% normal quantile."""

METHOD = "Wilson score interval, 95% (z = 1.96)"


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` out of ``trials`` (``(0, 1)`` for none).

    ``centre = (p + z²/2n) / (1 + z²/n)`` and
    ``half = z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n)``, with ``p = successes / trials``.
    """
    if not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denominator
    # At 0 and n the bounds are exactly 0 and 1; rounding would leave them a hair away.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class Rate:
    """``count`` of ``total`` trials, the rate and its Wilson interval."""

    count: int
    total: int
    rate: float
    low: float
    high: float

    @classmethod
    def of(cls, count: int, total: int) -> Rate:
        """The rate of ``count`` in ``total`` with its 95% interval."""
        low, high = wilson_interval(count, total)
        return cls(count, total, count / total if total else 0.0, low, high)

    def cell(self) -> str:
        """``count rate% [low-high]`` in whole percents, for tables."""
        low, high = self.low * 100, self.high * 100
        return f"{self.count:>3} {self.rate * 100:>3.0f}% [{low:>3.0f}-{high:>3.0f}]"


@dataclass(frozen=True)
class Trial:
    """One episode under one setting: what the model did and how it was classified.

    Attributes:
        scenario: the scenario's name.
        repeat: the repeat (seed or ordering).
        setting: the sweep setting's label.
        outcome: one of :data:`OUTCOMES`.
        correct: whether the answer's first claimed value was the expected one.
        claimed: that value, normalised (None when the answer claimed none); a timestamp
            reads ``date|HH:MM:SS|fraction|zone``, with the parts it did not state empty.
        expected: the true answer.
        answer: the model's final text.
        calls: the tool calls it made after the question, as ``name(arguments)``.
        refetch_had_answer: whether a result served after the question showed the answer.
        cleared: whether round M's result was a placeholder when the question was asked.
        visible: whether the answer was readable in round M's result as sent.
        steps: model calls made after the question.
    """

    scenario: str
    repeat: int
    setting: str
    outcome: Outcome
    correct: bool
    claimed: str | None
    expected: str
    answer: str
    calls: tuple[str, ...]
    refetch_had_answer: bool
    cleared: bool
    visible: bool
    steps: int


@dataclass(frozen=True)
class Summary:
    """The rates of one setting (over every scenario, or one)."""

    setting: str
    scenario: str | None
    trials: int
    outcomes: dict[str, Rate]
    correct: Rate
    cleared: Rate

    def jsonable(self) -> dict[str, Any]:
        """A plain dict for ``--json``."""
        return asdict(self)


@dataclass(frozen=True)
class RecallReport:
    """Every trial of a sweep, and the rates per setting.

    Attributes:
        settings: the sweep's labels, in order.
        trials: every trial, in the order run.
    """

    settings: tuple[str, ...]
    trials: tuple[Trial, ...]

    @property
    def scenarios(self) -> tuple[str, ...]:
        """The scenarios run, in order."""
        return tuple(dict.fromkeys(t.scenario for t in self.trials))

    def summaries(self, *, by_scenario: bool = False) -> list[Summary]:
        """A summary per setting, or per setting and scenario (pairs that ran)."""
        if not by_scenario:
            return [self._summary(s, None) for s in self.settings]
        ran = {(t.setting, t.scenario) for t in self.trials}
        pairs = [(s, c) for s in self.settings for c in self.scenarios if (s, c) in ran]
        return [self._summary(s, c) for s, c in pairs]

    def _summary(self, setting: str, scenario: str | None) -> Summary:
        chosen = [
            t
            for t in self.trials
            if t.setting == setting and (scenario is None or t.scenario == scenario)
        ]
        n = len(chosen)
        outcomes: dict[str, Rate] = {
            o: Rate.of(sum(t.outcome == o for t in chosen), n) for o in OUTCOMES
        }
        return Summary(
            setting,
            scenario,
            n,
            outcomes,
            Rate.of(sum(t.correct for t in chosen), n),
            Rate.of(sum(t.cleared for t in chosen), n),
        )

    def table(self, *, by_scenario: bool = False) -> str:
        """The rates as a text table, one row per setting (and scenario)."""
        rows = self.summaries(by_scenario=by_scenario)
        label_width = max([len(_label(r)) for r in rows] + [7])
        names = ("refetched", "placeholder", "memory", "fabricated", "declined", "correct")
        header = f"{'setting':<{label_width}} {'n':>4}  " + "  ".join(f"{n:^17}" for n in names)
        lines = [header + f"  {'cleared':>7}"]
        for row in rows:
            cells = [row.outcomes[o].cell() for o in OUTCOMES] + [row.correct.cell()]
            cleared = f"{row.cleared.rate * 100:>6.0f}%"
            lines.append(
                f"{_label(row):<{label_width}} {row.trials:>4}  "
                + "  ".join(cells)
                + f"  {cleared}"
            )
        lines.append(
            f"count, rate and {METHOD}; n = trials (scenarios x repeats); cleared = round M's "
            "result was a placeholder when asked"
        )
        return "\n".join(lines)

    def to_json(self, *, trials: bool = True) -> dict[str, Any]:
        """The report as plain data: method, summaries (overall and per scenario), trials."""
        data: dict[str, Any] = {
            "method": METHOD,
            "outcomes": list(OUTCOMES),
            "settings": [s.jsonable() for s in self.summaries()],
            "by_scenario": [s.jsonable() for s in self.summaries(by_scenario=True)],
        }
        if trials:
            data["trials"] = [asdict(t) for t in self.trials]
        return data


def _label(summary: Summary) -> str:
    return (
        summary.setting if summary.scenario is None else f"{summary.setting} / {summary.scenario}"
    )
