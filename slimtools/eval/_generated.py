"""Scenarios generated from a seed: the machinery shared by the built-in ones.

A builder draws one plausible run from a ``random.Random`` (the rounds, a toolkit that
answers any later call, and several candidate questions about the target round); the first
candidate whose answer appears nowhere else in the run is asked. When none qualifies (a line
number that happens to appear in another result too) the builder draws again from the next
derived seed, so the same seed, repeat, N and M always give the same episode.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slimtools import Toolkit, ToolResult
from slimtools.errors import ConfigurationError
from slimtools.eval.checks import AnswerCheck
from slimtools.eval.scenarios import (
    DEFAULT_SYSTEM,
    Episode,
    Question,
    Round,
    ScenarioError,
    Serve,
    ToolDef,
    validate_episode,
)

MAX_ROUNDS = 60
"""The most rounds a generated scenario plays."""

_ATTEMPTS = 20


@dataclass(frozen=True)
class Candidate:
    """A question about the target round and the check of its answer."""

    text: str
    check: AnswerCheck


@dataclass
class Draft:
    """One drawn run, before a question is chosen."""

    task: str
    kit: Toolkit
    rounds: list[Round]
    candidates: list[Candidate]
    handles: bool = False
    system: str = DEFAULT_SYSTEM
    hidden: frozenset[str] = field(default_factory=frozenset)

    def play(self, tool: str, args: Mapping[str, Any], say: str) -> str:
        """Run ``tool(**args)`` through the toolkit, record the round, return its result."""
        result = self.kit.call(tool, dict(args))
        if result.is_error:  # a generator bug, not a model's: fail loudly
            raise ScenarioError(f"generated call {tool}({dict(args)}) failed: {result.text}")
        self.rounds.append(Round(tool, dict(args), result.text, say))
        return result.text


Builder = Callable[[random.Random, int, int], Draft]
"""Draws a run of ``rounds`` rounds whose round ``target`` (1-based) holds the answer."""


@dataclass(frozen=True)
class GeneratedScenario:
    """A built-in scenario: a fresh, deterministic run for every seed and repeat.

    Attributes:
        name: the scenario's name (``log_search``).
        description: one line on what it plays and asks.
        build: the builder drawing a run.
    """

    name: str
    description: str
    build: Builder

    def episode(self, repeat: int, *, seed: int = 0, rounds: int = 10, target: int = 3) -> Episode:
        """The episode for this seed and repeat, with ``rounds`` rounds and the answer in
        round ``target``.

        Raises:
            ConfigurationError: ``rounds`` or ``target`` out of range.
            ScenarioError: no valid question after several draws (a generator defect).
        """
        _check_shape(rounds, target)
        source = f"{self.name} (seed {seed}, repeat {repeat})"
        for attempt in range(_ATTEMPTS):
            draft = self.build(
                random.Random(f"{self.name}:{seed}:{repeat}:{attempt}"), rounds, target
            )
            for candidate in draft.candidates:
                episode = Episode(
                    scenario=self.name,
                    repeat=repeat,
                    system=draft.system,
                    task=draft.task,
                    tools=offered(draft.kit, handles=draft.handles, hidden=draft.hidden),
                    rounds=tuple(draft.rounds),
                    question=Question(target, candidate.text, candidate.check),
                    serve=served_by(draft.kit),
                    refetch_tool=draft.kit.companion_name if draft.handles else None,
                )
                try:
                    return validate_episode(episode, source)
                except ScenarioError:
                    continue
        raise ScenarioError(f"{source}: no question whose answer is unique to round {target}")


def _check_shape(rounds: Any, target: Any) -> None:
    for name, value in (("rounds", rounds), ("target", target)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigurationError(f"{name} must be an int >= 1, got {value!r}")
    if rounds > MAX_ROUNDS:
        raise ConfigurationError(f"rounds must be at most {MAX_ROUNDS}, got {rounds}")
    if target > rounds:
        raise ConfigurationError(f"target round {target} is past the last round ({rounds})")


def offered(
    kit: Toolkit, *, handles: bool, hidden: frozenset[str] = frozenset()
) -> tuple[ToolDef, ...]:
    """The toolkit's tools as offered to the model (``get_record`` only with handles)."""
    return tuple(
        ToolDef(spec.name, spec.description, spec.parameters)
        for spec in kit.tools
        if spec.name not in hidden and (handles or spec.name != kit.companion_name)
    )


def served_by(kit: Toolkit) -> Serve:
    """Answer the model's calls through ``Toolkit.call`` (validated, never raising)."""

    def serve(name: str, arguments: str | Mapping[str, Any]) -> ToolResult:
        return kit.call(name, arguments if isinstance(arguments, str) else dict(arguments))

    return serve


def spread(rng: random.Random, items: Sequence[Any], count: int) -> list[Any]:
    """``count`` items drawn without repeats while possible, then cycling through a shuffle."""
    pool = list(items)
    rng.shuffle(pool)
    return [pool[i % len(pool)] for i in range(count)]


def hex_id(rng: random.Random, digits: int = 8) -> str:
    """A random lowercase hexadecimal string."""
    return f"{rng.getrandbits(4 * digits):0{digits}x}"
