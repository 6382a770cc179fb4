"""LangChain v1's ``ContextEditingMiddleware`` with ``ClearToolUsesEdit``, on LangChain messages."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

from slimtools.clearing import ClearingPolicy, clear_stale_results, detect_format


def has_langchain() -> bool:
    """Whether LangChain v1 (``langchain.agents.middleware``) can be imported."""
    try:
        import langchain.agents.middleware.context_editing  # noqa: F401
    except ImportError:
        return False
    return True


def context_editing_step(
    edit: Any = None, *, deep_copy: bool = True
) -> Callable[[list[Any]], list[Any]]:
    """What ``ContextEditingMiddleware(edits=[edit])`` does to the messages of each call.

    Args:
        edit: a ``ClearToolUsesEdit``; LangChain's defaults when None.
        deep_copy: copy the history as the middleware does (``copy.deepcopy``). The edit
            only ever replaces list entries (``model_copy``), so a shallow copy gives the
            same messages; measuring code uses it to share unchanged message objects.

    Returns:
        A callable from LangChain messages to the edited copy the model would receive.
    """
    try:
        from langchain.agents.middleware.context_editing import ClearToolUsesEdit
        from langchain_core.messages.utils import count_tokens_approximately
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "LangChain's ClearToolUsesEdit needs: pip install 'slimtools[langchain]'"
        ) from exc
    edit = edit if edit is not None else ClearToolUsesEdit()

    def step(messages: list[Any]) -> list[Any]:
        edited = copy.deepcopy(list(messages)) if deep_copy else list(messages)
        edit.apply(edited, count_tokens=count_tokens_approximately)
        return edited

    return step


def _fallback_step(messages: list[Any]) -> list[Any]:
    policy = ClearingPolicy.from_anthropic(placeholder="[cleared]")
    return clear_stale_results(messages, policy)


def langchain_defaults_step(
    history: Sequence[Any],
) -> tuple[list[Any], Callable[[list[Any]], list[Any]]]:
    """The history to replay and the per-call step that reproduces LangChain's defaults.

    With LangChain installed, the history converted to LangChain messages and
    :func:`context_editing_step`; without it, the history as given and a per-call
    emulation of the same documented defaults through the slimtools core.
    """
    if not has_langchain():
        return list(history), _fallback_step
    return to_langchain_messages(history), context_editing_step(deep_copy=False)


def to_langchain_messages(history: Sequence[Any], format: str | None = None) -> list[Any]:
    """Convert an OpenAI Chat or Anthropic history to LangChain messages.

    OpenAI Chat goes through LangChain's own ``convert_to_messages``. Anthropic messages
    become ``AIMessage`` (text blocks as content, ``tool_use`` as ``tool_calls``; thinking
    blocks are dropped, as the clearing core does not bill them either) and, for each user
    message, one ``ToolMessage`` per ``tool_result`` block followed by a ``HumanMessage``
    for the remaining blocks. LangChain histories are returned as they are.
    """
    from langchain_core.messages import convert_to_messages

    fmt = format or detect_format(history)
    if fmt == "langchain":
        return list(history)
    if fmt == "openai_chat":
        return list(convert_to_messages([_chat_dict(m) for m in history]))
    if fmt == "anthropic":
        return [m for message in history for m in _from_anthropic(message)]
    raise ValueError(f"cannot convert a {fmt} history to LangChain messages")


def _chat_dict(message: dict[str, Any]) -> dict[str, Any]:
    """LangChain wants string content; OpenAI allows None next to tool calls."""
    if message.get("content") is None:
        return {**message, "content": ""}
    return message


def _from_anthropic(message: dict[str, Any]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    text = "\n".join(
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    )
    if message.get("role") == "assistant":
        calls = [
            {"id": b["id"], "name": b["name"], "args": b.get("input") or {}}
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        return [AIMessage(content=text, tool_calls=calls)]
    out: list[Any] = [
        ToolMessage(
            content=_result_content(b.get("content")),
            tool_call_id=b["tool_use_id"],
            status="error" if b.get("is_error") else "success",
        )
        for b in blocks
        if b.get("type") == "tool_result"
    ]
    rest = [b for b in blocks if b.get("type") != "tool_result"]
    if rest:
        plain = all(b.get("type") == "text" for b in rest)
        out.append(HumanMessage(content=text if plain else rest))
    return out


def _result_content(content: Any) -> Any:
    if content is None:
        return ""
    if isinstance(content, (str, list)):
        return content
    return json.dumps(content)
