"""Scripted models for the recall harness: each behaves one way, deterministically.

Module-level ones (``decline``, ``refetch_cleared``) take no configuration, so the CLI can
name them (``--model tests.lab.recall_helpers:decline``); the factories close over an episode's
answer check to answer right or wrong on purpose.
"""

from __future__ import annotations

import json
from typing import Any

from slimtools.clearing import is_placeholder
from slimtools.eval import AnswerCheck, Episode


def question_of(messages: list[dict[str, Any]]) -> str:
    """The last user message (the question)."""
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def after_question(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages after the question: the model's own calls and their results."""
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return messages[last_user + 1 :]


def call(name: str, arguments: dict[str, Any], call_id: str = "") -> dict[str, Any]:
    """An OpenAI-style assistant message with one tool call."""
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "function": function}],
    }


def decline(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """Never answers with a value."""
    return "I don't know; that detail is no longer in my context."


def refetch_cleared(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """Calls again every tool whose result was cleared, then says it found nothing."""
    if after_question(messages):
        return "I looked again but cannot say."
    calls = []
    by_id = {c["id"]: c for m in messages if m.get("tool_calls") for c in m["tool_calls"]}
    for m in messages:
        if m["role"] == "tool" and is_placeholder(m["content"]):
            original = by_id[m["tool_call_id"]]
            calls.append({"id": f"again_{len(calls)}", "function": original["function"]})
    return {"role": "assistant", "content": "", "tool_calls": calls}


def answer_with(text: str) -> Any:
    """A model that always answers ``text``."""

    def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        return text

    return model


def knows(check: AnswerCheck) -> Any:
    """Answers the true value whatever it sees: the "from memory" behaviour."""
    return answer_with(f"The answer is {check.expected}.")


def reads_context(check: AnswerCheck) -> Any:
    """Answers the first true value it can read in its context, else declines."""

    def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        for m in messages[:-1]:
            for value in check.values(str(m.get("content") or "")):
                if check.matches(value):
                    return f"It was {value.split('|')[1] if check.kind == 'timestamp' else value}."
        return "I can't tell from what I have."

    return model


def refetches(episode: Episode, *, then_answer: bool = True) -> Any:
    """Calls round M's tool again with the same arguments, then answers from its result."""
    check = episode.question.check
    target = episode.target

    def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        later = after_question(messages)
        if not later:
            return call(target.tool, dict(target.args), "again")
        if not then_answer:
            return "Still not sure."
        return reads_context(check)([*later, messages[-1]], tools)

    return model
