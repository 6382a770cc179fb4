"""The recall guide's figures are bench_recall's recorded run, and that run is what the code
computes today (python -m benchmarks bench_recall re-records them)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from benchmarks import bench_recall, render, results
from slimtools.eval import wilson_interval

GUIDE = render.PAGE.parent / "recall.md"
STALE = "stale: run python -m benchmarks bench_recall"


def _recorded(start: str) -> dict[str, float]:
    """The raw values of bench_recall's committed row whose ``what`` starts with ``start``."""
    (doc,) = [d for d in results.load() if d["bench"] == "bench_recall"]
    (row,) = [r for r in doc["rows"] if str(r["what"]).startswith(start)]
    values: dict[str, float] = row["values"]
    return values


@pytest.fixture(scope="module")
def today() -> dict[str, float]:
    """What the harness computes now for the guide's heads table (a declining model, 20 seeds)."""
    return bench_recall.heads()


def _past_run() -> str:
    """The guide's paragraph quoting the one local-model run."""
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index("**A past run")
    return text[start : text.index("\n\n", start)]


def test_the_recorded_heads_table_is_what_the_harness_computes_today(today: dict[str, Any]):
    """Every readable count and placeholder size bench_recall recorded is reproduced exactly."""
    recorded = _recorded("recall, answer readable")
    assert set(recorded) == set(today)
    assert recorded == pytest.approx(today), STALE


def test_the_recorded_head_costs_are_what_the_token_counter_gives_today(today: dict[str, Any]):
    """The tokens a head adds (the guide's 1,000-result figure) follow from today's counts."""
    recorded = _recorded("recall, round 3's placeholder tokens")
    for key, value in bench_recall.head_costs(today).items():
        assert recorded[key] == pytest.approx(value), f"{key} {STALE}"


def test_the_recorded_wilson_bounds_are_what_wilson_interval_gives():
    """The guide's n = 20 bounds (none seen; 5 seen) are wilson_interval's today."""
    assert _recorded("Wilson 95% interval") == pytest.approx(bench_recall.wilson()), STALE


def test_the_normal_baseline_collapses_where_wilson_does_not():
    """At 0 of 20 the textbook interval is empty while Wilson's upper bound stays above 10%."""
    assert bench_recall.normal_interval(0, 20) == (0.0, 0.0)
    assert wilson_interval(0, 20)[1] > 0.1


def test_the_recall_guide_renders_its_figures_from_bench_recall():
    """The Wilson bounds, the head's token cost and the heads table sit in bench-figure spans."""
    text = GUIDE.read_text(encoding="utf-8")
    for name in ("recall-wilson", "recall-head-cost", "recall-heads"):
        assert f"<!-- bench-figure: {name} -->" in text, name
        assert render.FIGURES[name][0] == "bench_recall", name
    assert text == render.with_figures(text, results.load()), STALE


def test_the_past_model_run_is_labelled_a_dated_record():
    """The Qwen run, which cannot be re-run here, says it is a past run and when it was quoted."""
    paragraph = _past_run()
    assert "Qwen2.5-Coder-0.5B" in paragraph
    assert "quoted as recorded" in paragraph
    assert re.search(r"\b20\d\d-\d\d-\d\d\b", paragraph)


def test_the_past_model_runs_intervals_are_the_wilson_intervals_of_its_counts():
    """Each ``k/n [low-high%]`` the past run quotes is wilson_interval(k, n) in whole percents."""
    quoted = re.findall(r"(\d+)/(\d+) \[(\d+)-(\d+)%\]", _past_run())
    assert len(quoted) >= 5
    for k, n, low, high in quoted:
        bounds = wilson_interval(int(k), int(n))
        assert [f"{b * 100:.0f}" for b in bounds] == [low, high], f"{k}/{n}"
