"""The gate every block of a configured tool's passed-through result crosses (pure).

Errors, mixed results (JSON beside an image) and embedded resources are passed through as
the upstream sent them, but never past ``deny``: each text is read as JSON data where it
can be (``_payload.parse_json``) and re-sent without the denied paths, structured content
loses them too, and a text that cannot be read but names a denied field as a key
(``"ssn": ...``, ``ssn=...``) is withheld, never shown raw. A tool with an allowlist shows
only its fields in a successful mixed result: records are projected, and free text that
cannot be projected is withheld unless the tool opts in (``on_unreadable = "text"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from slimtools._json import dumps_str
from slimtools.foreign._payload import obvious_list, parse_json
from slimtools.projection import UNPARSED, DenyTree, Projection, strip_anywhere

__all__ = ["Screen", "withheld"]


def withheld(text: str, reason: str) -> str:
    """The note sent instead of a text block that cannot be shown: its size and why."""
    return f"[withheld by slimtools: a text block of {len(text)} characters {reason}]"


def _leaves(tree: DenyTree) -> set[str]:
    """Every key the deny tree names, at any depth (the names a free text may quote)."""
    names: set[str] = set()
    for key, sub in tree.items():
        names.add(key)
        if sub:
            names |= _leaves(sub)
    return names


@dataclass(frozen=True)
class Screen:
    """How one passed-through result of a configured tool is screened.

    Args:
        deny: the tool's compiled deny paths (None: nothing denied).
        allowlist: the tool's allowlist (a model or dotted names), None for none.
        items: where the records sit in a dict result (``items =``).
        is_error: an error keeps its message keys: the model must learn what went wrong.
        unreadable_text: True when the tool opted in to see free text it cannot project.
    """

    deny: DenyTree | None
    allowlist: Any = None
    items: str | None = None
    is_error: bool = False
    unreadable_text: bool = False

    @property
    def active(self) -> bool:
        """False when nothing is denied or projected: results pass untouched."""
        return self.deny is not None or self.allowlist is not None

    def data(self, value: Any) -> Any:
        """``value`` without the denied paths, and projected when the tool has an allowlist."""
        if value is None or not self.active:
            return value
        value = strip_anywhere(value, self.deny)
        if self.allowlist is None:
            return value
        projection = Projection.from_spec(self.allowlist, deny=self.deny)
        if self.is_error:
            return _error_body(value, projection)
        records = value
        if isinstance(value, dict):
            key = self.items or obvious_list(value)
            records = _at(value, key) if key else value
        if isinstance(records, dict):
            return projection.project(records)
        if isinstance(records, list):
            return [projection.project(r) for r in records if isinstance(r, dict)]
        return None

    def text(self, text: str) -> str:
        """One text block as the model may see it (re-serialised, or withheld)."""
        if not self.active:
            return text
        parsed = parse_json(text)
        if parsed is not UNPARSED:
            return dumps_str(self.data(parsed))
        named = self._denied_key_in(text)
        if named is not None:
            return withheld(text, f"that could not be read as data and names the denied {named!r}")
        if self.allowlist is not None and not self.is_error and not self.unreadable_text:
            return withheld(text, "that could not be read as records for the allowlist")
        return text

    def _denied_key_in(self, text: str) -> str | None:
        if self.deny is None:
            return None
        for name in sorted(_leaves(self.deny)):
            if re.search(rf"(?<![\w-])[\"']?{re.escape(name)}[\"']?\s*[:=]", text):
                return name
        return None


_MESSAGE_KEYS = frozenset(
    {"error", "errors", "message", "detail", "details", "code", "status", "reason", "title"}
    | {"type", "hint", "documentation_url", "status_code", "error_code", "error_description"}
)
"""Keys of an error body kept beside the allowlist: what says what went wrong."""


def _error_body(value: Any, projection: Projection) -> Any:
    """An error's data under an allowlist: its message keys, and records projected inside.

    Records an error quotes (``{"error": ..., "row": {...}}``) show only the allowlist; the
    words of the error (``error``, ``message``, ``code``...) stay, when they are scalars.
    """
    if isinstance(value, list):
        return [_error_body(item, projection) for item in value if isinstance(item, (dict, list))]
    if not isinstance(value, dict):
        return value
    out = projection.project(value)
    for key, item in value.items():
        if key in out:
            continue
        if isinstance(item, (dict, list)):
            out[key] = _error_body(item, projection)
        elif key in _MESSAGE_KEYS:
            out[key] = item
    return out


def _at(data: dict[str, Any], dotted: str) -> Any:
    value: Any = data
    for step in dotted.split("."):
        if not isinstance(value, dict) or step not in value:
            return None
        value = value[step]
    return value
