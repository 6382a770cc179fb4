"""Recall reports: Wilson intervals, rates per setting, the table and the JSON."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.eval import OUTCOMES, Rate, RecallReport, Trial, wilson_interval
from tests._profile import examples

Z2 = 1.959963984540054**2


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (5, 20, 0.111862, 0.468701),  # the textbook example: 25% of 20
        (10, 20, 0.299298, 0.700702),  # symmetric about 1/2
        (3, 80, 0.012835, 0.104547),
        (1, 1, 0.206549, 1.0),
    ],
)
def test_wilson_interval_matches_hand_computed_bounds(k, n, low, high):
    """The bounds agree with values worked out by hand to six decimals."""
    assert wilson_interval(k, n) == (pytest.approx(low, abs=1e-6), pytest.approx(high, abs=1e-6))


def test_wilson_interval_for_none_seen_reaches_up_to_z2_over_n_plus_z2():
    """0 of n: the interval is [0, z²/(n+z²)], not the zero width of p ± 1.96·se."""
    assert wilson_interval(0, 20) == (0.0, pytest.approx(Z2 / (20 + Z2)))


def test_wilson_interval_for_all_seen_starts_at_n_over_n_plus_z2():
    """n of n: the interval is [n/(n+z²), 1]."""
    assert wilson_interval(20, 20) == (pytest.approx(20 / (20 + Z2)), 1.0)


def test_wilson_interval_of_no_trials_is_everything():
    """0 of 0 says nothing: [0, 1]."""
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_interval_rejects_impossible_counts():
    """More successes than trials, or negative counts, are errors."""
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(3, 2)
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(-1, 2)


@settings(max_examples=examples(300))
@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_interval_contains_the_observed_rate_within_zero_and_one(counts):
    """Property: 0 <= low <= k/n <= high <= 1."""
    k, n = counts
    low, high = wilson_interval(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0


@settings(max_examples=examples(100))
@given(st.integers(1, 500), st.integers(1, 4))
def test_wilson_interval_narrows_with_more_trials_at_the_same_rate(n, scale):
    """Property: the same rate over more trials gives a narrower interval."""
    k = n // 2
    low1, high1 = wilson_interval(k, n)
    low2, high2 = wilson_interval(k * (scale + 1), n * (scale + 1))
    assert high2 - low2 < high1 - low1


def trial(setting: str, outcome: str, scenario: str = "s", *, correct: bool = False) -> Trial:
    """A trial with only the fields a report reads set meaningfully."""
    return Trial(
        scenario=scenario,
        repeat=0,
        setting=setting,
        outcome=outcome,  # type: ignore[arg-type]
        correct=correct,
        claimed=None,
        expected="1",
        answer="",
        calls=(),
        refetch_had_answer=False,
        cleared=setting != "off",
        visible=False,
        steps=1,
    )


def sample_report() -> RecallReport:
    """4 trials per setting: off 3 placeholder + 1 declined; on 1 of each but memory."""
    trials = [trial("off", "from_placeholder", correct=True)] * 3 + [trial("off", "declined")]
    trials += [
        trial("on", "refetched", "a", correct=True),
        trial("on", "from_placeholder", "a", correct=True),
        trial("on", "fabricated", "b"),
        trial("on", "declined", "b"),
    ]
    return RecallReport(("off", "on"), tuple(trials))


def test_summary_counts_each_outcome_with_its_interval():
    """Rates are count over trials of that setting, each with its Wilson interval."""
    off, on = sample_report().summaries()
    assert off.trials == 4
    assert off.outcomes["from_placeholder"] == Rate.of(3, 4)
    assert off.outcomes["declined"].count == 1
    assert on.outcomes["refetched"].rate == 0.25
    assert (on.correct.count, off.correct.count) == (2, 3)
    assert (off.cleared.count, on.cleared.count) == (0, 4)


def test_summaries_by_scenario_split_each_setting():
    """One row per setting and scenario; the counts add up to the setting's."""
    rows = [r for r in sample_report().summaries(by_scenario=True) if r.setting == "on"]
    assert [(r.scenario, r.trials) for r in rows] == [("a", 2), ("b", 2)]
    assert rows[1].outcomes["fabricated"].count == 1


def test_every_outcome_is_listed_even_when_unseen():
    """A behaviour never seen has a 0 count and a non-zero upper bound."""
    off = sample_report().summaries()[0]
    assert list(off.outcomes) == list(OUTCOMES)
    assert off.outcomes["from_memory"].count == 0
    assert off.outcomes["from_memory"].high > 0.4


def test_table_has_a_row_per_setting_and_states_the_method():
    """The text table shows each setting with counts, percentages and intervals."""
    table = sample_report().table()
    lines = table.splitlines()
    assert lines[1].startswith("off")
    assert "3  75% [ 30- 95]" in lines[1]
    assert lines[2].startswith("on")
    assert "Wilson score interval, 95%" in lines[-1]


def test_json_carries_method_summaries_and_trials():
    """``to_json`` is plain data: method, settings, per-scenario rows, trials."""
    data = json.loads(json.dumps(sample_report().to_json()))
    assert data["method"].startswith("Wilson")
    assert data["outcomes"] == list(OUTCOMES)
    assert data["settings"][0]["outcomes"]["from_placeholder"]["count"] == 3
    assert len(data["by_scenario"]) == 3
    assert len(data["trials"]) == 8
    assert "trials" not in sample_report().to_json(trials=False)
