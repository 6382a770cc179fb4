"""``slimtools gateway``: clear the tool results of an agent you don't own, on the wire.

``slimtools gateway --upstream https://api.anthropic.com [--listen 127.0.0.1:8787]`` serves
the Anthropic Messages, Chat Completions and Responses routes, clears each request under
the policy options every command shares, and forwards everything else unchanged. Point the
agent at it (``ANTHROPIC_BASE_URL=http://127.0.0.1:8787``, ``OPENAI_BASE_URL=.../v1``);
``GET /slimtools/stats`` reports what it cleared and what the upstream billed, to a client
on a loopback name that sends the token the startup line gives (``$SLIMTOOLS_GATEWAY_TOKEN``
sets it).
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
import sys
from typing import Any

from slimtools.clearing import ClearingPolicy
from slimtools.cli._policy import add_policy_options, build_policy, count, describe, options_of
from slimtools.errors import ConfigurationError
from slimtools.redaction import redact

__all__ = ["add_commands"]

EXAMPLE = """\
example:
  slimtools gateway --upstream https://api.anthropic.com
  ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude
  slimtools gateway --upstream https://api.openai.com --cache openai --listen 127.0.0.1:9000
  OPENAI_BASE_URL=http://127.0.0.1:9000/v1 your-agent

exit status: 0 stopped by SIGTERM or Ctrl-C (after draining), 1 could not listen
(address in use, permission), 2 bad usage (or the extra is not installed)
"""


def add_commands(sub: Any) -> None:
    """Add ``gateway`` to the ``slimtools`` command's subparsers."""
    parser = sub.add_parser(
        "gateway",
        help="clear stale tool results between any agent and its model API",
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--upstream",
        required=True,
        type=upstream_url,
        metavar="URL",
        help="the model API's base URL",
    )
    parser.add_argument(
        "--listen",
        type=listen_address,
        default=("127.0.0.1", 8787),
        metavar="HOST:PORT",
        help="where to serve; [::1]:PORT for IPv6 (default: 127.0.0.1:8787); an address "
        "other than loopback is warned about: anyone who reaches it can use the upstream "
        "with their own key",
    )
    parser.add_argument(
        "--shutdown-timeout",
        type=seconds,
        default=10.0,
        metavar="S",
        help="on SIGTERM or Ctrl-C, seconds requests in flight may take to finish before "
        "they are closed (default: 10)",
    )
    parser.add_argument(
        "--max-conversations",
        type=count(1),
        default=1000,
        metavar="N",
        help="conversations kept in memory, least recently used dropped first (default: 1000)",
    )
    parser.add_argument(
        "--max-state-mb",
        type=count(1),
        default=256,
        metavar="MB",
        help="memory the conversations may hold together, in MiB, least recently used "
        "dropped first (default: 256)",
    )
    parser.add_argument(
        "--cache-diagnostics",
        action="store_true",
        help="ask the provider to compare each request with the conversation's previous "
        "response (Anthropic diagnostics.previous_message_id, OpenAI Responses "
        "prompt_cache_options.comparison_response_id) and report the cache misses it "
        "measures in the stats, beside the modelled cost",
    )
    _add_limit_options(parser)
    add_policy_options(parser)
    parser.set_defaults(run=run_gateway_command)


def _add_limit_options(parser: argparse.ArgumentParser) -> None:
    """The options bounding the gateway in bytes and time."""
    limits = parser.add_argument_group("limits")
    limits.add_argument(
        "--max-body",
        type=count(1),
        default=32,
        metavar="MB",
        help="largest request body accepted, in MiB; larger ones get 413 (default: 32, "
        "the model APIs' own limit)",
    )
    limits.add_argument(
        "--connect-timeout",
        type=seconds,
        default=10.0,
        metavar="S",
        help="seconds to open an upstream connection, or to wait for a free one (default: 10)",
    )
    limits.add_argument(
        "--read-timeout",
        type=seconds,
        default=600.0,
        metavar="S",
        help="seconds the upstream may stay silent before the request gets 504 "
        "(default: 600, as the SDKs wait)",
    )
    limits.add_argument(
        "--max-upstream-connections",
        type=count(1),
        default=100,
        metavar="N",
        help="upstream connections open at once; past it a request waits --connect-timeout, "
        "then gets 503 'pool exhausted' (default: 100)",
    )


def upstream_url(text: str) -> str:
    """An argparse type: an ``http://`` or ``https://`` URL with a host."""
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest.split("/", 1)[0]:
        raise argparse.ArgumentTypeError(f"expected an http:// or https:// URL, got {text!r}")
    return text


def listen_address(text: str) -> tuple[str, int]:
    """An argparse type: ``HOST:PORT`` or ``[IPV6]:PORT`` (the host without brackets)."""
    host, sep, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise argparse.ArgumentTypeError(f"write an IPv6 address in brackets: [{host}]:{port}")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach ``host`` (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_of(host: str, port: int) -> str:
    """The base URL of a listen address."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def seconds(text: str) -> float:
    """An argparse type: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def gateway_limits(args: argparse.Namespace) -> Any:
    """The :class:`~slimtools.gateway.Limits` the options name."""
    from slimtools.gateway import Limits

    return Limits(
        max_body=args.max_body * 1024 * 1024,
        connect_timeout=args.connect_timeout,
        read_timeout=args.read_timeout,
        max_connections=args.max_upstream_connections,
    )


def gateway_policy(args: argparse.Namespace) -> ClearingPolicy | None:
    """The policy the options name (None for ``none``: a pass-through, for comparisons)."""
    return build_policy(args.policy, cache=args.cache, **options_of(args))


def run_gateway_command(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    try:
        from slimtools.gateway.app import create_app, run
    except ImportError as exc:
        raise ConfigurationError(
            f"{exc}; install the extra: pip install 'slimtools[gateway]'"
        ) from None
    policy = gateway_policy(args)
    host, port = args.listen
    token = os.environ.get("SLIMTOOLS_GATEWAY_TOKEN") or secrets.token_urlsafe(24)
    app = create_app(
        args.upstream,
        policy,
        clear=policy is not None,
        max_conversations=args.max_conversations,
        max_state_bytes=args.max_state_mb * 1024 * 1024,
        limits=gateway_limits(args),
        stats_token=token,
        stats_hosts=[host],
        cache_diagnostics=args.cache_diagnostics,
    )
    if not is_loopback(host):
        print(
            f"slimtools gateway: warning: listening on {host}, not a loopback address: "
            "anyone who can reach it can send requests upstream with their own key",
            file=sys.stderr,
        )
    shown = "$SLIMTOOLS_GATEWAY_TOKEN" if os.environ.get("SLIMTOOLS_GATEWAY_TOKEN") else token
    where = url_of(host, port)
    named = describe(args.policy, args) if policy is not None else "none (pass-through)"

    def announce() -> None:
        print(
            f"slimtools gateway: listening on {where}, forwarding to {redact(args.upstream)}, "
            f"policy {named}; stats: curl -H 'Authorization: Bearer {shown}' "
            f"{where}/slimtools/stats",
            file=sys.stderr,
            flush=True,
        )

    return run(app, host, port, shutdown_timeout=args.shutdown_timeout, announce=announce)
