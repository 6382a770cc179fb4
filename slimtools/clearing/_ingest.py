"""Reading a history the engine's way: turns, tokens once per piece, calls paired with results.

The one statement of ingestion. The :class:`~slimtools.clearing.Clearer` reads every
appended message through :func:`read_messages`, and so does the ledger's streaming replay
(through :mod:`slimtools.clearing.replay`), so both agree on what a turn, a call, a result
and its tokens are:

- a message starts a turn by :func:`~slimtools.clearing.formats.base.starts_turn`;
- its billed text is counted piece by piece: the content, each call as ``"name args"``,
  each result's text plus :data:`MEDIA_TOKENS` per image, document or file;
- a result answers the latest call with its id and consumes it (some OpenAI-compatible
  servers reuse ids such as ``"call_0"`` every turn); a second result with that id, or one
  whose call was never seen, is an orphan;
- an id called twice within one turn (a broken history) pairs with nothing: which call a
  result with that id answers cannot be told, so its results are read as orphans (left
  whole) until a later turn calls that id again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from slimtools.clearing.formats.base import OTHER, Codec, RawCall, RawResult, new_tuple, starts_turn
from slimtools.clearing.formats.media import MEDIA_TOKENS
from slimtools.tokens import TokenCounter, count_tokens

logger = logging.getLogger("slimtools.clearing")


class SeenCall(NamedTuple):
    """A tool call as the engine remembers it (by id) until its result comes."""

    name: str
    args: dict[str, Any]
    position: int
    args_tokens: int  # tokens of ``"name args"`` as billed
    args_chars: int
    number: int  # 1-based: the how-manieth call of the run it is


FileResult = Callable[[RawResult, int, int, int, "SeenCall | None"], None]
"""Called for each result read: ``(result, position, tokens, turn, its call or None)``."""

NoteCall = Callable[[RawCall, "SeenCall", "SeenCall | None"], None]
"""Called for each call read: ``(call, as remembered, the unanswered call it displaced)``."""


@dataclass(slots=True)
class Reading:
    """What reading a history so far has found (the clearer's state extends it)."""

    turns: int = 0
    turn_start: int = 0  # position of the message that started the last turn
    previous_model: bool = False
    tokens: int = 0
    offsets: MutableSequence[int] = field(default_factory=list)  # tokens before each message
    tool_uses: int = 0
    calls: dict[str, SeenCall] = field(default_factory=dict)  # unanswered, by id
    # Ids called twice in the current turn, by that turn's start: their calls are dropped,
    # so their results answer none (which call one answers cannot be told).
    twice: dict[str, int] = field(default_factory=dict)
    text_tokens: int | None = None  # the last message's other text (None: it had none)


def read_messages(
    reading: Reading,
    codec: Codec,
    count: TokenCounter,
    messages: Sequence[Any],
    start: int,
    *,
    first: int = 0,
    file: FileResult,
    on_call: NoteCall | None = None,
    on_turn: Callable[[int], None] | None = None,
) -> None:
    """Read ``messages[start:]`` into ``reading``, as positions ``first + start`` on.

    ``on_turn(position)`` is told of each turn start before anything of that message is
    read (the prompt of that model call is every message before it); ``on_call`` of each
    call, then ``file`` of each result. An undecodable message is read as plain context
    (logged at debug level): a malformed message must not stop an agent loop. The hot loop
    of a long one-shot pass, hence the local variables and the default counter's ASCII
    case inlined (the same figure: a test pins it)."""
    decode, calls, run_turns, twice = codec.decode, reading.calls, codec.run_turns, reading.twice
    turns, previous, tokens, uses = reading.turns, reading.previous_model, reading.tokens, 0
    turn_start, offset, first_number = reading.turn_start, reading.offsets.append, reading.tool_uses
    default = count is count_tokens
    text_tokens: int | None = None
    for index in range(start, len(messages)):
        position = first + index
        offset(tokens)
        try:
            model, text, found_calls, results = decode(messages[index])
        except Exception:
            logger.debug("cannot decode message %d; left as is", position, exc_info=True)
            model, text, found_calls, results = OTHER
        if starts_turn(run_turns, model, previous):
            turns += 1
            turn_start = position
            if on_turn is not None:
                reading.turns, reading.tokens, reading.turn_start = turns, tokens, turn_start
                on_turn(position)
        previous = model
        text_tokens = None
        if text:
            text_tokens = (len(text) + 3) // 4 if default and text.isascii() else count(text)
            tokens += text_tokens
        for c in found_calls:
            billed = f"{c.name} {c.args_text}"
            size = (len(billed) + 3) // 4 if default and billed.isascii() else count(billed)
            tokens += size
            uses += 1
            info = (c.name, c.args, position, size, len(c.args_text), first_number + uses)
            seen: SeenCall = new_tuple(SeenCall, info)
            if on_call is not None:
                on_call(c, seen, calls.get(c.id))
            if (prior := calls.setdefault(c.id, seen)) is not seen or twice:  # seen before
                _called_again(reading, c.id, seen, prior, turn_start)
        for raw in results:
            txt = raw.text
            size = (len(txt) + 3) // 4 if default and txt.isascii() else count(txt) if txt else 0
            if raw.media:
                size += MEDIA_TOKENS * len(raw.media)
            tokens += size
            file(raw, position, size, turns, calls.pop(raw.call_id, None))
    reading.turns, reading.previous_model, reading.tokens = turns, previous, tokens
    reading.turn_start, reading.text_tokens = turn_start, text_tokens
    reading.tool_uses += uses


def _called_again(
    reading: Reading, call_id: str, seen: SeenCall, prior: SeenCall, turn_start: int
) -> None:
    """File a call whose id is unanswered already (``prior``), or while ids are doubled.

    The latest call with an id is the one a result answers, unless both are of this turn:
    then neither call is kept (nor a third of this turn), so its results are orphans left
    whole. Off the hot path: it runs only for an id still unanswered or while some id is
    doubled, and entries of past turns go at the first call of a new one."""
    calls, twice = reading.calls, reading.twice
    stale = [key for key, start in twice.items() if start != turn_start]
    for key in stale:
        del twice[key]
    if twice.get(call_id) == turn_start or (prior is not seen and prior.position >= turn_start):
        twice[call_id] = turn_start
        del calls[call_id]
    else:
        calls[call_id] = seen


def same_message(message: Any, seen: Any, produced: Any = None) -> bool:
    """``message`` is ``seen`` or ``produced``, or equal to either (lists: one C-level
    comparison, identity first); an exotic ``__eq__`` that raises counts as changed."""
    if message is seen or message is produced:
        return True
    try:
        return bool(message == seen) or (produced is not None and bool(message == produced))
    except Exception:
        return False
