"""The manifest of cleared results: what compaction must carry so every detail stays refetchable.

Summaries keep few exact details (paths, commands, figures), so a summary of a cleared
history would lose the one thing a placeholder guarantees: the way back to the original.
:func:`cleared_manifest` lists every cleared result of some messages (the exact call or its
handles, the tool, the size, a one-line head), and :func:`render_manifest` writes it as a
block that compaction appends verbatim to the summary. A block already in the messages (an
earlier compaction's) is carried over line for line, so clear-then-compact-then-compact
loses nothing either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slimtools._json import dumps_str
from slimtools.clearing.excerpt import envelope_handles, flatten_head
from slimtools.clearing.formats.view import view

MANIFEST_HEADER = "Cleared tool results (each can be seen again: call it again, or use its handle):"
"""The first line of a manifest block; the lines after it that start with ``- `` are entries."""

_HEAD_CHARS = 120
_SIZE = re.compile(r"returned ([\d,]+) chars")
_LINE = re.compile(r"^(Head|Handles): (.*)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One cleared result as the manifest names it.

    Attributes:
        call: the exact call, ``tool({"arg": ...})`` with its arguments as JSON.
        tool: the tool name.
        chars: the original's size in characters, when its placeholder says (else None).
        head: the first characters of the original, on one line ("" when not kept).
        handles: the handles the original carried (refetchable with the companion tool).
    """

    call: str
    tool: str
    chars: int | None
    head: str
    handles: str

    def line(self) -> str:
        """The entry as one manifest line."""
        size = f"{self.chars:,} chars" if self.chars is not None else "size unknown"
        parts = [f"- {self.call}: {size}"]
        if self.handles:
            parts.append(f"handles {self.handles}")
        if self.head:
            parts.append(f"head: {self.head}")
        return "; ".join(parts)


def cleared_manifest(
    messages: Sequence[Any], format: str | None = None, *, folded: bool = False
) -> list[ManifestEntry]:
    """Every cleared result in ``messages``, in order, with its call when it is there.

    With ``folded`` the results still in full are listed too (their size, head and handles
    read from the text): compaction is about to fold them away, which clears them as well.
    """
    seen = view(messages, format=format)
    calls = {c.id: c for c in seen.calls}
    entries = []
    for result in seen.results:
        if not (result.cleared or folded):
            continue
        call = calls.get(result.call_id)
        tool = call.name if call is not None else (result.name or "tool")
        args = dumps_str(call.args) if call is not None else dumps_str({"call_id": result.call_id})
        if result.cleared:
            size = _SIZE.search(result.text)
            lines = dict(_LINE.findall(result.text))
            chars = int(size.group(1).replace(",", "")) if size else None
            head, handles = " ".join(lines.get("Head", "").split()), lines.get("Handles", "")
        else:
            chars, head = len(result.text), flatten_head(result.text, _HEAD_CHARS)
            handles = ", ".join(envelope_handles(result.text, "id"))
        if len(head) > _HEAD_CHARS:
            head = head[: _HEAD_CHARS - 3] + "..."
        entries.append(ManifestEntry(f"{tool}({args})", tool, chars, head, handles))
    return entries


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
    for entry in cleared_manifest(messages, format, folded=True):
        line = entry.line()
        if line not in seen:
            seen.add(line)
            lines.append(line)
    return "\n".join([MANIFEST_HEADER, *lines]) if lines else ""
