"""A durable handle store in one SQLite file: WAL, bounded, expiring, shared by processes.

Design choices, each with the alternative rejected:

- **One write transaction per ``put_many``** (``BEGIN IMMEDIATE`` ... ``COMMIT``): a tool call
  that surfaces 100 briefs costs one fsync-free WAL commit, not 100. ``IMMEDIATE`` takes the
  write lock up front, so two processes never deadlock upgrading a read lock.
- **Eviction of the oldest written first** (FIFO by write order), not least recently used:
  LRU would turn every ``get_record`` into a write transaction competing for the database's
  single write lock; FIFO keeps reads read-only, which WAL runs concurrently with writers.
  Handles are read soon after they are written, so the difference rarely matters.
  (:class:`~slimtools.stores.memory.MemoryStore` is LRU: recency costs it nothing.)
- **TTL from the time of writing**, by the wall clock (``time.time``) because it has to agree
  across processes and restarts. Expired rows are invisible at once and deleted by the
  next write.
- **Totals kept by triggers** in a one-row table, in the same transaction as the rows, so
  the bounds hold across processes without a ``count(*)`` scan per write.
- **A connection per thread** (and per process after a fork), not one connection behind a
  lock: readers in several threads then run in parallel (sqlite3 releases the GIL).
- ``synchronous=NORMAL``: a committed ``put_many`` survives the process being killed; after
  a power loss the last transactions may roll back, never corrupt the file.
- A page-1 snapshot of a 10,000-row result is one row holding one compact JSON blob.
- **Keys are stored byte for byte** (column ``key``, the core's ``r:<tool>:<handle>`` as
  UTF-8 with ``surrogatepass``), so files written by earlier versions still resolve; a put
  overwrites (the core never overwrites a handle's record with other content, see
  :class:`~slimtools.stores.base.HandleStore`).
- **Bounded by default**, like the other stores: records live an hour (``ttl``), at most
  100,000 of them and 256 MiB of JSON (``max_items``, ``max_bytes``), 16 MiB each
  (``max_record_bytes``). Pages freed by expiry and eviction are reused by later writes,
  and new files use ``auto_vacuum=INCREMENTAL``: once a quarter of the file (and at least
  1 MiB) is free, an ``incremental_vacuum`` gives it back to the file system, so the file
  tracks what is live instead of its high-water mark. (Rejected: a full ``VACUUM``, which
  rewrites the whole file under the write lock.) Files made by earlier versions keep their
  auto-vacuum setting and only reuse freed pages.
- **Opening is lazy on failure**: a file that cannot be opened (a missing directory, a
  corrupt file) is logged at construction and retried on each use, where it raises
  ``StoreUnavailableError``, so ``Toolkit(...)`` starts and tools degrade, as with a Redis
  server that is down. Only a file holding a newer schema is refused at construction.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from slimtools.errors import ConfigurationError, StoreUnavailableError
from slimtools.stores._encoding import (
    decode_found,
    encode_items,
    exact_bytes,
    logger,
    validate_limit,
)
from slimtools.stores.base import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_RECORD_BYTES,
    DEFAULT_TTL,
    Scope,
)

_VACUUM_MIN_PAGES = 256  # free pages (1 MiB of 4 KiB pages) before space is given back

_SCHEMA_VERSION = 1
_SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS slimtools_handles (
    toolkit BLOB NOT NULL,
    session BLOB NOT NULL,
    key BLOB NOT NULL,
    value BLOB NOT NULL,
    size INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    expires_at REAL,
    PRIMARY KEY (toolkit, session, key)
);
CREATE INDEX IF NOT EXISTS slimtools_handles_seq ON slimtools_handles (seq);
CREATE INDEX IF NOT EXISTS slimtools_handles_expiry
    ON slimtools_handles (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS slimtools_totals (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    items INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    next_seq INTEGER NOT NULL
);
INSERT OR IGNORE INTO slimtools_totals VALUES (0, 0, 0, 0);
CREATE TRIGGER IF NOT EXISTS slimtools_handles_added AFTER INSERT ON slimtools_handles BEGIN
    UPDATE slimtools_totals SET items = items + 1, bytes = bytes + NEW.size WHERE id = 0;
END;
CREATE TRIGGER IF NOT EXISTS slimtools_handles_removed AFTER DELETE ON slimtools_handles BEGIN
    UPDATE slimtools_totals SET items = items - 1, bytes = bytes - OLD.size WHERE id = 0;
END;
CREATE TRIGGER IF NOT EXISTS slimtools_handles_resized AFTER UPDATE OF size ON slimtools_handles
BEGIN
    UPDATE slimtools_totals SET bytes = bytes - OLD.size + NEW.size WHERE id = 0;
END;
PRAGMA user_version = 1;
COMMIT;
"""
_UPSERT = """
INSERT INTO slimtools_handles (toolkit, session, key, value, size, seq, expires_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (toolkit, session, key) DO UPDATE SET
    value = excluded.value, size = excluded.size,
    seq = excluded.seq, expires_at = excluded.expires_at
"""
_SELECT = """
SELECT key, value FROM slimtools_handles
WHERE toolkit = ? AND session = ? AND (expires_at IS NULL OR expires_at > ?) AND key IN ({})
"""
_CHUNK = 500  # keys per SELECT, well under SQLite's bound-parameter limit


_INHERITED: list[_Holder] = []
"""Connections a forked child inherited. SQLite forbids using them in the child, and even
closing one there can drop the POSIX locks of the child's own connections to the same file,
so they are kept referenced, never closed, for the life of the process."""


class _Holder:
    """One thread's connection, tagged with the process that opened it."""

    __slots__ = ("__weakref__", "conn", "pid")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.pid = os.getpid()


class SQLiteStore:
    """Durable handle store in one SQLite file, shared by threads and processes on one host.

    Args:
        path: the database file (created with its tables when missing).
        max_items: most records kept (100,000); the oldest written go first. ``None``:
            unbounded.
        max_bytes: most bytes of record JSON kept (256 MiB); a record larger than this is
            refused. ``None``: unbounded.
        ttl: seconds a record lives after it is written (an hour); ``None``: no expiry.
        max_record_bytes: a record whose JSON is larger (16 MiB) is refused (returned by
            :meth:`put_many`), never stored truncated.
        busy_timeout: seconds to wait for another process's write lock before giving up
            with :class:`~slimtools.errors.StoreUnavailableError`.
        clock: wall-clock time source (``time.time``), replaceable in tests.

    Sizes count the record's JSON bytes, as the memory store does. Counts and bytes include
    expired records until the next write deletes them.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_items: int | None = DEFAULT_MAX_ITEMS,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        ttl: float | None = DEFAULT_TTL,
        max_record_bytes: int | None = DEFAULT_MAX_RECORD_BYTES,
        busy_timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        for name, limit in (
            ("max_items", max_items),
            ("max_bytes", max_bytes),
            ("ttl", ttl),
            ("max_record_bytes", max_record_bytes),
            ("busy_timeout", busy_timeout),
        ):
            validate_limit(name, limit)
        self.path = Path(path)
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.ttl = ttl
        self.max_record_bytes = max_record_bytes
        self.busy_timeout = busy_timeout
        self._clock = clock
        self._local = threading.local()
        self._holders: weakref.WeakSet[_Holder] = weakref.WeakSet()
        self._holders_lock = threading.Lock()
        self._closed = False
        self._ready = False
        try:
            self._open_schema()
        except StoreUnavailableError as exc:
            logger.warning(
                "slimtools: %s; tools answer without expandable handles until it opens", exc
            )

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    def __len__(self) -> int:
        """Records held (expired ones included until the next write deletes them)."""
        return self._totals()[0]

    @property
    def nbytes(self) -> int:
        """Bytes of record JSON held."""
        return self._totals()[1]

    def _open_schema(self) -> None:
        """Create or check the tables once; ``StoreUnavailableError`` if the file fails."""
        if self._ready:
            return
        with self._guard("open"):
            conn = self._connection()
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, _SCHEMA_VERSION):
                raise ConfigurationError(
                    f"{self.path} holds slimtools handle schema v{version}; this version "
                    f"reads v{_SCHEMA_VERSION}. Use a new file."
                )
            if version == 0:
                conn.executescript(_SCHEMA)
        self._ready = True

    def _ensure_open(self) -> None:
        """Open the schema now if construction could not; a refusal is an outage here."""
        if not self._ready:
            try:
                self._open_schema()
            except ConfigurationError as exc:
                raise StoreUnavailableError(str(exc)) from exc

    def put_many(self, scope: Scope, items: Mapping[str, Any]) -> list[str]:
        """Store ``items`` in one transaction; return the keys refused as too large.

        Raises:
            StoreUnavailableError: the file cannot be written (locked past ``busy_timeout``,
                disk full, unreadable); nothing from this batch is stored.
        """
        kept, refused = encode_items(items, self._record_cap())
        if not kept:
            return refused
        toolkit, session = exact_bytes(scope.toolkit), exact_bytes(scope.session)
        self._ensure_open()
        with self._guard("write"):
            with self._transaction() as conn:
                now = self._clock()
                expires = None if self.ttl is None else now + self.ttl
                expired = conn.execute(
                    "DELETE FROM slimtools_handles WHERE expires_at <= ?", (now,)
                )
                freed = expired.rowcount > 0
                seq = conn.execute("SELECT next_seq FROM slimtools_totals").fetchone()[0]
                conn.executemany(
                    _UPSERT,
                    [
                        (toolkit, session, exact_bytes(key), blob, len(blob), seq + i, expires)
                        for i, (key, blob) in enumerate(kept)
                    ],
                )
                conn.execute("UPDATE slimtools_totals SET next_seq = ?", (seq + len(kept),))
                freed = self._evict(conn) or freed
            if freed:
                self._give_back_space(conn)
        return refused

    def get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        """Return the live records among ``keys`` in ``scope``; others are simply absent."""
        wanted = {exact_bytes(key): key for key in keys}
        if not wanted:
            return {}
        toolkit, session = exact_bytes(scope.toolkit), exact_bytes(scope.session)
        now = self._clock()
        rows: list[tuple[bytes, bytes]] = []
        self._ensure_open()
        with self._guard("read"):
            conn = self._connection()
            blobs = list(wanted)
            for start in range(0, len(blobs), _CHUNK):
                chunk = blobs[start : start + _CHUNK]
                sql = _SELECT.format(",".join("?" * len(chunk)))
                rows.extend(conn.execute(sql, (toolkit, session, now, *chunk)))
        return decode_found(((wanted[key], blob) for key, blob in rows), repr(self))

    def forget(self, toolkit: str) -> None:
        """Drop every entry of ``toolkit``, in every session (``Toolkit.reset``).

        Raises:
            StoreUnavailableError: the file cannot be written; nothing is dropped.
        """
        self._ensure_open()
        with self._guard("forget a toolkit's entries"):
            with self._transaction() as conn:
                dropped = conn.execute(
                    "DELETE FROM slimtools_handles WHERE toolkit = ?", (exact_bytes(toolkit),)
                )
                freed = dropped.rowcount > 0
            if freed:
                self._give_back_space(conn)

    async def aput_many(self, scope: Scope, items: Mapping[str, Any]) -> list[str]:
        """:meth:`put_many` in a worker thread, so a busy lock never blocks the event loop."""
        return await asyncio.to_thread(self.put_many, scope, items)

    async def aget_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        """:meth:`get_many` in a worker thread."""
        return await asyncio.to_thread(self.get_many, scope, keys)

    def close(self) -> None:
        """Close every thread's connection; later calls raise ``StoreUnavailableError``."""
        self._closed = True
        with self._holders_lock:
            holders = list(self._holders)
            self._holders.clear()
        for holder in holders:
            if holder.pid == os.getpid():
                holder.conn.close()
            else:
                _INHERITED.append(holder)

    # -- plumbing ---------------------------------------------------------------------------

    def _record_cap(self) -> int | None:
        caps = [c for c in (self.max_record_bytes, self.max_bytes) if c is not None]
        return min(caps) if caps else None

    def _totals(self) -> tuple[int, int]:
        self._ensure_open()
        with self._guard("read"):
            row = self._connection().execute("SELECT items, bytes FROM slimtools_totals")
            items, nbytes = row.fetchone()
        return int(items), int(nbytes)

    def _give_back_space(self, conn: sqlite3.Connection) -> None:
        """Return free pages to the file system once they are a quarter of the file."""
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        if (
            free >= _VACUUM_MIN_PAGES
            and free * 4 >= conn.execute("PRAGMA page_count").fetchone()[0]
        ):
            # executescript steps the pragma to the end (``execute`` frees a single page).
            # The pages it moves go through the WAL; a TRUNCATE checkpoint then shrinks the
            # database file and empties the WAL, with no busy wait: if another connection
            # is reading it gives up at once, and the WAL is reused (under
            # ``journal_size_limit``) until a later checkpoint.
            wait = int(self.busy_timeout * 1000)
            try:
                conn.executescript(
                    "PRAGMA incremental_vacuum; PRAGMA busy_timeout = 0; "
                    f"PRAGMA wal_checkpoint(TRUNCATE); PRAGMA busy_timeout = {wait};"
                )
            except sqlite3.Error:  # best effort: the batch is committed, space waits a while
                logger.debug("slimtools: %r could not give back free pages", self, exc_info=True)
                with suppress(sqlite3.Error):
                    conn.execute(f"PRAGMA busy_timeout = {wait}")

    def _evict(self, conn: sqlite3.Connection) -> bool:
        """Delete the oldest written records until both bounds hold again; True if any went."""
        items, nbytes = conn.execute("SELECT items, bytes FROM slimtools_totals").fetchone()
        extra_items = items - self.max_items if self.max_items is not None else 0
        extra_bytes = nbytes - self.max_bytes if self.max_bytes is not None else 0
        if extra_items <= 0 and extra_bytes <= 0:
            return False
        victims: list[tuple[int]] = []
        freed = 0
        cursor = conn.execute("SELECT rowid, size FROM slimtools_handles ORDER BY seq")
        for rowid, size in cursor:
            if len(victims) >= extra_items and freed >= extra_bytes:
                break
            victims.append((rowid,))
            freed += size
        cursor.close()
        conn.executemany("DELETE FROM slimtools_handles WHERE rowid = ?", victims)
        return bool(victims)

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreUnavailableError(f"{self!r} is closed")
        holder: _Holder | None = getattr(self._local, "holder", None)
        if holder is None or holder.pid != os.getpid():
            if holder is not None:
                _INHERITED.append(holder)
            holder = _Holder(self._open())
            self._local.holder = holder
            with self._holders_lock:
                self._holders.add(holder)
        return holder.conn

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=self.busy_timeout,
            isolation_level=None,  # we issue BEGIN/COMMIT ourselves
            check_same_thread=False,  # close() runs on whichever thread calls it
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            # Only takes on a new, empty file, and must come before WAL writes its header;
            # on an existing file it changes nothing.
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA journal_size_limit = 67108864")
        except BaseException:
            conn.close()  # a corrupt file: retried on the next use, never leaked
            raise
        return conn

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            # A failed COMMIT leaves the transaction open; roll back so that this thread's
            # connection stays usable for the next tool call.
            if conn.in_transaction:
                with suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """Turn any error into ``StoreUnavailableError`` naming the file and action.

        Not only ``sqlite3.Error``: a store failure of any type must degrade the tool, never
        fail it.
        """
        try:
            yield
        except (StoreUnavailableError, ConfigurationError):
            raise
        except Exception as exc:
            raise StoreUnavailableError(
                f"SQLite handle store {str(self.path)!r} failed to {action}: {exc}"
            ) from exc
