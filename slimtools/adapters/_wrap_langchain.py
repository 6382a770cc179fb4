"""``slimtools.wrap`` for LangChain tools (``BaseTool``, including langchain-mcp-adapters')."""

from __future__ import annotations

import typing
import uuid
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, ToolException
from langchain_core.tools.base import get_all_basemodel_annotations
from pydantic import ValidationError
from pydantic.v1 import ValidationError as ValidationErrorV1

from slimtools.adapters.langchain import to_langchain_tools
from slimtools.foreign import Plan, Raw, Screen
from slimtools.toolkit import Toolkit

CONTEXT_CLASSES = frozenset(
    {
        ("langchain_core", "_DirectlyInjectedToolArg"),  # ToolRuntime
        ("langgraph", "InjectedState"),
        ("langgraph", "InjectedStore"),
        ("langchain_core", "InjectedToolCallId"),
    }
)
"""Parameters LangChain and LangGraph inject per call (``slimtools.foreign.WrapAdapter``)."""

HIDDEN_CLASSES = frozenset({("langchain_core", "InjectedToolArg")})
"""Other ``InjectedToolArg`` annotations: hidden from the model, still keying snapshots."""


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
    ``{"structured_content": ...}``; a plain tool with text, or the value it returned.
    """
    if isinstance(message, str):
        return Raw(texts=[message])
    if not isinstance(message, ToolMessage):
        return Raw(texts=[], structured=message)
    content = message.content
    blocks = [content] if isinstance(content, str) else list(content)
    texts = [
        b if isinstance(b, str) else str(b.get("text", ""))
        for b in blocks
        if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
    ]
    return Raw(
        texts=texts,
        structured=_artifact_data(message.artifact),
        is_error=message.status == "error",
        opaque=len(texts) != len(blocks),
        native=message,
    )


def _artifact_data(artifact: Any) -> Any:
    """The data of a ``ToolMessage`` artifact: langchain-mcp-adapters' structured content,
    else the records a ``content_and_artifact`` tool returns beside its summary."""
    if isinstance(artifact, dict) and "structured_content" in artifact:
        return artifact["structured_content"]
    return artifact if isinstance(artifact, (list, tuple, dict)) else None


def forwarder(tool: BaseTool, plan: Plan) -> Any:
    """A ``**arguments`` function that runs ``tool`` and shapes its result by ``plan``.

    A ``content_and_artifact`` tool (langchain-mcp-adapters') is called with a tool call, to
    get its blocks and artifact. Any other is called with plain arguments, so its records
    arrive as the function returned them: with a tool call LangChain would turn a record
    holding a ``datetime`` into a repr, and records with ``"type": "file"`` into content
    blocks. Its errors are then handled here as its ``handle_tool_error`` says.
    A tool with an ``InjectedToolCallId`` argument needs a tool call too. Coroutine-only
    tools are awaited; others run synchronously.
    """
    if tool.response_format == "content_and_artifact" or _takes_call_id(tool):
        return _by_tool_call(tool, plan)
    quiet = tool.model_copy(update={"handle_tool_error": False, "handle_validation_error": False})
    if isinstance(tool, StructuredTool) and tool.func is None and tool.coroutine is not None:

        async def forward(**arguments: Any) -> Any:
            try:
                value = await quiet.ainvoke(arguments)
            except (ToolException, ValidationError, ValidationErrorV1) as exc:
                return plan.shape(_error(tool, exc))
            return plan.shape(raw_of(value))

        return forward

    def forward_sync(**arguments: Any) -> Any:
        try:
            value = quiet.invoke(arguments)
        except (ToolException, ValidationError, ValidationErrorV1) as exc:
            return plan.shape(_error(tool, exc))
        return plan.shape(raw_of(value))

    return forward_sync


def _takes_call_id(tool: BaseTool) -> bool:
    """True when ``tool`` has an ``InjectedToolCallId`` argument: it needs a tool call."""
    if "tool_call_id" in getattr(tool, "_injected_args_keys", ()):
        return True
    schema = tool.args_schema
    if not isinstance(schema, type):
        return False
    for annotation in get_all_basemodel_annotations(schema).values():
        for extra in typing.get_args(annotation)[1:]:
            if extra is InjectedToolCallId or isinstance(extra, InjectedToolCallId):
                return True
    return False


def _by_tool_call(tool: BaseTool, plan: Plan) -> Any:
    def call(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_call", "name": tool.name, "args": arguments, "id": _id()}

    if isinstance(tool, StructuredTool) and tool.func is None and tool.coroutine is not None:

        async def forward(**arguments: Any) -> Any:
            return plan.shape(raw_of(await tool.ainvoke(call(arguments))))

        return forward

    def forward_sync(**arguments: Any) -> Any:
        return plan.shape(raw_of(tool.invoke(call(arguments))))

    return forward_sync


def _error(tool: BaseTool, exc: Exception) -> Raw:
    """The error ``tool`` would have answered with (as LangChain handles it), or a raise."""
    tool_error = isinstance(exc, ToolException)
    flag = tool.handle_tool_error if tool_error else tool.handle_validation_error
    if not flag:
        raise exc
    if isinstance(flag, str):
        text = flag
    elif callable(flag):
        text = str(flag(exc))  # type: ignore[arg-type]
    elif tool_error:
        text = str(exc.args[0]) if exc.args else "Tool execution error"
    else:
        text = "Tool input validation error"
    message = ToolMessage(text, tool_call_id=_id(), name=tool.name, status="error")
    return Raw(texts=[text], is_error=True, native=message)


def screen_native(message: Any, screen: Screen) -> Any:
    """A passed-through ``ToolMessage`` with every text block and its artifact screened."""
    if not isinstance(message, ToolMessage):
        return message
    content = message.content
    if isinstance(content, str):
        screened: Any = screen.text(content)
    else:
        screened = [_screen_block(block, screen) for block in content]
    artifact = message.artifact
    if isinstance(artifact, dict) and "structured_content" in artifact:
        artifact = {**artifact, "structured_content": screen.data(artifact["structured_content"])}
    elif artifact is not None:
        artifact = screen.data(artifact)
    return message.model_copy(update={"content": screened, "artifact": artifact})


def _screen_block(block: Any, screen: Screen) -> Any:
    if isinstance(block, str):
        return screen.text(block)
    if (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ):
        return {**block, "text": screen.text(block["text"])}
    return block


def _id() -> str:
    return f"slimtools-{uuid.uuid4().hex[:12]}"


def build(kit: Toolkit, name: str) -> StructuredTool:
    """The toolkit's tool ``name`` as a LangChain tool."""
    return next(t for t in to_langchain_tools(kit) if t.name == name)
