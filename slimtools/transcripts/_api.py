"""History files in the clearing core's own formats, and LangChain ``messages_to_dict`` dumps.

OpenAI Chat Completions, OpenAI Responses and Anthropic Messages histories are read as
stored: a JSON list of messages, a request body (``{"model": ..., "messages": [...]}``,
Anthropic's with a top-level ``system``, or a Responses body with ``input`` and
``instructions``) or JSON Lines with one message per line. Which of the three a history is
comes from :func:`slimtools.clearing.detect_format`, the clearing core's own rule. A body's
``system`` or ``instructions`` becomes a leading system message, since it is billed too.

LangChain dumps (``[{"type": "human", "data": {...}}, ...]``) become LangChain messages
through ``langchain_core.messages.messages_from_dict`` when LangChain is installed, and
OpenAI Chat dicts otherwise (the core never imports LangChain); both measure alike.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from slimtools.clearing import detect_format
from slimtools.clearing.formats import API_FORMATS, message_format
from slimtools.clearing.formats.view import get_codec, safe_decode
from slimtools.transcripts._jsonio import iter_jsonl, reading
from slimtools.transcripts._model import (
    HistoryFormat,
    JsonPath,
    Location,
    MalformedError,
    Message,
    Origin,
    Run,
    Source,
)
from slimtools.transcripts._reader import Entries, Progress, Reader, RunStream, unzip

RESPONSES_ITEM_TYPES = frozenset(
    {
        *("message", "function_call", "function_call_output", "reasoning"),
        *("custom_tool_call", "custom_tool_call_output", "web_search_call", "item_reference"),
        *("file_search_call", "computer_call", "computer_call_output", "local_shell_call"),
        *("local_shell_call_output", "mcp_call", "mcp_list_tools", "image_generation_call"),
    }
)
LANGCHAIN_TYPES = frozenset(
    {"human", "ai", "system", "tool", "function", "chat", "remove"}
    | {f"{kind}MessageChunk" for kind in ("AI", "Human", "System", "Tool", "Function", "Chat")}
)


def content_path(format: str, slot: int) -> JsonPath:
    """Where a result's content sits inside a message of ``format`` (as its codec reads it)."""
    if format == "anthropic":
        return ("content", slot, "content")
    if format == "openai_responses":
        return ("output",)
    return ("content",)


def origins_for(
    messages: Sequence[Any],
    ats: Sequence[Location],
    format: str,
    inner: Callable[[int], JsonPath],
) -> tuple[Origin, ...]:
    """The origin of each message: its place, and each result's content at ``inner(slot)``."""
    codec = get_codec(format)
    out = []
    for message, at in zip(messages, ats, strict=True):
        slots = [r.slot for r in safe_decode(codec, message).results]
        out.append(Origin(at, {s: at.child(*inner(s)) for s in slots}) if slots else Origin(at))
    return tuple(out)


def is_message(value: Any) -> bool:
    """A message or Responses item of one of the three API formats."""
    return isinstance(value, dict) and (
        isinstance(value.get("role"), str) or value.get("type") in RESPONSES_ITEM_TYPES
    )


def is_langchain_dict(value: Any) -> bool:
    """One entry of a ``messages_to_dict`` dump."""
    return (
        isinstance(value, dict)
        and value.get("type") in LANGCHAIN_TYPES
        and isinstance(value.get("data"), dict)
    )


def body_kind(doc: dict[str, Any]) -> str | None:
    """``"langchain"``, ``"api"`` (one of the three API formats) or None for a dict."""
    messages = doc.get("messages")
    if isinstance(messages, list):
        if messages and all(is_langchain_dict(m) for m in messages[:3]):
            return "langchain"
        if not messages or is_message(messages[0]):
            return "api"
    if isinstance(doc.get("input"), list):
        return "api"
    return None


def api_run(
    messages: Sequence[Any], ats: Sequence[Location], format: HistoryFormat | None = None
) -> Run:
    """A history of one of the three API formats, as stored; ``format`` detected when None."""
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise MalformedError(f"message {i} is a {type(message).__name__}, not an object")
    history = list(messages)
    found = cast(HistoryFormat, format or detect_format(history))
    if found not in API_FORMATS:
        raise MalformedError(f"{found} is not a format of stored API histories")
    origins = origins_for(history, ats, found, lambda slot: content_path(found, slot))
    return Run(history, origins, found)


def body_run(doc: dict[str, Any], base: Location, format: HistoryFormat | None = None) -> Run:
    """A request body: its messages (or Responses ``input``), system prompt first."""
    key = "messages" if isinstance(doc.get("messages"), list) else "input"
    items = doc.get(key)
    if not isinstance(items, list):
        raise MalformedError("a request body needs a 'messages' or 'input' list")
    if format is None and key == "input":
        format = "openai_responses"
    system_key = "system" if key == "messages" else "instructions"
    if format is None and key == "messages" and "system" in doc:
        format = "anthropic"  # the OpenAI Chat body has no top-level system prompt
    run = api_run(items, [base.child(key, i) for i in range(len(items))], format)
    if doc.get(system_key) in (None, "", []):
        return run
    system: Message = {"role": "system", "content": doc[system_key]}
    return run._replace(
        messages=[system, *run.messages], origins=(Origin(base.child(system_key)), *run.origins)
    )


def langchain_run(dicts: Sequence[Any], ats: Sequence[Location]) -> Run:
    """A ``messages_to_dict`` dump: LangChain messages, or OpenAI Chat dicts without LangChain.

    ``remove`` entries (LangGraph's deletion markers) are not messages and are dropped.
    """
    kept = [(d, at) for d, at in zip(dicts, ats, strict=True) if _kind(d) != "remove"]
    entries = [d for d, _ in kept]
    places = [at for _, at in kept]
    try:
        from langchain_core.messages import messages_from_dict
    except ImportError:
        history: list[Any] = [_as_chat(d, i) for i, d in enumerate(entries)]
        format: HistoryFormat = "openai_chat"
    else:
        try:
            history = messages_from_dict(entries)
        except Exception as exc:  # pydantic's ValidationError, KeyError, ...: all malformed
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise MalformedError(f"not a LangChain message dump ({reason})") from None
        format = "langchain"
    return Run(
        history, origins_for(history, places, format, lambda _slot: ("data", "content")), format
    )


def _kind(entry: Any) -> str:
    if not is_langchain_dict(entry):
        raise MalformedError(f"not a LangChain message dict: {str(entry)[:60]}")
    kind = str(entry["type"])
    return kind.removesuffix("MessageChunk").lower() if kind.endswith("Chunk") else kind


_ROLES = {"human": "user", "ai": "assistant", "system": "system", "function": "function"}


def _as_chat(entry: dict[str, Any], index: int) -> Message:
    """One LangChain message dict as an OpenAI Chat message (when LangChain is missing)."""
    kind, data = _kind(entry), entry["data"]
    content = data.get("content", "")
    if kind == "tool":
        call_id = data.get("tool_call_id")
        if not isinstance(call_id, str):
            raise MalformedError(f"LangChain tool message {index} has no tool_call_id")
        return {"role": "tool", "tool_call_id": call_id, "content": content}
    if kind == "chat":
        return {"role": str(data.get("role", "user")), "content": content}
    message: Message = {"role": _ROLES.get(kind, "user"), "content": content}
    if kind == "ai":
        calls = [_chat_call(c) for c in data.get("tool_calls") or () if isinstance(c, dict)]
        if not calls:  # older dumps keep OpenAI's own form in additional_kwargs
            calls = list((data.get("additional_kwargs") or {}).get("tool_calls") or ())
        if calls:
            message["tool_calls"] = calls
    return message


def _chat_call(call: dict[str, Any]) -> dict[str, Any]:
    arguments = json.dumps(call.get("args") or {}, ensure_ascii=False)
    return {
        "id": call.get("id"),
        "type": "function",
        "function": {"name": call.get("name"), "arguments": arguments},
    }


def langchain_body_run(doc: dict[str, Any], base: Location) -> Run:
    """A LangChain dump held in an object's ``messages`` list."""
    items = doc.get("messages")
    if not isinstance(items, list):
        raise MalformedError("a LangChain dump needs a 'messages' list")
    return langchain_run(items, [base.child("messages", i) for i in range(len(items))])


def stream_messages(path: Path, forced: Source | None, report: Progress) -> RunStream:
    """A JSONL file of API messages; its format is the first telling message's (see
    :func:`slimtools.clearing.detect_format`), so the messages before that one are held."""
    records = iter_jsonl(path, progress=report)
    held: deque[Any] = deque()
    found = forced
    with reading(path):
        for number, value in records:
            held.append(_message(number, value))
            found = found or cast("Source | None", message_format(value))
            if found is not None:
                break
    fmt = cast(HistoryFormat, found or "openai_chat")

    def messages() -> Iterator[Any]:
        with reading(path):
            while held:  # handed out one by one, so none is kept once used
                yield held.popleft()
            for number, value in records:
                yield _message(number, value)

    return RunStream(path.name, fmt, fmt, messages(), path, streamed=True)


def _message(number: int, value: Any) -> Any:
    if not isinstance(value, dict):
        raise MalformedError(f"a {type(value).__name__}, not a message object", line=number)
    return value


def _read_api(entries: Entries, forced: Source | None) -> Run:
    values, ats = unzip(entries)
    return api_run(values, ats, cast("HistoryFormat | None", forced))


LANGCHAIN = Reader(
    "langchain",
    "langchain",
    "either",
    read_run=lambda doc, base, _forced: langchain_body_run(doc, base),
    read_messages=lambda entries, _forced: langchain_run(*unzip(entries)),
    is_run=lambda doc: body_kind(doc) == "langchain",
    is_entry=is_langchain_dict,
)
"""A LangChain ``messages_to_dict`` dump: a list, JSON Lines, or an object's ``messages``."""

API = Reader(
    "api",
    None,
    "either",
    read_run=lambda doc, base, forced: body_run(doc, base, cast("HistoryFormat | None", forced)),
    read_messages=_read_api,
    is_run=lambda doc: body_kind(doc) == "api",
    is_entry=is_message,
    stream=stream_messages,
    forced_by=API_FORMATS,
)
"""A history of the three API formats: a message list, JSON Lines, or a request body."""
