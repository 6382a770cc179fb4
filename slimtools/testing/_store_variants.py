"""The conformance suite's variants: bounded, forgetting and asynchronous stores.

Each adds its checks to :class:`~slimtools.testing.StoreConformance`; see
``slimtools.testing`` for how a store's tests run them.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

from slimtools.stores.base import AsyncHandleStore, ForgettingStore, Scope
from slimtools.testing._stores import (
    RECORD,
    SCOPE,
    StoreConformance,
    expect,
    expect_unavailable,
    run_bounded,
)


class BoundedStoreConformance(StoreConformance):
    """The checks of a store that bounds its items and bytes itself (``len``, ``nbytes``).

    ``make_store(max_items=..., max_bytes=...)`` must build such a store; it must offer
    ``len(store)`` and ``store.nbytes`` (the approximate bytes held).
    """

    def test_item_bound_evicts_the_oldest(self) -> None:
        """Past max_items the earliest written records go; the newest stay."""
        store = self.store(max_items=10)
        for i in range(25):
            store.put_many(SCOPE, {f"k{i}": i})
        live = store.get_many(SCOPE, [f"k{i}" for i in range(25)])
        expect(sorted(live.values()), list(range(15, 25)), "records left")

    def test_byte_bound_is_never_exceeded(self) -> None:
        """Stored bytes stay under max_bytes while the newest record always survives."""
        store: Any = self.store(max_bytes=10_000)
        sizes = [10, 3_000, 700, 4_500, 50]
        for i in range(200):
            store.put_many(SCOPE, {f"k{i}": "x" * sizes[i % len(sizes)]})
            if store.nbytes > 10_000:
                raise AssertionError(f"{store.nbytes} bytes held after write {i}, over 10,000")
            expect(f"k{i}" in store.get_many(SCOPE, [f"k{i}"]), True, f"newest record k{i}")

    def test_bounds_hold_under_random_runs(self) -> None:
        """After every put_many of random batches, item count and bytes are within bounds."""
        rng = random.Random(7)
        for _ in range(10):
            store: Any = self.store(max_items=15, max_bytes=12_000)
            sizes = [rng.randint(0, 3_000) for _ in range(rng.randint(1, 60))]
            batch = rng.randint(1, 7)
            for start in range(0, len(sizes), batch):
                chunk = {
                    f"{start}:{j}": "y" * n for j, n in enumerate(sizes[start : start + batch])
                }
                store.put_many(SCOPE, chunk)
                if len(store) > 15 or store.nbytes > 12_000:
                    raise AssertionError(f"{len(store)} items, {store.nbytes} bytes: over bounds")


class ForgettingStoreConformance(StoreConformance):
    """The checks of a store that also implements ``ForgettingStore`` (``Toolkit.reset``)."""

    def test_is_a_forgetting_store(self) -> None:
        """The store has forget(toolkit), so Toolkit.reset works on it."""
        expect(isinstance(self.store(), ForgettingStore), True, "isinstance ForgettingStore")

    def test_forget_drops_the_toolkit_in_every_session_and_keeps_others(self) -> None:
        """forget(toolkit) empties that toolkit's sessions; other toolkits keep theirs."""
        store: Any = self.store()
        store.put_many(Scope("kit", "alice"), {"a": RECORD})
        store.put_many(Scope("kit", "bob"), {"b": 2})
        store.put_many(Scope("other", "alice"), {"a": 3})
        store.put_many(Scope("kit:x", "alice"), {"a": 4})  # a name the toolkit's starts
        store.forget("kit")
        expect(store.get_many(Scope("kit", "alice"), ["a"]), {}, "forgotten, alice")
        expect(store.get_many(Scope("kit", "bob"), ["b"]), {}, "forgotten, bob")
        expect(store.get_many(Scope("other", "alice"), ["a"]), {"a": 3}, "another toolkit")
        expect(store.get_many(Scope("kit:x", "alice"), ["a"]), {"a": 4}, "a longer name")

    def test_forget_treats_pattern_characters_in_the_name_literally(self) -> None:
        """A toolkit named with glob or SQL wildcards forgets only itself."""
        store: Any = self.store()
        store.put_many(Scope("k*[a]?%_", "s"), {"a": 1})
        store.put_many(Scope("kit", "s"), {"a": 2})
        store.forget("k*[a]?%_")
        expect(store.get_many(Scope("k*[a]?%_", "s"), ["a"]), {}, "forgotten")
        expect(store.get_many(Scope("kit", "s"), ["a"]), {"a": 2}, "kept")

    def test_forget_then_write_again(self) -> None:
        """After forgetting, the toolkit's scopes accept new records."""
        store: Any = self.store()
        store.put_many(SCOPE, {"a": 1})
        store.forget(SCOPE.toolkit)
        store.put_many(SCOPE, {"a": 2})
        expect(store.get_many(SCOPE, ["a"]), {"a": 2}, "written after forget")

    def test_forget_on_a_broken_store_is_store_unavailable(self) -> None:
        """A failure while forgetting surfaces as StoreUnavailableError."""
        store: Any = self.make_store()  # not closed by teardown: closing a broken store may fail
        store.put_many(SCOPE, {"a": 1})
        self.break_store(store)
        try:
            expect_unavailable(lambda: store.forget(SCOPE.toolkit), "forget")
        finally:
            with contextlib.suppress(Exception):
                store.close()


class AsyncStoreConformance(StoreConformance):
    """The checks of a store that also implements ``AsyncHandleStore``."""

    def test_is_an_async_handle_store(self) -> None:
        """The store has aput_many and aget_many, so async tools use them."""
        expect(isinstance(self.store(), AsyncHandleStore), True, "isinstance AsyncHandleStore")

    def test_async_round_trip_matches_sync(self) -> None:
        """aput_many/aget_many store and read the same records as the sync calls."""
        store: Any = self.store()

        async def check() -> None:
            expect(list(await store.aput_many(SCOPE, {"a": RECORD, "b": "z"})), [], "refused")
            got = await store.aget_many(SCOPE, ["a", "b", "none"])
            expect(got, {"a": RECORD, "b": "z"}, "async read")
            expect(await store.aget_many(Scope("kit", "bob"), ["a"]), {}, "another session")
            await _aclose(store)

        run_bounded(check())
        expect(store.get_many(SCOPE, ["a"]), {"a": RECORD}, "sync read of an async write")

    def test_async_refuses_oversize_records(self) -> None:
        """The asynchronous put reports refused records like the sync one."""
        store: Any = self.store(max_record_bytes=100)

        async def check() -> None:
            expect(
                list(await store.aput_many(SCOPE, {"big": "x" * 500, "ok": 1})), ["big"], "refused"
            )
            expect(await store.aget_many(SCOPE, ["big", "ok"]), {"ok": 1}, "kept")
            await _aclose(store)

        run_bounded(check())


async def _aclose(store: Any) -> None:
    """Close a store's loop-bound async clients (``aclose``), when it has them."""
    aclose = getattr(store, "aclose", None)
    if aclose is not None:
        await aclose()
