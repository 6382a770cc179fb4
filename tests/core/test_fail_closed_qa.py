"""Fail closed, tried as a demanding user would: shapes and texts the first pass did not plan.

Each test is a hole found by the red-team pass of issue 17, with the fix it needed.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

import pytest
from agents import function_tool
from agents.tool_context import ToolContext
from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle, wrap
from slimtools.clearing import ClearingPolicy
from slimtools.projection import Unreadable, read_text
from tests.adapters.test_adapter_langchain import call

SECRET = "SECRET-ssn-123456789"
HIDDEN = "HIDDEN-notallowed-xyz"
_WRAP: dict[str, Any] = {"fields": ["id", "name"], "key": "id", "limit": 2, "deny": ["ssn"]}


class Brief(BaseModel):
    """The allowlist of the tools below."""

    id: int
    name: str


class Row(BaseModel):
    """A backend row, with a denied and a non-allowlisted field."""

    id: int
    name: str
    ssn: str
    extra: str


def _failing(kit: Toolkit, error: BaseException) -> str:
    """What the model reads when a guarded tool raises ``error``."""

    @project_fields(Brief, deny=["ssn"])
    @summarize_with_handle(key="id")
    def failing() -> list[dict[str, object]]:
        raise error

    kit.tool(failing)
    return kit.call("failing", {}).text


def test_an_error_quoting_a_pydantic_models_str_shows_only_allowlisted_fields():
    """``f"bad row {model}"`` (pydantic's ``id=1 name='a'`` form) masks the other fields."""
    row = Row(id=1, name="a", ssn=SECRET, extra=HIDDEN)
    text = _failing(Toolkit("qa"), ValueError(f"bad row {row}"))
    assert SECRET not in text
    assert HIDDEN not in text
    assert "name='a'" in text


def _lc_rows_with_summary() -> StructuredTool:
    """A LangChain ``content_and_artifact`` tool: a prose summary, the records as artifact."""

    def listing(query: str) -> tuple[str, list[dict[str, Any]]]:
        rows = [{"id": i, "name": f"n{i}", "ssn": SECRET, "extra": HIDDEN} for i in range(3)]
        return f"{len(rows)} rows for {query}", rows

    return StructuredTool.from_function(
        listing, name="listing", description="List rows.", response_format="content_and_artifact"
    )


def test_wrap_reads_a_langchain_tools_artifact_records_beside_a_prose_summary():
    """The records of a ``content_and_artifact`` tool are projected, not withheld as prose."""
    tool = wrap(_lc_rows_with_summary(), toolkit=Toolkit("qa-art"), **_WRAP)
    message = tool.invoke(call("listing", "c1", query="x"))
    envelope = json.loads(message.content)
    assert [b["id"] for b in envelope["briefs"]] == [0, 1]
    assert SECRET not in message.content
    assert HIDDEN not in message.content


def test_a_python_repr_holding_inf_and_nan_is_read_as_records():
    """``mcp-server-sqlite`` writes a REAL column's infinities as ``inf``: still records."""
    text = "[{'id': 1, 'score': inf, 'low': -inf, 'gap': nan, 'email': 'a@b.io'}]"
    (record,) = read_text(text)
    assert record["id"] == 1
    assert record["score"] == math.inf
    assert record["low"] == -math.inf
    assert math.isnan(record["gap"])


def test_a_python_repr_naming_anything_but_inf_and_nan_is_not_evaluated():
    """Only the two float names are read; any other name stays unreadable (no ``eval``)."""
    assert isinstance(read_text("[{'id': 1, 'x': os}]"), Unreadable)
    assert isinstance(read_text("[{'id': __import__('os').getcwd()}]"), Unreadable)


@pytest.mark.parametrize("tool", ["get_set", "redis_get_set", "get_and_lock_row", "get_upsert"])
def test_names_that_set_lock_or_upsert_are_not_safe_to_repeat(tool):
    """``get_set`` (Redis GETSET writes), ``lock`` and ``upsert`` change state: never offered."""
    assert ClearingPolicy().repeatable_of(tool) is False


async def test_a_wrapped_agents_tool_that_raises_reads_as_an_error_not_as_withheld():
    """The SDK's failure text reaches the model as an error, not as an unreadable result."""

    @function_tool
    def broken(query: str) -> list[dict[str, Any]]:
        """Fail, quoting a row."""
        raise ValueError(f"bad row {{'id': 1, 'ssn': '{SECRET}'}} for {query}")

    tool = wrap(broken, toolkit=Toolkit("qa-agents"), **_WRAP)
    context = ToolContext(
        context=None, tool_name="broken", tool_call_id="c1", tool_arguments='{"query": "x"}'
    )
    out = str(await tool.on_invoke_tool(context, '{"query": "x"}'))
    assert "An error occurred while running the tool" in out
    assert "withheld" not in out
    assert SECRET not in out


def test_the_withheld_warning_names_the_opt_in_of_every_surface(caplog):
    """A proxy or wrap() user reads where their opt-in goes, not only project_fields'."""

    @project_fields(Brief, deny=["ssn"])
    def status_of_qa_warning() -> str:
        return "all systems nominal"

    kit = Toolkit("qa-warn")
    kit.tool(status_of_qa_warning)
    with caplog.at_level(logging.WARNING, logger="slimtools"):
        kit.call("status_of_qa_warning", {})
    (message,) = [r.getMessage() for r in caplog.records if "withheld" in r.getMessage()]
    assert "[tools.NAME]" in message
    assert "wrap()" in message


def test_a_long_argument_is_not_repeated_in_the_next_page_hint():
    """A 50,000-character argument is named in the hint, not copied into every page."""

    @paginate(limit=2)
    def annotate(note: str) -> list[dict[str, int]]:
        return [{"id": i} for i in range(5)]

    kit = Toolkit("qa-long-arg")
    kit.tool(annotate)
    hint = json.loads(kit.call("annotate", {"note": "y" * 50_000}).text)["hint"]
    assert "y" * 300 not in hint
    assert "note=<the same 50,002 characters as before>" in hint
    assert "page=2" in hint


def test_an_error_with_a_long_token_before_a_record_is_masked():
    """A 200,000-character token (a base64 blob) before the row: masked, not scanned for
    minutes from each of its characters (the key pattern backtracked quadratically)."""
    row = {"id": 1, "name": "a", "ssn": SECRET, "extra": HIDDEN}
    text = _failing(Toolkit("qa-long"), ValueError("blob " + "x" * 200_000 + f" {row}"))
    assert SECRET not in text
    assert HIDDEN not in text


def test_a_huge_error_message_reaches_the_model_clipped():
    """A 5 MB exception message is cut to its head and says how much was cut."""
    text = _failing(Toolkit("qa-huge-error"), ValueError("x" * 5_000_000))
    assert len(text) < 5_000
    assert text.startswith("failing failed: ValueError: xxx")
    assert "more characters cut" in text


def test_structured_output_keeps_integer_ids_beyond_64_bits_exact():
    """The envelope's structured form (MCP ``structuredContent``, LangChain's artifact)
    carries the id as the exact integer the text shows, so ``get_record`` takes it back."""
    big = 2**70 + 1

    @paginate(limit=2)
    def snowflakes() -> list[dict[str, int]]:
        return [{"id": big}]

    kit = Toolkit("qa-big-structured")
    kit.tool(snowflakes)
    result = kit.call("snowflakes", {})
    assert result.structured is not None
    assert result.structured["briefs"] == [{"id": big}]
