"""The gate every block of a configured tool's passed-through result crosses (pure).

Errors, mixed results (JSON beside an image) and embedded resources are passed through as
the upstream sent them, but never past ``deny``: each text is read as JSON data where it
can be (``_payload.parse_json``) and re-sent without the denied paths, structured content
loses them too, and a text that cannot be read but names a denied field as a key
(``"ssn": ...``, ``ssn=...``, JSON-escaped ``\\"ssn\\":``) is withheld, never shown raw.
A denied value seen in any block of the result (the ``ssn`` of a record) is masked wherever
else it appears, and pairs quoted inside strings (a record in an error's message) lose their
denied values (and, under an allowlist, those it does not show). A tool with an allowlist shows
only its fields in a successful mixed result: records are projected, and free text that
cannot be projected is withheld unless the tool opts in (``on_unreadable = "text"``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slimtools._json import dumps_str
from slimtools.foreign._payload import obvious_list, parse_json
from slimtools.projection import (
    UNPARSED,
    DenyTree,
    Projection,
    Secrets,
    all_names,
    apply_deny,
    denied_names,
    scrub_pairs,
    scrub_rows,
    spelled,
)

__all__ = ["Screen", "withheld"]


def withheld(text: str, reason: str) -> str:
    """The note sent instead of a text block that cannot be shown: its size and why."""
    return f"[withheld by slimtools: a text block of {len(text)} characters {reason}]"


@dataclass(frozen=True)
class Screen:
    """How one passed-through result of a configured tool is screened.

    Args:
        deny: the tool's compiled deny paths (None: nothing denied).
        allowlist: the tool's allowlist (a model or dotted names), None for none.
        items: where the records sit in a dict result (``items =``).
        is_error: an error keeps its message keys: the model must learn what went wrong.
        unreadable_text: True when the tool opted in to see free text it cannot project.
        secrets: denied values the whole result holds, masked in every block (:meth:`knowing`).
    """

    deny: DenyTree | None
    allowlist: Any = None
    items: str | None = None
    is_error: bool = False
    unreadable_text: bool = False
    secrets: Secrets | None = None

    @property
    def active(self) -> bool:
        """False when nothing is denied or projected: results pass untouched."""
        return self.deny is not None or self.allowlist is not None

    def knowing(self, texts: Sequence[str], structured: Any = None) -> Screen:
        """This screen, also masking the denied values any of a result's blocks holds (a
        record's ``ssn`` quoted by an error's free text or by a caption beside it)."""
        if self.deny is None:
            return self
        values = [found for t in texts if (found := parse_json(t)) is not UNPARSED]
        found = apply_deny([*values, structured], self.deny)[1]
        return dataclasses.replace(self, secrets=found) if found else self

    def data(self, value: Any) -> Any:
        """``value`` without the denied paths, and projected when the tool has an allowlist;
        its strings lose the denied values and pairs they quote."""
        if value is None or not self.active:
            return value
        known = self.secrets.values if self.secrets else ()
        value, secrets = apply_deny(value, self.deny, known)
        if self.allowlist is None:
            return self._scrubbed(value, secrets, None)
        projection = Projection.from_spec(self.allowlist, deny=self.deny)
        allowed = projection.names - denied_names(self.deny)
        return self._scrubbed(self._projected(value, projection), secrets, allowed)

    def _projected(self, value: Any, projection: Projection) -> Any:
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
        column = self._denied_column_in(text)
        if column is not None:
            return withheld(text, f"holding a table with the denied column {column!r}")
        if self.allowlist is not None and not self.is_error and not self.unreadable_text:
            return withheld(text, "that could not be read as records for the allowlist")
        text = scrub_rows(text, denied_names(self.deny))
        return self.secrets.text(text) if self.secrets else text

    def label(self, text: str) -> str:
        """A short label (a resource link's name) with denied values and pairs masked: it
        names the block, so it is never withheld."""
        return str(self._scrubbed(text, self.secrets or Secrets(()), None)) if self.active else text

    def _scrubbed(self, value: Any, secrets: Secrets, allowed: frozenset[str] | None) -> Any:
        """Plain data whose strings lose the secrets and the denied (or unlisted) pairs."""
        denied = denied_names(self.deny)
        if isinstance(value, str):
            if allowed is not None and self.is_error:
                allowed = allowed | _MESSAGE_KEYS
            return secrets.text(scrub_pairs(value, denied, allowed))
        if isinstance(value, dict):
            return {k: self._scrubbed(v, secrets, allowed) for k, v in value.items()}
        if isinstance(value, list):
            return [self._scrubbed(v, secrets, allowed) for v in value]
        return value

    def _denied_column_in(self, text: str) -> str | None:
        """A denied name that heads a column of a table the text holds (CSV, TSV, a
        markdown or ``psql`` table): its values sit under it with no key beside them."""
        if self.deny is None:
            return None
        for name in sorted(all_names(self.deny)):
            cell = rf"[\"'`]?{spelled(name)}[\"'`]?"
            table = (
                rf"(?m)^(?=[^\n]*[|,;\t])(?:[^\n]*[|,;\t])?[ \t]*{cell}[ \t]*(?:[|,;\t][^\n]*)?$"
            )
            if re.search(table, text, re.IGNORECASE):
                return name
        return None

    def _denied_key_in(self, text: str) -> str | None:
        if self.deny is None:
            return None
        for name in sorted(all_names(self.deny)):
            pattern = rf"(?<![\w-])(?:\\?[\"'])?{spelled(name)}(?:\\?[\"'])?\s*[:=]"
            if re.search(pattern, text, re.IGNORECASE):
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
