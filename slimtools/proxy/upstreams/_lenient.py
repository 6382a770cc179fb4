"""Upstream answers holding lone UTF-16 surrogates, read with U+FFFD instead of dropped.

JavaScript's ``JSON.stringify`` writes a string cut inside an emoji (``"ab😀".slice(0, 3)``)
as ``"ab\\ud83d"``: valid JSON by its grammar, and Node MCP servers send it. The MCP SDK's
client reads each message with pydantic's strict JSON reader, which refuses a lone
surrogate: the message was dropped, and the call it answered waited forever. Here each lone
half of a pair becomes ``\\ufffd`` before the SDK reads the message (one substring check per
message when there is none). The SDK's readers are wrapped where they are looked up
(``mcp.client.stdio._parse_line``, ``mcp.client.streamable_http.jsonrpc_message_adapter``);
when a later SDK moves them, nothing is wrapped and its own reading applies.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["install", "mend_surrogates"]

_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)
"""One backslash escape of a JSON string, read left to right (so ``\\\\`` is consumed whole)."""


def _high(code: str | None) -> bool:
    return code is not None and 0xD800 <= int(code, 16) <= 0xDBFF


def _low(code: str | None) -> bool:
    return code is not None and 0xDC00 <= int(code, 16) <= 0xDFFF


def mend_surrogates(text: str) -> str:
    """``text`` (JSON) with every ``\\uXXXX`` escape of a lone surrogate made ``\\ufffd``."""
    escapes = list(_ESCAPE.finditer(text))
    out: list[str] = []
    pos = 0
    for i, match in enumerate(escapes):
        code = match.group(1)
        if not (_high(code) or _low(code)):
            continue
        after = escapes[i + 1] if i + 1 < len(escapes) else None
        before = escapes[i - 1] if i else None
        paired_after = after is not None and after.start() == match.end() and _low(after.group(1))
        paired_before = (
            before is not None and before.end() == match.start() and _high(before.group(1))
        )
        if (_high(code) and paired_after) or (_low(code) and paired_before):
            continue
        out += [text[pos : match.start()], "\\ufffd"]
        pos = match.end()
    return "".join(out) + text[pos:] if out else text


def _mended(data: Any) -> Any:
    if isinstance(data, str) and ("\\ud" in data or "\\uD" in data):
        return mend_surrogates(data)
    if isinstance(data, (bytes, bytearray)) and (b"\\ud" in data or b"\\uD" in data):
        text = bytes(data).decode("utf-8", "replace")
        return mend_surrogates(text).encode("utf-8")
    return data


class _LenientAdapter:
    """The SDK's message adapter, reading JSON with lone surrogates mended."""

    def __init__(self, adapter: Any) -> None:
        self.wrapped = adapter

    def validate_json(self, data: Any, *args: Any, **kwargs: Any) -> Any:
        return self.wrapped.validate_json(_mended(data), *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def install() -> None:
    """Wrap the SDK client's message readers, once (later calls change nothing)."""
    from mcp.client import stdio, streamable_http

    parse = getattr(stdio, "_parse_line", None)
    if callable(parse) and not getattr(parse, "_slimtools_lenient", False):

        def parse_line(line: str) -> Any:
            return parse(_mended(line))

        parse_line._slimtools_lenient = True  # type: ignore[attr-defined]
        stdio._parse_line = parse_line
    adapter = getattr(streamable_http, "jsonrpc_message_adapter", None)
    if adapter is not None and not isinstance(adapter, _LenientAdapter):
        setattr(streamable_http, "jsonrpc_message_adapter", _LenientAdapter(adapter))  # noqa: B010
