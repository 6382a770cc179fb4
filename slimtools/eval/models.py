"""The model under test: any callable from messages and tools to an assistant message.

The harness speaks OpenAI Chat Completions: ``messages`` is a list of dicts (``system``,
``user``, ``assistant`` with ``tool_calls``, ``tool`` with ``tool_call_id``) and ``tools``
a list of ``{"type": "function", "function": {"name", "description", "parameters"}}``. A
:data:`ChatModel` returns the assistant's reply as any of:

- a ``str`` (a final answer);
- an OpenAI-style dict (``content``, ``tool_calls`` with ``function.name/arguments``);
- an OpenAI SDK ``ChatCompletionMessage``, a LangChain ``AIMessage`` or an Anthropic
  ``Message`` (or dicts of those shapes).

:func:`langchain_model`, :func:`openai_model` and :func:`anthropic_model` wrap the three
kinds of real model; each imports its SDK only when called, so nothing here needs a key,
a network or a framework to import.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeAlias

from slimtools._fields import field_of
from slimtools._json import dumps_str
from slimtools.errors import ConfigurationError, SlimtoolsError

ChatModel: TypeAlias = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]
"""``(messages, tools) -> assistant message``, both in OpenAI Chat Completions form."""


class ModelReplyError(SlimtoolsError, TypeError):
    """The model under test returned something that is not an assistant message."""


class ToolCallRequest(NamedTuple):
    """One tool call the model asked for; ``arguments`` as it sent them (text or a dict)."""

    id: str
    name: str
    arguments: str | Mapping[str, Any]


class Reply(NamedTuple):
    """An assistant reply, whatever its wire form: its text and its tool calls."""

    text: str
    calls: tuple[ToolCallRequest, ...] = ()


def as_reply(value: Any) -> Reply:
    """Normalise whatever a model returned into a :class:`Reply`.

    Raises:
        ModelReplyError: ``value`` is neither text nor an assistant message.
    """
    if isinstance(value, str):
        return Reply(value)
    if value is None or isinstance(value, (bytes, int, float, bool, Sequence)):
        raise ModelReplyError(
            f"the model returned {type(value).__name__}; expected a str or an assistant message "
            "(an OpenAI-style dict, a ChatCompletionMessage, an AIMessage or an Anthropic Message)"
        )
    content = field_of(value, "content")
    text, calls = _content(content)
    for entry in field_of(value, "tool_calls") or ():
        function = field_of(entry, "function")
        if function is not None:  # OpenAI: {"id", "function": {"name", "arguments"}}
            calls.append(
                _request(
                    field_of(entry, "id"),
                    field_of(function, "name"),
                    field_of(function, "arguments"),
                )
            )
        else:  # LangChain: {"id", "name", "args"}
            calls.append(
                _request(field_of(entry, "id"), field_of(entry, "name"), field_of(entry, "args"))
            )
    if content is None and not calls and not _looks_like_message(value):
        raise ModelReplyError(
            f"the model returned a {type(value).__name__} with neither content nor tool calls"
        )
    return Reply(text, tuple(calls))


def _looks_like_message(value: Any) -> bool:
    return (
        field_of(value, "role") == "assistant" or field_of(value, "tool_calls", False) is not False
    )


def _content(content: Any) -> tuple[str, list[ToolCallRequest]]:
    """Text and Anthropic ``tool_use`` blocks of a content value."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    calls: list[ToolCallRequest] = []
    for block in content if isinstance(content, (list, tuple)) else (content,):
        if isinstance(block, str):
            texts.append(block)
        elif field_of(block, "type") == "tool_use":
            calls.append(
                _request(field_of(block, "id"), field_of(block, "name"), field_of(block, "input"))
            )
        elif isinstance(field_of(block, "text"), str):
            texts.append(field_of(block, "text"))
    return "\n".join(texts), calls


def _request(call_id: Any, name: Any, arguments: Any) -> ToolCallRequest:
    if not isinstance(arguments, (str, Mapping)):
        arguments = {} if arguments is None else dumps_str(arguments)
    return ToolCallRequest(
        call_id if isinstance(call_id, str) else "",
        name if isinstance(name, str) else "",
        arguments,
    )


def arguments_json(arguments: str | Mapping[str, Any]) -> str:
    """The arguments as a JSON object text for the history (``"{}"`` when not an object).

    LangChain and Anthropic need an object to rebuild the call, so text that is not a JSON
    object is not echoed back; the tool result tells the model its arguments were invalid.
    """
    if isinstance(arguments, Mapping):
        return dumps_str(dict(arguments))
    try:
        value = json.loads(arguments)
    except ValueError:
        return "{}"
    return arguments if isinstance(value, dict) else "{}"


def langchain_model(chat_model: Any) -> ChatModel:
    """A LangChain chat model (anything with ``bind_tools`` and ``invoke``) as a ChatModel."""
    if not (hasattr(chat_model, "bind_tools") and hasattr(chat_model, "invoke")):
        raise ConfigurationError(
            f"{type(chat_model).__name__} is not a LangChain chat model (no bind_tools/invoke)"
        )

    def call(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        try:
            from langchain_core.messages import convert_to_messages
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise ImportError("needs LangChain: pip install 'slimtools[langchain]'") from exc
        bound = chat_model.bind_tools(tools) if tools else chat_model
        return bound.invoke(convert_to_messages(messages))

    return call


def openai_model(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    client: Any = None,
    **options: Any,
) -> ChatModel:
    """A Chat Completions endpoint (OpenAI, or any compatible server) as a ChatModel.

    Args:
        model: the model name sent with each request.
        base_url: the server, e.g. ``http://localhost:8080/v1``; the SDK default otherwise.
        api_key: the key; ``OPENAI_API_KEY`` is read when None.
        client: an ``openai.OpenAI`` client to use instead of building one.
        options: more arguments for ``chat.completions.create`` (``temperature=0``).
    """
    if client is None:
        try:
            import openai
        except ImportError as exc:
            raise ImportError(
                "openai_model needs the SDK: pip install 'slimtools[openai]'"
            ) from exc
        try:
            client = openai.OpenAI(base_url=base_url, api_key=api_key)
        except openai.OpenAIError as exc:
            raise ConfigurationError(
                f"cannot build the OpenAI client: {exc} (pass --api-key or set OPENAI_API_KEY; "
                "a local server that ignores keys accepts any value)"
            ) from None

    def call(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        extra = {"tools": tools} if tools else {}
        completion = client.chat.completions.create(
            model=model, messages=messages, **extra, **options
        )
        return completion.choices[0].message

    return call


def anthropic_model(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    client: Any = None,
    max_tokens: int = 1024,
    **options: Any,
) -> ChatModel:
    """A Messages endpoint (Anthropic, or any compatible server) as a ChatModel.

    The OpenAI-form history is converted: system messages become ``system``, calls become
    ``tool_use`` blocks, results ``tool_result`` blocks, and consecutive user-side messages
    are merged so roles alternate as the API requires.

    Args:
        model: the model name.
        base_url: the server; the SDK default otherwise.
        api_key: the key; ``ANTHROPIC_API_KEY`` is read when None.
        client: an ``anthropic.Anthropic`` client to use instead of building one.
        max_tokens: the reply budget (required by the API).
        options: more arguments for ``messages.create``.
    """
    if client is None:
        try:
            import anthropic
        except ImportError as exc:
            raise ImportError(
                "anthropic_model needs the SDK: pip install 'slimtools[anthropic]'"
            ) from exc
        client = anthropic.Anthropic(base_url=base_url, api_key=api_key)

    def call(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        system, converted = to_anthropic(messages)
        extra: dict[str, Any] = {"system": system} if system else {}
        if tools:
            extra["tools"] = [
                {
                    "name": t["function"]["name"],
                    "description": t["function"].get("description", ""),
                    "input_schema": t["function"].get("parameters") or {"type": "object"},
                }
                for t in tools
            ]
        return client.messages.create(
            model=model, max_tokens=max_tokens, messages=converted, **extra, **options
        )

    return call


def to_anthropic(messages: Sequence[Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """An OpenAI Chat history as Anthropic's ``system`` text and ``messages`` list."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        role, content = message.get("role"), message.get("content") or ""
        if role == "system":
            system.append(str(content))
            continue
        if role == "tool":
            blocks: list[dict[str, Any]] = [
                {
                    "type": "tool_result",
                    "tool_use_id": message["tool_call_id"],
                    "content": str(content),
                }
            ]
            side = "user"
        elif role == "assistant":
            blocks = [{"type": "text", "text": str(content)}] if content else []
            for call in message.get("tool_calls") or ():
                function = call["function"]
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": function["name"],
                        "input": json.loads(arguments_json(function.get("arguments") or "{}")),
                    }
                )
            side = "assistant"
        else:
            blocks, side = [{"type": "text", "text": str(content)}], "user"
        if out and out[-1]["role"] == side:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": side, "content": blocks})
    return "\n\n".join(system), out
