"""project_fields(detail=..., deny=..., response_format=True): what each path may show."""

from __future__ import annotations

import inspect
import json
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from pydantic import BaseModel

from slimtools import ConfigurationError, Toolkit, paginate, project_fields, summarize_with_handle
from slimtools._json import dumps_str
from slimtools.adapters.mcp import to_mcp_server
from slimtools.stores import MemoryStore
from tests._profile import examples
from tests.core_helpers import next_call
from tests.strategies import SECRET_PREFIX, extras, keys_anywhere

RECORDS = [
    {
        "id": i,
        "title": f"ticket {i}",
        "body": f"the body of ticket {i}",
        "tenant": "acme-internal",
        "ssn": f"078-05-112{i}",
        "user": {"login": f"u{i}", "email": f"u{i}@example.com"},
    }
    for i in range(6)
]


class Brief(BaseModel):
    id: int
    title: str


class Detail(BaseModel):
    id: int
    title: str
    body: str
    user: dict[str, Any]


def _kit(*, deny: list[str] | None = None, detail: Any = Detail, fmt: bool = False) -> Toolkit:
    kit = Toolkit("tickets", store=MemoryStore())

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=2)
    @project_fields(Brief, detail=detail, deny=deny or [], response_format=fmt)
    def search(query: str) -> list[dict[str, Any]]:
        """Search tickets."""
        return [dict(r) for r in RECORDS]

    return kit


def _stored(kit: Toolkit) -> str:
    """Everything the toolkit's memory store holds, as JSON text."""
    assert isinstance(kit.store, MemoryStore)
    return dumps_str([entry.value for entry in kit.store._entries.values()])


# detail -------------------------------------------------------------------------------


def test_get_record_returns_the_detail_projection():
    """With ``detail=``, a handle expands to the Detail view, never the whole record."""
    kit = _kit()
    kit.call("search", {"query": "x"})
    assert json.loads(kit.get_record(0)) == {
        "id": 0,
        "title": "ticket 0",
        "body": "the body of ticket 0",
        "user": {"login": "u0", "email": "u0@example.com"},
    }


def test_without_detail_get_record_returns_the_full_record():
    """Without ``detail=``, get_record shows the full record, as documented."""
    kit = _kit(detail=None)
    kit.call("search", {"query": "x"})
    assert json.loads(kit.get_record(1)) == RECORDS[1]


def test_the_store_keeps_only_what_some_path_may_show():
    """Handles and the page-1 snapshot hold briefs and Detail views, not the raw records."""
    kit = _kit()
    kit.call("search", {"query": "x"})
    stored = _stored(kit)
    assert "the body of ticket 5" in stored  # page 3's Detail, kept for later pages
    assert "ssn" not in stored
    assert "tenant" not in stored


async def test_the_mcp_resource_returns_the_detail_projection():
    """``slimtools://<toolkit>/{handle}`` shows what get_record shows: the Detail view."""
    kit = _kit()
    async with Client(to_mcp_server(kit)) as client:
        await client.call_tool("search", {"query": "x"})
        read = await client.read_resource("slimtools://tickets/1")
    shown = json.loads(read.contents[0].text)
    assert set(shown) == {"id", "title", "body", "user"}


def test_live_fetch_results_are_projected_with_detail():
    """``fetch=`` results pass through the Detail view (and deny) before get_record shows them."""
    kit = Toolkit("live")

    @kit.tool
    @summarize_with_handle(key="id", fetch=lambda handle: RECORDS[int(handle)])
    @project_fields(Brief, detail=Detail, deny=["user.email"])
    def search(query: str) -> list[dict[str, Any]]:
        return RECORDS

    assert json.loads(kit.get_record(2)) == {
        "id": 2,
        "title": "ticket 2",
        "body": "the body of ticket 2",
        "user": {"login": "u2"},
    }


def test_detail_may_be_a_list_of_names():
    """``detail=["id", "user.login"]`` is an allowlist like any other."""
    kit = _kit(detail=["id", "user.login"])
    kit.call("search", {"query": "x"})
    assert json.loads(kit.get_record(1)) == {"id": 1, "user": {"login": "u1"}}


# deny ---------------------------------------------------------------------------------


def test_deny_wins_over_an_allowlisted_field():
    """A denied name is omitted even when the allowlist names it (deny wins)."""

    class Leaky(BaseModel):
        id: int
        ssn: str = "unknown"

    tool = project_fields(Leaky, deny=["ssn"])(lambda: RECORDS[:1])
    assert tool().briefs == [{"id": 0}]


def test_deny_removes_paths_inside_an_allowlisted_value():
    """A field shown whole (``user: dict``) loses the denied ``user.email`` inside it."""
    kit = _kit(deny=["user.email"])
    kit.call("search", {"query": "x"})
    assert json.loads(kit.get_record(0))["user"] == {"login": "u0"}


def test_deny_removes_paths_from_the_full_record():
    """Without ``detail=``, get_record shows the full record minus every denied path."""
    kit = _kit(detail=None, deny=["ssn", "tenant", "user.email"])
    kit.call("search", {"query": "x"})
    assert json.loads(kit.get_record(1)) == {
        "id": 1,
        "title": "ticket 1",
        "body": "the body of ticket 1",
        "user": {"login": "u1"},
    }
    stored = _stored(kit)
    assert "ssn" not in stored
    assert "email" not in stored


def test_a_snapshot_without_handles_keeps_only_the_briefs():
    """With deny and no handle or detailed view, later pages need nothing but the briefs."""
    kit = Toolkit("briefs-only", store=MemoryStore())

    @kit.tool
    @paginate(limit=2)
    @project_fields(Brief, deny=["ssn"])
    def search(query: str) -> list[dict[str, Any]]:
        return RECORDS

    kit.call("search", {"query": "x"})
    stored = _stored(kit)
    assert "ticket 5" in stored
    assert "body" not in stored
    assert kit.call("search", {"query": "x", "page": 3}).value.briefs == [
        {"id": 4, "title": "ticket 4"},
        {"id": 5, "title": "ticket 5"},
    ]


def test_deny_maps_over_lists():
    """A denied path reaches into every item of a list on its way."""
    rows = [{"id": 1, "comments": [{"text": "hi", "author_email": "a@x"}, {"text": "yo"}]}]
    tool = project_fields(["id", "comments"], deny=["comments.author_email"])(lambda: rows)
    assert tool().briefs == [{"id": 1, "comments": [{"text": "hi"}, {"text": "yo"}]}]


def test_deny_applies_to_records_of_every_shape():
    """Models, dataclasses and objects lose denied paths like dicts do."""

    class Row(BaseModel):
        id: int
        ssn: str

    kit = Toolkit("shapes")

    @kit.tool
    @summarize_with_handle(key="id")
    @project_fields(["id"], deny=["ssn"])
    def rows() -> list[Row]:
        return [Row(id=1, ssn="x")]

    kit.call("rows")
    assert json.loads(kit.get_record(1)) == {"id": 1}


def test_denying_the_handle_key_is_a_configuration_error():
    """A key that deny removes cannot name handles."""
    with pytest.raises(ConfigurationError, match="key='id'"):
        summarize_with_handle(key="id")(project_fields(Brief, deny=["id"])(list))


@pytest.mark.parametrize("deny", ["ssn", [""], [3], ["a..b"], [".", "x"]])
def test_a_bad_deny_list_is_a_configuration_error(deny):
    """``deny`` takes a list of field names or dotted paths."""
    with pytest.raises(ConfigurationError, match="deny"):
        project_fields(Brief, deny=deny)


# response_format ----------------------------------------------------------------------


def test_response_format_adds_a_typed_keyword_parameter():
    """The parameter is in ``inspect.signature`` and the type hints, defaulting to concise."""
    kit = _kit(fmt=True)
    tool = kit.spec("search").function
    param = inspect.signature(tool).parameters["response_format"]
    assert param.kind is inspect.Parameter.KEYWORD_ONLY
    assert param.default == "concise"
    hint = typing.get_type_hints(tool, include_extras=True)["response_format"]
    assert typing.get_args(typing.get_args(hint)[0]) == ("concise", "detailed")
    schema = kit.spec("search").parameters["properties"]["response_format"]
    assert schema["enum"] == ["concise", "detailed"]
    assert schema["default"] == "concise"


def test_detailed_briefs_use_the_detail_projection():
    """``response_format="detailed"`` projects the page with Detail instead of Brief."""
    kit = _kit(fmt=True)
    concise = kit.call("search", {"query": "x"}).value
    detailed = kit.call("search", {"query": "x", "response_format": "detailed"}).value
    assert concise.briefs[0] == {"id": 0, "title": "ticket 0"}
    assert detailed.briefs[0]["body"] == "the body of ticket 0"
    assert "ssn" not in str(detailed)


def test_the_next_page_call_keeps_the_detailed_format():
    """The hint's next call repeats ``response_format`` when it is not the default."""
    kit = _kit(fmt=True)
    env = kit.call("search", {"query": "x", "response_format": "detailed"}).value
    assert next_call(env.hint, "search") == {
        "query": "x",
        "response_format": "detailed",
        "page": 2,
    }


def test_both_formats_read_the_same_page_snapshot():
    """Page 1 concise then page 2 detailed runs the backend once."""
    calls: list[str] = []
    kit = Toolkit("once")

    @kit.tool
    @paginate(limit=2)
    @project_fields(Brief, detail=Detail, response_format=True)
    def search(query: str) -> list[dict[str, Any]]:
        calls.append(query)
        return RECORDS

    search("x")
    page2 = search("x", page=2, response_format="detailed")
    assert calls == ["x"]
    assert [b["body"] for b in page2.briefs] == ["the body of ticket 2", "the body of ticket 3"]


def test_an_invalid_response_format_falls_back_to_concise_and_says_so():
    """A direct call with an unknown format gets concise briefs and a note."""
    tool = project_fields(Brief, detail=Detail, response_format=True)(lambda: RECORDS[:1])
    env = tool(response_format="verbose")
    assert env.briefs == [{"id": 0, "title": "ticket 0"}]
    assert 'response_format must be "concise" or "detailed"' in env.hint


def test_response_format_needs_a_detail_allowlist():
    """``response_format=True`` without ``detail=`` is a configuration error."""
    with pytest.raises(ConfigurationError, match="detail="):
        project_fields(Brief, response_format=True)


def test_a_tool_with_its_own_response_format_parameter_is_refused():
    """The added parameter must not shadow one the tool already has."""

    def search(response_format: str) -> list[Any]:
        return []

    with pytest.raises(ConfigurationError, match="response_format"):
        project_fields(Brief, detail=Detail, response_format=True)(search)


def test_a_handle_key_missing_from_detail_is_refused_with_response_format():
    """Detailed briefs carry the handle too, so Detail must show the key field."""

    class NoId(BaseModel):
        title: str

    with pytest.raises(ConfigurationError, match="key='id'"):
        summarize_with_handle(key="id")(
            project_fields(Brief, detail=NoId, response_format=True)(list)
        )


# every path at once -------------------------------------------------------------------


class _Row(BaseModel):
    id: int
    title: str | None = None


class _RowDetail(BaseModel):
    id: int
    title: str | None = None
    owner: dict[str, Any] | None = None


rows_with_secrets = st.lists(
    st.builds(
        lambda junk, title: {
            **junk,
            "title": title,
            "ssn": "078-05-1120",
            "owner": {"login": "o", "ssn": "078-05-1120"},
        },
        extras(),
        st.text(max_size=5),
    ),
    max_size=12,
).map(lambda rows: [{"id": i, **row} for i, row in enumerate(rows)])


@settings(max_examples=examples(40), deadline=None)
@given(
    rows=rows_with_secrets,
    limit=st.integers(1, 5),
    detailed=st.booleans(),
    with_detail=st.booleans(),
)
def test_no_path_shows_a_denied_or_unlisted_field(rows, limit, detailed, with_detail):
    """Every page, every get_record and everything stored lacks denied and unlisted fields."""
    kit = Toolkit("all-paths", store=MemoryStore())

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=limit)
    @project_fields(
        _Row,
        detail=_RowDetail if with_detail else None,
        deny=["ssn", "owner.ssn"],
        response_format=with_detail,
    )
    def search(query: str) -> list[dict[str, Any]]:
        return rows

    args: dict[str, Any] | None = {"query": "q"}
    if detailed and with_detail:
        args = {**args, "response_format": "detailed"}
    shown: list[Any] = []
    while args is not None:
        env = kit.call("search", args).value
        shown.append(env.jsonable())
        args = next_call(env.hint, "search")
    shown += [json.loads(kit.get_record(row["id"])) for row in rows]
    for text in (dumps_str(shown), _stored(kit)):
        assert "078-05-1120" not in text
    if with_detail:
        assert not [k for k in keys_anywhere(shown) if str(k).startswith(SECRET_PREFIX)]
