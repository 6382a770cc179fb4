"""The handle-store conformance suite (``StoreConformance`` and its variants).

Shipped the way cachetools ships its test mixins: see ``slimtools.testing``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

from slimtools._json import to_jsonable
from slimtools.errors import StoreUnavailableError
from slimtools.stores.base import AsyncHandleStore, HandleStore, Scope
from slimtools.toolkit import Toolkit

SCOPE = Scope("kit", "alice")
RECORD = {"id": 3, "level": "ERROR", "message": "upstream timeout", "tags": ["a", "b"]}


def expect(actual: Any, expected: Any, what: str) -> None:
    """Fail with ``what`` and both values unless they are equal (``assert`` minus ``-O``)."""
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def expect_unavailable(action: Callable[[], Any], what: str) -> None:
    """Fail unless ``action()`` raises ``StoreUnavailableError`` carrying the inner error."""
    try:
        action()
    except StoreUnavailableError as exc:
        if "inner failure" not in str(exc):
            raise AssertionError(f"{what}: the error does not say why: {exc}") from exc
        return
    except Exception as exc:
        raise AssertionError(
            f"{what}: raised {type(exc).__name__}, not StoreUnavailableError"
        ) from exc
    raise AssertionError(f"{what}: nothing was raised")


class InnerFailureError(RuntimeError):
    """What a broken store's backend raises (``break_store``): an error no store expects."""

    def __init__(self) -> None:
        super().__init__("inner failure")


def fail(*args: Any, **kwargs: Any) -> Any:
    """Raise ``InnerFailureError``: put it in place of a store's client or connection."""
    raise InnerFailureError


async def afail(*args: Any, **kwargs: Any) -> Any:
    """The asynchronous :func:`fail`."""
    raise InnerFailureError


@dataclasses.dataclass
class _Point:
    x: int
    y: Decimal


class _Opaque:
    def __init__(self) -> None:
        self.name = "thing"
        self._secret = "hidden"


class StoreConformance:
    """The checks every ``HandleStore`` must pass; subclass it and implement two hooks.

    Hooks:
        make_store: a new, empty store (each check makes its own; they are closed after).
        break_store: make every later access of a store fail inside its backend.
        advance: let time pass for TTL checks (default: ``time.sleep``); a store with an
            injectable clock moves the clock instead. ``short_ttl`` is the TTL those
            checks use (keep it short when ``advance`` sleeps).
    """

    short_ttl: float = 1.0

    def make_store(
        self,
        *,
        ttl: float | None = None,
        max_record_bytes: int | None = None,
        max_items: int | None = None,
        max_bytes: int | None = None,
    ) -> HandleStore:
        """A new empty store. ``None`` options mean: large enough never to matter.

        Args:
            ttl: seconds a record lives.
            max_record_bytes: the largest record (serialised) the store accepts.
            max_items: most records kept (``BoundedStoreConformance`` only).
            max_bytes: most bytes kept (``BoundedStoreConformance`` only).
        """
        raise NotImplementedError(f"{type(self).__name__} must implement make_store()")

    def break_store(self, store: HandleStore) -> None:
        """Make every later access of ``store`` fail inside it (e.g. set its client to one
        whose methods are :func:`fail` and :func:`afail`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement break_store()")

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass for the stores this suite made."""
        time.sleep(seconds)

    # bookkeeping ------------------------------------------------------------------------

    def store(self, **options: Any) -> HandleStore:
        """``make_store(**options)``, closed when the check ends."""
        made = self.__dict__.setdefault("_made_stores", [])
        store = self.make_store(**options)
        made.append(store)
        return store

    def teardown_method(self, method: Any = None) -> None:
        """Close every store this check made (pytest calls it after each check)."""
        for store in self.__dict__.pop("_made_stores", []):
            store.close()

    def tearDown(self) -> None:
        """Close every store this check made (unittest calls it after each check)."""
        self.teardown_method()

    # the checks -------------------------------------------------------------------------

    def test_put_then_get_round_trips(self) -> None:
        """A stored record comes back equal to its JSON form."""
        store = self.store()
        expect(
            list(store.put_many(SCOPE, {"r:search:3": RECORD, "t:read:x": "l1\nl2"})), [], "refused"
        )
        got = store.get_many(SCOPE, ["r:search:3", "t:read:x"])
        expect(got, {"r:search:3": RECORD, "t:read:x": "l1\nl2"}, "read back")

    def test_keys_are_kept_byte_for_byte(self) -> None:
        """Keys differing only in escapes or ``:`` are distinct: a store never decodes them.

        The core writes tool ``a:b`` with handle ``c`` as ``r:a%3Ab:c``, beside tool ``a``
        with handle ``b:c`` (``r:a:b:c``); a store that unescaped keys would merge them.
        """
        store = self.store()
        items = {"r:a%3Ab:c": 1, "r:a:b:c": 2, "r:a%253Ab:c": 3, "r:a%3ab:c": 4}
        store.put_many(SCOPE, items)
        expect(store.get_many(SCOPE, list(items)), items, "escaped keys")

    def test_missing_keys_are_absent(self) -> None:
        """Keys never written are left out of the answer, not mapped to None."""
        store = self.store()
        store.put_many(SCOPE, {"a": 1})
        expect(store.get_many(SCOPE, ["a", "b", "", "\ud800"]), {"a": 1}, "with missing keys")
        expect(store.get_many(SCOPE, []), {}, "no keys")

    def test_empty_batch_refuses_nothing(self) -> None:
        """put_many with no items is a no-op."""
        expect(list(self.store().put_many(SCOPE, {})), [], "refused")

    def test_overwrite_keeps_the_latest_value(self) -> None:
        """Writing a key again replaces its value."""
        store = self.store()
        store.put_many(SCOPE, {"a": {"v": 1}})
        store.put_many(SCOPE, {"a": {"v": 2}})
        expect(store.get_many(SCOPE, ["a"]), {"a": {"v": 2}}, "after overwrite")

    def test_other_session_lookup_looks_exactly_like_unknown(self) -> None:
        """Another session (or toolkit) gets the same empty answer as a key never written."""
        store = self.store()
        store.put_many(SCOPE, {"a": RECORD})
        for other in (Scope("kit", "bob"), Scope("other-kit", "alice"), Scope("kit")):
            expect(store.get_many(other, ["a"]), {}, f"read from {other}")

    def test_sessions_do_not_overwrite_each_other(self) -> None:
        """The same key written in two sessions keeps two records."""
        store = self.store()
        store.put_many(Scope("kit", "alice"), {"a": "alice's"})
        store.put_many(Scope("kit", "bob"), {"a": "bob's"})
        expect(store.get_many(Scope("kit", "alice"), ["a"]), {"a": "alice's"}, "alice")
        expect(store.get_many(Scope("kit", "bob"), ["a"]), {"a": "bob's"}, "bob")

    def test_separator_characters_cannot_merge_scopes(self) -> None:
        """Scopes whose names differ only in where a ':' or '.' falls stay apart."""
        store = self.store()
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
        got = [store.get_many(scope, ["k"]) for scope in scopes]
        expect(got, [{"k": i} for i in range(len(scopes))], "one record per scope")

    def test_records_expire_after_ttl(self) -> None:
        """A record is readable before its TTL and absent after it."""
        store = self.store(ttl=self.short_ttl)
        started = time.monotonic()
        store.put_many(SCOPE, {"a": RECORD})
        got = store.get_many(SCOPE, ["a"])
        # On real time (advance sleeps), a stalled machine may let the TTL pass between the
        # write and the read; the record must be there only when less time went by.
        if time.monotonic() - started < self.short_ttl:
            expect(got, {"a": RECORD}, "before the TTL")
        self.advance(self.short_ttl * 1.2)
        expect(store.get_many(SCOPE, ["a"]), {}, "after the TTL")

    def test_oversize_record_is_refused_and_reported(self) -> None:
        """A record over the cap is returned as refused; the rest of the batch is stored."""
        store = self.store(max_record_bytes=1_000)
        expect(
            list(store.put_many(SCOPE, {"big": "x" * 5_000, "small": RECORD})), ["big"], "refused"
        )
        expect(store.get_many(SCOPE, ["big", "small"]), {"small": RECORD}, "kept")

    def test_snapshot_of_a_list_round_trips(self) -> None:
        """A page-1 snapshot (one list of many records) is one value and comes back whole."""
        store = self.store()
        rows = [{"id": i, "msg": f"row {i}", "when": f"03:{i % 60:02d}"} for i in range(3_000)]
        store.put_many(SCOPE, {"s:search:abc": rows})
        expect(store.get_many(SCOPE, ["s:search:abc"]), {"s:search:abc": rows}, "snapshot")

    def test_unicode_keys_values_and_scopes_round_trip(self) -> None:
        """CJK, emoji and combining marks survive in keys, values and scope names."""
        store = self.store()
        scope = Scope("工具箱", "会话-👩‍💻")
        value = {"summary": "上游超时 👩🏽‍🚀 é", "emoji": "🇯🇵"}
        store.put_many(scope, {"r:搜索:键": value})
        expect(store.get_many(scope, ["r:搜索:键"]), {"r:搜索:键": value}, "unicode")

    def test_values_json_cannot_encode_come_back_in_their_json_form(self) -> None:
        """Decimals, sets, bytes, dataclasses and objects read back as their JSON form."""
        store = self.store()
        value = {
            "price": Decimal("12.50"),
            "tags": {"b", "a"},
            "raw": b"\xff\x00",
            "text": b"ok",
            "point": _Point(1, Decimal("2.5")),
            "obj": _Opaque(),
            "huge": 2**70 + 1,  # not a float: 2**70 alone would compare equal to one
        }
        store.put_many(SCOPE, {"v": value})
        expect(to_jsonable(store.get_many(SCOPE, ["v"])["v"]), to_jsonable(value), "fallbacks")

    def test_many_records_in_one_batch_each_under_its_own_key(self) -> None:
        """A 100-record batch (one tool call) stores every record under its own key."""
        store = self.store()
        batch = {f"r:search:{i}": {"id": i, "body": f"record {i}"} for i in range(100)}
        store.put_many(SCOPE, batch)
        expect(store.get_many(SCOPE, list(batch)), batch, "batch")

    def test_random_batches_read_back_in_their_scope_only(self) -> None:
        """Batches of random JSON values read back equal in their scope and nowhere else."""
        rng = random.Random(13)
        store = self.store()
        for _ in range(25):
            scope = Scope(uuid.uuid4().hex, _random_text(rng, 1, 10))
            items = {
                _random_text(rng, 0, 12): _random_json(rng, 3) for _ in range(rng.randint(0, 8))
            }
            store.put_many(scope, items)
            expect(to_jsonable(store.get_many(scope, list(items))), to_jsonable(items), "batch")
            other = Scope(scope.toolkit, scope.session + "x")
            expect(store.get_many(other, list(items)), {}, "another session")

    def test_any_inner_error_surfaces_as_store_unavailable(self) -> None:
        """Whatever fails inside the store, sync or async, callers see StoreUnavailableError."""
        store = self.make_store()  # not closed by teardown: closing a broken store may fail
        self.break_store(store)
        try:
            expect_unavailable(lambda: store.put_many(SCOPE, {"a": RECORD}), "put_many")
            expect_unavailable(lambda: store.get_many(SCOPE, ["a"]), "get_many")
            if isinstance(store, AsyncHandleStore):
                write = lambda: run_bounded(store.aput_many(SCOPE, {"a": RECORD}))  # noqa: E731
                expect_unavailable(write, "aput_many")
                expect_unavailable(lambda: run_bounded(store.aget_many(SCOPE, ["a"])), "aget_many")
        finally:
            with contextlib.suppress(Exception):
                store.close()

    def test_a_toolkit_on_the_store_pages_and_expands_handles(self) -> None:
        """Behind a Toolkit: page 2 reads the page-1 snapshot, get_record expands handles."""
        from slimtools.decorators import paginate, summarize_with_handle

        kit = Toolkit(f"conformance-{uuid.uuid4().hex[:8]}", store=self.store())
        calls: list[str] = []

        @kit.tool
        @summarize_with_handle(key="id")
        @paginate(limit=2)
        def rows(query: str) -> list[dict[str, Any]]:
            """Rows."""
            calls.append(query)
            return [{"id": i, "text": f"{query} {i}", "secret": "s"} for i in range(5)]

        first, second = rows("q"), rows("q", page=2)
        expect([b["id"] for b in [*first.briefs, *second.briefs]], [0, 1, 2, 3], "pages")
        expect(calls, ["q"], "backend calls (page 2 reads the snapshot)")
        expect(kit.get_record(3), '{"id":3,"text":"q 3","secret":"s"}', "get_record(3)")


def run_bounded(awaitable: Awaitable[Any]) -> Any:
    """Run ``awaitable`` in a new event loop, at most ten seconds."""

    async def bounded() -> Any:
        return await asyncio.wait_for(awaitable, 10)

    return asyncio.run(bounded())


_ALPHABET = "ab:.é日😀 \n\"'\\"


def _random_text(rng: random.Random, low: int, high: int) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(low, high)))


def _random_json(rng: random.Random, depth: int) -> Any:
    """A random JSON value: scalars, and lists and objects ``depth`` levels deep."""
    kind = rng.randrange(7 if depth > 0 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randint(-(2**53), 2**53)
    if kind in (3, 4):
        return _random_text(rng, 0, 20)
    if kind == 5:
        return [_random_json(rng, depth - 1) for _ in range(rng.randint(0, 4))]
    return {_random_text(rng, 0, 6): _random_json(rng, depth - 1) for _ in range(rng.randint(0, 4))}
