"""Codec for Anthropic Messages (``tool_use`` blocks and ``tool_result`` blocks).

Results live as ``tool_result`` blocks inside user messages, several per message, each with
string or block-list content and an optional ``is_error``; a result's slot is its block
index. Replacing one result rebuilds that user message with a copied content list; other
blocks (text, images, ``cache_control`` markers) are kept as they are. Blocks may be dicts
or SDK objects (``ToolUseBlock`` from ``response.content``).

A ``cache_control`` marker is a prompt-cache breakpoint the client placed: clearing never
drops one nor moves it out of its result. On the tool_result block it stays where it is;
on a block of the result's content it goes onto the placeholder, which is then one text
block carrying it (the last marker, when the content held several: they all end up at
that one block).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from slimtools.clearing.formats._objects import get, updated
from slimtools.clearing.formats.base import (
    EMPTY_ARGS,
    Args,
    Decoded,
    ListedCalls,
    RawResult,
    content_text,
    context,
    decoded,
    make_call,
    make_result,
    normal_role,
    present,
)


def _blocks(message: Any) -> list[Any]:
    content = get(message, "content")
    return content if isinstance(content, list) else []


def _text(blocks: list[Any]) -> str:
    return "\n".join(
        get(b, "text")
        for b in blocks
        if get(b, "type") == "text" and isinstance(get(b, "text"), str)
    )


def _breakpoint(content: Any) -> Any:
    """The last ``cache_control`` marker among a result's content blocks (None: none)."""
    if isinstance(content, list):
        for block in reversed(content):
            mark = None if isinstance(block, str) else get(block, "cache_control")
            if mark is not None:
                return mark
    return None


def _text_block(text: str, mark: Any) -> dict[str, Any]:
    return {"type": "text", "text": text, "cache_control": mark}


class AnthropicCodec(ListedCalls):
    """Reads and rewrites Anthropic Messages API messages."""

    name = "anthropic"
    run_turns = False
    calls_field = "content"

    def decode(self, message: Any) -> Decoded:
        """Describe one Anthropic message."""
        role = get(message, "role")
        content = get(message, "content")
        if not isinstance(content, list):
            text = content_text(content)[0]
            return decoded(True, text) if role == "assistant" else context(text)
        if role == "assistant":
            calls = present(
                make_call(get(b, "id"), get(b, "name"), get(b, "input"))
                for b in content
                if get(b, "type") == "tool_use"
            )
            return decoded(True, _text(content), calls)
        results: list[RawResult | None] = [
            make_result(
                get(b, "tool_use_id"),
                None,
                get(b, "content"),
                slot,
                is_error=get(b, "is_error") is True,
            )
            for slot, b in enumerate(content)
            if get(b, "type") == "tool_result"
        ]
        return decoded(False, _text(content), (), present(results))

    def replace_results(self, message: Any, texts: Mapping[int, str]) -> Any:
        """The user message with the tool_result blocks at those slots holding the texts
        (a text block carrying the content's cache breakpoint, when it had one)."""
        blocks = list(_blocks(message))
        for slot, text in texts.items():
            mark = _breakpoint(get(blocks[slot], "content"))
            content: Any = text if mark is None else [_text_block(text, mark)]
            blocks[slot] = updated(blocks[slot], content=content)
        return updated(message, content=blocks)

    def restore_results(self, message: Any, originals: Mapping[int, Any]) -> Any:
        """The user message with the audited tool_result contents back, as they were."""
        blocks = list(_blocks(message))
        for slot, original in originals.items():
            blocks[slot] = updated(blocks[slot], content=original)
        return updated(message, content=blocks)

    def result_content(self, message: Any, slot: int) -> Any:
        """The tool_result block's content (a str or a list of blocks)."""
        return get(_blocks(message)[slot], "content")

    def role(self, message: Any) -> str | None:
        """The ``role`` field (a user message of tool_result blocks still says ``user``)."""
        return normal_role(get(message, "role"))

    def encode(self, message: Decoded, *, role: str = "user") -> Any:
        """A Messages API message dict that decodes as ``message`` (``system`` is not a
        message role here: it becomes a user message)."""
        text = [{"type": "text", "text": message.content_text}] if message.content_text else []
        if message.model_output:
            uses = [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.args}
                for c in message.calls
            ]
            return {"role": "assistant", "content": text + uses}
        if message.results:
            blocks: list[dict[str, Any]] = []
            for r in message.results:
                block: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": r.call_id,
                    "content": r.text,
                }
                if r.is_error:
                    block["is_error"] = True
                blocks.append(block)
            return {"role": "user", "content": text + blocks}
        return {"role": "user", "content": message.content_text}

    def is_call(self, entry: Any, call_ids: Collection[str]) -> bool:
        """A ``tool_use`` block with one of those ids."""
        return get(entry, "type") == "tool_use" and get(entry, "id") in call_ids

    def blank_entry(self, entry: Any, args: Args = EMPTY_ARGS) -> Any:
        """The block with ``input`` ``args`` (``{}`` by default)."""
        return updated(entry, input=dict(args))
