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
from typing import Annotated, Any

from mcp import Client
from pydantic import BaseModel, Field

from slimtools import Clip, Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.adapters.mcp import to_mcp_server

SERVICES = ["auth", "billing", "search"]
LOGS = [  # the backend: 12 rows, with fields the model never needs to see
    {
        "id": i,
        "time": f"10-24 03:{i:02d}",
        "level": "ERROR" if i % 2 else "WARN",
        "message": f"upstream timeout connecting to {SERVICES[i % 3]}-service after 30s "
        f"(attempt {i}); pool exhausted, retrying with backoff",
        "tenant": "acme-prod-7731",
        "trace_id": f"{i:032x}",
    }
    for i in range(1, 13)
]


class LogBrief(BaseModel):
    """What the model sees of one row: nothing else leaves the backend."""

    id: int
    time: str
    level: str
    summary: Annotated[str, Clip(48)] = Field(validation_alias="message")


kit = Toolkit("logs")


@kit.tool(category="search")
@summarize_with_handle(key="id")
@paginate(limit=3)
@project_fields(LogBrief)
def search_logs(query: str) -> list[dict[str, Any]]:
    """Search the service logs for a word."""
    return [row for row in LOGS if query in row["message"]]


server = to_mcp_server(kit)  # an MCPServer named "logs": search_logs, get_record, resources

SCRIPT = [  # what a model would call, round by round
    ("search_logs", {"query": "timeout"}),
    ("search_logs", {"query": "timeout", "page": 2}),  # as the hint says
    ("get_record", {"handle": 5}),  # expand one brief by its handle (its id)
    ("search_logs", {"query": "timeout", "page": "two"}),  # a bad call: an error result
]


def signature(name: str, schema: dict[str, Any]) -> str:
    """A tool as the model sees it, e.g. search_logs(query: string, page: integer = 1)."""
    args = []
    for arg, prop in schema["properties"].items():
        kind = prop.get("type") or "|".join(v["type"] for v in prop.get("anyOf", []))
        default = f" = {json.dumps(prop['default'])}" if "default" in prop else ""
        args.append(f"{arg}: {kind}{default}")
    return f"{name}({', '.join(args)})"


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
