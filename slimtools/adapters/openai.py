"""OpenAI adapter: tool specs for Chat Completions and the Responses API, and dispatch.

Register a toolkit with ``tools=chat_tools(kit)`` (Chat Completions) or
``tools=response_tools(kit)`` (Responses API); answer the model's calls with
``messages += chat_tool_messages(kit, completion)`` or
``input += response_tool_outputs(kit, response)``. Every call gets exactly one answer, in the
order the model made them: the envelope text on success, a message the model can act on when
the arguments are malformed, of the wrong type, unknown or missing, or the tool failed
(neither OpenAI format has an error flag, so the text says it is an error).

Strict mode (``strict=True``, the default) follows OpenAI's Structured Outputs rules: every
property listed in ``required``, ``additionalProperties: false`` on every object, no
``default`` keyword. Optional parameters therefore become nullable, their default is written
into the description, and the dispatch helpers drop a ``null`` the model sent for a parameter
that does not itself accept null, so the tool's default applies (:func:`restore_defaults`).
A tool whose schema cannot be made strict without changing what it accepts (an open
``dict``, ``allOf``, ``not``, string length limits and other keywords outside the supported
subset) is sent non-strict, alone: the others stay strict.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

try:
    import openai  # noqa: F401  (fail early, naming the extra)
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.openai needs the OpenAI SDK: pip install 'slimtools[openai]'"
    ) from exc

from slimtools._fields import field_of
from slimtools.adapters._strict import restore_defaults, strict_schema
from slimtools.clearing.formats import OPENAI_CHAT, OPENAI_RESPONSES
from slimtools.clearing.formats.view import get_codec

if TYPE_CHECKING:
    from openai.types.chat import (
        ChatCompletionFunctionToolParam,
        ChatCompletionToolMessageParam,
    )
    from openai.types.responses import FunctionToolParam
    from openai.types.responses.response_input_param import FunctionCallOutput
    from openai.types.shared_params import FunctionDefinition

    from slimtools.toolkit import Toolkit, ToolResult, ToolSpec

__all__ = [
    "achat_tool_messages",
    "aresponse_tool_outputs",
    "chat_tool_messages",
    "chat_tools",
    "response_tool_outputs",
    "response_tools",
    "restore_defaults",
    "strict_schema",
]


def _parameters(spec: ToolSpec, strict: bool) -> tuple[dict[str, Any], bool]:
    """The schema to send for ``spec`` and whether it is strict."""
    if strict:
        converted = strict_schema(spec.parameters)
        if converted is not None:
            return converted, True
    return copy.deepcopy(spec.parameters), False


def chat_tools(kit: Toolkit, *, strict: bool = True) -> list[ChatCompletionFunctionToolParam]:
    """Tool definitions for ``client.chat.completions.create(tools=...)``, get_record included.

    Args:
        kit: the toolkit to expose.
        strict: send each tool in strict mode where its schema allows (see module docstring).
    """
    tools: list[ChatCompletionFunctionToolParam] = []
    for spec in kit.tools:
        parameters, is_strict = _parameters(spec, strict)
        function: FunctionDefinition = {"name": spec.name, "parameters": parameters}
        if spec.description:
            function["description"] = spec.description
        if is_strict:
            function["strict"] = True
        tools.append({"type": "function", "function": function})
    return tools


def response_tools(kit: Toolkit, *, strict: bool = True) -> list[FunctionToolParam]:
    """Function tool definitions for ``client.responses.create(tools=...)``.

    Args:
        kit: the toolkit to expose.
        strict: send each tool in strict mode where its schema allows (see module docstring).
    """
    tools: list[FunctionToolParam] = []
    for spec in kit.tools:
        parameters, is_strict = _parameters(spec, strict)
        tool: FunctionToolParam = {
            "type": "function",
            "name": spec.name,
            "parameters": parameters,
            "strict": is_strict,
        }
        if spec.description:
            tool["description"] = spec.description
        tools.append(tool)
    return tools


_Call = tuple[str, str, str]
"""(call id, tool name, arguments JSON text as sent) of one function call."""


def _chat_calls(source: Any) -> list[_Call]:
    """Function calls of a ChatCompletion (first choice), a message, or a list of tool calls,
    as the Chat Completions codec reads them (custom, free-text tools are not ours)."""
    if not isinstance(source, Sequence):
        choices = field_of(source, "choices")
        if choices:
            source = field_of(choices[0], "message")
        source = field_of(source, "tool_calls") or []
    functions = [c for c in source if field_of(c, "type") in (None, "function")]
    message = get_codec(OPENAI_CHAT).decode({"role": "assistant", "tool_calls": functions})
    return [(c.id, c.name, c.args_text) for c in message.calls]


def _response_calls(source: Any) -> list[_Call]:
    """``function_call`` items of a Responses API response or of a list of output items, as
    the Responses codec reads them."""
    items = source if isinstance(source, Sequence) else field_of(source, "output") or []
    codec = get_codec(OPENAI_RESPONSES)
    return [
        (c.id, c.name, c.args_text)
        for item in items
        if field_of(item, "type") == "function_call"
        for c in codec.decode(item).calls
    ]


def _arguments(kit: Toolkit, name: str, raw: str) -> Any:
    """Model-sent arguments ready for ``kit.call``: nulls for defaults dropped, rest untouched."""
    try:
        schema = kit.spec(name).parameters
    except KeyError:
        return raw  # the toolkit answers with the list of known tools
    return restore_defaults(raw, schema)


def _run(kit: Toolkit, calls: Iterable[_Call], session: str | None) -> list[tuple[str, ToolResult]]:
    return [
        (cid, kit.call(name, _arguments(kit, name, raw), session=session, call_id=cid))
        for cid, name, raw in calls
    ]


async def _arun(
    kit: Toolkit, calls: Sequence[_Call], session: str | None
) -> list[tuple[str, ToolResult]]:
    # The model issued these calls together, so they are independent: run them concurrently.
    results = await asyncio.gather(
        *(
            kit.acall(name, _arguments(kit, name, raw), session=session, call_id=cid)
            for cid, name, raw in calls
        )
    )
    return [(cid, result) for (cid, _, _), result in zip(calls, results, strict=True)]


def _tool_message(call_id: str, result: ToolResult) -> ChatCompletionToolMessageParam:
    return {"role": "tool", "tool_call_id": call_id, "content": result.text}


def _call_output(call_id: str, result: ToolResult) -> FunctionCallOutput:
    return {"type": "function_call_output", "call_id": call_id, "output": result.text}


def chat_tool_messages(
    kit: Toolkit, completion: Any, *, session: str | None = None
) -> list[ChatCompletionToolMessageParam]:
    """Run the tool calls of a chat completion; return the ``tool`` messages to send back.

    Args:
        kit: the toolkit whose tools the model called.
        completion: a ``ChatCompletion`` (its first choice is used), an assistant message,
            or a list of tool calls; SDK objects or their plain-dict form.
        session: the handle session (default: the one bound with ``slimtools.session``).

    Returns:
        One ``{"role": "tool", "tool_call_id": ..., "content": ...}`` per function call, in
        order; empty when the model called no tool. Never raises for bad arguments.
    """
    return [_tool_message(cid, r) for cid, r in _run(kit, _chat_calls(completion), session)]


async def achat_tool_messages(
    kit: Toolkit, completion: Any, *, session: str | None = None
) -> list[ChatCompletionToolMessageParam]:
    """:func:`chat_tool_messages` for async code, running the calls concurrently."""
    pairs = await _arun(kit, _chat_calls(completion), session)
    return [_tool_message(cid, r) for cid, r in pairs]


def response_tool_outputs(
    kit: Toolkit, response: Any, *, session: str | None = None
) -> list[FunctionCallOutput]:
    """Run a Responses API response's function calls; return the ``function_call_output`` items.

    Args:
        kit: the toolkit whose tools the model called.
        response: a ``Response`` or its ``output`` list; SDK objects or plain dicts.
        session: the handle session (default: the one bound with ``slimtools.session``).

    Returns:
        One ``{"type": "function_call_output", "call_id": ..., "output": ...}`` per call, in
        order, to append to the next request's ``input`` after ``response.output``.
    """
    return [_call_output(cid, r) for cid, r in _run(kit, _response_calls(response), session)]


async def aresponse_tool_outputs(
    kit: Toolkit, response: Any, *, session: str | None = None
) -> list[FunctionCallOutput]:
    """:func:`response_tool_outputs` for async code, running the calls concurrently."""
    pairs = await _arun(kit, _response_calls(response), session)
    return [_call_output(cid, r) for cid, r in pairs]
