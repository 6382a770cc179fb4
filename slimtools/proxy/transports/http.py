"""The proxy served over streamable HTTP, at ``HOST:PORT`` (``--http``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slimtools.errors import ConfigurationError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["StreamableHTTP"]


@dataclass(frozen=True)
class StreamableHTTP:
    """Serve streamable HTTP on ``host:port``."""

    host: str = "127.0.0.1"
    port: int = 8765

    @classmethod
    def from_address(cls, text: str | None) -> StreamableHTTP:
        """``HOST:PORT`` (an empty host is 127.0.0.1).

        Raises:
            ConfigurationError: ``text`` is not ``HOST:PORT``.
        """
        host, sep, port = (text or "").rpartition(":")
        if not sep or not port.isdigit():
            raise ConfigurationError(f"--http must be HOST:PORT, e.g. 127.0.0.1:8765, got {text!r}")
        if not 1 <= int(port) <= 65535:
            raise ConfigurationError(f"--http {text}: the port must be 1 to 65535")
        return cls(host or "127.0.0.1", int(port))

    async def run(self, server: MCPServer[Any]) -> None:
        """Serve ``server`` until the process is stopped.

        Raises:
            ConfigurationError: the address cannot be served (the port is taken, the host is
                not this machine's); uvicorn logged why on the line before.
        """
        from slimtools.proxy._era import handshake_only

        try:
            if handshake_only(server):
                await self._serve_handshake_only(server)
            else:
                await server.run_streamable_http_async(host=self.host, port=self.port)
        except SystemExit:  # uvicorn's startup failure, which it has just logged
            address = f"{self.host}:{self.port}"
            raise ConfigurationError(
                f"--http {address}: cannot serve there (the line above says why)"
            ) from None

    async def _serve_handshake_only(self, server: MCPServer[Any]) -> None:
        """``run_streamable_http_async``, its ``server/discover`` probes refused first."""
        import uvicorn

        from slimtools.proxy._era import refuse_discover

        app = server.streamable_http_app(host=self.host)
        config = uvicorn.Config(
            refuse_discover(app),
            host=self.host,
            port=self.port,
            log_level=server.settings.log_level.lower(),
        )
        await uvicorn.Server(config).serve()
