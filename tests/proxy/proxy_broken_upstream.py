"""A stdio MCP server written by hand that misbehaves on command, one tool per way:
``echo`` answers its ``text`` argument; ``silent`` never answers; ``garbage`` answers with a
line that is not JSON; ``not_jsonrpc`` with JSON that is no JSON-RPC message; ``wrong_id``
with a well-formed result for another request's id; ``bad_result`` with the right id but a
result that is no tool result. Every bad answer holds ``SECRET``, which must never reach the
client. It lists one prompt, ``silent``, and never answers ``prompts/get``. It goes on
reading and answering after each. Run
``python tests/proxy/proxy_broken_upstream.py``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

BROKEN = ("silent", "garbage", "not_jsonrpc", "wrong_id", "bad_result")
TOOLS = [{"name": name, "inputSchema": {"type": "object"}} for name in ("echo", *BROKEN)]
SECRET = "SECRET-upstream-text"


def _reply(ident: Any, result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode() + b"\n"


def _tool_answer(name: str, ident: Any, arguments: dict[str, Any]) -> bytes | None:
    secret = {"content": [{"type": "text", "text": SECRET}]}
    if name == "silent":
        return None
    if name == "garbage":
        return f"<html>{SECRET}</html>\n".encode()
    if name == "not_jsonrpc":
        return json.dumps({"hello": SECRET, "id": ident}).encode() + b"\n"
    if name == "wrong_id":
        return _reply(f"not-{ident}", secret)
    if name == "bad_result":
        return _reply(ident, {"content": SECRET})
    return _reply(ident, {"content": [{"type": "text", "text": str(arguments.get("text"))}]})


def answer(message: dict[str, Any]) -> bytes | None:
    """The bytes of the answer to one JSON-RPC message (None: no answer)."""
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        return None
    if method == "initialize":
        return _reply(
            ident,
            {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "prompts": {}},
                "serverInfo": {"name": "broken", "version": "0"},
            },
        )
    if method == "tools/list":
        return _reply(ident, {"tools": TOOLS})
    if method == "prompts/list":
        return _reply(ident, {"prompts": [{"name": "silent"}]})
    if method == "prompts/get":
        return None
    if method == "tools/call":
        params = message["params"]
        return _tool_answer(params["name"], ident, params.get("arguments") or {})
    return _reply(ident, {})


def main() -> None:
    for raw in sys.stdin.buffer:
        out = answer(json.loads(raw))
        if out is not None:
            sys.stdout.buffer.write(out)
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
