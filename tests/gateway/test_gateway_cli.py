"""``slimtools gateway``: its options, and the gateway's imports staying out of the core."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from slimtools.clearing import ClearingPolicy
from slimtools.cli import parser
from slimtools.cli.gateway import gateway_policy, listen_address, seconds


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
    """``slimtools.gateway`` and the CLI load starlette, uvicorn and httpx only to serve."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert set(json.loads(out.stdout)).isdisjoint({"starlette", "uvicorn", "httpx", "litellm"})


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
