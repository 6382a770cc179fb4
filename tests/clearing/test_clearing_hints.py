"""MCP annotations read without asking: read-only tools offered again, destructive never."""

from __future__ import annotations

import json

import pytest

from slimtools.clearing import ClearingPolicy, ToolHints, clear_stale_results, tool_hints, view


def chat(tool: str, n: int = 6) -> list[dict]:
    """An OpenAI chat run of ``n`` calls of ``tool`` with long results."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(n):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": tool, "arguments": json.dumps({"path": f"/srv/{i}.txt"})},
        }
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": "data " * 400})
    return history


def first_placeholder(history: list[dict], policy: ClearingPolicy) -> str:
    out = clear_stale_results(history, policy.replace(cache=None))
    cleared = [r for r in view(out).results if r.cleared]
    assert cleared, "nothing was cleared"
    return cleared[0].text


TOOLS = [
    {"name": "zork", "annotations": {"readOnlyHint": True}},
    {"name": "load_snapshot", "annotations": {"destructiveHint": True}},
    {"name": "put_key", "annotations": {"idempotentHint": True, "destructiveHint": False}},
    {"name": "drop_key", "annotations": {"idempotentHint": True, "destructiveHint": True}},
    {"name": "plain"},
]


def test_tool_hints_sort_tools_by_their_annotations():
    """Read-only and idempotent non-destructive tools repeat; destructive ones never do."""
    hints = tool_hints(TOOLS)
    assert hints.repeatable == {"zork", "put_key"}
    assert hints.unrepeatable == {"load_snapshot", "drop_key"}


def test_read_only_annotation_offers_the_exact_call_again():
    """A read-only tool whose name tells nothing gets the exact call in its placeholder."""
    policy = ClearingPolicy().with_tool_hints(TOOLS)
    assert 'call zork(path="/srv/0.txt") again' in first_placeholder(chat("zork"), policy)


def test_destructive_annotation_never_offers_the_call_again_whatever_the_name():
    """``load_snapshot`` reads by its name, but its destructive hint forbids the offer."""
    text = first_placeholder(chat("load_snapshot"), ClearingPolicy().with_tool_hints(TOOLS))
    assert "Do not call load_snapshot again" in text
    assert "call load_snapshot(" not in text


def test_repeatable_false_marks_a_tool_destructive():
    """``repeatable={name: False}`` never offers the call again, whatever its name says."""
    policy = ClearingPolicy(repeatable={"read_file": False})
    assert policy.repeatable_of("read_file") is False


def test_with_tool_hints_keeps_the_callers_explicit_choice():
    """A name the caller put in ``repeatable`` is not moved by an annotation."""
    policy = ClearingPolicy(repeatable={"load_snapshot"}).with_tool_hints(TOOLS)
    assert policy.repeatable_of("load_snapshot") is True


def test_tool_hints_ignore_non_boolean_annotations():
    """A string "true" is not a hint, and a tool without a name is skipped."""
    hints = tool_hints([{"name": "a", "annotations": {"readOnlyHint": "true"}}, {"x": 1}])
    assert hints == ToolHints()


def test_mcp_adapter_reads_the_annotations_of_a_list_tools_result():
    """``adapters.mcp.clearing_policy`` takes the SDK's ``ListToolsResult`` as it comes."""
    types = pytest.importorskip("mcp.types")
    from slimtools.adapters.mcp import clearing_policy

    listed = types.ListToolsResult(
        tools=[
            types.Tool(
                name="zork",
                input_schema={"type": "object"},
                annotations=types.ToolAnnotations(read_only_hint=True),
            ),
            types.Tool(
                name="load_snapshot",
                input_schema={"type": "object"},
                annotations=types.ToolAnnotations(destructive_hint=True),
            ),
        ]
    )
    policy = clearing_policy(listed, keep_turns=1)
    assert policy.keep_turns == 1
    assert (policy.repeatable_of("zork"), policy.repeatable_of("load_snapshot")) == (True, False)
