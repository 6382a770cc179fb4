"""Automatic briefs choose their fields from the result and the declared schema alone.

The same call shows the same bytes in every proxy whatever each saw before; each shape of
record shows its own short scalar fields; the hint names what briefs leave out; page 2 is
read from page 1's snapshot (in this instance or another sharing the store); write tools
get no ``page``/``limit``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.types import CallToolResult, TextContent, Tool, ToolAnnotations

from slimtools.projection import Projection
from slimtools.proxy._autofields import choose_fields
from slimtools.proxy.config import parse_config
from slimtools.proxy.server import build_proxy, proxy_server
from tests._profile import examples
from tests.proxy.proxy_fixtures import envelope, text_of

ANY = {"type": "object", "properties": {"q": {"type": "string"}}}


def product(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "sku": f"SKU-{i:05d}",
        "name": f"Widget {i}",
        "description": "A sturdy widget for every workshop, with a long story. " * 8,
        "price": 9.5 + i,
        "stock": i % 17,
        "tags": ["tools", "metal"],
        "url": f"https://shop.example/p/{i}",
    }


def log_line(i: int) -> dict[str, Any]:
    return {
        "time": f"2024-03-01T10:{i % 60:02d}:00Z",
        "level": ["INFO", "WARN", "ERROR"][i % 3],
        "service": ["api", "db", "auth"][i % 3],
        "message": f"request {i} handled after a long chain of middleware and retries " * 3,
        "trace": {"spans": [{"id": i, "name": "handler"}]},
    }


RESULTS = {
    "products": [product(i) for i in range(200)],
    "logs": [log_line(i) for i in range(300)],
}


class Upstream:
    """An in-process upstream whose ``search`` answers products or log lines, counted."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        self.calls.append((name, dict(arguments)))
        found = RESULTS.get(str(arguments.get("q")), RESULTS["products"])
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(found))])


TOOLS = [
    Tool(name="search", description="Search the catalogue or the logs.", input_schema=ANY),
    Tool(name="create_items", description="Create items.", input_schema=ANY),
    Tool(
        name="sync_catalogue",
        description="Sync.",
        input_schema=ANY,
        annotations=ToolAnnotations(read_only_hint=False),
    ),
    Tool(
        name="catalogue_snapshot",
        description="Read the catalogue.",
        input_schema=ANY,
        annotations=ToolAnnotations(read_only_hint=True),
    ),
]


@asynccontextmanager
async def proxy(config: str = "", upstream: Upstream | None = None) -> AsyncIterator[Client]:
    """A client of a proxy with ``config`` over the in-process upstream."""
    parsed = parse_config(config, "slim.toml")
    built = build_proxy(parsed, TOOLS, (upstream or Upstream()).call)
    async with Client(proxy_server(built, parsed)) as client:
        yield client


async def test_one_call_shows_the_same_bytes_whatever_the_proxy_saw_before():
    """Two proxies, one of which answered another shape first, show one call identically."""
    async with proxy() as fresh:
        alone = text_of(await fresh.call_tool("search", {"q": "logs"}))
    async with proxy() as used:
        await used.call_tool("search", {"q": "products"})
        after = text_of(await used.call_tool("search", {"q": "logs"}))
    assert alone == after


async def test_each_shape_of_result_shows_its_own_fields():
    """Products show price, sku and stock; log lines show level, time and service."""
    async with proxy() as client:
        products = envelope(await client.call_tool("search", {"q": "products"}))
        logs = envelope(await client.call_tool("search", {"q": "logs"}))
    assert {"price", "sku", "stock", "name"} <= set(products["briefs"][0])
    assert {"level", "time", "service"} <= set(logs["briefs"][0])


async def test_short_scalar_fields_are_shown_before_long_texts():
    """A product's long description and tag list are left out; its short fields are shown."""
    async with proxy() as client:
        brief = envelope(await client.call_tool("search", {"q": "products"}))["briefs"][0]
    assert "description" not in brief
    assert "url" not in brief


async def test_a_shape_without_a_name_shows_the_head_of_its_text():
    """A log line has no name field, so its message is shown clipped."""
    async with proxy() as client:
        brief = envelope(await client.call_tool("search", {"q": "logs"}))["briefs"][0]
    assert brief["message"].startswith("request 0 handled")
    assert len(brief["message"]) <= 81


async def test_the_hint_names_the_fields_left_out_and_how_to_see_them():
    """The envelope says which fields briefs leave out and that get_record shows them."""
    async with proxy() as client:
        hint = envelope(await client.call_tool("search", {"q": "products"}))["hint"]
    assert "left out: description, tags, url" in hint
    assert "get_record(handle) shows the whole record" in hint


async def test_page_two_is_read_from_the_snapshot_of_page_one():
    """``search(page=2)`` after page 1 calls the upstream no more and shows the same fields."""
    upstream = Upstream()
    async with proxy(upstream=upstream) as client:
        first = envelope(await client.call_tool("search", {"q": "products"}))
        second = envelope(await client.call_tool("search", {"q": "products", "page": 2}))
    assert len(upstream.calls) == 1
    assert list(second["briefs"][0]) == list(first["briefs"][0])
    assert second["briefs"][0]["id"] == 20


async def test_another_instance_sharing_the_store_serves_page_two_with_page_ones_fields(
    tmp_path: Path,
):
    """Behind a load balancer, page 2 from another instance shows page 1's fields."""
    config = f'store = "sqlite:///{tmp_path / "handles.db"}"\nsession = "one"\n'
    async with proxy(config) as first:
        page1 = envelope(await first.call_tool("search", {"q": "logs"}))
    upstream = Upstream()
    async with proxy(config, upstream) as second:
        page2 = envelope(await second.call_tool("search", {"q": "logs", "page": 2}))
    assert list(page2["briefs"][0]) == list(page1["briefs"][0])
    assert upstream.calls == []
    assert page1["hint"].split(" Briefs show ")[1] == page2["hint"].split(" Briefs show ")[1]


async def test_every_auto_brief_handle_resolves_to_its_record():
    """Each brief's handle gives its whole record through get_record."""
    async with proxy() as client:
        briefs = envelope(await client.call_tool("search", {"q": "logs"}))["briefs"]
        records = [
            json.loads(text_of(await client.call_tool("get_record", {"handle": b["handle"]})))
            for b in briefs
        ]
    assert records == RESULTS["logs"][: len(briefs)]


async def test_zero_config_adds_no_paging_to_write_tools():
    """A tool whose verbs write, or annotated as not read-only, gets no ``page``/``limit``;
    one annotated read-only does."""
    async with proxy() as client:
        tools = {t.name: t.input_schema["properties"] for t in (await client.list_tools()).tools}
    assert "page" not in tools["create_items"]
    assert "page" not in tools["sync_catalogue"]
    assert {"page", "limit"} <= set(tools["catalogue_snapshot"])
    assert {"page", "limit"} <= set(tools["search"])


def test_a_declared_output_schema_marks_short_scalars_before_any_value():
    """A string the schema declares an enum is a short field even when its values are long."""
    records = [{"name": f"n{i}", "phase": "x" * 60} for i in range(5)]
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"phase": {"enum": ["x" * 60]}}},
            }
        },
    }
    assert "phase" not in choose_fields(records).shown  # type: ignore[union-attr]
    assert "phase" in choose_fields(records, schema).shown  # type: ignore[union-attr]


keys = st.sampled_from(["id", "name", "level", "body", "price", "meta", "tags", "x", "when"])
values = st.one_of(
    st.integers(),
    st.text(max_size=120),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.sampled_from(["name", "k"]), st.text(max_size=5), max_size=2),
)
records = st.lists(st.dictionaries(keys, values, min_size=1, max_size=6), min_size=1, max_size=30)


@given(records)
@settings(max_examples=examples(200), deadline=None)
def test_no_record_gets_a_bare_handle(found):
    """Whatever the records, each one's brief shows at least one of its fields."""
    choice = choose_fields(found)
    assert choice is not None
    projection = Projection.from_spec([".".join(f.path) for f in choice.fields])
    for record, brief in zip(found, projection.project_many(found), strict=True):
        assert brief or not any(v is not None for v in record.values()), (record, choice)


@given(records)
@settings(max_examples=examples(200), deadline=None)
def test_the_choice_depends_on_the_records_alone(found):
    """The same records, in any order of arrival, get the same fields."""
    assert choose_fields(found) == choose_fields(list(found))
    assert choose_fields(found) == choose_fields(json.loads(json.dumps(found)))
