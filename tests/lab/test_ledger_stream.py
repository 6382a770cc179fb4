"""RunReplay: the ledger of a run read message by message is a real Clearer's, exactly."""

from __future__ import annotations

import gc
import itertools
import logging
import weakref
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.peers.ledger import measure_steps
from slimtools.clearing import CachePricing, Clearer, ClearingPolicy, view
from slimtools.clearing.pricing import pricing_of
from slimtools.clearing.replay import ReplayClearer
from slimtools.ledger import TokenLedger
from slimtools.ledger.stream import NO_CLEARING, LedgerColumns, RunReplay
from slimtools.tokens import count_tokens
from slimtools.transcripts import iter_transcripts
from tests._profile import examples
from tests._shared import sample, shared_data
from tests.clearing.strategies_clearing import (
    FORMATS,
    Call,
    Res,
    Turn,
    big,
    policies,
    render,
    turns,
)

# The replay does not model thinning.

DATA = "tests/data/transcripts"
PRESETS = {
    "default": ClearingPolicy(),
    "turn-end": ClearingPolicy(cache=None),
    "at least": ClearingPolicy(cache=None, clear_at_least=2_000),
    "anthropic": ClearingPolicy.from_anthropic(
        {"trigger": {"type": "input_tokens", "value": 3000}}
    ),
    "inputs": ClearingPolicy(cache=None, keep_turns=0, clear_tool_inputs=True),
    "window": ClearingPolicy(max_context_tokens=4_000, cache=CachePricing(0.1, 1.25, horizon=30)),
}


def replayed(history, fmt, policies, cache="anthropic"):
    return RunReplay(fmt, policies, cache=cache).add_all(history).finish()


def assert_same_ledgers(history, fmt, policies, cache="anthropic"):
    """The replay's ledgers are those of a real Clearer run before each model call, every
    prompt billed message by message (the benchmarks' ledger of any clearing step)."""
    figures = replayed(history, fmt, policies, cache)
    expected = measure_steps(history, format=fmt, cache=cache)
    assert figures.ledger(NO_CLEARING) == expected
    assert TokenLedger.measure(history, format=fmt, cache=cache) == expected
    for label, policy in policies.items():
        clearer = Clearer(policy, format=fmt, observed=False)
        assert figures.ledger(label) == measure_steps(
            history, clearer.clear, format=fmt, cache=cache
        ), label


def test_every_recorded_test_transcript_replays_as_measure_does():
    """On every synthetic transcript of every format, each preset's ledger is measure's."""
    for run in iter_transcripts(DATA, on_error=lambda _e: None):
        assert_same_ledgers(run.messages, run.format, PRESETS)


@pytest.mark.shared
def test_every_real_transcript_replays_as_measure_does():
    """On the 268 real runs, no clearing and each preset give measure's rows exactly."""
    runs = iter_transcripts(shared_data() / "transcripts")
    for run in sample(runs, key=lambda run: run.source):
        assert_same_ledgers(run.messages, run.format, PRESETS)


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=examples(60), deadline=None)
@given(history=turns(), policy=policies, cache=st.sampled_from(["anthropic", "openai", None]))
def test_any_history_and_policy_replay_as_measure_does(fmt, history, policy, cache):
    """Property: for random histories and policies, the streamed ledger is measure's."""
    assert_same_ledgers(render(fmt, history), fmt, {"p": policy}, cache)


@pytest.mark.parametrize("fmt", FORMATS)
def test_call_ids_reused_every_turn_pair_like_the_engine(fmt):
    """Servers that reuse "call_0" each turn: a result answers the latest call with its id."""
    reused = [
        Turn(
            (Call("call_0", tool, {"q": i}, Res(big(f"r{i}_", 90))),), user="go" if not i else None
        )
        for i, tool in enumerate(["search_logs", "bash", "read_file", "bash", "search_logs", "x"])
    ]
    history = render(fmt, reused)
    history += render(fmt, [Turn((Call("call_0", "bash", {}, Res(big("dup", 80))),))])[-2:]
    assert_same_ledgers(history, fmt, PRESETS)


def test_counts_match_the_view_of_the_history():
    """Messages, model calls, tool calls and results are what the clearing core's view sees."""
    for run in iter_transcripts(DATA, on_error=lambda _e: None):
        figures = replayed(run.messages, run.format, {})
        seen = view(run.messages, format=run.format)
        assert figures.messages == len(run.messages)
        assert figures.model_calls == seen.turns
        assert figures.tool_calls == len(seen.calls)
        assert figures.tool_results == len(seen.results)
        tokens = sum(count_tokens(r.text) if r.text else 0 for r in seen.results)
        assert figures.tool_tokens == tokens


def test_results_are_attributed_to_their_calls_tool():
    """Each result's tokens go to the tool of the call it answers; orphans to their own name."""
    history = render("openai_chat", [Turn((Call("a", "bash", {}, Res("x" * 400)),), user="go")])
    history.append({"role": "tool", "tool_call_id": "nobody", "name": "ghost", "content": "y" * 80})
    figures = replayed(history, "openai_chat", {})
    assert dict(figures.calls_by_tool) == {"bash": 1}
    assert {k: list(v) for k, v in figures.result_tokens.items()} == {"bash": [100], "ghost": [20]}


def test_resident_by_tool_is_what_the_last_call_saw():
    """Per tool, the tokens resident in the last prompt, after each policy's clearing."""
    script = [
        Turn((Call(f"c{i}", tool, {}, Res(big(f"r{i}_", 200))),), user="go" if not i else None)
        for i, tool in enumerate(["search_logs", "bash", "search_logs", "bash", "bash"])
    ]
    history = render("openai_chat", script)
    history.append({"role": "assistant", "content": "done"})
    figures = replayed(history, "openai_chat", {"turn-end": ClearingPolicy(cache=None)})
    full = figures.resident_by_tool[NO_CLEARING]
    cleared = figures.resident_by_tool["turn-end"]
    assert sum(full.values()) == figures.ledger().summary.resident_end
    assert sum(cleared.values()) == figures.ledger("turn-end").summary.resident_end
    assert cleared["search_logs"] < full["search_logs"]


def test_a_failing_placeholder_template_keeps_the_result_as_the_engine_does(caplog):
    """A user template that raises leaves the result in place, in the replay as in measure."""

    def broken(info):
        raise RuntimeError("no")

    history = render(
        "anthropic", [Turn((Call(f"c{i}", "bash", {"n": i}, Res(big("o", 90))),)) for i in range(6)]
    )
    with caplog.at_level(logging.CRITICAL, logger="slimtools.clearing"):
        assert_same_ledgers(
            history, "anthropic", {"p": ClearingPolicy(cache=None, placeholder=broken)}
        )
        figures = replayed(
            history, "anthropic", {"p": ClearingPolicy(cache=None, placeholder=broken)}
        )
    assert figures.ledger("p").summary.resident_end == figures.ledger().summary.resident_end


def test_the_baseline_label_is_reserved():
    """A policy cannot be called "no clearing": that is the baseline every figure compares with."""
    with pytest.raises(ValueError, match="baseline"):
        RunReplay("openai_chat", {NO_CLEARING: ClearingPolicy()})


def test_a_policy_must_be_a_clearing_policy():
    """Anything else is refused at construction, naming its label."""
    with pytest.raises(TypeError, match="'p' must be a ClearingPolicy"):
        RunReplay("openai_chat", {"p": {"keep_turns": 2}})  # type: ignore[dict-item]


@settings(max_examples=examples(100), deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 10**6), st.integers(0, 10**5), st.integers(0, 10**6), st.booleans()
        ),
        max_size=30,
    ),
    cache=st.sampled_from(["anthropic", "openai", None]),
)
def test_columns_summary_is_the_ledgers_summary(rows, cache):
    """Property: LedgerColumns.summary equals TokenLedger.summary of the same rows."""
    columns = LedgerColumns()
    for i, (total, tool, read, broken) in enumerate(rows):
        columns.append(total + read, tool, read, broken, i)
    assert columns.summary(cache) == TokenLedger(columns.rows(), pricing_of(cache)).summary
    assert [r.round for r in columns.rows()] == list(range(1, len(rows) + 1))


def test_replay_holds_no_text_of_a_result_its_engines_have_decided():
    """After reading a run, the replay and its engines hold the texts of the last few
    results only (still waiting for their turn or a ``keep`` slot), none of the earlier."""
    script = [
        Turn((Call(f"c{i}", "bash", {}, Res(f"UNIQUE-{i:02d}-" * 50)),), user="go")
        for i in range(12)
    ]
    replay = RunReplay("anthropic", PRESETS).add_all(render("anthropic", script))
    seen = repr(replay.__dict__) + "".join(repr(t.__dict__) for t in replay._tracks)
    engine = "".join(repr(t.clearer._state) for t in replay._tracks)
    held = {i for i in range(12) if f"UNIQUE-{i:02d}-" in seen + engine}
    assert held <= set(range(8, 12))


def test_replays_of_each_history_format_decide_alike():
    """The same neutral run in every format clears the same results under each preset."""
    script = [
        Turn(
            tuple(
                Call(f"c{i}_{k}", t, {"q": i}, Res(big(f"r{i}{k}_", 150)))
                for k, t in enumerate(tools)
            ),
            user="go",
        )
        for i, tools in enumerate(
            itertools.islice(itertools.cycle([("bash",), ("search_logs", "read_file")]), 9)
        )
    ]
    cleared = {
        fmt: replayed(render(fmt, script), fmt, PRESETS).ledger("turn-end").rows[-1].cleared
        for fmt in FORMATS
    }
    assert len(set(cleared.values())) == 1
    assert next(iter(cleared.values())) > 0


def test_each_engine_reads_its_history_once(monkeypatch):
    """The replay only appends, so no engine re-reads (each starts one pass, and only one)."""
    passes: list[ReplayClearer] = []
    fresh = ReplayClearer._new_state

    def counted(self: ReplayClearer) -> Any:
        passes.append(self)
        return fresh(self)

    monkeypatch.setattr(ReplayClearer, "_new_state", counted)
    history = render(
        "openai_chat", [Turn((Call(f"c{i}", "bash", {}, Res(big(f"r{i}_"))),)) for i in range(30)]
    )
    replay = RunReplay("openai_chat", PRESETS).add_all(history)
    assert sorted(map(id, passes)) == sorted(id(track.clearer) for track in replay._tracks)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_call_answered_after_the_next_model_call_has_its_arguments_blanked_as_measured(fmt):
    """A call whose result comes after a later model call: its message, read by the engine
    before the result, is still there to blank when the result is cleared."""
    wordy = {"q": "where is the error " * 40}
    late = [
        Turn((Call("c0", "x", wordy, None),), user="go"),
        Turn((Call("c1", "x", wordy, Res(big("b", 400))),), orphans=(("c0", Res(big("a", 400))),)),
        *(Turn((Call(f"c{i}", "x", {}, Res(big(f"r{i}_"))),)) for i in range(2, 6)),
    ]
    history = render(fmt, late)
    blanking = ClearingPolicy(cache=None, keep_turns=0, clear_tool_inputs=True, retention={})
    assert_same_ledgers(history, fmt, {**PRESETS, "blanking": blanking})
    figures = replayed(
        history, fmt, {"on": blanking, "off": blanking.replace(clear_tool_inputs=False)}
    )
    assert figures.ledger("on").rows[-1].input_tokens < figures.ledger("off").rows[-1].input_tokens


def _rereads(fmt: str) -> list:
    """A run that reads files again, and re-reads one after writing it."""
    read = {"path": "src/a.py"}
    script = [
        Turn((Call("c0", "read_file", read, Res(big("a", 600))),), user="go"),
        Turn((Call("c1", "bash", {"command": "git status"}, Res(big("s", 500))),)),
        Turn((Call("c2", "read_file", {"path": "src/b.py"}, Res(big("b", 700))),)),
        Turn((Call("c3", "read_file", read, Res(big("A", 600))),)),
        Turn((Call("c4", "write_file", {"path": "src/b.py", "content": "x"}, Res("ok")),)),
        Turn((Call("c5", "read_file", {"path": "src/b.py", "limit": 9}, Res(big("B", 700))),)),
        Turn((Call("c6", "bash", {"command": "git status"}, Res(big("t", 500))),)),
        *(Turn((Call(f"d{i}", "search_logs", {"q": i}, Res(big(f"r{i}_"))),)) for i in range(4)),
    ]
    return render(fmt, script)


SUPERSEDING = {
    "alone": ClearingPolicy(keep_turns=10**6, supersede=True),
    "alone, turn end": ClearingPolicy(keep_turns=10**6, supersede=True, cache=None),
    "default": ClearingPolicy(supersede=True),
    "turn end": ClearingPolicy(supersede=True, cache=None),
    "inputs": ClearingPolicy(cache=None, clear_tool_inputs=True, supersede=True),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_superseded_results_replay_as_measure_does(fmt):
    """The replay supersedes the results the engine supersedes on the real run, to the
    token."""
    history = _rereads(fmt)
    assert_same_ledgers(history, fmt, SUPERSEDING)
    figures = replayed(history, fmt, SUPERSEDING)
    assert figures.ledger("alone, turn end").rows[-1].cleared == 3


def test_calls_of_one_size_with_other_arguments_are_not_superseded():
    """Two reads of different files billed alike: neither supersedes the other."""
    script = [
        Turn((Call(f"c{i}", "read_file", {"path": p}, Res(big(p, 600))),), user="go")
        for i, p in enumerate(["a.py", "b.py", "c.py", "d.py"])
    ]
    history = render("openai_chat", script)
    figures = replayed(history, "openai_chat", SUPERSEDING)
    assert figures.ledger("alone, turn end").rows[-1].cleared == 0
    assert_same_ledgers(history, "openai_chat", SUPERSEDING)


_reads = st.lists(
    st.tuples(
        st.sampled_from(["read_file", "write_file", "bash", "str_replace_editor"]),
        st.fixed_dictionaries(
            {"path": st.sampled_from(["a", "b"])},
            optional={"command": st.sampled_from(["view", "create", "ls"])},
        ),
        st.sampled_from([800, 2000, 0]),
    ),
    max_size=12,
)


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=examples(40), deadline=None)
@given(calls=_reads, keep=st.integers(0, 3), cache=st.sampled_from(["anthropic", None]))
def test_any_rereading_run_replays_superseded_results_as_measure_does(fmt, calls, keep, cache):
    """Property: runs that repeat calls and re-read written paths replay as measured."""
    script = [
        Turn((Call(f"c{i}", tool, args, Res(big(f"r{i}_", size) if size else "")),), user="go")
        for i, (tool, args, size) in enumerate(calls)
    ]
    policy = ClearingPolicy(supersede=True, keep_turns=keep, cache=cache)
    assert_same_ledgers(render(fmt, script), fmt, {"p": policy})


def test_a_replay_is_freed_as_soon_as_it_is_dropped():
    """No cycle runs through a replay's engines, so dropping the replay frees them at once,
    not at the next full garbage collection (analyze adds a run up after freeing it)."""
    history = render(
        "anthropic", [Turn((Call(f"c{i}", "bash", {}, Res(big())),)) for i in range(6)]
    )
    replay = RunReplay("anthropic", PRESETS).add_all(history)
    engines = [weakref.ref(track.clearer) for track in replay._tracks]
    gc.disable()
    try:
        del replay
        assert all(engine() is None for engine in engines)
    finally:
        gc.enable()


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=examples(40), deadline=None)
@given(history=turns(), policy=policies)
def test_resident_tokens_per_round_are_what_the_real_clearer_leaves(fmt, history, policy):
    """Property: at each model call, the ledger's resident tool tokens are the tokens of the
    tool results in the history a real Clearer returns for that call's prompt."""
    messages = render(fmt, history)
    figures = replayed(messages, fmt, {"p": policy})
    clearer = Clearer(policy, format=fmt)
    left = []
    for end in figures.call_starts:
        prompt = clearer.clear(messages[:end])
        results = view(prompt, format=fmt).results
        left.append(sum((count_tokens(r.text) if r.text else 0) + r.media_tokens for r in results))
    assert list(figures.ledgers["p"].tool_tokens) == left


def test_an_engine_keeps_no_message():
    """However long the run, a policy's engine in replay mode holds none of its messages."""
    history = render(
        "anthropic", [Turn((Call(f"c{i}", "bash", {}, Res(big(f"r{i}_"))),)) for i in range(40)]
    )
    replay = RunReplay("anthropic", PRESETS).add_all(history)
    assert all(track.clearer._state.out == [] for track in replay._tracks)
