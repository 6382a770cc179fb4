"""What a handle store is: the :class:`HandleStore` protocol, its optional twins, and scopes.

Every store in :mod:`slimtools.stores` implements it, and ``slimtools.testing`` ships the
conformance suite a store of your own runs. Re-exported from :mod:`slimtools.typing`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

__all__ = ["DEFAULT_SESSION", "AsyncHandleStore", "ForgettingStore", "HandleStore", "Scope"]

DEFAULT_SESSION = "default"

DEFAULT_TTL = 3600.0
"""Seconds a record lives by default, in every store that expires records."""
DEFAULT_MAX_ITEMS = 100_000
"""Records a bounded store keeps by default (memory, SQLite); the oldest go first."""
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
"""Bytes of records a bounded store keeps by default (memory, SQLite)."""
DEFAULT_MAX_RECORD_BYTES = 16 * 1024 * 1024
"""The largest record a persistent store accepts by default (SQLite, Redis, LangGraph)."""
"""The session every toolkit uses when none is bound, so that processes sharing a durable
store resolve each other's handles."""


class Scope(NamedTuple):
    """The namespace of a handle: the toolkit that issued it and the session it belongs to.

    Stores receive it with every batch, so every store isolates sessions the same way and a
    lookup from another session looks exactly like an unknown key.
    """

    toolkit: str
    session: str = DEFAULT_SESSION


@runtime_checkable
class HandleStore(Protocol):
    """Keeps JSON-able values by key within a scope, bounded and expiring.

    Deliberately small (two batch calls and ``close``), so that a durable store needs one
    transaction or round trip per tool call, not one per record. Keys arrive already
    namespaced by tool, and a store keeps them as opaque strings, byte for byte (the layout is
    ``r:<tool>:<handle>``, ``t:<tool>:<handle>`` or ``s:<tool>:<digest>``, with ``%`` and
    ``:`` in a tool name percent-escaped, so distinct tool and handle pairs never share a key;
    plain names are written as earlier versions wrote them, so persisted records still
    resolve). Values are records as tools return them (dicts, models, objects, lists of them,
    text); a store that serialises may hand back their JSON form instead of the original
    object, and slimtools relies only on that form.

    A put overwrites the key's value. That a handle once shown keeps fetching what it was
    shown with is the core's job, not the store's: before writing a page's records the core
    reads the id keys the page shows, and an id that holds other content gets a generated
    handle instead of being overwritten (``slimtools._core.handles``). So ``get_many`` must
    return what the last ``put_many`` of each key wrote, in the JSON form.
    """

    def put_many(self, scope: Scope, items: Mapping[str, Any]) -> Collection[str]:
        """Store every item in one batch; return the keys refused (e.g. over the size cap).

        Raises:
            StoreUnavailableError: the store cannot be reached; nothing was stored.
        """
        ...

    def get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        """Return the live values among ``keys`` in ``scope``; absent keys are left out.

        Raises:
            StoreUnavailableError: the store cannot be reached.
        """
        ...

    def close(self) -> None:
        """Release connections or files; the store is not used afterwards."""
        ...


@runtime_checkable
class AsyncHandleStore(Protocol):
    """Optional asynchronous twin of :class:`HandleStore`, used by async tools when present."""

    async def aput_many(self, scope: Scope, items: Mapping[str, Any]) -> Collection[str]:
        """Asynchronous :meth:`HandleStore.put_many`."""
        ...

    async def aget_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        """Asynchronous :meth:`HandleStore.get_many`."""
        ...


@runtime_checkable
class ForgettingStore(Protocol):
    """Optional: a store that can drop one toolkit's entries (``Toolkit.reset``).

    ``MemoryStore``, ``SQLiteStore`` and ``RedisStore`` implement it.
    """

    def forget(self, toolkit: str) -> None:
        """Drop every entry of ``toolkit``, in every session; other toolkits' stay.

        Raises:
            StoreUnavailableError: the store cannot be reached; nothing may have been dropped.
        """
        ...
