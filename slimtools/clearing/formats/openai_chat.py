"""Codec for OpenAI Chat Completions messages (``tool_calls`` and ``role: "tool"``).

Messages are dicts, or SDK objects such as ``ChatCompletionMessage`` appended straight from
a response; a rewritten SDK object is rebuilt with ``model_copy``. Arguments are JSON text,
so blanking them writes ``"{}"``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from slimtools.clearing.formats._objects import get, updated
from slimtools.clearing.formats.base import (
    Decoded,
    ListedCalls,
    RawCall,
    WholeMessageResults,
    content_text,
    context,
    decoded,
    make_call,
    make_result,
    normal_role,
    present,
    result_message,
)


def _call(entry: Any) -> RawCall | None:
    function = get(entry, "function")
    if function is not None:
        return make_call(get(entry, "id"), get(function, "name"), get(function, "arguments"))
    custom = get(entry, "custom")  # {"type": "custom", "custom": {"name", "input"}}
    if custom is not None:
        return make_call(get(entry, "id"), get(custom, "name"), {"input": get(custom, "input")})
    return None


class OpenAIChatCodec(WholeMessageResults, ListedCalls):
    """Reads and rewrites OpenAI Chat Completions messages."""

    name = "openai_chat"
    run_turns = False

    def decode(self, message: Any) -> Decoded:
        """Describe one Chat Completions message."""
        role = get(message, "role")
        content = get(message, "content")
        if role == "tool":
            return result_message(
                make_result(
                    get(message, "tool_call_id"), get(message, "name"), content, 0, is_error=False
                )
            )
        text = content_text(content)[0]
        if role == "assistant":
            calls = present(_call(entry) for entry in get(message, "tool_calls") or ())
            return decoded(True, text, calls)
        return context(text)

    def role(self, message: Any) -> str | None:
        """The ``role`` field (``developer`` counts as system)."""
        return normal_role(get(message, "role"))

    def text_message(self, text: str) -> Any:
        """A user message dict of ``text``."""
        return {"role": "user", "content": text}

    def is_call(self, entry: Any, call_ids: Collection[str]) -> bool:
        """Every ``tool_calls`` entry is a call; this one if its id is among those."""
        return get(entry, "id") in call_ids

    def blank_entry(self, entry: Any) -> Any:
        """The entry with ``arguments`` ``"{}"`` (custom tools: an empty ``input``)."""
        function = get(entry, "function")
        if function is not None:
            return updated(entry, function=updated(function, arguments="{}"))
        custom = get(entry, "custom")
        if custom is not None:
            return updated(entry, custom=updated(custom, input=""))
        return entry
