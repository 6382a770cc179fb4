"""Forwarded calls are bounded: an upstream that never answers, or answers with what cannot
be read, gives an error naming the call and never the upstream's content (in process; the
real processes are in ``test_proxy_timeout.py``).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult
from pydantic import BaseModel, ValidationError

from slimtools.proxy.forwarding import bounded
from slimtools.proxy.lifecycle import Supervisor
from slimtools.proxy.upstream import UpstreamSpec
from tests.proxy.proxy_fixtures import text_of

SECRET = "SECRET-upstream-text"


class Shape(BaseModel):
    content: list[str]


def unreadable() -> Exception:
    """The error the SDK raises on an answer of the wrong shape: it quotes the answer."""
    with pytest.raises(ValidationError, match=SECRET) as raised:
        Shape.model_validate({"content": SECRET})
    return raised.value


class Deaf:
    """An upstream stand-in: ``silent`` never answers, ``bad`` cannot be read."""

    async def call(self, name: str, arguments: dict[str, Any], **kwargs: Any) -> CallToolResult:
        if name == "bad":
            raise unreadable()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


def supervisor(timeout: float | None) -> Supervisor:
    watching = Supervisor(UpstreamSpec(command=["deaf"]), timeout=timeout)
    watching.current = Deaf()  # type: ignore[assignment]
    return watching


async def test_a_tool_call_left_unanswered_is_an_error_result_naming_tool_and_timeout():
    """The supervisor abandons the call after ``timeout`` with an error result."""
    with anyio.fail_after(10):
        result = await supervisor(0.05).call("silent", {})
    assert result.is_error
    assert "silent failed" in text_of(result)
    assert "0.05 s" in text_of(result)


async def test_an_unreadable_tool_answer_is_an_error_result_without_its_content():
    """A reading error becomes an error result naming its type; the answer is withheld."""
    result = await supervisor(None).call("bad", {})
    assert result.is_error
    assert "ValidationError" in text_of(result)
    assert SECRET not in text_of(result)


async def test_a_forwarded_request_left_unanswered_raises_a_json_rpc_error():
    """A forwarded request the upstream never answers: an ``MCPError`` naming it."""

    async def never(ctx: Any, params: Any) -> Any:
        await anyio.sleep_forever()

    with anyio.fail_after(10), pytest.raises(MCPError) as raised:
        await bounded("prompts/get", never, 0.05)(None, None)
    assert "prompts/get" in raised.value.error.message
    assert "0.05 s" in raised.value.error.message


async def test_an_unreadable_forwarded_answer_raises_a_json_rpc_error_without_it():
    """A reading error in a forwarded request: an ``MCPError`` naming the request and the
    error's type, not its text."""

    async def bad(ctx: Any, params: Any) -> Any:
        raise unreadable()

    with pytest.raises(MCPError) as raised:
        await bounded("resources/read", bad, 1.0)(None, None)
    assert "resources/read" in raised.value.error.message
    assert "ValidationError" in raised.value.error.message
    assert SECRET not in str(raised.value.error.model_dump())


async def test_the_upstreams_own_json_rpc_error_passes_as_it_came():
    """An ``MCPError`` (the upstream's own error) is not rewritten."""
    said = MCPError(code=-32602, message="no such prompt")

    async def refuse(ctx: Any, params: Any) -> Any:
        raise said

    with pytest.raises(MCPError) as raised:
        await bounded("prompts/get", refuse, 1.0)(None, None)
    assert raised.value is said
