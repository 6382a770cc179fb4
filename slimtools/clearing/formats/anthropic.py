"""Codec for Anthropic Messages (``tool_use`` blocks and ``tool_result`` blocks).

Results live as ``tool_result`` blocks inside user messages, several per message, each with
string or block-list content and an optional ``is_error``; a result's slot is its block
index. Replacing one result rebuilds that user message with a copied content list; other
blocks (text, images, ``cache_control`` markers) are kept as they are. Blocks may be dicts
or SDK objects (``ToolUseBlock`` from ``response.content``).

A ``cache_control`` marker is a prompt-cache breakpoint the client placed: clearing never
drops one nor moves it out of its result (docs/clearing.md, "At the edges").

Agents move their breakpoints every round (Claude Code marks the last block) and fold a
string message into one text block to carry one; :func:`without_breakpoints` gives the
message as it stays across rounds and :func:`with_breakpoints` puts the agent's own back on
what was cleared (the gateway's ``normalize``/``merge_back`` for this format).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from slimtools.clearing.formats._objects import get, updated
from slimtools.clearing.formats.base import (
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


def breakpoint_of(block: Any) -> Any:
    """The ``cache_control`` marker a block carries: its own, else the last of its content's
    blocks (None: none)."""
    mark = None if isinstance(block, str) else get(block, "cache_control")
    return mark if mark is not None else _breakpoint(get(block, "content"))


def without_breakpoints(message: dict[str, Any]) -> dict[str, Any]:
    """The message with no ``cache_control`` on its blocks or their content's blocks, and
    string content as one text block: the same across rounds whatever the agent does to
    its breakpoints (the message itself when nothing needs changing)."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": [{"type": "text", "text": content}]}
    if not isinstance(content, list) or not any(_marked(b) for b in content):
        return message
    return {**message, "content": [_strip(b) for b in content]}


def _marked(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    if "cache_control" in block:
        return True
    inner = block.get("content")
    return isinstance(inner, list) and any(
        isinstance(b, dict) and "cache_control" in b for b in inner
    )


def _strip(block: Any) -> Any:
    if not _marked(block):
        return block
    out = {k: v for k, v in block.items() if k != "cache_control"}
    inner = out.get("content")
    if isinstance(inner, list):
        out["content"] = [
            {k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
            for b in inner
        ]
    return out


def with_breakpoints(original: dict[str, Any], filed: Any, cleared: Any) -> Any:
    """What to send for one message the clearer rewrote: its cleared content, with the
    agent's own fields and breakpoints of this round (``original``: the agent's message;
    ``filed``: :func:`without_breakpoints` of it, which the clearer read).

    Blocks the clearer left alone are the agent's own blocks of this request; a cleared
    block carries the breakpoint its original carried (:func:`breakpoint_of`), so the
    request asks for the same cache breakpoints the agent asked for.
    """
    if not isinstance(cleared, dict):
        return cleared
    new_blocks = cleared.get("content")
    old_blocks = filed.get("content") if isinstance(filed, dict) else None
    mine = original.get("content")
    if not (isinstance(new_blocks, list) and isinstance(old_blocks, list)):
        return {**original, "content": new_blocks}
    mine_list = mine if isinstance(mine, list) else [{"type": "text", "text": mine}]
    blocks = []
    for i, block in enumerate(new_blocks):
        agent = mine_list[i] if i < len(mine_list) else None
        if i < len(old_blocks) and block is old_blocks[i] and agent is not None:
            blocks.append(agent)
            continue
        mark = None if agent is None else breakpoint_of(agent)
        marked = mark is not None and isinstance(block, dict)
        blocks.append({**block, "cache_control": mark} if marked else block)
    return {**original, "content": blocks}


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

    def text_message(self, text: str) -> Any:
        """A user message dict of ``text``."""
        return {"role": "user", "content": text}

    def is_call(self, entry: Any, call_ids: Collection[str]) -> bool:
        """A ``tool_use`` block with one of those ids."""
        return get(entry, "type") == "tool_use" and get(entry, "id") in call_ids

    def blank_entry(self, entry: Any) -> Any:
        """The block with ``input`` ``{}``."""
        return updated(entry, input={})
