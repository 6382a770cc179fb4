"""Claude Agent SDK adapter: slim every tool's result in a ``PostToolUse`` hook.

``ClaudeSlimming(tools={...}, deny=[...]).apply(ClaudeAgentOptions(...))`` adds a
``PostToolUse`` hook that replaces a result as ``wrap()`` would show it (fields, deny, key,
the budget; per tool in ``tools=``, for every tool as keyword arguments) and an in-process
MCP server whose ``get_record`` reads the handles the envelopes show. An MCP tool's result
is replaced through ``updatedMCPToolOutput`` (its content blocks); a built-in tool's through
``updatedToolOutput``, which must match the tool's output schema or the CLI keeps the
original, so only the built-in tools whose text field is known here (``Bash``'s ``stdout``,
``Read``'s ``file.content``) are slimmed; other built-in tools pass as they are. With
nothing to change the hook returns ``{}``, never ``None`` (under ``on_failure="block"`` a
``None`` blocks the action).

There is no clearing here: the CLI owns the history and no hook can rewrite it; run the CLI
behind ``slimtools gateway`` (``ANTHROPIC_BASE_URL``) to clear stale results.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

try:
    from claude_agent_sdk import (
        ClaudeAgentOptions,
        HookMatcher,
        McpSdkServerConfig,
        SdkMcpTool,
        create_sdk_mcp_server,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.claude_agent_sdk needs the Claude Agent SDK: "
        "pip install 'slimtools[claude-agent-sdk]'"
    ) from exc

if TYPE_CHECKING:
    from claude_agent_sdk.types import HookCallback

from slimtools.errors import ConfigurationError
from slimtools.foreign import DEFAULT_MAX_TOKENS, Raw, Screen
from slimtools.foreign.hooks import ResultSlimmer, Slimmed
from slimtools.toolkit import Toolkit

__all__ = ["BUILTIN_TEXT", "ClaudeSlimming"]

BUILTIN_TEXT: Mapping[str, tuple[str, ...]] = {
    "Bash": ("stdout",),
    "Read": ("file", "content"),
}
"""Built-in tools whose output's text field is known: the path to it in the tool's output."""


class ClaudeSlimming:
    """A ``PostToolUse`` hook and a ``get_record`` MCP server for ``ClaudeAgentOptions``.

    Args:
        tools: per-tool option tables by the name the CLI gives
            (``"mcp__github__list_issues"``, ``"Bash"``), each merged over ``options``.
        toolkit: where handles are kept and ``get_record`` reads (default: a memory-backed
            toolkit of its own). Its ``companion_name`` must be the name the model calls
            ``get_record`` by, ``mcp__<server>__get_record``, e.g.
            ``Toolkit("claude", store=url, companion_name="mcp__slimtools__get_record")``.
        max_tokens: the budget of a tool with no options (``None``: such results pass).
        server: the name of the MCP server holding ``get_record``.
        **options: ``wrap()``'s options for every tool (``fields``, ``deny``, ``key``,
            ``max_tokens``, ``head``, ``tail``, ``on_unreadable``, ...).

    Raises:
        ConfigurationError: an unknown option or a bad value (``limit`` and ``max_limit``
            do not apply: a hook cannot add ``page`` to a tool it does not own), or a
            toolkit whose ``get_record`` is not named ``mcp__<server>__get_record``.
    """

    def __init__(
        self,
        *,
        tools: Mapping[str, Mapping[str, Any]] | None = None,
        toolkit: Toolkit | None = None,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        server: str = "slimtools",
        **options: Any,
    ) -> None:
        self.server_name = server
        record = f"mcp__{server}__get_record"
        if toolkit is None:
            toolkit = Toolkit(f"claude-{server}", companion_name=record)
        elif toolkit.companion_name != record:
            raise ConfigurationError(
                f"ClaudeSlimming: the toolkit's get_record is named "
                f"{toolkit.companion_name!r}, but the model calls it {record!r} (MCP server "
                f"{server!r}): build it with Toolkit(..., companion_name={record!r})"
            )
        self.slimmer = ResultSlimmer(
            toolkit, tools=tools, max_tokens=max_tokens, screen_native=_screen_blocks, **options
        )

    @property
    def toolkit(self) -> Toolkit:
        """Where the handles are kept (``toolkit.get_record`` reads them in Python too)."""
        return self.slimmer.toolkit

    @property
    def record_tool(self) -> str:
        """The name the model calls ``get_record`` by (``mcp__<server>__get_record``)."""
        return self.toolkit.companion_name

    async def hook(self, input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        """The ``PostToolUse`` callback: ``{}``, or the slimmed output in its tool's shape."""
        if input_data.get("hook_event_name") != "PostToolUse":
            return {}
        name = input_data.get("tool_name")
        if not isinstance(name, str):
            return {}
        response = input_data.get("tool_response")
        mcp = name.startswith("mcp__")
        raw = _mcp_raw(response) if mcp else _builtin_raw(name, response)
        if raw is None:
            return {}
        result = await self.slimmer.aslim(
            name, raw, call_id=tool_use_id or input_data.get("tool_use_id")
        )
        if result is None:
            return {}
        if mcp:
            key, output = "updatedMCPToolOutput", _mcp_output(result)
        else:
            key, output = "updatedToolOutput", _builtin_output(name, response, result)
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", key: output}}

    @property
    def matcher(self) -> HookMatcher:
        """The hook as a ``HookMatcher`` for every tool."""
        # The SDK types the input as a union of TypedDicts; the hook reads it as a mapping.
        return HookMatcher(matcher=None, hooks=[cast("HookCallback", self.hook)])

    @property
    def server(self) -> McpSdkServerConfig:
        """The in-process MCP server whose one tool is ``get_record``."""
        kit = self.toolkit
        spec = kit.spec(kit.companion_name)

        async def handler(arguments: dict[str, Any]) -> dict[str, Any]:
            found = await kit.acall(kit.companion_name, arguments)
            return {"content": [{"type": "text", "text": found.text}], "is_error": found.is_error}

        record = SdkMcpTool(
            name="get_record",
            description=spec.description,
            input_schema=dict(spec.parameters),
            handler=handler,
            annotations=None,
        )
        return create_sdk_mcp_server(self.server_name, tools=[record])

    def apply(self, options: ClaudeAgentOptions) -> ClaudeAgentOptions:
        """``options`` with the hook first among its ``PostToolUse`` matchers, the
        ``get_record`` server among its MCP servers, and its tool allowed."""
        hooks = dict(options.hooks or {})
        hooks["PostToolUse"] = [self.matcher, *hooks.get("PostToolUse", [])]
        servers = options.mcp_servers
        if not isinstance(servers, Mapping):
            raise TypeError(
                "ClaudeSlimming.apply needs mcp_servers as a mapping (not a config file "
                f"path): add {self.server_name!r}: slimming.server to it yourself"
            )
        allowed = list(options.allowed_tools)
        if allowed and self.record_tool not in allowed:
            allowed.append(self.record_tool)
        return dataclasses.replace(
            options,
            hooks=hooks,
            mcp_servers={**servers, self.server_name: self.server},
            allowed_tools=allowed,
        )


def _mcp_raw(response: Any) -> Raw | None:
    """An MCP tool's response (its content blocks, or a result holding them) as a ``Raw``."""
    structured = None
    if isinstance(response, Mapping):
        structured = response.get("structuredContent")
        response = response.get("content")
    if isinstance(response, str):
        return Raw(texts=[response], native=[{"type": "text", "text": response}])
    if not isinstance(response, list):
        return None
    texts = [b["text"] for b in response if _is_text(b)]
    opaque = len(texts) != len(response)
    return Raw(texts=texts, structured=structured, opaque=opaque, native=response)


def _is_text(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "text" and "text" in block


def _screen_blocks(native: Any, screen: Screen) -> Any:
    """Every text block of an MCP content list screened; other blocks (images) kept."""
    if not isinstance(native, list):
        return native
    return [{**b, "text": screen.text(b["text"])} if _is_text(b) else b for b in native]


def _mcp_output(result: Slimmed) -> list[Any]:
    """The content blocks sent instead: the screened blocks of a passed-through result, else
    one text block."""
    if result.passed and isinstance(result.native, list):
        return list(result.native)
    return [{"type": "text", "text": result.text}]


def _builtin_raw(name: str, response: Any) -> Raw | None:
    """A known built-in tool's text as a ``Raw`` (None: a tool whose output is not known)."""
    path = BUILTIN_TEXT.get(name)
    text = _at(response, path) if path else None
    if not isinstance(text, str):
        return None
    if name == "Bash" and isinstance(response, Mapping):
        if response.get("isImage"):
            return None
        stderr = response.get("stderr")
        if isinstance(stderr, str) and stderr:  # slimmed and screened with stdout
            return Raw(texts=[text, stderr], native=response)
    return Raw(texts=[text], native=response)


def _builtin_output(name: str, response: Any, result: Slimmed) -> Any:
    """The tool's own output with its text field replaced (its schema kept)."""
    path = BUILTIN_TEXT[name]
    out = _replaced(response, path, result.text)
    if name == "Bash" and out.get("stderr"):
        out["stderr"] = ""  # it is part of the text that replaced stdout
    return out


def _at(value: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(step)
    return value


def _replaced(value: Any, path: tuple[str, ...], text: str) -> dict[str, Any]:
    head, *rest = path
    inner = text if not rest else _replaced(value[head], tuple(rest), text)
    return {**value, head: inner}
