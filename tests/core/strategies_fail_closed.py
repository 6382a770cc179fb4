"""Strategies for the fail-closed property: records that try to leak, in every result shape.

Each record carries recognisable sentinels: values under denied paths start with
``DENIED`` and values no allowlist names start with ``HIDDEN``; allowlisted strings are
lower case, so neither word can appear in them by chance. Some allowlisted notes quote
another record's denied value, as a backend's free text does. :data:`SHAPES` serialises the
records the ways real tools return them (a list, a dict around it, JSON text with and
without ``NaN``, JSON Lines, a Python repr, a fenced block, a preamble, a byte-order mark,
bytes, models, dataclasses, objects, content blocks, ``ToolMessage``- and
``CallToolResult``-like objects, mappings of ids to records, another tool's ``Envelope``,
prose, and rows without keys: tuples, namedtuples, sets, JSON strings, prose strings, the
``str()`` of a list of tuples, a frame-like table) and :func:`raising` an exception that quotes one.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import string
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from slimtools import Envelope

ALLOW = ["id", "name", "note", "profile.city"]
"""The allowlist every path is configured with."""
DENY = ["ssn", "profile.email"]
"""The deny list every path is configured with."""
SENTINELS = ("DENIED", "HIDDEN")
"""Words that must never appear in any text sent to the model."""

_plain = st.text(alphabet=string.ascii_lowercase + " ", max_size=12)
_tokens = st.text(alphabet=string.ascii_uppercase + string.digits, min_size=4, max_size=8)


@st.composite
def leaky_records(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Records with denied and non-allowlisted sentinel values, some quoted in notes."""
    records: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, 6))):
        token = draw(_tokens)
        record: dict[str, Any] = {
            "id": i,
            "name": draw(_plain),
            "ssn": f"DENIED{i}S{token}",
            "zz_extra": f"HIDDEN{i}X{token}",
        }
        if draw(st.booleans()):
            record["profile"] = {
                "city": draw(_plain),
                "email": f"DENIED{i}E{token}@example.com",
                "zz_phone": f"HIDDEN{i}P{token}",
            }
        records.append(record)
    for record in records:
        quoted = draw(st.sampled_from(records))
        record["note"] = f"see {quoted['ssn']} now" if draw(st.booleans()) else draw(_plain)
    return records


class RowModel(BaseModel):
    """A backend's model of a row: every field, allowlisted or not."""

    model_config = ConfigDict(extra="allow")

    id: int
    name: str
    ssn: str
    zz_extra: str
    note: str
    profile: dict[str, Any] | None = None


@dataclasses.dataclass
class RowData:
    """The same row as a dataclass."""

    id: int
    name: str
    ssn: str
    zz_extra: str
    note: str
    profile: dict[str, Any] | None = None


class RowObject:
    """The same row as a plain object whose data are attributes."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


@dataclasses.dataclass
class TextBlock:
    """An MCP ``TextContent``-like block (duck-typed by the reader)."""

    text: str
    type: str = "text"


@dataclasses.dataclass
class ToolMessageLike:
    """A LangChain ``ToolMessage``-like result: ``content`` text, maybe an ``artifact``."""

    content: Any
    artifact: Any = None
    type: str = "tool"
    tool_call_id: str = "call-1"


@dataclasses.dataclass
class CallToolResultLike:
    """An MCP ``CallToolResult``-like result."""

    content: list[Any]
    structuredContent: Any = None  # noqa: N815 - the MCP field name
    isError: bool = False  # noqa: N815 - the MCP field name


class FrameLike:
    """A ``pandas.DataFrame``-like table (duck-typed by the reader): public ``columns`` and
    ``values``, and a column read as an attribute (``frame.ssn``), as pandas does."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        import numpy as np

        self.columns = list(dict.fromkeys(k for r in records for k in r))
        rows = [[r.get(c) for c in self.columns] for r in records]
        self.values = np.empty((len(rows), len(self.columns)), dtype=object)
        for i, row in enumerate(rows):
            for j, value in enumerate(row):
                self.values[i, j] = value

    def __getattr__(self, name: str) -> Any:
        if name in self.__dict__.get("columns", ()):
            return list(self.values[:, self.columns.index(name)])
        raise AttributeError(name)


def _namedtuples(records: list[dict[str, Any]]) -> list[Any]:
    return [collections.namedtuple("Row", list(r))(**r) for r in records]


def _tuples(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [tuple(r.values()) for r in records]


def _json(records: list[dict[str, Any]]) -> str:
    return json.dumps(records)


def _nan(records: list[dict[str, Any]]) -> str:
    return json.dumps([{**r, "score": float("nan")} for r in records])


def _without_id(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "id"}


def _prose(records: list[dict[str, Any]]) -> str:
    return "Rows: " + "; ".join(f"{r['ssn']} ({r['zz_extra']}) {r['name']}" for r in records)


SHAPES: dict[str, Callable[[list[dict[str, Any]]], Any]] = {
    "list": lambda rs: rs,
    "dict around a list": lambda rs: {"items": rs, "zz_meta": "HIDDENmeta"},
    "json text": _json,
    "nan json": _nan,
    "json lines": lambda rs: "\n".join(json.dumps(r) for r in rs),
    "python repr": str,
    "fenced json": lambda rs: "```json\n" + json.dumps(rs, indent=2) + "\n```",
    "preamble": lambda rs: f"Found {len(rs)} items:\n{_json(rs)}",
    "byte-order mark": lambda rs: "\ufeff" + _json(rs),
    "bytes": lambda rs: _json(rs).encode(),
    "models": lambda rs: [RowModel(**r) for r in rs],
    "dataclasses": lambda rs: [RowData(**r) for r in rs],
    "objects": lambda rs: [RowObject(**r) for r in rs],
    "content blocks": lambda rs: [{"type": "text", "text": _json(rs)}],
    "a block per record": lambda rs: [{"type": "text", "text": json.dumps(r)} for r in rs],
    "tool message": lambda rs: ToolMessageLike(content=_json(rs)),
    "tool message artifact": lambda rs: ToolMessageLike(content="done", artifact=rs),
    "call tool result": lambda rs: CallToolResultLike(content=[TextBlock(_nan(rs))]),
    "prose": _prose,
    "dict by id": lambda rs: {f"r{r['id']}": r for r in rs},
    "json dict by id": lambda rs: json.dumps({str(r["id"]): _without_id(r) for r in rs}),
    "relayed envelope": lambda rs: Envelope(total=len(rs), briefs=rs, hint="relayed"),
    "tuples": _tuples,
    "tuples from a generator": lambda rs: (row for row in _tuples(rs)),
    "namedtuples": _namedtuples,
    "set of tuples": lambda rs: {(r["id"], r["name"], r["ssn"], r["zz_extra"]) for r in rs},
    "json strings": lambda rs: [json.dumps(r) for r in rs],
    "prose strings": lambda rs: [f"{r['name']} has {r['ssn']}" for r in rs],
    "str of tuples": lambda rs: str(_tuples(rs)),
    "frame": FrameLike,
}
"""Every shape a result comes in, keyed by name."""

TEXT_SHAPES = [
    "json text",
    "nan json",
    "json lines",
    "python repr",
    "fenced json",
    "preamble",
    "byte-order mark",
    "prose",
    "json dict by id",
    "str of tuples",
]
"""The shapes a proxied MCP server sends as one text block."""

WITHHELD_SHAPES = frozenset(
    {
        "prose",
        "tuples",
        "tuples from a generator",
        "set of tuples",
        "prose strings",
        "str of tuples",
    }
)
"""The shapes with no field names to project: withheld whole, with a note."""

shape_names = st.sampled_from(sorted(SHAPES))


def items_of(shape: str) -> str | None:
    """The ``items=`` path a tool returning ``shape`` is configured with."""
    return "items" if shape == "dict around a list" else None


def raising(records: list[dict[str, Any]]) -> Callable[[], Any]:
    """A tool body that fails quoting a record, as ``ValueError(f"bad row {row}")`` does.

    The row's note quotes its own denied value (an error text knows no other record's).
    """
    row = {**records[-1], "note": f"see {records[-1]['ssn']} now"}

    def fail() -> Any:
        raise ValueError(f"bad row {row} (of {len(records)})")

    return fail


def leaks(text: str) -> list[str]:
    """The sentinel words found in ``text`` (none for a text that is safe to send)."""
    return [word for word in SENTINELS if word in text]


_SPELLINGS = st.sampled_from(["ssn", "SSN", "Ssn", "s_s_n", "S-S-N"])
"""How a backend may spell the denied ``ssn`` key (``deny`` matches keys folded)."""


def _encoded(value: str, form: str) -> str:
    """``value`` as a backend's free text may quote it: as is, in another case, or encoded."""
    if form == "lower":
        return value.lower()
    if form == "url":
        return value.replace("@", "%40")
    if form == "html":
        return value.replace("@", "&#64;")
    if form == "json escape":
        return value.replace("@", "\\u0040")
    return value


@st.composite
def denied_results(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """A result, an allowlist and a deny list for the conformance of the surfaces.

    Records hold denied keys at every depth and in several spellings, a denied pair quoted
    in a string field, and notes quoting denied values in another case or encoding. Every
    denied value starts with ``DENIED`` (so ``denied`` in any case must never be shown);
    the e-mail is one only when ``deny`` names it.
    """
    email = draw(st.sampled_from([None, "email", "profile.email"]))
    deny = ["ssn", *([email] if email else []), *draw(st.sampled_from([[], ["token"]]))]
    profile = draw(st.sampled_from([[], ["profile"], ["profile.city"]]))
    extra = draw(st.sets(st.sampled_from(["name", "note", "contacts"])))
    fields = ["id", *sorted(extra), *profile]
    records: list[dict[str, Any]] = []
    secrets: list[str] = []
    for i in range(draw(st.integers(1, 5))):
        token = draw(_tokens)
        ssn = f"DENIED{i}S{token}"
        record: dict[str, Any] = {"id": i, draw(_SPELLINGS): ssn}
        secrets.append(ssn)
        if draw(st.booleans()):
            quoted = json.dumps({draw(_SPELLINGS): f"DENIED{i}J{token}", "city": draw(_plain)})
            record["name"] = quoted
        else:
            record["name"] = draw(_plain)
        if draw(st.booleans()):
            mail = f"DENIED{i}E{token}@example.com" if email else f"user{i}@example.com"
            record["profile"] = {"city": draw(_plain), "email": mail, "zz": draw(_plain)}
            if email:
                secrets.append(mail)
        if draw(st.booleans()):
            record["contacts"] = [{draw(_SPELLINGS): f"DENIED{i}C{token}", "phone": "555"}]
        records.append(record)
    for record in records:
        if draw(st.booleans()):
            form = draw(st.sampled_from(["plain", "lower", "url", "html", "json escape"]))
            record["note"] = f"see {_encoded(draw(st.sampled_from(secrets)), form)} now"
        else:
            record["note"] = draw(_plain)
    return records, fields, deny
