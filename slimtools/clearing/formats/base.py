"""The format-neutral message model that every codec decodes into, and the codec protocol.

One message decodes into a :class:`Decoded`: whether the model wrote it (turns start at model
output), the tool calls it carries, the tool results it carries (an Anthropic user message
may hold several) and its other billed text. The engine, the view and ``restore`` only ever
see these records; all knowledge of a wire format lives in one small codec module.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import chain
from typing import Any, NamedTuple, Protocol

import orjson
from pydantic import BaseModel

from slimtools._json import dumps_str, loads
from slimtools.clearing.formats._objects import get, with_changes
from slimtools.clearing.formats.media import MEDIA_TOKENS, block_text, content_media
from slimtools.clearing.marker import MARKER_PREFIX, is_placeholder


class RawCall(NamedTuple):
    """A tool call as a codec found it."""

    id: str
    name: str
    args: dict[str, Any]
    args_text: str  # the arguments exactly as billed (JSON text)


class RawResult(NamedTuple):
    """A tool result as a codec found it.

    ``slot`` addresses the result inside its message (a block index for Anthropic, 0
    elsewhere). ``clearable`` is False for empty results and for results that already hold
    a placeholder (``cleared``). ``media`` describes the non-text blocks of a multimodal
    result (images, documents, files), each counted as :data:`MEDIA_TOKENS` tokens.
    """

    call_id: str
    name: str | None
    text: str
    slot: int
    is_error: bool
    cleared: bool
    clearable: bool
    media: tuple[str, ...] = ()


class Decoded(NamedTuple):
    """Everything the core needs to know about one message.

    Named tuples rather than dataclasses: one is built per message, and tuple construction
    is several times cheaper than a frozen dataclass's ``__init__``.
    """

    model_output: bool
    content_text: str = ""
    calls: tuple[RawCall, ...] = ()
    results: tuple[RawResult, ...] = ()

    def pieces(self) -> list[str]:
        """The billed text of the message, piece by piece (each piece is counted once)."""
        out = [self.content_text] if self.content_text else []
        out.extend(f"{c.name} {c.args_text}" for c in self.calls)
        out.extend(r.text for r in self.results if r.text)
        return out

    def media_tokens(self) -> int:
        """The tokens of the images, documents and files in the message's results."""
        return MEDIA_TOKENS * sum(len(r.media) for r in self.results)


OTHER = Decoded(model_output=False)

new_tuple = tuple.__new__
"""``new_tuple(RawResult, (...))`` builds a named tuple at C speed: the generated
``__new__`` of a named tuple is a Python function, 4x slower, and the hot loop of a
10,000-turn pass builds several per message."""


def decoded(
    model_output: bool,
    content_text: str = "",
    calls: tuple[RawCall, ...] = (),
    results: tuple[RawResult, ...] = (),
) -> Decoded:
    """A :class:`Decoded`, built fast."""
    result: Decoded = new_tuple(Decoded, (model_output, content_text, calls, results))
    return result


def starts_turn(run_turns: bool, model_output: bool, previous_model: bool) -> bool:
    """Whether a message starts a turn (a model call): every model message does, except, in a
    format whose turns are runs of model items (``Codec.run_turns``), one that continues a run.

    The one statement of the rule; the clearer, the view and the streaming replay apply it.
    """
    return model_output and not (run_turns and previous_model)


class Codec(Protocol):
    """Reads and rewrites the messages of one wire format; never mutates its input."""

    name: str
    run_turns: bool
    """True when a turn starts at each *run* of model-output items (OpenAI Responses) rather
    than at each model message."""

    def decode(self, message: Any) -> Decoded:
        """Describe ``message``; never raises on malformed input (it decodes as OTHER)."""

    def replace_results(self, message: Any, texts: Mapping[int, str]) -> Any:
        """A copy of ``message`` with the result at each slot replaced by its text."""

    def blank_inputs(self, message: Any, call_ids: Collection[str]) -> Any:
        """A copy of ``message`` with every copy of those calls' arguments emptied (still
        valid JSON)."""

    def result_content(self, message: Any, slot: int) -> Any:
        """The original content of one result, as stored in the message (for audit)."""

    def input_snapshot(self, message: Any, call_id: str) -> Any:
        """Every copy of one call's arguments, JSON-able, for audit and restore."""

    def restore_results(self, message: Any, originals: Mapping[int, Any]) -> Any:
        """A copy of ``message`` with the audited contents put back at their slots."""

    def restore_inputs(self, message: Any, snapshots: Mapping[str, Any]) -> Any:
        """A copy of ``message`` with the audited arguments of those calls put back."""

    def role(self, message: Any) -> str | None:
        """Who wrote ``message``: ``"system"``, ``"user"``, ``"assistant"`` or ``"tool"``
        (the format's own word normalised), None when it does not say."""

    def text_message(self, text: str) -> Any:
        """A user message of this format holding ``text`` alone (a summary, a manifest)."""


ROLES = {"human": "user", "ai": "assistant", "developer": "system"}
"""Roles that formats spell otherwise (LangChain's ``human``/``ai``, OpenAI's ``developer``)."""


def normal_role(role: Any) -> str | None:
    """A format's role word as one of system, user, assistant, tool (None if unknown)."""
    if not isinstance(role, str):
        return None
    return ROLES.get(role, role) if role in ROLES or role in _ROLES else None


_ROLES = frozenset({"system", "user", "assistant", "tool"})


def content_text(content: Any) -> tuple[str, bool]:
    """The plain text of a content value, and whether it held anything but text.

    ``content`` may be a string, a list of strings and text blocks, or other blocks (images,
    documents, files): those make the content multimodal, which the clearer leaves alone.
    """
    if content is None:
        return "", False
    if isinstance(content, str):
        return content, False
    if not isinstance(content, (list, tuple)):
        return str(content), True
    parts: list[str] = []
    multimodal = False
    for block in content:
        text = block_text(block)
        if text is None:
            multimodal = True
        else:
            parts.append(text)
    return "\n".join(parts), multimodal


def make_result(
    call_id: Any, name: Any, content: Any, slot: int, *, is_error: bool, cleared: bool = False
) -> RawResult | None:
    """Build a :class:`RawResult`, or None when the call id is unusable."""
    if not isinstance(call_id, str) or not call_id:
        return None
    media: tuple[str, ...] = ()
    if isinstance(content, str):  # the common case, without the block walk
        text = content
    else:
        text, multimodal = content_text(content)
        if multimodal and isinstance(content, (list, tuple)):
            media = content_media(content)
    if not (cleared or media) and text.startswith(MARKER_PREFIX):
        cleared = is_placeholder(text)  # only text with the marker can be one
    named = name if isinstance(name, str) else None
    clearable = not cleared and (text != "" or bool(media))
    result: RawResult = new_tuple(
        RawResult, (call_id, named, text, slot, is_error, cleared, clearable, media)
    )
    return result


RAW_ARGS = "_raw"
"""The one key under which a call's arguments that are not a JSON object (cut-off JSON, a
list, a string) are kept whole, so every call has a dict of arguments."""


def unparsed(args: Mapping[str, Any]) -> bool:
    """Whether ``args`` stand for arguments that were not a JSON object (see ``RAW_ARGS``)."""
    return len(args) == 1 and RAW_ARGS in args


def make_call(call_id: Any, name: Any, args: Any) -> RawCall | None:
    """Build a :class:`RawCall` from arguments given as a dict or as JSON text.

    A dict is kept by reference (the view is read-only; nothing here mutates it).
    """
    if not isinstance(call_id, str) or not call_id:
        return None
    name = name if isinstance(name, str) else ""
    if isinstance(args, dict):
        if not args:
            text = "{}"
        else:
            try:  # plain JSON arguments (nearly all) need none of dumps_str's fallbacks
                text = orjson.dumps(args).decode()
            except (TypeError, orjson.JSONEncodeError):
                text = dumps_str(args)
        call: RawCall = new_tuple(RawCall, (call_id, name, args, text))
        return call
    if isinstance(args, str):
        return RawCall(call_id, name, parse_args(args), args)
    if isinstance(args, Mapping):
        return RawCall(call_id, name, dict(args), dumps_str(args))
    if args is None:
        return RawCall(call_id, name, {}, "{}")
    return RawCall(call_id, name, {RAW_ARGS: args}, dumps_str(args))


def parse_args(text: str) -> dict[str, Any]:
    """Arguments JSON text as a dict; anything else is kept whole under :data:`RAW_ARGS`."""
    try:
        value = loads(text) if text else {}  # exact: an id beyond 64 bits stays an integer
    except ValueError:
        return {RAW_ARGS: text}
    return value if isinstance(value, dict) else {RAW_ARGS: value}


def present(items: Iterable[RawCall | RawResult | None]) -> tuple[Any, ...]:
    """Drop the Nones that ``make_call``/``make_result`` return for unusable ids."""
    return tuple([item for item in items if item is not None])


def one(item: RawCall | RawResult | None) -> tuple[Any, ...]:
    """``present`` for a single item (the common case: one result per message)."""
    return () if item is None else (item,)


def result_message(result: RawResult | None) -> Decoded:
    """A message that carries one tool result and nothing else billed besides it."""
    found: Decoded = new_tuple(Decoded, (False, "", (), () if result is None else (result,)))
    return found


def context(text: str) -> Decoded:
    """A message that is neither model output nor tool traffic (a user or system message)."""
    return decoded(False, text) if text else OTHER


def put_back(entries: Any, originals: Iterable[Sequence[Any]]) -> list[Any]:
    """A copy of the list ``entries`` with each audited ``(index, entry)`` put back.

    An index past the end is skipped: the message may have been edited since the audit.
    An original read back from a file sink as a dict, where the entry is an SDK object (a
    ``ChatCompletionMessage``'s tool call), is rebuilt as that object's type when it
    validates, so an SDK message never ends up holding dicts.
    """
    out = list(entries or ())
    for index, entry in originals:
        if 0 <= int(index) < len(out):
            out[int(index)] = _like(out[int(index)], entry)
    return out


def _like(current: Any, original: Any) -> Any:
    """``original`` as the SDK type of ``current`` when it is a dict that validates."""
    if isinstance(current, BaseModel) and isinstance(original, dict):
        try:
            return type(current).model_validate(original)
        except ValueError:  # pydantic's ValidationError: keep the dict form
            return original
    return original


class WholeMessageResults:
    """The result side of formats where a tool result is a whole message (slot 0) and one
    field holds its content: OpenAI Chat (``content``), OpenAI Responses (``output``) and
    LangChain (``content``)."""

    result_field = "content"

    def replace_results(self, message: Any, texts: Mapping[int, str]) -> Any:
        """The result message with its content replaced."""
        return with_changes(message, {self.result_field: texts[0]})

    def result_content(self, message: Any, slot: int) -> Any:
        """The result message's content (a str or a list of parts), as stored."""
        return get(message, self.result_field)

    def restore_results(self, message: Any, originals: Mapping[int, Any]) -> Any:
        """The result message with its audited content back."""
        return with_changes(message, {self.result_field: originals[0]})


class ListedCalls:
    """The input side of formats where a model message lists its calls in one field:
    OpenAI Chat (``tool_calls`` entries) and Anthropic (``tool_use`` blocks of ``content``).

    A subclass names the field and says which entries are calls and how one is blanked;
    audits snapshot the calls' entries as ``[[index, entry], ...]``.
    """

    calls_field = "tool_calls"

    def is_call(self, entry: Any, call_ids: Collection[str]) -> bool:
        """Whether ``entry`` is a call with one of those ids."""
        raise NotImplementedError

    def blank_entry(self, entry: Any) -> Any:
        """A copy of a call entry with its arguments emptied (still valid JSON)."""
        raise NotImplementedError

    def _entries(self, message: Any) -> Sequence[Any]:
        entries = get(message, self.calls_field)
        return entries if isinstance(entries, (list, tuple)) else ()

    def blank_inputs(self, message: Any, call_ids: Collection[str]) -> Any:
        """The model message with those calls' arguments emptied."""
        entries = [
            self.blank_entry(e) if self.is_call(e, call_ids) else e for e in self._entries(message)
        ]
        return with_changes(message, {self.calls_field: entries})

    def input_snapshot(self, message: Any, call_id: str) -> Any:
        """The original entries of that call: ``[[index, entry], ...]``."""
        ids = (call_id,)
        return [[i, e] for i, e in enumerate(self._entries(message)) if self.is_call(e, ids)]

    def restore_inputs(self, message: Any, snapshots: Mapping[str, Any]) -> Any:
        """The model message with the audited entries of those calls back."""
        originals = chain.from_iterable(snapshots.values())
        return with_changes(
            message, {self.calls_field: put_back(self._entries(message), originals)}
        )
