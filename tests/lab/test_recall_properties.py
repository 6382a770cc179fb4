"""Invariants of the recall harness under any setting and any model behaviour."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.eval import BUILTIN_SCENARIOS, OUTCOMES, Setting, run_trial
from tests._profile import examples
from tests.lab.strategies_recall import policies, replies


def pairing_errors(messages: list[dict[str, Any]]) -> list[str]:
    """Why ``messages`` would be refused by a Chat Completions API (empty: well paired).

    Each assistant call is answered by exactly one tool message right after it, before any
    other message; every tool message answers a call of the assistant message before it;
    call ids are unique.
    """
    errors: list[str] = []
    seen_ids: set[str] = set()
    open_ids: list[str] = []
    for position, message in enumerate(messages):
        role = message["role"]
        if role == "tool":
            if message["tool_call_id"] not in open_ids:
                errors.append(
                    f"{position}: result {message['tool_call_id']!r} answers no open call"
                )
            else:
                open_ids.remove(message["tool_call_id"])
            continue
        if open_ids:
            errors.append(f"{position}: calls {open_ids} left unanswered")
            open_ids = []
        for call in message.get("tool_calls") or ():
            if not call["id"] or call["id"] in seen_ids:
                errors.append(f"{position}: call id {call['id']!r} empty or reused")
            seen_ids.add(call["id"])
            open_ids.append(call["id"])
    if open_ids:
        errors.append(f"end: calls {open_ids} left unanswered")
    return errors


@settings(max_examples=examples(120), deadline=None)
@given(
    st.sampled_from(sorted(BUILTIN_SCENARIOS)),
    st.integers(0, 50),
    st.integers(2, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))),
    policies(),
    st.lists(replies(), min_size=1, max_size=5),
    st.integers(1, 5),
)
def test_every_message_list_sent_to_the_model_keeps_calls_and_results_paired(
    name, seed, shape, policy, script, max_steps
):
    """Property: whatever the policy and however erratic the model, what it is sent pairs."""
    rounds, target = shape
    episode = BUILTIN_SCENARIOS[name].episode(0, seed=seed, rounds=rounds, target=target)
    sent: list[list[dict[str, Any]]] = []

    def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        sent.append(messages)
        return script[min(len(sent), len(script)) - 1]

    trial = run_trial(episode, Setting("any", policy), model, max_steps=max_steps)
    assert trial.outcome in OUTCOMES
    assert 1 <= trial.steps <= max_steps
    for messages in sent:
        assert pairing_errors(messages) == []
        assert messages[-1]["role"] in {"user", "tool"}


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(sorted(BUILTIN_SCENARIOS)), st.integers(0, 50), policies())
def test_clearing_only_ever_rewrites_content_never_the_shape_of_what_is_sent(name, seed, policy):
    """Property: roles, ids and order match the uncleared history message for message."""
    episode = BUILTIN_SCENARIOS[name].episode(0, seed=seed)
    sent: dict[str, list[dict[str, Any]]] = {}

    def recorder(label: str) -> Any:
        def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
            sent[label] = messages
            return "no idea"

        return model

    run_trial(episode, Setting("off", None), recorder("off"))
    run_trial(episode, Setting("on", policy), recorder("on"))

    def shape(messages: list[dict[str, Any]]) -> list[Any]:
        return [
            (m["role"], m.get("tool_call_id"), [c["id"] for c in m.get("tool_calls") or ()])
            for m in messages
        ]

    assert shape(sent["on"]) == shape(sent["off"])
