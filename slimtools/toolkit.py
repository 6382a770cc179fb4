"""Toolkits: a registry of tools that share a handle store and one ``get_record`` companion.

``Toolkit.tools`` describes every tool (get_record included) with a name, a description, a
JSON Schema of its arguments and the callable, which is what every framework adapter needs;
``Toolkit.call`` is the one dispatcher adapters use, validating untrusted model arguments
and turning every failure into a result the model can act on.

The toolkit is the public face; the engines it runs (``slimtools._core.dispatch``,
``slimtools._core.lookup``) read it as plain data, and its tools reach the store through its
``Keeper`` (``slimtools._core.keeper``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, overload

from pydantic import Field

from slimtools._core.dispatch import (
    SpecOptions,
    Table,
    ToolResult,
    ToolSpec,
    bound_spec,
    companion_spec,
    dispatch,
)
from slimtools._core.drive import drive_async, drive_sync
from slimtools._core.keeper import DEFAULT_KEEPER, Keeper
from slimtools._core.lookup import Lookup
from slimtools._core.lookup import get_record as _get_record
from slimtools._core.observed import bound_call, observed_lookup
from slimtools._core.params import roles, withheld_defaults
from slimtools.categories import CATEGORIES, REPEATABLE_CATEGORIES, infer_category
from slimtools.errors import ConfigurationError, OnError
from slimtools.instrumentation import REGISTRY, Listener, check_listener
from slimtools.redaction import describe_error
from slimtools.stores import resolve_store
from slimtools.stores.base import DEFAULT_SESSION, ForgettingStore, HandleStore, Scope

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "CATEGORIES",
    "ToolResult",
    "ToolSpec",
    "Toolkit",
    "default_toolkit",
    "get_record",
]

_HANDLE_DOC = 'The handle or id value from a brief, e.g. 3 or "k3f9a2qd".'
_SOURCE_DOC = "The tool that showed the handle; only needed when two tools share an id."
_PAGE_DOC = "For long texts and records, the page to read (1-based)."

F = TypeVar("F", bound=Callable[..., Any])


class Toolkit:
    """A named set of tools sharing a handle store, a session scope and ``get_record``.

    Args:
        name: namespaces handles in the store (two toolkits never see each other's).
        store: a ``HandleStore``, a store URL (``"memory://"``, ``"sqlite:///h.db"``,
            ``"redis://localhost:6379/0"``) or ``None`` for an in-memory store.
        session: the session used when none is bound with ``slimtools.session``.
        companion_name: the name of the ``get_record`` tool (and in hints).
        record_max_chars: longer full records are returned by ``get_record`` in pages.
        on_error: words a tool's exception for the model (``exception -> text``, shown as
            ``"<tool> failed: <text>"``); the default, ``slimtools.describe_error``, keeps
            the exception type and a redacted message. Every exception is also logged on
            the ``slimtools`` logger at WARNING with its traceback; a hook that fails falls
            back to the exception type alone.
        on_event: hears a ``SlimmedCall`` for each call of this toolkit's slimmed tools and
            a ``RecordLookup`` for each ``get_record`` answer (``slimtools.instrumentation``;
            ``slimtools.observe`` hears every toolkit's). A listener that raises is logged
            and never fails the call.
    """

    def __init__(
        self,
        name: str,
        *,
        store: HandleStore | str | None = None,
        session: str = DEFAULT_SESSION,
        companion_name: str = "get_record",
        record_max_chars: int = 20_000,
        on_error: OnError = describe_error,
        on_event: Listener | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigurationError("a Toolkit needs a non-empty name")
        if not callable(on_error):
            raise ConfigurationError(
                f"on_error must be callable (exception -> text), got {on_error!r}"
            )
        if on_event is not None:
            check_listener(on_event, "on_event")
        keeper = Keeper(
            name,
            resolve_store(store),
            session=session,
            companion=companion_name,
            record_max_chars=record_max_chars,
            on_error=on_error,
            on_event=on_event,
        )
        self._setup(keeper)

    def _setup(self, keeper: Keeper) -> None:
        self._keeper = keeper
        self._specs: dict[str, ToolSpec] = {}
        self._hidden: dict[str, frozenset[str]] = {}
        self._table: Table | None = None
        self._companion: ToolSpec | None = None
        self._declared: set[str] = set()  # tools registered with category= or read_only=
        self._lock = threading.Lock()
        keeper.repeatable = self._repeatable

    def _repeatable(self, tool: str) -> bool:
        """Whether ``tool`` only reads: as declared, else as its name's verbs say."""
        spec = self._specs.get(tool)
        if spec is not None and tool in self._declared:
            return spec.read_only
        return infer_category(tool) in REPEATABLE_CATEGORIES

    @classmethod
    def _around(cls, keeper: Keeper) -> Toolkit:
        """A toolkit over an existing keeper (``default_toolkit`` over the default one)."""
        kit = cls.__new__(cls)
        kit._setup(keeper)
        return kit

    def __repr__(self) -> str:
        return f"Toolkit({self.name!r}, tools={[s.name for s in self.tools]})"

    @property
    def name(self) -> str:
        """The toolkit's name: it namespaces handles in the store."""
        return self._keeper.name

    @property
    def store(self) -> HandleStore:
        """The handle store the toolkit's tools keep full records in."""
        return self._keeper.store

    @property
    def default_session(self) -> str:
        """The session used when none is bound with ``slimtools.session``."""
        return self._keeper.default_session

    @property
    def companion_name(self) -> str:
        """The name of the ``get_record`` tool (and in hints)."""
        return self._keeper.companion

    @property
    def record_max_chars(self) -> int:
        """Longer full records are returned by ``get_record`` in pages of this many characters."""
        return self._keeper.record_max_chars

    @property
    def on_error(self) -> OnError:
        """How a tool's exception reads to the model."""
        return self._keeper.on_error

    @property
    def on_event(self) -> Listener | None:
        """The listener hearing this toolkit's events, if any."""
        return self._keeper.on_event

    def scope(self) -> Scope:
        """The scope of handles made or read now: this toolkit and the bound session."""
        return self._keeper.scope()

    def reset(self) -> None:
        """Forget every handle and page-1 snapshot this toolkit's tools stored.

        Clears exactly the store entries of this toolkit, in every session: the full
        records behind handles, the texts ``get_record`` pages, and the page-1 snapshots
        later pages read. Afterwards ``get_record`` answers every old handle as unknown
        and a page 2 fetches afresh, as in a new process. Kept: the registered tools (and
        the handle tools ``get_record`` resolves), the store and its options, other
        toolkits' entries in a shared store. For tests: see ``slimtools.testing``.

        Raises:
            ConfigurationError: the store cannot forget one toolkit's entries: it has no
                ``forget(toolkit)`` (``slimtools.typing.ForgettingStore``; the memory, SQLite
                and Redis stores have one, ``LangGraphStore`` does not).
            StoreUnavailableError: the store cannot be reached.
        """
        store = self.store
        if not isinstance(store, ForgettingStore):
            raise ConfigurationError(
                f"Toolkit.reset() needs a store with forget(toolkit), and toolkit {self.name!r} "
                f"keeps its handles in {type(store).__name__}; give each test its own store "
                "instead"
            )
        store.forget(self.name)

    # registration -------------------------------------------------------------------

    @overload
    def tool(
        self,
        fn: F,
        /,
        **options: Unpack[SpecOptions],
    ) -> F: ...
    @overload
    def tool(
        self,
        fn: None = None,
        /,
        **options: Unpack[SpecOptions],
    ) -> Callable[[F], F]: ...
    def tool(
        self,
        fn: Any = None,
        /,
        **options: Unpack[SpecOptions],
    ) -> Any:
        """Register a tool (slimmed or not); return the callable bound to this toolkit.

        Args:
            name: the tool's name (default: the function's ``__name__``; a lambda needs one).
            description: what the model reads (default: the docstring).
            category: retention category for clearing: search, read, command, write, input.
            parameters: the JSON Schema of the arguments, for a tool that forwards
                ``**arguments`` to a backend that owns the schema (an MCP server, another
                framework's tool). Parameters the signature declares (``page``/``limit`` of
                ``@paginate``) are added to it and validated; the rest pass through as sent.
            output_schema: the schema to publish for the tool's results instead of the
                envelope's (e.g. one that also admits results passed through untouched);
                an empty mapping publishes none.
            read_only: the tool only reads, so calling it again is safe (default: when its
                category is ``search`` or ``read``). Clearing placeholders offer to call
                only such tools again.
        """
        if fn is None:
            return lambda f: self.tool(f, **options)
        spec = self.bind(fn, **options)
        declared = options.get("category") is not None or options.get("read_only") is not None
        self._register(spec, declared=declared)
        return spec.function

    def bind(self, fn: Callable[..., Any], /, **options: Unpack[SpecOptions]) -> ToolSpec:
        """The spec :meth:`tool` would register, its ``function`` bound to this toolkit's
        handles, without registering it (the options are :meth:`tool`'s).

        A surface that builds one tool from several slimmed variants (the MCP proxy's
        ``response_format``) binds each, reads its schema, and registers one tool.
        """
        return bound_spec(fn, self._keeper, **options)

    def _register(self, spec: ToolSpec, *, declared: bool) -> None:
        """Add ``spec`` under its name (replacing a tool of that name)."""
        param_roles = roles(spec.function)
        with self._lock:
            self._specs[spec.name] = spec
            self._hidden[spec.name] = param_roles.hidden
            self._keeper.secrets[spec.name] = withheld_defaults(spec.function, param_roles)
            if declared:
                self._declared.add(spec.name)
            else:
                self._declared.discard(spec.name)
            self._table = None
        self._keeper.refresh()

    @property
    def tools(self) -> list[ToolSpec]:
        """Every registered tool, then the ``get_record`` companion."""
        return [*self._specs.values(), self._companion_spec()]

    def __contains__(self, name: object) -> bool:
        """Whether a tool called ``name`` is registered (``get_record`` included)."""
        return name in self._specs or name == self.companion_name

    def spec(self, name: str) -> ToolSpec:
        """The tool called ``name``; ``KeyError`` naming the known tools otherwise."""
        found = self._specs.get(name)
        if found is not None:
            return found
        if name == self.companion_name:
            return self._companion_spec()
        known = ", ".join(s.name for s in self.tools)
        raise KeyError(f"no tool {name!r} in toolkit {self.name!r}; tools: {known}")

    @property
    def categories(self) -> dict[str, str | None]:
        """Each tool's retention category (get_record counts as a read)."""
        return {s.name: s.category for s in self.tools}

    @property
    def read_only_tools(self) -> frozenset[str]:
        """The tools safe to call again (get_record included)."""
        return frozenset(s.name for s in self.tools if s.read_only)

    @property
    def handle_keys(self) -> dict[str, str | None]:
        """Each tool's brief field that carries the handle (``None`` when it keeps none)."""
        return {s.name: s.handle_key for s in self.tools}

    def _companion_spec(self) -> ToolSpec:
        # Built once, on first use: a pydantic model per call would make every dispatch pay
        # for it, and one per toolkit would make every Toolkit() pay for it.
        cached = self._companion
        if cached is not None:
            return cached
        spec = self._companion = companion_spec(self.companion_name, self.get_record)
        return spec

    def _dispatch_table(self) -> Table:
        """The tools as dispatch reads them, rebuilt after a registration."""
        table = self._table
        if table is None:
            companion = self._companion_spec()
            with self._lock:
                table = self._table = Table(
                    specs={**self._specs, companion.name: companion},
                    hidden=dict(self._hidden),
                    describe=self._keeper.describe,
                )
        return table

    # the companion ------------------------------------------------------------------

    def get_record(
        self,
        handle: Annotated[str | int, Field(description=_HANDLE_DOC)],
        source: Annotated[str | None, Field(description=_SOURCE_DOC)] = None,
        page: Annotated[int, Field(description=_PAGE_DOC)] = 1,
    ) -> str:
        """Return the full record (as JSON) or text behind a handle shown in a tool result.

        Args:
            handle: the handle or id value from a brief, e.g. 3 or "k3f9a2qd".
            source: the tool that produced it, only needed when two tools share an id.
            page: for long texts and records, which page to read (1-based).
        """
        keeper = self._keeper
        return drive_sync(self._lookup()(keeper.sources(), handle, source, page), keeper)[0]

    async def aget_record(self, handle: str | int, source: str | None = None, page: int = 1) -> str:
        """Asynchronous :meth:`get_record` (uses the store's async API when present)."""
        keeper = self._keeper
        engine = self._lookup()(keeper.sources(), handle, source, page)
        return (await drive_async(engine, keeper))[0]

    def _lookup(self) -> Lookup:
        """The ``get_record`` engine: reporting its answer only when someone listens."""
        keeper = self._keeper
        if keeper.on_event is None and not REGISTRY.listeners:
            return _get_record
        return observed_lookup(keeper)

    # dispatch -----------------------------------------------------------------------

    def call(
        self,
        name: str,
        arguments: str | bytes | Mapping[str, Any] | None = None,
        *,
        session: str | None = None,
        call_id: str | None = None,
    ) -> ToolResult:
        """Validate model-sent ``arguments`` and run tool ``name``; never raises.

        Bad JSON, an unknown tool, wrong, unknown or missing arguments and exceptions
        raised by the tool all come back as ``ToolResult(is_error=True)`` with a message
        the model can act on. An async tool is run to completion when no event loop is
        running in this thread (otherwise use :meth:`acall`). ``call_id``, the model's
        id for this tool call, is reported in the call's event (``slimtools.instrumentation``).
        """
        with bound_call(session, call_id):
            keeper = self._keeper
            engine = dispatch(
                self._dispatch_table(), keeper.sources(), name, arguments, self._lookup()
            )
            return drive_sync(engine, keeper)

    async def acall(
        self,
        name: str,
        arguments: str | bytes | Mapping[str, Any] | None = None,
        *,
        session: str | None = None,
        call_id: str | None = None,
    ) -> ToolResult:
        """Asynchronous :meth:`call`: awaits async tools, runs sync ones in a worker thread.

        A sync tool may block on I/O, so it runs through ``asyncio.to_thread`` (which carries
        the bound session along with the other contextvars) rather than on the event loop.
        """
        with bound_call(session, call_id):
            keeper = self._keeper
            engine = dispatch(
                self._dispatch_table(), keeper.sources(), name, arguments, self._lookup()
            )
            return await drive_async(engine, keeper)


default_toolkit = Toolkit._around(DEFAULT_KEEPER)
"""Where decorated tools that no toolkit registered keep their handles."""


def get_record(
    handle: Annotated[str | int, Field(description=_HANDLE_DOC)],
    source: Annotated[str | None, Field(description=_SOURCE_DOC)] = None,
    page: Annotated[int, Field(description=_PAGE_DOC)] = 1,
) -> str:
    """Return the full record (JSON) or text behind a handle that a tool result showed.

    The companion of decorated tools that no toolkit registered (``default_toolkit``).
    """
    return default_toolkit.get_record(handle, source, page)
