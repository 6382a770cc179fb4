"""Under ``deny``, the pass-through paths real servers use are screened too.

An ``isError`` text holding a table (markdown, CSV, ``psql``) with the denied column, a
resource link's URI, an ``application/octet-stream`` blob that decodes to JSON records and
an error quoting a row without its column names: each once showed the denied value. The
upstream is answered in process behind a real ``mcp.Client``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from mcp import Client
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ResourceLink,
    TextContent,
    Tool,
)

from slimtools.proxy.config import parse_config
from slimtools.proxy.server import build_proxy, proxy_server
from tests.proxy.test_proxy_hostile import everything_sent

SSN = "078-05-1120"
DENY = 'deny = ["ssn"]\n'
ROWS = [{"id": 1, "name": "alice", "ssn": SSN}]


async def _through(blocks: list[ContentBlock], *, is_error: bool = False) -> CallToolResult:
    """What a client of a proxy denying ``ssn`` receives for an upstream answer."""
    tool = Tool(name="users", input_schema={"type": "object"})

    async def call(name: str, arguments: dict[str, Any]) -> CallToolResult:
        return CallToolResult(content=blocks, is_error=is_error)

    parsed = parse_config(f"[tools.users]\n{DENY}", "slim.toml")
    proxy = build_proxy(parsed, [tool], call)
    async with Client(proxy_server(proxy, parsed)) as client:
        return await client.call_tool("users", {})


def _text(text: str) -> TextContent:
    return TextContent(type="text", text=text)


TABLES = {
    "markdown": f"| id | name | ssn |\n|----|------|-----|\n| 1 | alice | {SSN} |",
    "csv": f"id,name,ssn\n1,alice,{SSN}",
    "tsv": f"id\tname\tssn\n1\talice\t{SSN}",
    "psql": f" id | name  |     ssn\n----+-------+-------------\n  1 | alice | {SSN}",
}


@pytest.mark.parametrize("table", list(TABLES.values()), ids=list(TABLES))
async def test_an_error_holding_a_table_with_the_denied_column_is_withheld(table):
    """An ``isError`` text whose table has the denied column is withheld, saying why."""
    result = await _through([_text(f"Error: constraint failed on rows\n{table}")], is_error=True)
    assert result.is_error
    assert SSN not in everything_sent(result)
    assert "table with the denied column 'ssn'" in result.content[0].text


@pytest.mark.parametrize("header", ["SSN", "S_S_N", "Ssn"])
async def test_a_table_column_is_matched_in_every_spelling_deny_matches(header):
    """A column headed ``SSN`` is the denied ``ssn``, as a key so spelled is (issue 32)."""
    table = f"id,name,{header}\n1,alice,{SSN}"
    result = await _through([_text(f"Error: constraint failed on rows\n{table}")], is_error=True)
    assert SSN not in everything_sent(result)
    assert "table with the denied column 'ssn'" in result.content[0].text


async def test_an_error_naming_the_denied_field_in_prose_is_kept():
    """Prose that mentions the denied name, not as a column, still reads as the error."""
    result = await _through([_text("Error: the ssn field is required")], is_error=True)
    assert result.content[0].text == "Error: the ssn field is required"


async def test_a_resource_links_uri_loses_a_denied_value_and_pair():
    """A link's URI quoting a denied value (seen in a block beside it) or a denied query
    pair reaches the client masked."""
    link = ResourceLink(
        type="resource_link", uri=f"https://db.example/users/{SSN}?ssn={SSN}", name="row 1"
    )
    result = await _through([_text(json.dumps(ROWS)), link])
    sent_link = result.content[1]
    assert isinstance(sent_link, ResourceLink)
    assert SSN not in str(sent_link.uri)
    assert str(sent_link.uri).startswith("https://db.example/users/")


async def test_an_octet_stream_blob_of_json_records_loses_the_denied_field():
    """``application/octet-stream`` bytes that decode to JSON records are screened."""
    blob = base64.b64encode(json.dumps(ROWS).encode()).decode()
    contents = BlobResourceContents(
        uri="file:///rows.bin", mime_type="application/octet-stream", blob=blob
    )
    result = await _through([EmbeddedResource(type="resource", resource=contents)])
    sent = everything_sent(result)
    assert SSN not in sent
    assert "alice" in sent


async def test_an_error_quoting_a_tuple_row_loses_its_values():
    """A row quoted without its column names (``repr`` of a ``fetchall()`` tuple) cannot
    lose only the denied column: its specific values are masked, the error kept."""
    text = f"IntegrityError: UNIQUE constraint failed on row (1, 'alice', '{SSN}')"
    result = await _through([_text(text)], is_error=True)
    assert SSN not in everything_sent(result)
    assert "UNIQUE constraint failed" in result.content[0].text


async def test_an_error_quoting_a_postgres_key_of_the_denied_column_loses_its_value():
    """``Key (ssn)=(...)``, as Postgres words a unique violation, loses the value."""
    text = f'duplicate key value violates unique constraint "users_ssn_key"\nKey (ssn)=({SSN})'
    result = await _through([_text(text)], is_error=True)
    assert SSN not in everything_sent(result)
    assert "Key (ssn)=" in result.content[0].text


async def test_an_error_quoting_a_bare_value_of_the_denied_key_loses_it():
    """MySQL's ``Duplicate entry '...' for key 'users.ssn'`` reaches the client masked."""
    text = f"(1062, \"Duplicate entry '{SSN}' for key 'users.ssn'\")"
    result = await _through([_text(text)], is_error=True)
    assert SSN not in everything_sent(result)
    assert "Duplicate entry" in result.content[0].text
