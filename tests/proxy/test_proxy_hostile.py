"""Fail closed through the proxy: every block of a configured tool's result crosses ``deny``.

The upstream is ``tests.proxy.proxy_hostile``, answered in process behind a real ``mcp.Client``;
each test reads everything the client receives (text blocks, embedded resources, structured
content) and looks for the records' secrets.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from slimtools.proxy.config import parse_config
from slimtools.proxy.server import build_proxy, proxy_server
from tests.proxy import proxy_hostile
from tests.proxy.proxy_hostile import PRIVATE, SECRET, TEXT_PARSING

NAMES = [tool.name for tool in proxy_hostile.TOOLS]
PASS_THROUGH = [
    "error_json",
    "error_structured",
    "json_beside_image",
    "embedded_resource",
    "structured_beside_image",
    "blob_resource",
    "rows_in_meta",
]

# A global deny, and every tool with its own table: the global deny must reach each one.
DENY_CONFIG = '[tools."*"]\ndeny = ["ssn"]\n' + "".join(
    f"\n[tools.{name}]\nlimit = 5\n" for name in NAMES
)
ALLOW_CONFIG = '[tools."*"]\nfields = ["id", "name"]\ndeny = ["ssn"]\nkey = "id"\n'


@asynccontextmanager
async def hostile(config: str) -> AsyncIterator[Client]:
    """A client of a proxy over the hostile upstream."""
    parsed = parse_config(config, "slim.toml")

    async def call(name: str, arguments: dict[str, Any]) -> CallToolResult:
        return proxy_hostile.answer(name, arguments)

    proxy = build_proxy(parsed, proxy_hostile.TOOLS, call)
    async with Client(proxy_server(proxy, parsed)) as client:
        yield client


def everything_sent(result: CallToolResult) -> str:
    """Every text the client received: blocks, embedded resources (base64 ones decoded),
    resource links, structured content, metadata."""
    parts = []
    for block in result.content:
        if block.type == "text":
            parts.append(block.text)
        elif block.type == "resource":
            parts.append(getattr(block.resource, "text", ""))
            blob = getattr(block.resource, "blob", None)
            parts.append(base64.b64decode(blob).decode("utf-8", "replace") if blob else "")
        elif block.type == "resource_link":
            parts += [block.name, block.title or "", block.description or ""]
        parts.append(json.dumps(block.meta))
    parts.append(json.dumps(result.structured_content))
    parts.append(json.dumps(result.meta))
    return "\n".join(parts)


async def sent(config: str, tool: str) -> tuple[CallToolResult, str]:
    async with hostile(config) as client:
        result = await client.call_tool(tool, {})
    return result, everything_sent(result)


@pytest.mark.parametrize("tool", NAMES)
async def test_a_global_deny_holds_for_every_result_shape(tool):
    """``[tools."*"] deny`` reaches tools with their own table, whatever the upstream sends."""
    _, text = await sent(DENY_CONFIG, tool)
    assert SECRET not in text


@pytest.mark.parametrize("tool", NAMES)
async def test_an_allowlist_shows_nothing_else_for_every_result_shape(tool):
    """With fields and deny, neither the denied nor the unlisted field ever reaches the client."""
    _, text = await sent(ALLOW_CONFIG, tool)
    assert SECRET not in text
    assert PRIVATE not in text


@pytest.mark.parametrize("tool", PASS_THROUGH)
async def test_passed_through_results_keep_what_deny_allows(tool):
    """The screen removes the denied field, not the rest: names and emails stay under deny."""
    _result, text = await sent(DENY_CONFIG, tool)
    assert "row-1" in text
    assert PRIVATE in text


async def test_an_error_keeps_its_message_and_its_flag():
    """An isError JSON body loses the denied field but stays an error with its message."""
    result, text = await sent(DENY_CONFIG, "error_json")
    assert result.is_error
    assert "conflict" in text


async def test_a_plain_error_passes_unchanged():
    """An error naming no denied field is sent as the upstream wrote it."""
    result, _text = await sent(ALLOW_CONFIG, "error_plain")
    assert result.is_error
    assert result.content[0].text == "404 Not Found: no such row"


async def test_an_error_quoting_a_denied_field_is_withheld():
    """Free error text that quotes a record with the denied key is withheld, with a reason."""
    result, text = await sent(DENY_CONFIG, "error_repr_text")
    assert result.is_error
    assert "withheld by slimtools" in text
    assert "'ssn'" in text


async def test_images_still_pass_beside_screened_json():
    """The image block is kept; only the JSON beside it is screened."""
    result, _ = await sent(ALLOW_CONFIG, "json_beside_image")
    assert [block.type for block in result.content] == ["text", "image"]
    assert json.loads(result.content[0].text) == [
        {"id": r["id"], "name": r["name"]} for r in proxy_hostile.RECORDS
    ]


async def test_free_text_beside_an_image_is_withheld_under_an_allowlist():
    """A caption the allowlist cannot project is withheld, never shown raw."""
    _result, text = await sent(ALLOW_CONFIG, "caption_beside_image")
    assert "withheld by slimtools" in text
    assert "row-0" not in text


async def test_free_text_beside_an_image_is_shown_when_the_tool_opts_in():
    """``on_unreadable = "text"`` shows free text the allowlist cannot project."""
    config = '[tools."*"]\nfields = ["id", "name"]\non_unreadable = "text"\n'
    _, text = await sent(config, "caption_beside_image")
    assert "the rows, first" in text


async def test_screened_structured_content_fits_the_listed_schema():
    """Structured content that lost fields is replaced by the pass-through description."""
    result, _ = await sent(ALLOW_CONFIG, "structured_beside_image")
    assert result.structured_content is not None
    assert SECRET not in json.dumps(result.structured_content)


@pytest.mark.parametrize("tool", TEXT_PARSING)
async def test_tolerant_text_is_read_as_records(tool):
    """NaN, BOM, fences, preambles, NDJSON and reprs become briefs, not a withheld note."""
    result, text = await sent(ALLOW_CONFIG, tool)
    assert SECRET not in text
    assert PRIVATE not in text
    envelope = json.loads(result.content[0].text)
    assert envelope["total"] == len(proxy_hostile.RECORDS)
    assert envelope["briefs"][0] == {"id": 0, "name": "row-0"}


async def test_records_in_a_dict_with_no_items_come_from_its_one_list():
    """``{"total_count": 6, "rows": [...]}`` without ``items =`` pages its obvious list."""
    async with hostile(ALLOW_CONFIG) as client:
        result = await client.call_tool("dict_rows", {})
    data = json.loads(result.content[0].text)
    assert data["total"] == len(proxy_hostile.RECORDS)
    assert data["briefs"][0] == {"id": 0, "name": "row-0"}


def test_several_lists_and_no_items_warn_at_start(caplog):
    """A configured tool whose output schema has two arrays and no ``items`` is warned about."""
    from mcp.types import Tool

    schema = {"type": "object", "properties": {"a": {"type": "array"}, "b": {"type": "array"}}}
    tool = Tool(name="two", input_schema={"type": "object"}, output_schema=schema)

    async def call(name: str, arguments: dict[str, Any]) -> CallToolResult:
        raise AssertionError("not called")

    build_proxy(parse_config('[tools.two]\nfields = ["id"]\n'), [tool], call)
    assert 'set items = "a"' in caplog.text


@pytest.mark.subprocess
async def test_the_proxy_process_fails_closed_over_the_hostile_stdio_server(tmp_path):
    """Both sides real processes on stdio: no secret in any pass-through row."""
    import os
    import sys
    from pathlib import Path

    import anyio
    from mcp import StdioServerParameters

    root = Path(__file__).resolve().parents[2]
    config = tmp_path / "slim.toml"
    config.write_text(DENY_CONFIG)
    command = [sys.executable, "-m", "slimtools.cli", "proxy", "--config", str(config), "--"]
    command += [sys.executable, str(Path(__file__).with_name("proxy_hostile.py"))]
    env = {**os.environ, "PYTHONPATH": str(root)}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(root))
    with anyio.fail_after(60):
        async with Client(params) as client:
            for tool in PASS_THROUGH:
                text = everything_sent(await client.call_tool(tool, {}))
                assert SECRET not in text
                assert "row-1" in text


async def test_screened_structured_content_of_a_tool_with_an_output_schema_validates():
    """A client that validates ``structuredContent`` accepts the screened pass-through."""
    from mcp.types import ImageContent, TextContent, Tool

    schema = {"type": "object", "properties": {"rows": {"type": "array"}}, "required": ["rows"]}
    tool = Tool(name="rows_shot", input_schema={"type": "object"}, output_schema=schema)
    rows = {"rows": proxy_hostile.RECORDS}

    async def call(name: str, arguments: dict[str, Any]) -> CallToolResult:
        image = ImageContent(type="image", data=proxy_hostile.PIXEL, mime_type="image/png")
        text = TextContent(type="text", text=json.dumps(rows))
        return CallToolResult(content=[text, image], structured_content=rows)

    parsed = parse_config(ALLOW_CONFIG, "slim.toml")
    proxy = build_proxy(parsed, [tool], call)
    async with Client(proxy_server(proxy, parsed)) as client:
        await client.list_tools()
        result = await client.call_tool("rows_shot", {})
    text = everything_sent(result)
    assert not result.is_error
    assert SECRET not in text
    assert PRIVATE not in text
    assert "row-1" in text


async def test_a_binary_blob_resource_passes_as_the_upstream_sent_it():
    """Only base64 text (JSON, XML...) is screened: a PNG resource reaches the client as sent."""
    from mcp.types import BlobResourceContents, EmbeddedResource, Tool

    tool = Tool(name="png", input_schema={"type": "object"})
    png = BlobResourceContents(uri="file:///a.png", mime_type="image/png", blob=proxy_hostile.PIXEL)

    async def call(name: str, arguments: dict[str, Any]) -> CallToolResult:
        return CallToolResult(content=[EmbeddedResource(type="resource", resource=png)])

    parsed = parse_config(DENY_CONFIG, "slim.toml")
    proxy = build_proxy(parsed, [tool], call)
    async with Client(proxy_server(proxy, parsed)) as client:
        result = await client.call_tool("png", {})
    assert result.content[0].resource == png
