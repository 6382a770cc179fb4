"""Helpers for the proxy tests: an in-process proxy over the recorded GitHub upstream.

``proxied(config)`` builds the proxy over ``tests.proxy.proxy_upstream``'s tools, answering each
upstream call in process (and recording it), and connects a real ``mcp.Client`` to the
proxy's server: everything but the two processes is the real thing, quickly.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from mcp import Client
from mcp.types import CallToolResult

from slimtools.proxy.config import parse_config
from slimtools.proxy.server import build_proxy, proxy_server
from tests._shared import shared_data
from tests.proxy import proxy_upstream

CONFIG = """
max_tokens = 8000

[tools.list_issues]
fields = ["number", "title:80", "state", "author = user.login", "labels.name", "comments",
          "created_at"]
deny = ["user.email", "node_id"]
key = "number"
limit = 5
category = "search"

[tools."search_*"]
items = "items"
fields = ["id", "full_name", "description:100", "stargazers_count", "language"]
key = "id"
limit = 5
"""


@dataclass
class Upstream:
    """The in-process upstream: the recorded answers, and every call made to it."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        self.calls.append((name, dict(arguments)))
        return proxy_upstream.answer(name, arguments)

    def count(self, name: str) -> int:
        return sum(1 for called, _ in self.calls if called == name)


def use_shared_payloads() -> None:
    """Point the recorded upstream at ../shared/data/payloads (skips where absent)."""
    proxy_upstream.PAYLOADS = shared_data() / "payloads"


@asynccontextmanager
async def proxied(config: str = CONFIG) -> AsyncIterator[tuple[Client, Upstream]]:
    """A client connected to a proxy (configured by ``config``) over the recorded upstream."""
    use_shared_payloads()
    parsed = parse_config(config, "slim.toml")
    upstream = Upstream()
    proxy = build_proxy(parsed, proxy_upstream.TOOLS, upstream.call, instructions="Recorded.")
    async with Client(proxy_server(proxy, parsed)) as client:
        yield client, upstream


def text_of(result: Any) -> str:
    """The text the model reads of a call result."""
    return "\n".join(block.text for block in result.content if block.type == "text")


def envelope(result: Any) -> dict[str, Any]:
    """The envelope of a successful slimmed call, checked equal on both channels."""
    assert not result.is_error, text_of(result)
    parsed: dict[str, Any] = json.loads(text_of(result))
    assert result.structured_content == parsed
    return parsed
