"""The two drivers answer the engines' requests alike, sync or async."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest

from slimtools._core.drive import INVOKE, UNAVAILABLE, Invoke, Load, Save, drive_async, drive_sync
from slimtools._core.keeper import Keeper
from slimtools.stores.memory import MemoryStore
from tests.core.test_get_record import BrokenStore


def _engine(fail: Exception | None = None) -> Generator[Any, Any, list[Any]]:
    """Save, load, run the tool, then a callable that may fail; the answers in order."""
    seen: list[Any] = [(yield Save({"k": 1}))]
    seen.append((yield Load(["k", "absent"])))
    seen.append((yield INVOKE))

    def boom() -> Any:
        if fail is not None:
            raise fail
        return "fine"

    try:
        seen.append((yield Invoke(boom)))
    except LookupError as exc:
        seen.append(f"caught {exc!r}")
    return seen


def test_drive_sync_answers_every_request_in_order():
    """Save gives refused keys, Load the found values, Invoke the tool's result."""
    keeper = Keeper("k", MemoryStore())
    assert drive_sync(_engine(), keeper, lambda: "tool", (), {}) == [[], {"k": 1}, "tool", "fine"]


async def test_drive_async_answers_like_drive_sync():
    """The async driver gives the same answers, awaiting the tool."""
    keeper = Keeper("k", MemoryStore())

    async def tool() -> str:
        return "tool"

    assert await drive_async(_engine(), keeper, tool) == [[], {"k": 1}, "tool", "fine"]


def test_an_exception_is_thrown_into_the_engine_where_it_yielded():
    """The engine may catch what answering its request raised."""
    keeper = Keeper("k", MemoryStore())
    answers = drive_sync(_engine(KeyError("x")), keeper, lambda: "tool", (), {})
    assert answers[-1] == "caught KeyError('x')"


def test_an_exception_the_engine_does_not_catch_propagates():
    """An error the engine lets through reaches the driver's caller unchanged."""
    keeper = Keeper("k", MemoryStore())
    error = ValueError("tool broke")
    with pytest.raises(ValueError, match="tool broke") as raised:
        drive_sync(_engine(error), keeper, lambda: "tool", (), {})
    assert raised.value is error


def test_a_failing_store_is_answered_unavailable():
    """Load and Save on a store that raises get UNAVAILABLE, not the exception."""
    keeper = Keeper("k", BrokenStore())
    answers = drive_sync(_engine(), keeper, lambda: "tool", (), {})
    assert answers[:2] == [UNAVAILABLE, UNAVAILABLE]


def test_a_sync_driver_runs_an_awaitable_when_no_loop_runs():
    """An async callable is run to completion when no event loop runs in the thread."""

    async def fetch() -> str:
        return "awaited"

    def engine() -> Generator[Any, Any, Any]:
        return (yield Invoke(fetch))

    assert drive_sync(engine(), Keeper("k", MemoryStore())) == "awaited"


async def test_a_sync_driver_under_a_running_loop_raises_the_requests_message():
    """Under a running loop the awaitable is closed and ``under_loop`` is raised."""

    async def fetch() -> str:
        await asyncio.sleep(0)
        return "never"

    def engine() -> Generator[Any, Any, Any]:
        return (yield Invoke(fetch, under_loop="use the async one"))

    with pytest.raises(RuntimeError, match="use the async one"):
        drive_sync(engine(), Keeper("k", MemoryStore()))
