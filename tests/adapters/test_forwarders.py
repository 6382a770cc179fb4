"""Core mechanisms for tools that forward to a backend owning its schema (proxy, ``wrap``).

A forwarder takes ``**arguments``, is registered with the backend's JSON Schema
(``Toolkit.tool(parameters=...)``), and may answer with a ``ToolResult`` that the slimming
decorators pass through untouched (an upstream error, an image).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools import (
    ConfigurationError,
    Toolkit,
    ToolResult,
    paginate,
    summarize_with_handle,
)
from tests._profile import examples
from tests.core_helpers import next_call

SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "What to look for."}},
    "required": ["query"],
    "additionalProperties": False,
}
ROWS = [{"id": i, "text": f"row {i} " + "words " * 30} for i in range(12)]


def _forwarder(answer: Any, calls: list[dict[str, Any]] | None = None) -> Any:
    @summarize_with_handle(key="id")
    @paginate(limit=5)
    def search(**arguments: Any) -> Any:
        """Search a backend that owns its schema."""
        if calls is not None:
            calls.append(arguments)
        return answer

    return search


def test_a_tool_result_passes_the_decorators_untouched():
    """A ``ToolResult`` returned by a slimmed tool is what the call returns."""
    answer = ToolResult("upstream says no", is_error=True, value={"raw": 1})
    assert _forwarder(answer)(query="x") is answer


async def test_an_async_tool_result_passes_the_decorators_untouched():
    """The same through the async shell."""
    answer = ToolResult("image follows", value=object())

    @paginate
    async def fetch(**arguments: Any) -> Any:
        await asyncio.sleep(0)
        return answer

    assert await fetch(path="a") is answer


def test_toolkit_call_returns_a_tool_result_as_it_is():
    """``Toolkit.call`` hands back the ``ToolResult`` a tool returned, error flag included."""
    kit = Toolkit("fwd")
    answer = ToolResult("upstream failed: 404", is_error=True)
    kit.tool(_forwarder(answer), parameters=SCHEMA)
    assert kit.call("search", {"query": "x"}) is answer


def test_parameters_publish_the_given_schema_plus_page_and_limit():
    """The backend's schema is kept as given; ``page``/``limit`` are added to it."""
    kit = Toolkit("fwd")
    kit.tool(_forwarder(ROWS), parameters=SCHEMA)
    params = kit.spec("search").parameters
    assert params["required"] == ["query"]
    assert params["additionalProperties"] is False
    assert params["properties"]["query"] == SCHEMA["properties"]["query"]
    assert params["properties"]["page"]["default"] == 1
    assert params["properties"]["limit"]["default"] == 5
    assert "page" not in SCHEMA["properties"]  # the caller's schema is not mutated


def test_forwarded_arguments_pass_through_while_page_and_limit_are_validated():
    """Backend arguments reach the function as sent; a bad ``page`` type is an error result."""
    kit = Toolkit("fwd")
    calls: list[dict[str, Any]] = []
    kit.tool(_forwarder(ROWS, calls), parameters=SCHEMA)
    ok = kit.call("search", {"query": "x", "extra": [1, 2]})
    bad = kit.call("search", {"query": "x", "page": "two"})
    assert not ok.is_error
    assert calls == [{"query": "x", "extra": [1, 2]}]
    assert bad.is_error
    assert "page" in bad.text


def test_a_schema_that_defines_page_itself_is_refused():
    """A backend parameter named like an added one would be shadowed: a configuration error."""
    kit = Toolkit("fwd")
    clash = {"type": "object", "properties": {"page": {"type": "integer"}}}
    with pytest.raises(ConfigurationError, match="page"):
        kit.tool(_forwarder(ROWS), parameters=clash)


def test_parameters_must_be_an_object_schema():
    """A schema of another type is a configuration error naming what was given."""
    with pytest.raises(ConfigurationError, match="type object"):
        Toolkit("fwd").tool(_forwarder(ROWS), parameters={"type": "array"})


def test_output_schema_replaces_the_envelope_schema():
    """``output_schema=`` is published instead of the envelope's."""
    kit = Toolkit("fwd")
    schema = {"type": "object", "anyOf": [{"required": ["total"]}, {"required": ["content"]}]}
    kit.tool(_forwarder(ROWS), parameters=SCHEMA, output_schema=schema)
    assert kit.spec("search").output_schema == schema


@settings(max_examples=examples(40), deadline=None)
@given(count=st.integers(2, 30), budget=st.integers(120, 500))
def test_a_budget_trimmed_page_resumes_from_the_snapshot_without_calling_again(count, budget):
    """Following the budget's "rest:" calls never calls the tool again and shows every row once."""
    calls: list[dict[str, Any]] = []
    rows = [{"id": i, "text": f"row {i} " + "words " * 30} for i in range(count)]

    @paginate(limit=50, max_tokens=budget)
    def search(**arguments: Any) -> Any:
        calls.append(arguments)
        return rows

    kit = Toolkit("fwd")
    tool = kit.tool(search, parameters=SCHEMA)
    seen: list[int] = []
    args: dict[str, Any] | None = {"query": "q"}
    while args is not None:
        env = tool(**args)
        assert env.briefs, env.hint
        seen += [b["id"] for b in env.briefs]
        args = next_call(env.hint, "search")
    assert seen == list(range(count))
    assert len(calls) == 1
