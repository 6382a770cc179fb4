"""Every protocol and alias users implement, in one place.

- :class:`HandleStore` (and the optional :class:`AsyncHandleStore` and
  :class:`ForgettingStore`) with :class:`Scope`: a store for full records behind handles
  (``slimtools.testing`` ships its conformance suite).
- :class:`Audit`: a sink for the originals clearing replaces.
- :data:`TokenCounter`: text in, a token count out.
- :data:`OnError`: how a tool's exception reads to the model.
- :data:`PlaceholderTemplate`: how a cleared result reads.
- :data:`Summarizer`: what compaction folds messages into.
- :data:`ClearFn`: a clearing step run before each model call (the ledger replays any).
- :data:`Listener`: hears each event (``slimtools.observe``, ``on_event=``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    from slimtools.clearing.audit import AuditRecord
    from slimtools.clearing.placeholder import PlaceholderInfo
    from slimtools.instrumentation import Event

__all__ = [
    "DEFAULT_SESSION",
    "AsyncHandleStore",
    "Audit",
    "ClearFn",
    "ForgettingStore",
    "HandleStore",
    "Listener",
    "OnError",
    "PlaceholderTemplate",
    "Scope",
    "Summarizer",
    "TokenCounter",
]

DEFAULT_SESSION = "default"
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
    namespaced by tool. Values are records as tools return them (dicts, models, objects,
    lists of them, text); a store that serialises may hand back their JSON form instead of
    the original object, and slimtools relies only on that form.
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


@runtime_checkable
class Audit(Protocol):
    """Where originals go before they are replaced (two methods; a list can do it)."""

    def write(self, records: Sequence[AuditRecord]) -> None:
        """Store a batch of records durably before the clearer replaces them."""

    def read(self) -> Iterable[AuditRecord]:
        """Every record written, oldest first."""


OnError: TypeAlias = Callable[[Exception], str]
"""Words a tool's exception for the model (``Toolkit(on_error=...)``)."""

TokenCounter: TypeAlias = Callable[[str], int]
"""Any callable from text to a token count, e.g. ``lambda s: len(enc.encode(s))``."""

PlaceholderTemplate: TypeAlias = "str | Callable[[PlaceholderInfo], str]"
"""A ``str.format`` template over ``slimtools.clearing.placeholder.TEMPLATE_FIELDS``, or a
callable building the placeholder's body from a ``PlaceholderInfo``."""

Summarizer: TypeAlias = Callable[[list[Any]], "str | Sequence[Any]"]
"""Messages to fold away -> the summary text (wrapped in a user message in the history's
format) or the messages to put in their place."""

ClearFn: TypeAlias = Callable[[list[Any]], Sequence[Any]]
"""What runs before each model call: the history so far in, what the model sees out.

A stateful ``Clearer`` (fed the growing history), a lambda around ``clear_stale_results``, or
another library's clearing (``slimtools.ledger.peers``) all fit."""

Listener: TypeAlias = Callable[["Event"], object]
"""Hears each ``slimtools.instrumentation`` event (a ``SlimmedCall``, ``RecordLookup`` or
``ClearingPass``); what it returns is ignored, what it raises is logged."""
