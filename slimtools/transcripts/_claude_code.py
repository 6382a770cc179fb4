"""Claude Code session JSONL (``~/.claude/projects/<project>/<session>.jsonl``) as Anthropic
Messages.

One model response is logged as several lines sharing ``message.id`` (one per content
block), sometimes with the result of an early tool call logged between them; the lines are
merged back into one assistant message and every ``tool_result`` answering it goes into the
user message right after it, as the API requires. Progress, system, snapshot and summary
lines are not part of the model's context and are dropped. Sidechain lines (a subagent's
messages, ``isSidechain: true``) are dropped from a session that has main-agent lines; a
file of sidechain lines only is a subagent's own transcript (Claude Code writes those to
``<session>/subagents/agent-<id>.jsonl``) and is read as that subagent's history.

A line's ``toolUseResult`` (the structured copy Claude Code keeps for its own display) is
not sent to the model and is neither read nor cleared.

Reading takes two passes over the lines: :func:`index_session` learns, keeping only ids and
line numbers, which response owns each tool call and on which line each response is
complete; :func:`session_messages` then emits the messages in order, holding only the lines
of responses not yet complete, and lets each response's ids go once it is emitted.
:func:`claude_code_run` does both on lines in memory, and the streamed reader on the file
read twice, so a long session is never held whole. (One pass that held every line until
the end was the simpler design; it made a session's memory grow with the file.)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slimtools.transcripts._jsonio import iter_jsonl, reading
from slimtools.transcripts._model import Location, MalformedError, Message, Origin, Run, Source
from slimtools.transcripts._reader import Entries, Progress, Reader, RunStream
from slimtools.transcripts._usage import RecordedRequest, UsageCollector

MARKER_KEYS = frozenset({"uuid", "sessionId", "leafUuid", "parentUuid"})
MARKER_TYPES = frozenset({"file-history-snapshot", "summary", "queue-operation"})

Block = tuple[dict[str, Any], Location]  # a content block and where it sits in the file
Entry = tuple[int, dict[str, Any]]  # a user or assistant line: its number and what is kept


def is_claude_code_line(value: Any) -> bool:
    """A line only Claude Code writes: it carries session bookkeeping keys."""
    return isinstance(value, dict) and (
        bool(MARKER_KEYS & value.keys()) or value.get("type") in MARKER_TYPES
    )


def claude_code_run(records: Iterable[tuple[int, Any]]) -> Run:
    """Rebuild the Anthropic history from ``(line number, parsed line)`` pairs."""
    entries = list(session_entries(records))
    messages: list[Message] = []
    origins: list[Origin] = []
    index = index_session(entries)
    restarts = Restarts(index)
    for message, origin in session_messages(entries, index):
        restarts.note(len(messages), origin)
        messages.append(message)
        origins.append(origin)
    return Run(messages, tuple(origins), "anthropic", restarts=tuple(restarts.found))


def session_entries(records: Iterable[tuple[int, Any]]) -> Iterator[Entry]:
    """The user and assistant lines, with only what the history needs.

    A user line that opens the history after a compaction (the summary Claude Code flags
    ``isCompactSummary``, or else the first user line after a ``compact_boundary`` system
    line) is marked ``restart``.

    Raises:
        MalformedError: a line that is not a JSON object.
    """
    boundary = False
    for number, record in records:
        if not isinstance(record, dict):
            raise MalformedError(f"a {type(record).__name__}, not a JSON object", line=number)
        kind = record.get("type")
        if kind == "system" and record.get("subtype") == "compact_boundary":
            boundary = True
        if kind in ("user", "assistant") and isinstance(record.get("message"), dict):
            # keep only what the history needs: a line's toolUseResult often doubles its size
            kept = {k: record.get(k) for k in ("type", "message", "isSidechain")}
            if kind == "user" and (boundary or record.get("isCompactSummary")):
                kept["restart"], boundary = True, False
            yield number, kept


@dataclass
class _Scan:
    """Who owns each tool call, and the last line each response needs (of one line set).

    A response waits for its last line and for the last answer to its calls; an answer read
    before any call with its id leaves every response as it is (the call, and so its owner's
    line, comes later). An answer is credited to the response owning its call when it is
    read: when a later response reuses the id, the earlier one may so wait for a line that
    answers the later one, which delays when it is emitted, never what is emitted.
    (Crediting the final owners at the end kept every answer's id until then: a string a
    result.)
    """

    owner: dict[str, str] = field(default_factory=dict)  # tool_use id -> response key
    complete: dict[str, int] = field(default_factory=dict)  # response key -> last line

    def add(self, number: int, line: dict[str, Any]) -> None:
        content = line["message"].get("content")
        owner, complete = self.owner, self.complete
        if line["type"] == "assistant":
            key = _response_key(line, number)
            complete[key] = number
            for block, _ in _blocks(content, number):
                if block.get("type") == "tool_use":
                    owner[str(block.get("id"))] = key
            return
        for block, _ in _blocks(content, number):
            if block.get("type") == "tool_result":
                owning = owner.get(str(block.get("tool_use_id")))
                if owning is not None:
                    complete[owning] = number  # the latest line read, so the largest


@dataclass
class SessionIndex:
    """What :func:`session_messages` must know before emitting: ids and line numbers only.

    Attributes:
        has_main: whether any line is the main agent's (then sidechain lines are dropped).
        scan: the owners and completion lines of the lines that are kept.
        restarts: the kept lines where the history restarts after a compaction.
    """

    has_main: bool
    scan: _Scan
    restarts: frozenset[int] = frozenset()


def index_session(entries: Iterable[Entry]) -> SessionIndex:
    """One pass over the lines: which response owns each call, and where each is complete."""
    main = _Scan()
    # Every line, while none is the main agent's: a file of sidechain lines only is a
    # subagent's own transcript. Dropped at the first main line (it held a second entry for
    # each call and response of a session).
    every: _Scan | None = _Scan()
    restarts: dict[bool, set[int]] = {False: set(), True: set()}  # by isSidechain
    for number, line in entries:
        side = bool(line.get("isSidechain"))
        if line.get("restart"):
            restarts[side].add(number)
        if not side:
            every = None
            main.add(number, line)
        elif every is not None:
            every.add(number, line)
    kept = restarts[every is not None]
    return SessionIndex(every is None, main if every is None else every, frozenset(kept))


class Restarts:
    """The indexes of the messages where a session's history restarts (a compaction's
    summary), noted as :func:`session_messages` emits them."""

    def __init__(self, index: SessionIndex, found: list[int] | None = None) -> None:
        self._lines = set(index.restarts)
        self.found = [] if found is None else found

    def note(self, position: int, origin: Origin) -> None:
        """The message at ``position`` came from ``origin``: note it if it restarts."""
        if self._lines and origin.at.line in self._lines:
            self._lines.discard(origin.at.line)
            self.found.append(position)


@dataclass
class _Response:
    """A response being gathered: its blocks and the results that answer it."""

    key: str
    number: int
    blocks: list[Block] = field(default_factory=list)
    answers: list[Block] = field(default_factory=list)


def session_messages(
    entries: Iterable[Entry], index: SessionIndex
) -> Iterator[tuple[Message, Origin]]:
    """The history's messages in order of first appearance, each with its origin.

    A response is emitted at the place of its first line, with its answered results right
    after it; it (and whatever follows it) waits until the line ``index`` says completes it.

    It consumes ``index``: once a response is emitted, its entries are let go (no later line
    of the lines indexed can need them), so a long session's index shrinks as it is read.
    A result read after the response owning its call was emitted (a line appended to the
    file after it was indexed) is kept, in a user message of its own.
    """
    scan = index.scan
    owner, complete = scan.owner, scan.complete
    queue: deque[_Response | tuple[Message, Origin]] = deque()
    gathering: dict[str, _Response] = {}
    unindexed: set[str] = set()  # emitted responses the index does not know (appended lines)
    early: dict[str, list[Block]] = {}  # answers read before their response's first line
    for number, line in entries:
        if index.has_main and line.get("isSidechain"):
            continue
        content = line["message"].get("content")
        if line["type"] == "assistant":
            key = _response_key(line, number)
            response = gathering.get(key)
            if response is None and key not in unindexed:  # its first line
                response = gathering[key] = _Response(key, number, answers=early.pop(key, []))
                queue.append(response)
            if response is not None:  # else emitted already: a later line adds nothing
                response.blocks += _blocks(content, number)
        elif isinstance(content, str):
            at = Location(number, ("message",))
            queue.append(({"role": "user", "content": content}, Origin(at)))
        else:
            rest = []
            for block in _blocks(content, number):
                answered = owner.get(str(block[0].get("tool_use_id")))
                if block[0].get("type") != "tool_result" or answered is None:
                    rest.append(block)
                elif answered in gathering:
                    gathering[answered].answers.append(block)
                else:  # its response is not emitted yet: emission drops it from ``owner``
                    early.setdefault(answered, []).append(block)
            if rest:
                queue.append(_user(rest))
        while queue and _ready(queue[0], complete, number):
            yield from _emit(queue.popleft(), gathering, scan, unindexed)
    while queue:
        yield from _emit(queue.popleft(), gathering, scan, unindexed)


def _ready(item: _Response | tuple[Message, Origin], complete: dict[str, int], number: int) -> bool:
    return not isinstance(item, _Response) or complete.get(item.key, item.number) <= number


def _emit(
    item: _Response | tuple[Message, Origin],
    gathering: dict[str, _Response],
    scan: _Scan,
    unindexed: set[str],
) -> Iterator[tuple[Message, Origin]]:
    if not isinstance(item, _Response):
        yield item
        return
    key = item.key
    del gathering[key]
    if scan.complete.pop(key, None) is None:
        unindexed.add(key)
    owner = scan.owner
    for block, _ in item.blocks:
        if block.get("type") == "tool_use":
            call = str(block.get("id"))
            if owner.get(call) == key:  # a later response may have taken the id
                del owner[call]
    at = Location(item.number, ("message",))
    yield {"role": "assistant", "content": [b for b, _ in item.blocks]}, Origin(at)
    if item.answers:
        yield _user(item.answers)


def _response_key(line: dict[str, Any], number: int) -> str:
    return str(line["message"].get("id") or f"line{number}")


def _user(blocks: list[Block]) -> tuple[Message, Origin]:
    """A user message of ``blocks``, each tool_result's content located in the file."""
    results = {
        slot: place.child("content")
        for slot, (block, place) in enumerate(blocks)
        if block.get("type") == "tool_result"
    }
    origin = Origin(Location(blocks[0][1].line, ("message",)), results)
    return {"role": "user", "content": [b for b, _ in blocks]}, origin


def _blocks(content: Any, number: int) -> list[Block]:
    if isinstance(content, str):
        return [({"type": "text", "text": content}, Location(number, ("message", "content")))]
    if isinstance(content, list):
        return [
            (b, Location(number, ("message", "content", i)))
            for i, b in enumerate(content)
            if isinstance(b, dict)
        ]
    return []


_LINES_ONLY = "Claude Code sessions are JSON Lines, one record a line"


def _no_document(_doc: dict[str, Any], _base: Location, _forced: Source | None) -> Run:
    raise MalformedError(_LINES_ONLY)


def _read_lines(entries: Entries, _forced: Source | None) -> Run:
    return claude_code_run(_numbered(entries))


def _numbered(entries: Entries) -> Iterator[tuple[int, Any]]:
    for value, at in entries:
        if at.line is None:
            raise MalformedError(_LINES_ONLY)
        yield at.line, value


def stream_session(path: Path, _forced: Source | None, report: Progress) -> RunStream:
    """A Claude Code session read twice: ids and line numbers first, then the messages."""

    usage: list[RecordedRequest] = []
    restarts: list[int] = []

    def messages() -> Iterator[Any]:
        with reading(path):
            collector = UsageCollector()
            index = index_session(session_entries(_tapped(iter_jsonl(path), collector)))
            usage.extend(collector.requests())
            noted = Restarts(index, restarts)
            lines = session_entries(iter_jsonl(path, progress=report))
            for position, (message, origin) in enumerate(session_messages(lines, index)):
                noted.note(position, origin)
                yield message

    return RunStream(
        path.name,
        "claude_code",
        "anthropic",
        messages(),
        path,
        streamed=True,
        usage=usage,
        restarts=restarts,
    )


def _tapped(records: Iterator[tuple[int, Any]], collector: UsageCollector) -> Iterator[Any]:
    """``records``, each also read by ``collector`` (every line: system lines too)."""
    for number, value in records:
        collector.add(number, value)
        yield number, value


CLAUDE_CODE = Reader(
    "claude_code",
    "claude_code",
    "messages",
    read_run=_no_document,
    read_messages=_read_lines,
    marks=is_claude_code_line,
    stream=stream_session,
)
"""A Claude Code session (JSON Lines; a subagent's transcript too)."""
