"""Everything that is not a tool result, forwarded unchanged in both directions.

Client to upstream: prompts, resources and resource templates (the proxy's own
``slimtools://`` record template added), resource subscriptions, completions, the logging
level, and the client's ``notifications/roots/list_changed``. Upstream to client: sampling,
elicitation and roots requests, log messages, progress of the call being served, and every
other notification (resource updated, list changed). The proxy advertises the upstream's
capabilities (tools and resources always: it serves both) and lists each tool with the
upstream's ``title``, ``execution``, ``icons`` and ``_meta``. Only tool results are slimmed.

Requests and notifications from the upstream go to the one client they can be for: the
client of the requests in flight, or with none in flight the only client connected (stdio).
When that is ambiguous (several HTTP clients in flight at once) a request gets an error and a
notification is dropped, rather than risk telling one client about another's call; progress
always reaches the right client, since it names the call's own progress token.

Each forwarded request is bounded by the proxy's ``call_timeout``: an upstream that does not
answer in time, or answers with what the SDK cannot read, gives the client a JSON-RPC error
naming the request (never the upstream's unreadable content), and the proxy goes on serving.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio

try:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.mcpserver import MCPServer
    from mcp.server.session import ServerSession
    from mcp.shared.exceptions import MCPError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.proxy needs the MCP SDK (mcp>=2): pip install 'slimtools[proxy]'"
    ) from exc

from slimtools.proxy._era import (
    DISCOVER,
    mark_handshake_only,
    refuse_probe,
    speaks_current_protocol,
)

__all__ = ["Relay", "forward_all"]

log = logging.getLogger("slimtools.proxy")

_SERVING: ContextVar[ServerRequestContext[Any, Any] | None] = ContextVar(
    "slimtools_proxy_serving", default=None
)
_INTERNAL = -32603
ROOTS_GRACE = 0.5
"""Seconds a tool call waits after the upstream's roots request was answered."""
_REQUEST_TIMEOUT = -32001  # the MCP SDK's code for a request that timed out


@dataclass
class Relay:
    """The upstream's client-side callbacks, answered by the proxy's own client.

    An upstream asks for roots as soon as it is initialised, before the proxy has a client
    (``server-filesystem`` then serves its command-line folders, wider than the client's
    root). Such a request waits for the first client to finish its handshake (at most
    ``wait_for_client`` seconds) and is asked of it; and a tool call waits while the
    upstream's roots request is being answered, so no call reaches the upstream before it
    knows the client's roots.
    """

    seen: weakref.WeakSet[ServerSession] = field(default_factory=weakref.WeakSet)
    inflight: dict[int, ServerSession] = field(default_factory=dict)
    wait_for_client: float = 30.0
    _joined: anyio.Event | None = None
    _roots_asked: int = 0
    _roots_answered: anyio.Event | None = None
    _roots_at: float = 0.0
    _joiner: weakref.ref[ServerSession] | None = None

    def join(self, session: ServerSession) -> None:
        """A client finished its handshake: upstream requests may now be asked of it.

        Only the event is set: the notification's session object is not the one the
        client's requests carry, and noting both would make the client look like two."""
        self._joiner = weakref.ref(session)
        self._joined_event().set()

    def _joined_event(self) -> anyio.Event:
        if self._joined is None:
            self._joined = anyio.Event()
        return self._joined

    async def roots_settled(self, timeout: float = 10.0) -> None:
        """Wait (at most ``timeout`` seconds) while a roots request of the upstream is being
        answered, then until ``ROOTS_GRACE`` seconds have passed since the answer: an
        upstream applies roots asynchronously (``server-filesystem`` resolves each folder
        first), and nothing on the wire says when it is done."""
        with anyio.move_on_after(timeout):
            while self._roots_asked and self._roots_answered is not None:
                await self._roots_answered.wait()
            wait = self._roots_at + ROOTS_GRACE - time.monotonic()
            if wait > 0:
                await anyio.sleep(wait)

    def _session(self) -> ServerSession | None:
        """The one client an upstream request can be for, or ``None`` when unsure."""
        ctx = _SERVING.get()
        if ctx is not None:
            return ctx.session
        candidates = set(self.inflight.values()) or set(self.seen)
        return candidates.pop() if len(candidates) == 1 else None

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        """Note the client of each request in flight, so upstream requests can reach it;
        a tool call first waits for the upstream to know the client's roots."""
        self.seen.add(ctx.session)
        if getattr(ctx, "method", None) == "tools/call":
            await self.roots_settled()
        token = _SERVING.set(ctx)
        self.inflight[id(ctx)] = ctx.session
        try:
            return await call_next(ctx)
        finally:
            del self.inflight[id(ctx)]
            _SERVING.reset(token)

    def progress(self) -> Callable[[float, float | None, str | None], Awaitable[None]] | None:
        """A callback relaying upstream progress to the client's token, if it sent one."""
        ctx = _SERVING.get()
        meta: Any = (ctx.meta if ctx is not None else None) or {}
        progress_token = meta.get("progress_token", meta.get("progressToken"))
        if ctx is None or progress_token is None:
            return None
        session, request = ctx.session, ctx.request_id

        async def relay(progress: float, total: float | None, message: str | None) -> None:
            related = str(request) if request is not None else None
            await _quietly(
                session.send_progress_notification(
                    progress_token, progress, total, message, related_request_id=related
                )
            )

        return relay

    async def _ask(self, request: Any, result_type: type[Any]) -> Any:
        session = self._session()
        if session is None and not self.seen:  # asked before any client: wait for one
            with anyio.move_on_after(self.wait_for_client):
                await self._joined_event().wait()
            joiner = self._joiner() if self._joiner is not None else None
            session = self._session() or joiner
        if session is None:
            return types.ErrorData(
                code=_INTERNAL, message="no single client of the proxy to ask (none, or several)"
            )
        try:
            return await session.send_request(request, result_type)
        except MCPError as exc:
            return exc.error
        except Exception as exc:  # the client cannot be asked (no back-channel, gone)
            return types.ErrorData(code=_INTERNAL, message=f"the proxy's client: {exc}")

    async def sampling(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        """``sampling/createMessage`` from the upstream, asked of the client."""
        return await self._ask(types.CreateMessageRequest(params=params), types.CreateMessageResult)

    async def elicitation(self, context: Any, params: Any) -> Any:
        """``elicitation/create`` from the upstream, asked of the client."""
        return await self._ask(types.ElicitRequest(params=params), types.ElicitResult)

    async def list_roots(self, context: Any) -> Any:
        """``roots/list`` from the upstream: the client's roots, not the proxy's."""
        if self._roots_asked == 0:
            self._roots_answered = anyio.Event()
        self._roots_asked += 1
        try:
            return await self._ask(types.ListRootsRequest(), types.ListRootsResult)
        finally:
            self._roots_asked -= 1
            self._roots_at = time.monotonic()
            if self._roots_asked == 0 and self._roots_answered is not None:
                self._roots_answered.set()

    async def logging(self, params: types.LoggingMessageNotificationParams) -> None:
        """A log message from the upstream, passed to the client."""
        session = self._session()
        if session is not None:
            await _quietly(session.send_log_message(params.level, params.data, params.logger))

    async def message(self, message: Any) -> None:
        """Any other notification from the upstream, passed to the client as it came."""
        session = self._session()
        if session is not None and not isinstance(message, Exception):
            await _quietly(session.send_notification(message))

    def callbacks(self) -> dict[str, Any]:
        """The ``mcp.Client`` arguments that route the upstream's requests through here."""
        return {
            "sampling_callback": self.sampling,
            "elicitation_callback": self.elicitation,
            "list_roots_callback": self.list_roots,
            "logging_callback": self.logging,
            "message_handler": self.message,
        }


async def _quietly(sending: Awaitable[None]) -> None:
    try:
        await sending
    except Exception as exc:  # a client that left cannot be told; the upstream goes on
        log.debug("slimtools proxy: could not pass a notification on: %s", exc)


Client = Callable[[], Any]
"""Returns the live upstream ``mcp.Client`` (raising while it restarts)."""


def forward_all(
    server: MCPServer[Any],
    client: Client,
    upstream_tools: list[types.Tool],
    capabilities: types.ServerCapabilities,
    *,
    record_prefix: str,
    timeout: float | None = None,
    relay: Relay | None = None,
) -> None:
    """Register on ``server`` a forwarder for each request the upstream serves.

    Args:
        server: the proxy's server, its tools and record template already registered.
        client: returns the live upstream client.
        upstream_tools: the upstream's tools as it listed them (for their other fields).
        capabilities: the upstream's capabilities, advertised as the proxy's own.
        record_prefix: the ``slimtools://<toolkit>/`` prefix of the proxy's records.
        timeout: the seconds each forwarded request may wait for the upstream (None:
            unbounded).
        relay: the relay of the upstream's own requests, told when a client has joined.
    """
    low = server._lowlevel_server
    ours_templates = low.get_request_handler("resources/templates/list")
    ours_read = low.get_request_handler("resources/read")
    ours_tools = low.get_request_handler("tools/list")

    def add(method: str, params: Any, handler: Handler) -> None:
        low.add_request_handler(method, params, bounded(method, handler, timeout))

    if capabilities.prompts is not None:
        add("prompts/list", types.PaginatedRequestParams, _list_prompts(client))
        add("prompts/get", types.GetPromptRequestParams, _get_prompt(client))
    if capabilities.resources is not None:
        add("resources/list", types.PaginatedRequestParams, _list_resources(client))
        add("resources/subscribe", types.SubscribeRequestParams, _subscribe(client, True))
        add("resources/unsubscribe", types.UnsubscribeRequestParams, _subscribe(client, False))
    add(
        "resources/templates/list",
        types.PaginatedRequestParams,
        _list_templates(client, ours_templates, capabilities.resources is not None),
    )
    add(
        "resources/read",
        types.ReadResourceRequestParams,
        _read_resource(client, ours_read, record_prefix),
    )
    if capabilities.completions is not None:
        add("completion/complete", types.CompleteRequestParams, _complete(client))
    if capabilities.logging is not None:
        add("logging/setLevel", types.SetLevelRequestParams, _set_level(client))
    if ours_tools is not None:
        add("tools/list", types.PaginatedRequestParams, _list_tools(ours_tools, upstream_tools))
    _follow_client(server, client, relay)
    _advertise(low, capabilities)


def _follow_client(server: MCPServer[Any], client: Client, relay: Relay | None) -> None:
    """Show the upstream the client's roots as a direct connection would (it asks once
    initialised, before any client joined, so it is told they changed when one joins)."""
    low = server._lowlevel_server
    low.add_notification_handler(
        "notifications/roots/list_changed", types.NotificationParams, _roots_changed(client)
    )
    low.add_notification_handler(
        "notifications/initialized", types.NotificationParams, _joined(client, relay)
    )
    if not speaks_current_protocol(client):  # nor does the proxy (``slimtools.proxy._era``)
        low.add_request_handler(DISCOVER, types.RequestParams, refuse_probe)
        mark_handshake_only(server)


def _advertise(low: Any, upstream: types.ServerCapabilities) -> None:
    """Make the server advertise the upstream's capabilities, with tools and resources."""
    ours = low.get_capabilities

    def get_capabilities(*args: Any, **kwargs: Any) -> types.ServerCapabilities:
        own: types.ServerCapabilities = ours(*args, **kwargs)
        return upstream.model_copy(
            update={"tools": own.tools, "resources": upstream.resources or own.resources}
        )

    low.get_capabilities = get_capabilities


Handler = Callable[[Any, Any], Awaitable[Any]]


def bounded(method: str, handler: Handler, timeout: float | None) -> Handler:
    """``handler`` given at most ``timeout`` seconds, its failures to read the upstream's
    answer made errors that name ``method`` and the exception's type only.

    The SDK's reading errors (pydantic's) quote the answer, which may hold what the config
    denies, so their text is withheld; an ``MCPError`` (the upstream's own JSON-RPC error, or
    the proxy's) passes as it is.
    """

    async def handle(ctx: Any, params: Any) -> Any:
        try:
            with anyio.fail_after(timeout):
                return await handler(ctx, params)
        except TimeoutError:
            log.warning("slimtools proxy: %s: no answer within %g s", method, timeout)
            message = (
                f"{method}: no answer from the upstream the proxy could read within {timeout:g} s"
            )
            raise MCPError(code=_REQUEST_TIMEOUT, message=message) from None
        except MCPError:
            raise
        except Exception as exc:
            kind = type(exc).__name__
            log.warning("slimtools proxy: %s: unreadable answer (%s)", method, kind)
            message = f"{method}: the upstream's answer could not be read ({kind})"
            raise MCPError(code=_INTERNAL, message=message) from None

    return handle


def _list_prompts(client: Client) -> Handler:
    async def handle(ctx: Any, params: types.PaginatedRequestParams) -> Any:
        return await client().list_prompts(cursor=params.cursor, cache_mode="refresh")

    return handle


def _get_prompt(client: Client) -> Handler:
    async def handle(ctx: Any, params: types.GetPromptRequestParams) -> Any:
        return await client().get_prompt(params.name, params.arguments)

    return handle


def _list_resources(client: Client) -> Handler:
    async def handle(ctx: Any, params: types.PaginatedRequestParams) -> Any:
        return await client().list_resources(cursor=params.cursor, cache_mode="refresh")

    return handle


def _subscribe(client: Client, on: bool) -> Handler:
    async def handle(ctx: Any, params: Any) -> Any:
        upstream = client()
        if on:
            return await upstream.subscribe_resource(params.uri)
        return await upstream.unsubscribe_resource(params.uri)

    return handle


def _list_templates(client: Client, ours: Any, upstream_has: bool) -> Handler:
    async def handle(ctx: Any, params: types.PaginatedRequestParams) -> Any:
        own = await ours.handler(ctx, params) if ours is not None else None
        own_templates = list(getattr(own, "resource_templates", []) or [])
        if not upstream_has:
            return types.ListResourceTemplatesResult(resource_templates=own_templates)
        theirs = await client().list_resource_templates(cursor=params.cursor, cache_mode="refresh")
        # ours only on the first page, so that following the upstream's cursor lists it once
        extra = own_templates if params.cursor is None else []
        return theirs.model_copy(
            update={"resource_templates": [*theirs.resource_templates, *extra]}
        )

    return handle


def _read_resource(client: Client, ours: Any, prefix: str) -> Handler:
    async def handle(ctx: Any, params: types.ReadResourceRequestParams) -> Any:
        if str(params.uri).startswith(prefix) and ours is not None:
            return await ours.handler(ctx, params)
        return await client().read_resource(str(params.uri), cache_mode="refresh")

    return handle


def _complete(client: Client) -> Handler:
    async def handle(ctx: Any, params: types.CompleteRequestParams) -> Any:
        context = params.context.arguments if params.context is not None else None
        argument = {"name": params.argument.name, "value": params.argument.value}
        return await client().complete(params.ref, argument, context)

    return handle


def _set_level(client: Client) -> Handler:
    async def handle(ctx: Any, params: types.SetLevelRequestParams) -> Any:
        return await client().set_logging_level(params.level)

    return handle


def _list_tools(ours: Any, upstream_tools: list[types.Tool]) -> Handler:
    by_name = {tool.name: tool for tool in upstream_tools}

    async def handle(ctx: Any, params: types.PaginatedRequestParams) -> Any:
        listed = await ours.handler(ctx, params)
        tools = [_with_upstream_fields(tool, by_name.get(tool.name)) for tool in listed.tools]
        return listed.model_copy(update={"tools": tools})

    return handle


def _with_upstream_fields(tool: types.Tool, upstream: types.Tool | None) -> types.Tool:
    """The proxy's listing of a tool with the upstream's own title, execution, icons, meta."""
    if upstream is None:
        return tool
    fields = {"title", "execution", "icons", "meta"}
    update = {name: getattr(upstream, name) for name in fields if getattr(upstream, name)}
    return tool.model_copy(update=update)


def _joined(client: Client, relay: Relay | None) -> Callable[[Any, Any], Awaitable[None]]:
    async def handle(ctx: Any, params: Any) -> None:
        if relay is not None:
            relay.join(ctx.session)
        capabilities = ctx.session.client_capabilities
        if capabilities is not None and capabilities.roots is not None:
            await _quietly(client().send_roots_list_changed())

    return handle


def _roots_changed(client: Client) -> Callable[[Any, Any], Awaitable[None]]:
    async def handle(ctx: Any, params: Any) -> None:
        await _quietly(client().send_roots_list_changed())

    return handle
