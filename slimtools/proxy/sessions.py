"""Whose handles a request may read: isolation between the clients of one proxy.

Three cases, decided per request:

- a fixed ``session`` in the config: every request runs in it (one user, many processes);
- a transport session (stdio, or streamable HTTP with ``Mcp-Session-Id``): the request runs
  in that session, so a handle resolves only for the client it was issued to;
- streamable HTTP without a session id (the current protocol's default): nothing on the
  wire tells two clients apart, so the handle itself carries the capability. Each tool call
  runs in a fresh session named by 96 random bits, and every handle the result shows is
  *sealed* as ``"<handle>~<token>"``; ``get_record`` and ``slimtools://`` reads unseal it
  and run in the token's session. A handle without a valid token runs in a fresh, empty
  session: it resolves nothing. No state is shared between requests or instances beyond
  the handle store itself, so proxies sharing a store (``redis://``) serve each other's
  sealed handles. The hint's next-page call carries the token too (``cursor="<token>"``,
  a parameter listed to these clients only), so page 2 is read from page 1's snapshot.

A signed handle (HMAC of the handle under a shared secret) was rejected: it needs a secret
distributed to every instance, and binds nothing a random token does not.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, unquote

try:
    from mcp.server.context import ServerRequestContext
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.proxy needs the MCP SDK (mcp>=2): pip install 'slimtools[proxy]'"
    ) from exc

from slimtools._json import dumps_str, loads
from slimtools._session import session
from slimtools.envelope import ENVELOPE_KEYS

__all__ = ["Isolation", "seal", "seal_envelope", "unseal"]

_TOKEN = re.compile(r"[A-Za-z0-9_-]{16}")
_SEP = "~"
_ENVELOPE = frozenset(ENVELOPE_KEYS)


def new_token() -> str:
    """96 random bits, URL-safe: the capability a sealed handle carries."""
    return secrets.token_urlsafe(12)


def token_session(token: str) -> str:
    """The store session of the handles sealed with ``token``."""
    return f"sealed-{token}"


def seal(handle: Any, token: str) -> str:
    """``handle`` with ``token`` attached: ``"3045~<token>"``."""
    return f"{handle}{_SEP}{token}"


def unseal(value: Any) -> tuple[Any, str] | None:
    """``(handle, token)`` of a sealed handle, or ``None`` when ``value`` carries no token."""
    if not isinstance(value, str):
        return None
    handle, sep, token = value.strip().strip("\"'`").rpartition(_SEP)
    if not sep or not handle or not _TOKEN.fullmatch(token):
        return None
    return handle, token


def _hint_pattern(companion: str) -> re.Pattern[str]:
    # the first argument of each companion call in a hint: a JSON string or an integer
    return re.compile(rf"\b{re.escape(companion)}\((\"(?:[^\"\\]|\\.)*\"|-?\d+)")


def seal_envelope(
    env: dict[str, Any],
    token: str,
    *,
    companion: str,
    key: str | None,
    paged: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The envelope with every handle it shows sealed: briefs, the text handle, the hint.

    The hint's next-page calls of the tools in ``paged`` gain the token as their cursor.

    A brief keyed by one of its own fields (``key``) keeps that field as the upstream sent
    it and gains a ``handle`` in front, so the record's data is never rewritten.
    """
    out = dict(env)
    briefs = out.get("briefs")
    if isinstance(briefs, list):
        out["briefs"] = [_seal_brief(brief, token, key) for brief in briefs]
    if isinstance(out.get("handle"), str):
        out["handle"] = seal(out["handle"], token)
    if isinstance(out.get("hint"), str):
        hint = _hint_pattern(companion).sub(
            lambda m: f"{companion}({dumps_str(seal(loads(m.group(1)), token))}",
            out["hint"],
        )
        out["hint"] = seal_pages(hint, token, paged) if paged else hint
    return out


def _seal_brief(brief: Any, token: str, key: str | None) -> Any:
    if not isinstance(brief, dict):
        return brief
    if "handle" in brief and key in (None, "handle"):
        return {**brief, "handle": seal(brief["handle"], token)}
    if key is not None and key in brief:
        return {"handle": seal(brief[key], token), **brief}
    return brief


CURSOR = "cursor"
_CURSOR_SCHEMA = {
    "type": "string",
    "description": "Copy it from the hint's next-page call: it keeps the pages of one query "
    "consistent.",
}


def seal_pages(hint: str, token: str, paged: frozenset[str]) -> str:
    """``hint`` with ``cursor="<token>"`` added to each next-page call of a paged tool."""
    out, done = [], 0
    for found in re.finditer(r"\b([A-Za-z0-9_.-]+)\(", hint):
        if found.group(1) not in paged or found.start() < done:
            continue
        close = _closing(hint, found.end() - 1)
        if close is None or "page=" not in hint[found.end() : close]:
            continue
        out.append(hint[done:close])
        out.append(f", {CURSOR}={dumps_str(token)}")
        done = close
    out.append(hint[done:])
    return "".join(out)


def _closing(text: str, start: int) -> int | None:
    """The index of the bracket closing ``text[start]``, skipping JSON strings."""
    depth, quoted, escaped = 0, False, False
    for i in range(start, len(text)):
        char = text[i]
        if quoted:
            escaped = not escaped and char == "\\"
            quoted = escaped or char != '"'
        elif char == '"':
            quoted = True
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return None


def list_cursors(result: dict[str, Any], paged: frozenset[str]) -> dict[str, Any]:
    """A wire ``tools/list`` result with the ``cursor`` parameter on each paged tool."""
    tools = []
    for tool in result.get("tools") or []:
        schema = tool.get("inputSchema") if isinstance(tool, dict) else None
        if tool.get("name") in paged and isinstance(schema, dict):
            properties = {**(schema.get("properties") or {}), CURSOR: _CURSOR_SCHEMA}
            tools.append({**tool, "inputSchema": {**schema, "properties": properties}})
        else:
            tools.append(tool)
    return {**result, "tools": tools}


def seal_result(
    result: dict[str, Any],
    token: str,
    *,
    companion: str,
    key: str | None,
    paged: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """A wire ``tools/call`` result with its envelope's handles sealed on both channels."""
    if result.get("isError"):
        return result
    out = dict(result)
    structured = out.get("structuredContent")
    if isinstance(structured, dict) and _is_envelope(structured):
        out["structuredContent"] = seal_envelope(
            structured, token, companion=companion, key=key, paged=paged
        )
    content = out.get("content")
    if isinstance(content, list):
        out["content"] = [_seal_block(b, token, companion, key, paged) for b in content]
    return out


def _seal_block(
    block: Any, token: str, companion: str, key: str | None, paged: frozenset[str]
) -> Any:
    if not isinstance(block, dict) or block.get("type") != "text":
        return block
    text = block.get("text")
    if not isinstance(text, str):
        return block
    try:
        parsed = loads(text)  # exact: ids beyond 64 bits stay integers
    except ValueError:
        return block
    if not _is_envelope(parsed):
        return block
    sealed = seal_envelope(parsed, token, companion=companion, key=key, paged=paged)
    return {**block, "text": dumps_str(sealed)}


def _is_envelope(value: Any) -> bool:
    return isinstance(value, dict) and "hint" in value and set(value) <= _ENVELOPE


class Isolation:
    """Server middleware binding each request's handle session (see the module docstring).

    Args:
        fixed: the config's ``session``, if any: every request runs in it.
        companion: the name of the record tool, whose ``handle`` argument is unsealed.
        resource_prefix: the ``slimtools://<toolkit>/`` prefix of record resources.
        keys: per tool name, the record field its handles are (``None``: a ``handle``).
        paged: the tools the proxy pages (a ``page`` parameter): they take a ``cursor``.
    """

    def __init__(
        self,
        fixed: str | None,
        *,
        companion: str = "get_record",
        resource_prefix: str = "slimtools://proxy/",
        keys: Mapping[str, str | None] | None = None,
        paged: frozenset[str] = frozenset(),
    ) -> None:
        self.paged = paged
        self.fixed = fixed
        self.default = fixed or f"proxy-{uuid.uuid4().hex[:12]}"
        self.companion = companion
        self.resource_prefix = resource_prefix
        self.keys = dict(keys or {})

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        """Run the request in its session; seal what a session-less HTTP client is shown."""
        bound = self.fixed or _http_session(ctx)
        if bound is None and ctx.request is None:
            bound = self.default  # stdio: the process serves one client
        if bound is not None:
            with session(bound):
                return await call_next(ctx)
        return await self._sealed(ctx, call_next)

    async def _sealed(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        params = dict(ctx.params or {})
        if ctx.method == "tools/call":
            name = params.get("name")
            arguments = dict(params.get("arguments") or {})
            token = new_token()
            cursor = arguments.pop(CURSOR, None) if name in self.paged else None
            if isinstance(cursor, str) and _TOKEN.fullmatch(cursor):
                token = cursor
            if name == self.companion:
                opened = unseal(arguments.get("handle"))
                if opened is not None:
                    arguments["handle"], token = opened
            params["arguments"] = arguments
            with session(token_session(token)):
                result = await call_next(dataclasses.replace(ctx, params=params))
            if isinstance(result, dict):
                key = self.keys.get(name) if isinstance(name, str) else None
                return seal_result(
                    result, token, companion=self.companion, key=key, paged=self.paged
                )
            return result
        if ctx.method == "tools/list":
            listed = await call_next(ctx)
            return list_cursors(listed, self.paged) if isinstance(listed, dict) else listed
        uri = params.get("uri")
        prefix = self.resource_prefix
        if ctx.method == "resources/read" and isinstance(uri, str) and uri.startswith(prefix):
            opened = unseal(unquote(uri[len(prefix) :]))
            token = new_token()
            if opened is not None:
                handle, token = opened
                params["uri"] = prefix + quote(str(handle), safe="")
            with session(token_session(token)):
                return await call_next(dataclasses.replace(ctx, params=params))
        with session(token_session(new_token())):
            return await call_next(ctx)


def _http_session(ctx: ServerRequestContext[Any, Any]) -> str | None:
    headers = getattr(ctx.request, "headers", None)
    found = headers.get("mcp-session-id") if headers is not None else None
    return found if isinstance(found, str) and found else None
