"""Who hears the events: the global registry, the delivery rule, and the bound call id.

Three kinds of listener hear an event: the one of the toolkit that ran the tool
(``Toolkit(on_event=...)``), the one of the clearing policy (``ClearingPolicy(on_event=...)``)
and every listener subscribed here with :func:`observe`. Emission points check
``REGISTRY.listeners`` (an immutable tuple, replaced whole under a lock, so reading it needs
no lock) and their own listener before building anything: when nobody listens an event costs
one attribute check.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import TracebackType

from slimtools.errors import ConfigurationError
from slimtools.instrumentation._events import Event, Listener

log = logging.getLogger("slimtools")

CALL_ID: ContextVar[str | None] = ContextVar("slimtools_call_id", default=None)
"""The model's tool-call id of the call running now, when its caller bound one."""


class Subscription:
    """A listener subscribed with :func:`observe`; ``unsubscribe()`` (or leaving a ``with``
    block) stops its events.

    Each call of ``observe`` makes one subscription, even for a listener already subscribed:
    that listener then hears each event once per subscription.
    """

    __slots__ = ("_registry", "listener")

    def __init__(self, registry: _Registry, listener: Listener) -> None:
        self._registry = registry
        self.listener = listener
        """The subscribed callable."""

    @property
    def active(self) -> bool:
        """Whether the listener still receives events."""
        return self in self._registry.listeners

    def unsubscribe(self) -> None:
        """Stop sending events to the listener (again: nothing happens). Thread-safe."""
        self._registry.remove(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.unsubscribe()

    def __repr__(self) -> str:
        state = "active" if self.active else "unsubscribed"
        return f"<Subscription {self.listener!r} ({state})>"


class _Registry:
    """The global listeners, as a tuple replaced on each change (copy on write)."""

    __slots__ = ("_lock", "listeners")

    def __init__(self) -> None:
        self.listeners: tuple[Subscription, ...] = ()
        self._lock = threading.Lock()

    def add(self, listener: Listener) -> Subscription:
        subscription = Subscription(self, listener)
        with self._lock:
            self.listeners = (*self.listeners, subscription)
        return subscription

    def remove(self, subscription: Subscription) -> None:
        with self._lock:
            self.listeners = tuple(s for s in self.listeners if s is not subscription)


REGISTRY = _Registry()
"""Every listener subscribed with :func:`observe`."""


def observe(listener: Listener) -> Subscription:
    """Send every slimtools event of this process to ``listener`` until unsubscribed.

    Every slimmed call, ``get_record`` answer and clearing pass, whichever toolkit or policy
    made it, is reported as a :class:`SlimmedCall`, :class:`RecordLookup` or
    :class:`ClearingPass` (and cache breaks and misses as :class:`CacheBreak` and
    :class:`ProviderCacheMiss`), synchronously, in the thread that made it, after the
    toolkit's or policy's own ``on_event`` listener. Keep listeners fast. One that raises
    is logged on the ``slimtools`` logger (a WARNING with the traceback, once per listener
    and exception type) and never fails the tool call or the clearing pass. Adding and
    removing listeners is thread-safe.

    Use it as a context manager, or keep the subscription and unsubscribe later::

        with slimtools.observe(events.append):
            search_logs("timeout")

        subscription = slimtools.observe(print)
        ...
        subscription.unsubscribe()

    Raises:
        ConfigurationError: ``listener`` is not callable.
    """
    check_listener(listener, "observe(listener)")
    return REGISTRY.add(listener)


def check_listener(listener: object, where: str) -> None:
    """Refuse a listener that cannot be called, naming the option it was given to."""
    if not callable(listener):
        raise ConfigurationError(
            f"{where} must be callable (event -> None), got {type(listener).__name__}"
        )


def emit(event: Event, local: Listener | None) -> None:
    """Deliver ``event`` to ``local`` (a toolkit's or policy's listener), then globally."""
    if local is not None:
        _deliver(local, event)
    for subscription in REGISTRY.listeners:
        _deliver(subscription.listener, event)


def _deliver(listener: Listener, event: Event) -> None:
    try:
        listener(event)
    except Exception as exc:
        _failed(listener, exc)


# Which listeners already logged which exception type: (id, type) -> the listener, kept so
# that its id cannot be reused by another while the entry exists. Bounded: a process with
# many failing listeners logs some failures twice rather than growing without end.
_WARNED: dict[tuple[int, type[BaseException]], Listener] = {}
_WARNED_MAX = 256
_WARNED_LOCK = threading.Lock()


def _failed(listener: Listener, exc: Exception) -> None:
    """Log a listener's failure: a WARNING the first time per exception type, then DEBUG."""
    key = (id(listener), type(exc))
    with _WARNED_LOCK:
        first = key not in _WARNED
        if first:
            if len(_WARNED) >= _WARNED_MAX:
                _WARNED.clear()
            _WARNED[key] = listener
    level = logging.WARNING if first else logging.DEBUG
    log.log(
        level,
        "slimtools: event listener %r raised %s; the event was skipped for it",
        listener,
        type(exc).__name__,
        exc_info=exc,
    )


@contextmanager
def tool_call_id(call_id: str | None) -> Iterator[None]:
    """Bind the model's tool-call id for the calls made in the block (``call_id`` of events).

    ``Toolkit.call(..., call_id=...)`` binds it for you, and the OpenAI, Anthropic and
    Agents SDK adapters pass the id they read; bind it yourself when you call decorated
    tools directly. It follows contextvars (threads started by frameworks, asyncio tasks).
    """
    token = CALL_ID.set(call_id)
    try:
        yield
    finally:
        CALL_ID.reset(token)
