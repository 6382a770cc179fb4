"""One conformance suite for every handle store: memory, SQLite, Redis, LangGraph BaseStore.

Each store is driven through a small harness that builds it with common options and moves
time forward: an injected clock where the store takes one, real (short) sleeps for Redis,
whose expiry runs on the server's clock. Stores that serialise hand back the JSON form, so
values are compared as ``to_jsonable`` of what was stored.
"""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slimtools._core.jsonenc import to_jsonable
from slimtools.errors import ConfigurationError, StoreUnavailableError
from slimtools.stores import LangGraphStore, RedisStore, SQLiteStore, open_store
from slimtools.stores.memory import MemoryStore
from slimtools.typing import AsyncHandleStore, HandleStore, Scope
from tests import redis_fixtures
from tests._profile import examples

# The shared fixtures, bound here by name so that pytest finds them in this module.
redis_server = redis_fixtures.redis_server
redis_url = redis_fixtures.redis_url

ALL = ["memory", "sqlite", "redis", "langgraph"]
BOUNDED = ["memory", "sqlite"]  # stores that bound items and bytes themselves
ASYNC = ["sqlite", "redis", "langgraph"]  # stores with aput_many/aget_many


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Harness:
    """Builds one kind of store and advances the time it expires records by."""

    kind: str
    tmp: Path
    url: str | None = None
    clock: FakeClock = field(default_factory=FakeClock)
    made: list[HandleStore] = field(default_factory=list)

    def make(
        self,
        *,
        ttl: float | None = None,
        record_cap: int | None = None,
        max_items: int | None = None,
        max_bytes: int | None = None,
    ) -> HandleStore:
        """A new store of this kind; ``record_cap`` is the largest record it accepts."""
        store: HandleStore
        if self.kind == "memory":
            store = MemoryStore(
                max_items=max_items or 1_000_000,
                max_bytes=record_cap or max_bytes or 1 << 30,
                ttl=ttl,
                clock=self.clock,
            )
        elif self.kind == "sqlite":
            store = SQLiteStore(
                self.tmp / f"{uuid.uuid4().hex}.db",
                max_items=max_items,
                max_bytes=max_bytes,
                ttl=ttl,
                max_record_bytes=record_cap,
                clock=self.clock,
            )
        elif self.kind == "redis":
            assert self.url is not None
            store = RedisStore(self.url, ttl=ttl, max_record_bytes=record_cap)
        else:
            from langgraph.store.memory import InMemoryStore

            store = LangGraphStore(
                InMemoryStore(), ttl=ttl, max_record_bytes=record_cap, clock=self.clock
            )
        self.made.append(store)
        return store

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass for the stores this harness made."""
        if self.kind == "redis":
            time.sleep(seconds)
        else:
            self.clock.now += seconds

    @property
    def short_ttl(self) -> float:
        """A TTL that the test can outlive cheaply (one real second for Redis)."""
        return 1.0 if self.kind == "redis" else 60.0


def _harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    harness = Harness(request.param, tmp_path, url)
    yield harness
    for store in harness.made:
        store.close()


@pytest.fixture(params=ALL)
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    """Every store kind."""
    yield from _harness(request, tmp_path)


@pytest.fixture(params=BOUNDED)
def bounded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    """The stores that enforce item and byte bounds themselves (Redis uses maxmemory)."""
    yield from _harness(request, tmp_path)


@pytest.fixture(params=ASYNC)
def async_harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    """The stores that implement the asynchronous protocol."""
    yield from _harness(request, tmp_path)


SCOPE = Scope("kit", "alice")
RECORD = {"id": 3, "level": "ERROR", "message": "upstream timeout", "tags": ["a", "b"]}


def test_put_then_get_round_trips(harness: Harness) -> None:
    """A stored record comes back equal to its JSON form."""
    store = harness.make()
    assert list(store.put_many(SCOPE, {"r:search:3": RECORD, "t:read:x": "line1\nline2"})) == []
    assert store.get_many(SCOPE, ["r:search:3", "t:read:x"]) == {
        "r:search:3": RECORD,
        "t:read:x": "line1\nline2",
    }


def test_missing_keys_are_absent(harness: Harness) -> None:
    """Keys never written are left out of the answer, not mapped to None."""
    store = harness.make()
    store.put_many(SCOPE, {"a": 1})
    assert store.get_many(SCOPE, ["a", "b", "", "\ud800"]) == {"a": 1}
    assert store.get_many(SCOPE, []) == {}


def test_empty_batch_stores_nothing_and_refuses_nothing(harness: Harness) -> None:
    """put_many with no items is a no-op."""
    store = harness.make()
    assert list(store.put_many(SCOPE, {})) == []


def test_overwrite_keeps_the_latest_value(harness: Harness) -> None:
    """Writing a key again replaces its value."""
    store = harness.make()
    store.put_many(SCOPE, {"a": {"v": 1}})
    store.put_many(SCOPE, {"a": {"v": 2}})
    assert store.get_many(SCOPE, ["a"]) == {"a": {"v": 2}}


def test_other_session_lookup_looks_exactly_like_unknown(harness: Harness) -> None:
    """Another session (or toolkit) gets the same empty answer as for a key never written."""
    store = harness.make()
    store.put_many(SCOPE, {"a": RECORD})
    for other in (Scope("kit", "bob"), Scope("other-kit", "alice"), Scope("kit")):
        assert store.get_many(other, ["a"]) == store.get_many(SCOPE, ["never-written"]) == {}


def test_sessions_do_not_overwrite_each_other(harness: Harness) -> None:
    """The same key written in two sessions keeps two records."""
    store = harness.make()
    store.put_many(Scope("kit", "alice"), {"a": "alice's"})
    store.put_many(Scope("kit", "bob"), {"a": "bob's"})
    assert store.get_many(Scope("kit", "alice"), ["a"]) == {"a": "alice's"}
    assert store.get_many(Scope("kit", "bob"), ["a"]) == {"a": "bob's"}


def test_separator_characters_cannot_merge_scopes(harness: Harness) -> None:
    """Scopes whose names differ only in where a ':' or '.' falls stay apart."""
    store = harness.make()
    scopes = [
        Scope("a:b", "c"),
        Scope("a", "b:c"),
        Scope("a.b", "c"),
        Scope("a", "b.c"),
        Scope("a%3Ab", "c"),
        Scope("", "a:b:c"),
    ]
    for i, scope in enumerate(scopes):
        store.put_many(scope, {"k": i})
    assert [store.get_many(scope, ["k"]) for scope in scopes] == [
        {"k": i} for i in range(len(scopes))
    ]


def test_records_expire_after_ttl(harness: Harness) -> None:
    """A record is readable before its TTL and absent after it."""
    store = harness.make(ttl=harness.short_ttl)
    store.put_many(SCOPE, {"a": RECORD})
    assert store.get_many(SCOPE, ["a"]) == {"a": RECORD}
    harness.advance(harness.short_ttl * 1.2)
    assert store.get_many(SCOPE, ["a"]) == {}


def test_oversize_record_is_refused_and_reported(harness: Harness) -> None:
    """A record over the cap is returned as refused; the rest of the batch is stored."""
    store = harness.make(record_cap=1_000)
    refused = store.put_many(SCOPE, {"big": "x" * 5_000, "small": RECORD})
    assert list(refused) == ["big"]
    assert store.get_many(SCOPE, ["big", "small"]) == {"small": RECORD}


def test_snapshot_of_a_list_round_trips_in_json_form(harness: Harness) -> None:
    """A page-1 snapshot (one list of many records) is one value and comes back whole."""
    store = harness.make()
    rows = [{"id": i, "msg": f"row {i}", "when": f"10-24 03:{i % 60:02d}"} for i in range(3_000)]
    store.put_many(SCOPE, {"s:search:abc": rows})
    assert store.get_many(SCOPE, ["s:search:abc"]) == {"s:search:abc": rows}


def test_unicode_keys_values_and_scopes_round_trip(harness: Harness) -> None:
    """CJK, emoji and combining marks survive in keys, values and scope names."""
    store = harness.make()
    scope = Scope("工具箱", "会话-👩‍💻")
    value = {"summary": "上游超时 👩🏽‍🚀 é", "emoji": "🇯🇵"}
    store.put_many(scope, {"r:搜索:键": value})
    assert store.get_many(scope, ["r:搜索:键"]) == {"r:搜索:键": value}


@dataclasses.dataclass
class _Point:
    x: int
    y: Decimal


class _Opaque:
    def __init__(self) -> None:
        self.name = "thing"
        self._secret = "hidden"


def test_values_orjson_cannot_encode_fall_back(harness: Harness) -> None:
    """Decimals, sets, bytes, dataclasses and objects come back as their documented JSON form."""
    store = harness.make()
    value = {
        "price": Decimal("12.50"),
        "tags": {"b", "a"},
        "raw": b"\xff\x00",
        "text": b"ok",
        "point": _Point(1, Decimal("2.5")),
        "obj": _Opaque(),
        "huge": 2**70,
    }
    store.put_many(SCOPE, {"v": value})
    assert to_jsonable(store.get_many(SCOPE, ["v"])["v"]) == to_jsonable(value)


def test_many_records_in_one_batch_each_under_its_own_key(harness: Harness) -> None:
    """A 100-record batch (one tool call) stores every record under its own key."""
    store = harness.make()
    batch = {f"r:search:{i}": {"id": i, "body": f"record {i}"} for i in range(100)}
    store.put_many(SCOPE, batch)
    assert store.get_many(SCOPE, list(batch)) == batch


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    items=st.dictionaries(
        st.text(max_size=12),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(st.text(max_size=6), inner, max_size=4)
            ),
            max_leaves=12,
        ),
        max_size=8,
    ),
    session=st.text(min_size=1, max_size=10),
)
def test_any_batch_round_trips_in_its_scope_only(
    harness: Harness, items: dict[str, Any], session: str
) -> None:
    """Property: any batch of JSON values reads back equal in its scope and nowhere else."""
    store = harness.made[0] if harness.made else harness.make()
    scope = Scope(uuid.uuid4().hex, session)
    store.put_many(scope, items)
    assert to_jsonable(store.get_many(scope, list(items))) == to_jsonable(items)
    assert store.get_many(Scope(scope.toolkit, session + "x"), list(items)) == {}


def _fill(store: HandleStore, rng_sizes: list[int]) -> Callable[[int], None]:
    def put(i: int) -> None:
        store.put_many(SCOPE, {f"k{i}": "x" * rng_sizes[i % len(rng_sizes)]})

    return put


def _live(store: HandleStore, n: int) -> dict[str, Any]:
    return store.get_many(SCOPE, [f"k{i}" for i in range(n)])


def test_item_bound_evicts_the_oldest(bounded: Harness) -> None:
    """Past max_items the earliest written records go; the newest stay."""
    store = bounded.make(max_items=10)
    for i in range(25):
        store.put_many(SCOPE, {f"k{i}": i})
    assert sorted(_live(store, 25).values()) == list(range(15, 25))


def test_byte_bound_is_never_exceeded(bounded: Harness) -> None:
    """Stored bytes stay under max_bytes while the newest record always survives."""
    store = bounded.make(max_bytes=10_000)
    put = _fill(store, [10, 3_000, 700, 4_500, 50])
    for i in range(200):
        put(i)
        assert store.nbytes <= 10_000  # type: ignore[attr-defined]
        assert f"k{i}" in store.get_many(SCOPE, [f"k{i}"])


@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=3_000), min_size=1, max_size=60),
    batch=st.integers(min_value=1, max_value=7),
)
def test_bounds_hold_under_a_long_run(bounded: Harness, sizes: list[int], batch: int) -> None:
    """Property: after every put_many, item count and bytes are within both bounds."""
    store = bounded.make(max_items=15, max_bytes=12_000)
    for start in range(0, len(sizes), batch):
        chunk = {f"{start}:{j}": "y" * n for j, n in enumerate(sizes[start : start + batch])}
        store.put_many(SCOPE, chunk)
        assert len(store) <= 15  # type: ignore[arg-type]
        assert store.nbytes <= 12_000  # type: ignore[attr-defined]
    store.close()


async def test_async_round_trip_matches_sync(async_harness: Harness) -> None:
    """aput_many/aget_many store and read the same records as the sync calls."""
    store = async_harness.make()
    assert isinstance(store, AsyncHandleStore)
    assert list(await store.aput_many(SCOPE, {"a": RECORD, "big": "z"})) == []
    assert await store.aget_many(SCOPE, ["a", "big", "none"]) == {"a": RECORD, "big": "z"}
    assert store.get_many(SCOPE, ["a"]) == {"a": RECORD}
    assert await store.aget_many(Scope("kit", "bob"), ["a"]) == {}
    if isinstance(store, RedisStore):
        await store.aclose()


async def test_async_refuses_oversize_records(async_harness: Harness) -> None:
    """The asynchronous put reports refused records like the sync one."""
    store = async_harness.make(record_cap=100)
    assert list(await store.aput_many(SCOPE, {"big": "x" * 500, "ok": 1})) == ["big"]
    assert await asyncio.wait_for(store.aget_many(SCOPE, ["big", "ok"]), 10) == {"ok": 1}
    if isinstance(store, RedisStore):
        await store.aclose()


class _BrokenError(RuntimeError):
    """An error no store knows in advance (not a driver error)."""


def _break(store: HandleStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the innermost layer of ``store`` raise ``_BrokenError`` on every access."""

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise _BrokenError("inner failure")

    async def afail(*args: Any, **kwargs: Any) -> Any:
        raise _BrokenError("inner failure")

    if isinstance(store, MemoryStore):
        monkeypatch.setattr("slimtools.stores.memory._sizes", fail)
        monkeypatch.setattr(store, "_clock", fail)
    elif isinstance(store, SQLiteStore):
        monkeypatch.setattr(store, "_connection", fail)
    elif isinstance(store, RedisStore):
        monkeypatch.setattr(store, "_sync_client", fail)
        monkeypatch.setattr(store, "_async_client", afail)
    else:
        assert isinstance(store, LangGraphStore)
        monkeypatch.setattr(type(store.store), "batch", fail)
        monkeypatch.setattr(type(store.store), "abatch", afail)


async def test_any_inner_error_surfaces_as_store_unavailable(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever fails inside a store, sync or async, callers see StoreUnavailableError."""
    store = harness.make()
    _break(store, monkeypatch)
    with pytest.raises(StoreUnavailableError, match="inner failure"):
        store.put_many(SCOPE, {"a": RECORD})
    with pytest.raises(StoreUnavailableError, match="inner failure"):
        store.get_many(SCOPE, ["a"])
    if isinstance(store, AsyncHandleStore):
        with pytest.raises(StoreUnavailableError, match="inner failure"):
            await store.aput_many(SCOPE, {"a": RECORD})
        with pytest.raises(StoreUnavailableError, match="inner failure"):
            await store.aget_many(SCOPE, ["a"])


# -- choosing a store by URL ---------------------------------------------------------------


def test_open_store_defaults_to_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """No URL and no SLIMTOOLS_STORE: an in-memory store."""
    monkeypatch.delenv("SLIMTOOLS_STORE", raising=False)
    assert isinstance(open_store(), MemoryStore)


def test_open_store_reads_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """SLIMTOOLS_STORE picks the store when no URL is given."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLIMTOOLS_STORE", "sqlite:///from-env.db?ttl=30")
    store = open_store()
    assert isinstance(store, SQLiteStore)
    assert (store.path, store.ttl) == (Path("from-env.db"), 30.0)
    assert (tmp_path / "from-env.db").exists()
    store.close()


def test_sqlite_urls_follow_sqlalchemy_slashes(tmp_path: Path) -> None:
    """sqlite:///rel is relative, sqlite:////abs is absolute."""
    absolute = open_store(f"sqlite:///{tmp_path}/abs.db")
    assert isinstance(absolute, SQLiteStore)
    assert absolute.path == tmp_path / "abs.db"
    assert str(tmp_path).startswith("/")  # so the URL above had four slashes
    absolute.close()


def test_memory_url_options_configure_the_store() -> None:
    """memory:// takes max_items, max_bytes and ttl (ttl=none: no expiry)."""
    store = open_store("memory://?max_items=5&max_bytes=1_000&ttl=none")
    assert isinstance(store, MemoryStore)
    assert (store.max_items, store.max_bytes, store.ttl) == (5, 1000, None)


def test_sqlite_url_options_configure_the_store(tmp_path: Path) -> None:
    """sqlite URLs take the bounds, ttl, max_record_bytes and busy_timeout."""
    store = open_store(
        f"sqlite:///{tmp_path}/o.db?max_items=7&max_bytes=900&ttl=60&max_record_bytes=80"
        "&busy_timeout=1.5"
    )
    assert isinstance(store, SQLiteStore)
    got = (store.max_items, store.max_bytes, store.ttl, store.max_record_bytes, store.busy_timeout)
    assert got == (7, 900, 60.0, 80, 1.5)
    store.close()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgres://db/x", "unknown handle store URL"),
        ("memory://?size=3", "unknown option 'size'"),
        ("memory://?max_items=lots", "max_items='lots' is not a valid int"),
        ("memory://?max_items=-1", "positive"),
        ("memory://somewhere", "no host or path"),
        ("sqlite://host/x.db", "has no host"),
        ("sqlite:///:memory:", "memory://"),
        ("sqlite://", "give a database file"),
    ],
)
def test_bad_store_urls_raise_configuration_errors(url: str, message: str) -> None:
    """Malformed URLs fail at configuration time with a message naming the problem."""
    with pytest.raises(ConfigurationError, match=message):
        open_store(url)


def test_importing_the_stores_pulls_in_no_client_library() -> None:
    """slimtools.stores imports redis and langgraph only when their stores are used."""
    code = (
        "import sys, slimtools, slimtools.stores;"
        "print(sorted(m for m in ('redis', 'langgraph') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
