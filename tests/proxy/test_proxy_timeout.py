"""An upstream that never answers a call, or answers with what cannot be read, under
``slimtools proxy``: the client gets an error naming the call in time, never the upstream's
content, and the next call is answered.

Real processes: the proxy (``python -m slimtools.cli proxy``) over
``tests/proxy/proxy_broken_upstream.py``, a server that misbehaves on command. The timeouts
are short (0.5 s) so the suite stays fast; nothing is timed beyond "it returned an error".
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests._ports import ROOT, TIMEOUT, run, slimtools
from tests.proxy.proxy_broken_upstream import SECRET
from tests.proxy.proxy_fixtures import text_of

pytestmark = pytest.mark.subprocess

BROKEN = str(Path(__file__).with_name("proxy_broken_upstream.py"))


@asynccontextmanager
async def proxied(*flags: str) -> AsyncIterator[Client]:
    """A client of the proxy (started with ``flags``) over the broken upstream."""
    command = slimtools("proxy", *flags, "--", sys.executable, BROKEN)
    params = StdioServerParameters(
        command=command[0],
        args=command[1:],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params) as client:
            yield client


@pytest.mark.parametrize("tool", ["silent", "garbage", "not_jsonrpc", "wrong_id"])
async def test_a_call_left_unanswered_is_an_error_naming_the_tool_and_the_timeout(tool):
    """No reply, a non-JSON line, a message that is no JSON-RPC, a reply to another id: the
    call ends in an error result naming the tool and the timeout, without the bad reply."""
    async with proxied("--call-timeout", "0.5") as client:
        failed = await client.call_tool(tool, {})
    assert failed.is_error
    assert tool in text_of(failed)
    assert "0.5 s" in text_of(failed)
    assert SECRET not in str(failed.model_dump())


@pytest.mark.parametrize("tool", ["silent", "garbage", "wrong_id", "bad_result"])
async def test_the_call_after_a_broken_one_is_answered(tool):
    """The proxy goes on serving: after a broken call, the next call gets its answer."""
    async with proxied("--call-timeout", "0.5") as client:
        await client.call_tool(tool, {})
        after = await client.call_tool("echo", {"text": "still here"})
    assert not after.is_error
    assert text_of(after) == "still here"


async def test_an_answer_that_is_no_tool_result_is_an_error_withholding_it():
    """The right id with a result that is no tool result: an error naming the tool and
    the reading error's type, never pydantic's message (which quotes the answer)."""
    async with proxied("--call-timeout", "0.5") as client:
        failed = await client.call_tool("bad_result", {})
    assert failed.is_error
    assert "bad_result" in text_of(failed)
    assert "withheld" in text_of(failed)
    assert SECRET not in str(failed.model_dump())


async def test_the_config_file_sets_the_timeout(tmp_path):
    """``call_timeout`` in the config bounds the call as the flag does."""
    config = tmp_path / "slim.toml"
    config.write_text("call_timeout = 0.5\n")
    async with proxied("--config", str(config)) as client:
        failed = await client.call_tool("silent", {})
    assert failed.is_error
    assert "0.5 s" in text_of(failed)


async def test_a_forwarded_request_left_unanswered_is_a_json_rpc_error():
    """``prompts/get`` the upstream never answers: a JSON-RPC error naming the request and
    the timeout; the proxy still answers the next call."""
    async with proxied("--call-timeout", "0.5") as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("silent")
        after = await client.call_tool("echo", {"text": "still here"})
    assert "prompts/get" in raised.value.error.message
    assert "0.5 s" in raised.value.error.message
    assert text_of(after) == "still here"


def test_a_dry_run_left_unanswered_says_so_and_exits_2():
    """``--dry-run`` of a call the upstream never answers: one line naming it, status 2."""
    command = ["--call-timeout", "0.5", "--dry-run", "silent", "--", sys.executable, BROKEN]
    done = run(slimtools("proxy", *command))
    assert done.returncode == 2
    assert "'silent' got no answer" in done.stderr
    assert SECRET not in done.stderr + done.stdout


async def test_other_calls_are_answered_while_one_waits_for_its_timeout():
    """A call in flight to a silent upstream tool holds up no other call: an ``echo`` sent
    meanwhile is answered while the silent one still waits."""
    results: dict[str, Any] = {}

    async def call(client: Client, tool: str) -> None:
        results[tool] = await client.call_tool(tool, {"text": "meanwhile"})

    async with proxied("--call-timeout", "30") as client, anyio.create_task_group() as group:
        group.start_soon(call, client, "silent")
        await anyio.sleep(0)
        await call(client, "echo")
        still_waiting = "silent" not in results
        group.cancel_scope.cancel()
    assert still_waiting
    assert text_of(results["echo"]) == "meanwhile"
