"""Cache prices and the rule that decides whether clearing pays under them."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.clearing import Clearer, ClearingPolicy
from slimtools.clearing._plan import Candidates
from slimtools.clearing._savings import SavingsIndex
from slimtools.clearing.pricing import (
    DEFAULT_HORIZON,
    PRESETS,
    CachePricing,
    calls_ahead,
)
from slimtools.errors import ConfigurationError
from tests._profile import examples

ANTHROPIC = CachePricing(read=0.1, write=1.25)


def flat(tokens_per_message: int):
    """``tokens_before`` for a history whose messages each hold this many tokens."""
    return lambda position: position * tokens_per_message


def test_presets_carry_the_documented_prices():
    """Anthropic 5-minute and 1-hour, OpenAI and Gemini, as their pricing pages give them."""
    assert (PRESETS["anthropic"].read, PRESETS["anthropic"].write) == (0.1, 1.25)
    assert (PRESETS["anthropic-1h"].read, PRESETS["anthropic-1h"].write) == (0.1, 2.0)
    assert (PRESETS["openai"].read, PRESETS["openai"].write) == (0.1, 1.0)
    assert (PRESETS["gemini"].read, PRESETS["gemini"].write) == (0.1, 1.0)


def test_the_none_preset_means_no_caching():
    """``preset("none")`` is None: every token at the input price."""
    assert CachePricing.preset("none") is None


def test_an_unknown_preset_names_the_known_ones():
    """A typo gets a ConfigurationError listing every preset."""
    with pytest.raises(ConfigurationError, match="anthropic-1h"):
        CachePricing.preset("antropic")


def test_negative_prices_are_refused():
    """Prices are multiples of the input price, never negative."""
    with pytest.raises(ConfigurationError, match="read"):
        CachePricing(read=-0.1)


def test_a_read_dearer_than_a_write_is_refused():
    """A cache hit never costs more than a miss."""
    with pytest.raises(ConfigurationError, match="never costs more"):
        CachePricing(read=1.5, write=1.0)


def test_rewrite_is_write_minus_read():
    """What re-sending a cached token costs more after a rewrite before it."""
    assert ANTHROPIC.rewrite == pytest.approx(1.15)


def test_cost_prices_reads_and_writes():
    """One request's price in input-token equivalents."""
    assert ANTHROPIC.cost(1_000, 100) == pytest.approx(100 + 125)


def test_policy_defaults_to_anthropic_five_minute_prices():
    """The most cautious preset (highest write premium) is the default."""
    assert ClearingPolicy().pricing == PRESETS["anthropic"]


def test_policy_takes_a_preset_name():
    """``cache="openai"`` resolves to the OpenAI preset."""
    assert ClearingPolicy(cache="openai").cache == PRESETS["openai"]


def test_policy_cache_none_means_turn_end_clearing():
    """``cache=None`` keeps no price model."""
    assert ClearingPolicy(cache=None).pricing is None


def test_policy_refuses_a_cache_of_the_wrong_type():
    """A number is neither a price model nor a preset name."""
    with pytest.raises(ConfigurationError, match="cache must be"):
        ClearingPolicy(cache=0.1)  # type: ignore[arg-type]


def test_from_anthropic_mirrors_the_server_without_cache_economics():
    """Anthropic's server-side edit has no price model: from_anthropic() has none either."""
    assert ClearingPolicy.from_anthropic().pricing is None


def test_counts_must_be_positive():
    """max_context_tokens, a horizon and expected_calls are None or >= 1."""
    with pytest.raises(ConfigurationError, match="max_context_tokens"):
        ClearingPolicy(max_context_tokens=0)
    with pytest.raises(ConfigurationError, match="horizon"):
        CachePricing(0.1, 1.25, horizon=0)
    with pytest.raises(ConfigurationError, match="expected_calls"):
        Clearer(expected_calls=0)


def test_calls_ahead_counts_what_is_left_of_expected_calls():
    """A run expected to make 20 calls, 12 made, has 8 left (this one included)."""
    assert calls_ahead(12, 20, DEFAULT_HORIZON) == 8


def test_calls_ahead_is_at_least_this_call():
    """Past the expected length the clear still serves the call about to be made."""
    assert calls_ahead(30, 20, DEFAULT_HORIZON) == 1


def test_calls_ahead_trusts_a_young_run_only_as_far_as_its_age():
    """Three calls made: three more expected, below the horizon."""
    assert calls_ahead(3, None, 6) == 3


def test_calls_ahead_never_counts_past_the_horizon():
    """Forty calls made: the saving is counted over six calls only."""
    assert calls_ahead(40, None, 6) == 6


@given(horizon=st.integers(1, 500), older=st.integers(0, 10_000), commands_only=st.booleans())
def test_calls_ahead_past_the_horizon_is_the_horizon_for_every_run(
    horizon: int, older: int, commands_only: bool
) -> None:
    """A run at least ``horizon`` calls old is counted over ``horizon`` calls, shell or not
    (the per-round clearer skips the shell check on that ground: ``_deciding._decide``)."""
    turns = horizon + older
    assert calls_ahead(turns, None, horizon, commands_only=commands_only) == horizon


def test_calls_ahead_without_horizon_is_the_runs_age():
    """``horizon=None``: a run is expected to last as long again."""
    assert calls_ahead(40, None, None) == 40


def test_calls_ahead_trusts_a_shell_agents_young_run_for_the_whole_horizon():
    """Three calls made, all of them commands: the run is expected to last the horizon."""
    assert calls_ahead(3, None, 18, commands_only=True) == 18


def test_calls_ahead_of_a_shell_agent_never_counts_past_the_horizon():
    """Forty commands made: still the horizon, not the run's age."""
    assert calls_ahead(40, None, 18, commands_only=True) == 18


def test_calls_ahead_of_a_shell_agent_without_horizon_is_the_runs_age():
    """``horizon=None`` has no bound to trust a shell agent for: age alone."""
    assert calls_ahead(3, None, None, commands_only=True) == 3


def test_calls_ahead_prefers_expected_calls_to_the_shell_evidence():
    """A run's known length wins over what its tools suggest."""
    assert calls_ahead(12, 20, 18, commands_only=True) == 8


def test_default_horizon_is_eighteen_calls():
    """The measured default bound (bench_clearing section (e)) is 18 calls."""
    assert DEFAULT_HORIZON == 18 == ClearingPolicy().pricing.horizon


def test_plan_clears_when_the_saving_outweighs_the_rewrite():
    """1,000 tokens cleared with 1,100 cached after them pay back in 1.15 calls: clear."""
    cut = choose([(10, 1_000)], flat(100), cache_end=21, calls=6, pricing=ANTHROPIC)
    assert cut == 0


def test_plan_keeps_when_the_rewrite_outweighs_the_saving():
    """100 tokens cleared under 10,000 cached tokens would take 1,139 calls to pay back."""
    cut = choose([(0, 100)], flat(100), cache_end=100, calls=6, pricing=ANTHROPIC)
    assert cut is None


def test_plan_picks_the_cut_with_the_largest_net_saving():
    """An old small result is left when clearing it would rewrite much more than it saves."""
    candidates = [(0, 50), (90, 800)]  # a small old result, a big recent one
    cut = choose(candidates, flat(10), cache_end=100, calls=6, pricing=ANTHROPIC)
    assert cut == 1


def test_plan_respects_clear_at_least():
    """A cut that pays but saves less than clear_at_least is not made."""
    cut = choose([(10, 1_000)], flat(100), cache_end=21, calls=6, pricing=ANTHROPIC, at_least=2_000)
    assert cut is None


def test_plan_clears_whatever_is_needed_under_the_window_guard():
    """Over the window, the economics give way: the result that frees enough goes."""
    cut = choose(
        [(0, 100), (50, 300)], flat(100), cache_end=100, calls=1, pricing=ANTHROPIC, need=250
    )
    assert cut == 1  # the recent result alone frees 300 and rewrites less


def test_plan_clears_everything_when_nothing_frees_enough():
    """Over the window with too little clearable: everything clearable goes."""
    cut = choose(
        [(0, 100), (50, 300)], flat(100), cache_end=100, calls=1, pricing=ANTHROPIC, need=10**6
    )
    assert cut == 0


def test_plan_has_nothing_to_do_without_candidates():
    """No clearable result: no cut."""
    assert choose([], flat(1), cache_end=0, calls=6, pricing=ANTHROPIC) is None


_candidates = st.lists(
    st.tuples(st.integers(0, 60), st.integers(1, 400)), min_size=0, max_size=12
).map(sorted)


@settings(max_examples=examples(300), deadline=None)
@given(
    candidates=_candidates,
    per_message=st.integers(1, 300),
    cache_end=st.integers(0, 70),
    calls=st.integers(1, 40),
    pricing=st.sampled_from([p for p in PRESETS.values() if p is not None]),
    at_least=st.integers(0, 1_500),
    need=st.sampled_from([0, 0, 1, 200, 5_000]),
)
def test_incremental_candidates_choose_what_plan_clear_chooses(
    candidates, per_message, cache_end, calls, pricing, at_least, need
):
    """The engine's O(log n) planner picks a cut worth exactly what the reference rule picks."""
    tokens_before = _history(candidates, per_message)
    reference = plan_clear(
        candidates, tokens_before, cache_end, calls, pricing, at_least=at_least, need=need
    )
    plan = Candidates()
    for i in sorted(range(len(candidates)), key=lambda i: -i % 3):  # out of order, too
        position, saving = candidates[i]
        plan.add(i, position, saving, tokens_before(position))
    cut = plan.choose(
        cache_end, tokens_before(cache_end), calls, pricing, at_least=at_least, need=need
    )
    assert (cut is None) == (reference is None)
    if cut is not None and reference is not None:
        value = _value(candidates, tokens_before, cache_end, calls, pricing)
        assert value(cut) == pytest.approx(value(reference), abs=1e-6)


def _history(candidates, per_message):
    """``tokens_before`` of a history whose messages hold their candidates' savings and more
    (a saving never exceeds the tokens of the message it is taken from)."""
    sizes = [per_message] * 80
    for position, saving in candidates:
        sizes[position] += saving
    starts = [0]
    for size in sizes:
        starts.append(starts[-1] + size)
    return starts.__getitem__


def _value(candidates, tokens_before, cache_end, calls, pricing):
    """The net saving of cutting at ``j``, computed as plan_clear states it."""

    def value(j: int) -> float:
        cut = candidates[j:]
        saved = sum(s for _, s in cut)
        cached = sum(s for p, s in cut if p < cache_end)
        position = candidates[j][0]
        suffix = tokens_before(cache_end) - tokens_before(position) if position < cache_end else 0
        return pricing.read * saved * calls - pricing.rewrite * max(0, suffix - cached)

    return value


@settings(max_examples=examples(200), deadline=None)
@given(
    first=st.lists(st.tuples(st.integers(0, 100), st.integers(0, 500)), max_size=12),
    batch=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 500)), max_size=20),
)
def test_extending_by_columns_files_what_adding_one_by_one_files(first, batch):
    """A sorted batch filed at once leaves the same candidates and prefix sums as one add each."""
    batch = sorted(batch)
    bulk, single = Candidates(), Candidates()
    for plan in (bulk, single):
        for i, (position, saving) in enumerate(first):
            plan.add(i, position, saving, position * 3)
    items = [100 + i for i in range(len(batch))]
    positions = [position for position, _ in batch]
    bulk.extend(items, positions, [s for _, s in batch], [p * 3 for p in positions])
    for item, (position, saving) in zip(items, batch, strict=True):
        single.add(item, position, saving, position * 3)
    for column in ("items", "positions", "savings", "before", "prefix", "total"):
        assert getattr(bulk, column) == getattr(single, column), column


def test_taking_a_cut_leaves_the_earlier_candidates_ready():
    """After a cut the remaining candidates keep their prefix sums and can be chosen later."""
    plan = Candidates()
    for position in (10, 20, 30):
        plan.add(position, position, 100, position * 10)
    assert plan.take(2) == [30]
    assert len(plan) == 2
    assert plan.total == 200


_savings_steps = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 300), st.integers(-50, 500)),
        st.tuples(st.just("many"), st.lists(st.tuples(st.integers(0, 300), st.integers(0, 500)))),
        st.tuples(st.just("before"), st.integers(0, 400)),
    ),
    max_size=40,
)


@settings(max_examples=examples(200), deadline=None)
@given(steps=_savings_steps)
def test_savings_index_sums_what_was_saved_before_a_position(steps):
    """Property: however additions and prefix sums interleave (the tree built on the first
    sum, then grown past its size), each sum is the plain sum of what was saved before."""
    index, saved = SavingsIndex(), []
    for step in steps:
        if step[0] == "add":
            index.add_many([(step[1], step[2])])
            saved.append(step[1:])
        elif step[0] == "many":
            index.add_many(step[1])
            saved += step[1]
        else:
            assert index.before(step[1]) == sum(s for p, s in saved if p < step[1])
    assert index.total == sum(s for _, s in saved)


def test_savings_index_takes_any_counters_numbers():
    """Savings that are not machine integers (a counter giving floats, or huge counts) are
    summed exactly as before, once the index holds machine integers already."""
    index = SavingsIndex()
    index.add_many([(3, 100)])
    assert index.before(3) == 0  # the tree is built (3 is not past every saving), of machine ints
    index.add_many([(5, 2.5)])  # type: ignore[list-item]
    index.add_many([(200, 10**30)])
    assert index.before(6) == 102.5
    assert index.before(201) == 10**30 + 102.5


def choose(
    candidates: list[tuple[int, int]],
    tokens_before: Callable[[int], int],
    cache_end: int,
    calls: int,
    pricing: CachePricing,
    *,
    at_least: int = 0,
    need: int = 0,
) -> int | None:
    """The engine's cut (``Candidates.choose``) over ``(position, saving)`` pairs, filed as
    the engine files them."""
    plan = Candidates()
    for i, (position, saving) in enumerate(candidates):
        plan.add(i, position, saving, tokens_before(position))
    return plan.choose(
        cache_end, tokens_before(cache_end), calls, pricing, at_least=at_least, need=need
    )


def plan_clear(
    candidates: list[tuple[int, int]],
    tokens_before: Callable[[int], int],
    cache_end: int,
    calls: int,
    pricing: CachePricing,
    *,
    at_least: int = 0,
    need: int = 0,
) -> int | None:
    """The reference statement of the cache-aware cut, which ``Candidates.choose`` is held
    to: the index of the first candidate to clear, or ``None``.

    ``candidates`` are ``(position, saving)`` pairs sorted by position: where clearing a
    result first changes the history, and the tokens it saves. Clearing every candidate from
    index ``j`` on saves ``k`` tokens and rewrites the cached suffix that starts at the first
    change: ``S`` tokens of the previous request, after the candidate's position and before
    ``cache_end``, of which ``S - k`` survive and must be written again instead of read.
    That costs ``(write - read) * (S - k)`` once and saves ``read * k`` on each of the
    ``calls`` requests that read the smaller history. The cut with the largest net saving
    is chosen when it is positive (and saves at least ``at_least``).

    With ``need > 0`` (the history is over the window) the economics give way: the best cut
    that saves at least ``need`` tokens is chosen whatever it costs, or every candidate when
    none saves that much.

    Args:
        candidates: ``(position, saving)`` pairs, sorted by position.
        tokens_before: ``position -> tokens of the current history before it``.
        cache_end: the position where the previous request (the cached prefix) ended.
        calls: requests that will read the cleared history (see :func:`calls_ahead`).
        pricing: the cache prices.
        at_least: the smallest saving worth a rewrite (``clear_at_least``).
        need: tokens that must go now; 0 when the window is not at stake.
    """
    if not candidates:
        return None
    cached_tokens = tokens_before(cache_end)
    read, rewrite = pricing.read, pricing.rewrite
    best: int | None = None
    best_value = 0.0
    fallback: int | None = None
    saved = saved_cached = 0
    for j in range(len(candidates) - 1, -1, -1):
        position, saving = candidates[j]
        saved += saving
        if position < cache_end:
            saved_cached += saving
        suffix = max(0, cached_tokens - tokens_before(position)) if position < cache_end else 0
        value = read * saved * calls - rewrite * max(0, suffix - saved_cached)
        if need:
            if saved >= need and (fallback is None or value > best_value):
                fallback, best_value = j, value
            continue
        if saved >= at_least and value > best_value:
            best, best_value = j, value
    if need:
        return 0 if fallback is None else fallback
    return best
