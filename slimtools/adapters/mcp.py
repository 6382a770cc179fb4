"""MCP adapter: serve a toolkit, get_record included, from the official SDK's ``MCPServer``.

Each tool is listed with the toolkit's own JSON schemas: ``inputSchema`` is
``ToolSpec.parameters`` (``page`` and ``limit`` included) and ``outputSchema`` is
``ToolSpec.output_schema`` (the envelope with its briefs as emitted), so the SDK's client
side validation of structured results holds. A call answers with both channels carrying the
same envelope: one text block with the compact JSON the model reads and
``structuredContent`` equal to that JSON parsed, because MCP clients disagree on which of the
two they show the model; ``emit=`` (or, by default, the client's ``clientInfo``) keeps one.
Bad calls (wrong types, unknown or missing fields, an unknown tool
or handle, a tool that raises) come back as ``isError`` results whose text says how to
recover; a page past the end is an ordinary envelope whose hint names the valid pages.

Handles can also be read as resources, through the template
``slimtools://<toolkit>/{handle}``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias
from urllib.parse import quote

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool, ToolManager
    from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
    from mcp.types import CallToolResult, ContentBlock, TextContent, ToolAnnotations
    from pydantic import ConfigDict
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.mcp needs the MCP SDK (mcp>=2): pip install 'slimtools[mcp]'"
    ) from exc

from slimtools.adapters.mcp_emit import Emit, EmitMiddleware, EmitPolicy
from slimtools.clearing.policy import ClearingPolicy
from slimtools.errors import ConfigurationError
from slimtools.toolkit import Toolkit, ToolResult, ToolSpec

__all__ = ["SessionSource", "clearing_policy", "to_mcp_server"]


SessionSource: TypeAlias = str | Callable[[], str | None] | None
"""A fixed session id, a callable asked on every request (``None`` meaning the default), or
``None`` for the session bound with ``slimtools.session`` or else the toolkit's default."""


def clearing_policy(
    tools: Any, policy: ClearingPolicy | None = None, **overrides: Any
) -> ClearingPolicy:
    """The clearing policy for an agent using these MCP tools, their annotations read.

    ``tools`` is what ``ClientSession.list_tools()`` returns (the result or its ``tools``),
    or tool definitions as dicts. Read-only (and idempotent, non-destructive) tools get
    placeholders that offer the exact call again; destructive ones never do, without
    ``repeatable_tools(...)``. The proxy calls this with its upstream's listing.

    Args:
        tools: MCP tool definitions.
        policy: the policy to start from (default: ``ClearingPolicy(**overrides)``).
        overrides: fields of a new policy when ``policy`` is not given.
    """
    base = policy if policy is not None else ClearingPolicy(**overrides)
    return base.with_tool_hints(tools)


def to_mcp_server(
    kit: Toolkit,
    server: MCPServer[Any] | None = None,
    *,
    session: SessionSource = None,
    resources: bool = True,
    output_schemas: bool = True,
    annotations: Mapping[str, ToolAnnotations] | None = None,
    emit: Emit | EmitPolicy | None = None,
) -> MCPServer[Any]:
    """Register every tool of ``kit``, ``get_record`` included, on an ``MCPServer``.

    Args:
        kit: the toolkit to serve.
        server: the server to add the tools to; ``None`` creates one named after the
            toolkit, with instructions that explain envelopes and ``get_record``.
        session: the handle session the tools run in. ``None`` uses the session bound with
            ``slimtools.session(...)``, else the toolkit's default: right for stdio, where
            one server process serves one client. A server shared by several users over
            HTTP should pass a callable, asked on every request in that request's context,
            that names the caller (e.g. from
            ``mcp.server.auth.middleware.auth_context.get_access_token()``), so
            one user's handles never resolve for another.
        resources: also expose handles as the resource template
            ``slimtools://<toolkit>/{handle}`` (read through ``get_record``).
        output_schemas: publish each tool's ``outputSchema``. Clients reject a result that
            does not match it, so turn this off when a backend's values may not match the
            allowlist model's annotations (projection does not coerce types);
            ``structuredContent`` is sent either way.
        annotations: per tool name, the annotations to publish instead of those derived
            from its category (a proxy forwards its upstream's this way).
        emit: which channel results use: ``"both"``, ``"text"`` (and no ``outputSchema``)
            or ``"structured"``, or an ``EmitPolicy`` (per tool). ``None`` picks per client
            from its ``clientInfo`` (``slimtools.adapters.mcp_emit.CLIENT_EMITS``; unknown
            clients get both).

    Returns:
        The server, ready for ``server.run()`` or an in-process ``mcp.Client(server)``.

    Raises:
        ConfigurationError: ``server`` already has a tool with one of the toolkit's names.
    """
    given = annotations or {}
    tools = [
        _mcp_tool(kit, spec, session, output_schemas, given.get(spec.name)) for spec in kit.tools
    ]
    if server is None:
        server = MCPServer(name=kit.name, instructions=_instructions(kit), tools=tools)
    else:
        _add_prebuilt_tools(server, tools)
    if resources:
        _add_record_template(server, kit, session)
    policy = emit if isinstance(emit, EmitPolicy) else EmitPolicy(default=emit)
    server.middleware.append(EmitMiddleware(policy))
    return server


class _RawArguments(ArgModelBase):
    """Hands the client's arguments to the tool untouched, for the toolkit to validate.

    The SDK validates arguments with a model inferred from the function signature. Here the
    toolkit validates instead (one implementation across adapters, model-readable messages,
    unknown fields refused rather than silently dropped), so every argument is kept as an
    extra and passed through as is.
    """

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        """The arguments exactly as the client sent them."""
        return dict(self.__pydantic_extra__ or {})


def _mcp_tool(
    kit: Toolkit,
    spec: ToolSpec,
    session: SessionSource,
    with_output: bool,
    annotations: ToolAnnotations | None = None,
) -> Tool:
    """An SDK ``Tool`` with the toolkit's schemas and a handler that dispatches through ``kit``.

    Async tools are awaited through ``kit.acall``; sync ones (get_record included) go
    through ``kit.call``, which the SDK runs on a worker thread as it does for any sync tool,
    so a slow backend never blocks the server's event loop.
    """
    name = spec.name
    fn: Callable[..., Any]
    if spec.is_async:

        async def fn(**arguments: Any) -> CallToolResult:
            result = await kit.acall(name, arguments, session=_session_id(session))
            return _call_tool_result(result)

    else:

        def fn(**arguments: Any) -> CallToolResult:
            return _call_tool_result(kit.call(name, arguments, session=_session_id(session)))

    if annotations is None and spec.read_only:
        annotations = ToolAnnotations(read_only_hint=True)
    return Tool(
        fn=fn,
        name=name,
        title=None,
        description=spec.description,
        parameters=copy.deepcopy(spec.parameters),
        fn_metadata=FuncMetadata(
            arg_model=_RawArguments,
            # A schema without an output model is published but not re-validated by the
            # server; the client validates structuredContent against it.
            output_schema=copy.deepcopy(spec.output_schema)
            if with_output and spec.output_schema
            else None,
        ),
        is_async=spec.is_async,
        context_kwarg=None,
        annotations=annotations,
    )


def _call_tool_result(result: ToolResult) -> CallToolResult:
    """A ``ToolResult`` as MCP: the text block, the same envelope as structuredContent.

    A ``CallToolResult`` carried as the value (a proxied upstream result that passes through
    untouched) is sent as it is.
    """
    if isinstance(result.value, CallToolResult):
        return result.value
    content: list[ContentBlock] = [TextContent(type="text", text=result.text)]
    if result.is_error:
        return CallToolResult(content=content, is_error=True)
    if result.structured is None:
        return CallToolResult(content=content)
    return CallToolResult(content=content, structured_content=result.structured)


def _add_prebuilt_tools(server: MCPServer[Any], tools: list[Tool]) -> None:
    """Add ready-made ``Tool`` objects to an existing server, all or none.

    ``MCPServer`` takes pre-built tools only in its constructor (``tools=``); ``add_tool``
    always re-infers the schema from a function signature. So for a server the user made,
    the tools go into its tool manager directly, checked so that an SDK change fails loudly.
    """
    manager = getattr(server, "_tool_manager", None)
    registry = getattr(manager, "_tools", None)
    if not isinstance(manager, ToolManager) or not isinstance(registry, dict):
        raise TypeError(  # pragma: no cover - guards against a future SDK layout
            "this mcp SDK version does not accept pre-built tools on an existing server; "
            "call to_mcp_server(kit) without a server instead"
        )
    clashes = [tool.name for tool in tools if manager.get_tool(tool.name) is not None]
    if clashes:
        raise ConfigurationError(
            f"MCP server {server.name!r} already has tools named {clashes}; rename them "
            "(Toolkit.tool(name=...), Toolkit(companion_name=...)) or use another server"
        )
    for tool in tools:
        registry[tool.name] = tool


def _session_id(session: SessionSource) -> str | None:
    """The session of the current request."""
    return session() if callable(session) else session


def _add_record_template(server: MCPServer[Any], kit: Toolkit, session: SessionSource) -> None:
    """Expose ``slimtools://<toolkit>/{handle}``: reading it calls ``get_record(handle)``."""
    companion = kit.companion_name

    async def read_record(handle: str) -> str:
        # Through acall, like a tool call, so the session and the messages are the same.
        result = await kit.acall(companion, {"handle": handle}, session=_session_id(session))
        return result.text

    server.resource(
        f"slimtools://{quote(kit.name, safe='')}/{{handle}}",
        name=f"{kit.name}.{companion}",
        description=f"The full record or text behind a handle from toolkit {kit.name!r}; "
        f"the same as calling {companion}(handle).",
    )(read_record)


def _instructions(kit: Toolkit) -> str:
    """Server instructions: how to read an envelope and expand a handle."""
    companion = kit.companion_name
    return (
        "Tool results are compact JSON envelopes: total (how many items exist), briefs "
        "(a few projected items, each with its handle), hint (the exact call for the next "
        f"page or the full record). Call {companion}(handle) to read one item in full."
    )
