"""The proxy as real processes: ``slimtools proxy`` over stdio and HTTP, a real upstream behind.

The upstream is ``tests/proxy/proxy_upstream.py`` (recorded GitHub responses), started by the proxy
over stdio or run as a streamable HTTP server on loopback; the client is ``mcp.Client``.
Every process is bounded in time and stopped at the end.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from slimtools.tokens import count_tokens
from tests._ports import ROOT, TIMEOUT, run, serving, slimtools
from tests._shared import shared_data
from tests.proxy.proxy_fixtures import CONFIG, envelope, text_of

pytestmark = [pytest.mark.subprocess, pytest.mark.shared]

UPSTREAM = str(Path(__file__).with_name("proxy_upstream.py"))


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """The environment the proxy runs in: payloads, a call log and a token to pass through."""
    return {
        **os.environ,
        "SLIMTOOLS_PAYLOADS": str(shared_data() / "payloads"),
        "PROXY_UPSTREAM_LOG": str(tmp_path / "calls.jsonl"),
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_passed_through",
        "PYTHONPATH": str(ROOT),
    }


@pytest.fixture
def config(tmp_path) -> str:
    path = tmp_path / "slim.toml"
    path.write_text(CONFIG)
    return str(path)


def upstream_calls(env: dict[str, str], tool: str) -> int:
    log = Path(env["PROXY_UPSTREAM_LOG"])
    lines = log.read_text().splitlines() if log.exists() else []
    return sum(1 for line in lines if json.loads(line)["tool"] == tool)


def proxy_command(*args: str) -> list[str]:
    return slimtools("proxy", *args)


@asynccontextmanager
async def stdio_proxy(env: dict[str, str], *args: str) -> AsyncIterator[Client]:
    command = proxy_command(*args)
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(ROOT))
    with anyio.fail_after(TIMEOUT):
        async with Client(params) as client:
            yield client


def _http_proxy(config: str, port: int) -> list[str]:
    """The proxy served over HTTP on ``port``, its upstream the test server over stdio."""
    return proxy_command(
        "--config", config, "--http", f"127.0.0.1:{port}", "--", sys.executable, UPSTREAM
    )


async def check_session(client: Client, env: dict[str, str], *, sealed: bool = False) -> None:
    """Listing, a slimmed call, page 2 from the snapshot, get_record, pass-through, budget.

    ``sealed``: a session-less HTTP client: its handles and page calls carry a token
    (test_proxy_isolation), so it follows the hint's page-2 call, cursor included.
    """
    names = [t.name for t in (await client.list_tools()).tools]
    assert names[-1] == "get_record"
    assert "list_issues" in names
    first = await client.call_tool("list_issues", {"repo": "a/b"})
    env_first = envelope(first)
    assert len(env_first["briefs"]) == 5
    assert count_tokens(text_of(first)) * 20 < 24_000
    page_two = {"repo": "a/b", "page": 2}
    if sealed:
        page_two["cursor"] = re.search(r'cursor="([^"]+)"', env_first["hint"]).group(1)
    second = envelope(await client.call_tool("list_issues", page_two))
    assert second["page"] == 2
    assert upstream_calls(env, "list_issues") == 1
    brief = env_first["briefs"][0]
    # a session-less HTTP client is shown sealed handles beside each key (test_proxy_isolation)
    record = await client.call_tool("get_record", {"handle": brief.get("handle", brief["number"])})
    assert json.loads(text_of(record))["number"] == env_first["briefs"][0]["number"]
    error = await client.call_tool("get_issue", {"number": 3})
    assert error.is_error
    assert "404" in text_of(error)
    image = await client.call_tool("screenshot", {})
    assert [b.type for b in image.content] == ["text", "image"]
    pulls = await client.call_tool("list_pulls", {"repo": "a/b"})
    assert envelope(pulls)["total"] == 30
    assert count_tokens(text_of(pulls)) <= 8000


async def test_stdio_proxy_over_a_stdio_upstream(env, config):
    """The whole story with both sides on stdio, the environment reaching the upstream."""
    async with stdio_proxy(env, "--config", config, "--", sys.executable, UPSTREAM) as client:
        await check_session(client, env)
        token = await client.call_tool("echo_env", {"name": "GITHUB_PERSONAL_ACCESS_TOKEN"})
    assert text_of(token) == "ghp_passed_through"


async def test_stdio_proxy_over_an_http_upstream(env, config):
    """The same with the upstream served over streamable HTTP on loopback."""
    with serving(
        lambda port: [sys.executable, UPSTREAM, "--http", f"127.0.0.1:{port}"], env=env
    ) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        async with stdio_proxy(env, "--config", config, "--upstream-url", url) as client:
            await check_session(client, env)


async def test_proxy_served_over_http(env, config):
    """``--http HOST:PORT`` serves the proxy itself over streamable HTTP."""
    with serving(lambda port: _http_proxy(config, port), env=env) as port:
        with anyio.fail_after(TIMEOUT):
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                await check_session(client, env, sealed=True)


def test_a_bad_config_stops_the_proxy_with_its_message(env, tmp_path):
    """A config error is printed to stderr with file, line and key; the exit status is 2."""
    bad = tmp_path / "bad.toml"
    bad.write_text("[tools.list_issues]\nlimit = 0\n")
    done = run(
        proxy_command("--config", str(bad), "--", sys.executable, UPSTREAM),
        env=env,
    )
    assert done.returncode == 2
    assert f"{bad}:2: tools.list_issues.limit: must be a positive integer" in done.stderr


def test_dry_run_prints_raw_against_slimmed_tokens(env, config):
    """``--dry-run TOOL --args JSON`` calls once and prints both counts and the envelope."""
    done = run(
        proxy_command("--config", config, "--dry-run", "list_issues", "--args", '{"repo": "a/b"}',
                      "--", sys.executable, UPSTREAM),
        env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(
        r"list_issues \(configured\): raw [\d,]+ tokens -> slimmed \d+ tokens", done.stdout
    )
    assert '"total":30' in done.stdout


def test_suggest_from_proxy_prints_a_block_with_its_ratio(env):
    """``suggest --from-proxy TOOL`` samples the upstream and proposes a block."""
    done = run(
        slimtools("suggest", "--from-proxy", "search_repositories", "--args", '{"q": "x"}',
                  "--", sys.executable, UPSTREAM),
        env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "[tools.search_repositories]" in done.stdout
    assert 'items = "items"' in done.stdout
    assert "x smaller" in done.stdout


async def test_http_clients_with_their_own_sessions_never_share_handles(env, config):
    """Over HTTP each Mcp-Session-Id is its own handle session: B cannot expand A's handle."""
    with (
        serving(lambda port: _http_proxy(config, port), env=env) as port,
        anyio.fail_after(TIMEOUT),
    ):
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(url, mode="legacy") as alice, Client(url, mode="legacy") as bob:
            first = envelope(await alice.call_tool("list_issues", {"repo": "a/b"}))
            handle = first["briefs"][0]["number"]
            mine = await alice.call_tool("get_record", {"handle": handle})
            theirs = await bob.call_tool("get_record", {"handle": handle})
    assert not mine.is_error
    assert theirs.is_error
    assert "in this session" in text_of(theirs)


def test_dry_run_of_an_unknown_tool_names_the_upstream_tools(env):
    """``--dry-run`` of a tool the upstream lacks exits 2 and lists the tools it has."""
    done = run(
        proxy_command("--dry-run", "nope", "--", sys.executable, UPSTREAM),
        env=env,
    )
    assert done.returncode == 2
    assert "no tool 'nope' upstream; tools: list_issues" in done.stderr


def test_without_the_mcp_sdk_the_proxy_names_its_extra():
    """Importing the proxy's server without the MCP SDK says to install slimtools[proxy]."""
    from tests.adapters.sdk_adapter_fixtures import import_error_without

    assert "pip install 'slimtools[proxy]'" in import_error_without("mcp", "slimtools.proxy.server")
