"""The upstream: the MCP server the proxy fronts, reached in one of the ways of
``slimtools.proxy.upstreams`` (a command over stdio, a streamable HTTP URL).

An upstream that cannot be started or reached raises ``UpstreamError`` with one line to
print. ``supervise`` keeps one connected while the proxy serves: a crashed upstream is
started again with bounded backoff (``slimtools.proxy.lifecycle``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

try:
    from mcp import Client
    from mcp.types import CallToolResult, ServerCapabilities, Tool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.proxy needs the MCP SDK (mcp>=2): pip install 'slimtools[proxy]'"
    ) from exc

from slimtools.proxy.upstreams import UpstreamKind, kind_of

__all__ = ["Upstream", "UpstreamError", "UpstreamSpec", "connect"]


class UpstreamError(Exception):
    """The upstream could not be started or reached; the message is one line to print."""


_MAX_LIST_PAGES = 100


@dataclass(frozen=True)
class UpstreamSpec:
    """Where the upstream is: a command to start (stdio) or a URL (streamable HTTP).

    Exactly one kind of ``slimtools.proxy.upstreams.UPSTREAMS`` must recognise it
    (``ConfigurationError`` otherwise).
    """

    command: Sequence[str] = ()
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None

    def __post_init__(self) -> None:
        kind_of(self)

    @property
    def kind(self) -> UpstreamKind:
        """The way this upstream is reached (its row of ``UPSTREAMS``)."""
        return kind_of(self)

    def describe(self) -> str:
        """The upstream as a person would name it (for messages)."""
        return self.kind.describe(self)


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
    return spec.kind.client(spec, stack, {**callbacks, "cache": None})


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
    return spec.kind.failed(text)
