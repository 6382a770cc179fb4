"""The gateway as an ASGI app: clear what a model API request carries, forward everything.

``create_app(upstream, policy)`` returns a Starlette app. ``POST`` to a model route
(:data:`~slimtools.gateway._wire.ENDPOINTS`) goes through :func:`rewrite`; every other path
and method goes upstream unchanged. Responses, streamed or not, are relayed chunk by chunk
as they arrive, headers as the bytes that came, while the usage they bill is read on the
side. Headers are never logged (they carry the agent's API key). Forwarding is a plain
ASGI callable, not a Starlette endpoint: it watches for the client going away while it
waits on the upstream (to cancel that request), and answers every failure itself, with one
log line and ``Connection: close``: no input and no upstream fault reaches the server as an
exception (a 500, a traceback, a keep-alive connection dropped without notice).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import signal
import socket
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterator,
)
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

try:
    import aiohttp
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
    from starlette.types import Message, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - the message names the extra
    raise ImportError(
        "slimtools.gateway needs starlette, uvicorn and aiohttp: pip install 'slimtools[gateway]'"
    ) from exc

from slimtools.clearing import ClearingPolicy
from slimtools.clearing.pricing import pricing_of
from slimtools.gateway._asgi import ClientGoneError, read_body, watching
from slimtools.gateway._request import (
    LOOPBACK_NAMES,
    Limits,
    RefusedError,
    error_body,
    forwarded_headers,
    relayed_headers,
    stats_refusal,
    target_path,
)
from slimtools.gateway._rewrite import Outgoing, rewrite
from slimtools.gateway._state import MAX_BYTES, ConversationCache
from slimtools.gateway._tap import UsageTap
from slimtools.gateway._upstream import TIMEOUTS, Upstream, UpstreamError
from slimtools.gateway._wire import Endpoint, endpoint_of
from slimtools.gateway.stats import GatewayStats

__all__ = ["STATS_PATH", "Gateway", "Limits", "create_app", "gateway_of", "run"]

logger = logging.getLogger("slimtools.gateway")

STATS_PATH = "/slimtools/stats"
"""Where the gateway serves its figures (JSON); never forwarded."""


@dataclass
class Gateway:
    """What one gateway app holds: the upstream, the conversations and the figures."""

    upstream: Upstream
    cache: ConversationCache
    stats: GatewayStats
    clearing: bool = True
    stats_token: str = ""
    stats_hosts: frozenset[str] = frozenset()
    diagnostics: bool = False
    warned_doubled_v1: bool = False

    @property
    def limits(self) -> Limits:
        """The bounds in bytes and time."""
        return self.upstream.limits


def create_app(
    upstream: str,
    policy: ClearingPolicy | None = None,
    *,
    clear: bool = True,
    max_conversations: int = 1000,
    max_state_bytes: int = MAX_BYTES,
    limits: Limits | None = None,
    stats_token: str | None = None,
    stats_hosts: Collection[str] = (),
    cache_diagnostics: bool = False,
) -> Starlette:
    """The gateway app forwarding to ``upstream`` (``https://api.anthropic.com``).

    Args:
        upstream: the model API's base URL; request paths are appended to it.
        policy: the clearing policy (defaults to ``ClearingPolicy()``).
        clear: False makes a pass-through of the same stack (every request forwarded as
            it came, nothing read): the baseline to compare against.
        max_conversations: conversations kept in memory (least recently used go first).
        max_state_bytes: bytes they may hold together (see :class:`ConversationCache`).
        limits: the bounds in bytes and time (defaults to ``Limits()``).
        stats_token: the bearer token ``/slimtools/stats`` asks for (a random one per app
            when None: read it with ``gateway_of(app).stats_token``).
        stats_hosts: the ``Host`` names ``/slimtools/stats`` answers to besides the loopback
            ones (``localhost``, ``127.0.0.1``, ``::1``): a page on another site that
            rebinds its own name to this address is refused.
        cache_diagnostics: ask the provider, with each cleared request, to compare it with
            the conversation's previous response, and report the cache misses it measures
            (see :func:`~slimtools.gateway._rewrite.diagnostics_fields`).
    """
    policy = policy if policy is not None else ClearingPolicy()
    gateway = Gateway(
        Upstream(upstream, limits if limits is not None else Limits()),
        ConversationCache(policy, max_conversations=max_conversations, max_bytes=max_state_bytes),
        GatewayStats(pricing_of(policy.cache), max_conversations=max_conversations),
        clearing=clear,
        stats_token=stats_token or secrets.token_urlsafe(24),
        stats_hosts=frozenset(h.lower().strip("[]") for h in stats_hosts) | LOOPBACK_NAMES,
        diagnostics=cache_diagnostics,
    )

    routes = [Route(STATS_PATH, _stats_endpoint(gateway), methods=["GET"])]
    app = Starlette(routes=routes, lifespan=_lifespan(gateway))
    # Every other path and method is forwarded: the router's fallback, so that no path
    # (one with a newline, say) falls between the routes' patterns.
    app.router.default = _Forwarder(gateway)
    app.state.gateway = gateway
    return app


def _lifespan(gateway: Gateway) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """The app's lifespan: the upstream's connections close after it."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await gateway.upstream.close()

    return lifespan


def _stats_endpoint(gateway: Gateway) -> Callable[[Request], Awaitable[Response]]:
    """``GET /slimtools/stats``: the figures, to a loopback ``Host`` with the token."""

    async def stats(request: Request) -> Response:
        refused = stats_refusal(
            request.headers.get("host", ""),
            request.headers.get("authorization", ""),
            gateway.stats_token,
            gateway.stats_hosts,
        )
        if refused is None:
            return JSONResponse(gateway.stats.as_dict())
        logger.warning("slimtools gateway: GET %s %s", STATS_PATH, refused)
        challenge = {"www-authenticate": "Bearer"} if refused.status == 401 else None
        return Response(error_body(refused.status, refused.message), refused.status, challenge)

    return stats


@dataclass(frozen=True, slots=True)
class _Forwarder:
    """The ASGI callable forwarding every request that is not the gateway's own."""

    gateway: Gateway

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await _forward(self.gateway, scope, receive, send)


async def _forward(gateway: Gateway, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer one forwarded request; every failure becomes a response, never an exception."""
    started = False

    async def tracked(message: Message) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        path = _path(gateway, scope)
        raw = await read_body(scope, receive, gateway.limits.max_body)
        endpoint = endpoint_of(scope["method"], path) if gateway.clearing else None
        # Clearing runs on the event loop, not in a thread: the conversation cache is not
        # thread-safe, and a request costs its new messages only once the state is warm.
        outgoing = (
            None
            if endpoint is None
            else rewrite(
                raw, endpoint, gateway.cache, gateway.stats, diagnostics=gateway.diagnostics
            )
        )
        if outgoing is None:
            gateway.stats.forwarded += 1
        body = outgoing.body if outgoing else raw
        await watching(
            receive,
            _relay(
                gateway,
                scope,
                tracked,
                path=path,
                body=body,
                outgoing=outgoing,
                endpoint=endpoint,
            ),
        )
    except ClientGoneError:
        logger.info("slimtools gateway: the client went away; its upstream request is cancelled")
    except RefusedError as refused:
        logger.warning("slimtools gateway: %s %s", scope["method"], refused)
        if not started:
            await _error(send, refused.status, refused.message)
    except Exception as exc:  # a bug of ours: one line, no traceback to the client
        logger.error("slimtools gateway: internal error: %s: %s", type(exc).__name__, exc)
        logger.debug("slimtools gateway: internal error", exc_info=True)
        if not started:
            await _error(send, 500, "slimtools gateway: internal error")


def _path(gateway: Gateway, scope: Scope) -> str:
    """The path (and query) to send upstream, or a refusal."""
    raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
    path, doubled = target_path(
        raw_path, gateway.upstream.base_path, scope.get("query_string", b"")
    )
    if doubled and not gateway.warned_doubled_v1:
        gateway.warned_doubled_v1 = True
        logger.warning(
            "slimtools gateway: the upstream %s ends in /v1 and the client adds /v1 itself; "
            "sending one /v1 (give the client the gateway's address without /v1, or the "
            "gateway an upstream without it)",
            gateway.upstream.name,
        )
    return path


async def _relay(
    gateway: Gateway,
    scope: Scope,
    send: Send,
    *,
    path: str,
    body: bytes,
    outgoing: Outgoing | None,
    endpoint: Endpoint | None,
) -> None:
    """Send the request upstream and stream the answer back as it arrives."""
    # Model routes ask for identity encoding, so that the usage can be read on the way back;
    # should the upstream compress anyway, their answer is decoded. Elsewhere the bytes pass
    # still encoded, as they came.
    headers = _texts(forwarded_headers(scope["headers"], identity=endpoint is not None))
    method, upstream = scope["method"], gateway.upstream
    reads_usage = outgoing is not None and outgoing.stats is not None
    tap: UsageTap | None = None
    status = 0
    try:
        async with upstream.exchange(
            method, path, headers, body, decoded=endpoint is not None
        ) as answer:
            status = answer.status
            if reads_usage:
                tap = UsageTap(answer.headers.get("content-type", ""))
            raw = relayed_headers(
                answer.raw_headers, decoded=endpoint is not None, head=method == "HEAD"
            )
            await send({"type": "http.response.start", "status": status, "headers": raw})
            async for chunk in answer.content.iter_any():
                if tap is not None:
                    tap.feed(chunk)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    except UpstreamError as failed:
        logger.warning("slimtools gateway: %s", failed.message)
        await _error(send, failed.status, failed.message)
        return
    except (aiohttp.ClientError, *TIMEOUTS) as exc:
        # Mid-answer: the status is sent. Ending without the last chunk makes the server
        # close the connection, so the client sees a cut answer, not a whole one.
        _, message = upstream.failure(exc)
        logger.warning("slimtools gateway: the answer was cut: %s", message)
        status = 0
    finally:
        if tap is not None and outgoing is not None and outgoing.stats is not None:
            tap.settle(outgoing.stats, ok=0 < status < 400, cleared=outgoing.cleared > 0,
                       diagnostics=gateway.diagnostics)  # fmt: skip


def _texts(headers: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    """Header pairs as aiohttp sends them (it writes each value as UTF-8): a value that is
    not UTF-8 cannot pass unchanged, so it is dropped, with one warning."""
    out = []
    for key, value in headers:
        name, text = key.decode("latin-1"), _utf8(value)
        if text is None:
            logger.warning("slimtools gateway: header %s is not UTF-8; not forwarded", name[:100])
        else:
            out.append((name, text))
    return out


def _utf8(value: bytes) -> str | None:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return None


async def _error(send: Send, status: int, message: str) -> None:
    """Answer with the gateway's own error and close the connection after it."""
    body = error_body(status, message)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def run(
    app: Starlette,
    host: str,
    port: int,
    *,
    shutdown_timeout: float,
    announce: Callable[[], None] = lambda: None,
) -> int:
    """Serve ``app`` until SIGTERM or Ctrl-C; the exit status (0, or 1 when it could not
    listen: uvicorn has logged why).

    On a signal it stops accepting, lets requests in flight finish for at most
    ``shutdown_timeout`` seconds, then closes what is left, and returns 0. ``announce`` is
    called once it listens.
    """
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn raises the signal again once it has shut down, so the process would
            # die of it (143); a gateway that drained as asked exits 0 instead.
            handled = (signal.SIGINT, signal.SIGTERM)
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                announce()

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        # Typed int, but handed to asyncio.timeout, which takes fractions of a second.
        timeout_graceful_shutdown=shutdown_timeout,  # type: ignore[arg-type]
    )
    try:
        Server(config).run()
    except SystemExit as exc:  # uvicorn exits when it cannot bind (and says why)
        return 0 if exc.code in (0, None) else 1
    return 0


def gateway_of(app: Any) -> Gateway:
    """The :class:`Gateway` state of an app made by :func:`create_app`."""
    found = getattr(getattr(app, "state", None), "gateway", None)
    if not isinstance(found, Gateway):
        raise TypeError("not an app made by slimtools.gateway.create_app")
    return found
