"""What a tool we did not write returned, as data the slimming pipeline can take (pure).

Shared by the MCP proxy and ``slimtools.wrap``: the data is read from structured content
when there is some (a ``{"content": "..."}`` wrapper around one text is unwrapped), else
from the text as the core reads it (``slimtools.projection._readable``: JSON, also with ``NaN``,
a BOM, a code fence or a one-line preamble, JSON Lines, Python literal reprs), else it is
the text itself. For a tool with an allowlist or a deny (:func:`guard`) text that cannot be
read is withheld, and denied paths are removed before anything else sees the data. An
oversized result of an unconfigured tool is reshaped so that it pages
without ever cutting JSON: records when it is a list (or holds one obvious list) of records
that each fit the budget, else pretty-printed JSON or the text, paged by whole lines.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from slimtools._json import dumps_str, to_jsonable
from slimtools.projection import (
    UNPARSED,
    DenyTree,
    Rows,
    Unreadable,
    apply_deny,
    denied_names,
    read,
    read_text,
    rows,
    scrub_pairs,
    table_records,
)
from slimtools.tokens import TokenCounter
from slimtools.toolkit import ToolResult


def parse_json(text: str) -> Any:
    """The records or object ``text`` holds, or ``UNPARSED`` (scalars and prose stay text).

    Read as the core reads text results (see the module docstring); a Python literal's
    tuples and sets become lists.
    """
    found = read_text(text)
    if isinstance(found, (tuple, set, frozenset)):
        return to_jsonable(found)
    return found if isinstance(found, (dict, list)) else UNPARSED


def extract(texts: Sequence[str], structured: Any = None) -> Any:
    """The data of a text-only result: structured content, else JSON text, else the text.

    Several text blocks that each hold JSON are a list of their values (servers that send
    one block per item); otherwise they are joined by newlines.
    """
    if structured is not None:
        return unwrap(structured)
    if len(texts) == 1:
        parsed = parse_json(texts[0])
        return texts[0] if parsed is UNPARSED else parsed
    parsed_all = [parse_json(t) for t in texts]
    if texts and all(p is not UNPARSED for p in parsed_all):
        return parsed_all
    return "\n".join(texts)


def guard(
    texts: Sequence[str],
    structured: Any,
    deny: DenyTree | None,
    *,
    on_unreadable: str = "withhold",
    items: str | None = None,
    key: str | None = None,
    tables: bool = False,
) -> Any:
    """The data of a text result of a tool with an allowlist or a deny (:func:`guard_value`)."""
    data = extract(texts, structured)
    return guard_value(data, deny, on_unreadable=on_unreadable, items=items, key=key, tables=tables)


def guard_value(
    value: Any,
    deny: DenyTree | None,
    *,
    on_unreadable: str = "withhold",
    items: str | None = None,
    key: str | None = None,
    tables: bool = False,
) -> Any:
    """A foreign tool's result as plain data for a tool with an allowlist or a deny.

    What cannot be read as data is an ``Unreadable`` verdict, which the slimming pipeline
    withholds, unless ``on_unreadable="text"`` opts in to showing its text (denied
    ``key: value`` pairs masked). Data goes through ``projection.apply_deny``, as the
    decorators' records do (``key``, the handle key, keeps its values). A ``ToolResult``
    (a forwarder's final answer) passes as it is; an ``Envelope`` the tool relays is read
    like any result. Text at ``items`` (the records' path) is read too: JSON there is the
    records, prose there is an ``Unreadable`` verdict like prose anywhere. A list's items
    are read as the core reads them (``slimtools.projection.rows``): rows without keys are
    withheld. With ``tables`` (a tool with a deny and no allowlist, whose pipeline does not
    read tables) a table sent as data becomes its records (``projection.table_records``).
    """
    if value is None or isinstance(value, ToolResult):
        return value
    found = read(value)
    if items is not None and not isinstance(found, Unreadable):
        found = _read_at(found, items)
    if isinstance(found, Unreadable):
        if on_unreadable == "text" and found.text is not None:
            return scrub_pairs(found.text, denied_names(deny))
        return found
    if tables:
        found = table_records(found, denied_names(deny))
    if isinstance(found, (list, tuple, set, frozenset, Iterator)):
        found = rows(found)  # rows without keys: named, or withheld (the core's one rule)
        if isinstance(found, Unreadable):
            return found
    if not deny:
        return found
    plain = apply_deny(to_jsonable(found), deny, key=key)[0]
    return Rows(plain, found.withheld) if type(found) is Rows else plain


def _read_at(data: Any, path: str) -> Any:
    """``data`` with the text at its dotted ``path`` read (a copy along the path), or the
    verdict on that text when it cannot be read; ``data`` itself when the path holds no text."""
    steps = path.strip(".").split(".")
    parents: list[Mapping[str, Any]] = []
    node = data
    for step in steps:
        if not isinstance(node, Mapping) or step not in node:
            return data
        parents.append(node)
        node = node[step]
    if not isinstance(node, (str, bytes, bytearray, memoryview)):
        return data
    found = read(node)
    if isinstance(found, Unreadable):
        return found
    for parent, step in zip(reversed(parents), reversed(steps), strict=True):
        found = {**parent, step: found}
    return found


def unwrap(structured: Any) -> Any:
    """Structured content, with a one-key wrapper around a text unwrapped (and parsed)."""
    if isinstance(structured, dict) and len(structured) == 1:
        (value,) = structured.values()
        if isinstance(value, str):
            parsed = parse_json(value)
            return value if parsed is UNPARSED else parsed
    return structured


def obvious_list(data: Any) -> str | None:
    """The key of the one list of records a dict holds (``"items"`` of a search), if one."""
    if not isinstance(data, dict):
        return None
    keys = [k for k, v in data.items() if isinstance(v, list) and _mostly_objects(v)]
    return keys[0] if len(keys) == 1 else None


def records_in(data: Any) -> tuple[list[Any] | None, str | None]:
    """The records a result holds and where (``None``: the result itself), if it holds any.

    Records are a list mostly of objects: the result itself, or the one obvious list of a
    dict (``obvious_list``), or, in a dict of several such lists (a memory graph's
    ``entities`` and ``relations``), none of them, since no one list is the result.
    """
    if isinstance(data, list):
        return (data, None) if _mostly_objects(data) else (None, None)
    key = obvious_list(data)
    return (data[key], key) if key is not None else (None, None)


def _mostly_objects(values: list[Any]) -> bool:
    return bool(values) and sum(isinstance(x, dict) for x in values) * 2 > len(values)


def raw_tokens(texts: Sequence[str], structured: Any, counter: TokenCounter) -> int:
    """Tokens the client would read of a result: its text, or its structured content."""
    if texts:
        return sum(counter(t) for t in texts)
    return counter(dumps_str(structured)) if structured is not None else 0


def reshape_oversized(data: Any, budget: int, counter: TokenCounter) -> Any:
    """An oversized result as records or lines that page within ``budget`` (never a cut).

    Records are kept when every one fits in half the budget (so a page always shows at
    least one); otherwise the JSON is pretty-printed, one key per line, and paged by lines.
    """
    records = data
    if isinstance(data, dict):
        key = obvious_list(data)
        records = data[key] if key is not None else None
    if (
        isinstance(records, list)
        and records
        and all(counter(dumps_str(r)) * 2 <= budget for r in records)
    ):
        return records
    if isinstance(data, (dict, list)):
        return orjson.dumps(to_jsonable(data), option=orjson.OPT_INDENT_2).decode("utf-8")
    return data
