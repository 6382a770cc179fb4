"""Reading any tool result as data that projection can take, or saying why it cannot (pure).

A tool with an allowlist or a ``deny`` shows only what it can project; what it cannot read
as records is withheld (firewalls deny what they cannot parse). This module is the one
reader behind that rule, shared by the decorators, ``slimtools.wrap`` and the MCP proxy:

- text is read as JSON (with ``NaN``/``Infinity``, a byte-order mark, lone surrogates,
  integers beyond 64 bits kept exact), inside a fenced code block, after a one-line preamble
  (``Found 50 items:``), as JSON Lines, or as a Python literal (``ast.literal_eval``, never
  ``eval``: the ``str()`` of a list of dicts that some MCP servers send);
- bytes are read as UTF-8 text; LangChain-style content blocks
  (``[{"type": "text", "text": ...}]``), ``ToolMessage``-like objects (``.artifact``, else
  ``.content``) and MCP ``CallToolResult``-like objects (``.structuredContent``, else the
  text blocks of ``.content``) are unwrapped, duck-typed, without importing any framework;
- an ``Envelope`` another tool built (a guarded tool relaying it) is read as its text, else
  its briefs: the allowlist and ``deny`` apply to it like to any result;
- a row whose names are known is read as a record: a namedtuple (its ``_fields``), a
  ``sqlite3.Row`` (its ``keys()``), a frame-like object (public ``columns`` and ``values``, a
  ``pandas.DataFrame``: its rows, through ``to_dict(orient="records")`` when it has one; or
  ``columns`` and ``to_dicts()``, a ``polars.DataFrame``);
- records (mappings, Pydantic models, dataclasses, objects with attributes), lists of them,
  iterators and numbers are returned as they are: projection reads them. A mapping of ids
  to records (``{"123": {...}, "456": {...}}``) is one record here; the pipeline asks
  ``records_by_id`` for its records, since only it knows the tool's names
  (``slimtools.projection._keyed``, with ``table_records`` for a table of columns and rows).

Anything else is an :class:`Unreadable` verdict: its kind, its size and a one-line reason.

The items of a list of results go through :func:`rows`, the one rule for rows without keys:
each is read as a record where its names are known (the forms above, or a JSON object's
text); a row whose names are not known (a plain tuple from ``fetchall()``, a list, a set, a
scalar, prose) cannot be projected nor stripped of a denied column, so it is withheld, from
the briefs and from ``get_record`` alike, with a note saying why.
"""

from __future__ import annotations

import ast
import datetime
import decimal
import enum
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from slimtools._json import loads
from slimtools.envelope import Envelope
from slimtools.projection._pyliteral import literal_items
from slimtools.projection._shapes import is_record

UNPARSED: Any = object()
"""What a parser returns for text it cannot read."""

LITERAL_MAX_CHARS = 2_000_000
"""Longer text is not parsed as one Python literal (``ast`` needs many times its size): a
longer list is read item by item (``slimtools.projection._pyliteral``), each item at most this."""

_PREAMBLE_MAX_CHARS = 300
_BLOCK_KEYS = frozenset({"type", "text", "id", "annotations", "index", "extras", "_meta"})
_SCALARS = (int, float, decimal.Decimal, datetime.date, datetime.time, datetime.timedelta)
_FENCE = re.compile(r"^```[\w+.-]*[ \t]*\r?\n(.*?)\r?\n?```", re.DOTALL)
_DICT = frozenset({dict})


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A result that could not be read as records: what it is, how big, and why not."""

    kind: str
    """``"text"``, ``"bytes"`` or the type name of an object."""
    size: int
    """Its length: characters of a text, bytes of bytes, characters of an object's ``str``."""
    reason: str
    """Why it is not records, in one line."""
    text: str | None = None
    """The text itself (for text and UTF-8 bytes), shown only under an explicit opt-in."""

    def describe(self) -> str:
        """The envelope's note: the result was withheld, what it was and why."""
        unit = "bytes" if self.kind == "bytes" else "characters"
        return (
            f"the result ({self.kind}, {self.size:,} {unit}) could not be read as records "
            f"({self.reason}), so it was withheld: this tool shows only fields it can project"
        )


def read(value: Any) -> Any:
    """``value`` as data projection can take (see the module docstring), or :class:`Unreadable`.

    Never raises. ``None`` (and empty text) stays ``None``: the tool returned nothing.
    """
    if type(value) is list:  # the usual result, with one check
        return _read_blocks(value)
    if isinstance(value, str):
        return read_text(value)
    if isinstance(value, Unreadable):
        return value
    if isinstance(value, Envelope):  # another tool's answer, relayed: its data, read again
        return read(value.text) if value.text is not None else _read_blocks(value.briefs)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return Unreadable("bytes", len(raw), "bytes that are not UTF-8 text")
        found = read_text(text)
        if isinstance(found, Unreadable):
            return Unreadable("bytes", len(raw), found.reason, text)
        return found
    if value is None or isinstance(value, (bool, Mapping, set, frozenset, Iterator, *_SCALARS)):
        return value
    if isinstance(value, (list, tuple)):
        if isinstance(value, tuple) and _fields(value) is not None:  # one namedtuple row
            return as_record(value)
        return _read_blocks(value)
    if not isinstance(value, BaseModel):
        named = _named_object(value)
        if named is not UNPARSED:
            return named
    unwrapped = _unwrap(value)
    if unwrapped is not UNPARSED:
        return read(unwrapped)
    if isinstance(value, (BaseModel, enum.Enum, uuid.UUID)) or _has_fields(value):
        return value
    return Unreadable(type(value).__name__, _size(value), "an object with no readable fields")


class Rows(list[Any]):
    """The records :func:`rows` read from a result, and what it withheld of its items."""

    __slots__ = ("withheld",)

    def __init__(self, records: list[Any], withheld: Unreadable) -> None:
        super().__init__(records)
        self.withheld = withheld
        """The withheld items: their kinds, how many, and why."""

    def note(self) -> str:
        """The envelope's note: which items were withheld and why."""
        return (
            f"{self.withheld.size:,} of {self.withheld.size + len(self):,} items "
            f"({self.withheld.kind}) could not be read as records ({self.withheld.reason}), "
            "so they were withheld: this tool shows only fields it can project"
        )


def rows(items: Any) -> Any:
    """The items of a guarded tool's result as records (the one rule for rows without keys).

    Each item is read by :func:`as_record`; a list of records (the usual result) is returned
    as it is. Items with no known names are withheld: with records beside them the answer is
    a :class:`Rows` that says so, with none at all an :class:`Unreadable` verdict. ``items``
    is a list, tuple, set or iterator (read here); a :class:`Rows` is returned as it is.
    """
    if type(items) is Rows:
        return items
    seq = items if isinstance(items, (list, tuple)) else list(items)
    if set(map(type, seq)) <= _DICT:  # the usual list of records: one pass, in C
        return seq
    records: list[Any] = []
    dropped: list[Any] = []
    for item in seq:
        found = as_record(item)
        if found is UNPARSED:
            dropped.append(item)
        else:
            records.append(found)
    if not dropped:
        return records
    kinds = ", ".join(sorted({type(x).__name__ for x in dropped}))
    if not records:
        plural = "row" if len(seq) == 1 else "rows"
        reason = f"{len(seq):,} {plural} of {kinds} without field names"
        return Unreadable(type(items).__name__, _size(seq), reason)
    why = "rows without field names: nothing tells which of their values to show or deny"
    return Rows(records, Unreadable(kinds, len(dropped), why))


def as_record(item: Any) -> Any:
    """``item`` as a record projection can read, or ``UNPARSED`` when its names are unknown.

    Records stay as they are (``None`` too: it holds nothing); a namedtuple becomes a dict of
    its ``_fields``, a row with ``keys()`` (``sqlite3.Row``) a dict of them, a JSON object's
    text that object. A plain tuple or list, a set, a scalar or prose has no names: what a
    ``deny`` names cannot be found in it, so it is not a record.
    """
    if item is None or type(item) is dict:
        return item
    if isinstance(item, tuple):
        names = _fields(item)
        return UNPARSED if names is None else dict(zip(names, item, strict=True))
    if isinstance(item, (str, bytes, bytearray)):
        found = read(item)
        return dict(found) if isinstance(found, Mapping) else UNPARSED
    if is_record(item):
        return item
    named = _named_object(item)
    return UNPARSED if named is UNPARSED or not isinstance(named, dict) else named


def _fields(row: tuple[Any, ...]) -> tuple[str, ...] | None:
    """A namedtuple's field names, ``None`` for a plain tuple."""
    names = getattr(type(row), "_fields", None)
    if not isinstance(names, tuple) or len(names) != len(row):
        return None
    return names if all(isinstance(n, str) for n in names) else None


def _named_object(value: Any) -> Any:
    """A keyed row (``sqlite3.Row``) as a dict, a frame-like object as its rows; else
    ``UNPARSED``, or :class:`Unreadable` when such an object fails to give its rows."""
    if isinstance(value, (type, str, bytes, bytearray, Mapping)):
        return UNPARSED
    keys = getattr(value, "keys", None)
    if callable(keys) and hasattr(value, "__getitem__") and not hasattr(value, "__dict__"):
        try:
            names = list(keys())
            if all(isinstance(n, str) for n in names):
                return {n: value[n] for n in names}
        except Exception:  # a broken row must not fail the tool: it is withheld
            return Unreadable(type(value).__name__, _size(value), "a row whose keys fail")
        return UNPARSED
    columns = getattr(value, "columns", None)
    values = getattr(value, "values", None)
    to_dicts = getattr(value, "to_dicts", None)  # polars: no ``values``, rows as dicts
    if columns is None or ((values is None or callable(values)) and not callable(to_dicts)):
        return UNPARSED
    if isinstance(columns, (str, bytes)) or not hasattr(columns, "__iter__"):
        return UNPARSED  # ``columns = 3`` of a chart: not a table, read as an object
    try:
        if callable(to_dicts) and (values is None or callable(values)):
            return _mappings(to_dicts())
        return _frame_rows(value, columns, values)
    except Exception:  # a frame whose rows cannot be read is withheld, never shown raw
        return Unreadable(type(value).__name__, _size(value), "a table whose rows fail")


def _frame_rows(frame: Any, columns: Any, values: Any) -> list[dict[Any, Any]]:
    """The rows of a frame-like object (``pandas.DataFrame``) as dicts of its columns."""
    to_dict = getattr(frame, "to_dict", None)
    if callable(to_dict):
        return _mappings(to_dict(orient="records"))
    names = list(columns.tolist() if hasattr(columns, "tolist") else columns)
    table = values.tolist() if hasattr(values, "tolist") else list(values)
    return [dict(zip(names, row, strict=True)) for row in table]


def _mappings(found: Any) -> list[dict[Any, Any]]:
    """A frame's rows as dicts; ``TypeError`` when they are not a list of mappings."""
    if not isinstance(found, list) or not all(isinstance(r, Mapping) for r in found):
        raise TypeError("the table's rows are not mappings")
    return [dict(r) for r in found]


def read_text(text: str) -> Any:
    """The data ``text`` holds, ``None`` for empty text, else :class:`Unreadable`."""
    body = text.lstrip("\ufeff").strip()
    if not body:
        return None
    for candidate in _candidates(body):
        found = _parse(candidate)
        if found is not UNPARSED:
            if isinstance(found, str):  # JSON text quoted as a JSON string: read it once more
                inner = _parse(found.strip())
                if inner is UNPARSED:
                    break
                return inner
            return found
    return Unreadable(
        "text", len(text), "not JSON, JSON Lines or a Python literal of records", text
    )


def parse_json(text: str) -> Any:
    """The JSON value ``text`` holds, ``UNPARSED`` when it is not JSON.

    Reads what Python's ``json.dumps`` writes and orjson refuses (``NaN``, ``Infinity``,
    lone surrogates) and keeps integers beyond 64 bits exact (``slimtools._json``).
    """
    try:
        return loads(text)
    except ValueError:
        return UNPARSED
    except RecursionError:  # nesting too deep for the standard library's parser
        return UNPARSED


def _candidates(body: str) -> Iterator[str]:
    """The text itself, then the text after a one-line preamble (``Found 50 items:``)."""
    yield body
    first, newline, rest = body.partition("\n")
    if newline and len(first) <= _PREAMBLE_MAX_CHARS and rest.strip():
        yield rest.strip()
    opening = min((i for i in (first.find("["), first.find("{")) if i > 0), default=-1)
    if 0 < opening <= _PREAMBLE_MAX_CHARS and first[:opening].rstrip().endswith(":"):
        yield body[opening:]


def _parse(text: str) -> Any:
    """JSON, a fenced block of it, JSON Lines or a Python literal; ``UNPARSED`` otherwise."""
    fenced = _FENCE.match(text)
    if fenced is not None:
        text = fenced.group(1).strip()
    if not text:
        return UNPARSED
    found = parse_json(text) if text[0] in '[{"-0123456789tfnNI' else UNPARSED
    if found is not UNPARSED:
        return found
    if text[0] not in "[{(":
        return UNPARSED
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        values = [parse_json(line) for line in lines]
        if all(isinstance(v, (dict, list)) for v in values):
            return values
    return _literal(text)


def _literal(text: str) -> Any:
    """A Python literal of containers (``[{'id': 1}]``), read with ``ast.literal_eval``."""
    if len(text) > LITERAL_MAX_CHARS:
        items = literal_items(text, LITERAL_MAX_CHARS)
        return UNPARSED if items is None else items
    try:
        tree = ast.parse(text, mode="eval")
        value = ast.literal_eval(_FloatNames().visit(tree))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNPARSED
    return value if isinstance(value, (list, tuple, dict, set, frozenset)) else UNPARSED


class _FloatNames(ast.NodeTransformer):
    """``inf`` and ``nan`` (how Python's ``repr`` writes those floats) as float constants,
    so ``literal_eval`` reads them; any other name stays and is refused."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in ("inf", "nan"):
            return ast.copy_location(ast.Constant(float(node.id)), node)
        return node


def _read_blocks(items: Sequence[Any]) -> Any:
    """Content blocks as the data their texts hold; any other list as it is.

    Blocks whose texts cannot be read stay the list they are: projected as records, they
    show no more than the allowlist names.
    """
    if not items or _block_text(items[0]) is None:  # the usual list of records: one check
        return items
    texts = [_block_text(item) for item in items]
    if any(t is None for t in texts):
        return items
    joined = [t for t in texts if t is not None]
    if len(joined) > 1:
        each = [read_text(t) for t in joined]
        if not any(isinstance(v, Unreadable) or v is None for v in each):
            return each
    found = read_text("\n".join(joined))
    return items if isinstance(found, Unreadable) else found


def _block_text(item: Any) -> str | None:
    """The text of a text content block (a dict, or an object such as MCP's ``TextContent``)."""
    if type(item) is dict and item.get("type") != "text":  # the usual record, at a glance
        return None
    if isinstance(item, Mapping):
        text = item.get("text")
        if item.get("type") == "text" and isinstance(text, str) and item.keys() <= _BLOCK_KEYS:
            return text
        return None
    text = getattr(item, "text", None)
    if getattr(item, "type", None) == "text" and isinstance(text, str):
        return text
    return None


def _unwrap(value: Any) -> Any:
    """What a ``ToolMessage``- or ``CallToolResult``-like object carries, or ``UNPARSED``."""
    if getattr(value, "type", None) == "tool" and hasattr(value, "content"):
        artifact = getattr(value, "artifact", None)
        return artifact if artifact is not None else value.content
    content = getattr(value, "content", None)
    if isinstance(content, list) and hasattr(value, "structuredContent"):
        structured = value.structuredContent
        return structured if structured is not None else content
    return UNPARSED


def _has_fields(value: Any) -> bool:
    """True for a dataclass instance or an object whose data are attributes."""
    if isinstance(value, type):
        return False
    if hasattr(value, "__dataclass_fields__"):
        return True
    attrs = getattr(value, "__dict__", None)
    return isinstance(attrs, dict)


def _size(value: Any) -> int:
    try:
        return len(str(value))
    except Exception:  # a broken __str__ must not fail the tool
        return 0
