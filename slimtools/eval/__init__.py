"""Evaluations of what clearing does to a model: the recall harness (:mod:`.recall`).

``run_recall(scenarios, model)`` plays each scenario through the clearing core under every
setting of a sweep and classifies each answer as refetched, from the placeholder, from
memory, fabricated or declined; ``slimtools recall`` is the same from the command line.
Nothing here imports a model SDK or framework until a model adapter is called.
"""

from __future__ import annotations

from slimtools.eval._builtins import BUILTIN_SCENARIOS
from slimtools.eval._generated import GeneratedScenario
from slimtools.eval.checks import CHECK_KINDS, AnswerCheck, Claim
from slimtools.eval.models import (
    ChatModel,
    ModelReplyError,
    Reply,
    ToolCallRequest,
    anthropic_model,
    as_reply,
    langchain_model,
    openai_model,
)
from slimtools.eval.recall import (
    DEFAULT_SWEEP,
    ModelCallError,
    Setting,
    as_model,
    heads_sweep,
    resolve_scenario,
    run_recall,
    run_trial,
)
from slimtools.eval.report import (
    METHOD,
    OUTCOMES,
    Outcome,
    Rate,
    RecallReport,
    Summary,
    Trial,
    wilson_interval,
)
from slimtools.eval.scenario_files import FileScenario, load_scenario
from slimtools.eval.scenarios import (
    DEFAULT_SYSTEM,
    Episode,
    Question,
    Round,
    Scenario,
    ScenarioError,
    ToolDef,
    validate_episode,
)

__all__ = [
    "BUILTIN_SCENARIOS",
    "CHECK_KINDS",
    "DEFAULT_SWEEP",
    "DEFAULT_SYSTEM",
    "METHOD",
    "OUTCOMES",
    "AnswerCheck",
    "ChatModel",
    "Claim",
    "Episode",
    "FileScenario",
    "GeneratedScenario",
    "ModelCallError",
    "ModelReplyError",
    "Outcome",
    "Question",
    "Rate",
    "RecallReport",
    "Reply",
    "Round",
    "Scenario",
    "ScenarioError",
    "Setting",
    "Summary",
    "ToolCallRequest",
    "ToolDef",
    "Trial",
    "anthropic_model",
    "as_model",
    "as_reply",
    "heads_sweep",
    "langchain_model",
    "load_scenario",
    "openai_model",
    "resolve_scenario",
    "run_recall",
    "run_trial",
    "validate_episode",
    "wilson_interval",
]
