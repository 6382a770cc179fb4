"""Codec for OpenAI Responses input items (``function_call`` / ``function_call_output``).

The Responses format has no assistant message around calls, so a turn starts at each run of
consecutive model-output items (function calls, reasoning, assistant messages, hosted tool
calls): the items one response produced. Calls pair with outputs by ``call_id``; custom tool
calls (``custom_tool_call`` / ``custom_tool_call_output``) are handled the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from slimtools.clearing.formats._objects import get, updated
from slimtools.clearing.formats.base import (
    Decoded,
    WholeMessageResults,
    content_text,
    context,
    decoded,
    make_call,
    make_result,
    normal_role,
    one,
    result_message,
)

_CALLS = frozenset({"function_call", "custom_tool_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


def _is_model_item(kind: Any) -> bool:
    """Reasoning and hosted-tool items come from the model; their outputs do not."""
    return (
        isinstance(kind, str)
        and kind != "message"
        and not kind.endswith(("_output", "_response", "item_reference"))
    )


class OpenAIResponsesCodec(WholeMessageResults):
    """Reads and rewrites OpenAI Responses items."""

    name = "openai_responses"
    run_turns = True
    result_field = "output"

    def decode(self, message: Any) -> Decoded:
        """Describe one Responses item."""
        kind = get(message, "type")
        if kind in _OUTPUTS:
            output = get(message, "output")
            return result_message(
                make_result(get(message, "call_id"), None, output, 0, is_error=False)
            )
        if kind in _CALLS:  # custom tools send one free-form input instead of JSON arguments
            custom = kind == "custom_tool_call"
            args = {"input": get(message, "input")} if custom else get(message, "arguments")
            call = make_call(get(message, "call_id"), get(message, "name"), args)
            return decoded(True, calls=one(call))
        role = get(message, "role")
        text = content_text(get(message, "content"))[0]
        if role == "assistant" or (role is None and _is_model_item(kind)):
            # reasoning, web_search_call, ... : model output that starts or continues a turn
            return decoded(True, text)
        return context(text)

    def role(self, message: Any) -> str | None:
        """A message item's ``role``; calls and model items are the assistant's, outputs the
        tool's."""
        kind = get(message, "type")
        if kind in _OUTPUTS:
            return "tool"
        if kind in _CALLS or (get(message, "role") is None and _is_model_item(kind)):
            return "assistant"
        return normal_role(get(message, "role"))

    def text_message(self, text: str) -> Any:
        """A user message item of ``text``."""
        return {"type": "message", "role": "user", "content": text}

    def blank_inputs(self, message: Any, call_ids: Collection[str]) -> Any:
        """The call item with ``arguments`` ``"{}"`` (custom tools: an empty ``input``)."""
        if get(message, "call_id") not in call_ids:
            return message
        if get(message, "type") == "custom_tool_call":
            return updated(message, input="")
        return updated(message, arguments="{}")

    def input_snapshot(self, message: Any, call_id: str) -> Any:
        """The original call item as a whole."""
        return message

    def restore_inputs(self, message: Any, snapshots: Mapping[str, Any]) -> Any:
        """The audited call item."""
        snapshot = snapshots.get(get(message, "call_id"))
        return message if snapshot is None else snapshot
