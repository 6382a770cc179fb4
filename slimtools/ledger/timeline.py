"""Each tool result of a recorded run, where it entered the prompt and where a policy clears it.

The ledger adds results up by round; a report that shows *which* result cost what, and what
the model saw in its place, needs them one by one. The ledger's own replay
(:class:`~slimtools.ledger.stream.RunReplay` with ``timeline=True``) feeds a
:class:`Timeline`, which notes, for every result, the model call that first read it, its
tokens, the model call whose clearing (under the first policy) replaced it and the
placeholder it became: each file is replayed once, for the figures and the timeline
together. Every text kept is redacted with :func:`slimtools.redaction.redact` and cut
short, since a report of it is made to be shared.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from slimtools.clearing.formats.base import RawResult
from slimtools.clearing.replay import Cleared
from slimtools.redaction import redact

__all__ = [
    "HEAD_CHARS",
    "PLACEHOLDER_CHARS",
    "REDACT_WINDOW",
    "RunTimeline",
    "Timeline",
    "ToolEvent",
    "excerpt",
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
    than shown in part (a token's head no longer matches its pattern). What is redacted is
    those lines whole (the rules that mask to the end of a line see all of it), at most
    :data:`REDACT_WINDOW` characters, a longer window ending at its last white space so that
    its edge cuts no secret either: the redaction table's regexes over a fixed 4,000
    characters took most of ``analyze --html``'s time.
    """
    window = _head_window(text, lines)
    kept: list[str] = []
    for line in redact(window).splitlines():
        if line.strip():
            kept.append(line.rstrip())
        if len(kept) == lines:
            break
    head = "\n".join(kept)
    more = len(head) > limit or len(text.strip()) > len(head)
    return head[:limit] + ("…" if more else "")


def _head_window(text: str, lines: int) -> str:
    """``text`` up to the end of its ``lines``-th non-blank line, at most
    :data:`REDACT_WINDOW` characters (then up to the last white space before that)."""
    end = found = 0
    while found < lines and end < min(len(text), REDACT_WINDOW):
        newline = text.find("\n", end)
        stop = len(text) if newline < 0 else newline + 1
        found += bool(text[end:stop].strip())
        end = stop
    if end <= REDACT_WINDOW:
        return text[:end]
    window = text[:REDACT_WINDOW]
    edge = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
    return window[:edge] if edge > 0 else window


class Timeline:
    """Notes a run's tool results as its replay reads them, and which the policy cleared."""

    def __init__(self) -> None:
        self.run = RunTimeline("")
        self._unread: list[ToolEvent] = []  # results no model call has read yet
        self._open: dict[tuple[int, str], ToolEvent] = {}  # (message, call id) -> not cleared

    def result(self, raw: RawResult, tool: str, tokens: int, position: int) -> None:
        """A result was read at ``position``, attributed to ``tool``."""
        event = ToolEvent(
            tool=tool,
            call_id=raw.call_id,
            round=0,
            tokens=tokens,
            is_error=raw.is_error,
            head=excerpt(raw.text),
        )
        self._unread.append(event)
        if raw.clearable:
            self._open[(position, raw.call_id)] = event
        self.run.events.append(event)

    def model_call(self) -> None:
        """A model call: it reads every result not read yet."""
        run = self.run
        run.rounds += 1
        for event in self._unread:
            event.round = run.rounds
        self._unread.clear()

    def cleared(self, results: Iterable[Cleared]) -> None:
        """The results the model call just counted cleared: each with its placeholder."""
        for done in results:
            event = self._open.pop((done.position, done.call_id), None)
            if event is not None:
                event.cleared = self.run.rounds
                event.placeholder = redact(done.placeholder)[:PLACEHOLDER_CHARS]  # whole, then cut
