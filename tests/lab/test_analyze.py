"""slimtools.ledger.analyze: per-file and total figures of transcripts, as plain data."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.peers.compare import Strategy, compare
from slimtools.clearing import ClearingPolicy
from slimtools.ledger.analyze import Figures, RoundSeries, analyze, percentile
from slimtools.ledger.stream import NO_CLEARING, RunReplay
from slimtools.transcripts import iter_transcripts
from tests._profile import examples
from tests._shared import shared_data

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"
POLICIES = {"turn-end": ClearingPolicy(cache=None), "default": ClearingPolicy()}


def test_every_format_is_analysed_and_the_bad_files_are_named():
    """Each good file has figures; each malformed one an error; the rest are skipped."""
    result = analyze(DATA, policies=POLICIES)
    sources = {f.source for f in result.files}
    assert sources == {
        "anthropic",
        "claude_code",
        "langchain",
        "mini_swe_agent",
        "openai_chat",
        "openai_responses",
        "openhands",
        "swe_agent",
        "tau_bench",
    }
    failed = {Path(str(e.path)).name for e in result.errors}
    assert failed == {p.name for p in (DATA / "malformed").iterdir()}
    assert {p.name for p in result.skipped} >= {"README.md", "blob.bin", "empty.jsonl"}
    assert all(f.figures.runs for f in result.files)


def test_totals_agree_with_compare_on_the_same_runs():
    """Per strategy, resident, billed, cached cost, breaks and worse equal compare()'s."""
    runs = [
        r
        for r in iter_transcripts(DATA, on_error=lambda _e: None)
        if "malformed" not in str(r.path)
    ]
    expected = compare(
        runs,
        [Strategy.policy(NO_CLEARING, None), *(Strategy.policy(k, p) for k, p in POLICIES.items())],
    ).groups["ALL"]
    result = analyze(DATA, policies=POLICIES)
    assert len(result.errors) == len(list((DATA / "malformed").iterdir()))
    total = result.total
    for label, want in expected.items():
        got = total.strategies[label]
        assert (got.runs, got.rounds, got.resident_end, got.resident_peak) == (
            want.runs,
            want.rounds,
            want.resident_end,
            want.resident_peak,
        )
        assert (got.billed, got.breaks, got.worse) == (want.billed, want.breaks, want.worse)
        assert got.cached == pytest.approx(want.cached)


@pytest.mark.shared
def test_the_shared_transcripts_by_source():
    """Every recorder of the shared data is a group; the groups add up to the total."""
    result = analyze(shared_data() / "transcripts", policies=POLICIES)
    groups = result.groups("source")
    assert set(groups) == {"claude_code", "mini_swe_agent", "openhands", "swe_agent", "tau_bench"}
    assert sum(g.runs for g in groups.values()) == result.total.runs == 268
    assert not result.errors
    base = result.total.strategies[NO_CLEARING]
    assert result.total.strategies["turn-end"].resident_end < base.resident_end


def test_a_file_that_fails_midway_adds_nothing(tmp_path):
    """The runs a broken file yielded before its fault are left out with the file."""
    broken = DATA / "malformed" / "third_run_broken.json"
    result = analyze(broken, DATA / "tau_bench")
    assert [f.path.name for f in result.files] == ["airline.json"]
    assert result.total.runs == 3
    assert [e.line for e in result.errors] == [None]
    assert "list element 2" in result.errors[0].reason


def test_groups_by_file_and_source_add_up():
    """By file and by source the groups hold every run once."""
    result = analyze(DATA)
    for by in ("file", "source"):
        groups = result.groups(by)
        assert sum(g.runs for g in groups.values()) == result.total.runs
        assert sum(g.tool_tokens for g in groups.values()) == result.total.tool_tokens
    assert list(result.groups("tool")) == ["TOTAL"]


def test_the_default_policy_is_the_cache_aware_default():
    """Without policies, "default" is ClearingPolicy(cache=...) at the billing prices."""
    result = analyze(DATA / "openai_chat", cache="openai")
    assert result.labels == [NO_CLEARING, "default"]
    assert result.policies["default"] == ClearingPolicy(cache="openai")
    assert result.cache is not None
    assert result.cache.name == "openai"


def test_to_dict_has_the_documented_keys_and_is_json():
    """Per file: file, format, messages, tool_calls, tool_results, by_tool, ledger, savings."""
    document = analyze(DATA / "anthropic", policies=POLICIES).to_dict()
    json.dumps(document)
    (first, second) = document["files"]
    for key in ("file", "format", "messages", "tool_calls", "tool_results", "by_tool"):
        assert key in first
    assert set(first["ledger"]) == set(first["savings"]) == {NO_CLEARING, *POLICIES}
    ledger = first["ledger"]["turn-end"]
    assert ledger["round"] == list(range(1, first["model_calls"] + 1))
    assert set(ledger) == {
        "round",
        "runs",
        "input_tokens",
        "tool_tokens",
        "cache_read",
        "cache_write",
        "cache_breaks",
        "cleared",
    }
    assert document["total"]["messages"] == first["messages"] + second["messages"]
    tools = first["by_tool"]
    assert sum(t["tokens"] for t in tools.values()) == first["tool_tokens"]
    assert sum(t["share"] for t in tools.values()) == pytest.approx(1, abs=1e-3)


def test_to_dict_without_rounds_leaves_the_ledger_out():
    """rounds=False keeps the totals and drops the per-round columns."""
    document = analyze(DATA / "anthropic").to_dict(rounds=False)
    assert "ledger" not in document["total"]
    assert "savings" in document["total"]


def test_progress_reaches_the_total_and_never_goes_back():
    """Bytes reported grow to the size of every file read."""
    seen: list[tuple[int, int]] = []
    analyze(
        DATA / "claude_code", DATA / "tau_bench", on_progress=lambda d, t, _p: seen.append((d, t))
    )
    done = [d for d, _ in seen]
    assert done == sorted(done)
    total = sum(
        p.stat().st_size
        for p in [*DATA.joinpath("claude_code").rglob("*"), *DATA.joinpath("tau_bench").rglob("*")]
        if p.is_file()
    )
    assert seen[-1] == (total, total)


def test_a_missing_path_is_an_error_not_an_exception():
    """A path that does not exist is reported like a bad file."""
    result = analyze(DATA / "nowhere.jsonl", DATA / "tau_bench")
    assert [str(e) for e in result.errors] == [
        f"{DATA / 'nowhere.jsonl'}: no such transcript file or folder"
    ]
    assert result.total.runs == 3


def test_round_series_add_runs_round_by_round():
    """Round r of the series adds up round r of each run that reached it."""
    runs = list(iter_transcripts(DATA / "anthropic"))
    ledgers = [RunReplay(r.format).add_all(r.messages).finish().ledgers[NO_CLEARING] for r in runs]
    series = RoundSeries()
    for ledger in ledgers:
        series.add(ledger)
    longest = max(len(ledger) for ledger in ledgers)
    assert len(series.runs) == longest
    assert series.runs[0] == len(runs)
    assert series.input_tokens[0] == sum(ledger.input_tokens[0] for ledger in ledgers)
    assert sum(series.cost(None)) == sum(sum(ledger.input_tokens) for ledger in ledgers)


def test_merging_figures_is_adding_their_runs():
    """Figures of two files merged equal the figures of both files' runs added one by one."""
    runs = list(iter_transcripts(DATA / "tau_bench", DATA / "anthropic"))
    one = Figures()
    for run in runs:
        one.add_run(RunReplay(run.format, POLICIES).add_all(run.messages).finish(), None)
    merged = Figures()
    for part in (runs[:3], runs[3:]):
        figures = Figures()
        for run in part:
            figures.add_run(RunReplay(run.format, POLICIES).add_all(run.messages).finish(), None)
        merged.merge(figures)
    assert merged.to_dict() == one.to_dict()


def test_tools_are_listed_in_the_order_they_were_first_seen():
    """Tools tied on tokens list alike under any hash seed: in the order they first appear."""
    run = next(iter_transcripts(DATA / "tau_bench"))
    figures = RunReplay(run.format, POLICIES).add_all(run.messages).finish()
    names = [f"tool_{i}" for i in range(30)]
    tied = dataclasses.replace(
        figures,
        calls_by_tool=dict.fromkeys(names[:20], 1),
        result_tokens={name: [7] for name in names[10:]},
    )
    total = Figures()
    total.add_run(tied, None)
    assert list(total.tools) == names


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=50), st.floats(1, 100))
def test_percentile_is_a_value_with_enough_below_it(values, p):
    """Property: the nearest-rank percentile is one of the values, with >= p% at or below."""
    found = percentile(values, p)
    assert found in values
    assert sum(v <= found for v in values) >= p / 100 * len(values) - 1e-9
    assert sum(v < found for v in values) < p / 100 * len(values)


def test_percentile_of_nothing_is_zero():
    """A tool without results has 0 for every percentile."""
    assert percentile([], 95) == 0
