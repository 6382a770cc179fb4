"""The OpenAI Agents SDK's ``ToolOutputTrimmer``, run through the SDK's own class."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.peers._common import _IMAGE_TYPES, Step, _rewrite
from slimtools.clearing import detect_format
from slimtools.clearing.formats import get
from slimtools.clearing.formats.media import TEXT_BLOCK_TYPES
from slimtools.clearing.formats.view import get_codec, safe_decode
from slimtools.errors import ConfigurationError


def tool_output_trimmer_step(trimmer: Any = None) -> Step:
    """What the OpenAI Agents SDK's ``ToolOutputTrimmer`` does to the input of each model call.

    The SDK (``agents.extensions.ToolOutputTrimmer``, a ``call_model_input_filter`` for
    ``RunConfig``) runs the real class on every call. Its defaults: ``recent_turns=2`` (the
    last two *user* messages and everything after them are never touched; with fewer than
    two user messages nothing is), ``max_output_chars=500`` (only older outputs longer than
    that are trimmed), ``preview_chars=200`` and ``trimmable_tools=None`` (every tool). A
    trimmed string output becomes ``"[Trimmed: <tool> output — <N> chars → 200 char
    preview]\\n<first 200 chars>..."``; structured (multimodal) outputs get a shorter header
    and drop their images. Tool results are not user messages, so an autonomous run with one
    task message is never trimmed.

    OpenAI Responses histories go to the trimmer as they are (it trims dict items only, as
    in the SDK). Other formats are converted with :func:`to_agents_input`, trimmed, and each
    trimmed output is written back into its own result.

    Args:
        trimmer: a configured ``ToolOutputTrimmer``; the SDK's defaults when None.

    Raises:
        ImportError: the Agents SDK is not installed (``pip install 'slimtools[openai-agents]'``).
        ConfigurationError: ``trimmer`` is not callable.
    """
    if trimmer is not None and not callable(trimmer):
        raise ConfigurationError(f"trimmer must be a ToolOutputTrimmer, got {trimmer!r}")
    try:
        from agents import Agent
        from agents.extensions import ToolOutputTrimmer
        from agents.run_config import CallModelData, ModelInputData
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "the Agents SDK's ToolOutputTrimmer needs: pip install 'slimtools[openai-agents]'"
        ) from exc
    trimmer = trimmer if trimmer is not None else ToolOutputTrimmer()
    agent: Any = Agent(name="slimtools-replay")  # the filter's required field; unused by it

    def run(items: list[Any]) -> list[Any]:
        data = CallModelData(ModelInputData(input=items, instructions=None), agent, None)
        filtered = list(trimmer(data).input)
        if len(filtered) != len(items):
            raise RuntimeError("ToolOutputTrimmer changed the number of input items")
        return filtered

    def step(messages: list[Any]) -> list[Any]:
        fmt = detect_format(messages)
        if fmt == "openai_responses":
            return run(list(messages))
        items, origins = to_agents_input(messages, fmt)
        changes: dict[int, dict[int, str]] = {}
        for before, after, origin in zip(items, run(items), origins, strict=True):
            if after is not before and origin is not None:
                position, slot = origin
                changes.setdefault(position, {})[slot] = str(after["output"])
        return _rewrite(messages, fmt, changes)

    return step


def to_agents_input(
    history: Sequence[Any], format: str | None = None
) -> tuple[list[dict[str, Any]], list[tuple[int, int] | None]]:
    """A history as Agents SDK input items, with where each tool output came from.

    Model messages become an assistant message (their text, if any) and one
    ``function_call`` item per call; each tool result becomes a ``function_call_output``
    item (text as is, multimodal parts as ``input_text``/``input_image``); user and system
    messages become role messages. An Anthropic user message that only carries tool results
    is not a user message in the SDK's sense and yields no user item.

    Returns:
        The items, and per item ``(message position, result slot)`` for tool outputs (the
        slot the clearing codec uses) or None.
    """
    fmt = format or detect_format(history)
    codec = get_codec(fmt)
    items: list[dict[str, Any]] = []
    origins: list[tuple[int, int] | None] = []
    for position, message in enumerate(history):
        decoded = safe_decode(codec, message)
        if decoded.model_output:
            if decoded.content_text:
                items.append({"role": "assistant", "content": decoded.content_text})
                origins.append(None)
            for call in decoded.calls:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.args_text,
                    }
                )
                origins.append(None)
            continue
        for result in decoded.results:
            output = _agents_output(codec.result_content(message, result.slot))
            items.append(
                {"type": "function_call_output", "call_id": result.call_id, "output": output}
            )
            origins.append((position, result.slot))
        role = _role(message)
        if role in ("system", "developer") or (
            role == "user" and (decoded.content_text or not decoded.results)
        ):
            items.append({"role": role, "content": decoded.content_text})
            origins.append(None)
    return items, origins


def _role(message: Any) -> str | None:
    """``user``, ``system``, ``developer``, ... for dicts and SDK objects; LangChain's types."""
    role = get(message, "role")
    if isinstance(role, str):
        return role
    return {"human": "user", "system": "system"}.get(get(message, "type"))


def _agents_output(content: Any) -> Any:
    """A result's content as an Agents SDK ``function_call_output`` output."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if not isinstance(content, (list, tuple)):
        return str(content)
    parts: list[Any] = []
    for part in content:
        kind = get(part, "type")
        if isinstance(part, str):
            parts.append({"type": "input_text", "text": part})
        elif kind in TEXT_BLOCK_TYPES and isinstance(get(part, "text"), str):
            parts.append({"type": "input_text", "text": get(part, "text")})
        elif kind in _IMAGE_TYPES and (url := _image_url(part)) is not None:
            parts.append({"type": "input_image", "image_url": url})
        else:
            parts.append(part)  # the SDK leaves outputs with parts it does not know untrimmed
    return parts


def _image_url(part: Any) -> str | None:
    """The URL (or data URL) of an OpenAI, Responses or Anthropic image part."""
    url = get(part, "image_url")
    if isinstance(url, str):
        return url
    if isinstance(get(url, "url"), str):
        return str(get(url, "url"))
    source = get(part, "source")
    if get(source, "type") == "base64":
        return f"data:{get(source, 'media_type')};base64,{get(source, 'data')}"
    if get(source, "type") == "url" and isinstance(get(source, "url"), str):
        return str(get(source, "url"))
    return None
