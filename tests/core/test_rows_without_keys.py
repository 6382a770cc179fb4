"""Rows without keys: read as records where their names are known, else withheld.

``get_record`` returns a record minus what ``deny`` forbids. A row whose column names are
not known (a ``fetchall()`` tuple, a set, prose) cannot lose its denied column, so a guarded
tool withholds it from the briefs and from ``get_record`` alike, with a note; a namedtuple,
a ``sqlite3.Row``, a frame-like table and a JSON object's text are read as records. One rule
(``slimtools.projection.rows``) serves the decorators, ``wrap()`` and the proxy's forwarder.
"""

from __future__ import annotations

import collections
import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import slimtools
from slimtools import Toolkit, project_fields, summarize_with_handle
from slimtools.foreign import Plan, Raw, slim
from slimtools.projection import UNPARSED, Rows, Unreadable, as_record, read, rows, table_records
from slimtools.proxy.config import tool_options
from tests.core.strategies_fail_closed import FrameLike

SSN = "078-05-1120"


def _db(factory: Any = None) -> sqlite3.Connection:
    """An in-memory table of users, each with a denied ``ssn`` column."""
    db = sqlite3.connect(":memory:")
    if factory is not None:
        db.row_factory = factory
    db.execute("create table users (id integer, name text, ssn text)")
    db.executemany(
        "insert into users values (?, ?, ?)",
        [(i, f"user {i}", f"{SSN[:-1]}{i}") for i in range(3)],
    )
    return db


def _decorated(result: Any, *, allow: list[str] | None = None) -> Toolkit:
    """A toolkit with one tool ``users`` returning ``result``, allowlisted and denying ssn."""
    kit = Toolkit("rows")

    @project_fields(allow or ["id", "name", "ssn"], deny=["ssn"])
    @summarize_with_handle()
    def users() -> Any:
        return result() if callable(result) else result

    kit.tool(users, name="users")
    return kit


def _wrapped(result: Any) -> Toolkit:
    """The same tool through ``slimtools.wrap`` with only a deny."""
    kit = Toolkit("rows-wrap")

    def users() -> Any:
        return result

    slimtools.wrap(users, toolkit=kit, deny=["ssn"])
    return kit


def _proxied(text: str, options: dict[str, Any] | None = None) -> Toolkit:
    """The proxy's forwarder of an MCP server that sends ``text`` (no MCP)."""
    kit = Toolkit("rows-proxy")
    plan = Plan(tool_options(options or {"deny": ["ssn"]}), 20_000)

    def forward(**arguments: Any) -> Any:
        return plan.shape(Raw(texts=[text]))

    forward.__name__ = "users"
    kit.tool(slim(forward, plan, name="users"), name="users")
    return kit


def _seen(kit: Toolkit) -> str:
    """Everything the model reads: the call and every handle's record."""
    result = kit.call("users", {})
    texts = [result.text]
    for brief in json.loads(result.text).get("briefs", []):
        handle = brief.get("handle", brief.get("id"))
        if handle is not None:
            texts.append(kit.call("get_record", {"handle": handle}).text)
    return "\n".join(texts)


def test_fetchall_tuples_are_withheld_from_a_guarded_tool():
    """``fetchall()`` tuples have no column names: withheld with a note, never shown."""
    env = _decorated(_db().execute("select * from users").fetchall()).call("users", {}).value
    assert env.total == 0
    assert SSN[:-1] not in str(env)
    assert "3 rows of tuple without field names" in env.hint


def test_fetchall_tuples_never_reach_get_record_through_wrap():
    """``wrap()`` with only a deny withholds tuple rows too: no handle returns one."""
    seen = _seen(_wrapped(_db().execute("select * from users").fetchall()))
    assert SSN[:-1] not in seen
    assert "without field names" in seen


def test_the_str_of_fetchall_from_an_mcp_server_is_withheld_by_the_proxy():
    """``str(fetchall())`` text (LangChain's ``QuerySQLDatabaseTool``, some MCP servers) is
    read as tuples and withheld by the proxy's forwarder."""
    seen = _seen(_proxied(str(_db().execute("select * from users").fetchall())))
    assert SSN[:-1] not in seen
    assert "without field names" in seen


def test_sqlite_rows_are_read_as_records_by_their_keys():
    """``sqlite3.Row`` rows are records: briefs show their columns, not a repr."""
    env = _decorated(_db(sqlite3.Row).execute("select * from users").fetchall())
    result = env.call("users", {}).value
    assert [{k: v for k, v in b.items() if k != "handle"} for b in result.briefs] == [
        {"id": i, "name": f"user {i}"} for i in range(3)
    ]


def test_get_record_of_a_sqlite_row_has_no_denied_column():
    """``get_record`` of a ``sqlite3.Row`` returns its columns minus the denied one."""
    kit = _decorated(_db(sqlite3.Row).execute("select * from users").fetchall())
    seen = _seen(kit)
    assert SSN[:-1] not in seen
    assert "sqlite3.Row object" not in seen
    assert '{"id":0,"name":"user 0"}' in seen


def test_one_sqlite_row_is_one_record():
    """``fetchone()``'s ``sqlite3.Row`` is one record, not an object with no fields."""
    row = _db(sqlite3.Row).execute("select * from users").fetchone()
    assert read(row) == {"id": 0, "name": "user 0", "ssn": f"{SSN[:-1]}0"}


def test_namedtuple_rows_are_records_without_the_denied_field():
    """Namedtuples are read by their ``_fields``: ``get_record`` drops the denied one."""
    user = collections.namedtuple("user", "id name ssn")
    result = [user(*r) for r in _db().execute("select * from users").fetchall()]
    seen = _seen(_decorated(result))
    assert SSN[:-1] not in seen
    assert '{"id":1,"name":"user 1"}' in seen


def test_one_namedtuple_is_one_record_not_a_list_of_its_values():
    """A single namedtuple result is one record, not three items."""
    user = collections.namedtuple("user", "id name ssn")
    assert read(user(1, "a", SSN)) == {"id": 1, "name": "a", "ssn": SSN}


def test_json_strings_are_read_as_records():
    """A list of JSON object texts is a list of records, stripped of denied fields."""
    result = [json.dumps({"id": i, "name": "a", "ssn": SSN}) for i in range(2)]
    seen = _seen(_decorated(result))
    assert SSN not in seen
    assert '{"id":1,"name":"a"}' in seen


def test_prose_strings_are_withheld():
    """A list of prose strings has no fields to project: withheld with a note."""
    env = _decorated([f"user {i} has ssn {SSN}" for i in range(2)]).call("users", {}).value
    assert SSN not in str(env)
    assert "2 rows of str without field names" in env.hint


def test_a_set_of_tuples_is_withheld():
    """A set of rows (``set(fetchall())``) is withheld like the rows."""
    result = set(_db().execute("select * from users").fetchall())
    env = _decorated(result).call("users", {}).value
    assert SSN[:-1] not in str(env)
    assert env.total == 0


def test_a_generator_of_tuples_is_withheld():
    """Rows a generator tool yields are read after it runs, and withheld the same way."""

    def gen() -> Iterator[tuple[Any, ...]]:
        yield from _db().execute("select * from users")

    kit = Toolkit("rows-gen")

    @project_fields(["id", "name"], deny=["ssn"])
    @summarize_with_handle()
    def users() -> Iterator[tuple[Any, ...]]:
        return gen()

    kit.tool(users, name="users")
    seen = _seen(kit)
    assert SSN[:-1] not in seen
    assert "without field names" in seen


def test_rows_without_keys_beside_records_are_withheld_with_a_note():
    """A mixed list shows its records; the rows without names are withheld and counted."""
    result: list[Any] = [{"id": 1, "name": "a", "ssn": SSN}, (2, "b", SSN), None]
    kit = _decorated(result)
    env = kit.call("users", {}).value
    assert env.total == 2
    assert "1 of 3 items (tuple) could not be read as records" in env.hint
    assert SSN not in _seen(kit)


def test_a_frame_like_table_is_read_as_records():
    """A ``DataFrame``-like result (``columns`` and ``values``) shows its rows as records,
    not its columns as empty objects."""
    records = [{"id": i, "name": f"user {i}", "ssn": SSN} for i in range(2)]
    kit = _decorated(FrameLike(records), allow=["id", "name"])
    env = kit.call("users", {}).value
    assert [{k: v for k, v in b.items() if k != "handle"} for b in env.briefs] == [
        {"id": 0, "name": "user 0"},
        {"id": 1, "name": "user 1"},
    ]
    assert SSN not in _seen(kit)


def test_a_frames_to_dict_records_are_preferred():
    """A table with ``to_dict(orient="records")`` (pandas) is read through it."""

    class Frame:
        columns = ("id",)
        values = ((1,),)

        def to_dict(self, orient: str) -> Any:
            assert orient == "records"
            return [{"id": 7}]

    assert read(Frame()) == [{"id": 7}]


def test_a_polars_like_table_is_read_through_to_dicts():
    """A table with ``columns`` and ``to_dicts()`` (polars) is read as its rows."""

    class Frame:
        columns = ("id", "ssn")

        def to_dicts(self) -> Any:
            return [{"id": 1, "ssn": SSN}]

    assert read(Frame()) == [{"id": 1, "ssn": SSN}]
    assert SSN not in _seen(_decorated(Frame(), allow=["id"]))


def test_an_object_whose_columns_is_a_number_is_no_table():
    """``columns`` and ``values`` of a chart are not a table: the object is read as one."""

    class Chart:
        def __init__(self) -> None:
            self.columns = 3
            self.values = [1, 2, 3]

    chart = Chart()
    assert read(chart) is chart


def test_a_frame_whose_rows_fail_is_withheld():
    """A table whose rows cannot be read is withheld, never shown raw."""

    class Broken:
        columns = ("id", "ssn")
        values = ((1,),)  # one value for two columns

    found = read(Broken())
    assert isinstance(found, Unreadable)
    assert "rows fail" in found.reason


def test_a_tool_without_an_allowlist_or_deny_still_shows_tuples():
    """Unguarded tools keep their rows: nothing is denied, so nothing is withheld."""

    @summarize_with_handle()
    def users() -> Any:
        return _db().execute("select * from users").fetchall()

    env = users()
    assert env.total == 3


_scalars = st.one_of(st.integers(), st.text(max_size=8), st.none(), st.floats(allow_nan=False))
_row_kinds = st.sampled_from(["dict", "tuple", "namedtuple", "json", "list", "scalar"])


@st.composite
def _mixed_rows(draw: st.DrawFn) -> list[Any]:
    """Rows of every kind, each with a denied ``ssn`` value ``DENIED<i>``."""
    out: list[Any] = []
    user = collections.namedtuple("user", "id name ssn")
    for i in range(draw(st.integers(0, 6))):
        record = {"id": i, "name": draw(_scalars), "ssn": f"DENIED{i}"}
        kind = draw(_row_kinds)
        out.append(
            {
                "dict": record,
                "tuple": tuple(record.values()),
                "namedtuple": user(**record),
                "json": json.dumps(record),
                "list": list(record.values()),
                "scalar": f"DENIED{i}",
            }[kind]
        )
    return out


@given(_mixed_rows())
def test_rows_keeps_only_records_and_says_what_it_withheld(items):
    """Every item ``rows`` keeps is a record; every other one is counted as withheld."""
    found = rows(items)
    named = [as_record(x) for x in items]
    kept = [x for x in named if x is not UNPARSED]
    if isinstance(found, Unreadable):
        assert kept == []
        assert items
    else:
        assert list(found) == kept
        withheld = len(items) - len(kept)
        assert (found.withheld.size if type(found) is Rows else 0) == withheld
    assert all(isinstance(x, dict) for x in kept)


@given(_mixed_rows(), st.sampled_from(["decorators", "wrap"]))
def test_no_surface_returns_a_denied_value_of_any_row(items, surface):
    """Whatever rows a tool returns, no surface shows a denied value, briefs or records."""
    kit = _decorated(items) if surface == "decorators" else _wrapped(items)
    assert "DENIED" not in _seen(kit)


@given(_mixed_rows())
def test_the_proxy_returns_no_denied_value_of_any_row(items):
    """The proxy's forwarder holds the same rule for the ``str()`` of any rows."""
    assert "DENIED" not in _seen(_proxied(str(items)))


def _shown(kit: Toolkit) -> tuple[int, list[dict[str, Any]], bool]:
    """What a call shows: the total, the briefs without their handles, whether items were
    withheld."""
    env = json.loads(kit.call("users", {}).text)
    briefs = [{k: v for k, v in b.items() if k != "handle"} for b in env["briefs"]]
    return env["total"], briefs, "could not be read as records" in env.get("hint", "")


@given(_mixed_rows())
def test_the_decorators_and_wrap_show_the_same_rows(items):
    """One rule, two surfaces: the same rows give the same briefs and the same note."""
    decorated = _decorated(items, allow=["id", "name"])
    kit = Toolkit("rows-wrap-allow")

    def users() -> Any:
        return items

    slimtools.wrap(users, toolkit=kit, fields=["id", "name"], deny=["ssn"])
    assert _shown(decorated) == _shown(kit)


TABLE = {
    "columns": ["id", "name", "ssn"],
    "rows": [[1, "alice", SSN], [2, "bob", SSN]],
    "rowCount": 2,
}


def test_a_table_sent_as_columns_and_rows_is_read_as_records():
    """``{"columns": [...], "rows": [[...]]}`` shows records; no row shows the denied column."""
    kit = _decorated(TABLE, allow=["id", "name"])
    assert _shown(kit)[1] == [{"id": 1, "name": "alice"}, {"id": 2, "name": "bob"}]
    assert SSN not in _seen(kit)


def test_wrap_with_only_a_deny_reads_a_json_table_as_records():
    """``wrap()`` with only a deny once showed the table whole, denied column included."""
    kit = Toolkit("rows-wrap-table")

    def users() -> str:
        return json.dumps(TABLE)

    slimtools.wrap(users, toolkit=kit, deny=["ssn"])
    seen = _seen(kit)
    assert SSN not in seen
    assert '"name":"bob"' in seen


def test_the_proxy_reads_a_table_as_records():
    """An MCP server sending the table as JSON text: the denied column never shows."""
    seen = _seen(_proxied(json.dumps(TABLE)))
    assert SSN not in seen
    assert '"name":"alice"' in seen


def test_column_entries_may_be_objects_with_a_name():
    """``"columns": [{"name": "id", "type": "int"}]`` names its column too."""
    table = {"columns": [{"name": "id"}, {"name": "ssn"}], "data": [[1, SSN]]}
    assert table_records(table, ()) == [{"id": 1, "ssn": SSN}]


@pytest.mark.parametrize(
    "value",
    [
        {"columns": ["id", "ssn"], "rows": [[1]]},  # a row of another width
        {"columns": ["id"], "rows": [[1]], "data": [[2]]},  # two lists of rows
        {"columns": [1, 2], "rows": [[1, 2]]},  # columns that are no names
        {"columns": ["id"], "rows": [{"id": 1}]},  # rows that are records already
    ],
    ids=["width", "two lists", "unnamed", "records"],
)
def test_an_ambiguous_table_stays_one_record(value):
    """Only an unambiguous table is read as rows."""
    assert table_records(value, ()) is value


def test_a_tool_that_names_rows_reads_the_table_as_one_record():
    """An allowlist or deny naming ``rows`` means the mapping itself."""
    assert table_records(TABLE, {"rows"}) is TABLE


def _fetching(row: Any) -> Toolkit:
    """A tool that keeps no records: ``get_record`` reads each one live through ``fetch=``."""
    kit = Toolkit("rows-fetch")

    @project_fields(["id", "name"], deny=["ssn"])
    @summarize_with_handle(key="id", fetch=lambda handle: row)
    def users() -> list[dict[str, Any]]:
        return [{"id": 1, "name": "user 1"}]

    kit.tool(users, name="users")
    kit.call("users", {})
    return kit


User = collections.namedtuple("User", "id name ssn")


@pytest.mark.parametrize(
    "row",
    [
        User(1, "user 1", SSN),
        _db(sqlite3.Row).execute("select * from users where id = 1").fetchone(),
        json.dumps({"id": 1, "name": "user 1", "ssn": SSN}),
    ],
    ids=["namedtuple", "sqlite3.Row", "JSON text"],
)
def test_a_live_fetch_of_a_named_row_is_a_record_without_the_denied_field(row):
    """``fetch=`` returning a namedtuple, a ``sqlite3.Row`` or JSON text gives a record."""
    result = _fetching(row).call("get_record", {"handle": 1})
    assert not result.is_error
    record = json.loads(result.text)
    assert record["id"] == 1
    assert "ssn" not in record
    assert SSN[:-1] not in result.text


@pytest.mark.parametrize(
    "row", [(1, "user 1", SSN), [1, "user 1", SSN], {SSN}], ids=["tuple", "list", "set"]
)
def test_a_live_fetch_of_a_row_without_keys_is_withheld(row):
    """``fetch=`` returning a plain tuple is withheld from ``get_record``, saying why."""
    result = _fetching(row).call("get_record", {"handle": 1})
    assert SSN not in result.text
    assert "withheld" in result.text
