"""The recall harness: does clearing make a model refetch, read the placeholder, or invent?

A scenario plays tool calls and results
round by round through the clearing core (a :class:`~slimtools.Clearer` with the setting's
policy, run before every model call as an agent loop would), then after round N asks a
question whose answer exists only in the result of round M. The model under test may call
tools again (each call is served and answered) within ``max_steps`` model calls, then
answers. Every answer is classified as exactly one of :data:`OUTCOMES`:

- ``refetched``: it called a tool again: round M's tool, the ``get_record`` companion, or
  any call whose result showed the answer;
- ``from_placeholder``: otherwise, a correct answer that the model could read in round M's
  result as it was sent (the placeholder's kept head; for an uncleared result, the result);
- ``from_memory``: otherwise, a correct answer it could not read anywhere in the context;
- ``fabricated``: a specific value that is wrong;
- ``declined``: no value at all (it said it does not know, or ran out of steps without one).

``run_recall`` repeats every scenario K times (different seeds, or orderings of a file's
rounds) under each :class:`Setting` of a sweep, the same K episodes for every setting, and
returns a :class:`~slimtools.eval.report.RecallReport`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from slimtools.clearing import Clearer, ClearingPolicy, is_placeholder
from slimtools.errors import ConfigurationError, SlimtoolsError
from slimtools.eval._builtins import BUILTIN_SCENARIOS
from slimtools.eval.models import (
    ChatModel,
    ModelReplyError,
    Reply,
    arguments_json,
    as_reply,
    langchain_model,
)
from slimtools.eval.report import Outcome, RecallReport, Trial
from slimtools.eval.scenario_files import load_scenario
from slimtools.eval.scenarios import Episode, Scenario


class Setting(NamedTuple):
    """One column of a sweep: a label and the clearing policy (None: clearing off)."""

    label: str
    policy: ClearingPolicy | None


TURN_END = ClearingPolicy(cache=None)
"""The sweep's base: every stale result cleared at the round end it falls due (no cache
economics), so round M's result is certainly cleared when the question comes."""

DEFAULT_SWEEP: tuple[Setting, ...] = (
    Setting("clearing off", None),
    Setting("keep_head=0", TURN_END.replace(keep_head=0)),
    Setting("keep_head=200", TURN_END.replace(keep_head=200)),
    Setting("keep_head=500", TURN_END.replace(keep_head=500)),
)
"""No clearing; turn-end clearing with a 0-, 200- and 500-character head. Any other policy
is one more ``Setting`` in the list."""


class ModelCallError(SlimtoolsError, RuntimeError):
    """The model under test raised; the message names the scenario, repeat and setting."""


def heads_sweep(
    heads: Iterable[int], *, base: ClearingPolicy | None = None, clearing_off: bool = True
) -> tuple[Setting, ...]:
    """Settings for ``keep_head`` values over ``base`` (:data:`TURN_END`), after clearing off."""
    policy = base if base is not None else TURN_END
    settings = [Setting("clearing off", None)] if clearing_off else []
    settings += [Setting(f"keep_head={h}", policy.replace(keep_head=h)) for h in heads]
    return tuple(settings)


def as_model(model: Any) -> ChatModel:
    """A :data:`ChatModel` from a callable or a LangChain chat model."""
    if hasattr(model, "bind_tools") and hasattr(model, "invoke"):
        return langchain_model(model)
    if not callable(model):
        raise ConfigurationError(
            f"model must be a callable (messages, tools) -> assistant message or a LangChain "
            f"chat model, got {type(model).__name__}"
        )
    wrapped: ChatModel = model
    return wrapped


def run_recall(
    scenarios: Sequence[Scenario | str],
    model: Any,
    settings: Sequence[Setting | tuple[str, ClearingPolicy | None]] = DEFAULT_SWEEP,
    *,
    repeats: int = 20,
    rounds: int = 10,
    target: int = 3,
    seed: int = 0,
    max_steps: int = 4,
    progress: Callable[[Trial, int, int], None] | None = None,
) -> RecallReport:
    """Run every scenario ``repeats`` times under every setting; classify every answer.

    Args:
        scenarios: :class:`Scenario` objects, built-in names (``log_search``) or file paths.
        model: a :data:`ChatModel` callable or a LangChain chat model.
        settings: the sweep; each a ``(label, policy or None)``.
        repeats: K, episodes per scenario (seeds ``seed`` to ``seed + K - 1``).
        rounds: N, rounds played before the question (generated scenarios).
        target: M, the round whose result holds the answer (generated scenarios).
        seed: the first seed.
        max_steps: model calls allowed after the question (tool calls included).
        progress: called after each trial with the trial, its number and the total.

    Raises:
        ConfigurationError: invalid settings or counts.
        ModelCallError: the model raised (a run with a broken model is not a measurement).
    """
    sweep = _settings(settings)
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
        raise ConfigurationError(f"repeats must be an int >= 1, got {repeats!r}")
    if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
        raise ConfigurationError(f"max_steps must be an int >= 1, got {max_steps!r}")
    chat = as_model(model)
    resolved = [resolve_scenario(s) for s in scenarios]
    if not resolved:
        raise ConfigurationError("no scenario to run")
    trials: list[Trial] = []
    total = len(resolved) * repeats * len(sweep)
    for scenario in resolved:
        for repeat in range(repeats):
            episode = scenario.episode(repeat, seed=seed + repeat, rounds=rounds, target=target)
            for setting in sweep:
                trial = run_trial(episode, setting, chat, max_steps=max_steps)
                trials.append(trial)
                if progress is not None:
                    progress(trial, len(trials), total)
    return RecallReport(tuple(s.label for s in sweep), tuple(trials))


def _settings(settings: Sequence[Setting | tuple[str, ClearingPolicy | None]]) -> list[Setting]:
    sweep = []
    for item in settings:
        try:
            label, policy = item
        except (TypeError, ValueError):
            raise ConfigurationError(
                f"a setting is a (label, policy or None), got {item!r}"
            ) from None
        if not isinstance(label, str) or not label:
            raise ConfigurationError(f"a setting's label must be a non-empty str, got {label!r}")
        if policy is not None and not isinstance(policy, ClearingPolicy):
            raise ConfigurationError(
                f"setting {label!r}: policy must be a ClearingPolicy or None, got "
                f"{type(policy).__name__}"
            )
        sweep.append(Setting(label, policy))
    labels = [s.label for s in sweep]
    if not sweep or len(set(labels)) != len(labels):
        raise ConfigurationError(f"settings need distinct labels, at least one; got {labels}")
    return sweep


def resolve_scenario(scenario: Scenario | str) -> Scenario:
    """A scenario object from itself, a built-in name or a ``.json``/``.toml`` path."""
    if not isinstance(scenario, str):
        if not isinstance(scenario, Scenario):
            raise ConfigurationError(f"not a scenario: {scenario!r}")
        return scenario
    if scenario in BUILTIN_SCENARIOS:
        return BUILTIN_SCENARIOS[scenario]
    if scenario.lower().endswith((".json", ".toml")):
        return load_scenario(scenario)
    raise ConfigurationError(
        f"unknown scenario {scenario!r}: use one of {sorted(BUILTIN_SCENARIOS)} or a "
        ".json/.toml file"
    )


@dataclass
class _Conversation:
    """The history of one trial, cleared before every model call as an agent loop would."""

    clearer: Clearer | None
    messages: list[dict[str, Any]]
    used_ids: set[str] = field(default_factory=set)
    called: list[str] = field(default_factory=list)
    served: list[str] = field(default_factory=list)

    def prepare(self) -> list[dict[str, Any]]:
        """What the model is sent now: the history, cleared, as a copy."""
        cleared = self.clearer.clear(self.messages) if self.clearer else self.messages
        # A model may mutate what it is given; the history must stay ours.
        return copy.deepcopy(list(cleared))

    def append_call(self, text: str, calls: Sequence[tuple[str, str, str]]) -> None:
        """An assistant message carrying ``(id, name, arguments JSON)`` calls."""
        self.used_ids.update(i for i, _, _ in calls)
        tool_calls = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ]
        message = {"role": "assistant", "content": text or None, "tool_calls": tool_calls}
        self.messages.append(message)

    def append_result(self, call_id: str, text: str) -> None:
        """The tool message answering call ``call_id``."""
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": text})

    def serve(self, reply: Reply, episode: Episode, step: int) -> bool:
        """Answer every call of ``reply``; whether one of them refetched round M's result."""
        calls = []
        for n, call in enumerate(reply.calls):
            call_id = call.id
            if not call_id or call_id in self.used_ids:  # one call, one result, one id
                call_id = f"recall_{step}_{n}"
            self.used_ids.add(call_id)
            calls.append((call_id, call.name, arguments_json(call.arguments)))
        self.append_call(reply.text, calls)
        refetched = False
        for (call_id, name, arguments), call in zip(calls, reply.calls, strict=True):
            result = episode.serve(name, call.arguments)
            self.called.append(f"{name}({arguments})")
            self.served.append(result.text)
            self.append_result(call_id, result.text)
            refetched |= name in {episode.target.tool, episode.refetch_tool}
        return refetched


def run_trial(episode: Episode, setting: Setting, model: ChatModel, *, max_steps: int = 4) -> Trial:
    """Play one episode under one setting and classify the model's answer."""
    policy = setting.policy
    conversation = _Conversation(
        Clearer(policy, format="openai_chat", observed=False) if policy is not None else None,
        [{"role": "system", "content": episode.system}, {"role": "user", "content": episode.task}],
    )
    target_index = 0
    for number, rnd in enumerate(episode.rounds, 1):
        conversation.prepare()  # the model call that chose this round's tool
        call_id = f"call_{number}"
        conversation.append_call(rnd.say, [(call_id, rnd.tool, arguments_json(rnd.args))])
        if number == episode.question.round:
            target_index = len(conversation.messages)
        conversation.append_result(call_id, rnd.result)
    conversation.messages.append({"role": "user", "content": episode.question.text})
    tools = [t.openai() for t in episode.tools]
    check = episode.question.check
    seen_by_model, answer, refetched, steps = "", "", False, 0
    for step in range(max_steps):
        sent = conversation.prepare()
        if step == 0:
            seen_by_model = str(sent[target_index]["content"])
        steps += 1
        reply = _ask(model, sent, tools, episode, setting)
        answer = reply.text  # with calls, provisional: kept only if the steps run out
        if not reply.calls:
            break
        refetched |= conversation.serve(reply, episode, step)
    claim = check.judge(answer, episode.question.text)
    recovered = any(check.found_in(text) for text in conversation.served)
    return Trial(
        scenario=episode.scenario,
        repeat=episode.repeat,
        setting=setting.label,
        outcome=_classify(claim.verdict, refetched or recovered, check.found_in(seen_by_model)),
        correct=claim.verdict == "correct",
        claimed=claim.value,
        expected=check.expected,
        answer=answer,
        calls=tuple(conversation.called),
        refetch_had_answer=recovered,
        cleared=is_placeholder(seen_by_model),
        visible=check.found_in(seen_by_model),
        steps=steps,
    )


def _ask(
    model: ChatModel,
    sent: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    episode: Episode,
    setting: Setting,
) -> Reply:
    """One model call; a failure names where it happened."""
    where = f"{episode.scenario} repeat {episode.repeat} ({setting.label})"
    try:
        value = model(sent, tools)
    except Exception as exc:
        raise ModelCallError(f"the model failed on {where}: {type(exc).__name__}: {exc}") from exc
    try:
        return as_reply(value)
    except ModelReplyError as exc:
        raise ModelReplyError(f"on {where}, {exc}") from None


def _classify(verdict: str, refetched: bool, visible: bool) -> Outcome:
    """The five-way rule, applied in order (see the module docstring)."""
    if refetched:
        return "refetched"
    if verdict == "correct":
        return "from_placeholder" if visible else "from_memory"
    if verdict == "wrong":
        return "fabricated"
    return "declined"
