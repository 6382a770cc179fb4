"""The upstream: the MCP server the proxy fronts, reached over stdio or streamable HTTP.

A stdio upstream is started with the proxy's whole environment (the SDK would otherwise pass
only ``HOME``, ``PATH`` and a few others), so tokens such as ``GITHUB_PERSONAL_ACCESS_TOKEN``
in a client config's ``env`` block reach it, as they did before the proxy was put in front.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

try:
    import httpx2
    from mcp import Client, StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import CallToolResult, Tool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.proxy needs the MCP SDK (mcp>=2): pip install 'slimtools[proxy]'"
    ) from exc

from slimtools.errors import ConfigurationError

__all__ = ["Upstream", "UpstreamSpec", "connect"]

_MAX_LIST_PAGES = 100


@dataclass(frozen=True)
class UpstreamSpec:
    """Where the upstream is: a command to start (stdio) or a URL (streamable HTTP)."""

    command: Sequence[str] = ()
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None

    def __post_init__(self) -> None:
        if bool(self.command) == bool(self.url):
            raise ConfigurationError(
                "give the upstream either as a command after -- or as --upstream-url URL"
            )

    def describe(self) -> str:
        """The upstream as a person would name it (for messages)."""
        return self.url or " ".join(self.command)


class Upstream:
    """A connected upstream: its tools, its instructions, and calls counted."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.calls = 0

    @property
    def instructions(self) -> str | None:
        """The upstream server's own instructions, if it gave any."""
        return self.client.instructions

    @property
    def name(self) -> str | None:
        """The upstream server's name, if it gave one."""
        info = self.client.server_info
        return info.name if info is not None else None

    async def tools(self) -> list[Tool]:
        """Every tool the upstream lists, following its pages."""
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_LIST_PAGES):
            page = await self.client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call one upstream tool with the arguments as the model sent them."""
        self.calls += 1
        return await self.client.call_tool(name, arguments)


@asynccontextmanager
async def connect(spec: UpstreamSpec) -> AsyncIterator[Upstream]:
    """Start (or reach) the upstream and hold an MCP session to it while the block runs."""
    if spec.url:
        http = httpx2.AsyncClient(
            headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0)
        )
        async with http, Client(streamable_http_client(spec.url, http_client=http)) as client:
            yield Upstream(client)
        return
    params = StdioServerParameters(
        command=spec.command[0], args=list(spec.command[1:]), env=dict(os.environ), cwd=spec.cwd
    )
    async with Client(params) as client:
        yield Upstream(client)
