"""Two clients of one ``proxy --http`` never read each other's records, in both protocol modes.

Legacy clients (``Mcp-Session-Id``) are told apart by their session; clients of the current
protocol send no session id, so the proxy seals each handle it shows with a random token
(``slimtools.proxy.sessions``). Either way B cannot reach A's records: not by ``get_record``
of a key it guesses, not by page 2 of A's query, not through ``slimtools://proxy/...``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests._ports import TIMEOUT, serving
from tests.proxy.proxy_fixtures import envelope, text_of
from tests.proxy.test_proxy_process import (
    UPSTREAM,
    config,
    env,
    proxy_command,
    upstream_calls,
)
from tests.stores import redis_fixtures

pytestmark = [pytest.mark.subprocess, pytest.mark.shared]
__all__ = ["config", "env"]  # the fixtures, re-exported for pytest


@asynccontextmanager
async def two_clients(
    env: dict[str, str], config: str, mode: str
) -> AsyncIterator[tuple[Client, Client]]:
    """Alice and Bob, both connected in ``mode`` to one proxy served over HTTP."""

    def command(port: int) -> list[str]:
        return proxy_command(
            "--config", config, "--http", f"127.0.0.1:{port}", "--", sys.executable, UPSTREAM
        )

    with serving(command, env=env) as port, anyio.fail_after(TIMEOUT):
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(url, mode=mode) as alice, Client(url, mode=mode) as bob:  # type: ignore[arg-type]
            yield alice, bob


def handle_of(brief: dict[str, Any]) -> Any:
    """The handle a client was shown for a brief: its sealed ``handle``, else its key."""
    return brief.get("handle", brief["number"])


async def read(client: Client, uri: str) -> str:
    """The text of a resource, or the error's message."""
    try:
        result = await client.read_resource(uri)
    except Exception as exc:  # the SDK raises the server's error
        return f"error: {exc}"
    return "".join(getattr(block, "text", "") for block in result.contents)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_bob_cannot_read_alices_record_by_its_key(env, config, mode):
    """get_record of the key Alice was shown works for her and not for Bob."""
    async with two_clients(env, config, mode) as (alice, bob):
        brief = envelope(await alice.call_tool("list_issues", {"repo": "a/b"}))["briefs"][0]
        mine = await alice.call_tool("get_record", {"handle": handle_of(brief)})
        guessed = await bob.call_tool("get_record", {"handle": brief["number"]})
    assert json.loads(text_of(mine))["number"] == brief["number"]
    assert guessed.is_error
    assert "in this session" in text_of(guessed)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_bob_cannot_read_alices_record_as_a_resource(env, config, mode):
    """slimtools://proxy/<key> resolves for Alice's own handle only."""
    async with two_clients(env, config, mode) as (alice, bob):
        brief = envelope(await alice.call_tool("list_issues", {"repo": "a/b"}))["briefs"][0]
        mine = await read(alice, f"slimtools://proxy/{handle_of(brief)}")
        guessed = await read(bob, f"slimtools://proxy/{brief['number']}")
    assert json.loads(mine)["number"] == brief["number"]
    assert brief["title"] not in guessed
    assert "in this session" in guessed


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_bobs_page_two_is_not_read_from_alices_snapshot(env, config, mode):
    """Page 2 of Alice's query, asked by Bob, is fetched for Bob, not read from her page 1."""
    async with two_clients(env, config, mode) as (alice, bob):
        await alice.call_tool("list_issues", {"repo": "a/b"})
        second = envelope(await bob.call_tool("list_issues", {"repo": "a/b", "page": 2}))
    assert upstream_calls(env, "list_issues") == 2
    assert "fetched again" in second["hint"]


async def test_a_forged_token_reads_nothing(env, config):
    """A session-less client that swaps the token of a sealed handle gets no record."""
    async with two_clients(env, config, "auto") as (alice, bob):
        brief = envelope(await alice.call_tool("list_issues", {"repo": "a/b"}))["briefs"][0]
        handle, _, token = handle_of(brief).rpartition("~")
        forged = await bob.call_tool("get_record", {"handle": f"{handle}~{'A' * len(token)}"})
    assert forged.is_error
    assert brief["title"] not in text_of(forged)


async def test_session_less_clients_are_shown_sealed_handles_on_both_channels(env, config):
    """Each brief gains a random ``handle`` in front of its key; the hint's call names it."""
    async with two_clients(env, config, "auto") as (alice, _):
        result = await alice.call_tool("list_issues", {"repo": "a/b"})
    env_ = envelope(result)
    first = env_["briefs"][0]
    assert list(first)[:2] == ["handle", "number"]
    assert first["handle"].startswith(f"{first['number']}~")
    assert f'get_record("{first["handle"]}")' in env_["hint"]


redis_server = redis_fixtures.redis_server
redis_url = redis_fixtures.redis_url


@asynccontextmanager
async def two_instances(
    env: dict[str, str], config: str, store: str
) -> AsyncIterator[tuple[str, str]]:
    """The URLs of two ``proxy --http`` processes sharing the handle store ``store``."""
    shared = Path(config).with_name("shared.toml")
    shared.write_text(f"store = {json.dumps(store)}\n" + Path(config).read_text())

    def command(port: int) -> list[str]:
        return proxy_command(
            "--config", str(shared), "--http", f"127.0.0.1:{port}", "--", sys.executable, UPSTREAM
        )

    with serving(command, env=env) as first, serving(command, env=env) as second:
        ports = [first, second]
        with anyio.fail_after(TIMEOUT):
            yield tuple(f"http://127.0.0.1:{port}/mcp" for port in ports)  # type: ignore[misc]


async def test_a_sealed_handle_from_one_instance_is_served_by_another(env, config, redis_url):
    """With a Redis store, Alice's handle from instance 1 resolves on instance 2, page 2 too."""
    async with two_instances(env, config, redis_url) as (first, second):
        async with Client(first) as alice:
            brief = envelope(await alice.call_tool("list_issues", {"repo": "a/b"}))["briefs"][0]
        async with Client(second) as alice_again:
            record = await alice_again.call_tool("get_record", {"handle": handle_of(brief)})
            resource = await read(alice_again, f"slimtools://proxy/{handle_of(brief)}")
    assert json.loads(text_of(record))["number"] == brief["number"]
    assert json.loads(resource)["number"] == brief["number"]


async def test_instances_sharing_a_store_still_isolate_clients(env, config, redis_url):
    """Bob, on the other instance, cannot read Alice's record by its key."""
    async with two_instances(env, config, redis_url) as (first, second):
        async with Client(first) as alice:
            brief = envelope(await alice.call_tool("list_issues", {"repo": "a/b"}))["briefs"][0]
        async with Client(second) as bob:
            guessed = await bob.call_tool("get_record", {"handle": brief["number"]})
    assert guessed.is_error
    assert brief["title"] not in text_of(guessed)


def next_page(hint: str, tool: str) -> dict[str, Any]:
    """The arguments of the next-page call a hint names."""
    found = re.search(rf"{tool}\(([^)]*)\)", hint)
    assert found, hint
    return {k: json.loads(v) for k, v in (p.split("=", 1) for p in found.group(1).split(", "))}


async def test_a_session_less_clients_page_two_comes_from_its_snapshot(env, config):
    """The hint's next-page call carries the cursor: page 2 is read from page 1's snapshot."""
    async with two_clients(env, config, "auto") as (alice, _):
        first = envelope(await alice.call_tool("list_issues", {"repo": "a/b"}))
        arguments = next_page(first["hint"], "list_issues")
        second = envelope(await alice.call_tool("list_issues", arguments))
    assert arguments["page"] == 2
    assert "cursor" in arguments
    assert second["page"] == 2
    assert "fetched again" not in second["hint"]
    assert upstream_calls(env, "list_issues") == 1


@pytest.mark.parametrize(("mode", "listed"), [("auto", True), ("legacy", False)])
async def test_the_cursor_parameter_is_listed_to_session_less_clients_only(
    env, config, mode, listed
):
    """Paged tools list ``cursor`` to clients without a session; others never see it."""
    async with two_clients(env, config, mode) as (alice, _):
        tools = {t.name: t for t in (await alice.list_tools()).tools}
    assert ("cursor" in tools["list_issues"].input_schema["properties"]) is listed
    assert "cursor" not in tools["get_record"].input_schema["properties"]


async def test_a_session_less_client_opens_every_automatic_brief_handle(env, tmp_path):
    """No config over ``--http``: the automatic briefs' handles are sealed, and all resolve."""
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    async with two_clients(env, str(empty), "auto") as (alice, _):
        briefs = envelope(await alice.call_tool("list_commits", {"repo": "a/b"}))["briefs"]
        answers = [
            await alice.call_tool("get_record", {"handle": brief["handle"]}) for brief in briefs
        ]
    assert len(briefs) >= 3
    assert all("~" in brief["handle"] for brief in briefs)
    assert not any(answer.is_error for answer in answers)
    assert [json.loads(text_of(a))["sha"] for a in answers] == [b["sha"] for b in briefs]
