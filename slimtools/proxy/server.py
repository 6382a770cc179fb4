"""The proxy: every upstream tool re-served as a forwarder, slimmed by configuration.

Each upstream tool becomes a function that forwards the call (``slimtools.foreign``),
decorated by its options and registered on a ``Toolkit`` under the upstream's own input
schema; the toolkit is served by ``slimtools.adapters.mcp``, the same path as any slimmed
toolkit, ``get_record`` included. Slimmed tools publish an output schema that describes what
they may return: the envelope, or (when the upstream has an output schema) the envelope or
the upstream's own result, since errors and images pass through as the upstream sent them.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import quote

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.exceptions import MCPError
    from mcp.types import (
        BlobResourceContents,
        CallToolResult,
        EmbeddedResource,
        ResourceLink,
        TextContent,
        TextResourceContents,
        Tool,
        ToolAnnotations,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.proxy needs the MCP SDK (mcp>=2): pip install 'slimtools[proxy]'"
    ) from exc

from slimtools.adapters.mcp import to_mcp_server
from slimtools.adapters.mcp_emit import EmitPolicy
from slimtools.categories import repeatable_by_name
from slimtools.errors import ConfigurationError
from slimtools.foreign import Plan, Raw, Screen, can_page, items_warning, slim
from slimtools.projection import denied_names, read_text, scrub_exception, scrub_pairs
from slimtools.proxy.autobrief import AutoBriefs, install, prefetched, warn_unmatched
from slimtools.proxy.config import ProxyConfig, ToolOptions
from slimtools.proxy.sessions import Isolation
from slimtools.proxy.upstream import Upstream
from slimtools.toolkit import Toolkit, ToolResult, ToolSpec

__all__ = ["Proxy", "build_proxy", "proxy_server", "raw_of"]

log = logging.getLogger("slimtools.proxy")

Caller = Callable[[str, dict[str, Any]], Awaitable[CallToolResult]]


def raw_of(result: CallToolResult) -> Raw:
    """An MCP tool result in the neutral form the forwarder shapes.

    Embedded text resources count as opaque (they pass through) but are screened as text.
    """
    texts = [block.text for block in result.content if block.type == "text"]
    return Raw(
        texts=texts,
        structured=result.structured_content,
        is_error=result.is_error,
        opaque=len(texts) != len(result.content),
        native=result,
    )


@dataclass
class Proxy:
    """The forwarded tools of one upstream, registered on a toolkit."""

    kit: Toolkit
    annotations: dict[str, ToolAnnotations]
    plans: dict[str, Plan]
    instructions: str
    briefs: AutoBriefs = dataclasses.field(default_factory=AutoBriefs)


def build_proxy(
    config: ProxyConfig, tools: list[Tool], call: Caller, *, instructions: str | None = None
) -> Proxy:
    """Register a forwarder for each upstream tool on a fresh toolkit.

    Raises:
        ConfigurationError: an upstream tool is named like the companion, or a tool's
            options do not fit its results' shape (e.g. ``key`` not in ``fields``).
    """
    names = [t.name for t in tools]
    if config.companion in names:
        raise ConfigurationError(
            f"{config.source}: the upstream already has a tool named {config.companion!r}; "
            'set companion = "..." in the config to name the proxy\'s record tool otherwise'
        )
    for pattern in config.patterns_matching_nothing(names):
        log.warning("slimtools proxy: [tools.%s] matches no upstream tool", pattern)
    kit = Toolkit(config.name, store=config.store, companion_name=config.companion)
    proxy = Proxy(kit, {}, {}, _instructions(config.companion, instructions))
    proxy.briefs.threshold = config.auto_briefs or 0
    for tool in tools:
        _register(proxy, config, tool, call)
    return proxy


def _register(proxy: Proxy, config: ProxyConfig, tool: Tool, call: Caller) -> None:
    """Register ``tool``'s forwarder on the proxy's toolkit, once, under its final schema."""
    options = config.options_for(tool.name)
    plan = Plan(options, config.max_tokens)
    name = tool.name
    warning = items_warning(name, options, tool.output_schema)
    if warning:
        log.warning(warning)
    fetch, forward = _forwarder(proxy, name, options, call)
    paged = can_page(tool.input_schema) and (options is not None or pages_unconfigured(tool))
    fn = slim(forward, plan, name=name, paged=paged)
    category, read_only = _category(tool, options, plan)
    described = (options.description if options else None) or tool.description or name
    main = proxy.kit.bind(
        fn,
        name=name,
        description=described,
        category=category,
        parameters=tool.input_schema,
        read_only=read_only,
    )
    listed, published = _listed(main, plan, tool.output_schema)
    proxy.plans[name] = Plan(
        options,
        config.max_tokens,
        passthrough=partial(_fit_native, listed=listed, upstream=tool.output_schema),
        screen_native=screen_result,
    )
    if options is not None and options.response_format and plan.slims:
        choose = _response_format(
            proxy.kit, tool, concise=fn, forward=forward, options=options, budget=config.max_tokens
        )
        proxy.kit.tool(
            choose.function,
            name=name,
            description=main.description,
            category=main.category,
            parameters=choose.parameters,
            output_schema=listed or {},
        )
    elif options is None and plan.slims and config.auto_briefs:
        install(
            proxy.kit,
            dataclasses.replace(main, output_schema=dict(published or {})),
            fetch=fetch,
            plan=lambda: proxy.plans[name],
            briefs=proxy.briefs,
            paged=paged,
            parameters=tool.input_schema,
            schema=tool.output_schema,
        )
    else:
        proxy.kit.tool(
            fn,
            name=name,
            description=described,
            category=category,
            parameters=tool.input_schema,
            read_only=read_only,
            output_schema=published,
        )
    proxy.annotations[name] = _annotations(tool, options)


def _category(tool: Tool, options: ToolOptions | None, plan: Plan) -> tuple[str | None, bool]:
    """The category and read-only flag a forwarded tool is registered with (a slimmed tool
    that only reads is a "read" for clearing)."""
    read_only = _read_only(tool, options.read_only if options else None)
    category = options.category if options and options.category else None
    if category is None and read_only and plan.slims:
        category = "read"
    return category, read_only


def _forwarder(
    proxy: Proxy, name: str, options: ToolOptions | None, call: Caller
) -> tuple[Callable[[dict[str, Any]], Awaitable[Raw]], Any]:
    """``(fetch, forward)`` of upstream tool ``name``: the raw call (its errors' denied pairs
    masked), and the ``**arguments`` forwarder that shapes its result by the plan in force
    (``proxy.plans[name]``)."""

    denied = denied_names(options.deny_tree) if options is not None else frozenset()

    async def fetch(arguments: dict[str, Any]) -> Raw:
        try:
            return raw_of(await call(name, arguments))
        except Exception as exc:  # a JSON-RPC error's message may quote a denied pair
            scrub_exception(exc, denied)
            if isinstance(exc, MCPError) and denied:  # its text is its error's message
                message = scrub_pairs(exc.error.message, denied)
                exc.error = exc.error.model_copy(update={"message": message})
            raise

    def shape(raw: Raw) -> Any:
        found = proxy.plans[name].shape(raw)
        return warn_unmatched(name, options, found, proxy.briefs.warned)

    forward = prefetched(fetch, shape)
    forward.__name__ = name
    return fetch, forward


def _listed(
    spec: ToolSpec, plan: Plan, upstream: Mapping[str, Any] | None
) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """The output schema a forwarded tool's results satisfy, and the one to register.

    ``spec`` is the slimmed forwarder bound (not registered), which knows the envelope's.
    """
    if not plan.slims:
        return upstream, upstream
    if upstream is not None:
        # Errors and images pass through as the upstream sent them, its structured content
        # included: the published schema must admit both shapes.
        both = {"type": "object", "anyOf": [spec.output_schema, upstream]}
        return both, both
    if plan.options is None:
        # Unconfigured, no upstream schema: a small result passes through with whatever
        # structured content the upstream sent, so no schema can be promised ({}: none).
        return None, {}
    return spec.output_schema, None


def _annotations(tool: Tool, options: ToolOptions | None) -> ToolAnnotations:
    """The upstream's annotations, with the configured ``read_only`` and its title."""
    annotations = tool.annotations.model_copy() if tool.annotations else ToolAnnotations()
    if options is not None and options.read_only is not None:
        annotations.read_only_hint = options.read_only
    if annotations.title is None and tool.title:
        annotations.title = tool.title
    return annotations


_FORMATS = ("concise", "detailed")
_FORMAT_DOC = (
    "concise (default): the chosen fields of each record; detailed: whole records, when the "
    "fields shown are not enough."
)


def _response_format(
    kit: Toolkit,
    tool: Tool,
    *,
    concise: Any,
    forward: Any,
    options: ToolOptions,
    budget: int | None,
) -> ToolSpec:
    """``tool``'s chooser between its concise and detailed variants (bound, not registered),
    with a ``response_format`` parameter.

    Both variants are slimmed forwarders of the same name, so they share the page-1 snapshot
    and get_record's handles; "detailed" drops only the allowlist (denied paths stay out).
    """
    name = tool.name
    whole = Plan(dataclasses.replace(options, fields=None, model=None), budget)
    paged = can_page(tool.input_schema)
    detailed = kit.bind(
        slim(forward, whole, name=name, paged=paged), name=name, parameters=tool.input_schema
    ).function
    brief = kit.bind(concise, name=name, parameters=tool.input_schema)
    params = copy.deepcopy(brief.parameters)
    params["properties"]["response_format"] = {
        "type": "string",
        "enum": list(_FORMATS),
        "default": "concise",
        "description": _FORMAT_DOC,
    }

    async def choose(**arguments: Any) -> Any:
        chosen = arguments.pop("response_format", "concise")
        if chosen not in _FORMATS:
            return ToolResult(
                f'response_format must be "concise" or "detailed", got {chosen!r}', is_error=True
            )
        return await (detailed if chosen == "detailed" else brief.function)(**arguments)

    choose.__name__ = name
    return kit.bind(choose, name=name, parameters=params)


def pages_unconfigured(tool: Tool) -> bool:
    """Whether zero config adds ``page`` and ``limit`` to ``tool``: not to a tool that writes,
    as its annotations say (``readOnlyHint``), else as its name's verbs do (the rule that
    decides whether a clearing placeholder may offer a call again). A large result of a
    write tool is summarised (head and handles) instead."""
    hint = tool.annotations.read_only_hint if tool.annotations else None
    if hint is not None:
        return hint
    return repeatable_by_name(tool.name) is not False


def _read_only(tool: Tool, configured: bool | None) -> bool:
    if configured is not None:
        return configured
    return bool(tool.annotations and tool.annotations.read_only_hint)


def screen_result(result: CallToolResult, screen: Screen) -> CallToolResult:
    """``result`` with every block through ``screen``: texts, embedded text resources and
    structured content lose their denied paths (and what the allowlist does not show), and
    a denied value one block holds is masked in all of them."""
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    texts += [
        block.resource.text
        for block in result.content
        if isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents)
    ]
    screen = screen.knowing(texts, result.structured_content)
    blocks = [_screen_block(block, screen) for block in result.content]
    structured = result.structured_content
    update: dict[str, Any] = {"content": blocks, "meta": _screen_meta(result.meta, screen)}
    if structured is not None:
        screened = screen.data(structured)
        update["structured_content"] = screened if isinstance(screened, dict) else None
    return result.model_copy(update=update)


def _screen_block(block: Any, screen: Screen) -> Any:
    if getattr(block, "meta", None) is not None:
        block = block.model_copy(update={"meta": _screen_meta(block.meta, screen)})
    if isinstance(block, TextContent):
        return block.model_copy(update={"text": screen.text(block.text)})
    if isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
        resource = block.resource.model_copy(update={"text": screen.text(block.resource.text)})
        return block.model_copy(update={"resource": resource})
    if isinstance(block, ResourceLink):  # its description is free text, its name a label
        described = screen.text(block.description) if block.description else None
        titled = screen.label(block.title) if block.title else None
        update = {"name": screen.label(block.name), "title": titled, "description": described}
        update["uri"] = screen.label(str(block.uri))  # a query or path may quote a value
        return block.model_copy(update=update)
    if isinstance(block, EmbeddedResource) and isinstance(block.resource, BlobResourceContents):
        text = _text_of_blob(block.resource)
        if text is not None:  # JSON or text sent base64: screened as the text it is
            screened = screen.text(text)
            fields = block.resource.model_dump(exclude={"blob"})
            resource = TextResourceContents(**fields, text=screened)
            return block.model_copy(update={"resource": resource})
    return block


def _text_of_blob(resource: BlobResourceContents) -> str | None:
    """The text of a base64 resource whose type says text (JSON, XML...) or that decodes to
    JSON data whatever its type (octet-stream records); ``None`` for binary data."""
    mime = (resource.mime_type or "").split(";")[0].strip().lower()
    textual = mime.startswith("text/") or mime.endswith(("json", "xml", "yaml", "javascript"))
    try:
        text = base64.b64decode(resource.blob).decode("utf-8")
    except ValueError:  # not base64, or not UTF-8: unreadable, so withheld as text
        return f"<{len(resource.blob)} characters of undecodable base64>" if textual else None
    if textual or isinstance(read_text(text), (dict, list)):
        return text
    return None


def _screen_meta(meta: dict[str, Any] | None, screen: Screen) -> dict[str, Any] | None:
    """A screened ``_meta``: without denied paths; dropped under an allowlist (no records)."""
    if meta is None or screen.allowlist is not None:
        return None
    screened = dataclasses.replace(screen, is_error=False).data(meta)
    return screened if isinstance(screened, dict) else None


def _fit_native(raw: Raw, *, listed: Mapping[str, Any] | None, upstream: Any) -> CallToolResult:
    """The upstream result to pass through, made to satisfy the schema listed for it."""
    native: CallToolResult = raw.native
    if not listed or native.is_error:
        return native
    if upstream is not None and native.structured_content is not None and not raw.screened:
        return native  # the listed schema admits the upstream's own
    kinds = ", ".join(sorted({block.type for block in native.content})) or "empty"
    described = {
        "total": len(native.content),
        "briefs": [],
        "hint": f"passed through as is: {len(native.content)} content blocks ({kinds})",
    }
    return native.model_copy(update={"structured_content": described})


def _instructions(companion: str, upstream: str | None) -> str:
    ours = (
        "Results of large tools come through slimtools as compact JSON envelopes: total (how "
        "many items exist), briefs (a few items, each with its handle), hint (the exact call "
        f"for the next page or the full record). Call {companion}(handle) to read one item "
        "in full."
    )
    return f"{upstream}\n\n{ours}" if upstream else ours


def proxy_server(proxy: Proxy, config: ProxyConfig, *, name: str | None = None) -> MCPServer[Any]:
    """The MCP server that serves ``proxy``'s toolkit (stdio or HTTP: the caller runs it)."""
    server: MCPServer[Any] = MCPServer(
        name=name or f"slimtools-{config.name}",
        instructions=proxy.instructions,
        middleware=[isolation(proxy, config)],
        log_level="WARNING",
    )
    # The SDK's per-message OpenTelemetry span costs about 0.4 ms a call even with no
    # exporter installed, on every call through the proxy; slimtools reports its own events.
    # (Matched by name: the class lives in a private module of the SDK.)
    server.middleware[:] = [
        m for m in server.middleware if type(m).__name__ != "OpenTelemetryMiddleware"
    ]
    per_tool = {
        name: found.emit
        for name in proxy.plans
        if (found := config.options_for(name)) is not None and found.emit is not None
    }
    # The config checked every emit against EMITS; its type is plain str.
    policy = EmitPolicy(default=config.emit, tools=per_tool)  # type: ignore[arg-type]
    return to_mcp_server(proxy.kit, server, annotations=proxy.annotations, emit=policy)


def isolation(proxy: Proxy, config: ProxyConfig) -> Isolation:
    """The middleware that keeps each client's handles its own (``slimtools.proxy.sessions``)."""
    keys = {}
    for spec in proxy.kit.tools:
        options = config.options_for(spec.name)
        keys[spec.name] = options.key if options else None
    paged = frozenset(
        spec.name
        for spec in proxy.kit.tools
        if "page" in (spec.parameters.get("properties") or {}) and spec.name != config.companion
    )
    return Isolation(
        config.session,
        companion=config.companion,
        resource_prefix=f"slimtools://{quote(proxy.kit.name, safe='')}/",
        keys=keys,
        paged=paged,
    )


async def start(config: ProxyConfig, upstream: Upstream) -> Proxy:
    """List the upstream's tools and build the proxy over them."""
    return build_proxy(
        config, await upstream.tools(), upstream.call, instructions=upstream.instructions
    )
