"""The upstream kinds: one Protocol, one table, each row chosen for what gives it."""

from __future__ import annotations

import argparse

import pytest

from slimtools import ConfigurationError
from slimtools.cli import parser
from slimtools.cli.proxy import _upstream
from slimtools.proxy.install import proxied_entry
from slimtools.proxy.upstream import UpstreamSpec
from slimtools.proxy.upstreams import UPSTREAMS, StdioUpstream, StreamableHTTPUpstream, kind_of

EXAMPLES = {
    "stdio": ["--", "python", "server.py"],
    "http": ["--upstream-url", "https://mcp.example/mcp"],
}
"""One command line per row of the table, giving an upstream of that kind."""
ENTRIES = {
    "stdio": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]},
    "http": {"type": "http", "url": "https://mcp.example/mcp"},
}
"""One MCP client config entry per row, as ``slimtools proxy install`` finds them."""


def _spec(command: str, argv: list[str]) -> UpstreamSpec:
    spec: UpstreamSpec = _upstream(parser().parse_args([command, *argv]))
    return spec


def _options(command: str) -> set[str]:
    """The options of ``slimtools COMMAND`` that name an upstream (``--`` for the command)."""
    action = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    sub = action.choices[command]
    flags = {o for a in sub._actions for o in a.option_strings if o.startswith("--upstream")}
    return flags | {"--"}


@pytest.mark.parametrize("command", ["proxy", "suggest"])
def test_the_tables_rows_are_the_upstream_options_the_cli_accepts(command):
    """Every row's option is one the command takes, and every upstream option has a row."""
    assert sorted(EXAMPLES) == sorted(UPSTREAMS) == sorted(ENTRIES)
    assert {kind.option for kind in UPSTREAMS.values()} == _options(command)


def test_the_usage_error_names_every_row():
    """Neither kind given is refused with the message listing each row's way, in table order."""
    with pytest.raises(ConfigurationError) as error:
        UpstreamSpec()
    assert str(error.value) == (
        "give the upstream either as a command after -- or as --upstream-url URL"
    )
    assert all(kind.given_as in str(error.value) for kind in UPSTREAMS.values())


def test_two_kinds_at_once_are_refused_with_the_same_message():
    """A command and a URL together are ambiguous: the same usage error, never a guess."""
    with pytest.raises(ConfigurationError, match="either as a command after --"):
        UpstreamSpec(command=("server",), url="https://mcp.example/mcp")


def test_a_command_after_dashes_is_a_stdio_upstream():
    """``-- COMMAND ARGS`` is the stdio row, named by its executable alone."""
    spec = _spec("proxy", EXAMPLES["stdio"])
    assert isinstance(spec.kind, StdioUpstream)
    assert spec.kind is UPSTREAMS["stdio"]
    assert spec.describe() == "python"


def test_an_upstream_url_is_a_streamable_http_upstream():
    """``--upstream-url URL`` is the streamable HTTP row, named by its redacted URL."""
    spec = _spec("proxy", [*EXAMPLES["http"][:1], "https://mcp.example/mcp?token=abc123456789"])
    assert isinstance(spec.kind, StreamableHTTPUpstream)
    assert spec.kind is UPSTREAMS["http"]
    assert "abc123456789" not in spec.describe()


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_an_installed_client_entry_reaches_its_own_row(name):
    """``proxy install`` rewrites a client entry into a command line that picks its kind."""
    entry = proxied_entry(ENTRIES[name], None, ["slimtools"])
    assert entry is not None
    assert entry["args"][0] == "proxy"
    assert kind_of(_spec("proxy", entry["args"][1:])) is UPSTREAMS[name]


def test_suggest_from_proxy_picks_the_kind_as_the_proxy_does():
    """``suggest --from-proxy`` reads its upstream with the same table."""
    spec = _spec("suggest", ["--from-proxy", "t", *EXAMPLES["http"]])
    assert spec.kind is UPSTREAMS["http"]
