"""The upstream's lifecycle under ``slimtools proxy``: start failures, crashes, the proxy's death.

Real processes: the proxy (``python -m slimtools.cli proxy``) over
``tests/proxy/proxy_mortal_upstream.py``, a server that can be told to crash.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests._ports import ROOT, TIMEOUT, run, slimtools, stop
from tests.proxy.proxy_fixtures import text_of

pytestmark = pytest.mark.subprocess

MORTAL = str(Path(__file__).with_name("proxy_mortal_upstream.py"))


def proxy(*args: str) -> list[str]:
    return slimtools("proxy", *args)


def environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "MORTAL_PID_FILE": str(tmp_path / "pids")}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def run_proxy(*args: str) -> subprocess.CompletedProcess[str]:
    return run(proxy(*args))


@pytest.mark.parametrize(
    ("upstream", "says"),
    [
        (["--", "/nonexistent/server"], "could not be started: no such command"),
        (["--", "false"], "exited before it answered"),
        (["--upstream-url", "http://127.0.0.1:9/mcp"], "could not be reached"),
    ],
)
def test_an_upstream_that_cannot_start_is_one_line_and_status_3(upstream, says):
    """No traceback: one line naming the upstream and why, then exit status 3."""
    done = run_proxy(*upstream)
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1, done.stderr
    assert says in done.stderr


async def test_a_crashed_upstream_is_restarted_and_the_failed_call_says_so(tmp_path):
    """The call that crashed it gets an error naming the restart; a later call is answered."""
    command = proxy("--", sys.executable, MORTAL)
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=environment(tmp_path), cwd=str(ROOT)
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params) as client:
            before = text_of(await client.call_tool("pid", {}))
            crashed = await client.call_tool("crash", {})
            after = ""
            while not after.isdigit():
                await anyio.sleep(0.3)
                after = text_of(await client.call_tool("pid", {}))
    assert crashed.is_error
    assert "restarted" in text_of(crashed)
    assert after != before


async def _failure_logged(tmp_path: Path, *flags: str) -> str:
    """The proxy's stderr after one call of the upstream's failing tool."""
    log = tmp_path / "stderr.txt"
    command = proxy(*flags, "--", sys.executable, MORTAL)
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=environment(tmp_path), cwd=str(ROOT)
    )
    with anyio.fail_after(TIMEOUT), log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            failed = await client.call_tool("fail", {})
    assert failed.is_error
    return log.read_text()


async def test_a_tool_failure_is_logged_in_one_line(tmp_path):
    """An upstream tool that fails: one line on the proxy's stderr, no traceback."""
    logged = await _failure_logged(tmp_path)
    assert "the backend said no" in logged
    assert "Traceback" not in logged
    assert len(logged.splitlines()) == 1, logged


async def test_verbose_logs_the_failure_with_its_traceback(tmp_path):
    """``--verbose`` keeps the traceback of a failed tool call."""
    logged = await _failure_logged(tmp_path, "--verbose")
    assert "Traceback" in logged
    assert "the backend said no" in logged


def test_the_upstream_dies_with_the_proxy(tmp_path):
    """Proxy killed (SIGKILL) mid-call: its busy upstream, deaf to stdin, dies with it."""
    process = subprocess.Popen(
        proxy("--", sys.executable, MORTAL),
        env=environment(tmp_path),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        for message in HANG:
            process.stdin.write((json.dumps(message) + "\n").encode())
            process.stdin.flush()
            if "id" in message and message["method"] == "initialize":
                process.stdout.readline()  # the proxy is up, and so is its upstream
        upstream = int((tmp_path / "pids").read_text().split()[0])
        time.sleep(1.0)  # the call reaches the upstream, which blocks in it
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while alive(upstream) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(upstream)
    finally:
        stop(process)


HANG = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "hang", "arguments": {}},
    },
]


def test_suggest_from_an_upstream_that_cannot_start_is_one_line_and_status_3():
    """``suggest --from-proxy`` reports an unstartable upstream as the proxy does."""
    done = run(slimtools("suggest", "--from-proxy", "t", "--", "/nope"))
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1, done.stderr
    assert "could not be started" in done.stderr


async def test_an_answer_that_is_not_utf8_is_read_with_replacement_characters(tmp_path):
    """Latin-1 bytes from the upstream become U+FFFD; the connection and the next call go on."""
    command = proxy("--", sys.executable, str(Path(__file__).with_name("proxy_raw_upstream.py")))
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=environment(tmp_path), cwd=str(ROOT)
    )
    with anyio.fail_after(20):
        async with Client(params) as client:
            answer = await client.call_tool("latin1", {})
            after = await client.call_tool("echo", {"text": "still here"})
    assert text_of(answer) == "caf\ufffd"
    assert text_of(after) == "still here"


SECRETS = (
    "postgresql://user:hunter2@db.example/prod",
    "--api-key",
    "sk-live-0123456789",
    "--token=tok-abcdef123456",
)


async def _calls_through(tmp_path: Path, tools: list[str], *flags: str) -> list[str]:
    """The texts of calling ``tools`` in turn through the proxy over the mortal upstream,
    started with secrets on its command line."""
    command = proxy(*flags, "--", sys.executable, MORTAL, *SECRETS)
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=environment(tmp_path), cwd=str(ROOT)
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params) as client:
            return [text_of(await client.call_tool(tool, {})) for tool in tools]


async def test_a_restarting_upstream_is_named_without_its_arguments(tmp_path):
    """While the upstream restarts, error results name its executable, none of its arguments."""
    texts = await _calls_through(tmp_path, ["crash", "pid"])
    assert "restarted" in texts[0]
    for text in texts:
        assert not any(part in text for part in ("hunter2", "sk-live", "tok-abcdef", "--api-key"))
        assert "proxy_mortal_upstream" not in text


async def test_a_timed_out_call_names_the_upstream_without_its_arguments(tmp_path):
    """A call abandoned on timeout names the upstream's executable, never its arguments."""
    [text] = await _calls_through(tmp_path, ["hang"], "--call-timeout", "1")
    assert "gave no answer" in text
    assert Path(sys.executable).name in text
    assert not any(part in text for part in ("hunter2", "sk-live", "tok-abcdef", "--api-key"))


async def test_the_first_error_of_a_restart_says_when_it_is_due(tmp_path):
    """The call that finds the upstream gone says a positive wait, not "due in 0.0 s"."""
    [text] = await _calls_through(tmp_path, ["crash"])
    due = re.search(r"due in (\d+\.\d) s", text)
    assert due is not None, text
    assert float(due.group(1)) > 0
