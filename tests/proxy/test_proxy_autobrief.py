"""The proxy with no config: automatic briefs for large record results, every byte reachable."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent, Tool

from slimtools.proxy.config import ProxyConfig, parse_config
from slimtools.proxy.server import build_proxy, proxy_server
from slimtools.proxy.serving import dry_run
from slimtools.proxy.upstream import UpstreamSpec, connect
from slimtools.tokens import count_tokens
from tests.core_helpers import calls_in
from tests.proxy.proxy_fixtures import envelope, text_of
from tests.proxy.test_proxy_filesystem import filesystem_server  # noqa: F401 (a fixture)

ANY = {"type": "object", "properties": {"n": {"type": "integer"}}}


def _commit(i: int) -> dict[str, Any]:
    sha = f"{i:040x}"
    return {
        "sha": sha,
        "node_id": f"C_{i}",
        "url": f"https://api.github.com/repos/o/r/commits/{sha}",
        "html_url": f"https://github.com/o/r/commit/{sha}",
        "commit": {
            "message": f"Fix the thing number {i}\n\n" + "Longer explanation. " * 20,
            "author": {"name": "Ana", "email": "ana@example.com", "date": "2024-01-01T00:00:00Z"},
        },
        "author": {"login": "ana", "id": 9, "avatar_url": "https://a/u", "type": "User"},
        "parents": [{"sha": f"{i + 1:040x}", "url": "https://api.github.com/x"}],
    }


def _graph() -> dict[str, Any]:
    entities = [
        {
            "type": "entity",
            "name": f"person_{i}",
            "entityType": "person",
            "observations": [f"likes topic {i}", "works remotely"],
        }
        for i in range(1_620)
    ]
    relations = [
        {
            "type": "relation",
            "from": f"person_{i}",
            "to": f"person_{i + 1}",
            "relationType": "knows",
        }
        for i in range(1_619)
    ]
    return {"entities": entities, "relations": relations}


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


def _base64_line(chars: int) -> str:
    return base64.b64encode(random.Random(1).randbytes(chars * 3 // 4)).decode("ascii")


LINE = _base64_line(800_000)
DIFF = "".join(f"{'+-'[i % 2]}    line {i} of a changed file\r\n" for i in range(60_000))

ANSWERS = {
    "list_commits": lambda n: _text(json.dumps([_commit(i + n) for i in range(150)])),
    "few_commits": lambda n: _text(json.dumps([_commit(i) for i in range(2)])),
    "read_graph": lambda n: _text(json.dumps(_graph())),
    "read_query": lambda n: _text(LINE),
    "git_diff": lambda n: _text(DIFF),
    "deep_json": lambda n: _text("[" * 1_200 + json.dumps(LINE[:100_000]) + "]" * 1_200),
}
TOOLS = [Tool(name=name, description=name, input_schema=ANY) for name in ANSWERS]


@asynccontextmanager
async def bare_proxy(config: str = "") -> AsyncIterator[Client]:
    """A client of a proxy with ``config`` (none by default) over the synthetic upstream."""

    async def call(name: str, arguments: dict[str, Any]) -> CallToolResult:
        return ANSWERS[name](int(arguments.get("n", 0)))

    parsed = parse_config(config, "slim.toml")
    proxy = build_proxy(parsed, TOOLS, call)
    async with Client(proxy_server(proxy, parsed)) as client:
        yield client


async def _follow(client: Client, tool: str, first: dict[str, Any]) -> list[dict[str, Any]]:
    """Every envelope the hints lead to from ``first`` (tool calls that set ``page``)."""
    pages = [first]
    while True:
        nxt = [c for c in calls_in(pages[-1]["hint"], tool) if "page" in c]
        if not nxt:
            return pages
        pages.append(envelope(await client.call_tool(tool, nxt[0])))


async def test_large_record_results_are_briefs_at_least_five_times_smaller():
    """With no config, a 150-commit result's page 1 is briefs, 5x smaller than raw or more."""
    raw = text_of(ANSWERS["list_commits"](0))
    async with bare_proxy() as client:
        result = await client.call_tool("list_commits", {})
    env = envelope(result)
    assert env["total"] == 150
    assert count_tokens(raw) >= 5 * count_tokens(text_of(result))
    assert set(env["briefs"][0]) >= {"sha"}
    assert "url" not in env["briefs"][0]


async def test_every_record_of_an_auto_briefed_result_is_reachable():
    """Following the hints shows every record once, and get_record gives each in full."""
    async with bare_proxy() as client:
        first = envelope(await client.call_tool("list_commits", {}))
        pages = await _follow(client, "list_commits", first)
        shas = [b["sha"] for page in pages for b in page["briefs"]]
        full = await client.call_tool("get_record", {"handle": pages[-1]["briefs"][-1]["handle"]})
    assert shas == [_commit(i)["sha"] for i in range(150)]
    assert json.loads(text_of(full)) == _commit(149)


async def test_a_later_result_of_the_same_shape_shows_the_same_fields():
    """Results of one shape show the same fields, so the prompt cache sees one shape."""
    async with bare_proxy() as client:
        first = envelope(await client.call_tool("list_commits", {}))
        later = envelope(await client.call_tool("list_commits", {"n": 500}))
    assert list(first["briefs"][0]) == list(later["briefs"][0])


async def test_small_record_results_pass_through_untouched():
    """A result under the auto-brief threshold reaches the client as the upstream sent it."""
    async with bare_proxy() as client:
        result = await client.call_tool("few_commits", {})
    assert json.loads(text_of(result)) == [_commit(0), _commit(1)]


async def test_auto_briefs_can_be_turned_off():
    """``auto_briefs = 0`` leaves a result under the budget untouched."""
    async with bare_proxy("auto_briefs = 0\nmax_tokens = 200000") as client:
        result = await client.call_tool("list_commits", {})
    assert len(json.loads(text_of(result))) == 150


async def test_a_dict_of_several_lists_is_paged_whole_never_one_list_only():
    """A memory graph (entities and relations) is not briefed as its relations alone."""
    async with bare_proxy() as client:
        first = envelope(await client.call_tool("read_graph", {}))
        pages = await _follow(client, "read_graph", first)
    text = "".join(page["text"] for page in pages)
    assert json.loads(text) == _graph()


async def test_a_line_longer_than_the_budget_is_reachable_in_pieces():
    """A one-line result of 200,000 tokens comes in marked pieces that rejoin exactly."""
    async with bare_proxy() as client:
        first = envelope(await client.call_tool("read_query", {}))
        assert first["text"]
        assert "too long for one page" in first["hint"]
        pages = await _follow(client, "read_query", first)
    assert "".join(page["text"] for page in pages) == LINE
    assert all(count_tokens(json.dumps(p)) <= 20_000 for p in pages)


async def test_zero_config_text_pages_hold_a_few_thousand_tokens():
    """A long diff past the budget pages at about 4,000 tokens a page, not 100 lines."""
    async with bare_proxy() as client:
        first = envelope(await client.call_tool("git_diff", {}))
        pages = await _follow(client, "git_diff", first)
    sizes = [count_tokens(json.dumps(p["text"])) for p in pages[:-1]]
    assert min(sizes) > 3_000
    assert max(sizes) <= 4_000
    assert len(pages) <= count_tokens(DIFF) // 3_000 + 1
    assert "".join(p["text"] for p in pages) == DIFF


async def test_json_nested_deeper_than_any_parser_is_paged_as_text():
    """1,200 levels of nesting (past every JSON parser's limit) still page to every byte."""
    raw = text_of(ANSWERS["deep_json"](0))
    async with bare_proxy() as client:
        first = envelope(await client.call_tool("deep_json", {}))
        pages = await _follow(client, "deep_json", first)
    assert "".join(page["text"] for page in pages) == raw


@pytest.mark.subprocess
async def test_the_dry_run_of_a_one_line_file_reports_a_real_first_page(
    filesystem_server,  # noqa: F811 (the fixture imported above)
    tmp_path,
):
    """A 250,000-token one-line file: the dry run shows its first piece, not an empty page."""
    line = _base64_line(1_000_000)
    (tmp_path / "dump.sql").write_text(line)
    spec = UpstreamSpec(command=(filesystem_server, str(tmp_path)))
    with anyio.fail_after(90):
        report = await dry_run(
            ProxyConfig(), spec, "read_text_file", {"path": str(tmp_path / "dump.sql")}
        )
    head, _, body = report.partition("the model reads:\n")
    shown = json.loads(body)
    ratio = float(re.search(r"\(([\d.]+)x smaller\)", head).group(1))
    assert line.startswith(shown["text"])
    assert len(shown["text"]) > 10_000
    assert ratio < 100  # the page holds text: 250,000 tokens over a 4,000-token page
    assert "too long for one page" in shown["hint"]


MEMORY = Path(__file__).resolve().parents[2] / ".cache" / "npm" / "node_modules" / ".bin"


@pytest.fixture
def memory_server() -> str:
    """``@modelcontextprotocol/server-memory`` from .cache/npm (installed by .ci/run)."""
    server = MEMORY / "mcp-server-memory"
    if not server.exists() or shutil.which("node") is None:
        reason = "npm install --prefix .cache/npm @modelcontextprotocol/server-memory"
        if os.environ.get("SLIMTOOLS_REQUIRE_SHARED") == "1":
            pytest.fail(reason + " (SLIMTOOLS_REQUIRE_SHARED=1)")
        pytest.skip(reason)
    return str(server)


@pytest.mark.subprocess
async def test_a_real_memory_graph_is_paged_whole_and_every_byte_comes_back(
    memory_server, tmp_path, monkeypatch
):
    """server-memory's 1,620-entity graph: page 1 5x smaller, the pages rejoin to the graph."""
    monkeypatch.setenv("MEMORY_FILE_PATH", str(tmp_path / "memory.jsonl"))
    entities = [
        {"name": f"p{i}", "entityType": "person", "observations": [f"works on {i % 40}"]}
        for i in range(1_620)
    ]
    with anyio.fail_after(90):
        async with connect(UpstreamSpec(command=(memory_server,))) as upstream:
            await upstream.call("create_entities", {"entities": entities})
            links = [
                {"from": f"p{i}", "to": f"p{i + 1}", "relationType": "knows"} for i in range(99)
            ]
            await upstream.call("create_relations", {"relations": links})
            raw = text_of(await upstream.call("read_graph", {}))
            proxy = build_proxy(ProxyConfig(), await upstream.tools(), upstream.call)
            first = await proxy.kit.acall("read_graph", {})
            pages = [json.loads(first.text)]
            while nxt := [c for c in calls_in(pages[-1]["hint"], "read_graph") if "page" in c]:
                pages.append(json.loads((await proxy.kit.acall("read_graph", nxt[0])).text))
    assert count_tokens(raw) >= 5 * count_tokens(first.text)
    assert json.loads("".join(p["text"] for p in pages)) == json.loads(raw)
