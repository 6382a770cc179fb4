"""A handle store on top of any LangGraph ``BaseStore`` (Postgres, SQLite, in-memory ...).

Users who already run LangGraph's Postgres-backed store get durable, shared handles with no
new server: ``LangGraphStore(postgres_store)``.

- **Layout**: a record lives at namespace ``(*namespace, toolkit, session)`` under its key,
  as ``{"json": "<record JSON text>", "expires_at": <epoch seconds or null>}``. Keeping the
  JSON as text (rather than as nested JSONB) keeps values orjson could not encode natively
  on the same fallbacks as every other store, and sidesteps JSONB's refusal of ``\\u0000``.
  Labels are escaped (``%``, ``.``, NUL, lone surrogates; an empty label becomes ``%``) so
  any toolkit or session name is a valid, distinct namespace; keys are escaped likewise
  (only NUL, ``%`` and lone surrogates, so the core's ``r:<tool>:<handle>`` keys of plain
  names are stored as they are; see :class:`~slimtools.stores.base.HandleStore`).
- **One batch per tool call**: ``put_many``/``get_many`` each issue one ``BaseStore.batch``
  (``abatch`` for the asynchronous twins); puts are not indexed for semantic search.
- **TTL**: measured from the write, by our own ``expires_at`` (checked on every read, so it
  is exact even where the backend's sweeper is best-effort), and also handed to backends
  that support TTL (``supports_ttl``) so they delete expired rows. Reads never refresh the
  backend's TTL. On a backend without TTL, expired records found by a read are deleted.
- **Bounds**: the backend's business; ``max_record_bytes`` refuses larger records.
- **Failures**: any exception from the backend becomes
  :class:`~slimtools.errors.StoreUnavailableError` (the backend's own driver errors are not
  known in advance), chained to the original.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from slimtools.errors import ConfigurationError, StoreUnavailableError
from slimtools.stores._encoding import decode_found, encode_items, escape, logger, validate_limit
from slimtools.stores.base import DEFAULT_MAX_RECORD_BYTES, DEFAULT_TTL, Scope

try:
    from langgraph.store.base import BaseStore, GetOp, Item, PutOp
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.stores.langgraph needs LangGraph: pip install 'slimtools[langchain]'"
    ) from exc


def _label(text: str) -> str:
    """An escaped namespace label: non-empty, free of ``.`` and NUL, injective."""
    return escape(text, ".\x00") or "%"


class LangGraphStore:
    """Handle store that keeps records in a LangGraph ``BaseStore``.

    Args:
        store: any LangGraph ``BaseStore`` (``PostgresStore``, ``InMemoryStore`` ...); it
            stays the caller's to close.
        namespace: leading namespace labels under which every record lives.
        ttl: seconds a record lives after it is written; ``None``: no expiry.
        max_record_bytes: a record whose JSON is larger is refused (returned by
            :meth:`put_many`), never stored truncated.
        clock: wall-clock time source (``time.time``), replaceable in tests.
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        namespace: tuple[str, ...] = ("slimtools",),
        ttl: float | None = DEFAULT_TTL,
        max_record_bytes: int | None = DEFAULT_MAX_RECORD_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(store, BaseStore):
            raise TypeError(f"LangGraphStore needs a langgraph BaseStore, not {type(store)}")
        if not namespace or any(not label or "." in label for label in namespace):
            raise ConfigurationError(
                f"namespace must be non-empty labels without '.', got {namespace!r}"
            )
        if namespace[0] == "langgraph":
            raise ConfigurationError("LangGraph reserves the namespace root 'langgraph'")
        validate_limit("ttl", ttl)
        validate_limit("max_record_bytes", max_record_bytes)
        self.store = store
        self.namespace = tuple(namespace)
        self.ttl = ttl
        self.max_record_bytes = max_record_bytes
        self._clock = clock

    def __repr__(self) -> str:
        return f"LangGraphStore({type(self.store).__name__}, namespace={self.namespace!r})"

    def put_many(self, scope: Scope, items: Mapping[str, Any]) -> list[str]:
        """Store ``items`` with one ``batch`` call; return the keys refused as too large."""
        ops, refused = self._put_ops(scope, items)
        if ops:
            try:
                self.store.batch(ops)
            except Exception as exc:
                raise self._unavailable("write", exc) from exc
        return refused

    def get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        """Return the live records among ``keys`` with one ``batch`` call."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        ops = self._get_ops(scope, wanted)
        try:
            results = self.store.batch(ops)
        except Exception as exc:
            raise self._unavailable("read", exc) from exc
        found, expired = self._sort(wanted, results)
        if expired:
            try:
                self.store.batch(self._delete_ops(scope, expired))
            except Exception:  # cleanup only; the answer is already right
                logger.warning("slimtools: could not delete expired records", exc_info=True)
        return found

    async def aput_many(self, scope: Scope, items: Mapping[str, Any]) -> list[str]:
        """Asynchronous :meth:`put_many` through ``abatch``."""
        ops, refused = self._put_ops(scope, items)
        if ops:
            try:
                await self.store.abatch(ops)
            except Exception as exc:
                raise self._unavailable("write", exc) from exc
        return refused

    async def aget_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        """Asynchronous :meth:`get_many` through ``abatch``."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        ops = self._get_ops(scope, wanted)
        try:
            results = await self.store.abatch(ops)
        except Exception as exc:
            raise self._unavailable("read", exc) from exc
        found, expired = self._sort(wanted, results)
        if expired:
            try:
                await self.store.abatch(self._delete_ops(scope, expired))
            except Exception:  # cleanup only; the answer is already right
                logger.warning("slimtools: could not delete expired records", exc_info=True)
        return found

    def close(self) -> None:
        """Nothing to release: the LangGraph store belongs to the caller."""

    # -- plumbing ---------------------------------------------------------------------------

    def _namespace(self, scope: Scope) -> tuple[str, ...]:
        return (*self.namespace, _label(scope.toolkit), _label(scope.session))

    def _put_ops(self, scope: Scope, items: Mapping[str, Any]) -> tuple[list[PutOp], list[str]]:
        kept, refused = encode_items(items, self.max_record_bytes)
        expires = None if self.ttl is None else self._clock() + self.ttl
        backend_ttl = self.ttl / 60 if self.ttl is not None and self.store.supports_ttl else None
        namespace = self._namespace(scope)
        ops = [
            PutOp(
                namespace,
                escape(key, "\x00"),
                {"json": blob.decode("utf-8"), "expires_at": expires},
                index=False,
                ttl=backend_ttl,
            )
            for key, blob in kept
        ]
        return ops, refused

    def _get_ops(self, scope: Scope, keys: Sequence[str]) -> list[GetOp]:
        namespace = self._namespace(scope)
        return [GetOp(namespace, escape(key, "\x00"), refresh_ttl=False) for key in keys]

    def _delete_ops(self, scope: Scope, keys: Sequence[str]) -> list[PutOp]:
        namespace = self._namespace(scope)
        return [PutOp(namespace, escape(key, "\x00"), None) for key in keys]

    def _sort(
        self, wanted: Sequence[str], results: Sequence[Any]
    ) -> tuple[dict[str, Any], list[str]]:
        """Split batch results into decoded live records and keys found expired."""
        now = self._clock()
        live: list[tuple[str, str | None]] = []
        expired: list[str] = []
        for key, item in zip(wanted, results, strict=True):
            if not isinstance(item, Item) or not isinstance(item.value, dict):
                continue
            expires_at = item.value.get("expires_at")
            if isinstance(expires_at, (int, float)) and expires_at <= now:
                expired.append(key)
            else:
                text = item.value.get("json")
                live.append((key, text if isinstance(text, str) else None))
        found = decode_found(live, repr(self))
        return found, expired if not self.store.supports_ttl else []

    def _unavailable(self, action: str, exc: BaseException) -> StoreUnavailableError:
        return StoreUnavailableError(f"{self!r} failed to {action}: {type(exc).__name__}: {exc}")
