"""A format-neutral, read-only view of a history, and format detection.

The view is what measuring code (the token ledger, reports) reads: calls, results, turns
and the billed text of each message, the same whatever the wire format. It decodes with the
same codecs as the clearer, so both agree on what a turn and a result are.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from slimtools.clearing.formats._objects import get
from slimtools.clearing.formats.base import OTHER, Codec, Decoded, starts_turn
from slimtools.clearing.formats.media import MEDIA_TOKENS
from slimtools.errors import ConfigurationError

logger = logging.getLogger("slimtools.clearing")

# Each history format's name, the one spelling every module uses.
LANGCHAIN: Final = "langchain"
OPENAI_CHAT: Final = "openai_chat"
OPENAI_RESPONSES: Final = "openai_responses"
ANTHROPIC: Final = "anthropic"

FORMATS: Final = (LANGCHAIN, OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC)
"""The history formats the clearer reads and writes."""

API_FORMATS: Final = (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC)
"""The formats of model APIs' request bodies (all but LangChain's objects)."""

_CODECS = {
    LANGCHAIN: ("slimtools.clearing.formats.langchain", "LangChainCodec"),
    OPENAI_CHAT: ("slimtools.clearing.formats.openai_chat", "OpenAIChatCodec"),
    OPENAI_RESPONSES: ("slimtools.clearing.formats.openai_responses", "OpenAIResponsesCodec"),
    ANTHROPIC: ("slimtools.clearing.formats.anthropic", "AnthropicCodec"),
}
_RESPONSES_TYPES = frozenset(
    {"function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output"}
)
_SDK_MODULES = (
    ("langchain_core", "langchain"),
    ("openai.types.responses", "openai_responses"),
    ("openai.types.chat", "openai_chat"),
    ("anthropic", "anthropic"),
)


@dataclass(frozen=True, slots=True)
class CallView:
    """One tool call: its id, tool name, arguments, turn and message index."""

    id: str
    name: str
    args: dict[str, Any]
    turn: int
    position: int


@dataclass(frozen=True, slots=True)
class ResultView:
    """One tool result; ``name`` is the paired call's tool (None for an orphan result).

    ``media`` describes its images, documents and files (``"image (image/png, 45 KB,
    base64)"``), which count ``media_tokens`` tokens; ``text`` is its text only.
    """

    call_id: str
    name: str | None
    text: str
    turn: int
    position: int
    is_error: bool
    cleared: bool
    media: tuple[str, ...] = ()

    @property
    def media_tokens(self) -> int:
        """The tokens the result's images, documents and files count for."""
        return MEDIA_TOKENS * len(self.media)


@dataclass(frozen=True)
class HistoryView:
    """A history seen through its codec.

    Attributes:
        format: one of :data:`FORMATS`.
        turns: the number of turns (a turn starts at each model message, or each run of
            model-output items in the Responses format).
        calls: every tool call in order.
        results: every tool result in order.
        message_texts: per message, the text a model is billed for (content, tool-call names
            and arguments, result text; not images); as long as the history.
        message_pieces: the same text per message as its separately counted pieces (the
            content, each call, each result): what the clearer counts tokens of.
        turn_starts: the index of the message that starts each turn (where each model call's
            output begins), in order; as long as ``turns``.
        message_media_tokens: per message, the tokens its results' images, documents and
            files count for (``MEDIA_TOKENS`` each); not part of ``message_texts``.
    """

    format: str
    turns: int
    calls: list[CallView]
    results: list[ResultView]
    message_texts: list[str]
    message_pieces: list[tuple[str, ...]]
    turn_starts: list[int]
    message_media_tokens: list[int]


_LOADED: dict[str, Codec] = {}


def get_codec(format: str) -> Codec:
    """The codec for a format name; the LangChain codec is imported only when asked for.

    Codecs are stateless, so one instance per format is shared.
    """
    codec = _LOADED.get(format) if isinstance(format, str) else None
    if codec is not None:
        return codec
    try:
        module_name, class_name = _CODECS[format]
    except (KeyError, TypeError):
        raise ConfigurationError(
            f"unknown history format {format!r}; expected one of {list(FORMATS)}"
        ) from None
    loaded: Codec = getattr(importlib.import_module(module_name), class_name)()
    _LOADED[format] = loaded
    return loaded


def detect_format(history: Sequence[Any]) -> str:
    """The format of ``history`` (one of :data:`FORMATS`), from the first telling message.

    LangChain and SDK objects are recognised by their module; dicts by their shape
    (``role: "tool"``/``tool_calls``, ``tool_use``/``tool_result`` blocks, Responses item
    types). A history with no tool traffic is read as ``"openai_chat"``, which decodes plain
    role/content messages of every format alike.
    """
    for message in history:
        found = _format_of(message)
        if found is not None:
            return found
    return "openai_chat"


def _format_of(message: Any) -> str | None:
    module = type(message).__module__
    for prefix, name in _SDK_MODULES:
        if module.startswith(prefix):
            return name
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list):
        kinds = {get(b, "type") for b in content}
        if kinds & {"tool_use", "tool_result"}:
            return "anthropic"
        if kinds & {"input_text", "output_text"}:
            return "openai_responses"
    if message.get("role") == "tool" or message.get("tool_calls"):
        return "openai_chat"
    if message.get("type") in _RESPONSES_TYPES or "call_id" in message:
        return "openai_responses"
    return None


def history_list(history: Any) -> list[Any]:
    """``history`` checked (:func:`check_history`) and as a list: a tuple or another sequence
    is copied once, so the clearer compares what it read with one C-level list comparison
    (a tuple never equals a list, which sent every call down the per-message path)."""
    if type(history) is list:
        return history
    check_history(history)
    return list(history)


def check_history(history: Any) -> None:
    """Raise a ``TypeError`` that says what to pass when ``history`` is not a message list.

    A dict (one message, or a request body), a string, or a generator (which a clearer
    would consume, losing the messages) are the usual mistakes.
    """
    if isinstance(history, Sequence) and not isinstance(history, (str, bytes, bytearray)):
        return
    kind = type(history).__name__
    if isinstance(history, Mapping):
        hint = (
            "a dict is one message or a request body: pass its message list "
            '(e.g. body["messages"] or [message])'
        )
    elif isinstance(history, (str, bytes, bytearray)):
        hint = "pass the list of messages, not text"
    elif isinstance(history, Iterable):
        hint = "an iterator would be used up: pass list(history)"
    else:
        hint = "pass a list of messages"
    raise TypeError(
        f"history must be a list of messages (LangChain, OpenAI or Anthropic), got {kind}; {hint}"
    )


def safe_decode(codec: Codec, message: Any) -> Decoded:
    """Decode, treating a message the codec cannot read as plain context (never raises)."""
    try:
        return codec.decode(message)
    except Exception:  # a malformed message must not stop the agent loop
        logger.debug("cannot decode %r as %s; left as is", type(message), codec.name, exc_info=True)
        return OTHER


def view(history: Sequence[Any], format: str | None = None) -> HistoryView:
    """A read-only, format-neutral view of ``history``.

    Args:
        history: the messages, in any supported format.
        format: one of :data:`FORMATS`; detected when None.

    Raises:
        TypeError: ``history`` is not a list of messages (a dict, a string, a generator).
    """
    check_history(history)
    name = format or detect_format(history)
    codec = get_codec(name)
    calls: list[CallView] = []
    results: list[ResultView] = []
    texts: list[str] = []
    pieces: list[tuple[str, ...]] = []
    starts: list[int] = []
    media: list[int] = []
    call_names: dict[str, str] = {}
    turn, previous = 0, False
    for position, message in enumerate(history):
        decoded = safe_decode(codec, message)
        if starts_turn(codec.run_turns, decoded.model_output, previous):
            turn += 1
            starts.append(position)
        previous = decoded.model_output
        parts = tuple(decoded.pieces())
        pieces.append(parts)
        media.append(decoded.media_tokens() if decoded.results else 0)
        texts.append("\n".join(parts))
        for c in decoded.calls:
            call_names[c.id] = c.name  # the latest call with an id (ids may repeat)
            calls.append(CallView(c.id, c.name, c.args, turn, position))
        for r in decoded.results:
            name_ = call_names.get(r.call_id, r.name)
            results.append(
                ResultView(r.call_id, name_, r.text, turn, position, r.is_error, r.cleared, r.media)
            )
    return HistoryView(name, turn, calls, results, texts, pieces, starts, media)
