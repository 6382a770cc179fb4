"""Every handle store runs the shipped conformance suite: memory, SQLite, Redis, LangGraph.

The checks live in ``slimtools.testing`` (``StoreConformance`` and its bounded and async
variants), so third-party stores run the same ones; the classes below say how to build and
break each of ours. Time moves through an injected clock where the store takes one, and by
real (short) sleeps for Redis, whose expiry runs on the server's clock. The hypothesis
properties at the end drive the same builders with generated batches.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slimtools._json import to_jsonable
from slimtools.errors import ConfigurationError
from slimtools.stores import LangGraphStore, SQLiteStore, open_store
from slimtools.stores.memory import MemoryStore
from slimtools.testing import (
    AsyncStoreConformance,
    BoundedStoreConformance,
    ForgettingStoreConformance,
    StoreConformance,
    afail,
    fail,
)
from slimtools.typing import HandleStore, Scope
from tests._profile import examples
from tests.stores import redis_fixtures
from tests.stores.redis_fixtures import live_store

# The shared fixtures, bound here by name so that pytest finds them in this module.
redis_server = redis_fixtures.redis_server
redis_url = redis_fixtures.redis_url


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


class _Clocked(StoreConformance):
    """A store whose expiry reads an injected clock: TTL checks move it instead of sleeping."""

    short_ttl = 60.0

    def setup_method(self, method: Any = None) -> None:
        """A fresh clock for each check."""
        self.clock = FakeClock()

    def advance(self, seconds: float) -> None:
        """Move the clock."""
        self.clock.now += seconds


class _FailingEntries:
    """Stands in for MemoryStore's entry table: every access fails."""

    get = __getitem__ = __setitem__ = __iter__ = __len__ = move_to_end = staticmethod(fail)


class TestMemoryStore(_Clocked, BoundedStoreConformance, ForgettingStoreConformance):
    """MemoryStore: bounded, sync only."""

    def make_store(self, **options: Any) -> HandleStore:
        """A MemoryStore whose byte bound doubles as its record cap."""
        cap = options.get("max_record_bytes") or options.get("max_bytes") or 1 << 30
        return MemoryStore(
            max_items=options.get("max_items") or 1_000_000,
            max_bytes=cap,
            ttl=options.get("ttl"),
            clock=self.clock,
        )

    def break_store(self, store: HandleStore) -> None:
        """Replace the entry table and the clock with ones that fail."""
        assert isinstance(store, MemoryStore)
        store._entries = _FailingEntries()  # type: ignore[assignment]
        store._clock = fail


class TestSQLiteStore(
    _Clocked, BoundedStoreConformance, AsyncStoreConformance, ForgettingStoreConformance
):
    """SQLiteStore: bounded, sync and async."""

    @pytest.fixture(autouse=True)
    def _directory(self, tmp_path: Path) -> None:
        self.tmp = tmp_path

    def make_store(self, **options: Any) -> HandleStore:
        """A store in a new file of the test's temporary directory."""
        return SQLiteStore(
            self.tmp / f"{uuid.uuid4().hex}.db",
            max_items=options.get("max_items"),
            max_bytes=options.get("max_bytes"),
            ttl=options.get("ttl"),
            max_record_bytes=options.get("max_record_bytes"),
            clock=self.clock,
        )

    def break_store(self, store: HandleStore) -> None:
        """Every connection attempt fails."""
        store._connection = fail  # type: ignore[attr-defined]


class TestRedisStore(AsyncStoreConformance, ForgettingStoreConformance):
    """RedisStore on a throwaway server: sync and async; expiry on the server's clock."""

    short_ttl = 1.0

    @pytest.fixture(autouse=True)
    def _server(self, redis_url: str) -> None:
        self.url = redis_url

    def make_store(self, **options: Any) -> HandleStore:
        """A store on the test server (keys are scoped, so checks never collide)."""
        return live_store(
            self.url, ttl=options.get("ttl"), max_record_bytes=options.get("max_record_bytes")
        )

    def break_store(self, store: HandleStore) -> None:
        """Both clients fail to open."""
        store._sync_client = fail  # type: ignore[attr-defined]
        store._async_client = afail  # type: ignore[attr-defined]


class _FailingBackend:
    """Stands in for a LangGraph BaseStore whose every batch fails."""

    supports_ttl = False
    batch = staticmethod(fail)
    abatch = staticmethod(afail)


class TestLangGraphStore(_Clocked, AsyncStoreConformance):
    """LangGraphStore over LangGraph's InMemoryStore: sync and async."""

    def make_store(self, **options: Any) -> HandleStore:
        """A store over a new InMemoryStore."""
        from langgraph.store.memory import InMemoryStore

        return LangGraphStore(
            InMemoryStore(),
            ttl=options.get("ttl"),
            max_record_bytes=options.get("max_record_bytes"),
            clock=self.clock,
        )

    def break_store(self, store: HandleStore) -> None:
        """The backend's batch calls fail."""
        assert isinstance(store, LangGraphStore)
        store.store = _FailingBackend()  # type: ignore[assignment]


# -- properties over every store ------------------------------------------------------------

SUITES = [TestMemoryStore, TestSQLiteStore, TestRedisStore, TestLangGraphStore]
BOUNDED = [TestMemoryStore, TestSQLiteStore]


def _suite(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreConformance]:
    suite = request.param()
    if hasattr(suite, "setup_method"):
        suite.setup_method()
    suite.tmp = tmp_path
    if isinstance(suite, TestRedisStore):
        suite.url = request.getfixturevalue("redis_url")
    yield suite
    suite.teardown_method()


@pytest.fixture(params=SUITES, ids=lambda c: c.__name__.removeprefix("Test"))
def suite(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreConformance]:
    """Each of our stores' conformance suites, as a store builder."""
    yield from _suite(request, tmp_path)


@pytest.fixture(params=BOUNDED, ids=lambda c: c.__name__.removeprefix("Test"))
def bounded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreConformance]:
    """The suites of stores that bound items and bytes themselves."""
    yield from _suite(request, tmp_path)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    items=st.dictionaries(st.text(max_size=12), json_values, max_size=8),
    session=st.text(min_size=1, max_size=10),
)
def test_any_batch_round_trips_in_its_scope_only(
    suite: StoreConformance, items: dict[str, Any], session: str
) -> None:
    """Property: any batch of JSON values reads back equal in its scope and nowhere else."""
    store = suite.__dict__.get("_made_stores", [None])[0] or suite.store()
    scope = Scope(uuid.uuid4().hex, session)
    store.put_many(scope, items)
    assert to_jsonable(store.get_many(scope, list(items))) == to_jsonable(items)
    assert store.get_many(Scope(scope.toolkit, session + "x"), list(items)) == {}


@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=3_000), min_size=1, max_size=60),
    batch=st.integers(min_value=1, max_value=7),
)
def test_bounds_hold_under_a_long_run(
    bounded: StoreConformance, sizes: list[int], batch: int
) -> None:
    """Property: after every put_many, item count and bytes are within both bounds."""
    store: Any = bounded.make_store(max_items=15, max_bytes=12_000)
    for start in range(0, len(sizes), batch):
        chunk = {f"{start}:{j}": "y" * n for j, n in enumerate(sizes[start : start + batch])}
        store.put_many(Scope("kit", "alice"), chunk)
        assert len(store) <= 15
        assert store.nbytes <= 12_000
    store.close()


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


@pytest.mark.subprocess
def test_importing_the_stores_pulls_in_no_client_library() -> None:
    """slimtools.stores imports redis and langgraph only when their stores are used."""
    code = (
        "import sys, slimtools, slimtools.stores;"
        "print(sorted(m for m in ('redis', 'langgraph') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
