"""A scripted Anthropic Messages API on loopback: the offline model the CLI-driven examples use.

Each request that offers the agent's tools gets the next step of the script: a step is a
function of the request's messages returning the ``tool_use`` input to send (with the tool's
name), or None for a final text. Answers are streamed as the CLI asks. Every request is
recorded, so an example can print what the model was sent.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

Step = Callable[[list[Any]], "tuple[str, dict[str, Any]] | None"]


class ScriptedModel:
    """Plays ``steps`` in order to the requests that offer ``tool`` (the agent's main loop)."""

    def __init__(self, tool: str, steps: list[Step]) -> None:
        self.tool, self.steps = tool, steps
        self.requests: list[Any] = []

    def answer(self, body: Any) -> dict[str, Any]:
        """The next message: the script's tool call, or a final text."""
        self.requests.append(body)
        offered = {t.get("name") for t in body.get("tools") or []}
        done = sum(
            1 for m in body["messages"] if m["role"] == "assistant" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_use"
        )  # fmt: skip
        call = None
        if self.tool in offered and done < len(self.steps):
            call = self.steps[done](body["messages"])
        block: dict[str, Any] = {"type": "text", "text": "All done."}
        if call is not None:
            name, arguments = call
            block = {"type": "tool_use", "id": f"toolu_{done + 1:04d}", "name": name,
                     "input": arguments}  # fmt: skip
        return {
            "id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant",
            "model": body.get("model", "scripted"), "content": [block],
            "stop_reason": "tool_use" if call else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }  # fmt: skip


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: ".encode() + orjson.dumps(data) + b"\n\n"


def _events(message: dict[str, Any]) -> Iterator[bytes]:
    block = message["content"][0]
    start = {**message, "content": [], "stop_reason": None}
    yield _sse("message_start", {"type": "message_start", "message": start})
    if block["type"] == "tool_use":
        opened = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": orjson.dumps(block["input"]).decode()}
    else:
        opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
    yield _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": opened})  # fmt: skip
    yield _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield _sse("message_delta", {"type": "message_delta", "delta": stop,
                                 "usage": {"output_tokens": 5}})  # fmt: skip
    yield _sse("message_stop", {"type": "message_stop"})


def app(model: ScriptedModel) -> Starlette:
    """The Messages API (and a token count) answering from ``model``."""

    async def messages(request: Request) -> Response:
        body = orjson.loads(await request.body())
        message = model.answer(body)
        if not body.get("stream"):
            return JSONResponse(message)
        return StreamingResponse(_events(message), media_type="text/event-stream")

    async def count(request: Request) -> Response:
        return JSONResponse({"input_tokens": len(await request.body()) // 4})

    async def other(request: Request) -> Response:
        return JSONResponse({})

    return Starlette(routes=[
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", count, methods=["POST"]),
        Route("/{path:path}", other, methods=["GET", "POST"]),
    ])  # fmt: skip


@contextlib.contextmanager
def serving(model: ScriptedModel) -> Iterator[str]:
    """Serve ``model`` on a free 127.0.0.1 port; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app(model), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the scripted model did not start within 60 s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def offline_env(url: str, home: str) -> dict[str, str]:
    """The CLI's environment for an offline run against ``url`` (MCP tools listed, not
    deferred behind a tool search)."""
    return {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "offline",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "ENABLE_TOOL_SEARCH": "false",
        "HOME": home,
    }


def tool_results(body: Any) -> list[str]:
    """The text of every tool_result block a request carries, in order."""
    found = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                found.append(content if isinstance(content, str)
                             else "".join(c.get("text", "") for c in content))  # fmt: skip
    return found
