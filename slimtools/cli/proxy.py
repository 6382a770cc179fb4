"""``slimtools proxy``, ``slimtools proxy install`` and ``slimtools suggest``.

``slimtools proxy [--config slim.toml] -- COMMAND [ARGS...]`` fronts a stdio MCP server;
``--upstream-url URL`` fronts a streamable HTTP one; ``--http HOST:PORT`` serves over
streamable HTTP instead of stdio; ``--dry-run TOOL --args JSON`` calls one tool and prints
raw against slimmed tokens. Over stdio nothing but MCP goes to stdout: messages go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from typing import Any

from slimtools.errors import ConfigurationError
from slimtools.proxy.config import load_config

__all__ = ["add_commands"]

PROXY_EXAMPLE = """\
example:
  slimtools proxy --config slim.toml -- npx -y @modelcontextprotocol/server-github
  slimtools proxy --config slim.toml --dry-run list_issues --args '{"repo": "o/r"}' -- CMD
  slimtools proxy install --config ~/slim.toml   # route your MCP clients through the proxy

exit status: 0 served until the client left (or --dry-run printed), 2 bad usage or config,
  3 the upstream could not be started or reached
"""
SUGGEST_EXAMPLE = """\
example:
  slimtools suggest 145.json --tool list_issues
  slimtools suggest --from-proxy list_issues --args '{"repo": "o/r"}' -- CMD

exit status: 0 printed, 1 a sample file could not be read, 2 bad usage,
  3 the upstream could not be started or reached
"""


def add_commands(sub: Any) -> None:
    """Add ``proxy`` and ``suggest`` to the ``slimtools`` command's subparsers."""
    proxy = sub.add_parser(
        "proxy",
        help="slim the results of an MCP server you don't own (proxy install: set it up)",
        description=__doc__,
        epilog=PROXY_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _proxy_arguments(proxy)
    proxy.set_defaults(run=run_proxy_command)
    suggest = sub.add_parser(
        "suggest",
        help="propose a proxy config block or Brief model from sample results",
        description="Propose a [tools.NAME] block for the proxy config (or a Pydantic Brief "
        "model) from sample results, with the token ratio it achieves on them.",
        epilog=SUGGEST_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _suggest_arguments(suggest)
    suggest.set_defaults(run=run_suggest_command)


def _proxy_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="the TOML config (default: none)")
    _upstream_arguments(parser)
    parser.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP, not stdio")
    parser.add_argument("--dry-run", metavar="TOOL", help="call TOOL once and compare tokens")
    parser.add_argument("--args", metavar="JSON", default="{}", help="arguments for --dry-run")
    parser.add_argument(
        "--call-timeout",
        metavar="SECONDS",
        type=_seconds,
        help="seconds an upstream call may take before the client gets an error "
        "(over the config's call_timeout; default 60, 0: unbounded)",
    )
    parser.add_argument(
        "--verbose", action="store_true", help="log tool failures with their tracebacks"
    )
    parser.add_argument("upstream", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")


def _seconds(text: str) -> float:
    """A ``--call-timeout`` value: a finite number of seconds, not negative."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds (0: unbounded), got {text!r}"
        )
    return value


def _upstream_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--upstream-url", metavar="URL", help="a streamable HTTP upstream")
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an HTTP header for --upstream-url (repeatable)",
    )


def _suggest_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "samples",
        nargs="*",
        metavar="FILE",
        help="sample results (JSON); with --from-proxy: -- COMMAND [ARGS...] of the upstream",
    )
    parser.add_argument("--tool", default=None, help="the tool name the block is for")
    parser.add_argument("--format", choices=("toml", "model"), default="toml")
    parser.add_argument("--from-proxy", metavar="TOOL", help="call TOOL upstream for a sample")
    parser.add_argument("--args", metavar="JSON", default="{}", help="arguments for --from-proxy")
    _upstream_arguments(parser)


def _command(args: argparse.Namespace) -> list[str]:
    # (``args.command`` is taken: it is the subcommand's name.)
    given = args.upstream if hasattr(args, "upstream") else args.samples
    command = list(given or [])
    if command and command[0] == "--":
        command = command[1:]
    return command


def _upstream(args: argparse.Namespace) -> Any:
    from slimtools.proxy.upstream import UpstreamSpec

    headers = _env_headers()
    for header in args.header:
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            raise ConfigurationError(f"--header must be 'NAME: VALUE', got {header!r}")
        headers[name.strip()] = value.strip()
    command = _command(args)
    url = args.upstream_url or (None if command else _env_url())
    return UpstreamSpec(command=command, url=url, headers=headers)


def _env_url() -> str | None:
    """The upstream URL from ``$SLIMTOOLS_UPSTREAM_URL`` (``proxy install`` puts a URL that
    holds a secret there, off argv)."""
    import os

    from slimtools.proxy.install import URL_ENV

    return os.environ.get(URL_ENV) or None


def _env_headers() -> dict[str, str]:
    """Headers from ``$SLIMTOOLS_UPSTREAM_HEADERS`` (a JSON object): secrets kept off argv."""
    import os

    from slimtools.proxy.install import HEADERS_ENV

    text = os.environ.get(HEADERS_ENV)
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"${HEADERS_ENV} must be a JSON object: {exc}") from exc
    if not isinstance(value, dict):
        raise ConfigurationError(f"${HEADERS_ENV} must be a JSON object of header: value")
    return {str(k): str(v) for k, v in value.items()}


def _json_args(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"--args must be a JSON object: {exc}") from exc
    if not isinstance(value, dict):
        raise ConfigurationError(f"--args must be a JSON object, got {text!r}")
    return value


def run_proxy_command(args: argparse.Namespace) -> int:
    """Run ``slimtools proxy`` (or ``slimtools proxy install ...``)."""
    command = list(args.upstream)
    if command and command[0] == "install":
        from slimtools.proxy.install import main as install_main

        return install_main(command[1:])
    from slimtools.proxy.logs import configure_logging
    from slimtools.proxy.serving import dry_run, serve
    from slimtools.proxy.transports import transport
    from slimtools.proxy.upstream import UpstreamError, find_upstream_error, innermost

    configure_logging(verbose=args.verbose)
    try:
        config = load_config(args.config)
        if args.call_timeout is not None:
            config = dataclasses.replace(config, call_timeout=args.call_timeout or None)
        spec = _upstream(args)
        if args.dry_run:
            report = asyncio.run(dry_run(config, spec, args.dry_run, _json_args(args.args)))
            if report.startswith("slimtools proxy:"):
                print(report, file=sys.stderr)
                return 2
            print(report)
            return 0
        served = transport("http", args.http) if args.http else transport("stdio")
    except ConfigurationError as exc:
        print(f"slimtools proxy: {exc}", file=sys.stderr)
        return 2
    except UpstreamError as exc:
        print(f"slimtools proxy: {exc}", file=sys.stderr)
        return 3
    try:
        return asyncio.run(serve(config, spec, served))
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # an UpstreamError inside the supervisor's task group
        failed = find_upstream_error(exc)
        if failed is None:
            if isinstance(innermost(exc), ConfigurationError):  # --http cannot serve there
                print(f"slimtools proxy: {innermost(exc)}", file=sys.stderr)
                return 2
            raise
        print(f"slimtools proxy: {failed}", file=sys.stderr)
        return 3


def run_suggest_command(args: argparse.Namespace) -> int:
    """Run ``slimtools suggest``."""
    from slimtools.proxy.suggest import load_samples, render, suggest
    from slimtools.proxy.upstream import UpstreamError

    try:
        samples = [] if args.from_proxy else load_samples(args.samples)
    except ConfigurationError as exc:  # a sample file that cannot be read
        print(f"slimtools suggest: {exc}", file=sys.stderr)
        return 1
    try:
        tool = args.tool
        if args.from_proxy:
            try:
                samples.append(asyncio.run(_sample_from_proxy(args)))
            except UpstreamError as exc:
                print(f"slimtools suggest: {exc}", file=sys.stderr)
                return 3
            tool = tool or args.from_proxy
        if not samples:
            raise ConfigurationError("give sample files, or --from-proxy TOOL -- COMMAND")
        print(render(suggest(samples, tool=tool or "TOOL"), fmt=args.format))
    except ConfigurationError as exc:
        print(f"slimtools suggest: {exc}", file=sys.stderr)
        return 2
    return 0


async def _sample_from_proxy(args: argparse.Namespace) -> Any:
    from slimtools.foreign import extract
    from slimtools.proxy.server import raw_of
    from slimtools.proxy.upstream import connect

    async with connect(_upstream(args)) as upstream:
        raw = raw_of(await upstream.call(args.from_proxy, _json_args(args.args)))
    if raw.is_error or raw.opaque:
        raise ConfigurationError(f"{args.from_proxy} returned an error or non-text result")
    return extract(raw.texts, raw.structured)
