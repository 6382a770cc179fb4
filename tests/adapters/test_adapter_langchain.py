"""LangChain / LangGraph adapter: real StructuredTools in create_agent and ToolNode, offline."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field

from slimtools import session
from slimtools.adapters.langchain import to_langchain_tools
from tests.adapters.langchain_mcp_fixtures import LOGS, make_log_kit
from tests.adapters.sdk_adapter_fixtures import OBJECT_CASES, import_error_without, make_kit


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, taught to accept tools and to remember its prompts."""

    bound: list[dict[str, Any]] = Field(default_factory=list)
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        self.bound[:] = [convert_to_openai_tool(t)["function"] for t in tools]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.prompts.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    """A tool call as a chat model emits it."""
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def scripted(*turns: list[dict[str, Any]] | str) -> ScriptedChatModel:
    """A fake model that emits these tool calls (or final text), one turn per round."""
    messages = [AIMessage(t) if isinstance(t, str) else AIMessage("", tool_calls=t) for t in turns]
    return ScriptedChatModel(messages=iter(messages))


def by_name(tools: list[StructuredTool], name: str) -> StructuredTool:
    return next(t for t in tools if t.name == name)


SEARCH_PAGE_EXPAND = (
    [call("search_logs", "c1", query="timeout")],
    [call("search_logs", "c2", query="timeout", page=2)],
    [call("get_record", "c3", handle=5)],
    "Row 5: billing-service timed out after 30s.",
)


def test_one_structured_tool_per_toolkit_tool_with_get_record_last():
    """Every tool of the kit becomes a StructuredTool, in order, get_record included."""
    kit = make_log_kit()
    tools = to_langchain_tools(kit)
    assert all(isinstance(t, StructuredTool) for t in tools)
    assert [t.name for t in tools] == [s.name for s in kit.tools]
    assert tools[-1].name == "get_record"


def test_args_schema_is_the_toolkits_own_json_schema():
    """LangChain does not re-infer the schema: args_schema is ToolSpec.parameters."""
    kit = make_log_kit()
    for tool, spec in zip(to_langchain_tools(kit), kit.tools, strict=True):
        assert tool.args_schema == spec.parameters
        assert tool.description == spec.description


def test_model_sees_page_and_limit_typed_with_defaults_and_descriptions():
    """The function schema sent to a chat model shows page/limit fully described."""
    tool = by_name(to_langchain_tools(make_log_kit()), "search_logs")
    params = convert_to_openai_tool(tool)["function"]["parameters"]
    page, limit = params["properties"]["page"], params["properties"]["limit"]
    assert (page["type"], page["default"]) == ("integer", 1)
    assert (limit["type"], limit["default"]) == ("integer", 3)
    assert page["description"]
    assert limit["description"]
    assert params["required"] == ["query"]


def test_get_record_schema_requires_handle_and_offers_source_and_page():
    """get_record takes a string-or-integer handle, and optional source and page."""
    tool = by_name(to_langchain_tools(make_log_kit()), "get_record")
    params = convert_to_openai_tool(tool)["function"]["parameters"]
    assert params["required"] == ["handle"]
    handle_types = {v["type"] for v in params["properties"]["handle"]["anyOf"]}
    assert handle_types == {"string", "integer"}
    assert params["properties"]["page"]["default"] == 1
    assert "source" in params["properties"]


def test_tool_message_content_is_envelope_and_artifact_is_the_page():
    """Content is ToolResult.text (compact JSON); the artifact is the same page as a dict."""
    kit = make_log_kit()
    tool = by_name(to_langchain_tools(kit), "search_logs")
    msg = tool.invoke(call("search_logs", "c1", query="timeout"))
    assert isinstance(msg, ToolMessage)
    assert msg.status == "success"
    assert msg.content == kit.call("search_logs", {"query": "timeout"}).text
    assert msg.artifact == json.loads(msg.content)
    assert msg.artifact["total"] == 12
    assert len(msg.artifact["briefs"]) == 3
    assert "tenant" not in msg.content


def test_get_record_expands_a_handle_to_the_full_record():
    """get_record(5) returns the whole original row, fields outside the brief included."""
    tools = to_langchain_tools(make_log_kit())
    by_name(tools, "search_logs").invoke(call("search_logs", "c1", query="timeout", page=2))
    msg = by_name(tools, "get_record").invoke(call("get_record", "c2", handle=5))
    assert msg.status == "success"
    assert json.loads(msg.content) == LOGS[4]


async def test_ainvoke_awaits_an_async_tool():
    """An async tool runs through kit.acall under ainvoke and keeps its handles."""
    tools = to_langchain_tools(make_log_kit())
    msg = await by_name(tools, "recent_errors").ainvoke(call("recent_errors", "c1", count=2))
    briefs = msg.artifact["briefs"]
    assert [b["id"] for b in briefs] == [1, 3]
    full = await by_name(tools, "get_record").ainvoke(
        call("get_record", "c2", handle=briefs[0]["handle"])
    )
    assert json.loads(full.content) == LOGS[0]


def test_invoke_runs_an_async_tool_without_a_running_loop():
    """The sync path (kit.call) also serves an async tool when no event loop runs."""
    tool = by_name(to_langchain_tools(make_log_kit()), "recent_errors")
    msg = tool.invoke(call("recent_errors", "c1"))
    assert msg.status == "success"
    assert msg.artifact["total"] == 2


async def test_ainvoke_of_a_sync_tool_matches_invoke():
    """A sync tool gives the same message through ainvoke as through invoke."""
    tools = to_langchain_tools(make_log_kit())
    tool = by_name(tools, "search_logs")
    sync = tool.invoke(call("search_logs", "c1", query="billing"))
    async_ = await tool.ainvoke(call("search_logs", "c1", query="billing"))
    assert async_.content == sync.content
    assert async_.artifact == sync.artifact


@pytest.mark.parametrize("case", OBJECT_CASES, ids=[c.id for c in OBJECT_CASES])
def test_untrusted_arguments_come_back_as_a_tool_message(case):
    """Bad calls return a ToolMessage the model can act on (status="error" when failed)."""
    tool = by_name(to_langchain_tools(make_kit("lc-untrusted")), case.tool)
    msg = tool.invoke(call(case.tool, "c1", **case.object_arguments))
    assert isinstance(msg, ToolMessage)
    assert msg.status == ("error" if case.is_error else "success")
    assert case.says in msg.content


def test_create_agent_searches_pages_and_expands_a_record():
    """A create_agent run: search, page 2, get_record on a handle, then a final answer."""
    model = scripted(*SEARCH_PAGE_EXPAND)
    agent = create_agent(model, to_langchain_tools(make_log_kit()))
    out = agent.invoke({"messages": [HumanMessage("Why do requests time out?")]})
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.status for m in results] == ["success"] * 3
    page1, page2, record = (json.loads(m.content) for m in results)
    assert [b["id"] for b in page1["briefs"]] == [1, 2, 3]
    assert [b["id"] for b in page2["briefs"]] == [4, 5, 6]
    assert record == LOGS[4]
    assert out["messages"][-1].content.startswith("Row 5")
    assert {f["name"] for f in model.bound} == {
        "search_logs",
        "read_log",
        "recent_errors",
        "get_record",
    }
    # What the model was sent on its last round ends with the expanded record.
    assert model.prompts[-1][-1].content == results[-1].content


def test_create_agent_run_survives_bad_calls():
    """Wrong types, an unknown tool and an unknown handle become error results; the run ends."""
    model = scripted(
        [call("search_logs", "c1", query="timeout", page="two")],
        [call("grep_logs", "c2", query="timeout")],
        [call("get_record", "c3", handle="nope42")],
        "I could not find it.",
    )
    out = create_agent(model, to_langchain_tools(make_log_kit())).invoke(
        {"messages": [HumanMessage("find it")]}
    )
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.status for m in results] == ["error"] * 3
    assert "page" in results[0].content
    assert "grep_logs" in results[1].content
    assert "nope42" in results[2].content
    assert "search_logs" in results[2].content
    assert out["messages"][-1].content == "I could not find it."


def react_graph(model: ScriptedChatModel, tools: list[StructuredTool]) -> Any:
    """The classic LangGraph loop: a model node, a ToolNode, and tools_condition."""
    bound = model.bind_tools(tools)

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


async def test_tool_node_graph_searches_pages_and_expands_a_record():
    """An async LangGraph ToolNode run: search, page 2, then get_record expands a handle."""
    app = react_graph(scripted(*SEARCH_PAGE_EXPAND), to_langchain_tools(make_log_kit()))
    out = await app.ainvoke({"messages": [HumanMessage("Why do requests time out?")]})
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in results] == ["search_logs", "search_logs", "get_record"]
    assert results[1].artifact["page"] == 2
    assert json.loads(results[2].content) == LOGS[4]


async def test_tool_node_reads_a_long_text_page_by_page():
    """A text result's handle pages through get_record(handle, page=2) in a ToolNode run."""
    tools = to_langchain_tools(make_log_kit())
    first = await by_name(tools, "read_log").ainvoke(call("read_log", "c0", path="a.log"))
    handle = first.artifact["handle"]
    app = react_graph(scripted([call("get_record", "c1", handle=handle, page=2)], "ok"), tools)
    out = await app.ainvoke({"messages": [HumanMessage("read on")]})
    page2 = json.loads(next(m for m in out["messages"] if isinstance(m, ToolMessage)).content)
    assert page2["page"] == 2
    assert page2["text"].startswith("03:05")


def test_session_keyword_scopes_handles():
    """Handles made with session="alice" do not resolve for tools bound to session="bob"."""
    kit = make_log_kit()
    alice, bob = to_langchain_tools(kit, session="alice"), to_langchain_tools(kit, session="bob")
    by_name(alice, "search_logs").invoke(call("search_logs", "c1", query="timeout"))
    denied = by_name(bob, "get_record").invoke(call("get_record", "c2", handle=1))
    allowed = by_name(alice, "get_record").invoke(call("get_record", "c3", handle=1))
    assert denied.status == "error"
    assert json.loads(allowed.content) == LOGS[0]


def test_a_bound_session_flows_into_agent_runs():
    """slimtools.session(...) around agent.invoke scopes the handles its tools make."""
    tools = to_langchain_tools(make_log_kit())

    def run(*turns: Any) -> list[ToolMessage]:
        out = create_agent(scripted(*turns, "done"), tools).invoke({"messages": [HumanMessage("")]})
        return [m for m in out["messages"] if isinstance(m, ToolMessage)]

    with session("alice"):
        run([call("search_logs", "c1", query="timeout")])
        (mine,) = run([call("get_record", "c2", handle=1)])
    with session("bob"):
        (theirs,) = run([call("get_record", "c3", handle=1)])
    assert json.loads(mine.content) == LOGS[0]
    assert theirs.status == "error"


@pytest.mark.subprocess
def test_missing_framework_raises_an_import_error_naming_the_extra():
    """Without the LangChain, importing the adapter says which extra to install."""
    stderr = import_error_without("langchain_core", "slimtools.adapters.langchain")
    assert "pip install 'slimtools[langchain]'" in stderr
