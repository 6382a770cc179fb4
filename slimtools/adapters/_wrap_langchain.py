"""``slimtools.wrap`` for LangChain tools (``BaseTool``, including langchain-mcp-adapters')."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

from slimtools.adapters.langchain import to_langchain_tools
from slimtools.proxy._forward import Plan, Raw
from slimtools.toolkit import Toolkit


def accepts(tool: Any) -> bool:
    """True for a LangChain tool."""
    return isinstance(tool, BaseTool)


def schema(tool: BaseTool) -> dict[str, Any]:
    """The JSON Schema the model is shown for ``tool``."""
    found = tool.tool_call_schema
    if isinstance(found, dict):
        return dict(found)
    result: dict[str, Any] = found.model_json_schema()  # type: ignore[union-attr]
    result.pop("title", None)
    return result


def raw_of(message: Any) -> Raw:
    """A ``ToolMessage`` (content and artifact) in neutral form.

    A langchain-mcp-adapters tool answers with a list of content blocks and an artifact
    ``{"structured_content": ...}``; a plain tool with text (or any value).
    """
    if not isinstance(message, ToolMessage):
        return Raw(texts=[message] if isinstance(message, str) else [], structured=message)
    content = message.content
    blocks = [content] if isinstance(content, str) else list(content)
    texts = [
        b if isinstance(b, str) else str(b.get("text", ""))
        for b in blocks
        if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
    ]
    artifact = message.artifact
    structured = artifact.get("structured_content") if isinstance(artifact, dict) else None
    return Raw(
        texts=texts,
        structured=structured,
        is_error=message.status == "error",
        opaque=len(texts) != len(blocks),
        native=message,
    )


def forwarder(tool: BaseTool, plan: Plan) -> Any:
    """A ``**arguments`` function that runs ``tool`` and shapes its result by ``plan``.

    Coroutine-only tools (langchain-mcp-adapters') are awaited; others run synchronously.
    """

    def call(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_call", "name": tool.name, "args": arguments, "id": _id()}

    if isinstance(tool, StructuredTool) and tool.func is None and tool.coroutine is not None:

        async def forward(**arguments: Any) -> Any:
            return plan.shape(raw_of(await tool.ainvoke(call(arguments))))

        return forward

    def forward_sync(**arguments: Any) -> Any:
        return plan.shape(raw_of(tool.invoke(call(arguments))))

    return forward_sync


def _id() -> str:
    return f"slimtools-{uuid.uuid4().hex[:12]}"


def build(kit: Toolkit, name: str) -> StructuredTool:
    """The toolkit's tool ``name`` as a LangChain tool."""
    return next(t for t in to_langchain_tools(kit) if t.name == name)
