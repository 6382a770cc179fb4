"""The proxy's lifecycle: connect the upstream, build the proxy, serve it over a transport.

``serve(config, upstream, transport)`` is what ``slimtools proxy`` runs (the command line
only parses its arguments into these three); ``dry_run`` calls one tool raw and slimmed.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any
from urllib.parse import quote

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning

from slimtools.errors import ConfigurationError
from slimtools.foreign import raw_tokens
from slimtools.proxy.config import ProxyConfig
from slimtools.proxy.forwarding import Relay, forward_all
from slimtools.proxy.lifecycle import Supervisor
from slimtools.proxy.server import Proxy, build_proxy, proxy_server, raw_of, start
from slimtools.proxy.transports import Transport
from slimtools.proxy.upstream import UpstreamSpec, connect
from slimtools.tokens import count_tokens

__all__ = ["dry_run", "serve"]


async def serve(config: ProxyConfig, upstream: UpstreamSpec, transport: Transport) -> int:
    """Connect the upstream, build the proxy and serve it over ``transport`` until the
    client goes away; the exit status (0, or 2 when the config does not fit the upstream).

    The upstream is supervised (``slimtools.proxy.lifecycle``): restarted if it crashes,
    stopped when the proxy stops.

    Raises:
        UpstreamError: the upstream could not be started or reached at all.
    """
    # The proxy forwards deprecated features (roots, logging) as long as clients use them.
    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
    relay = Relay()
    supervisor = Supervisor(
        upstream,
        callbacks=relay.callbacks(),
        progress=relay.progress,
        timeout=config.call_timeout,
    )
    async with anyio.create_task_group() as group:
        await group.start(supervisor.run)
        try:
            proxy = build_proxy(
                config,
                await supervisor.tools(),
                supervisor.call,
                instructions=supervisor.instructions,
            )
        except ConfigurationError as exc:
            print(f"slimtools proxy: {exc}", file=sys.stderr)
            group.cancel_scope.cancel()
            return 2
        server = await _transparent_server(proxy, config, supervisor, relay)
        await transport.run(server)
        group.cancel_scope.cancel()
    return 0


async def _transparent_server(
    proxy: Proxy, config: ProxyConfig, supervisor: Supervisor, relay: Relay
) -> MCPServer[Any]:
    """The proxy's server, forwarding all of MCP that is not a tool result to the upstream."""
    server = proxy_server(proxy, config)
    server.middleware.append(relay.middleware)
    forward_all(
        server,
        supervisor.client,
        await supervisor.tools(),
        supervisor.capabilities,
        record_prefix=f"slimtools://{quote(proxy.kit.name, safe='')}/",
        timeout=config.call_timeout,
        relay=relay,
    )
    return server


async def dry_run(
    config: ProxyConfig, spec: UpstreamSpec, tool: str, arguments: dict[str, Any]
) -> str:
    """Call ``tool`` once raw and once through the proxy; report both token counts (or,
    starting ``slimtools proxy:``, why not: no such tool, no answer within ``call_timeout``)."""
    async with connect(spec) as upstream:
        proxy = await start(config, upstream)
        known = [t.name for t in proxy.kit.tools[:-1]]
        if tool not in known:
            # Raised here it would leave the client's task group as an ExceptionGroup.
            return f"slimtools proxy: no tool {tool!r} upstream; tools: {', '.join(known)}"
        try:
            with anyio.fail_after(config.call_timeout):
                raw = raw_of(await upstream.call(tool, arguments))
                slimmed = await proxy.kit.acall(tool, arguments)
        except TimeoutError:  # caught here, inside the client's task group
            return (
                f"slimtools proxy: {tool!r} got no answer the proxy could read within "
                f"{config.call_timeout:g} s (call_timeout)"
            )
    before = raw_tokens(raw.texts, raw.structured, count_tokens)
    after = count_tokens(slimmed.text)
    options = config.options_for(tool)
    how = "configured" if options else f"unconfigured, budget {config.max_tokens}"
    ratio = f"{before / after:.1f}x smaller" if after else "n/a"
    return "\n".join(
        [
            f"{tool} ({how}): raw {before:,} tokens -> slimmed {after:,} tokens ({ratio})",
            "the model reads:",
            slimmed.text,
        ]
    )
