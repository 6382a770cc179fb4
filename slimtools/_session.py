"""The session a handle belongs to, bound per context (thread, asyncio task) with a contextvar."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_CURRENT: ContextVar[str | None] = ContextVar("slimtools_session", default=None)


@contextmanager
def session(session_id: str) -> Iterator[str]:
    """Bind ``session_id`` for handles made and resolved inside the ``with`` block.

    Handles are scoped to a toolkit and a session: a handle issued in one session never
    resolves in another. Outside any ``session`` block a toolkit uses its own default
    session (``"default"`` unless given), so processes sharing a durable store resolve each
    other's handles. Binding follows contextvars, so it flows into asyncio tasks.
    """
    if not isinstance(session_id, str) or not session_id:
        raise ValueError("session_id must be a non-empty string")
    token = _CURRENT.set(session_id)
    try:
        yield session_id
    finally:
        _CURRENT.reset(token)


def current_session() -> str | None:
    """The session bound in this context, or ``None``."""
    return _CURRENT.get()
