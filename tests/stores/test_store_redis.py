"""RedisStore against a real redis-server: keys, round trips, expiry, failures, outage."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
import threading
import warnings
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from hypothesis import given
from hypothesis import strategies as st

from slimtools import Toolkit, paginate, summarize_with_handle
from slimtools.errors import StoreUnavailableError
from slimtools.stores import RedisStore, open_store
from slimtools.stores.redis import redis_key
from slimtools.typing import Scope
from tests._ports import refusing_socket
from tests.stores import redis_fixtures
from tests.stores.redis_fixtures import LIVE_TIMEOUT, RedisServer, live_store
from tests.stores.store_fixtures import (
    logs_toolkit,
    misplaced,
    run_processes,
    run_threads,
    written_keys,
)

# The shared fixtures, bound here by name so that pytest finds them in this module.
redis_server = redis_fixtures.redis_server
redis_url = redis_fixtures.redis_url
own_redis_server = redis_fixtures.own_redis_server

SCOPE = Scope("kit", "alice")

scopes = st.builds(Scope, st.text(max_size=8), st.text(max_size=8))


def test_key_layout_is_prefix_toolkit_session_key() -> None:
    """Keys read prefix:toolkit:session:key, with ':' and '%' escaped in the scope names."""
    assert redis_key("slimtools", Scope("a:b", "s%1"), "r:t:1") == b"slimtools:a%3Ab:s%251:r:t:1"


@given(a=st.tuples(scopes, st.text(max_size=8)), b=st.tuples(scopes, st.text(max_size=8)))
def test_distinct_scope_key_pairs_never_share_a_redis_key(
    a: tuple[Scope, str], b: tuple[Scope, str]
) -> None:
    """Property: the key mapping is injective, so no record can answer for another."""
    if a != b:
        assert redis_key("p", *a) != redis_key("p", *b)


def test_lone_surrogate_handles_are_just_unknown(redis_url: str) -> None:
    """A model-sent handle with a lone surrogate is a miss, not an encoding crash."""
    store = live_store(redis_url)
    assert store.get_many(SCOPE, ["\ud800"]) == {}
    store.close()


def test_records_live_under_the_prefix_with_a_px_expiry(redis_url: str) -> None:
    """Stored keys carry the prefix and a Redis expiry equal to the TTL."""
    store = live_store(redis_url, ttl=30, prefix="app")
    store.put_many(SCOPE, {"r:search:3": {"id": 3}})
    raw = redis.Redis.from_url(redis_url)
    assert raw.keys("*") == [b"app:kit:alice:r:search:3"]
    assert 29_000 < raw.pttl(b"app:kit:alice:r:search:3") <= 30_000
    store.close()


def test_no_ttl_means_no_expiry(redis_url: str) -> None:
    """ttl=None writes keys without expiry (bounds are left to maxmemory)."""
    store = live_store(redis_url, ttl=None)
    store.put_many(SCOPE, {"a": 1})
    assert redis.Redis.from_url(redis_url).pttl(b"slimtools:kit:alice:a") == -1


def test_prefixes_isolate_stores_sharing_a_database(redis_url: str) -> None:
    """Two prefixes on one database never see each other's records."""
    one, two = live_store(redis_url, prefix="one"), live_store(redis_url, prefix="two")
    one.put_many(SCOPE, {"a": 1})
    assert two.get_many(SCOPE, ["a"]) == {}


class _CountingConnection(redis.Connection):
    """Counts writes to the socket: one per round trip."""

    sends = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        type(self).sends += 1
        super().send_packed_command(command, check_health)


def _counting_store(url: str) -> RedisStore:
    pool = redis.ConnectionPool.from_url(url, connection_class=_CountingConnection)
    client = redis.Redis(connection_pool=pool)
    client.ping()  # handshake done before counting
    _CountingConnection.sends = 0
    return RedisStore(client)


def test_put_many_of_100_records_is_one_round_trip(redis_url: str) -> None:
    """A tool call's 100 records go out in one pipelined MULTI/EXEC write."""
    store = _counting_store(redis_url)
    store.put_many(SCOPE, {f"r:t:{i}": {"id": i} for i in range(100)})
    assert _CountingConnection.sends == 1


def test_get_many_of_100_keys_is_one_round_trip(redis_url: str) -> None:
    """Reading 100 handles is one MGET."""
    store = _counting_store(redis_url)
    store.put_many(SCOPE, {f"r:t:{i}": i for i in range(100)})
    _CountingConnection.sends = 0
    assert len(store.get_many(SCOPE, [f"r:t:{i}" for i in range(100)])) == 100
    assert _CountingConnection.sends == 1


def test_an_undecodable_value_reads_as_absent(redis_url: str) -> None:
    """A foreign or damaged value under our key is a miss, not an exception."""
    store = live_store(redis_url)
    store.put_many(SCOPE, {"a": 1, "b": 2})
    redis.Redis.from_url(redis_url).set(b"slimtools:kit:alice:a", b"\xff not json")
    assert store.get_many(SCOPE, ["a", "b"]) == {"b": 2}


def test_connection_refused_raises_store_unavailable() -> None:
    """Nothing listening on the port: StoreUnavailableError, never a redis-py exception."""
    with refusing_socket() as held:
        store = RedisStore(f"redis://127.0.0.1:{held.getsockname()[1]}/0")
        with pytest.raises(StoreUnavailableError, match="Connection"):
            store.put_many(SCOPE, {"a": 1})
        with pytest.raises(StoreUnavailableError):
            store.get_many(SCOPE, ["a"])


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server that accepts connections and never answers (a hung Redis)."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


def test_a_hung_server_times_out_as_store_unavailable(silent_server: int) -> None:
    """A server that never replies gives StoreUnavailableError after the socket timeout."""
    store = RedisStore(f"redis://127.0.0.1:{silent_server}/0", socket_timeout=0.1)
    with pytest.raises(StoreUnavailableError, match="Timeout"):
        store.get_many(SCOPE, ["a"])


def _write_until_full(store: RedisStore) -> None:
    for i in range(10):  # the first write may still fit: Redis checks before writing
        store.put_many(SCOPE, {f"big{i}": "x" * 300_000})


def test_a_full_server_raises_store_unavailable(own_redis_server: RedisServer) -> None:
    """Redis out of memory (noeviction) refuses writes with StoreUnavailableError."""
    raw = redis.Redis.from_url(own_redis_server.url)
    used = int(raw.info("memory")["used_memory"])
    raw.config_set("maxmemory-policy", "noeviction")
    raw.config_set("maxmemory", used + 200_000)
    store = live_store(own_redis_server.url, ttl=None)
    with pytest.raises(StoreUnavailableError, match="maxmemory"):
        _write_until_full(store)


def test_open_store_passes_options_to_the_store_and_redis_py(redis_url: str) -> None:
    """ttl/prefix/max_record_bytes configure the store; other options reach redis-py."""
    options = f"?ttl=7&prefix=viaurl&max_record_bytes=50&socket_timeout={LIVE_TIMEOUT}"
    store = open_store(redis_url + options)
    assert isinstance(store, RedisStore)
    assert (store.ttl, store.prefix, store.max_record_bytes) == (7.0, "viaurl", 50)
    assert list(store.put_many(SCOPE, {"a": "x" * 100, "b": 1})) == ["a"]
    assert redis.Redis.from_url(redis_url).keys("*") == [b"viaurl:kit:alice:b"]
    store.close()


async def test_asyncio_client_store_works_async_and_refuses_sync_clearly(redis_url: str) -> None:
    """Given only an asyncio client, async calls work; sync ones say to pass a URL."""
    client = aioredis.Redis.from_url(redis_url)
    store = RedisStore(client)
    assert list(await store.aput_many(SCOPE, {"a": [1, "二"]})) == []
    assert await store.aget_many(SCOPE, ["a", "b"]) == {"a": [1, "二"]}
    with pytest.raises(StoreUnavailableError, match="URL"):
        store.get_many(SCOPE, ["a"])
    await client.aclose()


async def test_sync_client_store_serves_async_calls_from_a_thread(redis_url: str) -> None:
    """Given a sync client, aput_many/aget_many still work (in a worker thread)."""
    client = redis.Redis.from_url(redis_url)
    store = RedisStore(client)
    await store.aput_many(SCOPE, {"a": 1})
    assert await store.aget_many(SCOPE, ["a"]) == {"a": 1}
    store.close()
    assert client.ping()  # a client passed in stays open: it is the caller's


def test_threads_share_one_store_without_losing_or_mixing_records(redis_url: str) -> None:
    """Eight threads writing and reading one store: every record under its own key."""
    store = live_store(redis_url)
    assert run_threads(store, SCOPE, batches=25, size=20) == []
    assert misplaced(store, SCOPE, written_keys("t", 8, 25, 20)) == []


@pytest.mark.subprocess
def test_processes_share_one_server_without_losing_or_mixing_records(redis_url: str) -> None:
    """Four spawned processes on one Redis: a handle made in one resolves in all."""
    assert run_processes(partial(live_store, redis_url), SCOPE, batches=40, size=25) == []
    assert misplaced(live_store(redis_url), SCOPE, written_keys("p", 4, 40, 25)) == []


# -- outage through a real Toolkit ---------------------------------------------------------


def test_redis_outage_degrades_and_recovers(own_redis_server: RedisServer) -> None:
    """Server stopped mid-run: tools still answer (degraded); restarted: handles work again."""
    kit = logs_toolkit(live_store(own_redis_server.url))
    before = kit.call("search_logs", '{"query": "timeout"}')
    assert not before.is_error
    assert '"id":0' in before.text
    assert '"tenant":"t-9"' in kit.get_record(0)

    own_redis_server.stop()
    during = kit.call("search_logs", '{"query": "timeout"}')
    assert not during.is_error
    assert '"total":12' in during.text
    assert "unavailable" in during.text
    assert "unavailable" in kit.get_record(1)
    assert "unavailable" in kit.call("get_record", '{"handle": 0}').text

    own_redis_server.start()
    after = kit.call("search_logs", '{"query": "timeout", "page": 2}')
    assert not after.is_error
    assert "unavailable" not in after.text
    assert '"id":4' in kit.get_record(4)


async def test_redis_outage_degrades_async_tools_too(own_redis_server: RedisServer) -> None:
    """The asyncio path degrades and recovers like the sync one."""
    kit = logs_toolkit(live_store(own_redis_server.url))
    assert '"id":0' in (await kit.acall("search_logs", '{"query": "q"}')).text
    own_redis_server.stop()
    during = await kit.acall("search_logs", '{"query": "q"}')
    assert not during.is_error
    assert "unavailable" in during.text
    assert "unavailable" in await kit.aget_record(0)
    own_redis_server.start()
    await kit.acall("search_logs", '{"query": "q"}')
    assert '"tenant":"t-9"' in await asyncio.wait_for(kit.aget_record(2), 10)
    assert isinstance(kit.store, RedisStore)
    await kit.store.aclose()


def test_a_stalled_server_costs_a_call_one_store_attempt(own_redis_server: RedisServer) -> None:
    """A hung Redis (SIGSTOP): page 2 degrades after its failed read and writes nothing."""
    store = RedisStore(own_redis_server.url, socket_timeout=0.1)
    kit = logs_toolkit(store)
    writes: list[int] = []
    original = store.put_many

    def counted(scope: Scope, items: Any) -> list[str]:
        writes.append(len(items))
        return original(scope, items)

    store.put_many = counted  # type: ignore[method-assign]
    own_redis_server.pause()
    try:
        result = kit.call("search_logs", {"query": "q", "page": 2})
    finally:
        own_redis_server.resume()
    assert not result.is_error
    assert "unavailable" in result.text
    assert writes == []


# -- event loops -----------------------------------------------------------------------------


def test_one_store_serves_successive_event_loops(redis_url: str) -> None:
    """Each ``asyncio.run`` gets its own asyncio client: no "Event loop is closed"."""
    store = live_store(redis_url)
    for i in range(3):
        assert asyncio.run(store.aput_many(SCOPE, {f"k{i}": i})) == []
        assert asyncio.run(store.aget_many(SCOPE, ["k0", f"k{i}"])) == {"k0": 0, f"k{i}": i}
    store.close()


def test_a_finished_loop_leaves_no_open_connection(redis_url: str) -> None:
    """The client of a loop that ``asyncio.run`` finished is closed with it, not leaked."""
    store = live_store(redis_url)
    gc.collect()  # what earlier tests left (an unclosed loop of theirs) warns before, not here
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for i in range(3):
            asyncio.run(store.aput_many(SCOPE, {f"k{i}": i}))
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
    store.close()


def test_async_tools_through_kit_call_keep_their_handles(redis_url: str) -> None:
    """``kit.call`` runs an async tool in a new loop each time; the store works in every one."""
    kit = Toolkit("loops", store=live_store(redis_url))

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=2)
    async def search(query: str) -> list[dict[str, Any]]:
        """Search."""
        return [{"id": i, "secret": "kept"} for i in range(6)]

    for page in (1, 2, 3):
        result = kit.call("search", {"query": "q", "page": page})
        assert "unavailable" not in result.text, result.text
        assert "fetched again" not in result.text, result.text
    assert '"secret":"kept"' in kit.get_record(5)


@pytest.mark.parametrize("error", [RuntimeError("boom"), ValueError("bad"), KeyError("k")])
async def test_any_client_error_surfaces_as_store_unavailable(
    redis_url: str, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    """Whatever the client raises, sync or async, the store raises StoreUnavailableError."""
    store = live_store(redis_url)

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise error

    async def afail(*args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(redis.Redis, "mget", fail)
    monkeypatch.setattr(aioredis.Redis, "mget", afail)
    monkeypatch.setattr(redis.client.Pipeline, "execute", fail)
    monkeypatch.setattr(aioredis.client.Pipeline, "execute", afail)
    with pytest.raises(StoreUnavailableError, match=type(error).__name__):
        store.get_many(SCOPE, ["a"])
    with pytest.raises(StoreUnavailableError, match=type(error).__name__):
        store.put_many(SCOPE, {"a": 1})
    with pytest.raises(StoreUnavailableError, match=type(error).__name__):
        await store.aget_many(SCOPE, ["a"])
    with pytest.raises(StoreUnavailableError, match=type(error).__name__):
        await store.aput_many(SCOPE, {"a": 1})
    await store.aclose()


# -- the fixture's behaviour without a redis-server binary --------------------------------


def test_missing_binary_skips_with_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without redis-server (and without the CI variable) Redis tests skip, saying how to run."""
    monkeypatch.setattr(redis_fixtures, "find_redis_server", lambda: None)
    monkeypatch.delenv(redis_fixtures.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install redis-server"):
        redis_fixtures.redis_binary()


def test_missing_binary_fails_when_ci_requires_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    """With SLIMTOOLS_REQUIRE_REDIS=1 a missing redis-server is a failure, not a skip."""
    monkeypatch.setattr(redis_fixtures, "find_redis_server", lambda: None)
    monkeypatch.setenv(redis_fixtures.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="SLIMTOOLS_REQUIRE_REDIS=1"):
        redis_fixtures.redis_binary()
