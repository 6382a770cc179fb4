"""The proxy served over stdio: the client started it, and MCP is all that goes to stdout."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slimtools.errors import ConfigurationError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["Stdio"]


@dataclass(frozen=True)
class Stdio:
    """Serve the client on this process's stdin and stdout."""

    @classmethod
    def from_address(cls, text: str | None) -> Stdio:
        """Stdio takes no address.

        Raises:
            ConfigurationError: an address was given.
        """
        if text:
            raise ConfigurationError(f"the stdio transport takes no address, got {text!r}")
        return cls()

    async def run(self, server: MCPServer[Any]) -> None:
        """Serve ``server`` until the client closes stdin (in the handshake era only, when
        the server is marked so: ``slimtools.proxy._era``)."""
        from mcp.server.stdio import stdio_server

        from slimtools.proxy._era import HandshakeOnly, handshake_only

        if not handshake_only(server):
            await server.run_stdio_async()
            return
        low = server._lowlevel_server
        async with stdio_server() as (read, write):
            await low.run(HandshakeOnly(read), write, low.create_initialization_options())
