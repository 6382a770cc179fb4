"""Which fields an automatic brief shows: a pure function of a tool's declared output schema
and of the result itself.

The same result therefore gets the same fields in every process and instance, whatever each
saw before (the prompt cache sees the same bytes), and each result is judged on its own, so a
tool whose results have several shapes (``read_query`` over two tables, a search returning
products or log lines) shows each shape's own fields. Records are grouped by shape (their set
of keys); each shape keeps its short scalar fields first (ids, names, states and levels,
timestamps, numbers, short strings), up to ``MAX_FIELDS``, and a long text only when the
shape has no name-like field (clipped to ``CLIP``). Every shape shows at least one field, so
no brief is a bare handle. What a shape leaves out is listed in the envelope's hint.

Rejected: fixing the fields from the first large result a process sees (what the proxy did):
two instances, or one after a restart, then showed one call different bytes, and every shape
but the first got handle-only briefs.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from slimtools.foreign import FieldSpec
from slimtools.proxy.suggest import _ACTORS, _IDS, _KINDS, _NAMES, _STATES, _SUBNAMES

_TEXTS = ("subject", "title", "summary", "message", "msg", "text", "description", "body")
"""Long texts a brief may show the head of, most telling first."""

__all__ = ["CLIP", "MAX_FIELDS", "Choice", "choose_fields", "record_properties"]

MAX_FIELDS = 8
"""Fields a shape's brief shows at most: a brief is a line, not the record."""
CLIP = 80
"""Characters a long text keeps when it is a shape's only name-like field (a subject line)."""
SHORT = 40
"""A string field is short when its median value is at most this many characters."""

_LEVELS = ("level", "severity", "priority", "status_code", "code", "lvl")
_MORE_NAMES = ("subject", "sku", "service", "author", "host", "email", "slug", "symbol")
_WHEN = re.compile(r"\d{4}-\d\d-\d\d([T ]\d\d:\d\d)?")
_SCALAR_TYPES = frozenset({"integer", "number", "boolean"})


@dataclass(frozen=True)
class Choice:
    """The fields briefs show, and the record keys they leave out, in record order."""

    fields: tuple[FieldSpec, ...]
    left_out: tuple[str, ...]

    @property
    def shown(self) -> tuple[str, ...]:
        """The fields' names as briefs show them."""
        return tuple(f.output for f in self.fields)


def choose_fields(records: Sequence[Any], schema: Mapping[str, Any] | None = None) -> Choice | None:
    """The fields to brief ``records`` with, or None when none is a record (a dict).

    ``schema``: the tool's declared ``outputSchema``; the property schemas of its records
    (``integer``, ``enum``, ``format: date-time``, a short ``maxLength``) say which fields are
    short scalars before any value is looked at.
    """
    shapes: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for record in records:
        if isinstance(record, dict) and record:
            shapes.setdefault(tuple(sorted(map(str, record))), []).append(record)
    if not shapes:
        return None
    declared = record_properties(schema)
    fields: dict[FieldSpec, None] = {}
    seen: dict[str, None] = {}
    for group in shapes.values():
        seen.update(dict.fromkeys(str(k) for k in group[0]))
        fields.update(dict.fromkeys(_shape_fields(group, declared)))
    shown = {f.path[0] for f in fields}
    return Choice(tuple(fields), tuple(k for k in seen if k not in shown))


def record_properties(schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The property schemas of the records an output schema declares: of the items of its
    array (or of its one array property), else of the object itself."""
    if not isinstance(schema, Mapping):
        return {}
    node: Any = schema
    if node.get("type") != "array":
        arrays = [
            p
            for p in (node.get("properties") or {}).values()
            if isinstance(p, Mapping) and p.get("type") == "array"
        ]
        if len(arrays) == 1:
            node = arrays[0]
    if node.get("type") == "array":
        node = node.get("items") or {}
    found = node.get("properties") if isinstance(node, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _shape_fields(records: list[dict[str, Any]], declared: Mapping[str, Any]) -> list[FieldSpec]:
    """One shape's fields, best first: ranked short scalars, then a clipped text if needed."""
    ranked: list[tuple[int, int, FieldSpec]] = []
    texts: list[FieldSpec] = []
    for order, key in enumerate(records[0]):
        if not isinstance(key, str) or not key or "." in key:
            continue  # a path the field syntax cannot name: left out, and listed
        values = [r.get(key) for r in records if r.get(key) is not None]
        rank, spec = _judge(key, values, declared.get(key))
        if spec is None:
            continue
        if rank is None:
            texts.append(spec)
        else:
            ranked.append((rank, order, spec))
    ranked.sort(key=lambda row: row[:2])
    chosen = [spec for _, _, spec in ranked[:MAX_FIELDS]]
    named = any(spec.path[0].lower() in _NAMES for spec in chosen)
    if texts and not named:  # a log line's message, a commit's subject: its head
        chosen.append(min(texts, key=lambda f: _text_rank(f.path[-1])))
    if not chosen:  # never a bare handle: the first key whatever it holds
        first = next(iter(records[0]))
        chosen.append(FieldSpec(path=(str(first),)))
    return chosen


def _judge(key: str, values: list[Any], declared: Any) -> tuple[int | None, FieldSpec | None]:
    """``(rank, field)`` of one record key: a short scalar's rank (lower shows first),
    ``(None, field)`` for a long text, ``(None, None)`` for what briefs leave out."""
    low = key.lower()
    if low == "url" or low.endswith(("_url", "_urls", "node_id")) or low == "gravatar_id":
        return None, None
    if not values:
        return None, None
    if all(isinstance(v, dict) for v in values):
        sub = next((s for s in _SUBNAMES if sum(s in v for v in values) * 2 > len(values)), None)
        if sub is None or any(isinstance(v.get(sub), (dict, list)) for v in values):
            return None, _nested_text(key, values)
        rank = 1 if low in _ACTORS or sub in ("login", "name") else 2
        return rank, FieldSpec(path=(key, sub), name=key)
    if any(isinstance(v, (dict, list)) for v in values):
        return None, None
    scalar = _scalar_rank(key, values, declared if isinstance(declared, Mapping) else {})
    if scalar is not None:
        return scalar, FieldSpec(path=(key,))
    if all(isinstance(v, str) for v in values):
        return None, FieldSpec(path=(key,), name=key, clip=CLIP)  # a long text: its head
    return None, None


def _nested_text(key: str, values: list[dict[str, Any]]) -> FieldSpec | None:
    """The head of a nested object's text (a GitHub commit's ``commit.message``), if any."""
    for sub in sorted({s for v in values for s in v if isinstance(s, str)}, key=_text_rank):
        if _text_rank(sub) < len(_TEXTS) and all(isinstance(v.get(sub, ""), str) for v in values):
            return FieldSpec(path=(key, sub), name=sub, clip=CLIP)
    return None


def _text_rank(key: str) -> int:
    """How telling a text field is by its name (``_TEXTS`` order; others last)."""
    low = key.lower()
    return _TEXTS.index(low) if low in _TEXTS else len(_TEXTS)


def _scalar_rank(key: str, values: list[Any], declared: Mapping[str, Any]) -> int | None:
    """Where a short scalar field ranks (0 ids, 1 names, 2 states and levels, 3 times,
    4 numbers, 5 other short strings), or None when it is a long text."""
    low = key.lower()
    strings = [v for v in values if isinstance(v, str)]
    kind = declared.get("type")
    short = (
        kind in _SCALAR_TYPES
        or "enum" in declared
        or declared.get("format") in ("date-time", "date", "time", "uuid", "email")
        or (isinstance(declared.get("maxLength"), int) and declared["maxLength"] <= SHORT * 2)
        or not strings
        or statistics.median(len(s) for s in strings) <= SHORT
    )
    if not short:
        return None
    if low in _IDS or low.endswith("_id") or key.endswith("Id"):
        return 0
    if low in _NAMES or low in _MORE_NAMES:
        return 1
    if low in _STATES or low in _KINDS or low in _LEVELS or low.endswith(("_type", "_kind")):
        return 2
    if (
        low.endswith(("_at", "_date", "_time", "time", "timestamp"))
        or low == "date"
        or declared.get("format") in ("date-time", "date", "time")
        or (strings and all(_WHEN.match(s) for s in strings))
    ):
        return 3
    if not strings:
        return 4
    return 5 if low not in _TEXTS else 1
