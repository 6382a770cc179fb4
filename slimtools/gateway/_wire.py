"""What the gateway knows of each model API's request body: where the history is, what the
agent changes between rounds, and when to leave a request alone.

An :class:`Endpoint` names the clearing codec's format and the body field holding the
history (``messages`` or ``input``). Anthropic agents move their ``cache_control``
breakpoints every round and fold a string message into one text block to carry one, so the
history is *normalized* (breakpoints stripped, string content as one text block) before the
clearer sees it, and :func:`merge_back` puts the agent's own breakpoints on what is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slimtools.clearing.formats import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A model API route: its path, its clearing format and the field holding the history."""

    path: str
    format: str
    field: str
    counts_tokens: bool = False


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/v1/messages", ANTHROPIC, "messages"),
    Endpoint("/v1/messages/count_tokens", ANTHROPIC, "messages", counts_tokens=True),
    Endpoint("/chat/completions", OPENAI_CHAT, "messages"),
    Endpoint("/responses", OPENAI_RESPONSES, "input"),
)
"""The routes the gateway clears, matched as path suffixes: OpenAI-compatible servers put
them under ``/v1``, ``/openai/v1`` or nothing; Anthropic's are always under ``/v1``."""


def endpoint_of(method: str, path: str) -> Endpoint | None:
    """The model route a request goes to (None: forwarded without clearing)."""
    if method != "POST":
        return None
    path = path.partition("?")[0].rstrip("/")
    return next((e for e in ENDPOINTS if path.endswith(e.path)), None)


class UnreadableError(ValueError):
    """A request body the gateway cannot clear; it is forwarded unchanged."""


def history_of(body: Any, endpoint: Endpoint) -> list[Any]:
    """The history list of a parsed request body.

    Raises:
        UnreadableError: the body is not a JSON object or its history is not a list of objects.
    """
    if not isinstance(body, dict):
        raise UnreadableError(f"the body is a JSON {type(body).__name__}, not an object")
    history = body.get(endpoint.field)
    if isinstance(history, str) and endpoint.format == OPENAI_RESPONSES:
        raise UnreadableError("input is a plain string: no tool results to clear")
    if not isinstance(history, list):
        raise UnreadableError(f"{endpoint.field!r} is missing or not a list")
    if not all(isinstance(m, dict) for m in history):
        raise UnreadableError(f"{endpoint.field!r} holds an entry that is not an object")
    return history


def server_clearing(body: Mapping[str, Any]) -> bool:
    """Whether the request asks the server for ``clear_tool_uses`` (then it clears, not us)."""
    management = body.get("context_management")
    edits = management.get("edits") if isinstance(management, Mapping) else None
    if not isinstance(edits, list):
        return False
    return any(
        isinstance(e, Mapping) and str(e.get("type", "")).startswith("clear_tool_uses")
        for e in edits
    )


def continues_response(body: Mapping[str, Any]) -> bool:
    """Whether a Responses request builds on ``previous_response_id`` (history is upstream)."""
    return bool(body.get("previous_response_id"))


def normalize(message: dict[str, Any], format: str) -> dict[str, Any]:
    """The message as the clearer should see it: the same across rounds whatever the agent
    does to its breakpoints (the message itself when nothing needs changing)."""
    if format != ANTHROPIC:
        return message
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


def breakpoint_of(block: Any) -> Any:
    """The ``cache_control`` a block carries, on itself or on one of its inner blocks."""
    if not isinstance(block, dict):
        return None
    if "cache_control" in block:
        return block["cache_control"]
    inner = block.get("content")
    if isinstance(inner, list):
        for b in inner:
            if isinstance(b, dict) and "cache_control" in b:
                return b["cache_control"]
    return None


def merge_back(original: dict[str, Any], filed: Any, cleared: Any, format: str) -> Any:
    """What to send for one message the clearer rewrote: its cleared content, with the
    agent's own fields and breakpoints of this round (``filed`` is what the clearer read).

    Blocks the clearer left alone are the agent's own blocks of this request; a cleared
    block keeps the breakpoint its original carried, so the request asks for the same cache
    breakpoints the agent asked for.
    """
    if format != ANTHROPIC or not isinstance(cleared, dict):
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
        mark = breakpoint_of(agent)
        marked = mark is not None and isinstance(block, dict)
        blocks.append({**block, "cache_control": mark} if marked else block)
    return {**original, "content": blocks}
