"""Stand-ins: small messages the clearing engine reads in place of a run's real messages.

A stand-in has the decoded shape of the message it replaces (model output or not, each
call's name, which results it carries and which of them are clearable) in the same wire
format family, but every billed text is a short token that *carries* the original's token
count: ``"¶<count>¶"``. The engine counts with :func:`counter`, which reads the
carried count, and renders placeholders with a template that returns a stand-in carrying
the real placeholder's count (rendered from the original when it was read). A call's
arguments are a shared ``{"_raw": <count>}``, or, when a policy replayed supersedes, the
arguments that stand for the real ones (:func:`~slimtools.clearing.replay.standing_args`:
the command and path the rules read, a digest of the whole) with the count last. So the
engine in replay mode (:class:`~slimtools.clearing.replay.ReplayClearer`) makes exactly the
decisions it would make on the real run, while only these few hundred bytes per message
stay in memory.

The mark is the pilcrow, a Latin-1 character: JSON writers leave it unescaped (it survives
the engine's own rendering of arguments) and stand-ins stay one byte a character. The count
is read from the end of a text, where a stand-in carries it, so a tool name that happens to
hold a pilcrow does not confuse the counter.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

import orjson

from slimtools.clearing.formats.base import RawCall, RawResult, decoded
from slimtools.clearing.formats.view import get_codec
from slimtools.clearing.marker import seal
from slimtools.tokens import TokenCounter

MARK = "\xb6"
RESULT_CHARS = 36
"""The length of a result's stand-in. A placeholder stand-in is shorter when the real
placeholder is shorter than the real result, and at least this long otherwise, so the
engine's "a placeholder must be shorter" test gives the real answer."""


@functools.lru_cache(maxsize=1 << 16)
def carried(count: int, *, length: int = 0) -> str:
    """A stand-in text that counts as ``count`` tokens, padded to ``length`` characters
    (one string object per count: a long run repeats the same counts many times)."""
    text = f"{MARK}{count}{MARK}"
    return text + "~" * (length - len(text))


@functools.lru_cache(maxsize=1 << 12)
def _args(count: int) -> dict[str, str]:
    """A call's stand-in arguments, one dict per count: an engine keeps a call's arguments
    while its result may be cleared, and codecs never change them (they keep them by
    reference), so calls of one size share them."""
    return {"_raw": carried(count)}


def arguments(count: int) -> dict[str, str]:
    """Stand-in arguments a call counted as ``count`` tokens is left with (the engine counts
    a call with rewritten arguments as ``"name args"``, whose end carries ``count``)."""
    return _args(count)


def counter(base: TokenCounter) -> TokenCounter:
    """The engine's counter on stand-ins: the count a text carries at its end, or ``base``
    for other text (the engine's own ``"name {}"`` for blanked arguments)."""

    def count(text: str) -> int:
        end = text.rfind(MARK)
        start = text.rfind(MARK, 0, end) if end > 0 else -1
        if start < 0 or not text[start + 1 : end].isdigit():
            return base(text)
        return int(text[start + 1 : end])

    return count


def standin_format(format: str) -> str:
    """The wire format stand-ins of ``format`` are written in (LangChain's as OpenAI Chat:
    the same turn rule, one named result per tool message)."""
    return "openai_chat" if format == "langchain" else format


class Call(NamedTuple):
    """A call as its stand-in shows it: a unique id, the real name, its billed tokens, and
    the arguments that stand for the real ones (:func:`~slimtools.clearing.replay.
    standing_args`; None when no policy replayed supersedes, so none are needed)."""

    id: str
    name: str
    tokens: int
    args: dict[str, Any] | None = None


class Result(NamedTuple):
    """A result as its stand-in shows it (``name``: the name the result itself carries)."""

    id: str
    name: str | None
    tokens: int
    empty: bool
    clearable: bool


def build(
    format: str,
    model_output: bool,
    content: int | None,
    calls: Sequence[Call],
    results: Sequence[Result],
) -> Any:
    """The stand-in of one message in ``format`` (one of :func:`standin_format`'s), written
    by the format's own codec: the texts carry token counts, arguments included.

    Args:
        format: the stand-in format.
        model_output: whether the model wrote the message.
        content: the tokens of its other billed text, None when it has none.
        calls: its tool calls.
        results: its tool results.
    """
    text = "" if content is None else carried(content)
    raw_calls = tuple(_call(c) for c in calls)
    raw_results = tuple(
        RawResult(r.id, r.name, _content(r), slot, False, not r.clearable, r.clearable)
        for slot, r in enumerate(results)
    )
    message = decoded(model_output, text, raw_calls if model_output else (), raw_results)
    return get_codec(format).encode(message)


def _call(call: Call) -> RawCall:
    """A call's stand-in: its arguments carry its tokens at the end of their text."""
    if call.args is None:
        return RawCall(call.id, call.name, _args(call.tokens), carried(call.tokens))
    args = {**call.args, "_raw": carried(call.tokens)}
    return RawCall(call.id, call.name, args, orjson.dumps(args).decode())


def _content(result: Result) -> str:
    if result.empty:
        return ""
    text = carried(result.tokens, length=RESULT_CHARS)
    if result.clearable:
        return text
    # already a placeholder: kept, but billed (the count is read at the end of the text)
    return seal(text, 10_000)
