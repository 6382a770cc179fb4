"""An MCP server with slimmed tools, driven by a scripted client session. Offline.

Run: ``python examples/mcp_server.py`` plays a scripted agent (search, page 2, expand one
record) through a real in-process MCP client and prints what the model reads each round.
``python examples/mcp_server.py --stdio`` serves the same tools over stdio instead, for a
real MCP client (Claude Desktop, an IDE, ``mcp dev``).
"""

from __future__ import annotations

import asyncio
import json
import sys

# kit: search_logs over 12 fake log rows, slimmed (see _logs.py)
from _logs import kit, signature
from mcp import Client

from slimtools.adapters.mcp import to_mcp_server

server = to_mcp_server(kit)  # an MCPServer named "logs": search_logs, get_record, resources

SCRIPT = [  # what a model would call, round by round
    ("search_logs", {"query": "timeout"}),
    ("search_logs", {"query": "timeout", "page": 2}),  # as the hint says
    ("get_record", {"handle": 5}),  # expand one brief by its handle (its id)
    ("search_logs", {"query": "timeout", "page": "two"}),  # a bad call: an error result
]


async def scripted_session() -> None:
    """Connect a client in-process, list the tools, then play the script."""
    async with Client(server) as client:
        print("tools the model is given:")
        for tool in (await client.list_tools()).tools:
            print("  ", signature(tool.name, tool.input_schema))
        for round_no, (name, args) in enumerate(SCRIPT, 1):
            result = await client.call_tool(name, args)
            text = result.content[0].text
            status = "isError" if result.is_error else "ok"
            print(
                f"\n--- round {round_no}: {name}({json.dumps(args)}) -> {status}, the model reads:"
            )
            print(text)
            if result.structured_content is not None:  # the other channel, same envelope
                assert result.structured_content == json.loads(text)
        read = await client.read_resource("slimtools://logs/4")
        print("\nhandles are resources too: slimtools://logs/4 ->")
        print(read.contents[0].text)


if __name__ == "__main__":
    if "--stdio" in sys.argv:
        server.run("stdio")
    else:
        asyncio.run(scripted_session())
