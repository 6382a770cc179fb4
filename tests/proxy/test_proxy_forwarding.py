"""The proxy is transparent for all of MCP but tool results: ``server-everything`` behind it.

``@modelcontextprotocol/server-everything`` exercises every MCP feature; each test asks the
same of the proxy (``slimtools proxy -- mcp-server-everything``) as a client would of the
server itself, through ``mcp.Client``, and gets the same: capabilities and instructions,
prompts, resources and templates, completions, tool titles and execution, roots, sampling,
elicitation, log messages and progress.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests._ports import serving
from tests.proxy.npm_servers import npm_server
from tests.proxy.proxy_fixtures import text_of

pytestmark = [
    pytest.mark.subprocess,
    # roots and logging are deprecated in the 2026-07-28 protocol; clients still use them
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60
CLIENT_ROOT = "file:///srv/the-clients-root"


@pytest.fixture(scope="module")
def everything() -> str:
    """The installed server-everything executable."""
    return npm_server("@modelcontextprotocol/server-everything", "mcp-server-everything")


class Seen:
    """What the client was asked or told by the server it is connected to."""

    def __init__(self) -> None:
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.sampled: list[types.CreateMessageRequestParams] = []
        self.elicited: list[Any] = []

    async def roots(self, context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=CLIENT_ROOT, name="the client's")])

    async def sampling(self, context: Any, params: Any) -> types.CreateMessageResult:
        self.sampled.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="the client's model says hi"),
            model="client-model",
        )

    async def elicitation(self, context: Any, params: Any) -> types.ElicitResult:
        self.elicited.append(params)
        return types.ElicitResult(action="decline")

    async def logging(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)


MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
"""Handshake-era clients, and the SDK's default (the current protocol, probing first)."""


@asynccontextmanager
async def connected(command: list[str], seen: Seen, mode: str = "legacy") -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=command[0], args=command[1:], cwd=str(ROOT), env={"PYTHONPATH": str(ROOT)}
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(
            params,
            mode=mode,  # type: ignore[arg-type]
            list_roots_callback=seen.roots,
            sampling_callback=seen.sampling,
            elicitation_callback=seen.elicitation,
            logging_callback=seen.logging,
            cache=None,
        ) as client:
            yield client


@asynccontextmanager
async def both(everything: str, mode: str = "legacy") -> AsyncIterator[tuple[Client, Client, Seen]]:
    """A client of the server itself and one of the proxy in front of it, both in ``mode``."""
    seen = Seen()
    proxy = [sys.executable, "-m", "slimtools.cli", "proxy", "--", everything]
    async with (
        connected([everything], Seen(), mode) as direct,
        connected(proxy, seen, mode) as proxied,
    ):
        yield direct, proxied, seen


@MODES
async def test_capabilities_and_instructions_are_the_upstreams(everything, mode):
    """Prompts, resources (subscribe), completions, logging and tasks are advertised."""
    async with both(everything, mode) as (direct, proxied, _):
        theirs, ours = direct.server_capabilities, proxied.server_capabilities
        instructions = proxied.instructions or ""
        assert instructions.startswith(direct.instructions or "?")
    assert ours.prompts == theirs.prompts
    assert ours.resources == theirs.resources
    assert ours.completions == theirs.completions
    assert ours.logging == theirs.logging
    assert ours.tasks == theirs.tasks


@MODES
async def test_tools_keep_their_title_and_execution(everything, mode):
    """Each tool is listed with the upstream's title and execution fields."""
    async with both(everything, mode) as (direct, proxied, _):
        theirs = {t.name: t for t in (await direct.list_tools()).tools}
        ours = {t.name: t for t in (await proxied.list_tools()).tools}
    for name, tool in theirs.items():
        assert ours[name].title == tool.title
        assert ours[name].execution == tool.execution


async def test_prompts_are_listed_and_got_unchanged(everything):
    """prompts/list and prompts/get answer as the upstream does."""
    async with both(everything) as (direct, proxied, _):
        assert (await proxied.list_prompts()).prompts == (await direct.list_prompts()).prompts
        args = {"city": "Lyon", "state": "Rhone"}
        ours = await proxied.get_prompt("args-prompt", args)
        theirs = await direct.get_prompt("args-prompt", args)
    assert ours.messages == theirs.messages


async def test_resources_and_templates_are_forwarded_with_the_record_template(everything):
    """resources/list and read as upstream; templates are upstream's plus slimtools://."""
    async with both(everything) as (direct, proxied, _):
        listed = (await proxied.list_resources()).resources
        assert listed == (await direct.list_resources()).resources
        uri = str(listed[0].uri)
        assert (await proxied.read_resource(uri)).contents == (
            await direct.read_resource(uri)
        ).contents
        ours = [
            t.uri_template for t in (await proxied.list_resource_templates()).resource_templates
        ]
        theirs = (await direct.list_resource_templates()).resource_templates
    assert ours == [*(t.uri_template for t in theirs), "slimtools://proxy/{handle}"]


async def test_completions_are_forwarded(everything):
    """completion/complete on a prompt argument answers as the upstream does."""
    ref = types.PromptReference(type="ref/prompt", name="completable-prompt")
    async with both(everything) as (direct, proxied, _):
        ours = await proxied.complete(ref, {"name": "department", "value": "E"})
        theirs = await direct.complete(ref, {"name": "department", "value": "E"})
    assert ours.completion.values == theirs.completion.values
    assert ours.completion.values


@MODES
async def test_the_upstream_sees_the_clients_roots(everything, mode):
    """get-roots-list reports the client's root, not the proxy's own (it has none)."""
    async with both(everything, mode) as (_, proxied, _seen):
        result = await proxied.call_tool("get-roots-list", {})
    assert CLIENT_ROOT in text_of(result)


@MODES
async def test_sampling_requests_reach_the_client(everything, mode):
    """A tool that samples is answered by the client's model, through the proxy."""
    async with both(everything, mode) as (_, proxied, seen):
        result = await proxied.call_tool("trigger-sampling-request", {"prompt": "hello"})
    assert len(seen.sampled) == 1
    assert "the client's model says hi" in text_of(result)


@MODES
async def test_elicitation_requests_reach_the_client(everything, mode):
    """A tool that elicits asks the client, whose answer goes back upstream."""
    async with both(everything, mode) as (_, proxied, seen):
        result = await proxied.call_tool("trigger-elicitation-request", {})
    assert len(seen.elicited) == 1
    assert "decline" in text_of(result).lower()


async def test_progress_of_a_call_reaches_the_client(everything):
    """Progress notifications of a long call arrive with the client's own progress token."""
    steps: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        steps.append(done)

    async with both(everything) as (_, proxied, _seen):
        await proxied.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.5, "steps": 3},
            progress_callback=progress,
        )
    assert len(steps) == 3


@MODES
async def test_log_messages_reach_the_client(everything, mode):
    """With simulated logging on, the upstream's log messages arrive at the client."""
    async with both(everything, mode) as (_, proxied, seen):
        await proxied.set_logging_level("debug")
        await proxied.call_tool("toggle-simulated-logging", {})
        with anyio.move_on_after(15):
            while not seen.logs:
                await anyio.sleep(0.2)
    assert seen.logs


@MODES
async def test_the_upstream_sees_the_clients_protocol(everything, mode):
    """Through the proxy a client negotiates the protocol version it would directly."""
    async with both(everything, mode) as (direct, proxied, _):
        assert proxied.protocol_version == direct.protocol_version


@MODES
async def test_logging_set_level_is_forwarded(everything, mode):
    """``logging/setLevel`` answers as the upstream does, not "Method not found"."""
    async with both(everything, mode) as (direct, proxied, _):
        await direct.set_logging_level("info")
        await proxied.set_logging_level("info")


@MODES
async def test_filesystem_serves_only_inside_the_clients_narrower_root(tmp_path, mode):
    """server-filesystem started on a folder, a client whose root is a subfolder: a file
    outside the client's root is refused through the proxy, as it is directly."""
    server = npm_server("@modelcontextprotocol/server-filesystem", "mcp-server-filesystem")
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("the secret")
    (inside / "note.txt").write_text("the note")
    seen = Seen()

    async def narrow(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=inside.resolve().as_uri())])

    seen.roots = narrow  # type: ignore[method-assign]
    proxy = [sys.executable, "-m", "slimtools.cli", "proxy", "--", server, str(tmp_path)]
    async with connected(proxy, seen, mode) as client:
        secret = await client.call_tool("read_text_file", {"path": str(outside / "secret.txt")})
        note = await client.call_tool("read_text_file", {"path": str(inside / "note.txt")})
    assert secret.is_error
    assert "the secret" not in text_of(secret)
    assert "the note" in text_of(note)


async def test_an_http_client_of_the_current_protocol_is_asked_for_sampling(everything):
    """``proxy --http``: the SDK's default client falls back to the handshake as it does
    directly, so the upstream's sampling request reaches it and setLevel is answered."""
    seen = Seen()

    def command(port: int) -> list[str]:
        address = f"127.0.0.1:{port}"
        return [sys.executable, "-m", "slimtools.cli", "proxy", "--http", address, "--", everything]

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with serving(command, env=env) as port, anyio.fail_after(TIMEOUT):
        async with Client(
            f"http://127.0.0.1:{port}/mcp",
            sampling_callback=seen.sampling,
            list_roots_callback=seen.roots,
        ) as client:
            sampled = await client.call_tool("trigger-sampling-request", {"prompt": "hello"})
            await client.set_logging_level("info")
    assert "the client's model says hi" in text_of(sampled)
    assert len(seen.sampled) == 1
