"""Schema fidelity: every adapter shows the model page/limit and get_record's parameters.

One parametrised test reads, for each adapter, the parameter schema the framework itself
builds or sends (after its own conversions) for a paginated tool and for get_record. Each
framework is imported inside its reader, so this file also runs where one is missing only
if that reader is never selected; in the dev environment every framework is installed.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle
from tests.adapters.sdk_adapter_fixtures import TICKETS, TicketBrief, make_kit

Reader = Callable[[Toolkit, str], dict[str, Any]]


def _openai_chat(kit: Toolkit, name: str) -> dict[str, Any]:
    from slimtools.adapters.openai import chat_tools

    return next(t["function"] for t in chat_tools(kit) if t["function"]["name"] == name)[
        "parameters"
    ]


def _openai_chat_loose(kit: Toolkit, name: str) -> dict[str, Any]:
    from slimtools.adapters.openai import chat_tools

    tools = chat_tools(kit, strict=False)
    return next(t["function"] for t in tools if t["function"]["name"] == name)["parameters"]


def _openai_responses(kit: Toolkit, name: str) -> dict[str, Any]:
    from slimtools.adapters.openai import response_tools

    return dict(next(t for t in response_tools(kit) if t["name"] == name)["parameters"] or {})


def _anthropic(kit: Toolkit, name: str) -> dict[str, Any]:
    from slimtools.adapters.anthropic import anthropic_tools

    return dict(next(t for t in anthropic_tools(kit) if t["name"] == name)["input_schema"])


def _openai_agents(kit: Toolkit, name: str) -> dict[str, Any]:
    from slimtools.adapters.openai_agents import to_agents_tools

    return next(t for t in to_agents_tools(kit) if t.name == name).params_json_schema


def _pydantic_ai(kit: Toolkit, name: str) -> dict[str, Any]:
    """The tool definitions a Pydantic AI model receives from the toolset."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    from slimtools.adapters.pydantic_ai import to_pydantic_ai_toolset

    seen: dict[str, dict[str, Any]] = {}

    def respond(messages: Any, info: Any) -> ModelResponse:
        seen.update({t.name: t.parameters_json_schema for t in info.function_tools})
        return ModelResponse(parts=[TextPart("ok")])

    Agent(FunctionModel(respond), toolsets=[to_pydantic_ai_toolset(kit)]).run_sync("hi")
    return seen[name]


def _langchain(kit: Toolkit, name: str) -> dict[str, Any]:
    """The parameters LangChain sends a chat model for the tool."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from slimtools.adapters.langchain import to_langchain_tools

    tool = next(t for t in to_langchain_tools(kit) if t.name == name)
    parameters: dict[str, Any] = convert_to_openai_tool(tool)["function"]["parameters"]
    return parameters


def _mcp(kit: Toolkit, name: str) -> dict[str, Any]:
    """The inputSchema an MCP client lists, through an in-process client session."""
    from mcp import Client

    from slimtools.adapters.mcp import to_mcp_server

    async def listed() -> dict[str, Any]:
        async with Client(to_mcp_server(kit)) as client:
            tools = (await client.list_tools()).tools
        tool = next(t for t in tools if t.name == name)
        return dict(getattr(tool, "input_schema", None) or tool.inputSchema)

    return asyncio.run(listed())


READERS: dict[str, tuple[Reader, bool]] = {
    # name: (reader, strict) -- strict schemas cannot carry "default" (OpenAI rejects it),
    # so there the default is stated in the description and null stands for it.
    "openai-chat": (_openai_chat, True),
    "openai-chat-nonstrict": (_openai_chat_loose, False),
    "openai-responses": (_openai_responses, True),
    "anthropic": (_anthropic, False),
    "openai-agents": (_openai_agents, True),
    "pydantic-ai": (_pydantic_ai, False),
    "langchain": (_langchain, False),
    "mcp": (_mcp, False),
}


def _types(prop: dict[str, Any]) -> set[str]:
    kinds = prop.get("type")
    found = set(kinds) if isinstance(kinds, list) else {kinds} if kinds else set()
    for variant in prop.get("anyOf", []):
        found |= _types(variant)
    return found


def _enum(prop: dict[str, Any]) -> list[Any]:
    values = list(prop.get("enum", []))
    for variant in prop.get("anyOf", []):
        values += _enum(variant)
    return values


def _check_param(
    schema: dict[str, Any], name: str, types: set[str], default: Any, strict: bool
) -> None:
    """``default`` is written as the schema's description states it (JSON for strings)."""
    prop = schema["properties"][name]
    assert types <= _types(prop), f"{name}: {prop}"
    if default is None:
        return
    if strict:
        assert "null" in _types(prop), f"{name} must accept null for its default: {prop}"
        stated = rf"default:? {re.escape(str(default))}" + (
            r"\b" if str(default)[-1].isalnum() else ""
        )
        assert re.search(stated, prop["description"], re.IGNORECASE), prop
    else:
        assert json.dumps(prop["default"]) == str(default), prop


class TicketDetail(BaseModel):
    """The detailed view of a ticket (its body too, never its tenant)."""

    id: int
    title: str
    body: str


def _kit(name: str) -> Toolkit:
    """The shared ticket kit plus a tool that takes ``response_format``."""
    kit = make_kit(name)

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=3)
    @project_fields(TicketBrief, detail=TicketDetail, response_format=True)
    def browse_tickets(query: str) -> list[dict[str, Any]]:
        """Browse tickets, concise or detailed."""
        return TICKETS

    return kit


@pytest.mark.parametrize("tool", ["search_tickets", "browse_tickets", "get_record"])
@pytest.mark.parametrize("adapter", list(READERS))
def test_adapter_schema_shows_paging_and_get_record_parameters(adapter, tool):
    """page/limit, response_format and get_record's handle/source/page appear, typed."""
    reader, strict = READERS[adapter]
    schema = reader(_kit(f"schema-{adapter}"), tool)
    assert schema["type"] == "object"
    if tool == "browse_tickets":
        _check_param(schema, "page", {"integer"}, 1, strict)
        _check_param(schema, "response_format", {"string"}, '"concise"', strict)
        prop = schema["properties"]["response_format"]
        assert {"concise", "detailed"} <= set(_enum(prop)), prop
        assert prop.get("description")
    elif tool == "search_tickets":
        _check_param(schema, "query", {"string"}, None, strict)
        _check_param(schema, "page", {"integer"}, 1, strict)
        _check_param(schema, "limit", {"integer"}, 3, strict)
        assert schema["properties"]["page"].get("description")
        assert schema["properties"]["limit"].get("description")
        assert "query" in schema.get("required", [])
    else:
        _check_param(schema, "handle", {"string", "integer"}, None, strict)
        _check_param(schema, "source", {"string"}, None, strict)
        _check_param(schema, "page", {"integer"}, 1, strict)
        assert "handle" in schema.get("required", [])
