"""The proxy's connection to its upstream (``slimtools.proxy.upstream.Upstream``)."""

from __future__ import annotations

from typing import Any

import mcp.types as types
from mcp import Client
from mcp.server.lowlevel import Server

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TOOL = types.Tool(
    name="odd", description="d", input_schema={"type": "object"}, output_schema=SCHEMA
)


def _server() -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[TOOL])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="n is a word")],
            structured_content={"n": "a word"},  # not what its own schema says
        )

    return Server("odd", on_list_tools=list_tools, on_call_tool=call_tool)


async def test_a_result_off_its_own_schema_is_forwarded_not_raised():
    """The proxy forwards what the upstream answered; it does not re-validate it."""
    from slimtools.proxy.upstream import Upstream

    async with Client(_server()) as client:
        upstream = Upstream(client)
        await upstream.tools()
        result = await upstream.call("odd", {})
    assert result.structured_content == {"n": "a word"}
