"""The two-stage pipeline: clearing first postpones compaction; compaction keeps pairs whole."""

from __future__ import annotations

import json

import pytest

from slimtools.clearing import ClearingPolicy, is_placeholder
from slimtools.compaction import (
    CompactionPolicy,
    ContextPipeline,
    compact,
    history_tokens,
)
from slimtools.errors import ConfigurationError


class FakeSummarizer:
    """Records what it was asked to fold and answers with a fixed short summary."""

    def __init__(self) -> None:
        self.calls: list[list] = []

    def __call__(self, messages: list) -> str:
        self.calls.append(messages)
        return f"Summary of {len(messages)} earlier messages."


def add_round(history: list[dict], i: int, result_chars: int = 12_000) -> None:
    """One model call with a tool call, and its (large) result."""
    call = {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "search_web", "arguments": json.dumps({"q": f"topic {i}"})},
    }
    history.append({"role": "assistant", "content": f"step {i}", "tool_calls": [call]})
    history.append(
        {"role": "tool", "tool_call_id": f"c{i}", "content": f"r{i} " * (result_chars // 4)}
    )


def run(pipeline: ContextPipeline, rounds: int) -> list[int]:
    """Drive an agent loop; return the rounds at which compaction ran."""
    history: list[dict] = [
        {"role": "system", "content": "You are a researcher."},
        {"role": "user", "content": "Survey the topic."},
    ]
    fired = []
    for i in range(1, rounds + 1):
        add_round(history, i)
        step = pipeline.step(history)
        history = step.history  # store what the pipeline returns, as documented
        if step.compacted:
            fired.append(i)
    return fired


def test_clearing_first_postpones_compaction():
    """Without clearing compaction fires by round 16; with clearing it never fires in 60."""
    policy = CompactionPolicy(window=100_000)
    without = run(ContextPipeline(policy, FakeSummarizer(), clearing=False), 60)
    with_clearing = run(ContextPipeline(policy, FakeSummarizer()), 60)
    assert without[0] <= 16
    assert len(without) >= 4
    assert with_clearing == []


def test_clearing_first_postpones_compaction_in_a_small_window():
    """In a window small enough for both to compact, clearing still delays it several-fold."""
    policy = CompactionPolicy(window=30_000)
    without = run(ContextPipeline(policy, FakeSummarizer(), clearing=False), 80)
    with_clearing = run(ContextPipeline(policy, FakeSummarizer()), 80)
    assert with_clearing, "the window is small enough that compaction must run"
    assert with_clearing[0] >= 5 * without[0]
    assert len(with_clearing) < len(without)


def test_summarizer_receives_cleared_results():
    """When compaction does run after clearing, it summarises placeholders, not raw results."""
    summarize = FakeSummarizer()
    run(ContextPipeline(CompactionPolicy(window=30_000), summarize), 80)
    folded = summarize.calls[0]
    results = [m["content"] for m in folded if m.get("role") == "tool"]
    assert results
    assert all(is_placeholder(r) for r in results)


def test_threshold_history_fraction():
    """History above 40% of the window triggers; at or below does not."""
    policy = CompactionPolicy(window=1_000, min_free_fraction=None)
    assert not policy.should_compact(400)
    assert policy.should_compact(401)


def test_threshold_free_space():
    """Less than 20% free (after reserved tokens) triggers even under the history share."""
    policy = CompactionPolicy(window=1_000, history_fraction=None, reserved=500)
    assert not policy.should_compact(300)
    assert policy.should_compact(301)


def test_thresholds_can_be_disabled():
    """With both thresholds off compaction never triggers."""
    policy = CompactionPolicy(window=10, history_fraction=None, min_free_fraction=None)
    assert not policy.should_compact(10_000)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"window": 0},
        {"window": 10, "history_fraction": 1.5},
        {"window": 10, "keep_turns": -1},
        {"window": 10, "keep_turns": 2.5},
    ],
)
def test_bad_policy_is_a_configuration_error(kwargs):
    """Invalid windows, fractions or counts raise ConfigurationError."""
    with pytest.raises(ConfigurationError):
        CompactionPolicy(**kwargs)


def test_compact_keeps_system_question_and_last_turns():
    """System prompt first, then the summary, then the last question and kept turns whole."""
    history: list[dict] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "q1"}]
    for i in range(3):
        add_round(history, i, 100)
    history.append({"role": "assistant", "content": "answer 1"})
    history.append({"role": "user", "content": "q2"})
    for i in range(3, 5):
        add_round(history, i, 100)
    summarize = FakeSummarizer()
    out = compact(history, summarize, keep_turns=2)
    assert out[0] == {"role": "system", "content": "sys"}
    assert out[1] == {"role": "user", "content": "Summary of 8 earlier messages."}
    assert out[2] == {"role": "user", "content": "q2"}
    assert out[3:] == history[-4:]
    assert summarize.calls[0][0] == {"role": "user", "content": "q1"}


def test_compact_never_splits_a_call_from_its_result():
    """Every tool result left after compaction answers a call that is also left."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(6):
        add_round(history, i, 100)
    out = compact(history, FakeSummarizer(), keep_turns=3)
    calls = {c["id"] for m in out for c in m.get("tool_calls", [])}
    results = {m["tool_call_id"] for m in out if m["role"] == "tool"}
    assert results == calls == {"c3", "c4", "c5"}


def test_compact_short_history_is_unchanged():
    """Nothing before the kept turns: the summariser is not called."""
    summarize = FakeSummarizer()
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert compact(history, summarize, keep_turns=2) == history
    assert summarize.calls == []


def test_summarizer_may_return_messages():
    """A summariser returning messages has them used verbatim."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(4):
        add_round(history, i, 100)
    note = {"role": "user", "content": "<notes>…</notes>"}
    out = compact(history, lambda _folded: [note], keep_turns=1)
    assert out[0] == note
    assert out[1:] == history[-2:]


def test_compact_langchain_history_uses_a_human_message():
    """In LangChain format the summary becomes a HumanMessage."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    history = [HumanMessage("go")]
    for i in range(4):
        history.append(AIMessage("", tool_calls=[{"id": f"t{i}", "name": "ls", "args": {}}]))
        history.append(ToolMessage("x", tool_call_id=f"t{i}"))
    out = compact(history, FakeSummarizer(), keep_turns=1)
    assert isinstance(out[0], HumanMessage)
    assert out[0].content == "Summary of 7 earlier messages."


def test_pipeline_step_reports_figures():
    """A step reports tokens in, after clearing and out, and what it cleared."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(6):
        add_round(history, i, 4_000)
    pipeline = ContextPipeline(CompactionPolicy(window=1_000_000), FakeSummarizer())
    step = pipeline.step(history)
    assert step.cleared == 4
    assert step.tokens_cleared < step.tokens_in
    assert step.tokens_out == step.tokens_cleared
    assert not step.compacted
    assert history_tokens(step.history) == step.tokens_cleared


def test_pipeline_with_a_custom_clearing_policy():
    """The first stage follows the given policy (keep_turns=4 clears fewer)."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(6):
        add_round(history, i, 4_000)
    pipeline = ContextPipeline(
        CompactionPolicy(window=1_000_000),
        FakeSummarizer(),
        ClearingPolicy(cache=None, keep_turns=4),
    )
    assert pipeline.step(history).cleared == 2
    assert pipeline.compactions == 0


def test_failing_summarizer_leaves_history_uncompacted(caplog):
    """A summariser that raises does not stop the loop: cleared history, a warning."""

    def broken(_messages: list) -> str:
        raise RuntimeError("model down")

    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(12):
        add_round(history, i)
    pipeline = ContextPipeline(CompactionPolicy(window=10_000), broken)
    step = pipeline.step(history)
    assert not step.compacted
    assert len(step.history) == len(history)
    assert step.cleared > 0
    assert "summariser failed" in caplog.text


@pytest.mark.parametrize(
    "answer",
    [{"role": "user", "content": "one message, not a list"}, b"summary bytes", ["plain text"]],
    ids=["a-message", "bytes", "list-of-text"],
)
def test_summarizer_answer_that_is_neither_text_nor_messages_is_refused(answer):
    """A summariser returning one message, bytes or a list of non-messages gets a clear
    TypeError, never a history made of dict keys or byte values."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(4):
        add_round(history, i, 100)
    with pytest.raises(TypeError, match="summariser must return"):
        compact(history, lambda _folded: answer, keep_turns=1)


def test_langchain_summarizer_returning_an_ai_message_leaves_the_history_whole(caplog):
    """The natural slip of returning ``llm.invoke(...)`` (one AIMessage) in a pipeline is a
    logged failure with the history uncompacted, not a history of field tuples."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    history = [HumanMessage("go")]
    for i in range(8):
        history.append(AIMessage("", tool_calls=[{"id": f"t{i}", "name": "ls", "args": {}}]))
        history.append(ToolMessage("x " * 2_000, tool_call_id=f"t{i}"))
    pipeline = ContextPipeline(CompactionPolicy(window=2_000), lambda _m: AIMessage("summary"))
    step = pipeline.step(history)
    assert not step.compacted
    assert len(step.history) == len(history)
    assert all(type(m) is type(h) for m, h in zip(step.history, history, strict=True))
    assert "summariser failed" in caplog.text


@pytest.mark.parametrize("keep_turns", [-1, "2", 2.0, True, None])
def test_compact_refuses_a_keep_turns_that_is_not_a_count(keep_turns):
    """A negative, fractional or non-int keep_turns is a ConfigurationError, not a fold of
    the first turns (``-1`` kept all but the first) or a TypeError from inside."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(5):
        add_round(history, i, 100)
    with pytest.raises(ConfigurationError, match="keep_turns"):
        compact(history, FakeSummarizer(), keep_turns=keep_turns)


@pytest.mark.parametrize(
    ("compaction", "clearing"),
    [(None, True), ({"window": 10_000}, True), (CompactionPolicy(window=10_000), None)],
    ids=["no-policy", "a-dict", "clearing-None"],
)
def test_pipeline_refuses_settings_of_the_wrong_type(compaction, clearing):
    """A pipeline without a CompactionPolicy, or with clearing=None (which would clear with
    the defaults, not turn clearing off), is a ConfigurationError naming the argument."""
    with pytest.raises(ConfigurationError, match=r"^(compaction|clearing) must be"):
        ContextPipeline(compaction, FakeSummarizer(), clearing)
