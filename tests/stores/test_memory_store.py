"""MemoryStore: the default handle store, thread-safe, bounded (items, bytes, LRU) with a TTL."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slimtools._json import dumps
from slimtools.stores import MemoryStore
from slimtools.stores.memory import approx_size
from slimtools.typing import AsyncHandleStore, HandleStore, Scope

A = Scope("kit", "alice")
B = Scope("kit", "bob")


class Clock:
    """A hand-moved monotonic clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_memory_store_is_a_handle_store():
    """It satisfies the HandleStore protocol (and is not pretending to be async)."""
    store = MemoryStore()
    assert isinstance(store, HandleStore)
    assert not isinstance(store, AsyncHandleStore)


def test_values_come_back_by_key_and_absent_keys_are_left_out():
    """``get_many`` returns what was put, and nothing for unknown keys."""
    store = MemoryStore()
    assert store.put_many(A, {"r:t:1": {"id": 1}, "r:t:2": "two"}) == []
    assert store.get_many(A, ["r:t:1", "r:t:2", "r:t:3"]) == {"r:t:1": {"id": 1}, "r:t:2": "two"}


def test_values_are_kept_by_reference():
    """The store keeps the object itself: no copy, no serialisation."""
    record: dict[str, Any] = {"id": 1}
    store = MemoryStore()
    store.put_many(A, {"k": record})
    assert store.get_many(A, ["k"])["k"] is record


def test_scopes_are_isolated():
    """The same key in another session, or another toolkit, is absent."""
    store = MemoryStore()
    store.put_many(A, {"k": 1})
    assert store.get_many(B, ["k"]) == {}
    assert store.get_many(Scope("other", "alice"), ["k"]) == {}


def test_the_least_recently_used_item_goes_first():
    """Beyond ``max_items`` the entry not read for longest is evicted."""
    store = MemoryStore(max_items=2)
    store.put_many(A, {"a": 1, "b": 2})
    store.get_many(A, ["a"])
    store.put_many(A, {"c": 3})
    assert store.get_many(A, ["a", "b", "c"]) == {"a": 1, "c": 3}
    assert len(store) == 2


def test_bytes_are_bounded_too():
    """Beyond ``max_bytes`` old entries are evicted until the total fits."""
    store = MemoryStore(max_bytes=100)
    store.put_many(A, {"a": "x" * 40, "b": "y" * 40})
    store.put_many(A, {"c": "z" * 40})
    assert store.get_many(A, ["a", "b", "c"]) == {"b": "y" * 40, "c": "z" * 40}
    assert store.nbytes <= 100


def test_an_entry_larger_than_max_bytes_is_refused():
    """A value over the byte cap is not stored and its key is returned as refused."""
    store = MemoryStore(max_bytes=50)
    refused = store.put_many(A, {"small": "ok", "huge": "x" * 100})
    assert refused == ["huge"]
    assert store.get_many(A, ["small", "huge"]) == {"small": "ok"}


def test_overwriting_a_key_replaces_its_size():
    """Putting a key again replaces the value and its byte count."""
    store = MemoryStore()
    store.put_many(A, {"k": "x" * 1000})
    store.put_many(A, {"k": "y"})
    assert store.nbytes == approx_size("y")
    assert len(store) == 1


def test_entries_expire_after_the_ttl():
    """An entry is readable until ``ttl`` seconds after it was written, then gone."""
    clock = Clock()
    store = MemoryStore(ttl=10, clock=clock)
    store.put_many(A, {"k": 1})
    clock.now = 9.9
    assert store.get_many(A, ["k"]) == {"k": 1}
    clock.now = 10.0
    assert store.get_many(A, ["k"]) == {}
    assert len(store) == 0


def test_reading_does_not_extend_the_ttl():
    """TTL counts from the write; reads refresh recency only."""
    clock = Clock()
    store = MemoryStore(ttl=10, clock=clock)
    store.put_many(A, {"k": 1})
    clock.now = 8
    store.get_many(A, ["k"])
    clock.now = 11
    assert store.get_many(A, ["k"]) == {}


def test_ttl_none_never_expires():
    """With ``ttl=None`` entries live until evicted."""
    clock = Clock()
    store = MemoryStore(ttl=None, clock=clock)
    store.put_many(A, {"k": 1})
    clock.now = 1e9
    assert store.get_many(A, ["k"]) == {"k": 1}


def test_a_large_snapshot_is_one_entry_whose_size_counts():
    """A 10,000-row page-1 snapshot is a single entry sized near its JSON length."""
    rows = [{"id": i, "message": f"event number {i}", "level": "INFO"} for i in range(10_000)]
    store = MemoryStore()
    store.put_many(A, {"s:search:abc": rows})
    assert len(store) == 1
    exact = len(dumps(rows))
    assert 0.8 * exact <= store.nbytes <= 1.2 * exact


def test_a_snapshot_too_large_for_the_store_is_refused():
    """A snapshot bigger than ``max_bytes`` is refused rather than evicting everything."""
    store = MemoryStore(max_bytes=10_000)
    store.put_many(A, {"r:t:1": {"id": 1}})
    refused = store.put_many(A, {"s:t:q": [{"id": i, "pad": "x" * 50} for i in range(1000)]})
    assert refused == ["s:t:q"]
    assert store.get_many(A, ["r:t:1"]) == {"r:t:1": {"id": 1}}


def test_close_drops_everything():
    """After ``close`` the store is empty."""
    store = MemoryStore()
    store.put_many(A, {"a": 1, "b": 2})
    store.close()
    assert (len(store), store.nbytes, store.get_many(A, ["a"])) == (0, 0, {})


@pytest.mark.parametrize("options", [{"max_items": 0}, {"max_bytes": 0}, {"ttl": 0}, {"ttl": -1.0}])
def test_bad_bounds_are_refused(options):
    """Bounds must be positive; ``ttl`` positive seconds or None."""
    with pytest.raises(ValueError, match="must be positive"):
        MemoryStore(**options)


def test_concurrent_writers_and_readers_keep_the_store_consistent():
    """Threads writing and reading at once lose no bound and corrupt no byte count."""
    store = MemoryStore(max_items=500, max_bytes=200_000)
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def worker(n: int) -> None:
        try:
            start.wait()
            for i in range(400):
                key = f"r:t:{n}-{i}"
                store.put_many(A, {key: {"n": n, "i": i, "pad": "x" * (i % 50)}})
                found = store.get_many(A, [key, f"r:t:{(n + 1) % 8}-{i}"])
                assert found.get(key, {"n": n, "i": i})["i"] == i
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store) <= 500
    entries = store._entries.values()
    assert store.nbytes == sum(entry.size for entry in entries)
    assert store.nbytes <= 200_000


def test_concurrent_writers_of_one_key_leave_one_entry():
    """Many threads overwriting the same key leave exactly one entry and a matching size."""
    store = MemoryStore()

    def worker(n: int) -> None:
        for i in range(300):
            store.put_many(A, {"k": "x" * ((n * i) % 97)})

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store) == 1
    assert store.nbytes == approx_size(store.get_many(A, ["k"])["k"])


@given(rows=st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=20)), max_size=16))
def test_approx_size_of_short_lists_is_exact(rows):
    """Up to 16 items a list is sized exactly: its compact JSON length."""
    assert approx_size(rows) == len(dumps(rows))


def test_approx_size_of_long_lists_samples_sixteen_items():
    """A long list of similar rows is sized from samples, close to the exact size."""
    rows = [{"id": i, "message": "m" * (i % 37)} for i in range(5000)]
    exact = len(dumps(rows))
    assert 0.9 * exact <= approx_size(rows) <= 1.1 * exact


def test_approx_size_of_text_is_its_length():
    """A string costs its length plus quotes."""
    assert approx_size("abc") == 5
