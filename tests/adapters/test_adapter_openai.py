"""OpenAI adapter: Chat Completions and Responses tool specs, strict schemas, dispatch."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import httpx2
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion
from openai.types.responses import FunctionToolParam, ResponseFunctionToolCall
from pydantic import BaseModel, Field, TypeAdapter, create_model

from slimtools.adapters.openai import (
    achat_tool_messages,
    aresponse_tool_outputs,
    chat_tool_messages,
    chat_tools,
    response_tool_outputs,
    response_tools,
    restore_defaults,
    strict_schema,
)
from tests.adapters.sdk_adapter_fixtures import (
    UNTRUSTED,
    first_brief_id,
    import_error_without,
    make_kit,
)


def _completion(*calls: tuple[str, str, str]) -> ChatCompletion:
    """A ChatCompletion as the SDK parses it, asking for ``calls`` (id, name, arguments)."""
    return ChatCompletion.model_validate(
        {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                            for i, n, a in calls
                        ],
                    },
                }
            ],
        }
    )


def _call_item(call_id: str, name: str, arguments: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call", call_id=call_id, name=name, arguments=arguments
    )


def test_chat_tools_list_every_tool_with_get_record_last():
    """chat_tools gives one function tool per toolkit tool, get_record last."""
    tools = chat_tools(make_kit())
    assert [t["function"]["name"] for t in tools] == ["search_tickets", "explode", "get_record"]
    assert all(t["type"] == "function" and t["function"]["description"] for t in tools)


def test_chat_tools_are_strict_with_optional_parameters_nullable():
    """Strict parameters require every property, forbid others and make page/limit nullable."""
    function = chat_tools(make_kit())[0]["function"]
    params = function["parameters"]
    assert function["strict"] is True
    assert params["required"] == list(params["properties"])
    assert params["additionalProperties"] is False
    page = params["properties"]["page"]
    assert page["type"] == ["integer", "null"]
    assert "default" not in page
    assert "default 1" in page["description"].lower()
    assert params["properties"]["query"]["type"] == "string"


def test_chat_tools_validate_against_the_sdk_param_type():
    """Every spec is a valid ChatCompletionFunctionToolParam for the installed SDK."""
    adapter = TypeAdapter(openai.types.chat.ChatCompletionFunctionToolParam)
    for tool in chat_tools(make_kit()):
        adapter.validate_python(tool)


def test_chat_tools_without_strict_send_the_schema_unchanged():
    """strict=False sends ToolSpec.parameters as is and no strict flag."""
    kit = make_kit()
    tools = chat_tools(kit, strict=False)
    assert [t["function"]["parameters"] for t in tools] == [s.parameters for s in kit.tools]
    assert all("strict" not in t["function"] for t in tools)


def test_response_tools_are_flat_function_tools():
    """response_tools gives Responses API function tools with name, parameters and strict."""
    tools = response_tools(make_kit())
    adapter = TypeAdapter(FunctionToolParam)
    for tool in tools:
        adapter.validate_python(tool)
    assert [t["name"] for t in tools] == ["search_tickets", "explode", "get_record"]
    assert all(t["strict"] is True for t in tools)


def test_a_tool_with_an_open_mapping_falls_back_to_non_strict_alone():
    """A dict[str, Any] parameter cannot be strict: that tool alone is sent non-strict."""
    kit = make_kit()

    @kit.tool
    def tag(labels: dict[str, Any]) -> str:
        """Attach labels."""
        return "ok"

    flags = {t["name"]: t["strict"] for t in response_tools(kit)}
    assert flags == {"search_tickets": True, "explode": True, "tag": False, "get_record": True}


def test_strict_schema_refuses_keywords_outside_the_strict_subset():
    """A string length limit has no strict form, so strict_schema returns None."""
    schema = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 5}}}
    assert strict_schema(schema) is None


def test_strict_schema_closes_nested_objects_and_inlines_described_refs():
    """Nested objects become strict too; a $ref with a description is inlined."""
    schema = {
        "type": "object",
        "properties": {"f": {"$ref": "#/$defs/F", "description": "filter"}},
        "required": ["f"],
        "$defs": {"F": {"type": "object", "properties": {"n": {"type": "integer", "default": 2}}}},
    }
    strict = strict_schema(schema)
    assert strict is not None
    nested = strict["properties"]["f"]
    assert nested["description"] == "filter"
    assert nested["additionalProperties"] is False
    assert nested["required"] == ["n"]
    assert nested["properties"]["n"] == {"type": ["integer", "null"], "description": "Default: 2."}


class _Inner(BaseModel):
    n: int = 2
    s: str | None = None


_FIELD_TYPES = [  # (annotation, an example value, whether strict mode can express it)
    (int, 1, True),
    (str, "a", True),
    (float, 0.5, True),
    (bool, True, True),
    (list[int], [1], True),
    (str | None, None, True),
    (Literal["a", "b"], "a", True),
    (_Inner, _Inner(), True),
    (_Inner | None, None, True),
    (dict[str, int], {}, False),
    (Annotated[str, Field(max_length=3)], "ab", False),
]


def _objects(node: Any) -> list[dict[str, Any]]:
    """Every object schema inside ``node``."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if "properties" in node:
            found.append(node)
        for value in node.values():
            found += _objects(value)
    elif isinstance(node, list):
        for value in node:
            found += _objects(value)
    return found


@given(st.lists(st.tuples(st.sampled_from(_FIELD_TYPES), st.booleans()), max_size=5))
def test_strict_schema_is_closed_or_refused_and_nulls_restore_defaults(fields):
    """Any args model: strict form closes every object, or is refused; nulls become defaults."""
    model = create_model(
        "Args",
        **{f"f{i}": (tp, example if optional else ...) for i, ((tp, example, _), optional)
           in enumerate(fields)},
    )  # fmt: skip
    schema = model.model_json_schema()
    strict = strict_schema(schema)
    assert (strict is not None) == all(ok for (_, _, ok), _ in fields)
    if strict is None:
        return
    assert "default" not in json.dumps(strict)
    for node in _objects(strict):
        assert node["required"] == list(node["properties"])
        assert node["additionalProperties"] is False
    sent = {
        f"f{i}": None if optional else TypeAdapter(tp).dump_python(example, mode="json")
        for i, ((tp, example, _), optional) in enumerate(fields)
    }
    model.model_validate(restore_defaults(sent, schema))


def test_null_for_an_optional_parameter_means_its_default():
    """A strict-mode null for page is dropped, so the tool's default page 1 applies."""
    kit = make_kit()
    [message] = chat_tool_messages(
        kit, _completion(("c1", "search_tickets", '{"query":"timeout","page":null,"limit":null}'))
    )
    assert message["content"] == kit.call("search_tickets", {"query": "timeout"}).text


def test_restore_defaults_keeps_null_where_the_schema_accepts_it():
    """get_record's source accepts null, so a null source is passed on, not dropped."""
    schema = make_kit().spec("get_record").parameters
    assert restore_defaults('{"handle": 3, "source": null, "page": null}', schema) == {
        "handle": 3,
        "source": None,
    }


def test_restore_defaults_keeps_an_integer_beyond_64_bits_exact():
    """A snowflake handle sent with strict mode's nulls reaches the toolkit as that integer."""
    schema = make_kit().spec("get_record").parameters
    big = 2**70 + 1
    sent = f'{{"handle": {big}, "source": null, "page": null}}'
    assert restore_defaults(sent, schema) == {"handle": big, "source": None}


@given(st.text())
def test_restore_defaults_never_raises_on_arbitrary_text(text):
    """Whatever text a model sends, restore_defaults returns something for kit.call to judge."""
    schema = {"type": "object", "properties": {"page": {"type": "integer", "default": 1}}}
    restore_defaults(text, schema)


def test_chat_tool_messages_answer_every_call_in_order():
    """Each tool call of a completion gets one tool message carrying the envelope text."""
    kit = make_kit()
    completion = _completion(
        ("a", "search_tickets", '{"query": "timeout"}'),
        ("b", "search_tickets", '{"query": "payment", "page": 2}'),
    )
    messages = chat_tool_messages(kit, completion)
    assert [m["tool_call_id"] for m in messages] == ["a", "b"]
    assert all(m["role"] == "tool" for m in messages)
    assert messages[0]["content"] == kit.call("search_tickets", {"query": "timeout"}).text


def test_chat_tool_messages_accept_plain_dict_messages():
    """A plain-dict assistant message works like the SDK object."""
    message = _completion(("a", "search_tickets", '{"query": "timeout"}')).choices[0].message
    messages = chat_tool_messages(make_kit(), message.model_dump())
    assert [m["tool_call_id"] for m in messages] == ["a"]


def test_chat_tool_messages_skip_custom_tool_calls():
    """Free-text custom tool calls are not the toolkit's and get no message from it."""
    calls = [{"id": "x", "type": "custom", "custom": {"name": "grammar", "input": "hi"}}]
    assert chat_tool_messages(make_kit(), calls) == []


@pytest.mark.parametrize("case", UNTRUSTED, ids=lambda c: c.id)
def test_untrusted_chat_arguments_come_back_as_actionable_tool_messages(case):
    """Bad arguments give a tool message saying what to fix, never an exception."""
    [message] = chat_tool_messages(make_kit(), _completion(("c", case.tool, case.arguments)))
    assert case.says in message["content"]


@pytest.mark.parametrize("case", UNTRUSTED, ids=lambda c: c.id)
def test_untrusted_response_arguments_come_back_as_function_call_outputs(case):
    """Bad arguments give a function_call_output saying what to fix, never an exception."""
    [item] = response_tool_outputs(make_kit(), [_call_item("c", case.tool, case.arguments)])
    assert item["type"] == "function_call_output"
    assert item["call_id"] == "c"
    assert case.says in item["output"]


def test_response_tool_outputs_read_a_plain_dict_response():
    """A Responses API response as a plain dict is dispatched like the SDK object."""
    response = {
        "output": [
            {"type": "reasoning", "id": "r1", "summary": []},
            {
                "type": "function_call",
                "call_id": "f1",
                "name": "search_tickets",
                "arguments": '{"query": "timeout"}',
            },
        ]
    }
    [item] = response_tool_outputs(make_kit(), response)
    assert item["call_id"] == "f1"
    assert json.loads(item["output"])["total"] == 12


async def test_async_dispatch_runs_calls_and_keeps_their_order():
    """achat_tool_messages and aresponse_tool_outputs answer every call in order."""
    kit = make_kit()
    completion = _completion(("a", "explode", '{"reason": "x"}'), ("b", "search_tickets", "{}"))
    assert [m["tool_call_id"] for m in await achat_tool_messages(kit, completion)] == ["a", "b"]
    items = [_call_item("c", "search_tickets", '{"query": "timeout"}')]
    [item] = await aresponse_tool_outputs(kit, items)
    assert json.loads(item["output"])["total"] == 12


def _scripted_transport(replies: list[dict[str, Any]], seen: list[dict[str, Any]]) -> httpx2.Client:
    """An HTTP client whose server records each request body and answers the next reply."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return httpx2.Response(200, json=replies[len(seen) - 1])

    return httpx2.Client(transport=httpx2.MockTransport(handle))


def test_chat_round_trip_through_the_real_sdk_client():
    """Specs serialise through the SDK, and its parsed reply dispatches to tool messages."""
    kit = make_kit()
    seen: list[dict[str, Any]] = []
    reply = _completion(("call_1", "search_tickets", '{"query":"timeout"}')).model_dump()
    client = openai.OpenAI(api_key="test", http_client=_scripted_transport([reply], seen))
    messages: list[Any] = [{"role": "user", "content": "find timeouts"}]
    completion = client.chat.completions.create(
        model="scripted", messages=messages, tools=chat_tools(kit)
    )
    answer = chat_tool_messages(kit, completion)
    assert seen[0]["tools"] == chat_tools(kit)
    assert first_brief_id(answer[0]["content"]) == 1


def test_responses_round_trip_through_the_real_sdk_client():
    """Responses API specs serialise through the SDK and its parsed reply dispatches."""
    kit = make_kit()
    seen: list[dict[str, Any]] = []
    reply = {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "scripted",
        "status": "completed",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": [
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "get_record",
                "arguments": '{"handle": 999}',
            }
        ],
    }
    client = openai.OpenAI(api_key="test", http_client=_scripted_transport([reply], seen))
    response = client.responses.create(model="scripted", input="hi", tools=response_tools(kit))
    [item] = response_tool_outputs(kit, response)
    assert seen[0]["tools"] == response_tools(kit)
    assert item["call_id"] == "call_1"
    assert "999" in item["output"]


@pytest.mark.subprocess
def test_missing_framework_raises_an_import_error_naming_the_extra():
    """Without the OpenAI SDK, importing the adapter says which extra to install."""
    assert "pip install 'slimtools[openai]'" in import_error_without(
        "openai", "slimtools.adapters.openai"
    )
