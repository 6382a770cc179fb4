"""An MCP server serving recorded GitHub responses: the upstream the proxy tests put behind it.

Run ``python tests/proxy/proxy_upstream.py`` for stdio or ``--http HOST:PORT`` for streamable HTTP.
It reads the payloads from ``$SLIMTOOLS_PAYLOADS`` (``../shared/data/payloads``) and appends
each call, as a JSON line, to ``$PROXY_UPSTREAM_LOG`` when set, so tests count upstream calls.
Its tools cover the shapes real servers send: JSON lists as text (issues, pulls, commits), a
dict with an ``items`` list as structured content with an output schema (search), a long
text, an error, an image, a tool with its own ``page``, and an environment echo.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PAYLOADS = Path(os.environ.get("SLIMTOOLS_PAYLOADS", "../shared/data/payloads"))
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR").decode()

REPO = {
    "type": "object",
    "properties": {"repo": {"type": "string", "description": "owner/name"}},
    "required": ["repo"],
    "additionalProperties": False,
}
SEARCH_OUTPUT = {
    "type": "object",
    "properties": {
        "total_count": {"type": "integer"},
        "incomplete_results": {"type": "boolean"},
        "items": {"type": "array"},
    },
    "required": ["total_count", "items"],
}


def _github(name: str) -> Any:
    return json.loads((PAYLOADS / "github_pygithub" / name).read_text(encoding="utf-8"))


def _text(text: str) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=text)]


TOOLS = [
    types.Tool(name="list_issues", description="List a repository's issues.", input_schema=REPO),
    types.Tool(
        name="list_pulls", description="List a repository's pull requests.", input_schema=REPO
    ),
    types.Tool(
        name="list_commits", description="List commits between two refs.", input_schema=REPO
    ),
    types.Tool(
        name="search_repositories",
        description="Search repositories.",
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        output_schema=SEARCH_OUTPUT,
        annotations=types.ToolAnnotations(read_only_hint=True, title="Search repos"),
    ),
    types.Tool(
        name="read_log",
        description="Read a server log.",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}},
    ),
    types.Tool(
        name="get_issue",
        description="Get one issue (fails for unknown numbers).",
        input_schema={"type": "object", "properties": {"number": {"type": "integer"}}},
    ),
    types.Tool(
        name="screenshot",
        description="Take a screenshot.",
        input_schema={"type": "object", "properties": {}},
    ),
    types.Tool(
        name="list_events",
        description="List events, paged by the server itself.",
        input_schema={"type": "object", "properties": {"page": {"type": "integer"}}},
    ),
    types.Tool(
        name="echo_env",
        description="Echo an environment variable.",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}},
    ),
]


def answer(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """The recorded response for one call."""
    if name == "list_issues":
        return types.CallToolResult(content=_text(json.dumps(_github("145.json"))))
    if name == "list_pulls":
        return types.CallToolResult(content=_text(json.dumps(_github("149.json"))))
    if name == "list_commits":
        return types.CallToolResult(content=_text(json.dumps(_github("148.json")["commits"])))
    if name == "search_repositories":
        data = _github("146.json")
        return types.CallToolResult(content=_text(json.dumps(data)), structured_content=data)
    if name == "read_log":
        text = (PAYLOADS / "logs_loghub" / "HDFS_2k.log").read_text(errors="replace")
        return types.CallToolResult(content=_text(text))
    if name == "get_issue":
        return types.CallToolResult(
            content=_text(f"404 Not Found: no issue {arguments.get('number')}"), is_error=True
        )
    if name == "screenshot":
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="the page"),
                types.ImageContent(type="image", data=PIXEL, mime_type="image/png"),
            ]
        )
    if name == "list_events":
        page = int(arguments.get("page") or 1)
        events = _github("138.json")
        return types.CallToolResult(content=_text(json.dumps(events[(page - 1) * 10 : page * 10])))
    if name == "echo_env":
        return types.CallToolResult(content=_text(os.environ.get(str(arguments.get("name")), "")))
    return types.CallToolResult(content=_text(f"unknown tool {name}"), is_error=True)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = dict(params.arguments or {})
    log = os.environ.get("PROXY_UPSTREAM_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps({"tool": params.name, "arguments": arguments}) + "\n")
    return answer(params.name, arguments)


def make_server() -> Server[Any]:
    """The upstream server (also used in process by the fast tests)."""
    return Server(
        "recorded-github",
        instructions="Recorded GitHub responses.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio() -> None:
    server = make_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(host: str, port: int) -> None:
    import uvicorn

    app = make_server().streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    await uvicorn.Server(config).serve()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        host, _, port = sys.argv[2].rpartition(":")
        anyio.run(serve_http, host, int(port))
    else:
        anyio.run(serve_stdio)
