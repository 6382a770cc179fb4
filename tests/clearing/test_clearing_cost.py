"""Cache-aware clearing: clear only what pays for itself, and whatever the window needs."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.peers.ledger import measure_steps
from slimtools.clearing import CachePricing, Clearer, ClearingPolicy, clear_stale_results, view
from slimtools.clearing.pricing import PRESETS, calls_ahead
from slimtools.compaction import history_tokens
from slimtools.ledger import TokenLedger, round_starts
from tests._profile import examples
from tests.clearing.strategies_clearing import FORMATS, policies, render, turns

SETTINGS = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def chat(results: list[str], tools: tuple[str, ...] = ("search_logs",)) -> list[dict]:
    """An OpenAI chat run: a task, then one call per result (of ``tools`` in turn)."""
    history: list[dict] = [{"role": "user", "content": "investigate"}]
    for i, text in enumerate(results):
        name = tools[i % len(tools)]
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps({"q": i})},
        }
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": text})
    return history


def cleared(history: list) -> list[bool]:
    return [r.cleared for r in view(history).results]


def test_default_leaves_a_run_alone_when_clearing_would_not_pay():
    """Small results under a long cached suffix: the rewrite would cost more than it saves."""
    history = chat(["x" * 400] * 8)
    assert not any(cleared(clear_stale_results(history)))


def test_turn_end_clearing_clears_the_same_run_without_a_cache_model():
    """``cache=None`` clears every stale result, as the design article's turn-end clearing."""
    history = chat(["x" * 400] * 8)
    assert (
        cleared(clear_stale_results(history, ClearingPolicy(cache=None)))
        == [True] * 6 + [False] * 2
    )


def test_default_clears_a_large_result_that_pays_back_within_the_horizon():
    """A 40,000-character result followed by small ones is worth a rewrite after a few calls."""
    history = chat(["y" * 40_000, *["x" * 200] * 7])
    assert cleared(clear_stale_results(history))[0] is True


def test_default_waits_for_a_young_run_to_show_it_will_go_on():
    """Three calls in, a result that pays back in about four calls is kept."""
    history = chat(["y" * 6_000, "x" * 1_200, "x" * 1_200])
    assert cleared(clear_stale_results(history)) == [False, False, False]


def test_default_clears_the_same_result_once_the_run_has_gone_on():
    """One call later the run's age covers the payback: the stale results go."""
    history = chat(["y" * 6_000, "x" * 1_200, "x" * 1_200, "x" * 1_200])
    assert cleared(clear_stale_results(history)) == [True, True, False, False]


def test_default_horizon_lets_a_long_run_clear_what_pays_back_within_the_horizon():
    """Twenty calls in, stale 200-token results that pay back in about ten calls go."""
    history = chat(["x" * 800] * 20)
    assert cleared(clear_stale_results(history)) == [True] * 18 + [False] * 2


def test_default_horizon_still_bounds_what_a_long_run_counts_on():
    """The run's age is the estimate of what is left, up to the 18-call bound."""
    assert calls_ahead(9, None, ClearingPolicy().pricing.horizon) == 9
    assert calls_ahead(100, None, ClearingPolicy().pricing.horizon) == 18


SHELL_RUN = ["y" * 6_000, *["x" * 1_200] * 4]
"""Five calls: a large first result, then enough after it that clearing it pays back only
after more calls than the run's age (five) but fewer than the horizon."""


def test_a_young_shell_agent_run_clears_what_pays_back_within_the_horizon():
    """Five calls in, all to ``bash``: the run is trusted to go on, the stale results go."""
    assert cleared(clear_stale_results(chat(SHELL_RUN, ("bash",))))[:2] == [True, True]


def test_the_same_young_run_waits_when_not_every_tool_is_a_command():
    """A ``read_file`` among the calls: only the run's age (five) counts, and that is short."""
    history = chat(SHELL_RUN, ("bash", "read_file"))
    assert not any(cleared(clear_stale_results(history)))


def test_a_tool_of_another_kind_ends_the_shell_evidence_even_before_its_result_is_due():
    """A ``read_file`` result the keep window still protects already counts against it."""
    history = chat(SHELL_RUN, ("bash",) * 4 + ("read_file",))
    assert not any(cleared(clear_stale_results(history)))


def test_reset_forgets_the_tools_of_the_previous_run():
    """After ``reset()`` a shell run is judged by its own tools, not the last run's."""
    clearer = Clearer()
    clearer.clear(chat(SHELL_RUN, ("bash", "read_file")))
    clearer.reset()
    assert cleared(clearer.clear(chat(SHELL_RUN, ("bash",))))[0] is True


def test_a_shell_agent_clears_a_persisted_history_as_the_incremental_clearer_does():
    """Round by round, one pass over the persisted history matches the incremental clearer."""
    history = chat(SHELL_RUN, ("bash",))
    clearer, persisted = Clearer(), []
    for end in range(2, len(history) + 1):
        persisted = clear_stale_results(persisted + history[len(persisted) : end])
        assert clearer.clear(history[:end]) == persisted
    assert cleared(persisted)[0] is True


def test_expected_calls_lets_a_known_long_run_clear_early():
    """Told the run will make 50 calls, the young run clears at once."""
    history = chat(["y" * 6_000, "x" * 1_200, "x" * 1_200])
    assert cleared(Clearer(expected_calls=50).clear(history))[0] is True


def test_expected_calls_near_the_end_keeps_what_would_not_pay():
    """Told this is the run's last call, nothing that costs a rewrite is worth clearing."""
    history = chat(["y" * 4_000, *["x" * 2_000] * 7])
    policy = ClearingPolicy(cache=CachePricing(0.1, 1.25, horizon=None))
    assert not any(cleared(Clearer(policy, expected_calls=8).clear(history)))


def test_window_guard_clears_whatever_the_cache_says():
    """Over max_context_tokens, stale results go even when the rewrite does not pay."""
    history = chat(["x" * 400] * 8)
    policy = ClearingPolicy(max_context_tokens=500)
    out = clear_stale_results(history, policy)
    assert any(cleared(out))
    assert history_tokens(out) < history_tokens(history)


def test_window_guard_never_clears_what_retention_protects():
    """The guard overrides the economics, not the keep window."""
    history = chat(["x" * 400] * 8)
    policy = ClearingPolicy(max_context_tokens=1)
    assert cleared(clear_stale_results(history, policy))[-2:] == [False, False]


def test_report_names_where_the_cache_breaks():
    """A cache-aware clear reports the first message it changed."""
    history = chat(["y" * 40_000, *["x" * 200] * 7])
    _, report = Clearer().clear_with_report(history)
    assert report.first_changed == 2  # the first tool message


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(
    script=turns(),
    policy=policies,
    cache=st.sampled_from(["anthropic", "anthropic-1h", "openai"]),
)
def test_knowing_the_runs_length_clearing_never_costs_more(fmt, script, policy, cache):
    """Told the replayed run's calls (``expected_calls``), clearing never raises the cached
    bill."""
    history = render(fmt, script)
    calls = len(round_starts(history, fmt))
    policy = policy.replace(cache=cache, max_context_tokens=None)
    clearer = Clearer(policy, format=fmt, expected_calls=max(1, calls), observed=False)
    plain = TokenLedger.measure(history, format=fmt, cache=cache).summary
    slim = measure_steps(history, clearer.clear, format=fmt, cache=cache).summary
    pricing = PRESETS[cache]
    assert pricing is not None
    exact = pricing.cost(slim.cache_read, slim.cache_write)
    assert exact <= pricing.cost(plain.cache_read, plain.cache_write) + 1e-6


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(script=turns(), policy=policies, limit=st.integers(1, 6_000))
def test_window_guard_holds_the_history_under_the_limit_when_enough_is_clearable(
    fmt, script, policy, limit
):
    """If clearing everything clearable fits, the guarded history fits too."""
    history = render(fmt, script)
    everything = policy.replace(
        cache=None, max_context_tokens=None, trigger=None, clear_at_least=None
    )
    guarded = policy.replace(max_context_tokens=limit)
    if history_tokens(clear_stale_results(history, everything), format=fmt) <= limit:
        assert history_tokens(clear_stale_results(history, guarded), format=fmt) <= limit


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(script=turns(), policy=policies)
def test_the_cache_decides_whether_never_what(fmt, script, policy):
    """A cache-aware clear only ever takes results that turn-end clearing would take."""
    history = render(fmt, script)
    turn_end = policy.replace(cache=None, max_context_tokens=None)
    allowed = {r.call_id for r in view(clear_stale_results(history, turn_end)).results if r.cleared}
    aware = policy.replace(max_context_tokens=None)
    taken = {r.call_id for r in view(clear_stale_results(history, aware)).results if r.cleared}
    assert taken <= allowed
