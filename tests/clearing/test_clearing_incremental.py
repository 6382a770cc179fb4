"""The incremental Clearer: monotone, cache-aware batching, linear work, re-reads."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings

from slimtools.clearing import Clearer, ClearingPolicy, clear_stale_results, view
from slimtools.clearing.formats.view import get_codec
from tests._profile import examples
from tests.clearing.strategies_clearing import FORMATS, Turn, policies, render, script, turns

fmt_param = pytest.mark.parametrize("fmt", FORMATS)
FLAT = ClearingPolicy(cache=None, retention={})


def rounds(fmt, n_turns, tools=("t",)):
    """The history after each round (assistant calls plus their results), growing."""
    full = render(fmt, script(*[tools] * n_turns))
    ends = [i + 1 for i in range(len(full)) if _ends_round(fmt, full, i)]
    return full, ends[1:]  # the first "round" is the user's task alone


def _ends_round(fmt, full, i):
    if i + 1 == len(full):
        return True
    nxt = view(full[: i + 2], format=fmt)
    return nxt.turns > view(full[: i + 1], format=fmt).turns


def cleared_ids(history):
    return {r.call_id for r in view(history).results if r.cleared}


@fmt_param
def test_clear_at_least_makes_the_clearer_move_in_batches(fmt):
    """With a trigger and clear_at_least, each change clears at least that many tokens,
    and the prefix moves less often than with per-request recomputation."""
    full, ends = rounds(fmt, 40)
    policy = FLAT.replace(keep_turns=0, keep=3, trigger=3000, clear_at_least=1500)
    clearer = Clearer(policy)
    incremental = stateless = 0
    previous = frozenset()
    for end in ends:
        _, report = clearer.clear_with_report(full[:end])
        if report.changed:
            incremental += 1
            assert report.cleared_input_tokens >= 1500
        now = frozenset(cleared_ids(clear_stale_results(full[:end], policy)))
        stateless += now != previous
        previous = now
    assert 0 < incremental < stateless


@fmt_param
def test_ephemeral_use_stays_monotone(fmt):
    """Passing the original history every time still returns earlier clears."""
    full, ends = rounds(fmt, 10)
    clearer = Clearer(FLAT)
    seen = set()
    for end in ends:
        now = cleared_ids(clearer.clear(full[:end]))
        assert seen <= now
        seen = now
    assert len(seen) == 8


@fmt_param
def test_ephemeral_use_leaves_the_stored_history_identical(fmt):
    """The caller's history is never modified, round after round."""
    full, ends = rounds(fmt, 8)
    snapshot = copy.deepcopy(full)
    clearer = Clearer(FLAT)
    for end in ends:
        clearer.clear(full[:end])
    assert full == snapshot


@fmt_param
def test_each_message_is_decoded_and_counted_once(fmt, monkeypatch):
    """Clearing after every round reads each new message once: linear total work."""
    full, ends = rounds(fmt, 30)
    codec = get_codec(fmt)
    decoded = []
    original = type(codec).decode
    monkeypatch.setattr(
        type(codec), "decode", lambda self, m: decoded.append(m) or original(self, m)
    )
    counted = []
    policy = FLAT.replace(token_counter=lambda s: counted.append(s) or len(s) // 4)
    clearer = Clearer(policy, format=fmt)
    current = []
    for end in ends:
        current = clearer.clear([*current, *full[len(current) : end]])
    assert len(decoded) == len(full)
    placeholders = sum(1 for r in view(current).results if r.cleared)
    assert len(counted) <= len(full) + 4 * len(view(full).calls) + placeholders + 1


@fmt_param
def test_deserialised_copies_keep_the_clearer_incremental(fmt, monkeypatch):
    """A history round-tripped through a checkpoint (equal copies) is not re-read."""
    full, ends = rounds(fmt, 10)
    codec = get_codec(fmt)
    decoded = []
    original = type(codec).decode
    monkeypatch.setattr(
        type(codec), "decode", lambda self, m: decoded.append(m) or original(self, m)
    )
    clearer = Clearer(FLAT, format=fmt)
    current = []
    for end in ends:
        current = copy.deepcopy(clearer.clear([*current, *full[len(current) : end]]))
    assert len(decoded) == len(full)


@fmt_param
def test_edited_history_falls_back_to_a_full_pass(fmt):
    """A history that shrank or changed at its start is re-read, and stays correct."""
    full, ends = rounds(fmt, 12)
    clearer = Clearer(FLAT)
    clearer.clear(full)
    shorter = full[: ends[6]]
    assert clearer.clear(shorter) == clear_stale_results(shorter, FLAT)
    edited = render(fmt, [Turn(user="new task"), *script(*["t"] * 5)[1:]])
    out = clearer.clear(edited)
    v = view(out)
    assert not any(r.cleared for r in v.results if v.turns - r.turn < 2)


@fmt_param
def test_clears_stay_after_a_re_read(fmt):
    """After a fallback re-read, results cleared before are cleared again (monotone)."""
    full, ends = rounds(fmt, 12)
    clearer = Clearer(FLAT)
    first = cleared_ids(clearer.clear(full[: ends[8]]))
    reordered = [full[0], *full[1:]]
    reordered[0] = copy.deepcopy(full[0])
    if fmt == "langchain":
        reordered[0] = reordered[0].model_copy(update={"content": "changed"})
    else:
        reordered[0] = {**reordered[0], "content": "changed"}
    assert first <= cleared_ids(clearer.clear(reordered))


def test_reset_forgets_everything():
    """reset() starts over: earlier clears are no longer remembered."""
    full, ends = rounds("openai_chat", 6)
    clearer = Clearer(FLAT)
    clearer.clear(full)
    clearer.reset()
    assert clearer.clear(full[: ends[1]]) == full[: ends[1]]


def test_format_is_detected_once_tool_traffic_appears():
    """A Clearer started on a history without tool traffic switches to the right codec."""
    clearer = Clearer(FLAT)
    clearer.clear([{"role": "user", "content": "go"}])
    full = render("anthropic", script(*["t"] * 4))
    out = clearer.clear(full)
    assert clearer.format == "anthropic"
    assert cleared_ids(out) == {"call_0", "call_1"}


def test_clearer_rejects_a_non_policy():
    """Passing something else than a ClearingPolicy fails fast."""
    with pytest.raises(TypeError, match="ClearingPolicy"):
        Clearer({"keep_turns": 2})  # type: ignore[arg-type]


def test_last_report_is_kept():
    """The Clearer keeps the report of its latest call."""
    clearer = Clearer(FLAT)
    clearer.clear(render("openai_chat", script(*["t"] * 4)))
    assert clearer.last_report.cleared_tool_uses == 2


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=examples(40), deadline=None)
@given(script=turns(), policy=policies)
def test_clearing_in_place_sends_what_clear_sends(fmt, script, policy):
    """Round by round, the list cleared in place equals what clear() returns."""
    history = render(fmt, script)
    ours: list = []
    in_place, copying = Clearer(policy), Clearer(policy)
    for end in range(1, len(history) + 1):
        ours.append(history[end - 1])
        in_place.clear_in_place(ours)
        assert ours == copying.clear(history[:end])


def test_clear_in_place_keeps_the_callers_list():
    """The caller's list is the history: results are replaced in it, nothing is copied."""
    history = render("openai_chat", script(*["t"] * 6))
    mine = list(history)
    report = Clearer(FLAT).clear_in_place(mine)
    assert report.cleared_tool_uses == 4
    assert sum(r.cleared for r in view(mine).results) == 4
    assert len(mine) == len(history)
    assert history == render("openai_chat", script(*["t"] * 6))  # the original: untouched


def test_clear_in_place_rereads_a_list_that_changed():
    """A list edited behind the clearer's back (a message removed) is read again, not trusted."""
    history = render("openai_chat", script(*["t"] * 6))
    clearer = Clearer(FLAT)
    mine = list(history)
    clearer.clear_in_place(mine)
    del mine[0]
    clearer.clear_in_place(mine)
    assert mine == clear_stale_results(history[1:], FLAT)


@fmt_param
def test_clear_in_place_on_a_list_subclass_never_duplicates_messages(fmt):
    """A list subclass grown and cleared in place round by round holds each message once,
    as clear() over the same messages returns them."""

    class Messages(list):  # a framework's own list type
        pass

    history = render(fmt, script(*["t"] * 6))
    ours, clearer, copying = Messages(), Clearer(FLAT), Clearer(FLAT)
    for end in range(1, len(history) + 1):
        ours.append(history[end - 1])
        clearer.clear_in_place(ours)
        assert list(ours) == copying.clear(history[:end])
    assert type(ours) is Messages


def test_clear_in_place_needs_a_list():
    """A tuple (or any other sequence) cannot be changed in place: a clear TypeError."""
    with pytest.raises(TypeError, match="clear_in_place needs the history's own list"):
        Clearer().clear_in_place(tuple(render("openai_chat", script("t"))))  # type: ignore[arg-type]
