"""Anthropic adapter: tool specs for the Messages API and ``tool_result`` dispatch.

Register a toolkit with ``tools=anthropic_tools(kit)``; when a response stops for
``tool_use``, append ``tool_result_message(kit, message)``: one user message holding a
``tool_result`` block for every ``tool_use`` block, in order (the API requires all results of
a turn in one message). A block carries the envelope text, or a message the model can act on
with ``is_error: true`` when the arguments were wrong or the tool failed.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

try:
    import anthropic  # noqa: F401  (fail early, naming the extra)
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.anthropic needs the Anthropic SDK: pip install 'slimtools[anthropic]'"
    ) from exc

from slimtools._fields import field_of
from slimtools.clearing.formats import ANTHROPIC
from slimtools.clearing.formats.base import unparsed
from slimtools.clearing.formats.view import get_codec

if TYPE_CHECKING:
    from anthropic.types import MessageParam, ToolParam, ToolResultBlockParam

    from slimtools.toolkit import Toolkit, ToolResult

__all__ = ["anthropic_tools", "atool_result_message", "tool_result_message"]

_Use = tuple[str, str, str | dict[str, Any], Any]
"""(tool_use id, tool name, input, toolset_name) of one ``tool_use`` block; an input that is
not an object is its JSON text, for ``kit.call`` to refuse."""


def anthropic_tools(kit: Toolkit) -> list[ToolParam]:
    """Tool definitions for ``client.messages.create(tools=...)``, get_record included.

    ``input_schema`` is the tool's parameter schema as is (``page``/``limit`` with their
    types, defaults and descriptions): the Messages API accepts optional parameters, so
    nothing needs rewriting.
    """
    tools: list[ToolParam] = []
    for spec in kit.tools:
        tool: ToolParam = {"name": spec.name, "input_schema": copy.deepcopy(spec.parameters)}
        if spec.description:
            tool["description"] = spec.description
        tools.append(tool)
    return tools


def _uses(message: Any) -> list[_Use]:
    """``tool_use`` blocks of a ``Message``, its dict form, or a list of content blocks, as
    the Anthropic codec reads them, each with the toolset it names."""
    blocks = message if isinstance(message, Sequence) else field_of(message, "content")
    if not isinstance(blocks, Sequence) or isinstance(blocks, str):
        return []
    calls = get_codec(ANTHROPIC).decode({"role": "assistant", "content": list(blocks)}).calls
    toolsets = {field_of(b, "id"): field_of(b, "toolset_name") for b in blocks}
    return [
        (c.id, c.name, c.args_text if unparsed(c.args) else c.args, toolsets.get(c.id))
        for c in calls
    ]


def _block(use: _Use, result: ToolResult) -> ToolResultBlockParam:
    block: ToolResultBlockParam = {
        "type": "tool_result",
        "tool_use_id": use[0],
        "content": result.text,
        "is_error": result.is_error,
    }
    if use[3] is not None:  # a toolset member's result must name the same toolset
        block["toolset_name"] = use[3]
    return block


def _message(blocks: list[ToolResultBlockParam]) -> MessageParam | None:
    return {"role": "user", "content": blocks} if blocks else None


def tool_result_message(
    kit: Toolkit, message: Any, *, session: str | None = None
) -> MessageParam | None:
    """Run every ``tool_use`` block of a response; return the user message with the results.

    Args:
        kit: the toolkit whose tools the model called.
        message: a ``Message``, its dict form, or a list of content blocks.
        session: the handle session (default: the one bound with ``slimtools.session``).

    Returns:
        ``{"role": "user", "content": [tool_result, ...]}``, or ``None`` when the message has
        no ``tool_use`` block. Never raises for bad arguments: they come back with
        ``is_error: true``.
    """
    uses = _uses(message)
    return _message([_block(u, kit.call(u[1], u[2], session=session, call_id=u[0])) for u in uses])


async def atool_result_message(
    kit: Toolkit, message: Any, *, session: str | None = None
) -> MessageParam | None:
    """:func:`tool_result_message` for async code, running the calls concurrently."""
    uses = _uses(message)
    results = await asyncio.gather(
        *(kit.acall(u[1], u[2], session=session, call_id=u[0]) for u in uses)
    )
    return _message([_block(u, r) for u, r in zip(uses, results, strict=True)])
