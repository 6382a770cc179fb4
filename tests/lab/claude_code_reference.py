"""The Claude Code session reader as it was before its index was made lean, kept as the
reference the lean one is held to, and random session lines to compare them on.

The reference keeps an index of every line (the main agent's and all), every answer's call
id until the end, and every response key seen; the lean reader drops what no later line
can need. Both must emit the same messages with the same origins.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from slimtools.transcripts._claude_code import (
    Entry,
    _blocks,
    _Response,
    _response_key,
    _user,
    session_entries,
)
from slimtools.transcripts._model import Location, Message, Origin


def reference_messages(records: list[tuple[int, Any]]) -> list[tuple[Message, Origin]]:
    """What the reader gave before its index was made lean."""
    entries = list(session_entries(records))
    has_main, owner, complete = _reference_index(entries)
    return list(_reference_emit(entries, has_main, owner, complete))


def _reference_index(entries: list[Entry]) -> tuple[bool, dict[str, str], dict[str, int]]:
    scans: dict[bool, tuple[dict[str, str], dict[str, int], dict[str, int]]] = {
        False: ({}, {}, {}),  # every line
        True: ({}, {}, {}),  # the main agent's lines
    }
    has_main = False
    for number, line in entries:
        main = not line.get("isSidechain")
        has_main = has_main or main
        for kept in {False, main}:
            owner, complete, answered_at = scans[kept]
            content = line["message"].get("content")
            if line["type"] == "assistant":
                key = _response_key(line, number)
                complete[key] = number
                for block, _ in _blocks(content, number):
                    if block.get("type") == "tool_use":
                        owner[str(block.get("id"))] = key
                continue
            for block, _ in _blocks(content, number):
                if block.get("type") == "tool_result":
                    answered_at[str(block.get("tool_use_id"))] = number
    owner, complete, answered_at = scans[has_main]
    for call_id, number in answered_at.items():
        key = owner.get(call_id)
        if key is not None:
            complete[key] = max(complete[key], number)
    return has_main, owner, complete


def _reference_emit(
    entries: list[Entry], has_main: bool, owner: dict[str, str], complete: dict[str, int]
) -> Iterator[tuple[Message, Origin]]:
    queue: deque[_Response | tuple[Message, Origin]] = deque()
    gathering: dict[str, _Response] = {}
    seen: set[str] = set()
    early: dict[str, list[Any]] = {}

    def emit(item: _Response | tuple[Message, Origin]) -> Iterator[tuple[Message, Origin]]:
        if not isinstance(item, _Response):
            yield item
            return
        del gathering[item.key]
        at = Location(item.number, ("message",))
        yield {"role": "assistant", "content": [b for b, _ in item.blocks]}, Origin(at)
        if item.answers:
            yield _user(item.answers)

    for number, line in entries:
        if has_main and line.get("isSidechain"):
            continue
        content = line["message"].get("content")
        if line["type"] == "assistant":
            key = _response_key(line, number)
            if key not in seen:
                seen.add(key)
                gathering[key] = _Response(key, number, answers=early.pop(key, []))
                queue.append(gathering[key])
            if key in gathering:
                gathering[key].blocks += _blocks(content, number)
        elif isinstance(content, str):
            at = Origin(Location(number, ("message",)))
            queue.append(({"role": "user", "content": content}, at))
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
        while queue and (
            not isinstance(queue[0], _Response)
            or complete.get(queue[0].key, queue[0].number) <= number
        ):
            yield from emit(queue.popleft())
    while queue:
        yield from emit(queue.popleft())


_CALLS = st.sampled_from(["t1", "t2", "t3"])  # few ids: later calls reuse them


def _assistant_block() -> st.SearchStrategy[dict[str, Any]]:
    use = st.builds(
        lambda call: {"type": "tool_use", "id": call, "name": "Bash", "input": {}}, _CALLS
    )
    return st.one_of(use, use, st.just({"type": "text", "text": "thinking"}))


def _user_block() -> st.SearchStrategy[dict[str, Any]]:
    result = st.builds(
        lambda call, n: {"type": "tool_result", "tool_use_id": call, "content": f"out {n}"},
        _CALLS | st.just("nobody"),
        st.integers(0, 9),
    )
    return st.one_of(result, result, st.just({"type": "text", "text": "more"}))


def _line(side: st.SearchStrategy[bool]) -> st.SearchStrategy[dict[str, Any]]:
    assistant = st.builds(
        lambda key, blocks, side: {
            "type": "assistant",
            "isSidechain": side,
            "message": {"role": "assistant", "content": blocks}
            | ({"id": key} if key is not None else {}),
        },
        st.sampled_from(["m1", "m2", "m3", None]),  # lines of one response scatter
        st.lists(_assistant_block(), min_size=1, max_size=3),
        side,
    )
    user = st.builds(
        lambda content, side: {
            "type": "user",
            "isSidechain": side,
            "message": {"role": "user", "content": content},
        },
        st.just("go") | st.lists(_user_block(), min_size=1, max_size=3),
        side,
    )
    return st.one_of(assistant, user)


session_lines = st.one_of(
    st.lists(_line(st.sampled_from([False, False, False, False, True])), max_size=20),
    st.lists(_line(st.just(True)), max_size=12),  # a subagent's own transcript
).map(lambda lines: list(enumerate(lines, 1)))
"""``(line number, parsed line)`` pairs of a session: responses whose lines scatter and
reuse call ids, results before, between and long after their calls, duplicates, orphans,
plain text, and sidechain lines (some, or all of them)."""
