"""Superseded results go first: a result a newer one made stale is cleared ahead of its age."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slimtools.clearing import Clearer, ClearingPolicy, clear_stale_results, view
from tests._profile import examples

ON = ClearingPolicy(supersede=True, cache=None)


def chat(calls: list[tuple[str, dict, str]]) -> list[dict]:
    """An OpenAI chat run, one call per turn."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i, (tool, args, text) in enumerate(calls):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": tool, "arguments": json.dumps(args)},
        }
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": text})
    return history


def texts(history: list) -> list[str]:
    return [r.text for r in view(history).results]


def test_the_same_call_again_supersedes_inside_keep_turns():
    """Two reads of one file in a row: the first goes at once, naming the newer result."""
    read = ("read_file", {"path": "a.py"})
    out = clear_stale_results(chat([(*read, "A" * 4000), (*read, "B" * 4000)]), ON)
    first, second = texts(out)
    assert "superseded by the result of turn 2" in first
    assert second == "B" * 4000


def test_arguments_in_another_order_are_the_same_call():
    """Equal arguments written in another key order still supersede."""
    calls = [
        ("grep_code", {"q": "x", "path": "src"}, "A" * 4000),
        ("grep_code", {"path": "src", "q": "x"}, "B" * 4000),
    ]
    assert "superseded" in texts(clear_stale_results(chat(calls), ON))[0]


def test_a_read_rewritten_and_reread_is_superseded():
    """read(a.py), write(a.py), read(a.py, other lines): the first read is stale."""
    calls = [
        ("read_file", {"path": "a.py", "start": 1}, "A" * 4000),
        ("write_file", {"path": "a.py", "content": "new"}, "ok"),
        ("read_file", {"path": "a.py", "start": 50}, "C" * 4000),
    ]
    first = texts(clear_stale_results(chat(calls), ON))[0]
    assert "superseded by the result of turn 3 (a re-read after a write)" in first


def test_a_read_reread_without_a_write_in_between_stays():
    """Other lines of an unchanged file are not a newer version of the first read."""
    calls = [
        ("read_file", {"path": "a.py", "start": 1}, "A" * 4000),
        ("read_file", {"path": "a.py", "start": 50}, "C" * 4000),
    ]
    assert texts(clear_stale_results(chat(calls), ON))[0] == "A" * 4000


def test_editor_commands_read_and_write_by_their_command():
    """``str_replace_editor`` view, str_replace, view: the first view is stale."""
    calls = [
        ("str_replace_editor", {"command": "view", "path": "a.py"}, "A" * 4000),
        ("str_replace_editor", {"command": "str_replace", "path": "a.py", "old_str": "x"}, "ok"),
        ("str_replace_editor", {"command": "view", "path": "a.py", "view_range": [1, 9]}, "C" * 9),
    ]  # fmt: skip
    assert "superseded" in texts(clear_stale_results(chat(calls), ON))[0]


def test_equal_writes_do_not_supersede_each_other():
    """Two identical writes are two effects: neither confirmation is stale."""
    calls = [("write_file", {"path": "a.py", "content": "x"}, "wrote " * 500)] * 2
    assert all("superseded" not in t for t in texts(clear_stale_results(chat(calls), ON)))


def test_supersession_still_waits_for_clear_at_least():
    """A superseded result that saves less than ``clear_at_least`` stays."""
    calls = [("read_file", {"path": "a.py"}, "A" * 400), ("read_file", {"path": "a.py"}, "B" * 400)]
    policy = ON.replace(clear_at_least=10_000)
    assert texts(clear_stale_results(chat(calls), policy))[0] == "A" * 400


def test_supersession_is_on_by_default_and_off_when_asked():
    """The default policy clears a fresh duplicate read; ``supersede=False`` leaves it to
    its retention."""
    calls = [
        ("read_file", {"path": "a.py"}, "A" * 4000),
        ("read_file", {"path": "a.py"}, "B" * 4000),
    ]
    assert "superseded" in texts(clear_stale_results(chat(calls)))[0]
    off = ClearingPolicy(supersede=False)
    assert texts(clear_stale_results(chat(calls), off))[0] == "A" * 4000


_calls = st.lists(
    st.tuples(
        st.sampled_from(["read_file", "write_file", "bash", "search_logs"]),
        st.fixed_dictionaries({"path": st.sampled_from(["a", "b"])}),
        st.sampled_from(["x" * 800, "y" * 2000, ""]),
    ),
    max_size=12,
)


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)  # fmt: skip
@given(calls=_calls, cache=st.sampled_from([None, "anthropic"]), keep=st.integers(0, 3))
def test_supersession_clears_incrementally_as_in_one_pass(calls, cache, keep):
    """Round by round, the persisted history ends as one pass over the final history."""
    policy = ClearingPolicy(supersede=True, cache=cache, keep_turns=keep)
    history = chat(calls)
    clearer, grown = Clearer(policy), []
    for message in history:
        grown.append(message)
        if message["role"] == "tool":
            continue  # a model call comes after each round's results
        clearer.clear_in_place(grown)
    clearer.clear_in_place(grown)
    if cache is None:
        assert grown == clear_stale_results(history, policy)
    assert clear_stale_results(grown, policy) == grown  # idempotent


def test_supersession_forgets_results_once_they_fall_due():
    """A long run of distinct calls keeps only the results of its last few turns in its tables."""
    from slimtools.clearing._batch import Pending
    from slimtools.clearing._ingest import SeenCall
    from slimtools.clearing._rules.superseded import _SWEEP, Superseded
    from slimtools.clearing.formats.base import RawResult

    tracker = Superseded(ClearingPolicy(categories={"read_file": "read"}))
    for turn in range(1, 1_001):
        call = SeenCall("read_file", {"path": f"f{turn}.py"}, 2 * turn, 5, 20, turn)
        raw = RawResult(f"c{turn}", None, "text", 0, False, False, True)
        pending = Pending(raw, "read_file", call, 2 * turn + 1, turn, 100, turn)
        assert tracker.propose(pending, turn + 3) == []
    # swept every _SWEEP turns: at most that many turns of entries past their due turn
    assert sum(len(calls) for _, calls in tracker._tools.values()) <= 4 + _SWEEP
    assert len(tracker._reads) <= 4 + _SWEEP
    assert sum(len(queue) for queue in tracker._expiry.values()) <= 3 * 2 * (4 + _SWEEP)


def test_a_superseded_result_shorter_than_its_placeholder_stays_whole():
    """A result read again is cleared only when its placeholder is shorter: a 150-character
    result (48 tokens: accented letters count double) whose placeholder would take 188
    characters (47 tokens) stays as it was, as a result cleared by age would."""
    read = ("read_file", {"path": "a.py"})
    short = "é" * 37 + "x" * 113
    out = texts(clear_stale_results(chat([(*read, short), (*read, short + "!")]), ON))
    assert out[0] == short
