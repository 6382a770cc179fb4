"""A stdio MCP server that can be made to die: the upstream of the proxy's lifecycle tests.

Tools: ``pid`` (its process id), ``crash`` (exits at once, status 1) and ``fail`` (answers
with a JSON-RPC error), ``hang``
(blocks for a minute, reading nothing).
It writes its pid to ``$MORTAL_PID_FILE`` when set, so a test can watch it from outside.
"""

from __future__ import annotations

import os
import time
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

EMPTY = {"type": "object", "properties": {}}
TOOLS = [
    types.Tool(name=name, description=f"{name} the server.", input_schema=EMPTY)
    for name in ("pid", "crash", "fail", "hang")
]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "crash":
        os._exit(1)
    if params.name == "hang":  # busy, deaf to its stdin closing, as a server mid-call is
        time.sleep(60)
    if params.name == "fail":
        raise MCPError(code=-32603, message="the backend said no")
    return types.CallToolResult(content=[types.TextContent(type="text", text=str(os.getpid()))])


async def main() -> None:
    path = os.environ.get("MORTAL_PID_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\n")
    server = Server("mortal", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
