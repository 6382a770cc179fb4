"""A hostile MCP server: every result shape that tempts a proxy to fail open.

Run ``python tests/proxy/proxy_hostile.py`` for stdio. Each tool returns the same records
(``RECORDS``: an ``id``, a ``name``, a secret ``ssn`` and a private ``email``) in another
shape: as an ``isError`` result, as structured content of an error, as JSON beside an image,
as an embedded resource (text or base64), in metadata, as JSON text ``orjson`` refuses
(``NaN``, a BOM, a fence, a preamble, NDJSON), as a Python repr, and quoted in an error's
free text or a JSON-RPC error. The proxy tests configure ``deny = ["ssn"]`` and an
allowlist of ``id`` and ``name``: no ``SECRET`` and no ``@example.org`` may ever reach the
client.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

RECORDS = [
    {"id": i, "name": f"row-{i}", "ssn": f"SECRET-{i:04d}", "email": f"user{i}@example.org"}
    for i in range(6)
]
SECRET = "SECRET-"
PRIVATE = "@example.org"
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR").decode()
EMPTY = {"type": "object", "properties": {}}


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _json(value: Any = None) -> str:
    return json.dumps(RECORDS if value is None else value)


def _image() -> types.ImageContent:
    return types.ImageContent(type="image", data=PIXEL, mime_type="image/png")


def _resource(text: str) -> types.EmbeddedResource:
    contents = types.TextResourceContents(
        uri="file:///rows.json", mime_type="application/json", text=text
    )
    return types.EmbeddedResource(type="resource", resource=contents)


def _blob(text: str) -> types.EmbeddedResource:
    contents = types.BlobResourceContents(
        uri="file:///rows.json",
        mime_type="application/json",
        blob=base64.b64encode(text.encode()).decode(),
    )
    return types.EmbeddedResource(type="resource", resource=contents)


def _link(description: str) -> types.ResourceLink:
    return types.ResourceLink(
        type="resource_link", uri="file:///rows/1", name="row", description=description
    )


def _refuse(message: str) -> types.CallToolResult:
    raise MCPError(code=-32603, message=message)


def _nan() -> str:
    return json.dumps([{**r, "score": float("nan")} for r in RECORDS])


ANSWERS: dict[str, Any] = {
    "clean_rows": lambda: types.CallToolResult(content=[_text(_json())]),
    "dict_rows": lambda: types.CallToolResult(
        content=[_text(_json({"total_count": len(RECORDS), "rows": RECORDS}))]
    ),
    "error_json": lambda: types.CallToolResult(
        content=[_text(_json({"error": "conflict", "row": RECORDS[1]}))], is_error=True
    ),
    "error_structured": lambda: types.CallToolResult(
        content=[_text("conflict")],
        structured_content={"error": "conflict", "rows": RECORDS[:2]},
        is_error=True,
    ),
    "error_repr_text": lambda: types.CallToolResult(
        content=[_text(f"bad row {RECORDS[2]!r}")], is_error=True
    ),
    "error_plain": lambda: types.CallToolResult(
        content=[_text("404 Not Found: no such row")], is_error=True
    ),
    "json_beside_image": lambda: types.CallToolResult(content=[_text(_json()), _image()]),
    "caption_beside_image": lambda: types.CallToolResult(
        content=[_text(f"the rows, first {RECORDS[0]}"), _image()]
    ),
    "embedded_resource": lambda: types.CallToolResult(content=[_resource(_json())]),
    "structured_beside_image": lambda: types.CallToolResult(
        content=[_text(_json({"rows": RECORDS})), _image()],
        structured_content={"rows": RECORDS},
    ),
    # Text that orjson refuses: read by the core's tolerant JSON reading (h-core).
    "nan_json": lambda: types.CallToolResult(content=[_text(_nan())]),
    "bom_json": lambda: types.CallToolResult(content=[_text("\ufeff" + _json())]),
    "fenced_json": lambda: types.CallToolResult(content=[_text(f"```json\n{_json()}\n```")]),
    "preamble_json": lambda: types.CallToolResult(
        content=[_text(f"Found {len(RECORDS)} items:\n{_json()}")]
    ),
    "ndjson": lambda: types.CallToolResult(
        content=[_text("\n".join(json.dumps(r) for r in RECORDS))]
    ),
    "python_repr": lambda: types.CallToolResult(content=[_text(repr(RECORDS))]),
    # A denied value that also sits where no denied key holds it: in an error's message,
    # in a record quoted inside a string, in another block than its record's.
    "error_message_quoting_secret": lambda: types.CallToolResult(
        content=[_text(_json({"error": f"duplicate {RECORDS[1]['ssn']}", "row": RECORDS[1]}))],
        is_error=True,
    ),
    "error_message_quoting_a_row": lambda: types.CallToolResult(
        content=[_text(_json({"error": f"bad row: {_json(RECORDS[1])}"}))], is_error=True
    ),
    "error_escaped_json_text": lambda: types.CallToolResult(
        content=[_text(f"bad row: {json.dumps(_json(RECORDS[1]))}")], is_error=True
    ),
    "error_text_beside_structured": lambda: types.CallToolResult(
        content=[_text(f"duplicate {RECORDS[1]['ssn']}")],
        structured_content={"error": "duplicate", "row": RECORDS[1]},
        is_error=True,
    ),
    "caption_quoting_secret_beside_json": lambda: types.CallToolResult(
        content=[_text(_json()), _text(f"first: {RECORDS[0]['ssn']}"), _image()]
    ),
    # A JSON-RPC error (the client raises it) whose message quotes a record.
    "rpc_error_quoting_a_row": lambda: _refuse(f"bad row {RECORDS[1]!r}"),
    "rpc_error_quoting_escaped_json": lambda: _refuse(f"bad row {json.dumps(_json(RECORDS[1]))}"),
    # A link whose description quotes a record, and one that names a secret beside JSON.
    "resource_link_quoting_a_row": lambda: types.CallToolResult(
        content=[_link(f"row {RECORDS[1]!r}")]
    ),
    "resource_link_beside_json": lambda: types.CallToolResult(
        content=[_text(_json()), _link(f"the row of {RECORDS[2]['ssn']}")]
    ),
    # Records where a client reads them without a text block: base64 JSON, metadata.
    "blob_resource": lambda: types.CallToolResult(content=[_blob(_json())]),
    "rows_in_meta": lambda: types.CallToolResult(
        content=[types.TextContent(type="text", text="conflict", _meta={"rows": RECORDS})],
        _meta={"rows": RECORDS},
        is_error=True,
    ),
}
"""Each tool's answer, by name."""

TOOLS = [
    types.Tool(name=name, description=f"Rows as {name.replace('_', ' ')}.", input_schema=EMPTY)
    for name in ANSWERS
]

TEXT_PARSING = ("nan_json", "bom_json", "fenced_json", "preamble_json", "ndjson", "python_repr")
"""The tools whose text only the core's tolerant JSON reading reads as records."""


def answer(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """The hostile answer for one call."""
    found = ANSWERS.get(name)
    if found is None:
        return types.CallToolResult(content=[_text(f"unknown tool {name}")], is_error=True)
    result: types.CallToolResult = found()
    return result


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return answer(params.name, dict(params.arguments or {}))


def make_server() -> Server[Any]:
    """The hostile server (also used in process by the fast tests)."""
    return Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio() -> None:
    server = make_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve_stdio)
