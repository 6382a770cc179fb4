"""Codec for LangChain messages (``AIMessage.tool_calls`` / ``ToolMessage``).

Imported only when a history holds langchain_core objects, so ``import slimtools`` never
pulls in LangChain. Replacements are ``model_copy`` updates: the message ``id``,
``tool_call_id``, ``name``, ``status`` and ``artifact`` stay, so LangGraph's
``add_messages`` overwrites the old message in place. LangChain's own
``ContextEditingMiddleware`` marks what it cleared in ``response_metadata``; such results
count as already cleared.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import Any

import orjson

from slimtools.clearing.formats._objects import get
from slimtools.clearing.formats.base import (
    OTHER,
    Decoded,
    RawCall,
    RawResult,
    WholeMessageResults,
    content_text,
    context,
    make_call,
    make_result,
    new_tuple,
    normal_role,
    one,
    present,
    put_back,
    result_message,
)
from slimtools.clearing.marker import MARKER_PREFIX

_TOOL = frozenset({"tool", "ToolMessageChunk"})
_AI = frozenset({"ai", "AIMessageChunk"})


class LangChainCodec(WholeMessageResults):
    """Reads and rewrites ``langchain_core.messages`` objects."""

    name = "langchain"
    run_turns = False

    def decode(self, message: Any) -> Decoded:
        """Describe one LangChain message."""
        # The fields, read from the instance __dict__: no lookup through a deep hierarchy.
        fields = getattr(message, "__dict__", None)
        if not isinstance(fields, dict):
            return OTHER
        kind = fields.get("type")
        content = fields.get("content")
        if kind in _TOOL:
            meta = fields.get("response_metadata")
            cleared = False
            if meta and isinstance(meta, dict):  # usually empty: nothing to look at
                editing = meta.get("context_editing")
                cleared = isinstance(editing, dict) and bool(editing.get("cleared"))
            call_id = fields.get("tool_call_id")
            if (
                type(content) is str
                and content
                and not cleared
                and not content.startswith(MARKER_PREFIX)
                and type(call_id) is str
                and call_id
            ):
                # The common result: plain text, not a placeholder (make_result, inlined).
                name = fields.get("name")
                raw = new_tuple(
                    RawResult,
                    (
                        call_id,
                        name if type(name) is str else None,
                        content,
                        0,
                        fields.get("status") == "error",
                        False,
                        True,
                        (),
                    ),
                )
                return new_tuple(Decoded, (False, "", (), (raw,)))
            return result_message(
                make_result(
                    call_id,
                    fields.get("name"),
                    content,
                    0,
                    is_error=fields.get("status") == "error",
                    cleared=cleared,
                )
            )
        text = content if isinstance(content, str) else content_text(content)[0]
        if kind in _AI:
            calls = fields.get("tool_calls")
            if calls and len(calls) == 1 and not fields.get("invalid_tool_calls"):
                tc = calls[0]  # the common single call, without the list plumbing
                if type(tc) is dict:
                    found = _one_call(tc.get("id"), tc.get("name"), tc.get("args"))
                else:
                    found = one(make_call(get(tc, "id"), get(tc, "name"), get(tc, "args")))
            else:
                found = present(
                    make_call(get(tc, "id"), get(tc, "name"), get(tc, "args"))
                    for tc in _calls(message)
                )
            return new_tuple(Decoded, (True, text, found, ()))
        return context(text)

    def role(self, message: Any) -> str | None:
        """The message ``type`` (``human``, ``ai``, ``system``, ``tool``) as a role."""
        kind = getattr(message, "type", None)
        if isinstance(kind, str) and kind.endswith("Chunk"):  # AIMessageChunk, ...
            kind = {"AIMessageChunk": "ai", "ToolMessageChunk": "tool"}.get(kind, kind)
        return normal_role(kind)

    def text_message(self, text: str) -> Any:
        """A ``HumanMessage`` of ``text``."""
        from langchain_core.messages import HumanMessage

        return HumanMessage(content=text)

    def blank_inputs(self, message: Any, call_ids: Collection[str]) -> Any:
        """Empty the arguments in tool_calls, additional_kwargs and content blocks."""
        return _rewrite(message, call_ids, {})

    def input_snapshot(self, message: Any, call_id: str) -> Any:
        """Every entry holding the call's arguments: ``[[field, index, entry], ...]``."""
        return [[where, i, entry] for where, i, entry in _copies(message, {call_id})]

    def restore_inputs(self, message: Any, snapshots: Mapping[str, Any]) -> Any:
        """Put back the audited entries of those calls."""
        return _rewrite(message, {}, snapshots)


def _one_call(call_id: Any, name: Any, args: Any) -> tuple[RawCall, ...]:
    """``one(make_call(...))`` for a call with a name and plain JSON arguments, built
    directly (a test pins it to ``make_call``); anything else takes ``make_call``."""
    if type(call_id) is str and call_id and type(name) is str and type(args) is dict and args:
        try:
            text = orjson.dumps(args).decode()
        except (TypeError, orjson.JSONEncodeError):
            return one(make_call(call_id, name, args))
        return (new_tuple(RawCall, (call_id, name, args, text)),)
    return one(make_call(call_id, name, args))


def _calls(message: Any) -> list[Any]:
    return [*(getattr(message, "tool_calls", None) or ()), *_invalid(message)]


def _invalid(message: Any) -> list[Any]:
    return list(getattr(message, "invalid_tool_calls", None) or ())


def _copies(message: Any, ids: Collection[str]) -> Iterator[tuple[str, int, Any]]:
    """Each (field, index, entry) of ``message`` that carries arguments of a call in ``ids``."""
    for where in ("tool_calls", "invalid_tool_calls"):
        for i, call in enumerate(getattr(message, where, None) or ()):
            if get(call, "id") in ids:
                yield where, i, call
    raw = (getattr(message, "additional_kwargs", None) or {}).get("tool_calls")
    for i, call in enumerate(raw if isinstance(raw, list) else ()):
        if get(call, "id") in ids:
            yield "additional_kwargs", i, call
    content = getattr(message, "content", None)
    for i, block in enumerate(content if isinstance(content, list) else ()):
        if (
            isinstance(block, dict)
            and block.get("type") in ("tool_use", "tool_call", "function_call")
            and (block.get("id") in ids or block.get("call_id") in ids)
        ):
            yield "content", i, block


def _blank(where: str, entry: Any) -> Any:
    """The entry with its arguments emptied, valid JSON in the same representation (``"{}"``
    where the entry holds a JSON string, ``{}`` where it holds a dict)."""
    text = "{}"
    if where == "invalid_tool_calls":
        return {**entry, "args": text}
    if where == "tool_calls":
        return {**entry, "args": {}}
    if where == "additional_kwargs":
        function = entry.get("function") if isinstance(entry, dict) else None
        if isinstance(function, dict):
            return {**entry, "function": {**function, "arguments": text}}
        return entry
    kind = entry.get("type")
    blanked = dict(entry)
    if kind == "tool_use":
        blanked["input"] = {}
        if "partial_json" in blanked:
            blanked["partial_json"] = text
    elif kind == "tool_call":
        blanked["args"] = {}
    else:
        blanked["arguments"] = text
    return blanked


def _rewrite(message: Any, blanks: Collection[str], snapshots: Mapping[str, Any]) -> Any:
    """Empty the argument copies of the calls in ``blanks``, or put back ``snapshots``."""
    plan: dict[str, dict[int, Any]] = {}
    if blanks:
        for where, i, entry in _copies(message, blanks):
            plan.setdefault(where, {})[i] = _blank(where, entry)
    for snapshot in snapshots.values():
        for where, i, entry in snapshot or ():
            plan.setdefault(where, {})[int(i)] = entry
    update: dict[str, Any] = {}
    for where, changes in plan.items():
        if where == "additional_kwargs":
            kwargs = dict(message.additional_kwargs)
            kwargs["tool_calls"] = put_back(kwargs.get("tool_calls"), changes.items())
            update[where] = kwargs
        else:
            update[where] = put_back(getattr(message, where), changes.items())
    return message.model_copy(update=update) if update else message
