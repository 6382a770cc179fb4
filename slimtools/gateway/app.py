"""The gateway as an ASGI app: clear what a model API request carries, forward everything.

``create_app(upstream, policy)`` returns a Starlette app. ``POST`` to a model route
(:data:`~slimtools.gateway._wire.ENDPOINTS`) goes through :func:`rewrite`; every other path
and method goes upstream unchanged. Responses, streamed or not, are relayed chunk by chunk
as they arrive, headers included, while the usage they bill is read on the side. Headers
are never logged (they carry the agent's API key).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

try:
    import httpx
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - the message names the extra
    raise ImportError(
        "slimtools.gateway needs starlette, uvicorn and httpx: pip install 'slimtools[gateway]'"
    ) from exc

from slimtools.clearing import ClearingPolicy
from slimtools.clearing.pricing import pricing_of
from slimtools.gateway._rewrite import Outgoing, rewrite
from slimtools.gateway._state import ConversationCache
from slimtools.gateway._tap import UsageTap
from slimtools.gateway._wire import ENDPOINTS, Endpoint
from slimtools.gateway.stats import GatewayStats

logger = logging.getLogger("slimtools.gateway")

STATS_PATH = "/slimtools/stats"
"""Where the gateway serves its figures (JSON); never forwarded."""

# Hop-by-hop headers (RFC 9110 7.6.1) and those the HTTP stacks set again themselves.
_REQUEST_DROP = frozenset(
    {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "upgrade", "te"}
)
_RESPONSE_DROP = frozenset(
    {"content-length", "connection", "keep-alive", "transfer-encoding", "content-encoding"}
)


@dataclass
class Gateway:
    """What one gateway app holds: the upstream, the conversations and the figures."""

    upstream: str
    cache: ConversationCache
    stats: GatewayStats
    clearing: bool = True
    client: httpx.AsyncClient | None = None

    def http(self) -> httpx.AsyncClient:
        """The upstream client (made on first use when the app runs without its lifespan)."""
        if self.client is None:
            self.client = _client()
        return self.client


def create_app(
    upstream: str,
    policy: ClearingPolicy | None = None,
    *,
    clear: bool = True,
    max_conversations: int = 1000,
) -> Starlette:
    """The gateway app forwarding to ``upstream`` (``https://api.anthropic.com``).

    Args:
        upstream: the model API's base URL; request paths are appended to it.
        policy: the clearing policy (defaults to ``ClearingPolicy()``).
        clear: False makes a pass-through of the same stack (every request forwarded as
            it came, nothing read): the baseline to compare against.
        max_conversations: conversations kept in memory (least recently used go first).
    """
    policy = policy if policy is not None else ClearingPolicy()
    gateway = Gateway(
        upstream.rstrip("/"),
        ConversationCache(policy, max_conversations=max_conversations),
        GatewayStats(pricing_of(policy.cache), max_conversations=max_conversations),
        clearing=clear,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        gateway.client = _client()
        try:
            yield
        finally:
            await gateway.client.aclose()

    async def stats(request: Request) -> Response:
        return JSONResponse(gateway.stats.as_dict())

    async def forward(request: Request) -> Response:
        # Clearing runs on the event loop, not in a thread: the conversation cache is not
        # thread-safe, and a request costs its new messages only once the state is warm.
        endpoint = _endpoint_of(request) if gateway.clearing else None
        raw = await request.body()
        outgoing = (
            None if endpoint is None else rewrite(raw, endpoint, gateway.cache, gateway.stats)
        )
        if outgoing is None:
            gateway.stats.forwarded += 1
        return await _relay(
            gateway, request, outgoing.body if outgoing else raw, outgoing, endpoint
        )

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    routes = [
        Route(STATS_PATH, stats, methods=["GET"]),
        Route("/{path:path}", forward, methods=methods),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.gateway = gateway
    return app


def _client() -> httpx.AsyncClient:
    # No read timeout: a model may think for minutes before its first streamed byte.
    timeout = httpx.Timeout(connect=30.0, read=None, write=60.0, pool=60.0)
    return httpx.AsyncClient(timeout=timeout, follow_redirects=False)


def _endpoint_of(request: Request) -> Endpoint | None:
    if request.method != "POST":
        return None
    path = request.url.path.rstrip("/")
    return next((e for e in ENDPOINTS if path.endswith(e.path)), None)


async def _relay(
    gateway: Gateway,
    request: Request,
    body: bytes,
    outgoing: Outgoing | None,
    endpoint: Endpoint | None,
) -> Response:
    """Send the request upstream and stream the answer back as it arrives."""
    headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _REQUEST_DROP]
    if endpoint is not None:
        # Identity encoding on model routes so that the usage can be read on the way back.
        headers = [(k, v) for k, v in headers if k.lower() != "accept-encoding"]
        headers.append(("accept-encoding", "identity"))
    url = gateway.upstream + request.url.path
    if request.url.query:
        url += "?" + request.url.query
    client = gateway.http()
    upstream_request = client.build_request(request.method, url, headers=headers, content=body)
    try:
        answer = await client.send(upstream_request, stream=True)
    except httpx.HTTPError as exc:
        logger.warning("slimtools gateway: upstream unreachable: %s", type(exc).__name__)
        return JSONResponse(
            {"type": "error", "error": {"type": "api_error", "message": "upstream unreachable"}},
            status_code=502,
        )
    tap = UsageTap(answer.headers.get("content-type", "")) if outgoing and outgoing.stats else None

    # Model routes asked for identity; elsewhere the bytes pass still encoded, as they came.
    stream = answer.aiter_raw() if endpoint is None else answer.aiter_bytes()
    drop = _RESPONSE_DROP if endpoint is not None else _RESPONSE_DROP - {"content-encoding"}

    async def chunks() -> AsyncIterator[bytes]:
        try:
            async for chunk in stream:
                if tap is not None:
                    tap.feed(chunk)
                yield chunk
        finally:
            await answer.aclose()
            if tap is not None and outgoing is not None and outgoing.stats is not None:
                usage = tap.close()
                if usage is not None and answer.status_code < 400:
                    outgoing.stats.billed.add(usage)

    response = StreamingResponse(chunks(), status_code=answer.status_code)
    response.raw_headers = _response_headers(answer.headers.multi_items(), drop)
    return response


def _response_headers(
    items: list[tuple[str, str]], drop: frozenset[str]
) -> list[tuple[bytes, bytes]]:
    return [
        (k.lower().encode("latin-1"), v.encode("latin-1"))
        for k, v in items
        if k.lower() not in drop
    ]
