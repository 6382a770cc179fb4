"""The gateway as an ASGI app: clear what a model API request carries, forward everything.

``create_app(upstream, policy)`` returns a Starlette app. ``POST`` to a model route
(:data:`~slimtools.gateway._wire.ENDPOINTS`) goes through :func:`rewrite`; every other path
and method goes upstream unchanged. Responses, streamed or not, are relayed chunk by chunk
as they arrive, headers included (as the bytes that came), while the usage they bill is
read on the side. Headers are never logged (they carry the agent's API key).

The forwarding route is a plain ASGI callable rather than a Starlette endpoint: it must
watch for the client going away while it waits on the upstream (to cancel that request),
and answer every failure itself, with one log line and ``Connection: close``, so that no
input and no upstream fault ever reaches the server as an exception (a 500, a traceback,
a keep-alive connection dropped without notice).
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import logging
import secrets
import signal
import socket
import ssl
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterator,
    MutableMapping,
)
from dataclasses import dataclass, field
from typing import Any

try:
    import anyio
    import httpx
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - the message names the extra
    raise ImportError(
        "slimtools.gateway needs starlette, uvicorn and httpx: pip install 'slimtools[gateway]'"
    ) from exc

from slimtools.clearing import ClearingPolicy
from slimtools.clearing.pricing import pricing_of
from slimtools.gateway._request import (
    MAX_PATH_BYTES,
    RefusedError,
    forwarded_headers,
    target_path,
)
from slimtools.gateway._rewrite import Outgoing, rewrite
from slimtools.gateway._state import MAX_BYTES, ConversationCache
from slimtools.gateway._tap import UsageTap
from slimtools.gateway._wire import ENDPOINTS, Endpoint
from slimtools.gateway.stats import GatewayStats

logger = logging.getLogger("slimtools.gateway")

STATS_PATH = "/slimtools/stats"
"""Where the gateway serves its figures (JSON); never forwarded."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_RESPONSE_DROP = frozenset(
    {b"content-length", b"connection", b"keep-alive", b"transfer-encoding", b"content-encoding"}
)


@dataclass(frozen=True, slots=True)
class Limits:
    """What bounds one gateway in bytes and time (each a ``slimtools gateway`` option).

    Attributes:
        max_body: the largest request body accepted, in bytes (larger: 413). Anthropic and
            OpenAI refuse bodies past 32 MB themselves.
        connect_timeout: seconds to open an upstream connection, and to wait for a free one
            when all ``max_connections`` are busy.
        read_timeout: seconds the upstream may stay silent (before its answer's first byte
            or between two chunks) before the request is given up with a 504. A model may
            think for minutes before it answers a request that is not streamed; the SDKs
            wait 600 s for it.
        max_connections: upstream connections open at once; a request past it waits
            ``connect_timeout`` for one, then gets 503 "pool exhausted".
    """

    max_body: int = 32 * 1024 * 1024
    connect_timeout: float = 10.0
    read_timeout: float = 600.0
    max_connections: int = 100


@dataclass
class Gateway:
    """What one gateway app holds: the upstream, the conversations and the figures."""

    upstream: str
    cache: ConversationCache
    stats: GatewayStats
    clearing: bool = True
    limits: Limits = field(default_factory=Limits)
    stats_token: str = ""
    stats_hosts: frozenset[str] = frozenset()
    diagnostics: bool = False
    client: httpx.AsyncClient | None = None
    warned_doubled_v1: bool = False

    def http(self) -> httpx.AsyncClient:
        """The upstream client (made on first use when the app runs without its lifespan)."""
        if self.client is None:
            self.client = _client(self.limits)
        return self.client

    @functools.cached_property
    def base_path(self) -> str:
        """The path of the upstream's base URL (``/base/v1`` of ``http://host/base/v1``)."""
        return httpx.URL(self.upstream).path.rstrip("/")


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
        upstream.rstrip("/"),
        ConversationCache(policy, max_conversations=max_conversations, max_bytes=max_state_bytes),
        GatewayStats(pricing_of(policy.cache), max_conversations=max_conversations),
        clearing=clear,
        limits=limits if limits is not None else Limits(),
        stats_token=stats_token or secrets.token_urlsafe(24),
        stats_hosts=frozenset(h.lower().strip("[]") for h in stats_hosts) | _LOOPBACK_NAMES,
        diagnostics=cache_diagnostics,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        gateway.client = _client(gateway.limits)
        try:
            yield
        finally:
            await gateway.client.aclose()

    async def stats(request: Request) -> Response:
        refused = _stats_refusal(gateway, request)
        if refused is not None:
            logger.warning("slimtools gateway: GET %s %s", STATS_PATH, refused)
            return JSONResponse(
                {
                    "type": "error",
                    "error": {"type": _KIND[refused.status], "message": refused.message},
                },
                status_code=refused.status,
                headers={"www-authenticate": "Bearer"} if refused.status == 401 else None,
            )
        return JSONResponse(gateway.stats.as_dict())

    app = Starlette(routes=[Route(STATS_PATH, stats, methods=["GET"])], lifespan=lifespan)
    # Every other path and method is forwarded: the router's fallback, so that no path
    # (one with a newline, say) falls between the routes' patterns.
    app.router.default = _Forwarder(gateway)
    app.state.gateway = gateway
    return app


@dataclass(frozen=True, slots=True)
class _Forwarder:
    """The ASGI callable forwarding every request that is not the gateway's own."""

    gateway: Gateway

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await _forward(self.gateway, scope, receive, send)


_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_KIND = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error"}


def _stats_refusal(gateway: Gateway, request: Request) -> RefusedError | None:
    """Why ``/slimtools/stats`` is refused to this request (None: it is not)."""
    host = request.headers.get("host", "")
    name = host.rpartition("]")[0].lstrip("[") if host.startswith("[") else host.partition(":")[0]
    if name.lower() not in gateway.stats_hosts:
        return RefusedError(403, f"Host {host[:100]!r} is not one the stats answer to")
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        token.strip().encode(), gateway.stats_token.encode()
    ):
        return RefusedError(401, "the stats need the gateway's token: Authorization: Bearer …")
    return None


def _client(limits: Limits) -> httpx.AsyncClient:
    timeout = httpx.Timeout(
        connect=limits.connect_timeout,
        read=limits.read_timeout,
        write=limits.read_timeout,
        pool=limits.connect_timeout,
    )
    pool = httpx.Limits(
        max_connections=limits.max_connections, max_keepalive_connections=limits.max_connections
    )
    return httpx.AsyncClient(timeout=timeout, limits=pool, follow_redirects=False)


class _ClientGoneError(Exception):
    """The client closed its connection before its request was answered."""


async def _forward(gateway: Gateway, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer one forwarded request; every failure becomes a response, never an exception."""
    started = False

    async def tracked(message: Message) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        path = _path(gateway, scope)
        raw = await _read_body(scope, receive, gateway.limits.max_body)
        endpoint = _endpoint_of(scope["method"], path) if gateway.clearing else None
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
        await _watching(
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
    except _ClientGoneError:
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
    path, doubled = target_path(raw_path, gateway.base_path)
    if doubled and not gateway.warned_doubled_v1:
        gateway.warned_doubled_v1 = True
        logger.warning(
            "slimtools gateway: the upstream %s ends in /v1 and the client adds /v1 itself; "
            "sending one /v1 (give the client the gateway's address without /v1, or the "
            "gateway an upstream without it)",
            gateway.upstream,
        )
    query: bytes = scope.get("query_string", b"")
    if len(query) > MAX_PATH_BYTES:
        raise RefusedError(414, f"the query is longer than {MAX_PATH_BYTES} bytes")
    if query:
        try:
            path += "?" + query.decode("ascii")
        except UnicodeDecodeError:
            raise RefusedError(400, "the query is not percent-encoded") from None
    return path


async def _read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The whole request body, refused with 413 as soon as it passes ``limit`` bytes."""
    for key, value in scope["headers"]:
        if key == b"content-length":
            if not value.isdigit():
                raise RefusedError(400, "content-length is not a number")
            if int(value) > limit:
                raise RefusedError(413, f"the body is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _ClientGoneError
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise RefusedError(413, f"the body is larger than {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _watching(receive: Receive, work: Awaitable[None]) -> None:
    """Run ``work`` until done or the client goes away, whichever comes first (then the
    upstream request is cancelled: its connection closes, and the upstream stops)."""
    gone = False
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            group.cancel_scope.cancel()

        group.start_soon(watch)
        await work
        group.cancel_scope.cancel()
    if gone:
        raise _ClientGoneError


def _endpoint_of(method: str, path: str) -> Endpoint | None:
    if method != "POST":
        return None
    path = path.partition("?")[0].rstrip("/")
    return next((e for e in ENDPOINTS if path.endswith(e.path)), None)


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
    # Model routes ask for identity encoding, so that the usage can be read on the way back.
    headers = forwarded_headers(scope["headers"], identity=endpoint is not None)
    client = gateway.http()
    method = scope["method"]
    try:
        request = client.build_request(method, gateway.upstream + path, headers=headers)
        request.stream = httpx.ByteStream(body)
        if body or method in ("POST", "PUT", "PATCH"):
            request.headers["content-length"] = str(len(body))
        answer = await client.send(request, stream=True)
    except httpx.InvalidURL as exc:
        raise RefusedError(400, f"the path cannot be forwarded: {exc}") from None
    except httpx.HTTPError as exc:
        status, message = upstream_failure(exc, gateway.upstream, gateway.limits)
        logger.warning("slimtools gateway: %s", message)
        await _error(send, status, message)
        return
    tap = UsageTap(answer.headers.get("content-type", "")) if outgoing and outgoing.stats else None
    # Model routes asked for identity; elsewhere the bytes pass still encoded, as they came.
    stream = answer.aiter_raw() if endpoint is None else answer.aiter_bytes()
    drop = _RESPONSE_DROP if endpoint is not None else _RESPONSE_DROP - {b"content-encoding"}
    if method == "HEAD":  # no body follows: the length the upstream gave is the answer
        drop = drop - {b"content-length"}
    complete = False
    try:
        raw_headers = [(k.lower(), v) for k, v in answer.headers.raw if k.lower() not in drop]
        await send(
            {"type": "http.response.start", "status": answer.status_code, "headers": raw_headers}
        )
        async for chunk in stream:
            if tap is not None:
                tap.feed(chunk)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        complete = True
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except httpx.HTTPError as exc:
        # Mid-answer: the status is sent. Ending without the last chunk makes the server
        # close the connection, so the client sees a cut answer, not a whole one.
        _, message = upstream_failure(exc, gateway.upstream, gateway.limits)
        logger.warning("slimtools gateway: the answer was cut: %s", message)
    finally:
        with anyio.CancelScope(shield=True):
            await answer.aclose()
        if tap is not None and outgoing is not None and outgoing.stats is not None:
            usage = tap.close()
            if complete and usage is not None and answer.status_code < 400:
                outgoing.stats.billed.add(usage)
            if complete and answer.status_code < 400:
                outgoing.stats.diagnosed(tap.diagnosis, cleared=outgoing.cleared > 0)


def upstream_failure(exc: httpx.HTTPError, upstream: str, limits: Limits) -> tuple[int, str]:
    """The status and one-line message for a failed upstream exchange, naming the cause."""
    if isinstance(exc, httpx.PoolTimeout):
        return 503, (
            f"pool exhausted: all {limits.max_connections} upstream connections stayed busy "
            f"for {limits.connect_timeout:g} s (raise --max-upstream-connections)"
        )
    if isinstance(exc, httpx.ConnectTimeout):
        return (
            504,
            f"upstream unreachable: {upstream}: no connection within {limits.connect_timeout:g} s",
        )
    if isinstance(exc, httpx.TimeoutException):
        return 504, f"upstream timed out: {upstream}: silent for {limits.read_timeout:g} s"
    root = _root_cause(exc)
    detail = str(root) or type(root).__name__
    if isinstance(exc, httpx.ConnectError):
        return 502, f"upstream unreachable: {upstream}: {_connect_cause(root)} ({detail})"
    if isinstance(exc, (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError)):
        return 502, f"upstream connection reset: {upstream} ({detail})"
    return 502, f"upstream failed: {upstream}: {type(exc).__name__} ({detail})"


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost exception of a chain (httpx wraps the OS error that names the cause)."""
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc


def _connect_cause(root: BaseException) -> str:
    """Why a connection could not be opened, in words."""
    if isinstance(root, ConnectionRefusedError):
        return "connection refused"
    if isinstance(root, socket.gaierror):
        return "DNS lookup failed"
    if isinstance(root, ssl.SSLError):
        return "TLS handshake failed"
    if isinstance(root, ConnectionResetError):
        return "connection reset"
    if isinstance(root, TimeoutError):
        return "timed out"
    return "connection failed"


async def _error(send: Send, status: int, message: str) -> None:
    """Answer with the gateway's own error (Anthropic's error shape, which the OpenAI SDKs
    read too) and close the connection after it."""
    kind = _KIND.get(status, "invalid_request_error" if status < 500 else "api_error")
    body = JSONResponse({"type": "error", "error": {"type": kind, "message": message}}).body
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
