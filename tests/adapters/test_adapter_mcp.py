"""MCP adapter: a toolkit served by the official SDK's MCPServer, through a real client session.

Every call goes through ``mcp.Client`` connected in-process, in both of its modes: the
default direct dispatch and ``legacy`` (JSON-RPC over in-memory streams). The client checks
each result's structuredContent against the tool's outputSchema, so every successful call
here also proves that the published schema describes the envelope as emitted.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from slimtools import ConfigurationError, Toolkit
from slimtools.adapters.mcp import to_mcp_server
from tests.adapters.langchain_mcp_fixtures import LOGS, make_log_kit
from tests.adapters.sdk_adapter_fixtures import OBJECT_CASES, import_error_without, make_kit

MODES = ["auto", "legacy"]


@asynccontextmanager
async def connect(server: MCPServer[Any], mode: str = "auto") -> AsyncIterator[Client]:
    """An in-process MCP client session on ``server``."""
    async with Client(server, mode=mode) as client:
        yield client


def envelope(result: Any) -> dict[str, Any]:
    """The envelope of a successful call, checked to be the same on both channels."""
    assert not result.is_error, result.content[0].text
    parsed: dict[str, Any] = json.loads(result.content[0].text)
    assert result.structured_content == parsed
    return parsed


def test_creates_a_server_named_after_the_toolkit():
    """Without a server, one is made, named after the toolkit, and returned."""
    server = to_mcp_server(make_log_kit("audit-logs"))
    assert isinstance(server, MCPServer)
    assert server.name == "audit-logs"


@pytest.mark.parametrize("mode", MODES)
async def test_lists_every_tool_with_the_toolkits_schemas(mode):
    """list_tools shows each tool, get_record last, with ToolSpec's input and output schemas."""
    kit = make_log_kit()
    async with connect(to_mcp_server(kit), mode) as client:
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == [s.name for s in kit.tools]
    for tool, spec in zip(listed, kit.tools, strict=True):
        assert tool.input_schema == spec.parameters
        assert tool.output_schema == spec.output_schema
        assert tool.description == spec.description


async def test_input_schema_shows_page_and_limit_and_get_record_takes_a_handle():
    """page/limit are typed, defaulted and described; get_record requires a handle."""
    async with connect(to_mcp_server(make_log_kit())) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    props = tools["search_logs"].input_schema["properties"]
    assert props["page"]["type"] == "integer"
    assert props["page"]["default"] == 1
    assert props["limit"]["type"] == "integer"
    assert props["limit"]["default"] == 3
    assert props["page"]["description"]
    assert props["limit"]["description"]
    assert tools["get_record"].input_schema["required"] == ["handle"]
    assert tools["get_record"].output_schema is None


@pytest.mark.parametrize("mode", MODES)
async def test_structured_content_equals_the_text_the_model_reads(mode):
    """Both channels carry the same envelope; fields outside the allowlist never appear."""
    async with connect(to_mcp_server(make_log_kit()), mode) as client:
        result = await client.call_tool("search_logs", {"query": "timeout"})
    env = envelope(result)
    assert env["total"] == 12
    assert [b["id"] for b in env["briefs"]] == [1, 2, 3]
    assert "tenant" not in result.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_call_tool_pages_then_get_record_expands_a_returned_handle(mode):
    """search, page 2, then get_record on a brief's handle gives the full original row."""
    async with connect(to_mcp_server(make_log_kit()), mode) as client:
        await client.call_tool("search_logs", {"query": "timeout"})
        page2 = envelope(await client.call_tool("search_logs", {"query": "timeout", "page": 2}))
        handle = page2["briefs"][1]["id"]
        record = await client.call_tool("get_record", {"handle": handle})
    assert page2["page"] == 2
    assert handle == 5
    assert not record.is_error
    assert json.loads(record.content[0].text) == LOGS[4]


async def test_a_long_text_validates_and_reads_on_through_get_record():
    """A text envelope passes the client's schema check; get_record(handle, page=2) reads on."""
    async with connect(to_mcp_server(make_log_kit())) as client:
        head = envelope(await client.call_tool("read_log", {"path": "a.log"}))
        more = await client.call_tool("get_record", {"handle": head["handle"], "page": 2})
    assert head["total"] == 30
    assert head["text"].count("\n") == 4  # four whole lines, each with its line end
    assert json.loads(more.content[0].text)["text"].startswith("03:05")


async def test_an_async_tool_with_generated_handles_round_trips():
    """An async tool is awaited; its generated handles resolve through get_record."""
    async with connect(to_mcp_server(make_log_kit())) as client:
        env = envelope(await client.call_tool("recent_errors", {"count": 2}))
        record = await client.call_tool("get_record", {"handle": env["briefs"][1]["handle"]})
    assert json.loads(record.content[0].text) == LOGS[2]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", OBJECT_CASES, ids=[c.id for c in OBJECT_CASES])
async def test_untrusted_arguments_come_back_as_results(case, mode):
    """Bad calls give results the model can act on, isError set when the call failed."""
    async with connect(to_mcp_server(make_kit("mcp-untrusted")), mode) as client:
        result = await client.call_tool(case.tool, case.object_arguments)
    assert result.is_error is case.is_error
    assert case.says in result.content[0].text
    if not case.is_error:
        envelope(result)


async def test_registers_beside_the_tools_of_an_existing_server():
    """Given a server, the kit's tools join its own and the same server is returned."""
    server: MCPServer[Any] = MCPServer("app")

    @server.tool()
    def ping() -> str:
        """Answer pong."""
        return "pong"

    assert to_mcp_server(make_log_kit(), server) is server
    async with connect(server) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        pong = await client.call_tool("ping", {})
        found = await client.call_tool("search_logs", {"query": "auth"})
    assert names == ["ping", "search_logs", "read_log", "recent_errors", "get_record"]
    assert pong.content[0].text == "pong"
    assert envelope(found)["total"] == 4


async def test_a_name_clash_with_an_existing_tool_is_refused_and_adds_nothing():
    """A kit whose tool name the server already uses raises, and no kit tool is added."""
    server: MCPServer[Any] = MCPServer("app")
    server.add_tool(lambda: "mine", name="get_record")
    with pytest.raises(ConfigurationError, match="get_record"):
        to_mcp_server(make_log_kit(), server)
    assert [t.name for t in await server.list_tools()] == ["get_record"]


async def test_handles_are_readable_as_resources():
    """slimtools://<toolkit>/{handle} is listed and reads the full record."""
    async with connect(to_mcp_server(make_log_kit())) as client:
        templates = (await client.list_resource_templates()).resource_templates
        await client.call_tool("search_logs", {"query": "timeout"})
        read = await client.read_resource("slimtools://logs/3")
    assert [t.uri_template for t in templates] == ["slimtools://logs/{handle}"]
    assert json.loads(read.contents[0].text) == LOGS[2]


async def test_resources_can_be_left_out():
    """resources=False registers the tools only."""
    async with connect(to_mcp_server(make_log_kit(), resources=False)) as client:
        templates = (await client.list_resource_templates()).resource_templates
    assert templates == []


async def test_output_schemas_can_be_left_out_while_structured_content_stays():
    """output_schemas=False lists no outputSchema; results still carry structuredContent."""
    server = to_mcp_server(make_log_kit(), output_schemas=False)
    async with connect(server) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("search_logs", {"query": "timeout"})
    assert all(t.output_schema is None for t in tools)
    assert envelope(result)["total"] == 12


async def test_search_and_read_tools_are_marked_read_only():
    """Tools in the search and read categories carry readOnlyHint; others carry nothing."""
    async with connect(to_mcp_server(make_log_kit())) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["search_logs"].annotations.read_only_hint is True
    assert tools["get_record"].annotations.read_only_hint is True
    assert tools["recent_errors"].annotations is None


async def test_instructions_tell_the_model_how_to_expand_a_handle():
    """A server made by the adapter explains envelopes and get_record to the client."""
    async with connect(to_mcp_server(make_log_kit()), "legacy") as client:
        instructions = client.instructions
    assert instructions is not None
    assert "get_record(handle)" in instructions


async def test_session_keyword_scopes_handles():
    """Handles made on a server bound to session "alice" do not resolve for "bob"."""
    kit: Toolkit = make_log_kit()
    alice, bob = to_mcp_server(kit, session="alice"), to_mcp_server(kit, session="bob")
    async with connect(alice) as client:
        await client.call_tool("search_logs", {"query": "timeout"})
        allowed = await client.call_tool("get_record", {"handle": 1})
    async with connect(bob) as client:
        denied = await client.call_tool("get_record", {"handle": 1})
    assert json.loads(allowed.content[0].text) == LOGS[0]
    assert denied.is_error
    assert "search_logs" in denied.content[0].text


async def test_a_session_callable_is_asked_on_every_request():
    """session=callable names the caller per request: bob cannot expand alice's handle."""
    callers = iter(["alice", "alice", "bob"])
    server = to_mcp_server(make_log_kit(), session=lambda: next(callers))
    async with connect(server) as client:
        await client.call_tool("search_logs", {"query": "timeout"})
        allowed = await client.call_tool("get_record", {"handle": 2})
        denied = await client.call_tool("get_record", {"handle": 2})
    assert json.loads(allowed.content[0].text) == LOGS[1]
    assert denied.is_error


async def test_client_validation_is_live_so_passing_calls_prove_the_schema():
    """A wrong outputSchema makes the SDK client reject the call: validation really runs."""
    server = to_mcp_server(make_log_kit())
    tool = server._tool_manager.get_tool("search_logs")
    tool.fn_metadata.output_schema = {"type": "object", "required": ["nope"]}
    async with connect(server) as client:
        with pytest.raises(RuntimeError, match="nope"):
            await client.call_tool("search_logs", {"query": "timeout"})


@pytest.mark.subprocess
def test_missing_framework_raises_an_import_error_naming_the_extra():
    """Without the MCP SDK, importing the adapter says which extra to install."""
    stderr = import_error_without("mcp", "slimtools.adapters.mcp")
    assert "pip install 'slimtools[mcp]'" in stderr
