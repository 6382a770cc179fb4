"""Recall scenarios: tool results played round by round, and one question about an old one.

A :class:`Scenario` makes :class:`Episode` instances: one concrete run (a seed, or an
ordering of a file's rounds) with the system prompt, the user's task, the tools the model is
offered, the tool call and result of every round, the question, and ``serve``, which answers
any tool call the model makes (the same call again, another call, or ``get_record``).

Built-in scenarios are generated from a seed (:mod:`slimtools.eval._generated`); users write
their own as JSON or TOML files (:mod:`slimtools.eval.scenario_files`). Every
episode is checked by :func:`validate_episode`: the answer must be readable in the target
round's result and nowhere else the model is shown, or a correct answer could not be told
apart from reading it elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from slimtools import ToolResult
from slimtools._json import dumps_str
from slimtools.errors import SlimtoolsError
from slimtools.eval.checks import AnswerCheck

DEFAULT_SYSTEM = "You are a helpful assistant. Use the tools when you need information."
"""The system prompt of a scenario that does not set one."""


class ScenarioError(SlimtoolsError, ValueError):
    """A scenario file or a generated episode is invalid; the message names the field."""


@dataclass(frozen=True)
class ToolDef:
    """A tool as the model is offered it: name, description and JSON Schema of arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]

    def openai(self) -> dict[str, Any]:
        """The Chat Completions form, ``{"type": "function", "function": {...}}``."""
        function = {"name": self.name, "description": self.description}
        return {"type": "function", "function": {**function, "parameters": dict(self.parameters)}}


@dataclass(frozen=True)
class Round:
    """One round: the call the agent made, the result it got, and what it said alongside."""

    tool: str
    args: Mapping[str, Any]
    result: str
    say: str = ""


@dataclass(frozen=True)
class Question:
    """The question asked after the last round; its answer is only in round ``round``'s result."""

    round: int
    text: str
    check: AnswerCheck


Serve = Callable[[str, "str | Mapping[str, Any]"], ToolResult]
"""Answers a tool call of the model under test: tool name and arguments (JSON text or a
mapping) to the result it would get. Never raises: bad calls get an error result."""


@dataclass(frozen=True)
class Episode:
    """One concrete recall run: everything played to the model, and how to answer it.

    Attributes:
        scenario: the scenario's name.
        repeat: which repeat (seed or ordering) of the scenario this is.
        system: the system prompt.
        task: the user's opening request.
        tools: the tools offered to the model.
        rounds: the calls and results played before the question, in order.
        question: the question, its target round and its answer check.
        serve: answers the model's own tool calls.
        refetch_tool: the companion that fetches a record by handle (None when absent).
    """

    scenario: str
    repeat: int
    system: str
    task: str
    tools: tuple[ToolDef, ...]
    rounds: tuple[Round, ...]
    question: Question
    serve: Serve
    refetch_tool: str | None = "get_record"

    @property
    def target(self) -> Round:
        """The round whose result holds the answer."""
        return self.rounds[self.question.round - 1]


@runtime_checkable
class Scenario(Protocol):
    """Makes the episodes of one recall scenario."""

    @property
    def name(self) -> str:
        """The scenario's name, as reports show it."""
        ...

    def episode(self, repeat: int, *, seed: int = 0, rounds: int = 10, target: int = 3) -> Episode:
        """The episode for ``repeat``; the same arguments always give the same episode.

        ``rounds`` (N) and ``target`` (M) apply to generated scenarios; a file fixes its own.
        """
        ...


def validate_episode(episode: Episode, source: str = "scenario") -> Episode:
    """Return ``episode`` when its answer is in the target round's result and nowhere else.

    Raises:
        ScenarioError: naming the field that lacks the answer or shows it besides the target.
    """
    question, check = episode.question, episode.question.check
    if not 1 <= question.round <= len(episode.rounds):
        raise ScenarioError(
            f"{source}: question.round: {question.round} is not one of the "
            f"{len(episode.rounds)} rounds (1-based)"
        )
    index = question.round - 1
    if not check.found_in(episode.rounds[index].result):
        raise ScenarioError(
            f"{source}: question.answer: {check.expected!r} ({check.kind}) cannot be read in "
            f"rounds[{index}].result (the round the question names)"
        )
    elsewhere = [
        ("system", episode.system),
        ("task", episode.task),
        ("question.text", question.text),
    ]
    for i, rnd in enumerate(episode.rounds):
        elsewhere.append((f"rounds[{i}].say", rnd.say))
        elsewhere.append((f"rounds[{i}].args", dumps_str(rnd.args)))
        if i != index:
            elsewhere.append((f"rounds[{i}].result", rnd.result))
    for where, text in elsewhere:
        if text and check.found_in(text):
            raise ScenarioError(
                f"{source}: question.answer: {check.expected!r} also appears in {where}; "
                "the answer must exist only in the target round's result"
            )
    return episode
