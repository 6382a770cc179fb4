"""A stdio MCP server written by hand, without the SDK, so that it can answer in bytes no SDK
server would write: ``latin1`` answers ``café`` encoded in Latin-1 (not UTF-8), ``echo``
answers its ``text`` argument. Run ``python tests/proxy/proxy_raw_upstream.py``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [{"name": name, "inputSchema": {"type": "object"}} for name in ("latin1", "echo")]


def answer(message: dict[str, Any]) -> bytes | None:
    """The bytes of the answer to one JSON-RPC message (None for a notification)."""
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        return None
    result: dict[str, Any] = {}
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        params = message["params"]
        text = "caf@" if params["name"] == "latin1" else str(params["arguments"].get("text"))
        result = {"content": [{"type": "text", "text": text}]}
    line = json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode()
    if method == "tools/call" and message["params"]["name"] == "latin1":
        line = line.replace(b"@", "é".encode("latin-1"))
    return line + b"\n"


def main() -> None:
    for raw in sys.stdin.buffer:
        out = answer(json.loads(raw))
        if out is not None:
            sys.stdout.buffer.write(out)
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
