"""The ASGI side of forwarding: reading a body under a limit, and noticing a client leave."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from slimtools.gateway._asgi import ClientGoneError, read_body, watching
from slimtools.gateway._request import RefusedError


def receiver(*messages: dict[str, Any], leave_after: float = 3600) -> Any:
    """An ASGI ``receive`` giving ``messages``, then a disconnect ``leave_after`` seconds on."""
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        if queue:
            return queue.pop(0)
        await asyncio.sleep(leave_after)
        return {"type": "http.disconnect"}

    return receive


def test_work_that_ends_first_is_not_cancelled_by_a_later_disconnect() -> None:
    """The client leaving once the answer is sent cancels nothing: the request ends well."""

    async def run() -> str:
        async def work() -> None:
            await asyncio.sleep(0)

        await watching(receiver(leave_after=0.005), work())
        await asyncio.sleep(0.02)  # a stray cancel would land here
        return "ended"

    assert asyncio.run(run()) == "ended"


def test_a_client_that_leaves_first_cancels_the_work() -> None:
    """The upstream exchange is cancelled as soon as the client disconnects."""
    cancelled = []

    async def run() -> None:
        async def work() -> None:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

        await watching(receiver(leave_after=0), work())

    with pytest.raises(ClientGoneError):
        asyncio.run(run())
    assert cancelled == [True]


def test_a_cancel_from_elsewhere_stays_a_cancel() -> None:
    """A server shutting down cancels the request: that is not the client leaving."""

    async def run() -> None:
        async def work() -> None:
            await asyncio.sleep(30)

        task = asyncio.ensure_future(watching(receiver(), work()))
        await asyncio.sleep(0.01)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(run())


def test_a_body_past_the_limit_is_refused_as_it_arrives() -> None:
    """Chunks adding up past the limit give 413 before the rest is read."""
    receive = receiver(
        {"type": "http.request", "body": b"x" * 600, "more_body": True},
        {"type": "http.request", "body": b"x" * 600, "more_body": True},
    )
    with pytest.raises(RefusedError) as refused:
        asyncio.run(read_body({"headers": []}, receive, 1000))
    assert refused.value.status == 413
