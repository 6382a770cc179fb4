"""The proxy in process: the recorded GitHub upstream behind it, a real ``mcp.Client`` in front.

The same proxy, started as real processes over stdio and HTTP, is in test_proxy_process.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from slimtools import ConfigurationError, Toolkit
from slimtools.proxy.config import parse_config
from slimtools.proxy.server import build_proxy
from slimtools.tokens import count_tokens
from tests.core_helpers import next_call
from tests.proxy import proxy_upstream
from tests.proxy.proxy_fixtures import Upstream, envelope, proxied, text_of, use_shared_payloads

pytestmark = pytest.mark.shared


async def test_listing_keeps_names_and_schemas_and_adds_get_record():
    """Every upstream tool is listed by name with its schema (plus page/limit), then get_record."""
    async with proxied() as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert list(tools) == [t.name for t in proxy_upstream.TOOLS] + ["get_record"]
    issues = tools["list_issues"].input_schema
    assert issues["required"] == ["repo"]
    assert issues["additionalProperties"] is False
    assert {"repo", "page", "limit"} == set(issues["properties"])
    assert issues["properties"]["limit"]["default"] == 5


async def test_slimmed_tools_publish_the_envelope_schema_and_keep_upstream_annotations():
    """A configured tool lists the envelope's schema; one with its own also admits that."""
    async with proxied() as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
    brief = tools["list_issues"].output_schema["properties"]["briefs"]["items"]["properties"]
    assert {"number", "title", "author", "labels"} <= set(brief)
    search = tools["search_repositories"]
    assert search.output_schema["anyOf"][1] == proxy_upstream.SEARCH_OUTPUT
    assert search.annotations.title == "Search repos"
    assert search.annotations.read_only_hint is True


async def test_a_tool_with_its_own_page_parameter_keeps_its_schema():
    """``list_events`` pages itself: the proxy adds nothing to its schema."""
    async with proxied() as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["list_events"].input_schema == proxy_upstream.TOOLS[7].input_schema


async def test_a_configured_call_is_an_envelope_many_times_smaller():
    """list_issues (24,000 raw tokens) comes back as 5 allowlisted briefs, 20x smaller or more."""
    async with proxied() as (client, _):
        result = await client.call_tool("list_issues", {"repo": "PyGithub/PyGithub"})
    env = envelope(result)
    raw = proxy_upstream.answer("list_issues", {}).content[0].text
    assert env["total"] == 30
    assert len(env["briefs"]) == 5
    assert set(env["briefs"][0]) <= {
        "number",
        "title",
        "state",
        "author",
        "labels",
        "comments",
        "created_at",
    }
    assert count_tokens(raw) / count_tokens(text_of(result)) > 20


async def test_page_two_comes_from_the_snapshot_without_calling_the_upstream():
    """Page 2 is served from the page-1 snapshot: one upstream call for both pages."""
    async with proxied() as (client, upstream):
        first = envelope(await client.call_tool("list_issues", {"repo": "a/b"}))
        second = envelope(await client.call_tool("list_issues", {"repo": "a/b", "page": 2}))
    assert upstream.count("list_issues") == 1
    assert second["page"] == 2
    numbers = [b["number"] for b in first["briefs"] + second["briefs"]]
    assert len(set(numbers)) == 10


async def test_get_record_returns_the_full_record_without_denied_paths():
    """get_record(number) is the upstream's whole issue, less ``node_id`` and ``user.email``."""
    async with proxied() as (client, _):
        env = envelope(await client.call_tool("list_issues", {"repo": "a/b"}))
        number = env["briefs"][0]["number"]
        record = await client.call_tool("get_record", {"handle": number})
    full = json.loads(text_of(record))
    original = json.loads(proxy_upstream.answer("list_issues", {}).content[0].text)[0]
    assert full["number"] == original["number"] == number
    assert full["body"] == original["body"]
    assert "node_id" in original
    assert "node_id" not in full
    assert "node_id" not in json.dumps(full)


async def test_denied_paths_never_reach_the_store():
    """Nothing the toolkit's store keeps (snapshots, records) holds a denied key."""
    use_shared_payloads()
    config = parse_config('[tools.list_issues]\ndeny = ["node_id", "user"]\nlimit = 3\n')

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        return proxy_upstream.answer(name, arguments)

    proxy = build_proxy(config, proxy_upstream.TOOLS, call)
    await proxy.kit.acall("list_issues", {"repo": "a/b"})
    kept = json.dumps([entry.value for entry in proxy.kit.store._entries.values()])
    assert '"node_id"' not in kept
    assert '"user"' not in kept
    assert '"title"' in kept


async def test_an_upstream_error_passes_through_with_its_flag_and_words():
    """isError and the upstream's own text reach the client unchanged."""
    async with proxied() as (client, _):
        result = await client.call_tool("get_issue", {"number": 7})
    assert result.is_error
    assert text_of(result) == "404 Not Found: no issue 7"


async def test_an_image_passes_through_untouched():
    """A result with an image block is sent as the upstream sent it."""
    async with proxied() as (client, _):
        result = await client.call_tool("screenshot", {})
    assert [b.type for b in result.content] == ["text", "image"]
    assert result.content[1].data == proxy_upstream.PIXEL


async def test_a_small_unconfigured_result_passes_through_untouched():
    """Under the budget an unconfigured tool's result is exactly the upstream's."""
    async with proxied() as (client, _):
        result = await client.call_tool("echo_env", {"name": "HOME"})
    assert result.structured_content is None
    assert not text_of(result).startswith('{"total"')


async def test_an_oversized_unconfigured_result_becomes_an_envelope_within_budget():
    """list_pulls (106,000 tokens) becomes automatic briefs, each with its id, within budget."""
    async with proxied() as (client, _):
        result = await client.call_tool("list_pulls", {"repo": "a/b"})
    env = envelope(result)
    assert env["total"] == 30
    assert count_tokens(text_of(result)) <= 8000
    assert env["briefs"]
    assert "id" in env["briefs"][0]
    assert "html_url" not in env["briefs"][0]
    assert "10 more: list_pulls(" in env["hint"]


async def test_following_the_budget_hints_shows_every_id_once_with_one_upstream_call():
    """Walking an oversized result by its hints shows all 30 pulls, each once, one call upstream."""
    async with proxied() as (client, upstream):
        args: dict[str, Any] | None = {"repo": "a/b"}
        seen: list[int] = []
        while args is not None:
            env = envelope(await client.call_tool("list_pulls", args))
            seen += [b["id"] for b in env["briefs"]]
            args = next_call(env["hint"], "list_pulls")
    raw = json.loads(proxy_upstream.answer("list_pulls", {}).content[0].text)
    assert seen == [r["id"] for r in raw]
    assert upstream.count("list_pulls") == 1


async def test_an_oversized_text_is_paged_by_whole_lines():
    """A 2,000-line log becomes a page of whole lines (about 4,000 tokens), a handle, and the
    call for the next page, which starts on the line after."""
    async with proxied() as (client, _):
        first = envelope(await client.call_tool("read_log", {}))
        second = envelope(await client.call_tool("read_log", {"page": 2}))
    text = proxy_upstream.answer("read_log", {}).content[0].text
    assert first["total"] == 2000
    assert text.startswith(first["text"] + second["text"])
    assert first["text"].endswith("\n")
    assert 3_000 < count_tokens(first["text"]) <= 4_000
    assert "handle" in first


async def test_structured_search_results_are_slimmed_from_their_items():
    """search_repositories' structuredContent is slimmed from ``items`` by the glob's options."""
    async with proxied() as (client, _):
        result = await client.call_tool("search_repositories", {"q": "python"})
    env = envelope(result)
    assert env["total"] == 30
    assert set(env["briefs"][0]) <= {
        "id",
        "full_name",
        "description",
        "stargazers_count",
        "language",
    }


async def test_without_a_budget_unconfigured_tools_are_forwarded_untouched():
    """``max_tokens = false``: an oversized unconfigured result passes as the upstream sent it."""
    async with proxied("max_tokens = false\n") as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("list_pulls", {"repo": "a/b"})
    assert "page" not in tools["list_pulls"].input_schema["properties"]
    assert text_of(result) == proxy_upstream.answer("list_pulls", {}).content[0].text


def test_an_upstream_tool_named_like_the_companion_is_a_configuration_error():
    """The proxy refuses to shadow an upstream ``get_record`` and says how to rename its own."""
    tools = [
        *proxy_upstream.TOOLS,
        proxy_upstream.TOOLS[0].model_copy(update={"name": "get_record"}),
    ]
    with pytest.raises(ConfigurationError, match="companion"):
        build_proxy(parse_config(""), tools, proxy_upstream_call)


async def proxy_upstream_call(name: str, arguments: dict[str, Any]) -> Any:
    return proxy_upstream.answer(name, arguments)


async def test_a_failing_upstream_call_is_an_error_result_not_a_crash():
    """A transport failure becomes an isError result naming the tool."""
    use_shared_payloads()

    async def broken(name: str, arguments: dict[str, Any]) -> Any:
        raise ConnectionError("upstream went away")

    proxy = build_proxy(parse_config(""), proxy_upstream.TOOLS, broken)
    result = await proxy.kit.acall("list_issues", {"repo": "a/b"})
    assert result.is_error
    assert "upstream went away" in result.text


RESPONSE_FORMAT = """
[tools.list_issues]
fields = ["number", "title"]
deny = ["node_id"]
key = "number"
limit = 4
response_format = true
"""


async def test_response_format_detailed_shows_whole_records_from_the_same_snapshot():
    """``response_format="detailed"`` pages whole records (less denied paths), one upstream call."""
    async with proxied(RESPONSE_FORMAT) as (client, upstream):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        concise = envelope(await client.call_tool("list_issues", {"repo": "a/b"}))
        detailed = envelope(
            await client.call_tool(
                "list_issues", {"repo": "a/b", "page": 2, "response_format": "detailed"}
            )
        )
        bad = await client.call_tool("list_issues", {"repo": "a/b", "response_format": "full"})
    prop = tools["list_issues"].input_schema["properties"]["response_format"]
    assert prop["enum"] == ["concise", "detailed"]
    assert set(concise["briefs"][0]) == {"number", "title"}
    assert "body" in detailed["briefs"][0]
    assert "node_id" not in detailed["briefs"][0]
    assert detailed["briefs"][0]["number"] != concise["briefs"][0]["number"]
    assert upstream.count("list_issues") == 1
    assert bad.is_error


def test_build_proxy_registers_each_upstream_tool_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Variants (``response_format``'s concise and detailed) are bound, not registered."""
    registered: list[str] = []
    register = Toolkit.tool

    def counting(self: Toolkit, fn: Any = None, /, **options: Any) -> Any:
        registered.append(options.get("name") or fn.__name__)
        return register(self, fn, **options)

    monkeypatch.setattr(Toolkit, "tool", counting)
    build_proxy(parse_config(RESPONSE_FORMAT), proxy_upstream.TOOLS, Upstream().call)
    assert sorted(registered) == sorted(t.name for t in proxy_upstream.TOOLS)
