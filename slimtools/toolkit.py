"""Toolkits: a registry of tools that share a handle store and one ``get_record`` companion.

``Toolkit.tools`` describes every tool (get_record included) with a name, a description, a
JSON Schema of its arguments and the callable, which is what every framework adapter needs;
``Toolkit.call`` is the one dispatcher adapters use, validating untrusted model arguments
and turning every failure into a result the model can act on.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar, overload

from pydantic import BaseModel, Field, ValidationError

from slimtools._core import schema as _schema
from slimtools._core.jsonenc import dumps_str
from slimtools._core.lookup import Lookup, render_lookup
from slimtools._core.params import NO_ROLES, Roles, roles, secret_defaults
from slimtools._core.pipeline import UNAVAILABLE, FinalResult
from slimtools._core.session import current_session, session
from slimtools._core.wrapper import SlimState, rebind, slim_state
from slimtools.envelope import Envelope
from slimtools.errors import ConfigurationError
from slimtools.redaction import describe_error, remove
from slimtools.stores.memory import MemoryStore
from slimtools.typing import DEFAULT_SESSION, AsyncHandleStore, HandleStore, OnError, Scope

log = logging.getLogger("slimtools")

COMPANION_DESCRIPTION = (
    "Return the full record (JSON) or text behind a handle that a tool result showed: "
    "a brief's id or handle value."
)
_HANDLE_DOC = 'The handle or id value from a brief, e.g. 3 or "k3f9a2qd".'
_SOURCE_DOC = "The tool that showed the handle; only needed when two tools share an id."
_PAGE_DOC = "For long texts and records, the page to read (1-based)."

F = TypeVar("F", bound=Callable[..., Any])

CATEGORIES = frozenset({"search", "read", "command", "write", "input"})
_READ_CATEGORIES = frozenset({"search", "read"})
"""Retention categories a tool may declare (see ``slimtools.clearing``)."""


@dataclass(frozen=True)
class ToolSpec:
    """One registered tool as every framework adapter sees it."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    is_async: bool
    category: str | None
    handle_key: str | None
    args_model: type[BaseModel]
    output_schema: dict[str, Any] | None
    returns_envelope: bool
    read_only: bool = False
    """The tool only reads: calling it again changes nothing (declared, or its category is
    ``search`` or ``read``). Clearing placeholders offer to call it again; MCP lists it with
    ``readOnlyHint``."""


@dataclass(frozen=True)
class ToolResult(FinalResult):
    """The outcome of ``Toolkit.call``: the text for the model, and whether it is an error.

    A tool (slimmed or not) may also return one to answer exactly that: the slimming
    decorators pass it through untouched and ``Toolkit.call`` returns it as it is. ``value``
    then carries what an adapter may send natively (the MCP adapter sends a
    ``CallToolResult`` found there as it is).
    """

    text: str
    is_error: bool = False
    value: Any = None
    structured: dict[str, Any] | None = None


def _resolve_store(store: HandleStore | str | None) -> HandleStore:
    if store is None:
        return MemoryStore()
    if isinstance(store, str):
        from slimtools.stores import open_store

        return open_store(store)
    if not isinstance(store, HandleStore):
        raise ConfigurationError(f"store must be a HandleStore or a store URL, got {store!r}")
    return store


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
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigurationError("a Toolkit needs a non-empty name")
        if not callable(on_error):
            raise ConfigurationError(
                f"on_error must be callable (exception -> text), got {on_error!r}"
            )
        self.name = name
        self.store = _resolve_store(store)
        self.default_session = session
        self.companion_name = companion_name
        self.record_max_chars = record_max_chars
        self._specs: dict[str, ToolSpec] = {}
        self._handle_tools: dict[str, SlimState] = {}
        self._lock = threading.Lock()
        self._scope: Scope | None = None
        self.on_error = on_error
        self._roles: dict[str, Roles] = {}
        self._secrets: dict[str, tuple[str, ...]] = {}
        """Each tool's secret default values (kept here, not on ToolSpec, so never printed)."""

    def __repr__(self) -> str:
        return f"Toolkit({self.name!r}, tools={[s.name for s in self.tools]})"

    # registration -------------------------------------------------------------------

    @overload
    def tool(
        self,
        fn: F,
        /,
        *,
        name: str | None = ...,
        description: str | None = ...,
        category: str | None = ...,
        parameters: Mapping[str, Any] | None = ...,
        output_schema: Mapping[str, Any] | None = ...,
        read_only: bool | None = ...,
    ) -> F: ...
    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = ...,
        description: str | None = ...,
        category: str | None = ...,
        parameters: Mapping[str, Any] | None = ...,
        output_schema: Mapping[str, Any] | None = ...,
        read_only: bool | None = ...,
    ) -> Callable[[F], F]: ...
    def tool(
        self,
        fn: Any = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        category: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        read_only: bool | None = None,
    ) -> Any:
        """Register a tool (slimmed or not); return the callable bound to this toolkit.

        Args:
            name: the tool's name (default: the function's ``__name__``).
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
            return lambda f: self.tool(
                f,
                name=name,
                description=description,
                category=category,
                parameters=parameters,
                output_schema=output_schema,
                read_only=read_only,
            )
        if category is not None and category not in CATEGORIES:
            raise ConfigurationError(
                f"category must be one of {sorted(CATEGORIES)}, got {category!r}"
            )
        state = slim_state(fn)
        tool_name = name or (state.name if state else getattr(fn, "__name__", None))
        if not tool_name or not isinstance(tool_name, str):
            raise ConfigurationError(f"cannot tell the name of {fn!r}; pass name=")
        if tool_name == self.companion_name:
            raise ConfigurationError(f"{tool_name!r} is the name of this toolkit's companion tool")
        bound = rebind(fn, toolkit=self, name=tool_name) if state else fn
        new_state = slim_state(bound)
        model = _schema.args_model(tool_name, bound)
        handle_key = None
        brief_schema: dict[str, Any] | None = None
        if new_state is not None:
            self.notice(new_state)
            handles = new_state.cfg.handles
            if handles is not None:
                handle_key = handles.key or "handle"
            brief_schema = _schema.brief_schema(new_state.cfg)
        schema = _schema.parameters_schema(model)
        if parameters is not None:
            schema = _schema.merge_parameters(parameters, schema)
        if output_schema is None and new_state is not None:
            output_schema = _schema.output_schema(brief_schema)
        spec = ToolSpec(
            name=tool_name,
            description=description or inspect.getdoc(fn) or tool_name.replace("_", " "),
            parameters=schema,
            function=bound,
            is_async=inspect.iscoroutinefunction(bound),
            category=category,
            handle_key=handle_key,
            args_model=model,
            output_schema=dict(output_schema) if output_schema is not None else None,
            returns_envelope=new_state is not None,
            read_only=category in _READ_CATEGORIES if read_only is None else bool(read_only),
        )
        with self._lock:
            self._specs[tool_name] = spec
            self._roles[tool_name] = roles(bound)
            self._secrets[tool_name] = secret_defaults(bound, self._roles[tool_name])
        return bound

    def notice(self, state: SlimState) -> None:
        """Remember a slim tool whose handles this toolkit must resolve."""
        if state.cfg.handles is not None and self._handle_tools.get(state.name) is not state:
            with self._lock:
                self._handle_tools[state.name] = state

    @property
    def tools(self) -> list[ToolSpec]:
        """Every registered tool, then the ``get_record`` companion."""
        return [*self._specs.values(), self._companion_spec()]

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
        # Built once: a pydantic model per call would make every dispatch pay for it.
        cached: ToolSpec | None = self.__dict__.get("_companion")
        if cached is not None:
            return cached
        model = _schema.args_model(self.companion_name, self.get_record)
        spec = ToolSpec(
            name=self.companion_name,
            description=COMPANION_DESCRIPTION,
            parameters=_schema.parameters_schema(model),
            function=self.get_record,
            is_async=False,
            category="read",
            handle_key=None,
            args_model=model,
            output_schema=None,
            returns_envelope=False,
            read_only=True,
        )
        self.__dict__["_companion"] = spec
        return spec

    # sessions and store access ------------------------------------------------------

    def scope(self) -> Scope:
        """The scope of handles made or read now: this toolkit and the bound session."""
        session_id = current_session() or self.default_session
        last = self._scope
        # Reused while the session stays the same (every call of a tool builds one).
        if last is None or last.session != session_id or last.toolkit != self.name:
            last = self._scope = Scope(self.name, session_id)
        return last

    # A store failure of any kind must not fail the tool: each access below degrades to
    # ``UNAVAILABLE`` (and a logged warning), which the pipeline and get_record word for
    # the model.

    def load(self, keys: list[str]) -> Any:
        """Read from the store, or ``UNAVAILABLE`` (logged) when it fails."""
        try:
            return self.store.get_many(self.scope(), keys)
        except Exception as exc:
            return self._unavailable("read", exc)

    def save(self, items: dict[str, Any]) -> Any:
        """Write to the store; the refused keys, or ``UNAVAILABLE`` (logged) when it fails."""
        try:
            return list(self.store.put_many(self.scope(), items))
        except Exception as exc:
            return self._unavailable("write", exc)

    async def aload(self, keys: list[str]) -> Any:
        """:meth:`load` through the store's async API when it has one."""
        if not isinstance(self.store, AsyncHandleStore):
            return self.load(keys)
        try:
            return await self.store.aget_many(self.scope(), keys)
        except Exception as exc:
            return self._unavailable("read", exc)

    async def asave(self, items: dict[str, Any]) -> Any:
        """:meth:`save` through the store's async API when it has one."""
        if not isinstance(self.store, AsyncHandleStore):
            return self.save(items)
        try:
            return list(await self.store.aput_many(self.scope(), items))
        except Exception as exc:
            return self._unavailable("write", exc)

    def _unavailable(self, action: str, exc: Exception) -> Any:
        log.warning("slimtools: handle store %r unavailable on %s: %s", self.name, action, exc)
        return UNAVAILABLE

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
        return render_lookup(self._lookup_sync(handle, source), self, page)[0]

    async def aget_record(self, handle: str | int, source: str | None = None, page: int = 1) -> str:
        """Asynchronous :meth:`get_record` (uses the store's async API when present)."""
        return render_lookup(await self._lookup_async(handle, source), self, page)[0]

    def _lookup_sync(self, handle: Any, source: Any) -> Lookup:
        lookup = Lookup.plan(self, handle, source)
        if lookup.keys:
            lookup = lookup.with_found(self.load(lookup.keys))
        return lookup.with_live(self._fetch_failed)

    async def _lookup_async(self, handle: Any, source: Any) -> Lookup:
        lookup = Lookup.plan(self, handle, source)
        if lookup.keys:
            lookup = lookup.with_found(await self.aload(lookup.keys))
        return await lookup.with_live_async(self._fetch_failed)

    def _fetch_failed(self, tool: str, exc: Exception) -> str:
        """A live ``fetch=`` failure, worded and logged like a tool's."""
        log.warning("slimtools: fetch of tool %r raised %s", tool, type(exc).__name__, exc_info=exc)
        return self._describe(exc, tool)

    # dispatch -----------------------------------------------------------------------

    def call(
        self,
        name: str,
        arguments: str | bytes | Mapping[str, Any] | None = None,
        *,
        session: str | None = None,
    ) -> ToolResult:
        """Validate model-sent ``arguments`` and run tool ``name``; never raises.

        Bad JSON, an unknown tool, wrong, unknown or missing arguments and exceptions
        raised by the tool all come back as ``ToolResult(is_error=True)`` with a message
        the model can act on. An async tool is run to completion when no event loop is
        running in this thread (otherwise use :meth:`acall`).
        """
        prepared = self._prepare(name, arguments)
        if isinstance(prepared, ToolResult):
            return prepared
        spec, kwargs = prepared
        with self._session(session):
            if spec.name == self.companion_name:
                lookup = self._lookup_sync(kwargs.get("handle"), kwargs.get("source"))
                return self._companion_result(lookup, kwargs)
            try:
                value = spec.function(**kwargs)
                if inspect.isawaitable(value):
                    value = _run_awaitable(value, spec.name)
            except Exception as exc:
                return self._failure(spec.name, exc)
        return to_result(value)

    async def acall(
        self,
        name: str,
        arguments: str | bytes | Mapping[str, Any] | None = None,
        *,
        session: str | None = None,
    ) -> ToolResult:
        """Asynchronous :meth:`call`: awaits async tools, runs sync ones in a worker thread.

        A sync tool may block on I/O, so it runs through ``asyncio.to_thread`` (which carries
        the bound session along with the other contextvars) rather than on the event loop.
        """
        prepared = self._prepare(name, arguments)
        if isinstance(prepared, ToolResult):
            return prepared
        spec, kwargs = prepared
        with self._session(session):
            if spec.name == self.companion_name:
                lookup = await self._lookup_async(kwargs.get("handle"), kwargs.get("source"))
                return self._companion_result(lookup, kwargs)
            try:
                if spec.is_async:
                    value = await spec.function(**kwargs)
                else:
                    value = await asyncio.to_thread(spec.function, **kwargs)
                    if inspect.isawaitable(value):
                        value = await value
            except Exception as exc:
                return self._failure(spec.name, exc)
        return to_result(value)

    def _failure(self, name: str, exc: Exception) -> ToolResult:
        """A tool's exception as the model reads it, logged with its traceback."""
        log.warning("slimtools: tool %r raised %s", name, type(exc).__name__, exc_info=exc)
        return ToolResult(f"{name} failed: {self._describe(exc, name)}", is_error=True)

    def _describe(self, exc: Exception, tool: str | None = None) -> str:
        """``on_error(exc)`` without ``tool``'s secret values; the type alone if the hook fails."""
        try:
            text = self.on_error(exc)
            if not isinstance(text, str):
                raise TypeError(f"on_error returned {type(text).__name__}, not text")
        except Exception:
            log.warning(
                "slimtools: the on_error hook of toolkit %r failed", self.name, exc_info=True
            )
            text = type(exc).__name__
        return remove(text, self._secrets.get(tool or "", ()))

    def _companion_result(self, lookup: Lookup, kwargs: dict[str, Any]) -> ToolResult:
        """get_record's answer as a tool result, flagged as an error when it is one."""
        text, is_error = render_lookup(lookup, self, kwargs.get("page", 1))
        return ToolResult(text=text, is_error=is_error, value=None if is_error else text)

    def _prepare(self, name: str, arguments: Any) -> tuple[ToolSpec, dict[str, Any]] | ToolResult:
        try:
            spec = self.spec(name)
        except KeyError:
            known = ", ".join(s.name for s in self.tools)
            return ToolResult(f"Unknown tool {name!r}. Available tools: {known}.", is_error=True)
        parsed = _schema.parse_arguments(arguments)
        if isinstance(parsed, str):
            return ToolResult(f"Invalid arguments for {name}: {parsed}.", is_error=True)
        hidden = self._roles.get(spec.name, NO_ROLES).hidden & parsed.keys()
        if hidden:  # the application's parameters, even where **kwargs would take them
            problems = [f"unknown argument {k!r}" for k in sorted(hidden)]
            return ToolResult(
                _schema.describe_problems(name, problems, spec.parameters), is_error=True
            )
        try:
            validated = spec.args_model.model_validate(parsed)
        except ValidationError as exc:
            return ToolResult(_schema.describe_errors(name, exc, spec.parameters), is_error=True)
        kwargs = {k: getattr(validated, k) for k in validated.model_fields_set}
        kwargs.update(validated.model_extra or {})
        return spec, kwargs

    @contextmanager
    def _session(self, session_id: str | None) -> Iterator[None]:
        with session(session_id) if session_id else nullcontext():
            yield


def to_result(value: Any) -> ToolResult:
    """The model-facing text of a tool's return value."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, Envelope):
        return ToolResult(text=str(value), value=value, structured=value.jsonable())
    if isinstance(value, str):
        return ToolResult(text=value, value=value)
    return ToolResult(text=dumps_str(value), value=value)


def _run_awaitable(value: Any, name: str) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(value))
    close = getattr(value, "close", None)
    if callable(close):
        close()
    raise RuntimeError(f"{name} is async and an event loop is running: use Toolkit.acall")


async def _await(value: Any) -> Any:
    return await value


default_toolkit = Toolkit("default")
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
