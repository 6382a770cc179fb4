"""A toolkit as the engines see it: its store in the current scope, and its handle tools.

``Toolkit`` (public: registration, specs, the façade) owns one ``Keeper``; slim tools and
the two drivers talk only to the keeper, so the engine never imports the toolkit. Tools
that no toolkit registered keep their handles in ``DEFAULT_KEEPER``, which
``slimtools.default_toolkit`` wraps.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any, Protocol

from slimtools._core.config import SlimConfig
from slimtools._core.drive import UNAVAILABLE
from slimtools._core.lookup import Sources
from slimtools._session import current_session
from slimtools.instrumentation import Listener
from slimtools.redaction import describe_error, remove
from slimtools.stores.base import DEFAULT_SESSION, AsyncHandleStore, HandleStore, Scope
from slimtools.stores.memory import MemoryStore


class Registered(Protocol):
    """A slim tool as a keeper registers it (``slimtools._core.wrapper.SlimState``)."""

    @property
    def name(self) -> str:
        """The tool's name."""

    @property
    def cfg(self) -> SlimConfig:
        """The tool's options."""


log = logging.getLogger("slimtools")


class Keeper:
    """A toolkit's store seen from the engines, and what ``get_record`` needs to know.

    The drivers (``slimtools._core.drive``) read and write its store in its ``scope()``;
    a store failure of any kind is logged here and answered with ``UNAVAILABLE``.

    The handle tools are held weakly: a tool that is no longer referenced anywhere (one a
    test defined, or the unregistered original of a tool a toolkit registered under a copy)
    stops being a source of this keeper's ``get_record``.
    """

    def __init__(
        self,
        name: str,
        store: HandleStore,
        *,
        session: str = DEFAULT_SESSION,
        companion: str = "get_record",
        record_max_chars: int = 20_000,
        on_error: Callable[[Exception], str] = describe_error,
        on_event: Listener | None = None,
    ) -> None:
        self.name = name
        self.store = store
        # Checked once here: a runtime Protocol check costs microseconds on every call.
        self.store_is_async = isinstance(store, AsyncHandleStore)
        self.default_session = session
        self.companion = companion
        self.record_max_chars = record_max_chars
        self.on_error = on_error
        self.on_event = on_event
        """The toolkit's own event listener (``slimtools.instrumentation``), if any."""
        self.repeatable: Callable[[str], bool] = lambda tool: False
        """Whether a tool only reads, so messages may offer to call it again (the toolkit's
        rule: ``Toolkit.tool(read_only=..., category=...)``, else its name's verbs)."""
        self.secrets: dict[str, tuple[str, ...]] = {}
        """Each tool's hidden and secret default values, removed from the failures it words."""
        self._scope = Scope(name, session)
        self._tools: weakref.WeakValueDictionary[str, Registered] = weakref.WeakValueDictionary()
        self._order: dict[str, None] = {}  # registration order (a weak mapping keeps none)
        self._sources: Sources | None = None
        self._version = 0
        self._lock = threading.Lock()

    # the handle tools get_record resolves ---------------------------------------------

    def register(self, state: Registered) -> None:
        """Make the handles of ``state``'s tool resolvable by this keeper's ``get_record``.

        A later registration under the same name replaces it.
        """
        if state.cfg.handles is None:
            return
        with self._lock:
            self._order.pop(state.name, None)  # re-registered: it moves to the end
            self._order[state.name] = None
            self._tools[state.name] = state
            self._changed()
        weakref.finalize(state, self._changed)

    def refresh(self) -> None:
        """Rebuild ``sources()`` on next use (a tool's declarations changed)."""
        with self._lock:
            self._changed()

    def _changed(self) -> None:
        """The handle tools changed (a registration, or a tool no longer referenced)."""
        self._version += 1
        self._sources = None

    def sources(self) -> Sources:
        """The current handle tools and settings, as ``get_record`` reads them."""
        cached = self._sources
        if cached is not None:
            return cached
        with self._lock:
            version = self._version
            live = {n: s.cfg for n in self._order if (s := self._tools.get(n)) is not None}
            self._order = dict.fromkeys(live)
            built = Sources(
                tools=live,
                companion=self.companion,
                record_max_chars=self.record_max_chars,
                describe=self.fetch_failed,
                repeatable=frozenset(n for n in live if self.repeatable(n)),
            )
            if version == self._version:  # no tool went away meanwhile (a finalizer may run)
                self._sources = built
        return built

    # failures -------------------------------------------------------------------------

    def describe(self, exc: Exception, tool: str | None = None) -> str:
        """``on_error(exc)`` without ``tool``'s hidden and secret values; the type alone if the
        hook fails."""
        try:
            text = self.on_error(exc)
            if not isinstance(text, str):
                raise TypeError(f"on_error returned {type(text).__name__}, not text")
        except Exception:
            log.warning(
                "slimtools: the on_error hook of toolkit %r failed", self.name, exc_info=True
            )
            text = type(exc).__name__
        return remove(text, self.secrets.get(tool or "", ()))

    def fetch_failed(self, tool: str, exc: Exception) -> str:
        """A live ``fetch=`` failure, worded and logged like a tool's."""
        log.warning("slimtools: fetch of tool %r raised %s", tool, type(exc).__name__, exc_info=exc)
        return self.describe(exc, tool)

    # the store, in the current scope --------------------------------------------------

    def scope(self) -> Scope:
        """The scope of handles made or read now: this toolkit and the bound session."""
        session_id = current_session() or self.default_session
        last = self._scope
        # Reused while the session stays the same (every call of a tool builds one).
        if last.session != session_id:
            last = self._scope = Scope(self.name, session_id)
        return last

    def unavailable(self, action: str, exc: Exception) -> Any:
        """Log a store failure during ``action`` (read, write); return ``UNAVAILABLE``."""
        log.warning("slimtools: handle store %r unavailable on %s: %s", self.name, action, exc)
        return UNAVAILABLE


DEFAULT_KEEPER = Keeper("default", MemoryStore())
"""Where tools that no toolkit registered keep their handles (``slimtools.default_toolkit``)."""
