"""The in-process handle store (the default), and the sizing every store's bounds use.

The protocol stores implement is :class:`slimtools.typing.HandleStore`; its docstring states
the key layout and why a put may simply overwrite (the core keeps a handle's record stable).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from slimtools._json import dumps
from slimtools.errors import StoreUnavailableError
from slimtools.stores.base import DEFAULT_MAX_BYTES, DEFAULT_MAX_ITEMS, DEFAULT_TTL, Scope

_SAMPLE = 16


def approx_size(value: Any) -> int:
    """Approximate serialised size of ``value`` in bytes, cheaply for long lists.

    A list longer than 16 items is sized from 16 evenly spaced samples, so that a 10,000-row
    page-1 snapshot costs sixteen encodings, not ten thousand.
    """
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, (list, tuple)) and len(value) > _SAMPLE:
        n = len(value)
        sample = [value[i * n // _SAMPLE] for i in range(_SAMPLE)]
        return int(len(dumps(sample)) * n / _SAMPLE)
    return len(dumps(value))


_SIZED_ALONE = (str, list, tuple)


def _sizes(values: Sequence[Any]) -> list[int]:
    """Approximate sizes of ``values``, in order.

    Texts and lists are sized one by one (``approx_size``); the other values, typically
    the records of one page, share the average of one encoding of them all: one orjson
    call per batch instead of one per record.
    """
    # ``type(v) is dict`` first: a plain dict is the usual record, and the isinstance check
    # against three types costs three times as much.
    small = [v for v in values if type(v) is dict or not isinstance(v, _SIZED_ALONE)]
    each = len(dumps(small)) // len(small) + 1 if small else 0
    return [
        each if type(v) is dict or not isinstance(v, _SIZED_ALONE) else approx_size(v)
        for v in values
    ]


@dataclass(slots=True)
class _Entry:
    value: Any
    size: int
    expires_at: float | None


class MemoryStore:
    """Thread-safe in-process store, bounded by item count and approximate bytes (LRU), with TTL.

    Values are kept by reference, not copied or serialised: a page-1 snapshot of a large
    result is one entry whose approximate size counts toward ``max_bytes``.

    Args:
        max_items: most entries kept; the least recently used go first.
        max_bytes: most approximate bytes kept; an entry larger than this is refused.
        ttl: seconds an entry lives after it is written, or ``None`` for no expiry.
        clock: monotonic time source, replaceable in tests.
    """

    def __init__(
        self,
        *,
        max_items: int = DEFAULT_MAX_ITEMS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        ttl: float | None = DEFAULT_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_items < 1 or max_bytes < 1:
            raise ValueError("max_items and max_bytes must be positive")
        if ttl is not None and ttl <= 0:
            raise ValueError("ttl must be positive seconds or None")
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.ttl = ttl
        self._clock = clock
        self._entries: OrderedDict[tuple[Scope, str], _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """Approximate bytes held now."""
        return self._bytes

    def put_many(self, scope: Scope, items: Mapping[str, Any]) -> list[str]:
        """Store ``items``; refuse (and return) the keys whose value exceeds ``max_bytes``.

        Raises:
            StoreUnavailableError: anything failed (nothing in memory should, but a store
                failure of any type must degrade the tool, never fail it).
        """
        try:
            expires = None if self.ttl is None else self._clock() + self.ttl
            cap = self.max_bytes
            refused: list[str] = []
            with self._lock:
                # One pass finds each key's entry. A value that is the very object its entry
                # holds (the same page asked for again, a snapshot of the same result list)
                # keeps the size it was given: sizing it again would encode it again. Sizing
                # happens under the lock, so the entries found stay valid; orjson holds the
                # GIL anyway, so no other thread could run meanwhile.
                entries = self._entries
                found = []
                unsized = []
                for key, value in items.items():
                    full_key = (scope, key)
                    entry = entries.get(full_key)
                    found.append((full_key, value, entry))
                    if entry is None or entry.value is not value:
                        unsized.append(value)
                fresh = iter(_sizes(unsized) if unsized else ())
                change = 0
                for full_key, value, entry in found:
                    if entry is not None and entry.value is value:  # the same object again
                        entry.expires_at = expires
                        entries.move_to_end(full_key)
                        continue
                    size = next(fresh)
                    if size > cap:
                        refused.append(full_key[1])
                    elif entry is None:
                        entries[full_key] = _Entry(value, size, expires)
                        change += size
                    else:
                        # A key written again is updated in place: dropping and re-adding it
                        # costs twice as much, and churns the dict's table into resizes.
                        change += size - entry.size
                        entry.value, entry.size, entry.expires_at = value, size, expires
                        entries.move_to_end(full_key)
                self._bytes += change
                if len(entries) > self.max_items or self._bytes > cap:
                    self._evict()
            return refused
        except Exception as exc:
            raise StoreUnavailableError(f"memory handle store failed to write: {exc}") from exc

    def get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        """Return the live values among ``keys``, refreshing their recency."""
        try:
            return self._get_many(scope, keys)
        except Exception as exc:
            raise StoreUnavailableError(f"memory handle store failed to read: {exc}") from exc

    def _get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        now = self._clock()
        found: dict[str, Any] = {}
        with self._lock:
            for key in keys:
                entry = self._entries.get((scope, key))
                if entry is None:
                    continue
                if entry.expires_at is not None and entry.expires_at <= now:
                    self._discard((scope, key))
                    continue
                self._entries.move_to_end((scope, key))
                found[key] = entry.value
        return found

    def forget(self, toolkit: str) -> None:
        """Drop every entry of ``toolkit``'s scopes, in every session (``Toolkit.reset``)."""
        try:
            with self._lock:
                for full_key in [k for k in self._entries if k[0].toolkit == toolkit]:
                    self._discard(full_key)
        except Exception as exc:
            raise StoreUnavailableError(f"memory handle store failed to forget: {exc}") from exc

    def close(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def _discard(self, full_key: tuple[Scope, str]) -> None:
        old = self._entries.pop(full_key, None)
        if old is not None:
            self._bytes -= old.size

    def _evict(self) -> None:
        while self._entries and (
            len(self._entries) > self.max_items or self._bytes > self.max_bytes
        ):
            _, old = self._entries.popitem(last=False)
            self._bytes -= old.size
