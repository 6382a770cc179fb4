"""Anthropic adapter: Messages API tool specs and tool_result dispatch."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import Message, ToolParam
from pydantic import TypeAdapter

from slimtools.adapters.anthropic import anthropic_tools, atool_result_message, tool_result_message
from tests.adapters.sdk_adapter_fixtures import (
    UNTRUSTED,
    first_brief_id,
    import_error_without,
    make_kit,
)


def _message(*uses: tuple[str, str, Any]) -> Message:
    """An assistant Message as the SDK parses it, with a tool_use block per (id, name, input)."""
    return Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "scripted",
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {"type": "text", "text": "Let me look."},
                *({"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in uses),
            ],
        }
    )


def test_anthropic_tools_carry_the_parameter_schema_as_input_schema():
    """Each tool's input_schema is its parameter schema, page/limit defaults included."""
    kit = make_kit()
    tools = anthropic_tools(kit)
    assert [t["name"] for t in tools] == ["search_tickets", "explode", "get_record"]
    assert [t["input_schema"] for t in tools] == [s.parameters for s in kit.tools]
    assert tools[0]["input_schema"]["properties"]["limit"]["default"] == 3


def test_anthropic_tools_validate_against_the_sdk_param_type():
    """Every spec is a valid anthropic ToolParam."""
    adapter = TypeAdapter(ToolParam)
    for tool in anthropic_tools(make_kit()):
        adapter.validate_python(tool)


def test_tool_result_message_answers_every_tool_use_in_one_user_message():
    """All tool_use blocks of a response get tool_result blocks, in order, in one message."""
    kit = make_kit()
    reply = tool_result_message(
        kit,
        _message(("a", "search_tickets", {"query": "timeout"}), ("b", "get_record", {"handle": 3})),
    )
    assert reply is not None
    assert reply["role"] == "user"
    blocks = list(reply["content"])
    assert [b["tool_use_id"] for b in blocks] == ["a", "b"]  # type: ignore[index]
    assert [b["is_error"] for b in blocks] == [False, False]  # type: ignore[index]
    assert first_brief_id(blocks[0]["content"]) == 1  # type: ignore[index]
    assert json.loads(blocks[1]["content"])["id"] == 3  # type: ignore[index]


def test_tool_result_message_is_none_without_tool_use():
    """A response with no tool_use block needs no reply message."""
    assert tool_result_message(make_kit(), _message()) is None


def test_tool_result_message_accepts_the_plain_dict_form():
    """A Message dumped to a dict dispatches like the SDK object."""
    message = _message(("a", "search_tickets", {"query": "timeout"})).model_dump()
    reply = tool_result_message(make_kit(), message)
    assert reply is not None
    assert [b["tool_use_id"] for b in reply["content"]] == ["a"]  # type: ignore[index]


@pytest.mark.parametrize("case", UNTRUSTED, ids=lambda c: c.id)
def test_untrusted_input_gives_a_tool_result_flagged_as_error(case):
    """Bad input yields a tool_result with an actionable message and is_error where it failed."""
    raw = case.arguments
    try:
        tool_input: Any = json.loads(raw)
    except json.JSONDecodeError:
        tool_input = raw  # what a broken client would pass on
    reply = tool_result_message(
        make_kit(), [{"type": "tool_use", "id": "t", "name": case.tool, "input": tool_input}]
    )
    assert reply is not None
    [block] = reply["content"]
    assert block["is_error"] is case.is_error  # type: ignore[index]
    assert case.says in block["content"]  # type: ignore[index]


async def test_atool_result_message_runs_every_call():
    """The async variant answers every tool_use block, errors flagged."""
    reply = await atool_result_message(
        make_kit(), _message(("a", "explode", {"reason": "x"}), ("b", "search_tickets", {}))
    )
    assert reply is not None
    assert [b["is_error"] for b in reply["content"]] == [True, True]  # type: ignore[index]


def test_round_trip_through_the_real_sdk_client():
    """Specs serialise through the SDK client and its parsed reply dispatches to tool_results."""
    kit = make_kit()
    seen: list[dict[str, Any]] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        reply = _message(("toolu_1", "search_tickets", {"query": "payment", "page": 2}))
        return httpx2.Response(200, json=reply.model_dump(mode="json"))

    http = httpx2.Client(transport=httpx2.MockTransport(handle))
    client = anthropic.Anthropic(api_key="test", http_client=http)
    message = client.messages.create(
        model="scripted",
        max_tokens=100,
        messages=[{"role": "user", "content": "payment failures?"}],
        tools=anthropic_tools(kit),
    )
    reply = tool_result_message(kit, message)
    assert seen[0]["tools"] == anthropic_tools(kit)
    assert reply is not None
    [block] = reply["content"]
    assert json.loads(block["content"])["page"] == 2  # type: ignore[index]


@pytest.mark.subprocess
def test_missing_framework_raises_an_import_error_naming_the_extra():
    """Without the Anthropic SDK, importing the adapter says which extra to install."""
    assert "pip install 'slimtools[anthropic]'" in import_error_without(
        "anthropic", "slimtools.adapters.anthropic"
    )


def test_a_toolset_members_result_names_the_same_toolset():
    """A ``tool_use`` block carrying ``toolset_name`` is answered by a block naming it too."""
    block = {"type": "tool_use", "id": "a", "name": "search_tickets", "input": {"query": "x"}}
    reply = tool_result_message(
        make_kit(), [{**block, "toolset_name": "desk"}, {**block, "id": "b"}]
    )
    assert reply is not None
    names = [b.get("toolset_name") for b in reply["content"]]  # type: ignore[union-attr]
    assert names == ["desk", None]
