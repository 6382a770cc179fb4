"""The two drivers of the sans-I/O engines, and the requests the engines yield.

The slimming pipeline (``slimtools._core.pipeline.run``), ``get_record``
(``slimtools._core.lookup.get_record``) and dispatch (``slimtools._core.dispatch``) are
generators: they yield a request (run the tool, read or write the handle store, call a
live ``fetch=``) and receive its answer. ``drive_sync`` answers them in the calling thread
and ``drive_async`` with ``await``, so each rule is written once and only these two
functions differ between the synchronous and the asynchronous world.

An exception raised while answering a request is thrown into the engine where it yielded:
the engine decides whether it is a result (a failed live fetch becomes a message) or not
(a tool's exception propagates).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

if TYPE_CHECKING:
    from slimtools.stores.base import AsyncHandleStore, HandleStore, Scope

T = TypeVar("T")

# The requests below are created on every call and never changed afterwards, yet are not
# ``frozen``: see the note on ``slimtools._core.config.Call``.


@dataclass(slots=True)
class Invoke:
    """Run a callable; answer with its result.

    Without ``fn``, the wrapped tool the driver was given (the pipeline's one request per
    call). With ``fn``: ``fn(*args, **kwargs)``, awaited when it returns an awaitable. A
    synchronous driver runs such an awaitable to completion when no event loop runs in its
    thread, and otherwise raises ``RuntimeError(under_loop)``; with ``in_thread`` the
    asynchronous driver runs ``fn`` in a worker thread, so a blocking tool never stalls the
    event loop.
    """

    fn: Callable[..., Any] | None = None
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    in_thread: bool = False
    under_loop: str = ""


INVOKE = Invoke()
"""The request to run the wrapped tool (it carries nothing)."""


@dataclass(slots=True)
class Load:
    """Read keys from the handle store; answer with a dict, or ``UNAVAILABLE``."""

    keys: list[str]


@dataclass(slots=True)
class Save:
    """Write items to the handle store; answer with refused keys, or ``UNAVAILABLE``."""

    items: dict[str, Any]


UNAVAILABLE: Any = object()
"""Answer to ``Load``/``Save`` when the store cannot be reached."""

Request = Invoke | Load | Save
Engine = Generator[Request, Any, T]


class Port(Protocol):
    """Where the drivers send store requests (``slimtools._core.keeper.Keeper``)."""

    @property
    def store(self) -> HandleStore:
        """The handle store."""

    @property
    def store_is_async(self) -> bool:
        """Whether ``store`` has the asynchronous API, which ``drive_async`` then uses."""

    def scope(self) -> Scope:
        """The scope of handles made or read now."""

    def unavailable(self, action: str, exc: Exception) -> Any:
        """Log a store failure during ``action`` (read, write); return ``UNAVAILABLE``."""


_NO_KWARGS: dict[str, Any] = {}


def drive_sync(
    gen: Engine[T],
    port: Port,
    tool: Callable[..., Any] | None = None,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] = _NO_KWARGS,
) -> T:
    """Run an engine to its result, answering its requests in this thread.

    ``tool(*args, **kwargs)`` answers the engine's ``INVOKE`` (passed apart, not as a
    closure: one call frame less on every tool call).
    """
    answer: Any = None
    error: Exception | None = None
    try:
        while True:
            if error is None:
                op = gen.send(answer)
            else:
                op, error = gen.throw(error), None
            try:
                if isinstance(op, Invoke):
                    if op.fn is None:
                        answer = tool(*args, **kwargs) if tool is not None else None
                    else:
                        answer = op.fn(*op.args, **op.kwargs)
                        if inspect.isawaitable(answer):
                            answer = _run_to_completion(answer, op.under_loop)
                elif isinstance(op, Load):
                    answer = _load(port, op.keys)
                else:
                    answer = _save(port, op.items)
            except Exception as exc:
                error = exc
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    finally:
        gen.close()


async def drive_async(
    gen: Engine[T],
    port: Port,
    tool: Callable[..., Awaitable[Any]] | None = None,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] = _NO_KWARGS,
) -> T:
    """Run an engine to its result, awaiting the tool, live fetches and an async store."""
    answer: Any = None
    error: Exception | None = None
    try:
        while True:
            if error is None:
                op = gen.send(answer)
            else:
                op, error = gen.throw(error), None
            try:
                if isinstance(op, Invoke):
                    if op.fn is None:
                        answer = await tool(*args, **kwargs) if tool is not None else None
                    else:
                        if op.in_thread:
                            answer = await asyncio.to_thread(op.fn, *op.args, **op.kwargs)
                        else:
                            answer = op.fn(*op.args, **op.kwargs)
                        if inspect.isawaitable(answer):
                            answer = await answer
                elif not port.store_is_async:
                    answer = _load(port, op.keys) if isinstance(op, Load) else _save(port, op.items)
                elif isinstance(op, Load):
                    try:
                        store = cast("AsyncHandleStore", port.store)
                        answer = await store.aget_many(port.scope(), op.keys)
                    except Exception as exc:
                        answer = port.unavailable("read", exc)
                else:
                    try:
                        store = cast("AsyncHandleStore", port.store)
                        answer = list(await store.aput_many(port.scope(), op.items))
                    except Exception as exc:
                        answer = port.unavailable("write", exc)
            except Exception as exc:
                error = exc
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    finally:
        gen.close()


# A store failure of any kind must not fail the tool: each store access degrades to
# ``UNAVAILABLE`` (and a logged warning), which the pipeline and get_record word for the model.


def _load(port: Port, keys: list[str]) -> Any:
    """The store's answer to a read, or ``UNAVAILABLE``."""
    try:
        return port.store.get_many(port.scope(), keys)
    except Exception as exc:
        return port.unavailable("read", exc)


def _save(port: Port, items: dict[str, Any]) -> Any:
    """The keys the store refused in a write, or ``UNAVAILABLE``."""
    try:
        return list(port.store.put_many(port.scope(), items))
    except Exception as exc:
        return port.unavailable("write", exc)


def _run_to_completion(value: Awaitable[Any], under_loop: str) -> Any:
    """The result of ``value`` when no event loop runs in this thread; else ``under_loop``.

    Under a running loop, blocking on the awaitable would deadlock that loop, so it is
    closed unawaited (no "never awaited" warning) and the caller is told what to use.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(value))
    close = getattr(value, "close", None)
    if callable(close):
        close()
    raise RuntimeError(under_loop)


async def _await(value: Awaitable[Any]) -> Any:
    return await value
