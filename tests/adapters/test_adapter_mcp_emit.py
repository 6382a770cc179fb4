"""One channel: ``emit`` keeps the text or the structured content, chosen per tool or client."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from mcp.types import Implementation

from slimtools import Toolkit, paginate
from slimtools.adapters.mcp import to_mcp_server
from slimtools.adapters.mcp_emit import EmitPolicy, client_emit
from slimtools.proxy.config import parse_config
from slimtools.proxy.server import build_proxy, proxy_server
from tests.proxy.test_proxy_autobrief import ANSWERS, TOOLS


def _kit() -> Toolkit:
    kit = Toolkit("emit")

    @kit.tool
    @paginate(limit=2)
    def rows() -> list[dict[str, int]]:
        """Some rows."""
        return [{"id": i} for i in range(5)]

    return kit


def _client(server, name: str = "mcp") -> Client:
    return Client(server, client_info=Implementation(name=name, version="1"))


@pytest.mark.parametrize(
    ("client", "emit"),
    [
        ("claude-code", "both"),
        ("Codex-MCP-Client", "both"),
        ("opencode", "both"),
        ("kimi-code", "text"),
        ("hermes-agent", "text"),
        ("QwenPaw", "text"),
        ("agent_framework", "text"),
        ("github-copilot-cli", "text"),
        ("cursor-vscode", "both"),
        (None, "both"),
    ],
)
def test_each_known_client_gets_the_channel_its_model_reads(client, emit):
    """The clientInfo table maps known clients to their channel; others get both."""
    assert client_emit(client) == emit


async def test_text_only_sends_no_structured_content_and_lists_no_output_schema():
    """With emit="text" the result is one text block and the tool has no outputSchema."""
    async with _client(to_mcp_server(_kit(), emit="text")) as client:
        listed = (await client.list_tools()).tools
        result = await client.call_tool("rows", {})
    assert next(t for t in listed if t.name == "rows").output_schema is None
    assert result.structured_content is None
    assert json.loads(result.content[0].text)["total"] == 5


async def test_structured_only_sends_no_text_block():
    """With emit="structured" the envelope is only in structuredContent."""
    async with _client(to_mcp_server(_kit(), emit="structured")) as client:
        result = await client.call_tool("rows", {})
    assert result.content == []
    assert result.structured_content["total"] == 5


async def test_the_client_info_picks_the_channel_when_none_is_set():
    """A kimi-code client gets text only; an unknown client gets both channels."""
    async with _client(to_mcp_server(_kit()), "kimi-code") as client:
        kimi = await client.call_tool("rows", {})
        listed = (await client.list_tools()).tools
    async with _client(to_mcp_server(_kit())) as client:
        other = await client.call_tool("rows", {})
    assert kimi.structured_content is None
    assert next(t for t in listed if t.name == "rows").output_schema is None
    assert other.structured_content == json.loads(other.content[0].text)


async def test_a_tools_own_emit_wins_over_the_global_one():
    """A per-tool emit overrides the global choice and the client's default."""
    policy = EmitPolicy(default="text", tools={"rows": "both"})
    async with _client(to_mcp_server(_kit(), emit=policy), "kimi-code") as client:
        result = await client.call_tool("rows", {})
    assert result.structured_content == json.loads(result.content[0].text)


async def test_the_proxy_emits_as_its_config_says():
    """``emit`` in the proxy config, global and per tool, reaches the client."""
    config = parse_config('emit = "text"\n[tools.read_query]\nemit = "structured"', "slim.toml")

    async def call(name, arguments):
        return ANSWERS[name](0)

    proxy = build_proxy(config, TOOLS, call)
    async with _client(proxy_server(proxy, config)) as client:
        commits = await client.call_tool("list_commits", {})
        query = await client.call_tool("read_query", {})
    assert commits.structured_content is None
    assert json.loads(commits.content[0].text)["total"] == 150
    assert query.content == []
    assert query.structured_content["text"]
