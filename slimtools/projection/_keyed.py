"""A mapping that is records: ids to records, or a table of columns and rows (pure).

Some results are records wearing a mapping: ``{"123": {...}, "456": {...}}`` (an API keying
its results by id) and ``{"columns": [...], "rows": [[...], ...]}`` (a SQL tool's table).
Read as one record, projection would show nothing of them and a ``deny`` would miss the
columns it names; read as records, each is projected and stripped on its own. Only the
pipeline (and a foreign tool's guard) knows the tool's names, so it asks these functions.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

_ID = re.compile(r"(?=[^0-9]*[0-9])[A-Za-z0-9_.:\-]{1,64}")
_ROW_KEYS = ("rows", "data", "values")


def records_by_id(value: Any, key: str, names: Collection[str]) -> Any:
    """The records of a mapping of ids to records, each with its id under ``key``; else ``value``.

    ``{"123": {"name": "a"}, "456": {"name": "b"}}`` (some APIs key their results by id)
    becomes ``[{"id": "123", "name": "a"}, {"id": "456", "name": "b"}]`` with ``key="id"``;
    a record that has ``key`` already keeps its own. Only an unambiguous mapping: every key
    an id (an integer, or a word of at most 64 letters, digits and ``_.:-`` holding a digit:
    ``123``, ``usr_9``, a UUID, a date), every value a plain mapping, all sharing a key, and
    no key one of ``names`` (the tool's allowlisted and denied names: a tool that names
    ``"123"`` reads the mapping as one record). One entry is enough, so a search finding one
    hit reads like one finding two. Each record is then projected and stripped of denied
    paths on its own (a deny written for the records reaches them, where read as one record
    it would not): nothing shows that the allowlist does not name.
    """
    if type(value) is not dict or not value:
        return value
    shared: set[Any] | None = None
    for id_, record in value.items():
        if not isinstance(record, Mapping) or id_ in names or not _is_id(id_):
            return value
        shared = set(record) if shared is None else shared.intersection(record)
        if not shared:
            return value
    return [record if key in record else {key: id_, **record} for id_, record in value.items()]


def table_records(value: Any, names: Collection[str]) -> Any:
    """The rows of a table sent as data, as records; else ``value``.

    ``{"columns": ["id", "ssn"], "rows": [[1, "..."], ...]}`` (how SQL tools and APIs send
    a query's result; ``data`` or ``values`` for ``rows``, column entries names or
    ``{"name": ...}``) becomes ``[{"id": 1, "ssn": "..."}, ...]``, so projection and ``deny``
    reach each column by its name; read as one record, a denied column's values would ride
    out in ``rows``. Only an unambiguous table: every column named by a string, one list of
    rows, each of exactly as many values, and no key of the mapping one of ``names`` (the
    tool's allowlisted and denied names: a tool that names ``rows`` reads it as one record).
    Other keys (``rowCount``) are dropped.
    """
    if type(value) is not dict or "columns" not in value or any(k in names for k in value):
        return value
    found = [k for k in _ROW_KEYS if isinstance(value.get(k), list)]
    columns = value["columns"]
    if len(found) != 1 or not isinstance(columns, list) or not columns:
        return value
    cols = [c.get("name") if isinstance(c, Mapping) else c for c in columns]
    if not all(isinstance(c, str) for c in cols):
        return value
    table = value[found[0]]
    if not all(isinstance(r, (list, tuple)) and len(r) == len(cols) for r in table):
        return value
    return [dict(zip(cols, row, strict=True)) for row in table]


def _is_id(key: Any) -> bool:
    """True for an integer (not a bool) or a string shaped like an id (see ``records_by_id``)."""
    if isinstance(key, int):
        return not isinstance(key, bool)
    return isinstance(key, str) and _ID.fullmatch(key) is not None
