"""Codec for OpenAI Chat Completions messages (``tool_calls`` and ``role: "tool"``).

Messages are dicts, or SDK objects such as ``ChatCompletionMessage`` appended straight from
a response; a rewritten SDK object is rebuilt with ``model_copy``. Arguments are JSON text,
so blanking them writes ``"{}"``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from slimtools.clearing._codec import (
    OTHER,
    Decoded,
    RawCall,
    compact,
    content_text,
    decoded,
    get,
    make_call,
    make_result,
    updated,
)


def _call(entry: Any) -> RawCall | None:
    function = get(entry, "function")
    if function is not None:
        return make_call(get(entry, "id"), get(function, "name"), get(function, "arguments"))
    custom = get(entry, "custom")  # {"type": "custom", "custom": {"name", "input"}}
    if custom is not None:
        return make_call(get(entry, "id"), get(custom, "name"), {"input": get(custom, "input")})
    return None


def _blank(entry: Any) -> Any:
    function = get(entry, "function")
    if function is not None:
        return updated(entry, function=updated(function, arguments="{}"))
    custom = get(entry, "custom")
    if custom is not None:
        return updated(entry, custom=updated(custom, input=""))
    return entry


class OpenAIChatCodec:
    """Reads and rewrites OpenAI Chat Completions messages."""

    name = "openai_chat"
    run_turns = False

    def decode(self, message: Any) -> Decoded:
        """Describe one Chat Completions message."""
        role = get(message, "role")
        content = get(message, "content")
        if role == "tool":
            result = make_result(
                get(message, "tool_call_id"), get(message, "name"), content, 0, is_error=False
            )
            return decoded(False, "", (), compact([result]))
        text = content_text(content)[0]
        if role == "assistant":
            calls = compact(_call(entry) for entry in get(message, "tool_calls") or ())
            return decoded(True, text, calls)
        return decoded(False, text) if text else OTHER

    def replace_results(self, message: Any, texts: Mapping[int, str]) -> Any:
        """The tool message with its content replaced."""
        return updated(message, content=texts[0])

    def result_content(self, message: Any, slot: int) -> Any:
        """The tool message's content (a str or a list of text parts)."""
        return get(message, "content")

    def restore_results(self, message: Any, originals: Mapping[int, Any]) -> Any:
        """The tool message with its original content back."""
        return updated(message, content=originals[0])

    def blank_inputs(self, message: Any, call_ids: Collection[str]) -> Any:
        """The assistant message with those calls' ``arguments`` set to ``"{}"``."""
        calls = [
            _blank(entry) if get(entry, "id") in call_ids else entry
            for entry in get(message, "tool_calls") or ()
        ]
        return updated(message, tool_calls=calls)

    def input_snapshot(self, message: Any, call_id: str) -> Any:
        """The original ``tool_calls`` entries of that call: ``[[index, entry], ...]``."""
        return [
            [i, entry]
            for i, entry in enumerate(get(message, "tool_calls") or ())
            if get(entry, "id") == call_id
        ]

    def restore_inputs(self, message: Any, snapshots: Mapping[str, Any]) -> Any:
        """The assistant message with the audited ``tool_calls`` entries back."""
        calls = list(get(message, "tool_calls") or ())
        for snapshot in snapshots.values():
            for i, entry in snapshot:
                if 0 <= int(i) < len(calls):
                    calls[int(i)] = entry
        return updated(message, tool_calls=calls)
