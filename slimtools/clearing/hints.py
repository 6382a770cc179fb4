"""MCP tool annotations as clearing hints: which placeholders may offer the call again.

MCP tools carry ``readOnlyHint``, ``destructiveHint`` and ``idempotentHint``
(https://modelcontextprotocol.io/specification/2025-06-18/server/tools, ``ToolAnnotations``).
A placeholder tells the model how to see a cleared result again; for a tool that only reads
that is the exact call, for a destructive one it must never be. :func:`tool_hints` reads the
annotations of tool definitions as ``list_tools`` returns them (SDK objects, their
``model_dump``, or plain dicts; snake-case names too), importing nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from slimtools._fields import field_of


@dataclass(frozen=True, slots=True)
class ToolHints:
    """What the annotations say about calling each tool again.

    Attributes:
        repeatable: tools safe to call again: ``readOnlyHint``, or ``idempotentHint``
            without ``destructiveHint``.
        unrepeatable: tools annotated ``destructiveHint`` (and not read-only): their
            placeholders never offer the call again, whatever their name suggests.
    """

    repeatable: frozenset[str] = frozenset()
    unrepeatable: frozenset[str] = frozenset()


def tool_hints(tools: Iterable[Any]) -> ToolHints:
    """The :class:`ToolHints` of MCP tool definitions (a ``ListToolsResult`` works too).

    A tool without annotations, or without a string name, is left out: its category decides.
    A read-only hint wins over a destructive one (the spec gives ``destructiveHint`` meaning
    only when the tool is not read-only).
    """
    listed = getattr(tools, "tools", tools)
    if isinstance(listed, Mapping):
        listed = listed.get("tools", ())
    repeatable: set[str] = set()
    unrepeatable: set[str] = set()
    for tool in listed:
        name = field_of(tool, "name")
        notes = field_of(tool, "annotations")
        if not isinstance(name, str) or notes is None:
            continue
        read_only = _hint(notes, "readOnlyHint", "read_only_hint")
        destructive = _hint(notes, "destructiveHint", "destructive_hint")
        idempotent = _hint(notes, "idempotentHint", "idempotent_hint")
        if read_only:
            repeatable.add(name)
        elif destructive:
            unrepeatable.add(name)
        elif idempotent:
            repeatable.add(name)
    return ToolHints(frozenset(repeatable), frozenset(unrepeatable))


def _hint(notes: Any, camel: str, snake: str) -> bool:
    """Whether an annotation is exactly True (a string "true" is not a hint)."""
    value = field_of(notes, camel)
    if value is None:
        value = field_of(notes, snake)
    return value is True
