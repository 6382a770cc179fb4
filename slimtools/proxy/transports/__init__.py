"""How the proxy's MCP server reaches its client: a :class:`Transport` per way, one table.

Each transport is a module here holding a class with ``from_address(text)`` (what follows
``--http`` and the like; ``None`` when the transport takes none) and ``async run(server)``;
``TRANSPORTS`` names them. Adding one is its module plus one row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from slimtools.errors import ConfigurationError
from slimtools.proxy.transports.http import StreamableHTTP
from slimtools.proxy.transports.stdio import Stdio

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["TRANSPORTS", "Stdio", "StreamableHTTP", "Transport", "transport"]


class Transport(Protocol):
    """Serves an MCP server to one client until the client goes away."""

    async def run(self, server: MCPServer[Any]) -> None:
        """Serve ``server`` (returns when the client leaves or the transport closes)."""


class TransportKind(Protocol):
    """A transport class: made from its address as the command line gives it."""

    def from_address(self, text: str | None) -> Transport:
        """The transport at ``text`` (``ConfigurationError`` naming the expected form)."""


TRANSPORTS: dict[str, TransportKind] = {"stdio": Stdio, "http": StreamableHTTP}
"""The served transports by name (``slimtools proxy`` serves ``stdio`` unless told)."""


def transport(name: str, address: str | None = None) -> Transport:
    """The transport called ``name`` at ``address``.

    Raises:
        ConfigurationError: an unknown transport, or an address it cannot take.
    """
    kind = TRANSPORTS.get(name)
    if kind is None:
        raise ConfigurationError(
            f"unknown transport {name!r}; transports: {', '.join(sorted(TRANSPORTS))}"
        )
    return kind.from_address(address)
