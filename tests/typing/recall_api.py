"""The recall harness as a user writes it; ``mypy tests/typing`` checks that it type-checks."""

from __future__ import annotations

from typing import Any

from typing_extensions import assert_type

from slimtools.clearing import ClearingPolicy
from slimtools.eval import (
    DEFAULT_SWEEP,
    AnswerCheck,
    ChatModel,
    Claim,
    RecallReport,
    Setting,
    Summary,
    load_scenario,
    openai_model,
    run_recall,
    wilson_interval,
)


def my_model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """The smallest model: always declines."""
    return "I don't know."


def use_recall() -> None:
    """A sweep with one more setting, a report, a check and an interval."""
    model: ChatModel = my_model
    sweep = [*DEFAULT_SWEEP, Setting("keep 4 turns", ClearingPolicy(keep_turns=4))]
    report = run_recall(["log_search", load_scenario("mine.toml")], model, sweep, repeats=20)
    assert_type(report, RecallReport)
    assert_type(report.summaries(), list[Summary])
    assert_type(report.table(), str)
    assert_type(AnswerCheck("integer", "214").judge("214 lines"), Claim)
    assert_type(wilson_interval(5, 20), tuple[float, float])
    endpoint: ChatModel = openai_model("m", base_url="http://localhost:8080/v1", api_key="none")
    assert callable(endpoint)
