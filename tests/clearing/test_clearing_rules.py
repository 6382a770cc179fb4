"""The rule seam: every rule in the table is asked of each result, and the engine treats
their proposals alike (the age rule and supersession are two rows of it)."""

from __future__ import annotations

import json

import pytest

from slimtools.clearing import ClearingPolicy, _rules, clear_stale_results, view
from slimtools.clearing._rules import RULES, RuleRow, rules_for
from slimtools.clearing._rules.age import Age
from slimtools.clearing._rules.superseded import Superseded

TURN_END = ClearingPolicy(cache=None)


def chat(texts: list[str], tool: str = "lookup") -> list[dict]:
    """An OpenAI chat run, one call of ``tool`` per turn, with distinct arguments."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i, text in enumerate(texts):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": tool, "arguments": json.dumps({"n": i})},
        }
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": text})
    return history


class SameText:
    """A toy rule: a result whose text equals an earlier one makes that one stale."""

    def __init__(self, policy: ClearingPolicy) -> None:
        self.seen: dict[str, object] = {}

    def propose(self, result, due):
        older = self.seen.get(result.raw.text)
        self.seen[result.raw.text] = result
        return [] if older is None else [(older, result.turn, "the same text again")]


def test_the_table_names_age_and_supersession_in_order():
    """Age first, then superseded results: the rules a default policy runs."""
    assert [row.name for row in RULES] == ["age", "superseded"]
    assert [type(rule) for rule in rules_for(ClearingPolicy())] == [Age, Superseded]


def test_a_policy_without_supersession_runs_the_age_rule_alone():
    """``supersede=False`` leaves the superseded row out."""
    assert [type(rule) for rule in rules_for(ClearingPolicy(supersede=False))] == [Age]


def test_a_new_rule_is_one_table_row(monkeypatch):
    """A rule added to the table clears what it proposes ahead of its age, with its reason."""
    row = RuleRow("same text", lambda policy: True, SameText)
    monkeypatch.setattr(_rules, "RULES", (*RULES, row))
    history = chat(["x" * 2_000, "y" * 2_000, "x" * 2_000])
    results = view(clear_stale_results(history, TURN_END.replace(keep_turns=5))).results
    assert "superseded by the result of turn 3 (the same text again)" in results[0].text
    assert results[1].text == "y" * 2_000  # inside keep_turns, and no rule's reason to go


@pytest.mark.parametrize("supersede", [True, False])
def test_the_age_rule_alone_clears_what_age_clears(supersede):
    """Results past their retention go with the ordinary placeholder."""
    history = chat(["x" * 2_000, "y" * 2_000, "z" * 2_000, "w" * 2_000])
    policy = TURN_END.replace(supersede=supersede)
    cleared = [r.cleared for r in view(clear_stale_results(history, policy)).results]
    assert cleared == [True, True, False, False]
