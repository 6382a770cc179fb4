"""Store keys across every store: the persisted layout, unambiguous tool names, stable handles.

Each check runs on all four stores (memory, SQLite, Redis on a throwaway server, LangGraph
over its ``InMemoryStore``). The layout checks read each backend's own storage, so a change
to the key encoding that would strand records persisted by an earlier version fails here.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slimtools import Toolkit, summarize_with_handle
from slimtools._core.keys import record_key, snapshot_key, text_key
from slimtools._json import loads
from slimtools.stores import LangGraphStore, SQLiteStore
from slimtools.stores.memory import MemoryStore
from slimtools.typing import HandleStore, Scope
from tests._profile import examples
from tests.stores import redis_fixtures
from tests.stores.redis_fixtures import live_store
from tests.stores.store_fixtures import logs_toolkit

redis_server = redis_fixtures.redis_server

STORES = ["memory", "sqlite", "redis", "langgraph"]

# The snapshot key of ``search_logs(query="q")`` as every earlier version wrote it.
SNAPSHOT_Q = "s:search_logs:1a1298d60147dde80321"


@pytest.fixture(scope="module")
def make_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], HandleStore]:
    """Build a fresh store of a kind; module-scoped so that hypothesis tests may use it."""
    made: list[HandleStore] = []

    def build(kind: str) -> HandleStore:
        store: HandleStore
        if kind == "memory":
            store = MemoryStore()
        elif kind == "sqlite":
            store = SQLiteStore(tmp_path_factory.mktemp("keys") / f"{uuid.uuid4().hex}.db")
        elif kind == "redis":
            server = request.getfixturevalue("redis_server")
            store = live_store(server.url, prefix=f"t{uuid.uuid4().hex}")
        else:
            from langgraph.store.memory import InMemoryStore

            store = LangGraphStore(InMemoryStore())
        made.append(store)
        return store

    yield build  # type: ignore[misc]
    for store in made:
        store.close()


@pytest.fixture(params=STORES)
def kind(request: pytest.FixtureRequest) -> str:
    """Each store kind in turn."""
    return str(request.param)


def persisted_keys(store: HandleStore, toolkit: str) -> set[str]:
    """The keys ``store`` holds for ``toolkit`` in the default session, read from its backend."""
    if isinstance(store, MemoryStore):
        return {k for s, k in store._entries if s == (toolkit, "default")}
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as raw:
            rows = raw.execute(
                "SELECT key FROM slimtools_handles WHERE toolkit = ? AND session = ?",
                (toolkit.encode(), b"default"),
            ).fetchall()
        return {bytes(key).decode() for (key,) in rows}
    if isinstance(store, LangGraphStore):
        found = store.store.search(("slimtools", toolkit, "default"), limit=1000)
        return {item.key for item in found}
    head = f"{store.prefix}:{toolkit}:default:".encode()  # type: ignore[attr-defined]
    client = store._sync_client()  # type: ignore[attr-defined]
    return {key[len(head) :].decode() for key in client.scan_iter(match=head + b"*")}


def test_plain_names_keep_the_persisted_key_layout(
    make_store: Callable[[str], HandleStore], kind: str
) -> None:
    """Records and snapshots of a plain tool name sit under the keys earlier versions wrote."""
    store = make_store(kind)
    logs_toolkit(store).call("search_logs", {"query": "q"})
    assert persisted_keys(store, "logs") == {
        "r:search_logs:0",
        "r:search_logs:1",
        "r:search_logs:2",
        SNAPSHOT_Q,
    }


def test_records_persisted_by_an_earlier_version_still_resolve(
    make_store: Callable[[str], HandleStore], kind: str
) -> None:
    """A record written under today's layout by hand is found by ``get_record``."""
    store = make_store(kind)
    kit = logs_toolkit(store)
    kit.call("search_logs", {"query": "q"})  # registers the tool's handles
    store.put_many(kit._keeper.scope(), {"r:search_logs:77": {"id": 77, "old": True}})
    assert loads(kit.get_record(77)) == {"id": 77, "old": True}


def test_plain_keys_are_byte_identical_to_the_old_layout() -> None:
    """``r:``/``t:``/``s:`` then the tool then the handle, for names without ``:`` or ``%``."""
    assert record_key("search", "5") == "r:search:5"
    assert text_key("read_file", "k3f9a2qd") == "t:read_file:k3f9a2qd"
    assert snapshot_key("search", "abc") == "s:search:abc"
    assert record_key("search", "a:b") == "r:search:a:b"  # the handle is last: never escaped


def test_a_colon_in_a_tool_name_cannot_meet_a_colon_in_a_handle() -> None:
    """Tool ``a:b`` with id ``c`` and tool ``a`` with id ``b:c`` get different keys."""
    assert record_key("a:b", "c") != record_key("a", "b:c")
    assert text_key("a:b", "c") != text_key("a", "b:c")
    assert snapshot_key("a:b", "c") != snapshot_key("a", "b:c")


def _two_tools(store: HandleStore) -> Toolkit:
    """Tools ``a:b`` (id ``c``) and ``a`` (id ``b:c``) on ``store``, each naming itself."""
    kit = Toolkit(f"k{uuid.uuid4().hex[:8]}", store=store)
    for name, some_id in (("a:b", "c"), ("a", "b:c")):
        kit.tool(_answering({"id": some_id, "tool": name}), name=name)
    return kit


def _answering(record: dict[str, Any]) -> Callable[[str], list[dict[str, Any]]]:
    """A summarised tool that answers ``record`` whatever the query."""

    @summarize_with_handle(key="id")
    def tool(query: str) -> list[dict[str, Any]]:
        """Answer one record."""
        return [record]

    return tool


def test_namespaced_tool_names_never_share_a_record(
    make_store: Callable[[str], HandleStore], kind: str
) -> None:
    """Each of two tools whose ``tool:id`` text coincides gets its own record back."""
    kit = _two_tools(make_store(kind))
    kit.call("a:b", {"query": "x"})
    kit.call("a", {"query": "x"})
    assert loads(kit.get_record("c", source="a:b")) == {"id": "c", "tool": "a:b"}
    assert loads(kit.get_record("b:c", source="a")) == {"id": "b:c", "tool": "a"}


def _versions_toolkit(store: HandleStore) -> Toolkit:
    """``search(query)`` answers record id 5 with content that depends on the query."""
    kit = Toolkit(f"k{uuid.uuid4().hex[:8]}", store=store)

    @kit.tool
    @summarize_with_handle(key="id")
    def search(query: str) -> list[dict[str, Any]]:
        """Search."""
        return [{"id": 5, "seen_for": query}]

    return kit


def test_a_later_call_never_changes_what_an_earlier_handle_fetches(
    make_store: Callable[[str], HandleStore], kind: str
) -> None:
    """Id 5 shown again with other content keeps the first record under handle 5."""
    kit = _versions_toolkit(make_store(kind))
    first = loads(kit.call("search", {"query": "a"}).text)
    assert first["briefs"][0] == {"id": 5, "seen_for": "a"}
    kit.call("search", {"query": "b"})
    assert loads(kit.get_record(5)) == {"id": 5, "seen_for": "a"}


def test_the_later_record_gets_its_own_handle(
    make_store: Callable[[str], HandleStore], kind: str
) -> None:
    """The second call shows a generated handle for its id 5, which fetches its own record."""
    kit = _versions_toolkit(make_store(kind))
    kit.call("search", {"query": "a"})
    brief = loads(kit.call("search", {"query": "b"}).text)["briefs"][0]
    assert brief["id"] == 5
    assert brief["handle"] != 5
    assert loads(kit.get_record(brief["handle"])) == {"id": 5, "seen_for": "b"}


def test_the_same_record_again_keeps_its_id_handle(
    make_store: Callable[[str], HandleStore], kind: str
) -> None:
    """A record shown again unchanged is still handle 5, with no generated handle."""
    kit = _versions_toolkit(make_store(kind))
    kit.call("search", {"query": "a"})
    again = loads(kit.call("search", {"query": "a"}).text)
    assert again["briefs"][0] == {"id": 5, "seen_for": "a"}
    assert again["hint"] == "full record: get_record(5)"


# -- properties over every store -----------------------------------------------------------

tool_names = st.text(alphabet="ab:%_", min_size=1, max_size=5)
ids = st.text(alphabet="ab:%1", min_size=1, max_size=5)


@given(
    first=st.tuples(st.sampled_from("rts"), tool_names, ids),
    second=st.tuples(st.sampled_from("rts"), tool_names, ids),
)
def test_no_two_distinct_names_share_a_key(
    first: tuple[str, str, str], second: tuple[str, str, str]
) -> None:
    """Property: distinct (kind, tool, handle) triples never build the same key."""
    build = {"r": record_key, "t": text_key, "s": snapshot_key}
    if first != second:
        assert build[first[0]](*first[1:]) != build[second[0]](*second[1:])


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # ``kind`` is a constant
)
@given(
    calls=st.lists(
        st.tuples(st.sampled_from(["a", "a:b", "b%3A", "srv:a"]), st.sampled_from(["1", "b:1"])),
        min_size=1,
        max_size=6,
    ),
)
def test_every_handle_shown_keeps_fetching_what_it_showed(
    make_store: Callable[[str], HandleStore], calls: list[tuple[str, str]], kind: str
) -> None:
    """Property: on every store, each handle shown refetches the record shown with it, and
    the same call again shows the same handle.

    Tools with ``:`` and ``%`` in their names return ids with ``:``; each call's record names
    the call, so the same id comes back with new content on every call.
    """
    store = make_store(kind)
    kit = Toolkit(f"k{uuid.uuid4().hex[:8]}", store=store)
    tools = sorted({name for name, _ in calls})
    for name in tools:

        @kit.tool(name=name)
        @summarize_with_handle(key="id")
        def tool(some_id: str, n: int) -> list[dict[str, Any]]:
            """Answer one record."""
            return [{"id": some_id, "n": n}]

    shown: list[tuple[str, Any, dict[str, Any]]] = []
    for n, (name, some_id) in enumerate(calls):
        brief = loads(kit.call(name, {"some_id": some_id, "n": n}).text)["briefs"][0]
        assert {k: v for k, v in brief.items() if k != "handle"} == {"id": some_id, "n": n}
        shown.append((name, brief.get("handle", brief["id"]), {"id": some_id, "n": n}))
        for tool, handle, record in shown:  # every earlier handle, after every call
            assert loads(kit.get_record(handle, source=tool)) == record
    for n, (name, some_id) in enumerate(calls):  # each call again: the handle it showed
        brief = loads(kit.call(name, {"some_id": some_id, "n": n}).text)["briefs"][0]
        assert brief.get("handle", brief["id"]) == shown[n][1]


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # ``kind`` is a constant
)
@given(pairs=st.lists(st.tuples(tool_names, ids), min_size=1, max_size=8, unique=True))
def test_records_of_distinct_tool_and_id_pairs_round_trip_apart(
    make_store: Callable[[str], HandleStore], kind: str, pairs: list[tuple[str, str]]
) -> None:
    """Property: on every store, each (tool, id) pair's record comes back under its own key."""
    store = make_store(kind)
    scope = Scope(uuid.uuid4().hex)
    items = {record_key(tool, some_id): {"tool": tool, "id": some_id} for tool, some_id in pairs}
    assert len(items) == len(pairs)
    store.put_many(scope, items)
    assert store.get_many(scope, list(items)) == items
