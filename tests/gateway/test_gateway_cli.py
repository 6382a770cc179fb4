"""``slimtools gateway``: its options, and the gateway's imports staying out of the core."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from slimtools.clearing import ClearingPolicy
from slimtools.cli import parser
from slimtools.cli.gateway import gateway_policy, is_loopback, listen_address, seconds
from tests.gateway.gateway_upstream import FakeUpstream, create_upstream, serve
from tests.gateway.test_gateway_faults import free_port


def test_gateway_takes_the_shared_policy_options() -> None:
    """``--cache``, ``--max-context-tokens`` and ``--keep-turns`` reach the policy."""
    args = parser().parse_args(
        ["gateway", "--upstream", "https://api.example", "--cache", "openai",
         "--max-context-tokens", "50000", "--keep-turns", "3"]
    )  # fmt: skip
    policy = gateway_policy(args)
    assert policy == ClearingPolicy(cache="openai", max_context_tokens=50_000, keep_turns=3)
    assert args.listen == ("127.0.0.1", 8787)


def test_policy_none_makes_a_pass_through() -> None:
    """``--policy none`` gives no policy: the app then forwards without clearing."""
    args = parser().parse_args(["gateway", "--upstream", "http://u", "--policy", "none"])
    assert gateway_policy(args) is None


def test_listen_takes_an_ipv6_address_in_brackets() -> None:
    """``[::1]:8787`` is the host ``::1``; an IPv6 address without brackets is refused."""
    assert listen_address("[::1]:8787") == ("::1", 8787)
    with pytest.raises(argparse.ArgumentTypeError):
        listen_address("::1:8787")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("localhost", True), ("::1", True), ("127.1.2.3", True),
     ("0.0.0.0", False), ("::", False), ("192.168.1.2", False), ("gw.example", False)],
)  # fmt: skip
def test_loopback_addresses_are_told_from_others(host: str, loopback: bool) -> None:
    """Only a loopback address goes without the startup warning."""
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("text", ["8787", "host:", ":80", "h:99999", "h:x"])
def test_listen_address_rejects_what_is_not_host_port(text: str) -> None:
    """A listen address must be HOST:PORT with a port in range."""
    with pytest.raises(argparse.ArgumentTypeError):
        listen_address(text)


@pytest.mark.parametrize("url", ["api.anthropic.com", "ftp://x", "http://", "u"])
def test_an_upstream_that_is_not_an_http_url_is_a_usage_error(url: str, capsys) -> None:
    """Caught at start, not as a 502 on every request the agent makes."""
    with pytest.raises(SystemExit) as exited:
        parser().parse_args(["gateway", "--upstream", url])
    assert exited.value.code == 2
    assert "http:// or https:// URL" in capsys.readouterr().err


def test_gateway_needs_an_upstream() -> None:
    """Without ``--upstream`` the command is a usage error."""
    with pytest.raises(SystemExit):
        parser().parse_args(["gateway"])


PROBE = """
import json, sys
import slimtools.gateway, slimtools.cli
print(json.dumps(sorted(name.split(".")[0] for name in sys.modules)))
"""


@pytest.mark.subprocess
def test_the_gateway_core_and_cli_import_no_http_stack() -> None:
    """``slimtools.gateway`` and the CLI load starlette, uvicorn and aiohttp only to serve."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert set(json.loads(out.stdout)).isdisjoint(
        {"starlette", "uvicorn", "aiohttp", "httpx", "litellm"}
    )


def test_limits_options_reach_the_app() -> None:
    """``--max-body``, the timeouts and the pool size become the app's ``Limits``."""
    pytest.importorskip("httpx")
    from slimtools.cli.gateway import gateway_limits
    from slimtools.gateway.app import Limits

    args = parser().parse_args(
        ["gateway", "--upstream", "http://u", "--max-body", "2", "--connect-timeout", "1.5",
         "--read-timeout", "30", "--max-upstream-connections", "7"]
    )  # fmt: skip
    assert gateway_limits(args) == Limits(2 * 1024 * 1024, 1.5, 30.0, 7)


def test_limits_default_to_the_documented_values() -> None:
    """Without options: 32 MiB, 10 s to connect, 600 s of silence, 100 connections."""
    pytest.importorskip("httpx")
    from slimtools.cli.gateway import gateway_limits
    from slimtools.gateway.app import Limits

    assert gateway_limits(parser().parse_args(["gateway", "--upstream", "http://u"])) == Limits()


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "soon"])
def test_a_timeout_must_be_positive_seconds(text: str) -> None:
    """A timeout of zero, negative, NaN or not a number is a usage error."""
    with pytest.raises(argparse.ArgumentTypeError):
        seconds(text)


def start_gateway(upstream: str, listen: str, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """``slimtools gateway`` in a subprocess; the process and its startup line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "slimtools", "gateway", "--upstream", upstream,
         "--listen", listen, *extra],
        stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "SLIMTOOLS_GATEWAY_TOKEN": "tok"},
    )  # fmt: skip
    assert process.stderr is not None
    lines = []
    while "listening on" not in (line := process.stderr.readline()):
        lines.append(line)
        assert line, "".join(lines)
    return process, line


@pytest.mark.subprocess
def test_the_startup_line_says_where_it_listens_forwards_and_which_policy() -> None:
    """One line names the listen URL, the upstream, the policy and how to read the stats;
    an environment token is not printed."""
    port = free_port()
    with serve(create_upstream(FakeUpstream())) as upstream:
        process, line = start_gateway(upstream, f"127.0.0.1:{port}", "--keep-turns", "2")
        process.terminate()
        process.wait(timeout=30)
    assert f"listening on http://127.0.0.1:{port}" in line
    assert f"forwarding to {upstream}" in line
    assert "policy default, keep_turns=2" in line
    assert "$SLIMTOOLS_GATEWAY_TOKEN" in line
    assert "tok" not in line.replace("TOKEN", "")


@pytest.mark.subprocess
def test_sigterm_drains_within_the_shutdown_timeout_and_exits_0() -> None:
    """A request in flight at SIGTERM is given ``--shutdown-timeout``, then closed; exit 0."""
    port = free_port()
    with serve(create_upstream(FakeUpstream())) as upstream:
        process, _ = start_gateway(upstream, f"127.0.0.1:{port}", "--shutdown-timeout", "1")
        url = f"http://127.0.0.1:{port}/fault/slow?seconds=30"
        slow = threading.Thread(target=lambda: httpx.get(url, timeout=60), daemon=True)
        slow.start()
        time.sleep(0.5)
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=30)
    assert status == 0
    assert time.monotonic() - started < 10


@pytest.mark.subprocess
def test_listen_on_ipv6_loopback() -> None:
    """``--listen [::1]:PORT`` serves on the IPv6 loopback."""
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
            port = probe.getsockname()[1]
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    with serve(create_upstream(FakeUpstream())) as upstream:
        process, line = start_gateway(upstream, f"[::1]:{port}")
        try:
            answer = httpx.get(f"http://[::1]:{port}/v1/models", timeout=10)
        finally:
            process.terminate()
            process.wait(timeout=30)
    assert f"http://[::1]:{port}" in line
    assert answer.json()["path"] == "/v1/models"


@pytest.mark.subprocess
def test_an_address_in_use_exits_1() -> None:
    """A port another process holds: exit status 1, not a traceback."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "slimtools", "gateway", "--upstream", "http://u",
             "--listen", f"127.0.0.1:{port}"],
            check=False, capture_output=True, text=True, timeout=60,
            cwd=Path(__file__).resolve().parents[2],
        )  # fmt: skip
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
