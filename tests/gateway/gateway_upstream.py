"""A scripted model API on loopback: what the gateway tests put behind the gateway.

It speaks Anthropic Messages, Chat Completions and Responses, streamed and not. Each
request whose tools include the scripted tool gets a call of it until the history holds
``rounds`` of them, then a final text; every other request gets a short text. It records
every request it receives (path, headers, raw body) and bills each with a usage of its own
count (a message's tokens are its JSON length / 4; the prefix shared with the previous
request of the same conversation is a cache read), and keeps the totals it reported.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass
class Received:
    """One request as the upstream saw it."""

    path: str
    method: str
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        """The parsed JSON body."""
        return orjson.loads(self.raw)


@dataclass
class Script:
    """What the fake model does: call ``tool`` with ``args(round)`` for ``rounds`` rounds."""

    tool: str = "read_log"
    rounds: int = 4
    args: Callable[[int], dict[str, Any]] = lambda n: {"name": f"log{n}"}


@dataclass
class FakeUpstream:
    """The recorder and its totals."""

    script: Script = field(default_factory=Script)
    received: list[Received] = field(default_factory=list)
    billed: dict[str, int] = field(
        default_factory=lambda: {"input": 0, "cache_read": 0, "cache_write": 0, "output": 0}
    )
    cancelled: int = 0
    missed: list[int] = field(default_factory=list)
    _previous: dict[str, list[bytes]] = field(default_factory=dict)

    def model_requests(self, path: str) -> list[Received]:
        """The requests received on one model route, in order."""
        return [r for r in self.received if r.path == path]

    def bill(self, history: list[Any]) -> tuple[int, int, int]:
        """(uncached, cache read, cache write) tokens of a request, by this upstream's count."""
        pieces = [orjson.dumps(_strip_marks(m)) for m in history]
        key = pieces[0].decode()[:200] if pieces else ""
        before = self._previous.get(key, [])
        shared = 0
        while shared < min(len(before), len(pieces)) and before[shared] == pieces[shared]:
            shared += 1
        self._previous[key] = pieces
        # What the cache held of the previous request and this one could not read.
        self.missed.append(sum(len(p) // 4 for p in before[shared:]))
        read = sum(len(p) // 4 for p in pieces[:shared])
        write = sum(len(p) // 4 for p in pieces[shared:])
        return 0, read, write


def _strip_marks(message: Any) -> Any:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return message
    blocks = [
        {k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
        for b in message["content"]
    ]
    return {**message, "content": blocks}


def _calls_made(history: list[Any], tool: str) -> int:
    text = orjson.dumps(history)
    return text.count(f'"name":"{tool}"'.encode())


def _wants_tool(body: Any, tool: str) -> bool:
    tools = body.get("tools") or []
    names = {t.get("name") or (t.get("function") or {}).get("name") for t in tools}
    return tool in names


def create_upstream(fake: FakeUpstream) -> Starlette:
    """The fake model API as a Starlette app."""

    async def record(request: Request, *, parse: bool = True) -> tuple[Received, Any]:
        raw = await request.body()
        got = Received(request.url.path, request.method, dict(request.headers), raw)
        fake.received.append(got)
        return got, orjson.loads(raw) if raw and parse else None

    async def messages(request: Request) -> Response:
        _, body = await record(request)
        return _anthropic(fake, body)

    async def count_tokens(request: Request) -> Response:
        _, body = await record(request)
        return JSONResponse({"input_tokens": len(orjson.dumps(body["messages"])) // 4})

    async def chat(request: Request) -> Response:
        _, body = await record(request)
        return _chat(fake, body)

    async def responses(request: Request) -> Response:
        _, body = await record(request)
        return _responses(fake, body)

    async def other(request: Request) -> Response:
        got, _ = await record(request, parse=False)
        return JSONResponse(
            {"path": got.path, "method": got.method, "auth": got.headers.get("x-api-key")},
            headers={"x-upstream": "fake"},
        )

    async def odd_header(request: Request) -> Response:
        """A header value outside Latin-1, as UTF-8 bytes (what some proxies send)."""
        await record(request, parse=False)
        response = JSONResponse({"ok": True})
        response.raw_headers.append((b"x-note", "café ☃".encode()))
        return response

    async def cookie(request: Request) -> Response:
        """Sets a cookie, as a provider's edge does (``__cf_bm``)."""
        await record(request, parse=False)
        response = JSONResponse({"ok": True})
        response.set_cookie("session", "of-the-first-client")
        return response

    async def slow(request: Request) -> Response:
        """Answers after ``?seconds=`` (default 30), unless the caller goes away first."""
        await record(request, parse=False)
        deadline = time.monotonic() + float(request.query_params.get("seconds", "30"))
        while time.monotonic() < deadline:
            if await request.is_disconnected():
                fake.cancelled += 1
                return Response(status_code=499)
            await anyio.sleep(0.02)
        return JSONResponse({"slow": True})

    async def failing(request: Request) -> Response:
        await record(request, parse=False)
        return JSONResponse({"type": "error", "error": {"type": "overloaded_error"}}, 529)

    async def gone(request: Request, exc: Exception) -> Response:
        """The gateway cancelled the request (its client went away) while it was read."""
        fake.cancelled += 1
        return Response(status_code=499)

    return Starlette(
        exception_handlers={ClientDisconnect: gone},
        routes=[
            Route("/fault/odd-header", odd_header, methods=["GET", "POST"]),
            Route("/fault/slow", slow, methods=["GET", "POST"]),
            Route("/fault/cookie", cookie, methods=["GET"]),
            Route("/fault/error", failing, methods=["GET", "POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/{path:path}", other, methods=["GET", "HEAD", "POST", "PUT", "DELETE"]),
        ],
    )


def _account(
    fake: FakeUpstream, history: list[Any], output: int, *, writes: bool = True
) -> tuple[int, int, int]:
    """Bill a request; OpenAI bills no cache writes (what is not read is plain input)."""
    plain, read, write = fake.bill(history)
    if not writes:
        plain, write = plain + write, 0
    fake.billed["input"] += plain
    fake.billed["cache_read"] += read
    fake.billed["cache_write"] += write
    fake.billed["output"] += output
    return plain, read, write


def _anthropic(fake: FakeUpstream, body: Any) -> Response:
    script = fake.script
    calls = _calls_made(body["messages"], script.tool)
    call = _wants_tool(body, script.tool) and calls < script.rounds
    plain, read, write = _account(fake, body["messages"], 7)
    usage = {
        "input_tokens": plain,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "output_tokens": 7,
    }
    if call:
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": f"toolu_{calls + 1:04d}",
            "name": script.tool,
            "input": script.args(calls + 1),
        }
    else:
        block = {"type": "text", "text": "All done."}
    message = {
        "id": f"msg_{len(fake.received)}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": [block],
        "stop_reason": "tool_use" if call else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }
    asked = body.get("diagnostics")
    if isinstance(asked, dict):  # compared with the previous request of the conversation
        missed = fake.missed[-1] if asked.get("previous_message_id") else 0
        reason = {"type": "messages_changed", "cache_missed_input_tokens": missed}
        message["diagnostics"] = {"cache_miss_reason": reason if missed else None}
    if not body.get("stream"):
        return JSONResponse(message)
    return StreamingResponse(_anthropic_events(message), media_type="text/event-stream")


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + orjson.dumps(data) + b"\n\n"


async def _anthropic_events(message: dict[str, Any]) -> AsyncIterator[bytes]:
    block = message["content"][0]
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield _sse("message_start", {"type": "message_start", "message": start})
    if block["type"] == "tool_use":
        empty = {**block, "input": {}}
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": empty},
        )
        delta = {"type": "input_json_delta", "partial_json": orjson.dumps(block["input"]).decode()}
    else:
        yield _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        delta = {"type": "text_delta", "text": block["text"]}
    yield _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def _chat(fake: FakeUpstream, body: Any) -> Response:
    script = fake.script
    calls = _calls_made(body["messages"], script.tool)
    call = _wants_tool(body, script.tool) and calls < script.rounds
    plain, read, write = _account(fake, body["messages"], 5, writes=False)
    usage = {
        "prompt_tokens": plain + read + write,
        "completion_tokens": 5,
        "total_tokens": plain + read + write + 5,
        "prompt_tokens_details": {"cached_tokens": read},
    }
    message: dict[str, Any] = {"role": "assistant", "content": None if call else "All done."}
    if call:
        message["tool_calls"] = [
            {
                "id": f"call_{calls + 1}",
                "type": "function",
                "function": {
                    "name": script.tool,
                    "arguments": orjson.dumps(script.args(calls + 1)).decode(),
                },
            }
        ]
    finish = "tool_calls" if call else "stop"
    base = {"id": "chatcmpl-1", "created": 1, "model": body.get("model", "fake")}
    if not body.get("stream"):
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return JSONResponse(
            {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        )

    async def events() -> AsyncIterator[bytes]:
        chunk = {**base, "object": "chat.completion.chunk"}
        delta: dict[str, Any] = {"role": "assistant", "content": message["content"]}
        if call:
            delta["tool_calls"] = [{"index": 0, **message["tool_calls"][0]}]
        yield _sse(
            None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        )
        yield _sse(None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            yield _sse(None, {**chunk, "choices": [], "usage": usage})
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def _responses(fake: FakeUpstream, body: Any) -> Response:
    script = fake.script
    items = body.get("input") if isinstance(body.get("input"), list) else []
    calls = _calls_made(items, script.tool)
    call = _wants_tool(body, script.tool) and calls < script.rounds
    plain, read, write = _account(fake, items, 3, writes=False)
    usage = {
        "input_tokens": plain + read + write,
        "input_tokens_details": {"cached_tokens": read},
        "output_tokens": 3,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": plain + read + write + 3,
    }
    if call:
        output: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{calls + 1}",
            "call_id": f"call_{calls + 1}",
            "name": script.tool,
            "arguments": orjson.dumps(script.args(calls + 1)).decode(),
            "status": "completed",
        }
    else:
        output = {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "All done.", "annotations": []}],
        }
    response = {
        "id": f"resp_{len(fake.received)}",
        "object": "response",
        "created_at": 1,
        "model": body.get("model", "fake"),
        "status": "completed",
        "output": [output],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": body.get("tools", []),
        "usage": usage,
    }
    if isinstance(body.get("prompt_cache_options"), dict):
        response["prompt_cache_diagnostics"] = {"cache_missed_tokens": fake.missed[-1]}
    if not body.get("stream"):
        return JSONResponse(response)

    async def events() -> AsyncIterator[bytes]:
        created = {**response, "status": "in_progress", "output": [], "usage": None}
        yield _sse(
            "response.created",
            {"type": "response.created", "response": created, "sequence_number": 0},
        )
        yield _sse(
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": output,
                "sequence_number": 1,
            },
        )
        yield _sse(
            "response.completed",
            {"type": "response.completed", "response": response, "sequence_number": 2},
        )

    return StreamingResponse(events(), media_type="text/event-stream")


@contextlib.contextmanager
def serve(app: Any, *, tls: tuple[str, str] | None = None) -> Iterator[str]:
    """Serve an ASGI app with uvicorn on a free 127.0.0.1 port; yields its base URL
    (``https://localhost:…`` with ``tls``, a key file and a certificate file)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    files = {"ssl_keyfile": tls[0], "ssl_certfile": tls[1]} if tls else {}
    config = uvicorn.Config(app, log_level="warning", lifespan="on", **files)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60  # a loaded machine may take seconds to start a thread
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start within 60 s")
        time.sleep(0.02)
    try:
        yield f"https://localhost:{port}" if tls else f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def worker_history(worker: int, rounds: int, *, shared: bool = True, size: int = 900) -> list[Any]:
    """Worker ``worker``'s Anthropic history after ``rounds`` tool calls of ``size``-character
    results: every worker starts with the same first message (``shared``, as parallel
    workers of one agent do) or with its own."""
    first = "You are a worker. Read the logs you are given." + ("" if shared else f" ({worker})")
    history: list[Any] = [{"role": "user", "content": first}]
    for n in range(1, rounds + 1):
        call = f"toolu_{worker}_{n}"
        history.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": call, "name": "read_log", "input": {"n": n}}]})  # fmt: skip
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call,
             "content": f"worker {worker} log {n}: " + "x" * size}]})  # fmt: skip
    return history
