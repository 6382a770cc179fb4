"""A small MCP server for the proxy's load benchmark: ``records(client, call)`` over HTTP.

Each answer is 20 records as JSON text, every one naming the client and call it answers, so
a benchmark can tell whether an answer reached the client that asked. Run it as
``python -m benchmarks._echo_upstream HOST:PORT`` (streamable HTTP).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

SCHEMA = {
    "type": "object",
    "properties": {"client": {"type": "integer"}, "call": {"type": "integer"}},
    "required": ["client", "call"],
}
TOOLS = [types.Tool(name="records", description="20 records for a call.", input_schema=SCHEMA)]


def records(client: int, call: int) -> list[dict[str, Any]]:
    """The records of one call: ids that name the client and the call."""
    return [
        {"id": f"{client}-{call}-{i}", "client": client, "call": call, "note": "x" * 120}
        for i in range(20)
    ]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    text = json.dumps(records(int(args["client"]), int(args["call"])))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def serve(host: str, port: int) -> None:
    import uvicorn

    server = Server("echo-records", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    await uvicorn.Server(config).serve()


if __name__ == "__main__":
    where, _, port = sys.argv[1].rpartition(":")
    anyio.run(serve, where, int(port))
