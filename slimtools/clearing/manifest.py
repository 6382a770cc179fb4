"""The manifest of cleared results: what compaction must carry so every detail stays refetchable.

Summaries keep few exact details (paths, commands, figures), so a summary of a cleared
history would lose the one thing a placeholder guarantees: the way back to the original.
:func:`render_manifest` lists every result of the messages compaction folds (the exact call,
its handles, the size, a one-line head) as a block that compaction appends verbatim to the
summary. A block already in the messages (an
earlier compaction's) is carried over line for line, so clear-then-compact-then-compact
loses nothing either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from slimtools._json import dumps_str
from slimtools.clearing.excerpt import envelope_handles, flatten_head
from slimtools.clearing.formats.view import view

MANIFEST_HEADER = "Cleared tool results (each can be seen again: call it again, or use its handle):"
"""The first line of a manifest block; the lines after it that start with ``- `` are entries."""

_HEAD_CHARS = 120
_SIZE = re.compile(r"returned ([\d,]+) chars")
_LINE = re.compile(r"^(Head|Handles): (.*)$", re.MULTILINE)


def entry_lines(messages: Sequence[Any], format: str | None = None) -> list[str]:
    """One manifest line per tool result in ``messages``, in order: the exact call
    (``tool({"arg": ...})``, its arguments as JSON), the original's size, its handles and a
    one-line head. A cleared result's are read from its placeholder; one still in full is
    read from its text (compaction is about to fold it away, which clears it as well)."""
    seen = view(messages, format=format)
    calls = {c.id: c for c in seen.calls}
    lines = []
    for result in seen.results:
        call = calls.get(result.call_id)
        tool = call.name if call is not None else (result.name or "tool")
        args = dumps_str(call.args) if call is not None else dumps_str({"call_id": result.call_id})
        if result.cleared:
            size = _SIZE.search(result.text)
            said = dict(_LINE.findall(result.text))
            chars = int(size.group(1).replace(",", "")) if size else None
            head, handles = " ".join(said.get("Head", "").split()), said.get("Handles", "")
        else:
            chars, head = len(result.text), flatten_head(result.text, _HEAD_CHARS)
            handles = ", ".join(envelope_handles(result.text, "id"))
        if len(head) > _HEAD_CHARS:
            head = head[: _HEAD_CHARS - 3] + "..."
        parts = [
            f"- {tool}({args}): " + (f"{chars:,} chars" if chars is not None else "size unknown")
        ]
        if handles:
            parts.append(f"handles {handles}")
        if head:
            parts.append(f"head: {head}")
        lines.append("; ".join(parts))
    return lines


def carried_lines(messages: Sequence[Any], format: str | None = None) -> list[str]:
    """The entry lines of manifest blocks already in ``messages`` (earlier compactions)."""
    out: list[str] = []
    for text in view(messages, format=format).message_texts:
        at = text.find(MANIFEST_HEADER)
        if at < 0:
            continue
        for line in text[at + len(MANIFEST_HEADER) :].splitlines():
            if line.startswith("- "):
                out.append(line)
            elif line.strip():
                break
    return out


def render_manifest(messages: Sequence[Any], format: str | None = None) -> str:
    """The manifest block of the messages compaction folds: earlier blocks' lines, then
    every tool result in them, cleared or not ("" when they hold none)."""
    lines = carried_lines(messages, format)
    seen = set(lines)
    for line in entry_lines(messages, format):
        if line not in seen:
            seen.add(line)
            lines.append(line)
    return "\n".join([MANIFEST_HEADER, *lines]) if lines else ""
