"""Models under test: replies in every wire form; the LangChain, OpenAI and Anthropic adapters."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from anthropic.types import Message
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from openai.types.chat import ChatCompletionMessage
from pydantic import Field

from slimtools.errors import ConfigurationError
from slimtools.eval import (
    BUILTIN_SCENARIOS,
    DEFAULT_SWEEP,
    ModelReplyError,
    Reply,
    ToolCallRequest,
    anthropic_model,
    as_reply,
    langchain_model,
    openai_model,
    run_recall,
    run_trial,
)
from slimtools.eval.models import arguments_json, to_anthropic

HEAD0 = DEFAULT_SWEEP[1]
HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "find it"},
    {
        "role": "assistant",
        "content": "Searching.",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "s", "arguments": '{"q": "x"}'}},
            {"id": "c2", "type": "function", "function": {"name": "s", "arguments": '{"q": "y"}'}},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "one"},
    {"role": "tool", "tool_call_id": "c2", "content": "two"},
    {"role": "user", "content": "what was it?"},
]
TOOLS = [
    {
        "type": "function",
        "function": {"name": "s", "description": "search", "parameters": {"type": "object"}},
    }
]


def test_a_string_is_a_final_answer():
    """Plain text: no calls."""
    assert as_reply("It is 42.") == Reply("It is 42.")


def test_an_openai_dict_reply_with_calls():
    """``tool_calls`` with ``function.name/arguments``; content None is empty text."""
    reply = as_reply(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": '{"x": 1}'}}],
        }
    )
    assert reply == Reply("", (ToolCallRequest("a", "f", '{"x": 1}'),))


def test_an_openai_sdk_message():
    """A ChatCompletionMessage as the SDK parses it."""
    message = ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "content": "ok",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        }
    )
    assert as_reply(message) == Reply("ok", (ToolCallRequest("a", "f", "{}"),))


def test_a_langchain_ai_message():
    """An AIMessage: ``tool_calls`` of ``{name, args, id}``."""
    message = AIMessage(content="", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "a"}])
    assert as_reply(message) == Reply("", (ToolCallRequest("a", "f", {"x": 1}),))


def test_an_anthropic_message_with_text_and_tool_use_blocks():
    """Text blocks join into the text; tool_use blocks are calls."""
    message = Message.model_validate(
        {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "x",
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {"q": "x"}},
            ],
        }
    )
    assert as_reply(message) == Reply("Let me look.", (ToolCallRequest("t1", "f", {"q": "x"}),))


@pytest.mark.parametrize("value", [None, 42, ["a"], b"bytes", object()])
def test_anything_else_is_refused_naming_what_came_back(value):
    """None, numbers, lists, bytes and bare objects are not assistant messages."""
    with pytest.raises(ModelReplyError, match="the model returned"):
        as_reply(value)


@pytest.mark.parametrize(
    ("arguments", "text"),
    [('{"a": 1}', '{"a": 1}'), ({"a": 1}, '{"a":1}'), ("{bad", "{}"), ("[1]", "{}")],
)
def test_arguments_are_echoed_into_the_history_only_as_a_json_object(arguments, text):
    """Objects pass; malformed or non-object arguments become ``{}`` in the history."""
    assert arguments_json(arguments) == text


def test_to_anthropic_moves_system_out_and_alternates_roles():
    """System text goes to ``system``; results and the next user text share one user turn."""
    system, messages = to_anthropic(HISTORY)
    assert system == "be brief"
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assistant = messages[1]["content"]
    assert [b["type"] for b in assistant] == ["text", "tool_use", "tool_use"]
    assert assistant[1]["input"] == {"q": "x"}
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert messages[2]["content"][1] == {
        "type": "tool_result",
        "tool_use_id": "c2",
        "content": "two",
    }


def _transport(replies: list[dict[str, Any]], seen: list[dict[str, Any]]) -> httpx2.Client:
    """An HTTP client whose server records each request body and answers the next reply."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return httpx2.Response(200, json=replies[len(seen) - 1])

    return httpx2.Client(transport=httpx2.MockTransport(handle))


def _chat_completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
    }


def test_openai_model_sends_messages_and_tools_through_the_sdk():
    """The real SDK client posts the history and tools; its parsed message is the reply."""
    seen: list[dict[str, Any]] = []
    reply = _chat_completion({"role": "assistant", "content": "It was two."})
    client = openai.OpenAI(api_key="test", http_client=_transport([reply], seen))
    model = openai_model("gpt-test", client=client, temperature=0)
    assert as_reply(model(HISTORY, TOOLS)).text == "It was two."
    assert seen[0]["model"] == "gpt-test"
    assert seen[0]["messages"] == HISTORY
    assert seen[0]["tools"] == TOOLS
    assert seen[0]["temperature"] == 0


def test_openai_model_runs_a_whole_trial_with_a_refetch():
    """Through the SDK: the model refetches, then answers; classified as refetched."""
    episode = BUILTIN_SCENARIOS["file_reading"].episode(0)
    path = episode.target.args["path"]
    call = {
        "id": "r1",
        "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"path": path})},
    }
    replies = [
        _chat_completion({"role": "assistant", "content": None, "tool_calls": [call]}),
        _chat_completion(
            {"role": "assistant", "content": f"{episode.question.check.expected} lines"}
        ),
    ]
    seen: list[dict[str, Any]] = []
    client = openai.OpenAI(api_key="test", http_client=_transport(replies, seen))
    trial = run_trial(episode, HEAD0, openai_model("m", client=client))
    assert (trial.outcome, trial.correct) == ("refetched", True)
    assert seen[1]["messages"][-1]["tool_call_id"] == "r1"


def test_openai_model_without_a_key_says_how_to_give_one(monkeypatch):
    """No key anywhere: a ConfigurationError naming --api-key and OPENAI_API_KEY."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        openai_model("m", base_url="http://localhost:1/v1")


def test_anthropic_model_converts_the_history_and_parses_tool_use():
    """The real SDK client gets Anthropic messages and tools; tool_use comes back as a call."""
    seen: list[dict[str, Any]] = []
    reply = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [{"type": "tool_use", "id": "t", "name": "s", "input": {"q": "z"}}],
    }
    client = anthropic.Anthropic(api_key="test", http_client=_transport([reply], seen))
    model = anthropic_model("claude-test", client=client, max_tokens=64)
    assert as_reply(model(HISTORY, TOOLS)).calls == (ToolCallRequest("t", "s", {"q": "z"}),)
    body = seen[0]
    assert body["system"] == "be brief"
    assert body["max_tokens"] == 64
    assert body["tools"] == [
        {"name": "s", "description": "search", "input_schema": {"type": "object"}}
    ]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]


class ScriptedChatModel(GenericFakeChatModel):
    """A LangChain chat model whose replies are scripted; records what it was sent."""

    sent: list[Any] = Field(default_factory=list)
    bound: list[Any] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        self.bound.append(tools)
        return self

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        self.sent.append(input)
        return super().invoke(input, config, **kwargs)


def test_langchain_model_binds_the_tools_and_converts_the_history():
    """OpenAI-form dicts become LangChain messages with the calls and results paired."""
    chat = ScriptedChatModel(messages=iter([AIMessage(content="It was two.")]))
    reply = as_reply(langchain_model(chat)(HISTORY, TOOLS))
    assert reply.text == "It was two."
    assert chat.bound == [TOOLS]
    kinds = [m.type for m in chat.sent[0]]
    assert kinds == ["system", "human", "ai", "tool", "tool", "human"]
    assert chat.sent[0][2].tool_calls[1]["args"] == {"q": "y"}


def test_run_recall_accepts_a_langchain_chat_model_directly():
    """A chat model object (bind_tools/invoke) is wrapped without ceremony."""
    answers = iter([AIMessage(content="no idea")] * len(DEFAULT_SWEEP))
    chat = ScriptedChatModel(messages=answers)
    report = run_recall(["file_reading"], chat, repeats=1)
    assert [t.outcome for t in report.trials] == ["declined"] * len(DEFAULT_SWEEP)


def test_langchain_model_refuses_objects_that_are_not_chat_models():
    """An object without bind_tools/invoke is a configuration error."""
    with pytest.raises(ConfigurationError, match="not a LangChain chat model"):
        langchain_model(object())


def test_a_langchain_tool_call_is_served_and_answered():
    """An AIMessage with tool_calls is served like any other call."""
    episode = BUILTIN_SCENARIOS["api_listing"].episode(0)
    again = AIMessage(
        content="",
        tool_calls=[{"name": episode.target.tool, "args": dict(episode.target.args), "id": "lc1"}],
    )
    chat = ScriptedChatModel(
        messages=iter([again, AIMessage(content="not sure")]), sent=[], bound=[]
    )
    trial = run_trial(episode, HEAD0, langchain_model(chat))
    assert trial.outcome == "refetched"
    assert chat.sent[1][-1].type == "tool"


@pytest.mark.subprocess
def test_importing_the_eval_package_pulls_in_no_framework_or_sdk():
    """slimtools.eval imports LangChain, OpenAI and Anthropic only when an adapter is called."""
    probe = (
        "import json, sys, slimtools.eval, slimtools.cli; print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = {name.split(".")[0] for name in json.loads(out.stdout)}
    assert loaded.isdisjoint({"langchain", "langchain_core", "openai", "anthropic", "llama_cpp"})
