"""Pydantic AI adapter: the toolset, run by real Agents on Pydantic AI's test models."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

import slimtools
from slimtools.adapters.pydantic_ai import SlimToolset, to_pydantic_ai_toolset
from tests.adapters.sdk_adapter_fixtures import (
    UNTRUSTED,
    first_brief_id,
    import_error_without,
    make_kit,
)


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """Every tool return the model was sent, in order."""
    return [
        part
        for message in messages
        for part in getattr(message, "parts", [])
        if isinstance(part, ToolReturnPart)
    ]


def _scripted(*rounds: Any) -> FunctionModel:
    """A FunctionModel answering round i with rounds[i] (parts, or a function of the messages)."""
    script = list(rounds)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = script.pop(0)
        parts = step(messages) if callable(step) else step
        return ModelResponse(parts=parts)

    return FunctionModel(respond)


def test_toolset_lists_every_tool_with_its_parameter_schema():
    """The toolset's tool definitions are the toolkit's, get_record included."""
    kit = make_kit()
    seen: list[Any] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.function_tools)
        return ModelResponse(parts=[TextPart("done")])

    Agent(FunctionModel(respond), toolsets=[to_pydantic_ai_toolset(kit)]).run_sync("hi")
    assert [t.name for t in seen] == ["search_tickets", "explode", "get_record"]
    assert [t.parameters_json_schema for t in seen] == [s.parameters for s in kit.tools]


def test_toolset_id_names_the_toolkit():
    """A toolset's default id is derived from the toolkit name, or taken as given."""
    assert SlimToolset(make_kit("crm")).id == "slimtools:crm"
    assert to_pydantic_ai_toolset(make_kit(), id="t").id == "t"


def test_agent_searches_pages_and_expands_a_record():
    """A scripted agent searches, pages, and expands a brief; structured envelope in metadata."""
    model = _scripted(
        [ToolCallPart("search_tickets", {"query": "timeout"}, tool_call_id="c1")],
        [ToolCallPart("search_tickets", {"query": "timeout", "page": 2}, tool_call_id="c2")],
        lambda messages: [
            ToolCallPart(
                "get_record",
                {"handle": first_brief_id(_returns(messages)[-1].content)},
                tool_call_id="c3",
            )
        ],
        [TextPart("done")],
    )
    result = Agent(model, toolsets=[to_pydantic_ai_toolset(make_kit())]).run_sync("timeouts?")
    first, second, record = _returns(result.all_messages())
    assert first.metadata == json.loads(first.content)
    assert second.metadata["page"] == 2
    assert json.loads(record.content)["id"] == first_brief_id(second.content)
    assert [p.outcome for p in (first, second, record)] == ["success"] * 3


@pytest.mark.parametrize("case", UNTRUSTED, ids=lambda c: c.id)
def test_untrusted_arguments_give_failed_results_and_the_run_goes_on(case):
    """Bad arguments come back as a tool return (failed where it is an error); no exception."""
    model = _scripted(
        [ToolCallPart(case.tool, case.arguments, tool_call_id="c1")],
        [ToolCallPart(case.tool, case.arguments, tool_call_id="c2")],  # twice: no retry budget
        [TextPart("done")],
    )
    result = Agent(model, toolsets=[to_pydantic_ai_toolset(make_kit())]).run_sync("go")
    returns = _returns(result.all_messages())
    assert result.output == "done"
    assert all(case.says in str(r.content) for r in returns)
    assert {r.outcome for r in returns} == {"failed" if case.is_error else "success"}


def test_a_handle_beyond_64_bits_sent_as_json_text_stays_exact():
    """Arguments sent as JSON text keep a snowflake id exact on the way to get_record."""
    kit = slimtools.Toolkit("snowflakes")
    big = 2**70 + 1

    @kit.tool
    @slimtools.summarize_with_handle(key="id")
    def search(query: str) -> list[dict[str, Any]]:
        """Search."""
        return [{"id": big, "title": query}]

    model = _scripted(
        [ToolCallPart("search", {"query": "q"}, tool_call_id="c1")],
        [ToolCallPart("get_record", f'{{"handle": {big}}}', tool_call_id="c2")],
        [TextPart("done")],
    )
    result = Agent(model, toolsets=[to_pydantic_ai_toolset(kit)]).run_sync("go")
    assert json.loads(_returns(result.all_messages())[-1].content) == {"id": big, "title": "q"}


def test_test_model_calls_every_tool_without_an_exception():
    """TestModel calls every tool with arguments generated from the schemas; the run ends."""
    result = Agent(TestModel(), toolsets=[to_pydantic_ai_toolset(make_kit())]).run_sync("go")
    assert {r.tool_name for r in _returns(result.all_messages())} == {
        "search_tickets",
        "explode",
        "get_record",
    }


def test_toolset_passes_the_bound_session_to_the_toolkit():
    """A toolset made with session= resolves handles only in that session."""
    kit = make_kit()
    model = _scripted(
        [ToolCallPart("search_tickets", {"query": "timeout"}, tool_call_id="c1")],
        [TextPart("done")],
    )
    Agent(model, toolsets=[to_pydantic_ai_toolset(kit, session="alice")]).run_sync("go")
    assert not kit.call("get_record", {"handle": 1}, session="alice").is_error
    assert kit.call("get_record", {"handle": 1}, session="bob").is_error


def test_a_session_bound_around_the_run_scopes_the_handles():
    """Handles made inside ``with slimtools.session(...)`` resolve only in that session."""
    kit = make_kit()
    model = _scripted(
        [ToolCallPart("search_tickets", {"query": "timeout"}, tool_call_id="c1")],
        [TextPart("done")],
    )
    with slimtools.session("carol"):
        Agent(model, toolsets=[to_pydantic_ai_toolset(kit)]).run_sync("go")
    assert not kit.call("get_record", {"handle": 1}, session="carol").is_error
    assert kit.call("get_record", {"handle": 1}).is_error


@pytest.mark.subprocess
def test_missing_framework_raises_an_import_error_naming_the_extra():
    """Without the Pydantic AI, importing the adapter says which extra to install."""
    assert "pip install 'slimtools[pydantic-ai]'" in import_error_without(
        "pydantic_ai", "slimtools.adapters.pydantic_ai"
    )
