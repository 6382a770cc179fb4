"""A history edited between two calls of one Clearer: the output is the edited history's."""

from __future__ import annotations

import copy
import json
from typing import Any

from slimtools.clearing import Clearer, ClearingPolicy, clear_stale_results

POLICY = ClearingPolicy(cache=None)


def _history(rounds: int = 6) -> list[dict[str, Any]]:
    """An OpenAI Chat history of ``rounds`` searches, each followed by a user turn."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "Why did the deploy fail?"}]
    for i in range(rounds):
        arguments = json.dumps({"query": f"q{i}"})
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "search_logs", "arguments": arguments},
        }
        history += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"line {i}\n" * 400},
            {"role": "user", "content": "go on"},
        ]
    return history


def test_a_kept_result_edited_between_calls_is_sent_as_edited():
    """The caller rewrote a recent result (same length, same ends): the clearer sends it."""
    history = _history()
    clearer = Clearer(POLICY)
    clearer.clear(history)
    edited = copy.deepcopy(history)
    edited[-2]["content"] = "the corrected result\n" * 100
    assert clearer.clear(edited) == clear_stale_results(edited, POLICY)


def test_a_user_message_edited_between_calls_is_sent_as_edited():
    """A user turn in the middle edited in place (a moved cache breakpoint, a redaction)."""
    history = _history()
    clearer = Clearer(POLICY)
    clearer.clear(history)
    history[9] = {"role": "user", "content": "go on, but look at the database"}
    assert clearer.clear(history)[9] == history[9]


def test_a_tuple_history_grown_call_by_call_is_checked_in_one_comparison(monkeypatch):
    """A tuple is compared with the messages read as a list, not message by message (a
    tuple never equals a list, which sent every call down the slow path)."""
    history = _history(8)
    clearer = Clearer(POLICY)
    clearer.clear(tuple(history[:4]))

    def per_message(*args: Any) -> bool:
        raise AssertionError("the per-message check ran")

    monkeypatch.setattr(Clearer, "_extends", per_message)
    for end in range(5, len(history) + 1):
        assert clearer.clear(tuple(history[:end])) == clear_stale_results(history[:end], POLICY)


def test_an_edited_tuple_history_is_sent_as_edited():
    """A tuple whose earlier message changed is re-read like a list."""
    history = _history()
    clearer = Clearer(POLICY)
    clearer.clear(tuple(history))
    history[9] = {"role": "user", "content": "go on, but look at the database"}
    assert clearer.clear(tuple(history))[9] == history[9]
