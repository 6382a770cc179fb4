"""summarize_with_handle: every brief carries a handle that get_record expands in full."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import slimtools
from slimtools import ConfigurationError, Toolkit, paginate, project_fields, summarize_with_handle
from slimtools._json import to_jsonable
from slimtools.stores import MemoryStore
from tests._profile import examples
from tests.core_helpers import KINDS, build_tool, call_sync, next_call
from tests.strategies import RECORD_FORMS, LogBrief, extras, json_scalars, log_rows

ROWS = [{"id": i, "level": "ERROR", "message": f"timeout {i}", "tenant": "acme"} for i in range(12)]


def _rows(_query: str) -> list[dict[str, Any]]:
    return ROWS


def _kit_tool(kind: str, decorators: list[Any], body: Any = _rows, **kit_options: Any) -> Any:
    kit = Toolkit("logs", **kit_options)
    return kit, kit.tool(build_tool(kind, decorators, body))


# key handles ---------------------------------------------------------------------------


def test_key_handle_is_the_field_value_as_the_model_sees_it(kind):
    """With ``key="id"`` the brief's own ``id`` is the handle, and the hint shows the call."""
    _kit, tool = _kit_tool(kind, [summarize_with_handle(key="id"), project_fields(LogBrief)])
    env = call_sync(tool, "x")
    assert env.briefs[0] == {"id": 0, "level": "ERROR", "summary": "timeout 0"}
    assert env.hint.endswith("full record: get_record(0)")


def test_get_record_returns_the_full_original_record(kind):
    """``get_record(3)`` gives the whole record, fields the brief dropped included."""
    kit, tool = _kit_tool(kind, [summarize_with_handle(key="id"), project_fields(LogBrief)])
    call_sync(tool, "x")
    assert json.loads(kit.get_record(3)) == ROWS[3]


@pytest.mark.parametrize("sent", [3, "3", " 3 ", '"3"', 3.0])
def test_a_handle_is_the_same_however_the_model_sends_it(sent):
    """``3``, ``"3"``, a quoted ``'"3"'`` and ``3.0`` all name the record with id 3."""
    kit, tool = _kit_tool("function", [summarize_with_handle(key="id")])
    tool("x")
    assert json.loads(kit.get_record(sent)) == ROWS[3]


def test_string_keys_are_handles_too():
    """A string key such as a slug is the handle, quoted in the hint."""
    kit = Toolkit("docs")

    @kit.tool
    @summarize_with_handle(key="slug")
    @project_fields(["slug", "title"])
    def list_docs() -> list[dict[str, str]]:
        return [{"slug": "intro", "title": "Intro", "body": "long"}]

    env = list_docs()
    assert env.hint == 'full record: get_record("intro")'
    assert json.loads(kit.get_record("intro"))["body"] == "long"


def test_a_record_without_its_key_gets_a_generated_handle():
    """A brief whose key is missing (or null) still gets a handle, in a ``handle`` field."""
    kit, tool = _kit_tool(
        "function", [summarize_with_handle(key="id")], lambda q: [{"id": None, "x": 1}, {"x": 2}]
    )
    env = tool("x")
    for brief, record in zip(env.briefs, [{"id": None, "x": 1}, {"x": 2}], strict=True):
        assert json.loads(kit.get_record(brief["handle"])) == record


def test_a_key_repeated_in_one_page_does_not_hide_a_record():
    """Two records sharing a key value: the later one gets a generated handle of its own."""
    rows = [{"id": 1, "body": "first"}, {"id": 1, "body": "second"}]
    kit, tool = _kit_tool("function", [summarize_with_handle(key="id")], lambda q: rows)
    env = tool("x")
    assert json.loads(kit.get_record(env.briefs[0]["id"])) == rows[0]
    assert env.briefs[1]["id"] == 1
    assert json.loads(kit.get_record(env.briefs[1]["handle"])) == rows[1]


def test_key_handles_only_store_the_page_records():
    """With paging, only the records shown on the page are kept under handles."""
    store = MemoryStore()
    kit, tool = _kit_tool(
        "function", [summarize_with_handle(key="id"), paginate(limit=3)], store=store
    )
    tool("x")
    assert json.loads(kit.get_record(2)) == ROWS[2]
    assert kit.get_record(3).startswith("No record for handle")


# generated handles ---------------------------------------------------------------------


def test_generated_handles_are_added_as_the_first_field(kind):
    """Without ``key`` each brief gains a short ``handle`` field, first."""
    _kit, tool = _kit_tool(kind, [summarize_with_handle(), project_fields(["level"])])
    env = call_sync(tool, "x")
    brief = env.briefs[0]
    assert list(brief) == ["handle", "level"]
    assert len(brief["handle"]) == 8
    assert brief["handle"].isalnum()
    assert env.hint.endswith(f'full record: get_record("{brief["handle"]}")')


def test_generated_handles_resolve_to_the_full_record(kind):
    """A generated handle expands to the record it was made from."""
    kit, tool = _kit_tool(kind, [summarize_with_handle(), project_fields(["level"])])
    env = call_sync(tool, "x")
    for brief, row in zip(env.briefs, ROWS, strict=True):
        assert json.loads(kit.get_record(brief["handle"])) == row


def test_a_records_own_handle_field_does_not_hide_its_generated_handle():
    """A record with a ``handle`` field of its own still shows the handle get_record takes."""
    rows = [{"handle": "@ann", "body": "first"}, {"handle": "@ann", "body": "second"}]
    kit, tool = _kit_tool("function", [summarize_with_handle()], lambda q: rows)
    env = tool("x")
    for brief, row in zip(env.briefs, rows, strict=True):
        assert json.loads(kit.get_record(brief["handle"])) == row


def test_scalar_records_get_a_value_field_beside_their_handle():
    """A list of strings gives briefs ``{"handle": ..., "value": ...}``."""
    kit, tool = _kit_tool("function", [summarize_with_handle()], lambda q: ["alpha", "beta"])
    env = tool("x")
    assert [b["value"] for b in env.briefs] == ["alpha", "beta"]
    assert kit.get_record(env.briefs[1]["handle"]) == "beta"


def test_summarize_alone_gives_full_briefs_with_handles():
    """Alone, the decorator shows every record in full, each with its handle."""
    env = summarize_with_handle(key="id")(lambda: ROWS[:2])()
    assert env.briefs == ROWS[:2]
    assert env.hint == "full record: get_record(0)"


def test_unregistered_tools_resolve_through_slimtools_get_record():
    """A decorated tool in no toolkit keeps handles in the default toolkit."""

    @summarize_with_handle(key="id")
    def search_logs(query: str) -> list[dict[str, Any]]:
        return ROWS

    search_logs("x")
    assert json.loads(slimtools.get_record(5)) == ROWS[5]


def test_the_companion_name_is_used_in_hints():
    """A toolkit whose companion is called ``expand`` says ``expand(0)``."""
    kit, tool = _kit_tool("function", [summarize_with_handle(key="id")], companion_name="expand")
    assert tool("x").hint.endswith("full record: expand(0)")
    assert [s.name for s in kit.tools] == ["search", "expand"]


ids = st.lists(
    st.integers(0, 10**6) | st.from_regex(r"[a-z][a-z0-9]{0,7}", fullmatch=True),
    unique_by=str,
    min_size=12,
    max_size=12,
)


@settings(max_examples=examples(60), deadline=None)
@given(
    rows=st.lists(
        st.builds(lambda extra, v: {**extra, "v": v}, extras(), json_scalars), max_size=12
    ),
    keys=st.none() | ids,
    form=st.sampled_from(sorted(RECORD_FORMS)),
    kind=st.sampled_from(KINDS),
    limit=st.integers(1, 5),
)
def test_every_brief_handle_resolves_to_its_full_original_record(rows, keys, form, kind, limit):
    """On every page, each brief's handle (key or generated) expands to that whole record."""
    if keys is not None:
        rows = [{"id": key, **row} for key, row in zip(keys, rows, strict=False)]
    records = [RECORD_FORMS[form](row) for row in rows]
    kit = Toolkit("prop")
    deco = summarize_with_handle(key="id") if keys is not None else summarize_with_handle()
    decorators = [deco, paginate(limit=limit), project_fields(["id", "v"])]
    tool = kit.tool(build_tool(kind, decorators, lambda q: records))
    position = 0
    args: dict[str, Any] | None = {"query": "q"}
    while args is not None:
        env = call_sync(tool, **args)
        for brief in env.briefs:
            handle = brief["id"] if keys is not None else brief["handle"]
            assert json.loads(kit.get_record(handle)) == to_jsonable(records[position])
            position += 1
        args = next_call(env.hint, "search")
    assert position == len(records)


# fetch= mode ---------------------------------------------------------------------------


class _SpyStore(MemoryStore):
    """A memory store that remembers every key written."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[str] = []

    def put_many(self, scope: Any, items: Any) -> list[str]:
        self.written += list(items)
        return super().put_many(scope, items)


def test_fetch_mode_stores_no_records(kind):
    """With ``fetch=``, full records are never written to the store."""
    store = _SpyStore()
    _kit, tool = _kit_tool(kind, [summarize_with_handle(key="id", fetch=lambda h: {})], store=store)
    call_sync(tool, "x")
    assert not [k for k in store.written if k.startswith("r:")]


def test_fetch_mode_calls_fetch_live_with_the_handle_as_a_string():
    """``get_record(3)`` calls ``fetch("3")`` and returns its answer as JSON."""
    asked: list[Any] = []

    def fetch(handle: str) -> dict[str, Any]:
        asked.append(handle)
        return {"id": int(handle), "fetched": True}

    kit, tool = _kit_tool("function", [summarize_with_handle(key="id", fetch=fetch)])
    tool("x")
    assert json.loads(kit.get_record(3)) == {"id": 3, "fetched": True}
    assert asked == ["3"]


def test_fetch_raising_lookup_error_means_no_such_record():
    """A fetch that raises ``KeyError`` gives the ordinary unknown-handle message."""

    def fetch(handle: str) -> Any:
        raise KeyError(handle)

    kit, _tool = _kit_tool("function", [summarize_with_handle(key="id", fetch=fetch)])
    assert kit.get_record(99).startswith("No record for handle")


def test_fetch_failing_gives_a_message_not_an_exception():
    """A backend error in fetch comes back as text naming the error."""

    def fetch(handle: str) -> Any:
        raise ConnectionError("backend down")

    kit, _tool = _kit_tool("function", [summarize_with_handle(key="id", fetch=fetch)])
    message = kit.get_record(3)
    assert "ConnectionError: backend down" in message
    assert "search" in message


def test_fetch_returning_none_means_no_such_record():
    """``None`` from fetch is an unknown handle."""
    kit, _tool = _kit_tool("function", [summarize_with_handle(key="id", fetch=lambda h: None)])
    assert kit.get_record(3).startswith("No record for handle")


async def _afetch(handle: str) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"id": int(handle), "async": True}


def test_an_async_fetch_is_awaited_by_get_record():
    """An ``async def`` fetch works with the sync companion when no loop is running."""
    kit, _tool = _kit_tool("function", [summarize_with_handle(key="id", fetch=_afetch)])
    assert json.loads(kit.get_record(2)) == {"id": 2, "async": True}


async def test_an_async_fetch_is_awaited_by_aget_record_and_acall():
    """Inside a running loop, ``aget_record`` and ``acall`` await an async fetch."""
    kit, _tool = _kit_tool("async_function", [summarize_with_handle(key="id", fetch=_afetch)])
    assert json.loads(await kit.aget_record(2)) == {"id": 2, "async": True}
    assert json.loads((await kit.acall("get_record", {"handle": 4})).text)["id"] == 4


async def test_an_async_fetch_under_a_running_loop_points_to_aget_record():
    """The sync companion cannot await inside a running loop, and says what to use."""
    kit, _tool = _kit_tool("async_function", [summarize_with_handle(key="id", fetch=_afetch)])
    message = kit.get_record(2)
    assert "use aget_record" in message
    assert message.startswith('Fetching handle "2" failed')


@pytest.mark.parametrize(
    "options",
    [
        {"key": ""},
        {"key": 3},
        {"fetch": "not callable", "key": "id"},
        {"fetch": lambda h: h},
        {"head": 0},
        {"tail": -1},
        {"max_tokens": 0},
    ],
)
def test_bad_summarize_options_raise_configuration_error(options):
    """Bad options fail when the decorator is applied: fetch needs a key, head >= 1, ..."""
    with pytest.raises(ConfigurationError):
        summarize_with_handle(**options)


# long records --------------------------------------------------------------------------


def test_long_records_are_read_in_pages():
    """A record longer than ``record_max_chars`` comes back in pages, each saying what is next."""
    big = {"id": 1, "body": "x" * 250}
    kit, tool = _kit_tool(
        "function", [summarize_with_handle(key="id")], lambda q: [big], record_max_chars=100
    )
    tool("x")
    first = kit.get_record(1)
    assert first.startswith('[record "1": ')
    assert 'next: get_record("1", page=2)' in first.splitlines()[0]
    pages = [first.split("\n", 1)[1]]
    pages += [kit.get_record(1, page=n).split("\n", 1)[1] for n in (2, 3)]
    assert json.loads("".join(pages)) == big
    assert "past the end" in kit.get_record(1, page=9)


def test_a_short_record_has_no_page_two():
    """Asking page 2 of a one-page record says to call without a page."""
    kit, tool = _kit_tool("function", [summarize_with_handle(key="id")])
    tool("x")
    assert kit.get_record(1, page=2) == 'record "1" fits on one page; call get_record("1").'


@given(rows=log_rows)
@settings(max_examples=examples(30), deadline=None)
def test_log_rows_handles_resolve(rows):
    """The design article's log rows: every surfaced id expands to its row."""
    kit = Toolkit("logs")
    tool = kit.tool(
        build_tool(
            "function",
            [summarize_with_handle(key="id"), paginate(limit=5), project_fields(LogBrief)],
            lambda q: rows,
        )
    )
    for brief in tool("q").briefs:
        assert json.loads(kit.get_record(brief["id"])) == rows[brief["id"]]
