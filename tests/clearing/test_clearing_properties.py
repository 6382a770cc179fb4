"""Hypothesis properties of clearing, over random histories in every format."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slimtools.clearing import (
    Clearer,
    ClearingPolicy,
    MemoryAudit,
    clear_stale_results,
    clear_with_report,
    restore,
    view,
)
from slimtools.tokens import count_tokens
from tests._profile import examples
from tests.clearing.strategies_clearing import FORMATS, policies, render, turns

SETTINGS = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
fmt_param = pytest.mark.parametrize("fmt", FORMATS)


@fmt_param
@SETTINGS
@given(case=st.tuples(turns(), policies))
def test_pairing_and_order_preserved(fmt, case):
    """Every call keeps exactly its results, at the same positions, nothing added or removed."""
    script, policy = case
    history = render(fmt, script)
    out = clear_stale_results(history, policy)
    before, after = view(history), view(out)
    assert len(out) == len(history)
    assert [(r.call_id, r.position) for r in after.results] == [
        (r.call_id, r.position) for r in before.results
    ]
    assert [(c.id, c.name, c.position) for c in after.calls] == [
        (c.id, c.name, c.position) for c in before.calls
    ]


@fmt_param
@SETTINGS
@given(case=st.tuples(turns(), policies))
def test_clearing_is_idempotent(fmt, case):
    """Clearing a cleared history changes nothing."""
    script, policy = case
    once = clear_stale_results(render(fmt, script), policy)
    assert clear_stale_results(once, policy) == once


@fmt_param
@SETTINGS
@given(script=turns(), policy=policies)
def test_keep_window_and_excluded_untouched(fmt, script, policy):
    """Results of the last keep_turns turns and of excluded tools keep their text and inputs
    (under ``supersede``, a result of the window that a newer one superseded may go)."""
    history = render(fmt, script)
    before, after = view(history), view(clear_stale_results(history, policy))
    protected = {
        r.call_id
        for r in before.results
        if before.turns - r.turn < policy.keep_turns
        or policy.turns_to_keep(r.name or "tool") is None
    }
    superseded = set()
    for old, new in zip(before.results, after.results, strict=True):
        if old.call_id in protected and new.text != old.text:
            assert policy.supersede
            assert policy.turns_to_keep(old.name or "tool") is not None
            assert "; superseded by the result of turn " in new.text
            superseded.add(old.call_id)
    for old_call, new_call in zip(before.calls, after.calls, strict=True):
        if old_call.id in protected - superseded:
            assert new_call.args == old_call.args


@fmt_param
@SETTINGS
@given(script=turns(), policy=policies)
def test_input_history_not_mutated(fmt, script, policy):
    """The caller's list and messages are left exactly as they were."""
    history = render(fmt, script)
    snapshot = copy.deepcopy(history)
    clear_stale_results(history, policy)
    assert history == snapshot


@fmt_param
@SETTINGS
@given(script=turns(), policy=policies)
def test_placeholders_are_smaller_and_recognised(fmt, script, policy):
    """Each replaced result reads as cleared, holds no media, and is smaller than before:
    shorter text, or (a result that held images or documents) fewer tokens."""
    history = render(fmt, script)
    before, after = view(history), view(clear_stale_results(history, policy))
    for old, new in zip(before.results, after.results, strict=True):
        if new.text != old.text or new.media != old.media:
            assert new.cleared
            assert not new.media
            if old.media:
                assert count_tokens(new.text) < count_tokens(old.text) + old.media_tokens
            else:
                assert len(new.text) < len(old.text)


@fmt_param
@SETTINGS
@given(case=st.tuples(turns(), policies))
def test_rewritten_arguments_keep_their_shape(fmt, case):
    """Every call keeps a JSON object: its own arguments, or blanked ({}) when the policy
    blanks that tool's inputs."""
    script, policy = case
    history = render(fmt, script)
    before, after = view(history).calls, view(clear_stale_results(history, policy)).calls
    for old, new in zip(before, after, strict=True):
        assert new.args == old.args or (new.args == {} and policy.clears_inputs_of(old.name))


@fmt_param
@SETTINGS
@given(case=st.tuples(turns(), policies))
def test_restore_undoes_clearing(fmt, case):
    """restore(clear(h)) == h with the audit that saw the originals."""
    script, policy = case
    history = render(fmt, script)
    audit = MemoryAudit()
    assert restore(clear_stale_results(history, policy, audit=audit), audit) == history


@fmt_param
@SETTINGS
@given(script=turns(), policy=policies, persisted=st.booleans())
def test_incremental_clearing_is_monotone(fmt, script, policy, persisted):
    """Fed a growing history, the Clearer never un-clears a result."""
    history = render(fmt, script)
    clearer, cleared, current = Clearer(policy), set(), []
    for message in history:
        current = [*current, message] if persisted else history[: len(current) + 1]
        out = clearer.clear(current)
        now = {r.call_id for r in view(out).results if r.cleared}
        assert cleared <= now
        cleared = now
        if persisted:
            current = out


@fmt_param
@SETTINGS
@given(case=st.tuples(turns(), policies))
def test_incremental_equals_one_pass_without_trigger(fmt, case):
    """Without cache model, trigger or minimum, clearing round by round ends where one pass does."""
    script, policy = case
    policy = policy.replace(trigger=None, clear_at_least=None, cache=None)
    history = render(fmt, script)
    clearer = Clearer(policy)
    for end in range(1, len(history) + 1):
        out = clearer.clear(history[:end])
    if history:
        assert out == clear_stale_results(history, policy)


@fmt_param
@SETTINGS
@given(script=turns(), policy=policies)
def test_round_by_round_reports_add_up_to_the_one_pass_report(fmt, script, policy):
    """Clearing round by round reports the same clears and savings, in total, as one pass."""
    policy = policy.replace(trigger=None, clear_at_least=None, cache=None)
    history = render(fmt, script)
    clearer = Clearer(policy)
    reports = [clearer.clear_with_report(history[:end])[1] for end in range(1, len(history) + 1)]
    whole = clear_with_report(history, policy)[1]
    assert sum(r.cleared_tool_uses for r in reports) == whole.cleared_tool_uses
    assert sum(r.cleared_input_tokens for r in reports) == whole.cleared_input_tokens
    assert sum(r.cleared_inputs for r in reports) == whole.cleared_inputs
    assert sorted(i for r in reports for i in r.cleared_call_ids) == sorted(whole.cleared_call_ids)
    if reports:
        assert reports[-1].tokens_after == whole.tokens_after


@SETTINGS
@given(script=turns(max_turns=6))
def test_default_policy_never_crashes_on_any_format_guess(script):
    """A history cleared under a wrong format name is returned unchanged, not crashed on."""
    history = render("anthropic", script)
    for fmt in FORMATS:
        if fmt != "anthropic":
            assert clear_stale_results(history, ClearingPolicy(), format=fmt) == history
