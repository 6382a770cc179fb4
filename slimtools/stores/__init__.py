"""Handle stores, and :func:`open_store` to choose one by URL.

``MemoryStore`` (the default) and ``SQLiteStore`` need only the standard library and are
imported at once; ``RedisStore``
(extra ``redis``) and ``LangGraphStore`` (extra ``langchain``) import their client library
on first access, so ``import slimtools.stores`` never pulls in a framework.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from slimtools.stores._url import ENV_VAR, open_store, resolve_store
from slimtools.stores.memory import MemoryStore
from slimtools.stores.sqlite import SQLiteStore

if TYPE_CHECKING:
    from slimtools.stores.langgraph import LangGraphStore
    from slimtools.stores.redis import RedisStore

__all__ = [
    "ENV_VAR",
    "LangGraphStore",
    "MemoryStore",
    "RedisStore",
    "SQLiteStore",
    "open_store",
    "resolve_store",
]

_LAZY = {
    "LangGraphStore": "slimtools.stores.langgraph",
    "RedisStore": "slimtools.stores.redis",
}


def __getattr__(name: str) -> Any:
    """Import ``RedisStore`` and ``LangGraphStore`` (and their libraries) on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'slimtools.stores' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
