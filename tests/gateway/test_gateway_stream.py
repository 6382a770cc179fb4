"""Streaming through the gateway: each event is relayed as it arrives, not at the end."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from slimtools.clearing import ClearingPolicy
from slimtools.gateway import create_app
from slimtools.instrumentation import ClearingPass, observe
from tests.gateway.gateway_upstream import FakeUpstream, create_upstream, serve


def test_first_event_reaches_the_agent_before_the_upstream_sends_the_next() -> None:
    """The upstream holds its second event until the agent has the first: no buffering."""
    seen_first = threading.Event()
    held: list[bool] = []

    async def events() -> AsyncIterator[bytes]:
        yield b'event: message_start\ndata: {"type": "message_start"}\n\n'
        for _ in range(500):  # bounded: 10 s
            if seen_first.is_set():
                break
            await anyio.sleep(0.02)
        held.append(seen_first.is_set())
        yield b'event: message_stop\ndata: {"type": "message_stop"}\n\n'

    async def messages(request: Request) -> StreamingResponse:
        await request.body()
        return StreamingResponse(events(), media_type="text/event-stream")

    upstream = Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])])
    body = orjson.dumps({"model": "m", "stream": True, "messages": [{"role": "user",
                         "content": "hi"}]})  # fmt: skip
    with (
        serve(upstream) as up,
        serve(create_app(up, ClearingPolicy())) as url,
        httpx.stream("POST", url + "/v1/messages", content=body, timeout=30) as answer,
    ):
        lines = answer.iter_lines()
        assert next(lines) == "event: message_start"
        seen_first.set()
        rest = list(lines)
    assert held == [True]
    assert "event: message_stop" in rest


def test_gateway_passes_are_reported_as_clearing_events() -> None:
    """Each cleared request emits a ``ClearingPass`` under the conversation's session."""
    heard: list[Any] = []
    history = [{"role": "user", "content": "hi"}]
    body = orjson.dumps({"model": "m", "max_tokens": 8, "messages": history})
    with (
        observe(heard.append),
        serve(create_upstream(FakeUpstream())) as up,
        serve(create_app(up)) as url,
    ):
        httpx.post(url + "/v1/messages", content=body, timeout=30)
    passes = [e for e in heard if isinstance(e, ClearingPass)]
    assert len(passes) == 1
    assert passes[0].session is not None
    assert passes[0].session.startswith("gateway:")
