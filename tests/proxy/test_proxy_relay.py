"""Which client an upstream's own request or notification goes to (``forwarding.Relay``).

Upstream callbacks run in the upstream client's task, outside any request of the proxy's
clients: the relay routes them to the one client they can be for, and to nobody when that
is ambiguous, so one client never hears of another's call.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import mcp_types as types

from slimtools.proxy.forwarding import Relay


class FakeSession:
    """A client session that records what it was sent."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def send_notification(self, notification: Any) -> None:
        self.sent.append(notification)

    async def send_request(self, request: Any, result_type: Any) -> Any:
        self.sent.append(request)
        return types.ListRootsResult(roots=[])


class FakeContext:
    def __init__(self, session: FakeSession) -> None:
        self.session = session
        self.meta = None
        self.request_id = 1


NOTE = types.ResourceListChangedNotification()


async def outside(coro: Any) -> Any:
    """Run ``coro`` as the upstream's callbacks run: in a task with no request bound."""
    return await asyncio.create_task(coro, context=contextvars.Context())


async def served(relay: Relay, session: FakeSession, during: Any) -> None:
    """Serve one request of ``session``; ``during`` runs while it is in flight."""

    async def call_next(ctx: Any) -> None:
        await during()

    await relay.middleware(FakeContext(session), call_next)  # type: ignore[arg-type]


async def test_with_one_client_a_notification_reaches_it():
    """stdio: the only client seen gets the upstream's notifications between calls."""
    relay, alice = Relay(), FakeSession()
    await served(relay, alice, lambda: asyncio.sleep(0))
    await outside(relay.message(NOTE))
    assert alice.sent == [NOTE]


async def test_with_two_idle_clients_a_notification_reaches_neither():
    """Two clients, nothing in flight: nobody is told, rather than the wrong one."""
    relay, alice, bob = Relay(), FakeSession(), FakeSession()
    await served(relay, alice, lambda: asyncio.sleep(0))
    await served(relay, bob, lambda: asyncio.sleep(0))
    await outside(relay.message(NOTE))
    assert alice.sent == bob.sent == []


async def test_with_two_idle_clients_an_upstream_request_gets_an_error():
    """Two clients, nothing in flight: roots/list from the upstream is refused."""
    relay, alice, bob = Relay(), FakeSession(), FakeSession()
    await served(relay, alice, lambda: asyncio.sleep(0))
    await served(relay, bob, lambda: asyncio.sleep(0))
    answer = await outside(relay.list_roots(None))
    assert isinstance(answer, types.ErrorData)
    assert alice.sent == bob.sent == []


async def test_a_request_during_one_clients_call_goes_to_that_client():
    """Bob is connected, Alice's call is in flight: the upstream's request goes to Alice."""
    relay, alice, bob = Relay(), FakeSession(), FakeSession()
    await served(relay, bob, lambda: asyncio.sleep(0))
    await served(relay, alice, lambda: outside(relay.list_roots(None)))
    assert len(alice.sent) == 1
    assert bob.sent == []


async def test_a_request_before_any_client_waits_for_the_first_one():
    """An upstream's roots request sent at its start is asked of the client that joins."""
    relay, alice = Relay(), FakeSession()

    async def join_later() -> None:
        await asyncio.sleep(0.1)
        relay.join(alice)  # type: ignore[arg-type]
        relay.seen.add(alice)  # type: ignore[arg-type]  (its initialize request was seen)

    asked = asyncio.create_task(outside(relay.list_roots(None)))
    await join_later()
    answer = await asked
    assert isinstance(answer, types.ListRootsResult)
    assert [type(m).__name__ for m in alice.sent] == ["ListRootsRequest"]


async def test_a_tool_call_waits_while_the_upstream_asks_for_roots():
    """A call made while roots are being asked reaches the upstream only after the answer."""
    relay, alice = Relay(), FakeSession()
    relay.join(alice)  # type: ignore[arg-type]
    relay.seen.add(alice)  # type: ignore[arg-type]
    order: list[str] = []
    answered = asyncio.Event()

    async def slow(request: Any, result_type: Any) -> Any:
        await answered.wait()
        order.append("roots answered")
        return types.ListRootsResult(roots=[])

    alice.send_request = slow  # type: ignore[method-assign]
    asking = asyncio.create_task(outside(relay.list_roots(None)))
    await asyncio.sleep(0.05)

    class Call(FakeContext):
        method = "tools/call"

    async def call_next(ctx: Any) -> None:
        order.append("call forwarded")

    calling = asyncio.create_task(relay.middleware(Call(alice), call_next))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    answered.set()
    await asyncio.gather(asking, calling)
    assert order == ["roots answered", "call forwarded"]
