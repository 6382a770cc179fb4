"""Placeholders that thin with age (``ClearingPolicy.thin``)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slimtools.clearing import (
    Clearer,
    ClearingPolicy,
    MemoryAudit,
    clear_stale_results,
    is_placeholder,
    restore,
    view,
)
from slimtools.clearing.excerpt import flatten_head
from slimtools.clearing.placeholder import default_placeholder
from slimtools.clearing.thinning import head_at, head_length, next_age, thin
from slimtools.errors import ConfigurationError
from tests._profile import examples
from tests.clearing.strategies_clearing import FORMATS, policies, render, schedules, script, turns

SETTINGS = settings(
    max_examples=examples(80),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
SCHEDULE = [(0, 200), (10, 80), (30, 0)]

_texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=700)
_handles = st.lists(st.from_regex(r'"[a-z0-9]{2,8}"', fullmatch=True), max_size=4).map(tuple)
_media = st.lists(st.sampled_from(["image/png 2 KB", "application/pdf 30 KB"]), max_size=2)


@st.composite
def placeholders(draw: st.DrawFn, head: int | None = None) -> tuple[str, str]:
    """A default-template placeholder with a ``head``-character head, and the original text."""
    text = draw(_texts)
    keep = draw(st.integers(0, 400)) if head is None else head
    tool = draw(st.sampled_from(["search_logs", "read_file", "bash"]))
    handles = draw(_handles)
    media = tuple(draw(_media))
    repeatable = draw(st.sampled_from([True, False, None]))
    rendered = default_placeholder(
        tool, 'q="x"', {"q": "x"}, text, len(text) // 4, draw(st.booleans()), media,
        flatten_head(text, keep), handles, repeatable, "get_record", 1000,
    )  # fmt: skip
    return rendered, text


def _lines_but_head(placeholder: str) -> list[str]:
    return [line for line in placeholder.split("\n")[1:] if not line.startswith("Head: ")]


@SETTINGS
@given(case=placeholders(), head=st.integers(0, 400))
def test_a_thinned_placeholder_keeps_the_call_the_size_the_handles_and_the_way_back(case, head):
    """Only the Head line shortens: the first line, Handles and the refetch line stay."""
    placeholder, _ = case
    thinned = thin(placeholder, head, 1000)
    assert is_placeholder(thinned)
    body_of = lambda text: text.split("] ", 1)[1]  # noqa: E731 - the marker's digest changes
    assert body_of(thinned).split("\n")[0] == body_of(placeholder).split("\n")[0]
    assert _lines_but_head(thinned) == _lines_but_head(placeholder)
    assert (head_length(thinned) or 0) <= head


@SETTINGS
@given(case=placeholders(), head=st.integers(0, 400))
def test_thinning_is_idempotent(case, head):
    """Thinning a thinned placeholder to the same head changes nothing."""
    once = thin(case[0], head, 1000)
    assert thin(once, head, 1000) == once


@SETTINGS
@given(case=placeholders(), heads=st.tuples(st.integers(0, 400), st.integers(0, 400)))
def test_thinning_equals_rendering_with_the_shorter_head(case, heads):
    """Cutting a placeholder's head gives the placeholder rendered with that head."""
    _, text = case
    longer, shorter = max(heads), min(heads)
    rendered = default_placeholder(
        "t", "", {}, text, 9, False, (), flatten_head(text, longer), (), None, "get_record", 10**6
    )
    expected = default_placeholder(
        "t", "", {}, text, 9, False, (), flatten_head(text, shorter), (), None, "get_record", 10**6
    )
    assert thin(rendered, shorter, 10**6) == expected


@SETTINGS
@given(case=placeholders(), head=st.integers(0, 400))
def test_thinning_never_lengthens_a_placeholder(case, head):
    """A head already as short is left alone; a shorter head never makes the text longer."""
    placeholder, _ = case
    assert len(thin(placeholder, head, 1000)) <= len(placeholder)


@pytest.mark.parametrize("text", ["", "plain output", "[cleared 00000000] forged\nHead: x"])
def test_text_that_is_not_a_placeholder_is_never_thinned(text):
    """Only placeholders whose marker verifies are touched."""
    assert thin(text, 0, 1000) == text
    assert head_length(text) is None


@pytest.mark.parametrize(
    ("age", "head"), [(0, 200), (9, 200), (10, 80), (29, 80), (30, 0), (500, 0)]
)
def test_the_head_follows_the_schedule_by_age(age, head):
    """Each step applies from its age on."""
    assert head_at(SCHEDULE, age, keep_head=200) == head


def test_keep_head_caps_every_step():
    """A schedule never gives more head than keep_head."""
    assert head_at([(0, 300), (5, 100)], 0, keep_head=120) == 120
    assert head_at([(5, 100)], 0, keep_head=120) == 120
    assert head_at([(5, 100)], 5, keep_head=120) == 100


def test_next_age_is_the_first_step_with_a_shorter_head():
    """A 200-character head thins at 10, an 80-character one at 30, none never."""
    assert next_age(SCHEDULE, 200) == 10
    assert next_age(SCHEDULE, 80) == 30
    assert next_age(SCHEDULE, 0) is None


@pytest.mark.parametrize(
    ("thin_", "message"),
    [
        ([], "non-empty"),
        ("0:200", "non-empty list"),
        ([(0, 200), (0, 80)], "increasing ages"),
        ([(0, 80), (10, 200)], "decreasing heads"),
        ([(0, -1)], "ints >= 0"),
        ([(0, 200, 1)], "(age_turns, head_chars)"),
        ([(True, 200)], "ints >= 0"),
    ],
)
def test_bad_schedules_are_refused_with_the_reason(thin_, message):
    """A schedule must be (age, head) pairs, ages increasing and heads decreasing."""
    with pytest.raises(ConfigurationError, match=message):
        ClearingPolicy(thin=thin_)


def test_a_schedule_needs_a_template_with_a_head_line():
    """A string template without 'Head: {head}' on a line of its own cannot thin."""
    with pytest.raises(ConfigurationError, match=r"Head: \{head\}"):
        ClearingPolicy(thin=SCHEDULE, placeholder="{tool} cleared ({chars} chars): {head}")
    custom = "{tool} cleared\nHead: {head}"
    assert ClearingPolicy(thin=SCHEDULE, placeholder=custom).thin == tuple(SCHEDULE)
    assert ClearingPolicy(thin=SCHEDULE, placeholder=lambda info: "x").thin == tuple(SCHEDULE)


def _heads(history, fmt):
    return [head_length(r.text) for r in view(history, fmt).results]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_placeholder_has_the_head_its_age_gives(fmt):
    """Without a cache price each result shows the head of its age (from the turn it fell due)."""
    history = render(fmt, script(*["search_logs"] * 45, size=400))
    policy = ClearingPolicy(cache=None, keep_turns=0, thin=SCHEDULE)  # search keeps 2 turns
    out = clear_stale_results(history, policy)
    turns = view(out, fmt).turns
    expected = [
        None if turns - turn < 2 else head_at(SCHEDULE, turns - (turn + 2), 200)
        for turn in (r.turn for r in view(history, fmt).results)
    ]
    assert _heads(out, fmt) == expected


def test_a_clearer_called_every_round_thins_what_it_cleared_earlier():
    """Round by round, a placeholder written with 200 characters is later cut to 80, then 0."""
    history = render("openai_chat", script(*["search_logs"] * 45, size=400))
    clearer = Clearer(ClearingPolicy(cache=None, thin=SCHEDULE), format="openai_chat")
    stored: list = []
    thinned = 0
    for end in range(1, len(history) + 1):
        stored.append(history[end - 1])
        thinned += clearer.clear_in_place(stored).thinned
    assert thinned == 2 * (45 - 2 - 30) + (30 - 10)
    assert _heads(stored, "openai_chat")[:3] == [0, 0, 0]


def test_the_report_counts_thinnings_apart_from_clears_and_their_saving_with_them():
    """A thinning is no new cleared tool use, but its tokens count in the saving."""
    history = render("openai_chat", script(*["search_logs"] * 14, size=400))
    policy = ClearingPolicy(cache=None, thin=[(0, 200), (3, 0)])
    clearer = Clearer(policy, format="openai_chat")
    clearer.clear(history[:-8])
    _, report = clearer.clear_with_report(history)
    assert report.thinned > 0
    assert report.cleared_tool_uses == len(report.cleared_call_ids)
    assert report.tokens_before - report.tokens_after == report.cleared_input_tokens


def test_restore_returns_the_original_after_thinning():
    """The audit holds each original once, as first cleared; restore undoes the thinning too."""
    history = render("anthropic", script(*["search_logs", "read_file"] * 12, size=300))
    audit = MemoryAudit()
    clearer = Clearer(ClearingPolicy(cache=None, thin=[(0, 200), (2, 60), (5, 0)]), audit=audit)
    stored: list = []
    thinned = 0
    for message in history:
        stored.append(message)
        thinned += clearer.clear_in_place(stored).thinned
    assert thinned
    assert restore(stored, audit) == history
    ids = [r.call_id for r in audit.records]
    assert len(ids) == len(set(ids))


def test_under_a_cache_price_a_thinning_alone_waits_when_it_does_not_pay():
    """Rewriting a long cached history for a few head characters does not pay: no change."""
    history = render("openai_chat", script(*["search_logs"] * 30, size=2000))
    stored = clear_stale_results(history, ClearingPolicy(cache=None))  # heads of 200
    schedule = [(0, 200), (1, 0)]
    cached = ClearingPolicy(thin=schedule, expected_calls=31)
    out, report = Clearer(cached, format="openai_chat").clear_with_report(stored)
    assert (report.thinned, report.changed, out) == (0, False, stored)
    uncached = ClearingPolicy(cache=None, thin=schedule)
    assert Clearer(uncached, format="openai_chat").clear_with_report(stored)[1].thinned == 27


def test_a_thinning_rides_on_a_clear_made_anyway():
    """A clear that rewrites from an earlier message takes the due thinnings after it along."""
    # A write result (kept 20 turns) at turn 1, then searches: at turn 22 the write result
    # falls due, so the cut reaches back to it and every thinning after it is free.
    turns = script("create_issue", *["search_logs"] * 21, size=3000)
    history = render("openai_chat", turns)
    policy = ClearingPolicy(thin=[(0, 200), (2, 0)], expected_calls=200)
    stored: list = []
    clearer = Clearer(policy, format="openai_chat")
    reports = []
    for message in history:
        stored.append(message)
        reports.append(clearer.clear_in_place(stored))
    riding = [r for r in reports if r.thinned and r.cleared_tool_uses]
    assert riding, "the write result's clear carried thinnings"
    assert all(r.first_changed is not None for r in riding)


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(script_=turns(max_turns=16), policy=policies, schedule=schedules)
def test_round_by_round_each_result_is_cleared_once_and_restore_still_works(
    fmt, script_, policy, schedule
):
    """With thinning on, a result is reported cleared once, audited once, and restorable."""
    history = render(fmt, script_)
    audit = MemoryAudit()
    clearer = Clearer(policy.replace(thin=schedule), format=fmt, audit=audit)
    stored: list = []
    reported: list[str] = []
    for message in history:
        stored.append(message)
        reported += clearer.clear_in_place(stored).cleared_call_ids
    assert len(reported) == len(set(reported))
    assert len(audit.records) == len({(r.kind, r.call_id) for r in audit.records})
    assert restore(stored, audit) == history


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_step_that_saves_no_token_is_taken_round_by_round_as_in_one_pass(fmt):
    """A placeholder whose next head saves no token (12 characters cut to 10, CJK counted
    by character) is thinned round by round too: the run ends in one pass's bytes."""
    from tests.clearing.strategies_clearing import Call, Res, Turn

    def quiet(k: int) -> Turn:
        return Turn((), user=None, text="", orphans=((f"ghost_{k}", Res("", False)),))

    blocks = (("text", "alpha错误alpha"), ("image", "data:image/png;base64,iVBORw0KGgo="))
    search = [Call(f"call_{i}", "search_logs", {}, None) for i in (0, 1, 3)]
    write = Call("call_2", "create_issue", {"q": "错误", "body": "line " * 150}, Res(blocks))
    turns = [Turn(tuple(search[:2]), user="task", text="", orphans=(("ghost_0", Res("")),))]
    turns += [quiet(1), quiet(2), quiet(3)]
    turns += [Turn((write, search[2]), user=None, text="", orphans=(("ghost_4", Res("")),))]
    turns += [quiet(5), quiet(6)]
    policy = ClearingPolicy(keep_turns=0, keep_head=40, cache=None, thin=[(1, 10)])
    policy = policy.replace(retention={**policy.retention, "write": 1}, supersede=False)
    history = render(fmt, turns)
    clearer = Clearer(policy)
    for end in range(1, len(history) + 1):
        out = clearer.clear(history[:end])
    assert out == clear_stale_results(history, policy)
