"""The token ledger: the article's closed-form bill and replays of real and built histories."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.peers.ledger import measure_steps
from slimtools.clearing import ClearingPolicy, view
from slimtools.clearing.pricing import CachePricing
from slimtools.ledger import TokenLedger, tool_result_bill
from slimtools.transcripts import load_transcripts
from tests._profile import examples
from tests._shared import shared_data
from tests.clearing.strategies_clearing import FORMATS, policies, render, turns


def chat_history(rounds: int, result: str = "x" * 400, *, final: bool = True) -> list[dict]:
    """An OpenAI chat run: one user task, ``rounds`` tool rounds, then a final answer."""
    history: list[dict] = [{"role": "user", "content": "find the bug"}]
    for i in range(rounds):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "search_logs", "arguments": json.dumps({"q": f"q{i}"})},
        }
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"{i}:{result}"})
    if final:
        history.append({"role": "assistant", "content": "done"})
    return history


def test_bill_reproduces_the_article_table():
    """tool_result_bill(20, 5000) gives the article's four rows exactly."""
    assert tool_result_bill(20, 5_000) == [
        (5, 25_000, 75_000),
        (10, 50_000, 275_000),
        (15, 75_000, 600_000),
        (20, 100_000, 1_050_000),
    ]


def test_bill_step_is_configurable():
    """every=1 gives a row per round; the billed column is the triangular sum."""
    assert tool_result_bill(3, 10, every=1) == [(1, 10, 10), (2, 20, 30), (3, 30, 60)]


def test_bill_rejects_negative_input():
    """Negative rounds or a zero step raise ValueError."""
    with pytest.raises(ValueError, match="rounds"):
        tool_result_bill(-1, 5)
    with pytest.raises(ValueError, match="every"):
        tool_result_bill(5, 5, every=0)


def test_replay_matches_the_closed_form_model():
    """Replaying 20 rounds of 5,000-token results bills what the article's model predicts."""
    history = chat_history(20, "r" * 4_998, final=True)  # "<i>:" prefix -> 5,000 characters
    tokens_of_results = [
        row.tool_tokens
        for row in TokenLedger.measure(
            history, counter=lambda s: 5_000 if len(s) > 4_900 else 0
        ).rows
    ]
    assert tokens_of_results[-1] == 100_000  # resident before the 21st call
    assert sum(tokens_of_results) == 1_050_000  # billed for tool results over the run


def test_rounds_are_model_calls():
    """Each assistant message is one round; the prompt is everything before it."""
    ledger = TokenLedger.measure(chat_history(4))
    assert [r.round for r in ledger.rows] == [1, 2, 3, 4, 5]
    assert ledger.rows[0].tool_tokens == 0


def test_without_clearing_the_cache_is_never_broken():
    """An append-only history reads the previous prompt from the cache every round."""
    ledger = TokenLedger.measure(chat_history(10))
    assert ledger.summary.cache_breaks == 0
    for before, row in zip(ledger.rows, ledger.rows[1:], strict=False):
        assert row.cache_read == before.input_tokens


def test_clearing_lowers_resident_tokens_and_breaks_the_cache():
    """Turn-end clearing keeps the window flat but rewrites history, breaking the prefix."""
    history = chat_history(12, "y" * 4_000)
    plain = TokenLedger.measure(history).summary
    cleared = TokenLedger.measure(history, ClearingPolicy()).summary
    assert cleared.resident_end < plain.resident_end / 3
    assert cleared.billed < plain.billed
    assert cleared.cache_breaks > 0
    assert plain.cache_breaks == 0


def test_cleared_count_is_reported_per_round():
    """Each row says how many results the model saw as cleared."""
    rows = TokenLedger.measure(chat_history(8, "z" * 3_000), ClearingPolicy(cache=None)).rows
    assert rows[0].cleared == 0
    assert rows[-1].cleared == 8 - 2  # all but the last two turns' results


def test_clear_callable_sees_the_growing_history():
    """A custom clear step is called before each model call with the history so far."""
    seen: list[int] = []

    def spy(messages: list) -> list:
        seen.append(len(messages))
        return messages

    measure_steps(chat_history(3), spy)
    assert seen == [1, 3, 5, 7]


def test_cached_bill_uses_the_pricing():
    """billed_cached = reads * read price + writes * write price."""
    ledger = TokenLedger.measure(chat_history(5), cache=CachePricing(read=0.5, write=2.0))
    s = ledger.summary
    assert s.billed_cached == round(s.cache_read * 0.5 + s.cache_write * 2.0)
    assert s.cache_read + s.cache_write == s.billed


def test_empty_history_has_an_empty_ledger():
    """No model call, no rows, zero totals."""
    s = TokenLedger.measure([]).summary
    assert (s.rounds, s.billed, s.resident_end, s.cache_breaks) == (0, 0, 0, 0)


def test_table_lists_rows_and_totals():
    """The table has a header, a line per round and a totals line."""
    text = TokenLedger.measure(chat_history(3)).table()
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["round", "input", "tool"]
    assert len(lines) == 1 + 4 + 1
    assert "cache broken 0x" in lines[-1]
    assert str(TokenLedger.measure(chat_history(3))) == text


def test_responses_run_of_calls_is_one_round():
    """In the Responses format a run of function_call items is one model call."""
    history = [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "a", "name": "ls", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "x"},
        {"type": "function_call_output", "call_id": "b", "output": "y"},
        {"type": "function_call", "call_id": "c", "name": "ls", "arguments": "{}"},
    ]
    assert len(TokenLedger.measure(history).rows) == 2


def test_langchain_history_is_measured():
    """LangChain messages replay the same way as dicts."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    history = [HumanMessage("go")]
    for i in range(5):
        call = {"id": f"t{i}", "name": "weather", "args": {"day": i}}
        history.append(AIMessage("", tool_calls=[call]))
        history.append(ToolMessage("data " * 500, tool_call_id=f"t{i}"))
    ledger = TokenLedger.measure(history, ClearingPolicy(cache=None))
    assert ledger.summary.rounds == 5
    assert ledger.rows[-1].cleared == 2


def test_real_transcript_clearing_shrinks_what_stays_resident():
    """On a recorded mini-swe-agent run, slimtools' defaults cut the resident tool tokens."""
    (run,) = load_transcripts(
        shared_data() / "transcripts" / "mini_swe_agent" / "django__django-12050.traj.json"
    )
    plain = TokenLedger.measure(run.messages).summary
    cleared = TokenLedger.measure(run.messages, ClearingPolicy()).summary
    assert plain.rounds == cleared.rounds == 33
    assert cleared.resident_end < plain.resident_end * 0.7
    assert cleared.billed < plain.billed
    assert cleared.billed_cached < plain.billed_cached


histories = st.lists(
    st.tuples(st.integers(0, 3), st.text(min_size=0, max_size=300)), min_size=0, max_size=12
)


@settings(max_examples=examples(60), deadline=None)
@given(histories, st.booleans())
def test_cache_accounting_adds_up(spec, clear):
    """Reads + writes = input every round; without clearing nothing breaks."""
    history: list[dict] = [{"role": "user", "content": "task"}]
    for i, (calls, text) in enumerate(spec):
        ids = [f"c{i}_{j}" for j in range(calls)]
        tool_calls = [
            {"id": c, "type": "function", "function": {"name": "grep", "arguments": "{}"}}
            for c in ids
        ]
        history.append({"role": "assistant", "content": "t", "tool_calls": tool_calls or None})
        history.extend({"role": "tool", "tool_call_id": c, "content": text} for c in ids)
    ledger = TokenLedger.measure(history, ClearingPolicy(keep_turns=1) if clear else None)
    for row in ledger.rows:
        assert row.cache_read + row.cache_write == row.input_tokens
    if not clear:
        assert ledger.summary.cache_breaks == 0
    assert ledger.summary.rounds == len(spec)


@settings(max_examples=examples(40), deadline=None)
@given(turns(), st.sampled_from(FORMATS), policies)
def test_ledger_invariants_in_every_format(neutral, fmt, policy):
    """One row per turn; reads + writes = input; clearing never raises residency."""
    history = render(fmt, neutral)
    plain = TokenLedger.measure(history)
    cleared = TokenLedger.measure(history, policy)
    assert len(plain.rows) == len(cleared.rows) == view(history).turns
    assert plain.summary.cache_breaks == 0
    for a, b in zip(plain.rows, cleared.rows, strict=True):
        assert b.cache_read + b.cache_write == b.input_tokens
        assert b.tool_tokens <= a.tool_tokens


@pytest.mark.parametrize(
    "history",
    [{"role": "user", "content": "hi"}, "hi", (m for m in chat_history(2))],
    ids=["dict", "str", "generator"],
)
def test_measure_refuses_what_is_not_a_message_list(history):
    """A dict, a string or a generator is a TypeError saying what to pass, not an empty or
    half-read ledger."""
    with pytest.raises(TypeError, match=r"list of messages|pass its message list|not text"):
        TokenLedger.measure(history)


def test_measure_refuses_a_policy_that_is_not_a_clearing_policy():
    """A policy name where a ClearingPolicy belongs is a TypeError naming both."""
    with pytest.raises(TypeError, match="policy 'policy' must be a ClearingPolicy, got str"):
        TokenLedger.measure(chat_history(2), "default")  # type: ignore[arg-type]
