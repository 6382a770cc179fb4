"""Choose a handle store by URL, in code or through the ``SLIMTOOLS_STORE`` variable.

URLs (query options in brackets)::

    memory://[?max_items=&max_bytes=&ttl=]
    sqlite:///relative/file.db[?max_items=&max_bytes=&ttl=&max_record_bytes=&busy_timeout=]
    sqlite:////absolute/file.db
    redis://[user:password@]host:port/0[?ttl=&max_record_bytes=&prefix=&<redis-py options>]
    rediss://...  (TLS)

SQLite paths follow SQLAlchemy: three slashes then a relative path, four for an absolute
one. ``ttl=none`` disables expiry. Unknown options are a ``ConfigurationError`` for memory
and SQLite; for Redis, options slimtools does not know pass through to redis-py (e.g.
``socket_timeout``).
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from slimtools.errors import ConfigurationError
from slimtools.stores.base import HandleStore
from slimtools.stores.memory import MemoryStore

ENV_VAR = "SLIMTOOLS_STORE"
DEFAULT_URL = "memory://"

_Options = dict[str, type]
_MEMORY_OPTIONS: _Options = {"max_items": int, "max_bytes": int, "ttl": float}
_SQLITE_OPTIONS: _Options = {**_MEMORY_OPTIONS, "max_record_bytes": int, "busy_timeout": float}
_REDIS_OPTIONS: _Options = {"ttl": float, "max_record_bytes": int, "prefix": str}


def open_store(url: str | None = None) -> HandleStore:
    """Open the handle store a URL names; with no URL, ``$SLIMTOOLS_STORE`` or memory.

    Args:
        url: ``memory://``, ``sqlite:///file.db``, ``sqlite:////abs/file.db`` or
            ``redis://host:port/0``, with options as query parameters (module docs).

    Raises:
        ConfigurationError: unknown scheme, malformed path or option.
        ImportError: ``redis://`` without the ``redis`` extra.
    """
    if url is None:
        url = os.environ.get(ENV_VAR, "").strip() or DEFAULT_URL
    try:
        return _open(url)
    except ValueError as exc:  # a constructor refused an option value
        raise ConfigurationError(f"{url!r}: {exc}") from exc


def _open(url: str) -> HandleStore:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if scheme == "memory":
        if parts.netloc or parts.path not in ("", "/"):
            raise ConfigurationError(f"memory:// takes no host or path: {url!r}")
        return MemoryStore(**_options(url, pairs, _MEMORY_OPTIONS))
    if scheme == "sqlite":
        from slimtools.stores.sqlite import SQLiteStore

        return SQLiteStore(
            _sqlite_path(url, parts.netloc, parts.path),
            **_options(url, pairs, _SQLITE_OPTIONS),
        )
    if scheme in ("redis", "rediss"):
        from slimtools.stores.redis import RedisStore

        ours = [(k, v) for k, v in pairs if k in _REDIS_OPTIONS]
        theirs = [(k, v) for k, v in pairs if k not in _REDIS_OPTIONS]
        plain = urlunsplit(parts._replace(query=urlencode(theirs)))
        return RedisStore(plain, **_options(url, ours, _REDIS_OPTIONS))
    raise ConfigurationError(
        f"unknown handle store URL {url!r}; use memory://, sqlite:///file.db or "
        "redis://host:port/0 (for a LangGraph store, pass "
        "slimtools.stores.LangGraphStore(store) instead of a URL)"
    )


def _sqlite_path(url: str, netloc: str, path: str) -> str:
    """``/rel.db`` -> ``rel.db`` and ``//abs.db`` -> ``/abs.db``, as SQLAlchemy reads them."""
    if netloc:
        raise ConfigurationError(
            f"{url!r}: a SQLite URL has no host; write sqlite:///relative.db "
            "or sqlite:////absolute.db"
        )
    file = unquote(path[1:])
    if not file or file == ":memory:":
        raise ConfigurationError(
            f"{url!r}: give a database file (sqlite:///handles.db); for an in-process "
            "store use memory://"
        )
    return file


def _options(url: str, pairs: list[tuple[str, str]], known: _Options) -> dict[str, Any]:
    """Convert query options to keyword arguments, with errors that name the option."""
    options: dict[str, Any] = {}
    for name, raw in pairs:
        convert = known.get(name)
        if convert is None:
            raise ConfigurationError(
                f"{url!r}: unknown option {name!r}; known: {', '.join(sorted(known))}"
            )
        if name == "ttl" and raw.strip().lower() in ("", "none"):
            options[name] = None
            continue
        try:
            options[name] = convert(raw)
        except ValueError:
            raise ConfigurationError(
                f"{url!r}: option {name}={raw!r} is not a valid {convert.__name__}"
            ) from None
    return options


def resolve_store(store: HandleStore | str | None) -> HandleStore:
    """A toolkit's ``store=`` as a store: ``None`` a fresh memory store, a URL opened.

    Raises:
        ConfigurationError: ``store`` is neither a ``HandleStore`` nor a store URL.
    """
    if store is None:
        return MemoryStore()
    if isinstance(store, str):
        return open_store(store)
    if not isinstance(store, HandleStore):
        raise ConfigurationError(f"store must be a HandleStore or a store URL, got {store!r}")
    return store
