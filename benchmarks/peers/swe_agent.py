"""SWE-agent's ``LastNObservations`` and the observation masking of "The Complexity Trap".

Both keep the last few observations and replace older ones with SWE-agent's one line,
``Old environment output: (N lines omitted)``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from benchmarks.peers._common import Step, _check_int, _check_tags, _mask, _tags
from slimtools.clearing import ResultView, detect_format, view
from slimtools.clearing.formats import get


def last_n_observations_step(
    n: int = 5,
    *,
    polling: int = 1,
    always_remove_output_for_tags: Collection[str] = frozenset({"remove_output"}),
    always_keep_output_for_tags: Collection[str] = frozenset({"keep_output"}),
) -> Step:
    """SWE-agent's ``LastNObservations`` history processor as a per-call step.

    Reproduces ``sweagent/agent/history_processors.py`` of SWE-agent/SWE-agent at commit
    3ea751c087f32b16e039a2233dd6eefecef325d5, which "elides all but the last n observations"
    (the SWE-agent paper's setting is ``n=5``). Its rules, mapped onto a tool-call history:

    - An observation is a tool result (SWE-agent's ``message_type: "observation"`` messages
      are its tool results and the task statement). SWE-agent also counts the task statement,
      its *instance template*, as the first observation and never elides it; here the task is
      a user message, which no step touches, and it is counted as that first observation.
    - With ``K`` observations (the task included), SWE-agent elides observations ``1`` up to
      ``(K // polling) * polling - n`` (exclusive): with ``polling=1`` every result but the
      last ``n``; a larger ``polling`` moves the cut only every ``polling`` observations, so
      between ``n`` and ``n + polling - 1`` results stay (SWE-agent's help for prompt caching).
    - An elided result reads ``"Old environment output: (N lines omitted)"``, ``N`` the text
      lines of the original (``str.splitlines`` over its text parts), followed by
      ``" (M images omitted)"`` when it held images.
    - A result whose message (a dict) has ``is_demo: true`` is a demonstration: not counted and
      not elided. A message's ``tags`` containing one of ``always_keep_output_for_tags`` keeps
      its results, one of ``always_remove_output_for_tags`` elides them even among the last
      ``n``. Histories from other harnesses carry neither key, so there the step is the plain
      count.

    One deviation makes the step idempotent: SWE-agent only ever processes its raw history,
    so a result that already reads as its placeholder is left as it is rather than re-counted
    as one line.

    Raises:
        ConfigurationError: ``n`` or ``polling`` is not an int >= 1, or a tag option is not
            a collection of strings.
    """
    _check_int("n", n, 1)
    _check_int("polling", polling, 1)
    remove = _check_tags("always_remove_output_for_tags", always_remove_output_for_tags)
    keep = _check_tags("always_keep_output_for_tags", always_keep_output_for_tags)

    def step(messages: list[Any]) -> list[Any]:
        fmt = detect_format(messages)
        seen = view(messages, fmt)
        observations = [
            i for i, r in enumerate(seen.results) if not get(messages[r.position], "is_demo")
        ]
        last_removed = max(0, ((len(observations) + 1) // polling) * polling - n)
        elided = set(observations[: max(0, last_removed - 1)])

        def masks(index: int, result: ResultView) -> bool:
            tags = _tags(messages[result.position])
            return (index in elided and not tags & keep) or bool(tags & remove)

        return _mask(messages, fmt, seen.results, masks, images=True)

    return step


# -- The Complexity Trap -----------------------------------------------------------------


def observation_masking_step(window: int = 10) -> Step:
    """The observation masking of "The Complexity Trap" as a per-call step.

    Lindenbauer, Slinko, Felder, Bogomolov, Zharov (2025), "The Complexity Trap: Simple
    Observation Masking Is as Efficient as LLM Summarization for Agent Context Management"
    (arXiv:2508.21433), code at github.com/JetBrains-Research/the-complexity-trap, commit
    adfaa1a18b8b3500abb7537101b2bdcefa31f22a. Before turn ``t`` every observation of a turn
    ``i < t - window`` is replaced by a placeholder, so the observations of the last
    ``window`` turns stay whole; reasoning and actions are never touched. Their main
    experiments use ``window=10`` (config ``default_no_demo_N=1_M=10.yaml``).

    Their code is SWE-agent's ``LastNObservations`` with ``n=window`` in a scaffold that makes
    exactly one tool call per turn, so one observation is one turn. Here a turn is one model
    call and every result of a masked turn is masked, which is the paper's definition and
    equals their code on one-call-per-turn histories. The placeholder is their code's:
    ``"Old environment output: (N lines omitted)"`` with ``N`` the text lines of the original
    (their fork drops SWE-agent's images suffix). A result already holding it is left alone.

    Raises:
        ConfigurationError: ``window`` is not an int >= 0.
    """
    _check_int("window", window, 0)

    def step(messages: list[Any]) -> list[Any]:
        fmt = detect_format(messages)
        seen = view(messages, fmt)
        cut = seen.turns - window  # the prompt holds turns 1..t-1; mask turns i < t - window
        return _mask(messages, fmt, seen.results, lambda _, r: r.turn <= cut, images=False)

    return step
