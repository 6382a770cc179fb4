"""The numbers a ClearingPass carries, on scripted histories in every format."""

from __future__ import annotations

import pytest

import slimtools
from slimtools.clearing import Clearer, ClearingPolicy
from slimtools.instrumentation import ClearingPass
from tests.clearing.strategies_clearing import FORMATS, render, script

FLAT = ClearingPolicy(cache=None, retention={})  # only keep_turns applies
fmt_param = pytest.mark.parametrize("fmt", FORMATS)


def passes_while_growing(policy: ClearingPolicy, history: list) -> list[ClearingPass]:
    """Clear in place before each message is appended, as an agent loop would; the events."""
    heard: list[ClearingPass] = []
    clearer = Clearer(policy, on_event=heard.append)
    growing: list = []
    for message in history:
        growing.append(message)
        clearer.clear_in_place(growing)
    return heard


@fmt_param
def test_a_pass_reports_what_its_report_says(fmt):
    """One pass over five turns: the counts, tokens and first change of ``ClearingReport``."""
    heard = []
    history = render(fmt, script("t", "t", "t", "t", "t"))
    cleared, report = Clearer(FLAT, on_event=heard.append).clear_with_report(history)
    (event,) = heard
    assert event.format == fmt
    assert event.messages == len(cleared)
    assert (event.cleared, event.inputs_cleared) == (3, 0)
    assert event.cleared_call_ids == report.cleared_call_ids == ("call_0", "call_1", "call_2")
    assert (event.tokens_before, event.tokens_after) == (report.tokens_before, report.tokens_after)
    assert event.tokens_saved == report.cleared_input_tokens > 0
    assert event.first_changed == report.first_changed
    assert event.start_ns <= event.end_ns


def test_a_pass_that_clears_nothing_breaks_no_cache():
    """Nothing stale: zero cleared, no first change, no cache break, tokens unchanged."""
    heard = []
    Clearer(FLAT, on_event=heard.append).clear(render("anthropic", script("t")))
    (event,) = heard
    assert (event.cleared, event.first_changed, event.cache_broken) == (0, None, False)
    assert event.tokens_before == event.tokens_after


def test_a_first_pass_that_rewrites_counts_as_a_cache_break():
    """A clearer's first call cannot know the previous request: any rewrite is a break."""
    heard = []
    Clearer(FLAT, on_event=heard.append).clear(render("openai_chat", script(*"tttt")))
    assert heard[0].first_changed is not None
    assert heard[0].cache_broken


@fmt_param
def test_clearing_a_result_the_previous_request_held_breaks_the_cache(fmt):
    """Two turns kept: each clear rewrites a result the model already saw, so a break."""
    events = passes_while_growing(FLAT, render(fmt, script(*"ttttt")))
    clears = [e for e in events if e.cleared]
    assert clears
    assert all(e.cache_broken and e.first_changed < e.messages - 1 for e in clears)
    assert not any(e.cache_broken for e in events if not e.cleared)


@fmt_param
def test_clearing_only_messages_appended_since_the_last_call_breaks_nothing(fmt):
    """No turn kept: a result cleared as soon as it arrives was never cached, so no break."""
    events = passes_while_growing(FLAT.replace(keep_turns=0), render(fmt, script(*"ttttt")))
    clears = [e for e in events if e.cleared]
    assert len(clears) == 5
    assert not any(e.cache_broken for e in events)


def test_the_bound_session_is_reported():
    """A pass inside ``slimtools.session(...)`` names it; outside, None."""
    heard = []
    with slimtools.session("user-42"):
        Clearer(FLAT, on_event=heard.append).clear(render("langchain", script("t")))
    Clearer(FLAT, on_event=heard.append).clear(render("langchain", script("t")))
    assert [e.session for e in heard] == ["user-42", None]


def test_blanked_arguments_are_counted_with_their_saving():
    """``clear_tool_inputs``: the calls whose arguments were blanked are counted."""
    heard = []
    history = render("openai_chat", script(*"tttt"))
    clearer = Clearer(FLAT.replace(clear_tool_inputs=True), on_event=heard.append)
    _, report = clearer.clear_with_report(history)
    assert heard[0].inputs_cleared == report.cleared_inputs == 2
    assert heard[0].tokens_saved == report.cleared_input_tokens
