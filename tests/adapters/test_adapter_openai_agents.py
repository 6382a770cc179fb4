"""OpenAI Agents SDK adapter: FunctionTools run by a real Agent with the SDK's ScriptedModel."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunConfig, Runner
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

import slimtools
from slimtools.adapters.openai_agents import to_agents_tools
from tests.adapters.sdk_adapter_fixtures import (
    UNTRUSTED,
    first_brief_id,
    import_error_without,
    make_kit,
)

OFFLINE = RunConfig(tracing_disabled=True)


def _last_output(call: ModelCall) -> str:
    """The function_call_output the model receives in this call."""
    item = call.input[-1]
    assert item["type"] == "function_call_output"
    return str(item["output"])


async def _run(kit: Any, steps: list[Any]) -> tuple[ScriptedModel, Any]:
    model = ScriptedModel(steps)
    agent = Agent(name="support", model=model, tools=to_agents_tools(kit))
    result = await Runner.run(agent, "look into login timeouts", run_config=OFFLINE)
    return model, result


def test_to_agents_tools_gives_strict_function_tools_with_get_record():
    """Every toolkit tool becomes a strict FunctionTool, get_record included."""
    tools = to_agents_tools(make_kit())
    assert all(isinstance(t, FunctionTool) for t in tools)
    assert [t.name for t in tools] == ["search_tickets", "explode", "get_record"]
    assert all(t.strict_json_schema for t in tools)
    page = tools[0].params_json_schema["properties"]["page"]
    assert page["type"] == ["integer", "null"]
    assert "default 1" in page["description"].lower()


def test_a_tool_whose_schema_cannot_be_strict_is_non_strict_alone():
    """An open mapping parameter makes that one tool non-strict; the SDK accepts it."""
    kit = make_kit()

    @kit.tool
    def tag(labels: dict[str, Any]) -> str:
        """Attach labels."""
        return "ok"

    flags = {t.name: t.strict_json_schema for t in to_agents_tools(kit)}
    assert flags == {"search_tickets": True, "explode": True, "tag": False, "get_record": True}


async def test_agent_searches_pages_and_expands_a_record():
    """A scripted agent searches, reads page 2, then expands the first brief with get_record."""
    kit = make_kit()

    def expand(call: ModelCall) -> list[Any]:
        handle = first_brief_id(_last_output(call))
        return [
            function_call(
                "get_record", {"handle": handle, "source": None, "page": None}, call_id="c3"
            )
        ]

    model, result = await _run(
        kit,
        [
            [
                function_call(
                    "search_tickets",
                    {"query": "timeout", "page": None, "limit": None},
                    call_id="c1",
                )
            ],
            [
                function_call(
                    "search_tickets", {"query": "timeout", "page": 2, "limit": 3}, call_id="c2"
                )
            ],
            ModelStep.respond(expand),
            [assistant_message("Ticket 7 is a login timeout.")],
        ],
    )
    outputs = [_last_output(call) for call in model.calls[1:]]
    assert json.loads(outputs[0]).get("page", 1) == 1
    assert json.loads(outputs[1])["page"] == 2
    assert json.loads(outputs[2])["id"] == first_brief_id(outputs[1])
    assert "body" in json.loads(outputs[2])
    assert result.final_output == "Ticket 7 is a login timeout."


@pytest.mark.parametrize("case", UNTRUSTED, ids=lambda c: c.id)
async def test_untrusted_arguments_reach_the_model_and_the_run_goes_on(case):
    """Bad arguments come back to the model as the tool output; the run finishes normally."""
    model, result = await _run(
        make_kit(),
        [[function_call(case.tool, case.arguments, call_id="c1")], [assistant_message("ok")]],
    )
    assert case.says in _last_output(model.calls[1])
    assert result.final_output == "ok"


async def test_a_session_bound_around_the_run_scopes_the_handles():
    """Handles made inside ``with slimtools.session(...)`` resolve only in that session."""
    kit = make_kit()
    with slimtools.session("alice"):
        await _run(
            kit,
            [[function_call("search_tickets", {"query": "timeout"}, call_id="c1")],
             [assistant_message("ok")]],
        )  # fmt: skip
    assert not kit.call("get_record", {"handle": 1}, session="alice").is_error
    assert kit.call("get_record", {"handle": 1}).is_error


def test_to_agents_tools_session_scopes_the_handles():
    """to_agents_tools(kit, session=...) makes every call in that session."""
    kit = make_kit()
    agent = Agent(
        name="s",
        model=ScriptedModel(
            [[function_call("search_tickets", {"query": "timeout"}, call_id="c1")],
             [assistant_message("ok")]]
        ),
        tools=to_agents_tools(kit, session="bob"),
    )  # fmt: skip
    Runner.run_sync(agent, "go", run_config=OFFLINE)
    assert not kit.call("get_record", {"handle": 1}, session="bob").is_error
    assert kit.call("get_record", {"handle": 1}, session="alice").is_error


@pytest.mark.subprocess
def test_missing_framework_raises_an_import_error_naming_the_extra():
    """Without the Agents SDK, importing the adapter says which extra to install."""
    assert "pip install 'slimtools[openai-agents]'" in import_error_without(
        "agents", "slimtools.adapters.openai_agents"
    )
