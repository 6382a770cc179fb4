"""The protocol era the proxy speaks: the upstream's own.

A client of the current protocol (2026-07-28, the MCP SDK's default ``mode="auto"``) first
probes ``server/discover``; a handshake-era server refuses it and the client falls back to
the ``initialize`` handshake. Behind the proxy such a client would otherwise settle on the
current protocol with the proxy, which forbids server-to-client requests: the upstream's
sampling, elicitation and roots requests could not reach it, and ``logging/setLevel`` would
not exist. So when the upstream speaks the handshake era, the proxy refuses the probe as
the upstream does, and the client sees the protocol it would see directly.

The SDK decides a connection's era from the envelope of its first request, before any
handler runs; over stdio the envelope is taken off ``server/discover`` (so the handshake
era opens and the proxy's handler refuses it), over HTTP the probe is answered with
"Method not found" before it reaches the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import PROTOCOL_VERSION_META_KEY, JSONRPCRequest
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

__all__ = [
    "DISCOVER",
    "HandshakeOnly",
    "handshake_only",
    "mark_handshake_only",
    "refuse_discover",
    "refuse_probe",
    "speaks_current_protocol",
]

DISCOVER = "server/discover"
_MARK = "_slimtools_handshake_only"
_METHOD_NOT_FOUND = -32601


def speaks_current_protocol(client: Callable[[], Any]) -> bool:
    """Whether the upstream (``client()``, its live ``mcp.Client``) negotiated a current
    (2026-07-28 or later) protocol version."""
    try:
        version = client().protocol_version
    except Exception:  # restarting: its first connection answered the same way
        return False
    return version in MODERN_PROTOCOL_VERSIONS


async def refuse_probe(ctx: Any, params: Any) -> Any:
    """The ``server/discover`` handler of a handshake-era proxy: refused, as its upstream does."""
    raise MCPError(code=_METHOD_NOT_FOUND, message="Method not found")


def mark_handshake_only(server: Any) -> None:
    """Note on ``server`` that it speaks only the handshake era (its upstream's)."""
    setattr(server, _MARK, True)


def handshake_only(server: Any) -> bool:
    """Whether ``server`` speaks only the handshake era."""
    return bool(getattr(server, _MARK, False))


class HandshakeOnly:
    """A server's read stream whose ``server/discover`` requests lose the current
    protocol's envelope, so the SDK opens a handshake-era connection for them."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __aiter__(self) -> HandshakeOnly:
        return self

    async def __anext__(self) -> Any:
        return _plain(await self._stream.__anext__())

    async def receive(self) -> Any:
        """The next message, the probe's envelope taken off."""
        return _plain(await self._stream.receive())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _plain(item: Any) -> Any:
    if not isinstance(item, SessionMessage) or not isinstance(item.message, JSONRPCRequest):
        return item
    request = item.message
    meta = (request.params or {}).get("_meta")
    if request.method != DISCOVER or not isinstance(meta, dict):
        return item
    params = {
        **(request.params or {}),
        "_meta": {k: v for k, v in meta.items() if k != PROTOCOL_VERSION_META_KEY},
    }
    return SessionMessage(
        message=request.model_copy(update={"params": params}), metadata=item.metadata
    )


def refuse_discover(app: Any) -> Any:
    """An ASGI app that answers a ``server/discover`` POST with "Method not found" (as a
    handshake-era server does) and passes every other request to ``app``."""

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await app(scope, receive, send)
            return
        chunks: list[bytes] = []
        messages: list[dict[str, Any]] = []
        while True:
            message = await receive()
            messages.append(message)
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        request = _json(b"".join(chunks))
        if isinstance(request, dict) and request.get("method") == DISCOVER and "id" in request:
            error = {"code": _METHOD_NOT_FOUND, "message": "Method not found"}
            body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}).encode()
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        replay = iter(messages)

        async def replayed() -> dict[str, Any]:
            return next(replay, None) or await receive()

        await app(scope, replayed, send)

    return asgi


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None
