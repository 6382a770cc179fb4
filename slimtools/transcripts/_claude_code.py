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
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from slimtools.transcripts._model import Location, MalformedError, Message, Origin, Run

MARKER_KEYS = frozenset({"uuid", "sessionId", "leafUuid", "parentUuid"})
MARKER_TYPES = frozenset({"file-history-snapshot", "summary", "queue-operation"})

Block = tuple[dict[str, Any], Location]  # a content block and where it sits in the file


def is_claude_code_line(value: Any) -> bool:
    """A line only Claude Code writes: it carries session bookkeeping keys."""
    return isinstance(value, dict) and (
        bool(MARKER_KEYS & value.keys()) or value.get("type") in MARKER_TYPES
    )


def claude_code_run(records: Iterable[tuple[int, Any]]) -> Run:
    """Rebuild the Anthropic history from ``(line number, parsed line)`` pairs."""
    entries: list[tuple[int, dict[str, Any]]] = []
    for number, record in records:
        if not isinstance(record, dict):
            raise MalformedError(f"a {type(record).__name__}, not a JSON object", line=number)
        if record.get("type") in ("user", "assistant") and isinstance(record.get("message"), dict):
            # keep only what the history needs: a line's toolUseResult often doubles its size
            kept = {k: record.get(k) for k in ("type", "message", "isSidechain")}
            entries.append((number, kept))
    main = [e for e in entries if not e[1].get("isSidechain")]
    entries = main or entries  # only sidechain lines: a subagent's own transcript

    # Pass 1: every response's blocks, merged by message id, and each tool_use's owner.
    blocks: dict[str, list[Block]] = {}
    owner: dict[str, str] = {}
    for number, line in entries:
        if line["type"] == "assistant":
            key = _response_key(line, number)
            for block in _blocks(line["message"].get("content"), number):
                blocks.setdefault(key, []).append(block)
                if block[0].get("type") == "tool_use":
                    owner[str(block[0].get("id"))] = key
    answers: dict[str, list[Block]] = {}
    for number, line in entries:
        if line["type"] == "user":
            for block in _blocks(line["message"].get("content"), number):
                answered = owner.get(str(block[0].get("tool_use_id")))
                if block[0].get("type") == "tool_result" and answered is not None:
                    answers.setdefault(answered, []).append(block)

    # Pass 2: emit in order of first appearance; answered results follow their response.
    messages: list[Message] = []
    origins: list[Origin] = []
    emitted: set[str] = set()
    for number, line in entries:
        at = Location(number, ("message",))
        content = line["message"].get("content")
        if line["type"] == "assistant":
            key = _response_key(line, number)
            if key in emitted:
                continue
            emitted.add(key)
            messages.append({"role": "assistant", "content": [b for b, _ in blocks.get(key, [])]})
            origins.append(Origin(at))
            if key in answers:
                _user(answers[key], messages, origins)
        elif isinstance(content, str):
            messages.append({"role": "user", "content": content})
            origins.append(Origin(at))
        else:
            rest = [
                b
                for b in _blocks(content, number)
                if not (b[0].get("type") == "tool_result" and str(b[0].get("tool_use_id")) in owner)
            ]
            if rest:
                _user(rest, messages, origins)
    return Run(messages, tuple(origins), "anthropic")


def _response_key(line: dict[str, Any], number: int) -> str:
    return str(line["message"].get("id") or f"line{number}")


def _user(blocks: list[Block], messages: list[Message], origins: list[Origin]) -> None:
    """Append a user message of ``blocks``, each tool_result's content located in the file."""
    messages.append({"role": "user", "content": [b for b, _ in blocks]})
    results = {
        slot: place.child("content")
        for slot, (block, place) in enumerate(blocks)
        if block.get("type") == "tool_result"
    }
    origins.append(Origin(Location(blocks[0][1].line, ("message",)), results))


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
