"""Which channel of an MCP tool result carries the envelope: text, structured content, or both.

MCP clients disagree on what they show the model of a result that fills both ``content`` and
``structuredContent``: some show one, some both (so the same envelope is paid twice). An
``emit`` choice, per tool or for all, says which to send: ``"both"`` (the safe default for an
unknown client), ``"text"`` (a text block only, and no ``outputSchema`` listed, since a
client that validates would reject a result without the structured content it promises) or
``"structured"`` (structured content only, for clients that show the model nothing else).
Without a choice the client's ``clientInfo.name`` picks one from ``CLIENT_EMITS``; the
sources for each row are in ``docs/proxy-paging.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel

try:
    from mcp.server.context import CallNext, ServerRequestContext
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.mcp_emit needs the MCP SDK (mcp>=2): pip install 'slimtools[mcp]'"
    ) from exc

__all__ = [
    "CLIENT_EMITS",
    "EMITS",
    "Emit",
    "EmitMiddleware",
    "EmitPolicy",
    "client_emit",
    "emit_result",
    "listed_tools",
]

Emit = Literal["both", "text", "structured"]
EMITS: tuple[str, ...] = get_args(Emit)

CLIENT_EMITS: tuple[tuple[str, Emit], ...] = (
    # (a case-insensitive part of clientInfo.name, the channel its model reads)
    # Clients that show structuredContent when present drop the text themselves: "both" costs
    # their model nothing more, keeps the text block the MCP spec asks for, and still reads
    # right if the client's rule changes (an empty content would then show nothing).
    ("claude-code", "both"),
    ("codex", "both"),
    ("opencode", "both"),
    ("copilot", "text"),  # Copilot CLI and JetBrains add both to the context
    ("kimi", "text"),  # content wins; structured only when content is empty
    ("hermes", "text"),  # the same rule, ported from kimi-code
    ("agent-framework", "text"),  # Microsoft agent-framework appends both as text
    ("agent_framework", "text"),
    ("qwenpaw", "text"),  # writes both into one tool result
)
"""Default channel per client; any other client (Claude Desktop, Cursor, VS Code: no
published rule found) gets ``"both"``, which every client can read."""


def client_emit(client: str | None) -> Emit:
    """The channel ``CLIENT_EMITS`` gives a client by its ``clientInfo.name``."""
    low = (client or "").lower()
    for part, emit in CLIENT_EMITS:
        if part in low:
            return emit
    return "both"


@dataclass(frozen=True)
class EmitPolicy:
    """The channel of each tool: its own, else the global one, else the client's default."""

    default: Emit | None = None
    tools: Mapping[str, Emit] = field(default_factory=dict)

    def choose(self, tool: str | None, client: str | None) -> Emit:
        """The channel for ``tool``'s results sent to ``client``."""
        found = self.tools.get(tool) if tool is not None else None
        return found or self.default or client_emit(client)


def emit_result(result: Mapping[str, Any], emit: Emit) -> dict[str, Any]:
    """A ``tools/call`` result (wire form) with only the channel ``emit`` names.

    Errors and results without structured content are kept whole, and so is the text of a
    result that also holds an image or a resource (only the text could describe it).
    """
    out = dict(result)
    if emit == "both" or out.get("isError") or out.get("structuredContent") is None:
        return out
    if emit == "text":
        del out["structuredContent"]
    elif all(isinstance(b, Mapping) and b.get("type") == "text" for b in out.get("content", [])):
        out["content"] = []
    return out


def listed_tools(
    result: Mapping[str, Any], policy: EmitPolicy, client: str | None
) -> dict[str, Any]:
    """A ``tools/list`` result (wire form) without ``outputSchema`` where only text is sent."""
    tools = [
        {k: v for k, v in tool.items() if k != "outputSchema"}
        if isinstance(tool, Mapping) and policy.choose(tool.get("name"), client) == "text"
        else tool
        for tool in result.get("tools", [])
    ]
    return {**result, "tools": tools}


class EmitMiddleware:
    """Applies an ``EmitPolicy`` to every ``tools/list`` and ``tools/call`` answer."""

    def __init__(self, policy: EmitPolicy) -> None:
        self.policy = policy

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        """Answer the request, then keep only the chosen channel (and schemas) of its result."""
        result = await call_next(ctx)
        if ctx.method not in ("tools/list", "tools/call") or result is None:
            return result
        wire = _wire(result)
        client = _client_name(ctx)
        if ctx.method == "tools/list":
            return listed_tools(wire, self.policy, client)
        name = (ctx.params or {}).get("name")
        return emit_result(
            wire, self.policy.choose(name if isinstance(name, str) else None, client)
        )


def _wire(result: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(result, BaseModel):
        dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped
    return dict(result)


def _client_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The client's ``clientInfo.name``: from its handshake, else the request's ``_meta``."""
    params = getattr(ctx.session, "client_params", None)
    name = getattr(getattr(params, "client_info", None), "name", None)
    if not isinstance(name, str):
        meta = (ctx.params or {}).get("_meta")
        info = meta.get("io.modelcontextprotocol/clientInfo") if isinstance(meta, Mapping) else None
        name = info.get("name") if isinstance(info, Mapping) else None
    return name if isinstance(name, str) else None
