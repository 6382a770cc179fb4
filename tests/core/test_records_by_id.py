"""A mapping of ids to records (``{"123": {...}, "456": {...}}``) reads as those records."""

from __future__ import annotations

import json
from typing import Any

import pytest

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.projection import records_by_id

BY_ID = {"123": {"name": "a", "ssn": "S-1"}, "456": {"name": "b", "ssn": "S-2"}}


def test_a_mapping_of_ids_to_records_becomes_its_records_with_their_ids():
    """Each record carries its id under the key given, before its own fields."""
    assert records_by_id(BY_ID, "id", frozenset()) == [
        {"id": "123", "name": "a", "ssn": "S-1"},
        {"id": "456", "name": "b", "ssn": "S-2"},
    ]


def test_a_mapping_with_one_id_is_one_record_by_id():
    """One hit reads as one found among two does: a record with its id."""
    assert records_by_id({"123": {"name": "a"}}, "id", frozenset()) == [{"id": "123", "name": "a"}]


def test_a_record_with_its_own_id_keeps_it():
    """The record's own value under the key wins over the mapping's key."""
    found = records_by_id({"r1": {"id": 1, "x": 0}, "r2": {"id": 2, "x": 0}}, "id", frozenset())
    assert found == [{"id": 1, "x": 0}, {"id": 2, "x": 0}]


@pytest.mark.parametrize(
    "keys",
    [["1", "2"], [1, 2], ["usr_9", "usr_10"], ["2024-01-01", "2024-01-02"],
     ["550e8400-e29b-41d4-a716-446655440000", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"]],
    ids=["digits", "integers", "prefixed", "dates", "uuids"],
)  # fmt: skip
def test_id_shaped_keys_are_recognised(keys):
    """Digits, integers, prefixed ids, dates and UUIDs are ids."""
    value = {k: {"name": str(k)} for k in keys}
    assert records_by_id(value, "id", frozenset()) == [{"id": k, "name": str(k)} for k in keys]


@pytest.mark.parametrize(
    "value",
    [
        {},
        {"user": {"name": "a"}, "account": {"name": "b"}},
        {"1": {"name": "a"}, "2": "b"},
        {"1": {"name": "a"}, "2": {"title": "b"}},
        {"1": {"name": "a"}, "2 3": {"name": "b"}},
        {"1": {"name": "a"}, "x" * 64 + "1": {"name": "b"}},
        {True: {"name": "a"}, False: {"name": "b"}},
    ],
    ids=["empty", "named keys", "a scalar value", "no shared key", "a space", "too long",
         "bools"],
)  # fmt: skip
def test_an_ambiguous_mapping_stays_one_record(value):
    """Word keys, non-record values or records with nothing in common: one record."""
    assert records_by_id(value, "id", frozenset()) is value


def test_a_mapping_keyed_by_a_name_the_tool_uses_stays_one_record():
    """A tool whose allowlist or deny names ``"123"`` meant the mapping as its record."""
    assert records_by_id(BY_ID, "id", frozenset({"123"})) is BY_ID


def _kit(body: Any, **project: Any) -> Toolkit:
    kit = Toolkit("by-id")

    @project_fields(["id", "name"], **project)
    @paginate(limit=1)
    @summarize_with_handle(key="id")
    def search() -> Any:
        return body

    kit.tool(search)
    return kit


def test_a_tool_shows_each_record_of_a_mapping_by_id_with_its_id_as_handle():
    """The allowlist projects each record, the id is the handle, and the pages split them."""
    kit = _kit(BY_ID)
    first = json.loads(kit.call("search", {}).text)
    assert first["briefs"] == [{"id": "123", "name": "a"}]
    assert first["total"] == 2
    assert json.loads(kit.call("search", {"page": 2}).text)["briefs"] == [
        {"id": "456", "name": "b"}
    ]


def test_a_mapping_by_id_in_json_text_is_read_the_same_way():
    """JSON text holding a mapping of ids is records too (read, then recognised)."""
    kit = _kit(json.dumps(BY_ID))
    assert json.loads(kit.call("search", {}).text)["briefs"] == [{"id": "123", "name": "a"}]


def test_denied_paths_are_removed_from_each_record_by_id():
    """A handle's record (the record minus deny) is one record, without its denied field."""
    kit = _kit(BY_ID, deny=["ssn"])
    kit.call("search", {})
    assert json.loads(kit.get_record("123")) == {"id": "123", "name": "a"}


def test_a_tool_denying_an_id_key_keeps_the_mapping_one_record():
    """``deny=["123"]`` names the mapping's key: it stays one record, that key withheld."""
    kit = _kit(BY_ID, deny=["123"])
    env = json.loads(kit.call("search", {}).text)
    assert env["total"] == 1
    assert "S-1" not in json.dumps(env)
