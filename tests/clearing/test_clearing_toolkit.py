"""Clearing results produced by a real slimtools Toolkit: handles survive, get_record works."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel

from slimtools.clearing import ClearingPolicy, clear_stale_results, view
from slimtools.decorators import paginate, project_fields, summarize_with_handle
from slimtools.toolkit import Toolkit
from tests.clearing.strategies_clearing import FORMATS, Call, Res, Turn, render, script

LOGS = [
    {"id": i, "level": "ERROR", "summary": f"upstream timeout on shard {i} " * 8, "host": "db"}
    for i in range(1, 40)
]


class LogBrief(BaseModel):
    """What the model sees of a log line."""

    id: int
    level: str
    summary: str


def make_kit() -> Toolkit:
    kit = Toolkit("ops")

    @kit.tool(category="search")
    @summarize_with_handle(key="id")
    @paginate(limit=8)
    @project_fields(LogBrief)
    def search_logs(query: str) -> list[dict[str, Any]]:
        """Search the logs."""
        return [log for log in LOGS if query in log["summary"]]

    @kit.tool(category="input")
    def load_dataset(name: str) -> str:
        """The task's input data."""
        return f"dataset {name}: " + "row " * 400

    return kit


@pytest.mark.parametrize("fmt", FORMATS)
def test_toolkit_handles_survive_clearing_and_resolve(fmt):
    """A cleared envelope lists its handles, and get_record still returns those records."""
    kit = make_kit()
    result = kit.call("search_logs", {"query": "timeout"})
    assert not result.is_error
    first = Turn((Call("c1", "search_logs", {"query": "timeout"}, Res(result.text)),), user="go")
    history = render(fmt, [first, *script("bash", "bash", "bash")[1:]])
    policy = ClearingPolicy.for_toolkit(kit, cache=None)
    text = view(clear_stale_results(history, policy)).results[0].text
    handles = re.search(r"Handles: (.*)", text).group(1).split(", ")
    assert handles[:3] == ["1", "2", "3"]
    assert "get_record(<handle>)" in text
    assert '"id":2' in kit.get_record(2).replace(" ", "")


def test_toolkit_input_category_is_never_cleared():
    """A tool the toolkit marks as task input keeps its result however old."""
    kit = make_kit()
    data = kit.call("load_dataset", {"name": "sales"}).text
    first = Turn((Call("c1", "load_dataset", {"name": "sales"}, Res(data)),), user="go")
    history = render("anthropic", [first, *script(*["bash"] * 8)[1:]])
    out = view(
        clear_stale_results(history, ClearingPolicy.for_toolkit(kit, cache=None, keep_turns=0))
    )
    assert out.results[0].text == data
    assert all(r.cleared for r in out.results[1:5])


@pytest.mark.parametrize("fmt", FORMATS)
def test_clearing_twice_changes_nothing(fmt):
    """Idempotence, per format, with every option on."""
    policy = ClearingPolicy(cache=None, keep_turns=1, keep=1, clear_tool_inputs=True)
    once = clear_stale_results(render(fmt, script(*["bash"] * 7)), policy)
    twice = clear_stale_results(once, policy)
    assert twice == once
    assert all(a is b for a, b in zip(once, twice, strict=True))
