"""Comparing clearing strategies on recorded runs, per group and in total."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from benchmarks.peers import has_langchain
from benchmarks.peers.__main__ import main as peers_main
from benchmarks.peers.compare import (
    Strategy,
    compare,
    peer_strategies,
    published_strategies,
    slimtools_strategies,
)
from slimtools.clearing import ClearingPolicy
from slimtools.ledger import TokenLedger
from slimtools.transcripts import load_transcripts
from tests._shared import sample, shared_data
from tests.lab.cli_helpers import write_run


@dataclass
class Run:
    name: str
    source: str
    format: str
    messages: list[Any]


def run(name: str, source: str, rounds: int, chars: int) -> Run:
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(rounds):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": "x" * chars})
    history.append({"role": "assistant", "content": "done"})
    return Run(name, source, "openai_chat", history)


RUNS = [run("a", "s1", 6, 800), run("b", "s1", 10, 3_000), run("c", "s2", 4, 200)]
TURN_END = Strategy.policy("turn-end", ClearingPolicy(cache=None))
NONE = Strategy.policy("no clearing", None)


def test_compare_groups_runs_and_totals_them_in_all():
    """Each group holds its runs; ALL holds every run."""
    result = compare(RUNS, [NONE, TURN_END])
    assert result.groups["s1"]["no clearing"].runs == 2
    assert result.groups["s2"]["no clearing"].runs == 1
    assert result.groups["ALL"]["no clearing"].runs == 3


def test_totals_are_the_sum_of_each_runs_ledger():
    """Resident, billed and rounds add up the per-run ledger summaries."""
    result = compare(RUNS, [NONE])
    summaries = [TokenLedger.measure(r.messages).summary for r in RUNS]
    totals = result.groups["ALL"]["no clearing"]
    assert totals.resident_end == sum(s.resident_end for s in summaries)
    assert totals.billed == sum(s.billed for s in summaries)
    assert totals.rounds == sum(s.rounds for s in summaries)
    assert round(totals.cached) == sum(s.billed_cached for s in summaries)


def test_worse_counts_runs_dearer_than_no_clearing():
    """Turn-end clearing under Anthropic prices costs more on the long run than none."""
    result = compare(RUNS, [NONE, TURN_END])
    assert result.groups["ALL"]["no clearing"].worse == 0
    assert result.groups["ALL"]["turn-end"].worse >= 1


def test_without_caching_cached_cost_is_the_uncached_bill():
    """``cache=None`` bills every token at the input price."""
    totals = compare(RUNS, [NONE], cache=None).groups["ALL"]["no clearing"]
    assert totals.cached == totals.billed


def test_ratios_are_against_no_clearing_of_the_same_histories():
    """resident_ratio and cost_ratio divide by no clearing's figures on the same runs."""
    s1 = compare(RUNS, [NONE, TURN_END]).groups["s1"]
    expected = s1["turn-end"].resident_end / s1["no clearing"].resident_end
    assert s1["turn-end"].resident_ratio == pytest.approx(expected)
    assert s1["turn-end"].cost_ratio == pytest.approx(
        s1["turn-end"].cached / s1["no clearing"].cached
    )
    assert s1["no clearing"].cost_ratio == 1.0


def test_custom_grouping():
    """``group=`` chooses the grouping, e.g. one group per run."""
    result = compare(RUNS, [NONE], group=lambda r: r.name)
    assert set(result.groups) == {"a", "b", "c", "ALL"}


def test_a_step_strategy_gets_a_fresh_step_per_run():
    """Strategy.step makes a new step for every run (steps may keep state)."""
    made: list[int] = []

    def make():
        made.append(1)
        return lambda messages: messages

    compare(RUNS, [Strategy.step("identity", make)])
    assert len(made) == len(RUNS)


def test_table_shows_every_strategy_with_ratios():
    """The table has a line per strategy, ratios against no clearing and worse counts."""
    text = compare(RUNS, [NONE, TURN_END]).table("ALL")
    assert "ALL: 3 runs" in text
    assert "turn-end" in text
    assert "1.00x" in text
    assert "/3" in text


def test_the_published_comparison_lists_no_clearing_the_peers_and_slimtools():
    """The README's comparison: no clearing first, the peers, then slimtools' two ways."""
    labels = [s.label for s in published_strategies()]
    ours = [s.label for s in slimtools_strategies()]
    assert labels[0] == "no clearing"
    assert labels[-len(ours) :] == ours
    assert [s.label for s in peer_strategies()] == labels[1 : -len(ours)]


def test_slimtools_default_uses_the_given_cache():
    """The default row decides with the prices being billed."""
    default = slimtools_strategies("openai")[-1]
    _, policy = default.prepare([], "openai_chat")
    assert isinstance(policy, ClearingPolicy)
    assert policy.pricing is not None
    assert policy.pricing.name == "openai"


@pytest.mark.skipif(not has_langchain(), reason="LangChain is not installed")
def test_langchain_peers_replay_on_langchain_messages():
    """LangChain's edit runs on the history converted to LangChain messages."""
    prepare = peer_strategies()[0].prepare
    history, step = prepare(json.loads(json.dumps(RUNS[1].messages)), "openai_chat")
    assert type(history[0]).__module__.startswith("langchain_core")
    assert callable(step)


@pytest.mark.shared
def test_default_is_the_cheapest_on_every_shared_source():
    """On every recorder's runs the cache-aware default costs no more than any strategy."""
    runs = sample(
        load_transcripts(shared_data() / "transcripts"), key=lambda run: run.source, per_group=8
    )
    result = compare(runs, published_strategies())
    for group, rows in result.groups.items():
        cheapest = min(t.cost_ratio for t in rows.values())
        assert rows["slimtools default"].cost_ratio <= cheapest + 1e-9, group
        assert rows["slimtools default"].cost_ratio <= 1.0, group


def test_peers_command_prints_every_published_strategy_on_given_transcripts(tmp_path, capsys):
    """`python -m benchmarks.peers PATH` replays the user's transcripts under every strategy."""
    write_run(tmp_path)
    assert peers_main([str(tmp_path), "--cache", "openai"]) == 0
    out = capsys.readouterr().out
    assert "ALL: 1 runs, 9 model calls" in out
    assert "cache openai" in out
    for strategy in published_strategies():
        assert strategy.label in out


def test_peers_command_without_transcripts_fails_cleanly(tmp_path, capsys):
    """No transcript under the paths: exit 1 and one line on stderr."""
    assert peers_main([str(tmp_path)]) == 1
    assert capsys.readouterr().err == "peers: no transcripts found\n"


def test_peers_command_refuses_an_unknown_cache_preset(tmp_path, capsys):
    """An unknown --cache is a usage error (exit 2) naming the presets, not a traceback."""
    with pytest.raises(SystemExit) as exc:
        peers_main([str(tmp_path), "--cache", "azure"])
    assert exc.value.code == 2
    assert "anthropic-1h" in capsys.readouterr().err
