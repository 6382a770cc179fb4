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
of responses not yet complete. :func:`claude_code_run` does both on lines in memory, and the
streamed reader on the file read twice, so a long session is never held whole. (One pass
that held every line until the end was the simpler design; it made a session's memory grow
with the file.)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from slimtools.transcripts._model import Location, MalformedError, Message, Origin, Run

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
    for message, origin in session_messages(entries, index_session(entries)):
        messages.append(message)
        origins.append(origin)
    return Run(messages, tuple(origins), "anthropic")


def session_entries(records: Iterable[tuple[int, Any]]) -> Iterator[Entry]:
    """The user and assistant lines, with only what the history needs.

    Raises:
        MalformedError: a line that is not a JSON object.
    """
    for number, record in records:
        if not isinstance(record, dict):
            raise MalformedError(f"a {type(record).__name__}, not a JSON object", line=number)
        if record.get("type") in ("user", "assistant") and isinstance(record.get("message"), dict):
            # keep only what the history needs: a line's toolUseResult often doubles its size
            yield number, {k: record.get(k) for k in ("type", "message", "isSidechain")}


@dataclass
class _Scan:
    """Who owns each tool call, and the last line each response needs (of one line set)."""

    owner: dict[str, str] = field(default_factory=dict)  # tool_use id -> response key
    complete: dict[str, int] = field(default_factory=dict)  # response key -> last line
    answered_at: dict[str, int] = field(default_factory=dict)  # tool_use id -> last result

    def add(self, number: int, line: dict[str, Any]) -> None:
        content = line["message"].get("content")
        if line["type"] == "assistant":
            key = _response_key(line, number)
            self.complete[key] = number
            for block, _ in _blocks(content, number):
                if block.get("type") == "tool_use":
                    self.owner[str(block.get("id"))] = key
            return
        for block, _ in _blocks(content, number):
            if block.get("type") == "tool_result":
                self.answered_at[str(block.get("tool_use_id"))] = number

    def settle(self) -> None:
        """A response is complete once its last answer is read, wherever its call was."""
        for call_id, number in self.answered_at.items():
            key = self.owner.get(call_id)
            if key is not None:
                self.complete[key] = max(self.complete[key], number)
        self.answered_at = {}


@dataclass
class SessionIndex:
    """What :func:`session_messages` must know before emitting: ids and line numbers only.

    Attributes:
        has_main: whether any line is the main agent's (then sidechain lines are dropped).
        scan: the owners and completion lines of the lines that are kept.
    """

    has_main: bool
    scan: _Scan


def index_session(entries: Iterable[Entry]) -> SessionIndex:
    """One pass over the lines: which response owns each call, and where each is complete."""
    main, every = _Scan(), _Scan()
    has_main = False
    for number, line in entries:
        every.add(number, line)
        if not line.get("isSidechain"):
            has_main = True
            main.add(number, line)
    scan = main if has_main else every  # only sidechain lines: a subagent's own transcript
    scan.settle()
    return SessionIndex(has_main, scan)


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
    """
    owner, complete = index.scan.owner, index.scan.complete
    queue: deque[_Response | tuple[Message, Origin]] = deque()
    gathering: dict[str, _Response] = {}
    seen: set[str] = set()
    early: dict[str, list[Block]] = {}  # answers read before their response's first line
    for number, line in entries:
        if index.has_main and line.get("isSidechain"):
            continue
        content = line["message"].get("content")
        if line["type"] == "assistant":
            key = _response_key(line, number)
            if key not in seen:
                seen.add(key)
                gathering[key] = _Response(key, number, answers=early.pop(key, []))
                queue.append(gathering[key])
            if key in gathering:  # else emitted already: a later line adds nothing
                gathering[key].blocks += _blocks(content, number)
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
                elif answered not in seen:
                    early.setdefault(answered, []).append(block)
            if rest:
                queue.append(_user(rest))
        while queue and _ready(queue[0], complete, number):
            yield from _emit(queue.popleft(), gathering)
    while queue:
        yield from _emit(queue.popleft(), gathering)


def _ready(item: _Response | tuple[Message, Origin], complete: dict[str, int], number: int) -> bool:
    return not isinstance(item, _Response) or complete.get(item.key, item.number) <= number


def _emit(
    item: _Response | tuple[Message, Origin], gathering: dict[str, _Response]
) -> Iterator[tuple[Message, Origin]]:
    if not isinstance(item, _Response):
        yield item
        return
    del gathering[item.key]
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
