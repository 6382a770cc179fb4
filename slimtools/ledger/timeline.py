"""Each tool result of a recorded run, where it entered the prompt and where a policy clears it.

The ledger adds results up by round; a report that shows *which* result cost what, and what
the model saw in its place, needs them one by one. :func:`timeline` replays a run through a
real :class:`~slimtools.clearing.Clearer` (the engine every surface uses, cleared in place
before each model call, as an agent loop would) and notes, for every result, the model call
that first read it, its tokens, the model call whose clearing replaced it and the
placeholder it became. Every text kept is redacted with :func:`slimtools.redaction.redact`
and cut short, since a report of it is made to be shared.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from slimtools.clearing import MEDIA_TOKENS, Clearer, ClearingPolicy
from slimtools.clearing.formats.view import get_codec
from slimtools.redaction import redact
from slimtools.tokens import TokenCounter, count_tokens

__all__ = [
    "HEAD_CHARS",
    "PLACEHOLDER_CHARS",
    "REDACT_WINDOW",
    "RunTimeline",
    "ToolEvent",
    "excerpt",
    "timeline",
]

HEAD_CHARS = 240
"""A result's first lines are kept up to this many characters (before redaction)."""
PLACEHOLDER_CHARS = 600
"""A placeholder is kept up to this many characters: enough for its reason, size and handle."""
REDACT_WINDOW = 4_000
"""Characters of a result read for its first lines (redacted whole, then cut)."""


@dataclass(slots=True)
class ToolEvent:
    """One tool result of a run.

    Attributes:
        tool: the tool's name (``"?"`` when the transcript does not say).
        call_id: the call id the result answers.
        round: the model call that first read the result (1-based; 0: no model call came
            after it).
        tokens: its tokens, media included, counted as the ledger counts them.
        is_error: whether the tool reported an error.
        head: its first lines, redacted and cut to :data:`HEAD_CHARS`.
        cleared: the model call whose clearing replaced it (None: never cleared).
        placeholder: what it became, redacted and cut (empty while not cleared).
    """

    tool: str
    call_id: str
    round: int
    tokens: int
    is_error: bool
    head: str
    cleared: int | None = None
    placeholder: str = ""


@dataclass
class RunTimeline:
    """A run's tool results in the order they came, and how many model calls it made."""

    name: str
    rounds: int = 0
    events: list[ToolEvent] = field(default_factory=list)


def excerpt(text: str, limit: int = HEAD_CHARS, lines: int = 4) -> str:
    """The first ``lines`` non-blank lines of ``text``, redacted, cut to ``limit`` characters.

    Redacted before it is cut, so a secret that the cut would halve is masked whole rather
    than shown in part (a token's head no longer matches its pattern). Only the first
    :data:`REDACT_WINDOW` characters are read, up to their last white space, so a huge result
    costs that much regex work and the window's own edge cuts no secret either.
    """
    window = text[:REDACT_WINDOW]
    if len(text) > len(window):
        edge = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
        window = window[:edge] if edge > 0 else window
    kept: list[str] = []
    for line in redact(window).splitlines():
        if line.strip():
            kept.append(line.rstrip())
        if len(kept) == lines:
            break
    head = "\n".join(kept)
    more = len(head) > limit or len(text.strip()) > len(head)
    return head[:limit] + ("…" if more else "")


def timeline(
    messages: Iterable[Any],
    *,
    format: str,
    policy: ClearingPolicy,
    name: str = "",
    counter: TokenCounter = count_tokens,
) -> RunTimeline:
    """Replay ``messages`` (one run, in history ``format``) under ``policy``, result by result.

    The history is cleared in place before each model call, so memory holds the run with
    its cleared results already replaced (about one copy of what the model would see).
    """
    codec = get_codec(format)
    clearer = Clearer(policy, format=format, observed=False)
    history: list[Any] = []
    out = RunTimeline(name)
    open_: dict[str, list[tuple[int, int]]] = {}  # call id -> (event, message) not cleared
    unread: list[ToolEvent] = []  # results no model call has read yet
    calls: dict[str, str] = {}
    for message in messages:
        decoded = codec.decode(message)
        if decoded.model_output:
            out.rounds += 1
            for event in unread:
                event.round = out.rounds
            unread.clear()
            if history:
                report = clearer.clear_in_place(history)
                for call_id in report.cleared_call_ids:
                    _note_cleared(open_, call_id, history, codec, out)
        for call in decoded.calls:
            calls[call.id] = call.name
        position = len(history)
        for result in decoded.results:
            tokens = counter(result.text) + MEDIA_TOKENS * len(result.media)
            event = ToolEvent(
                tool=result.name or calls.get(result.call_id) or "?",
                call_id=result.call_id,
                round=0,
                tokens=tokens,
                is_error=result.is_error,
                head=excerpt(result.text),
            )
            unread.append(event)
            open_.setdefault(result.call_id, []).append((len(out.events), position))
            out.events.append(event)
        history.append(message)
    return out


def _note_cleared(
    open_: dict[str, list[tuple[int, int]]],
    call_id: str,
    history: list[Any],
    codec: Any,
    out: RunTimeline,
) -> None:
    """Mark the results of ``call_id`` that now hold a placeholder as cleared this round."""
    still: list[tuple[int, int]] = []
    for index, position in open_.get(call_id, ()):
        found = next(
            (r for r in codec.decode(history[position]).results if r.call_id == call_id), None
        )
        if found is not None and found.cleared:
            event = out.events[index]
            event.cleared = out.rounds
            event.placeholder = redact(found.text)[:PLACEHOLDER_CHARS]  # whole, then cut
        else:
            still.append((index, position))
    if still:
        open_[call_id] = still
    else:
        open_.pop(call_id, None)
