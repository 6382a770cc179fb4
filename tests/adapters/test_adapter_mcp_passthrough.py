"""MCP adapter: results a tool passes through untouched, and annotations given per tool."""

from __future__ import annotations

import base64
from typing import Any

from mcp import Client
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations

from slimtools import Toolkit, ToolResult, paginate
from slimtools.adapters.mcp import to_mcp_server

PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


def _kit(answer: Any) -> Toolkit:
    kit = Toolkit("images")

    @kit.tool(category="read")
    @paginate
    def snapshot(**arguments: Any) -> Any:
        """Take a snapshot."""
        return answer

    return kit


async def test_a_call_tool_result_carried_as_value_is_sent_as_it_is():
    """An image block (and its text) reach the client exactly as the tool built them."""
    native = CallToolResult(
        content=[
            TextContent(type="text", text="a screenshot"),
            ImageContent(type="image", data=PIXEL, mime_type="image/png"),
        ]
    )
    server = to_mcp_server(_kit(ToolResult("a screenshot", value=native)), output_schemas=False)
    async with Client(server) as client:
        result = await client.call_tool("snapshot", {})
    assert [block.type for block in result.content] == ["text", "image"]
    assert result.content[1].data == PIXEL
    assert not result.is_error


async def test_an_error_carried_as_value_keeps_its_flag_and_text():
    """An upstream error passes through with isError and its own words."""
    native = CallToolResult(content=[TextContent(type="text", text="404 Not Found")], is_error=True)
    server = to_mcp_server(_kit(ToolResult("404 Not Found", is_error=True, value=native)))
    async with Client(server) as client:
        result = await client.call_tool("snapshot", {})
    assert result.is_error
    assert result.content[0].text == "404 Not Found"


async def test_annotations_given_per_tool_replace_the_category_ones():
    """``annotations=`` is published for the named tool; others keep the category's."""
    given = ToolAnnotations(title="Snapshot", read_only_hint=False, destructive_hint=False)
    server = to_mcp_server(_kit([]), annotations={"snapshot": given})
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["snapshot"].annotations == given
    assert tools["get_record"].annotations.read_only_hint is True
