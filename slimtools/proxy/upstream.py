"""The upstream: the MCP server the proxy fronts, reached over stdio or streamable HTTP.

A stdio upstream is started with the proxy's whole environment (the SDK would otherwise pass
only ``HOME``, ``PATH`` and a few others), so tokens such as ``GITHUB_PERSONAL_ACCESS_TOKEN``
in a client config's ``env`` block reach it, as they did before the proxy was put in front;
on Linux it is started through ``slimtools.proxy._orphan``, so it dies with the proxy.

An upstream that cannot be started or reached raises ``UpstreamError`` with one line to
print. ``supervise`` keeps one connected while the proxy serves: a crashed upstream is
started again with bounded backoff (``slimtools.proxy.lifecycle``).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

try:
    import httpx2
    from mcp import Client, StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import CallToolResult, ServerCapabilities, Tool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.proxy needs the MCP SDK (mcp>=2): pip install 'slimtools[proxy]'"
    ) from exc

from slimtools.errors import ConfigurationError

__all__ = ["Upstream", "UpstreamError", "UpstreamSpec", "connect"]


class UpstreamError(Exception):
    """The upstream could not be started or reached; the message is one line to print."""


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
        if self.url is None:
            return " ".join(self.command)
        from slimtools.redaction import redact

        return redact(self.url)


class Upstream:
    """A connected upstream: its tools, its instructions, and calls counted."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.calls = 0
        # The SDK re-validates each result against the tool's output schema (jsonschema, on
        # every call). The proxy passes results on; its own client validates them against
        # the schema the proxy lists, and an upstream result that misses its own schema is
        # still the upstream's answer to forward, not an exception.
        client.session.validate_tool_result = _forwarded  # type: ignore[method-assign]

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

    @property
    def capabilities(self) -> ServerCapabilities:
        """What the upstream said it serves."""
        return self.client.server_capabilities

    async def call(
        self, name: str, arguments: dict[str, Any], *, progress: Any = None
    ) -> CallToolResult:
        """Call one upstream tool with the arguments as the model sent them.

        ``progress``: a callback for the upstream's progress notifications on this call.
        """
        self.calls += 1
        return await self.client.call_tool(name, arguments, progress_callback=progress)


async def _forwarded(name: str, result: CallToolResult) -> None:
    """Accept an upstream result as it came (see ``Upstream.__init__``)."""


@asynccontextmanager
async def connect(
    spec: UpstreamSpec, callbacks: Mapping[str, Any] | None = None
) -> AsyncIterator[Upstream]:
    """Start (or reach) the upstream and hold an MCP session to it while the block runs.

    ``callbacks``: ``mcp.Client`` callbacks answering the upstream's own requests
    (sampling, elicitation, roots) and notifications (``slimtools.proxy.forwarding``).

    Raises:
        UpstreamError: the upstream could not be started, reached or initialised.
    """
    entered = False
    try:
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(_client(spec, stack, callbacks or {}))
            entered = True
            yield Upstream(client)
    except Exception as exc:  # an ExceptionGroup from the SDK's task groups included
        if entered:
            raise
        raise UpstreamError(f"the upstream {spec.describe()!r} {_reason(spec, exc)}") from exc


def _client(spec: UpstreamSpec, stack: AsyncExitStack, callbacks: Mapping[str, Any]) -> Client:
    # No response cache: the proxy forwards each request, so the upstream answers it fresh.
    options: dict[str, Any] = {**callbacks, "cache": None}
    if spec.url:
        http = httpx2.AsyncClient(
            headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0)
        )
        stack.push_async_callback(http.aclose)
        return Client(streamable_http_client(spec.url, http_client=http), **options)
    program = shutil.which(spec.command[0], path=os.environ.get("PATH"))
    if program is None and not os.path.exists(spec.command[0]):
        raise FileNotFoundError(f"no such command: {spec.command[0]}")
    command = list(spec.command)
    if sys.platform.startswith("linux"):
        command = [sys.executable, "-m", "slimtools.proxy._orphan", str(os.getpid()), *command]
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=dict(os.environ), cwd=spec.cwd
    )
    return Client(params, **options)


def innermost(exc: BaseException) -> BaseException:
    """The first leaf of a (nested) exception group; ``exc`` itself when it is no group.

    Read by duck typing: ``BaseExceptionGroup`` is a builtin only from Python 3.11.
    """
    while isinstance(getattr(exc, "exceptions", None), tuple) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exc


def find_upstream_error(exc: BaseException) -> UpstreamError | None:
    """The ``UpstreamError`` that ``exc`` is or holds (in an exception group), if any."""
    if isinstance(exc, UpstreamError):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = find_upstream_error(inner)
        if found is not None:
            return found
    return None


def _reason(spec: UpstreamSpec, exc: BaseException) -> str:
    """Why connecting failed, in a few words: the innermost error of an exception group."""
    exc = innermost(exc)
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        return f"could not be started: {text}"
    if spec.url:
        return f"could not be reached: {text[:200]}"
    return f"exited before it answered (initialisation failed: {text[:200]})"
