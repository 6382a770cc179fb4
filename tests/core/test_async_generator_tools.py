"""Tools written as async generators: their items are the result, as a generator's are."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from typing import Any

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle

ROWS = [{"id": i, "title": f"row {i}", "body": "x" * 50} for i in range(5)]


async def _rows(query: str = "q") -> AsyncIterator[dict[str, Any]]:
    """Stream the rows."""
    for row in ROWS:
        yield row


def test_a_paginated_async_generator_pages_its_items():
    """``paginate`` over an async generator function pages the items it yields."""
    envelope = asyncio.run(paginate(limit=2)(_rows)())
    assert envelope.total == 5
    assert [b["id"] for b in envelope.briefs] == [0, 1]


def test_an_allowlisted_async_generator_is_projected_not_withheld():
    """Under an allowlist the yielded records are projected like a list's."""
    envelope = asyncio.run(project_fields(["id"])(_rows)())
    assert envelope.briefs == [{"id": i} for i in range(5)]


def test_an_async_generator_tool_is_async_and_keeps_its_signature():
    """The slimmed tool is a coroutine function with the generator's parameters."""
    tool = summarize_with_handle(key="id")(_rows)
    assert inspect.iscoroutinefunction(tool)
    assert "query" in inspect.signature(tool).parameters


def test_an_async_generator_tool_answers_through_the_toolkit():
    """``Toolkit.call`` runs it and its handles resolve."""
    kit = Toolkit("async-gen")
    kit.tool(summarize_with_handle(key="id")(paginate(limit=2)(_rows)), name="rows")
    result = kit.call("rows", {"query": "q"})
    assert not result.is_error
    assert '"total":5' in result.text
    assert '"body"' in kit.get_record(1)
