"""``slimtools.wrap``: tools we did not write, slimmed in process, run by their own agent loops.

Each framework's original tool returns all 24 tickets with their bodies and a tenant; the
wrapped one shows 3 allowlisted briefs a page, pages from the snapshot, and expands a handle
with ``get_record``; ``tenant`` is denied everywhere.
"""

from __future__ import annotations

import functools
import json
from typing import Annotated, Any

import pytest
from agents import Agent, FunctionTool, RunConfig, RunContextWrapper, Runner, function_tool
from agents.testing import ModelCall, ScriptedModel, assistant_message, function_call
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, ToolException
from langchain_core.tools import tool as lc_tool
from pydantic import BaseModel
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import Tool
from pydantic_ai.messages import TextPart, ToolCallPart, ToolReturnPart

from slimtools import ConfigurationError, Toolkit, wrap
from tests.adapters.sdk_adapter_fixtures import TICKETS
from tests.adapters.test_adapter_langchain import call, scripted
from tests.adapters.test_adapter_pydantic_ai import _returns, _scripted

OPTIONS = {"fields": ["id", "title", "status"], "key": "id", "limit": 3, "deny": ["tenant"]}
SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
}


def _matching(query: str) -> list[dict[str, Any]]:
    return [dict(t) for t in TICKETS if query in t["title"]]


def mcp_style_tool(calls: list[str]) -> StructuredTool:
    """A tool shaped as langchain-mcp-adapters builds them (that package needs mcp<2).

    Coroutine only, a JSON Schema dict, ``content_and_artifact``: text blocks as content and
    ``{"structured_content": ...}`` as the artifact.
    """

    async def search(**arguments: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        calls.append(arguments["query"])
        found = _matching(arguments["query"])
        blocks = [{"type": "text", "text": json.dumps({"tickets": found})}]
        return blocks, {"structured_content": {"tickets": found}}

    return StructuredTool(
        name="search_tickets",
        description="Search support tickets.",
        args_schema=SCHEMA,
        coroutine=search,
        response_format="content_and_artifact",
    )


async def test_a_langchain_mcp_tool_is_slimmed_inside_create_agent():
    """create_agent: search, page 2 (no second upstream call), get_record without the tenant."""
    calls: list[str] = []
    kit = Toolkit("lc")
    tools = wrap([mcp_style_tool(calls)], toolkit=kit, items="tickets", **OPTIONS)
    assert [t.name for t in tools] == ["search_tickets", "get_record"]
    assert all(isinstance(t, BaseTool) for t in tools)
    model = scripted(
        [call("search_tickets", "c1", query="timeout")],
        [call("search_tickets", "c2", query="timeout", page=2)],
        [call("get_record", "c3", handle=7)],
        "done",
    )
    out = await create_agent(model, tools).ainvoke({"messages": [HumanMessage("timeouts?")]})
    page1, page2, record = (
        json.loads(m.content) for m in out["messages"] if isinstance(m, ToolMessage)
    )
    assert page1["total"] == 12
    assert [b["id"] for b in page1["briefs"]] == [1, 3, 5]
    assert [b["id"] for b in page2["briefs"]] == [7, 9, 11]
    assert set(page1["briefs"][0]) == {"id", "title", "status"}
    assert record["body"].startswith("stack trace")
    assert "tenant" not in record
    assert calls == ["timeout"]
    bound = {f["name"]: f for f in model.bound}
    assert {"query", "page", "limit"} == set(bound["search_tickets"]["parameters"]["properties"])


def test_a_langchain_tool_error_passes_through_as_an_error_message():
    """A tool error reaches the model as an error ToolMessage with the tool's words."""

    def broken(query: str) -> str:
        """Always fails."""
        raise ToolException("backend down")

    tool = StructuredTool.from_function(broken, name="broken", handle_tool_error=True)
    wrapped = wrap(tool, toolkit=Toolkit("lc-err"), **OPTIONS)
    message = wrapped.invoke(call("broken", "c1", query="x"))
    assert message.status == "error"
    assert "backend down" in message.content


def test_a_langchain_tool_error_quoting_a_row_loses_its_denied_values():
    """With only ``deny``, a framework tool's exception quoting a row keeps the row's ssn out."""

    @lc_tool
    def find_user(query: str) -> str:
        """Find a user."""
        raise ValueError(f"bad row {{'id': 1, 'ssn': '123-45-6789', 'name': 'Ann'}} for {query}")

    wrapped = wrap(find_user, toolkit=Toolkit("lc-err-deny"), deny=["ssn"])
    message = wrapped.invoke(call("find_user", "c1", query="x"))
    assert message.status == "error"
    assert "123-45-6789" not in message.content
    assert "'name': 'Ann'" in message.content


OFFLINE = RunConfig(tracing_disabled=True)


def _last_output(model_call: ModelCall) -> str:
    return str(model_call.input[-1]["output"])


async def test_an_agents_sdk_function_tool_is_slimmed_inside_a_run():
    """A scripted Agents SDK run: search, page 2, get_record; the tool's context reaches it."""
    seen_contexts: list[Any] = []

    @function_tool
    def search_tickets(ctx: RunContextWrapper[Any], query: str) -> list[dict[str, Any]]:
        """Search support tickets."""
        seen_contexts.append(ctx)
        return _matching(query)

    tools = wrap([search_tickets], toolkit=Toolkit("agents"), **OPTIONS)
    assert all(isinstance(t, FunctionTool) for t in tools)
    model = ScriptedModel(
        [
            [
                function_call(
                    "search_tickets", {"query": "timeout", "page": None, "limit": None}, call_id="1"
                )
            ],
            [
                function_call(
                    "search_tickets", {"query": "timeout", "page": 2, "limit": 3}, call_id="2"
                )
            ],
            [function_call("get_record", {"handle": 9, "source": None, "page": None}, call_id="3")],
            [assistant_message("done")],
        ]
    )
    agent = Agent(name="support", model=model, tools=tools)
    result = await Runner.run(agent, "timeouts?", run_config=OFFLINE)
    page1, page2, record = (json.loads(_last_output(c)) for c in model.calls[1:])
    assert [b["id"] for b in page1["briefs"]] == [1, 3, 5]
    assert page2["page"] == 2
    assert record["id"] == 9
    assert "tenant" not in record
    assert len(seen_contexts) == 1
    assert seen_contexts[0] is not None
    assert result.final_output == "done"


def test_a_pydantic_ai_tool_is_slimmed_inside_a_run():
    """A FunctionModel script: search, page 2, get_record, through Pydantic AI's own loop."""
    calls: list[str] = []

    def search_tickets(query: str) -> list[dict[str, Any]]:
        """Search support tickets."""
        calls.append(query)
        return _matching(query)

    tools = wrap([Tool(search_tickets)], toolkit=Toolkit("pai"), **OPTIONS)
    assert all(isinstance(t, Tool) for t in tools)
    model = _scripted(
        [ToolCallPart("search_tickets", {"query": "timeout"}, tool_call_id="c1")],
        [ToolCallPart("search_tickets", {"query": "timeout", "page": 2}, tool_call_id="c2")],
        [ToolCallPart("get_record", {"handle": 11}, tool_call_id="c3")],
        [TextPart("done")],
    )
    result = PydanticAgent(model, tools=tools).run_sync("timeouts?")
    page1, page2, record = (json.loads(p.content) for p in _returns(result.all_messages()))
    assert [b["id"] for b in page1["briefs"]] == [1, 3, 5]
    assert [b["id"] for b in page2["briefs"]] == [7, 9, 11]
    assert record["id"] == 11
    assert "tenant" not in record
    assert calls == ["timeout"]
    assert isinstance(_returns(result.all_messages())[0], ToolReturnPart)


class TicketBrief(BaseModel):
    id: int
    title: str


def test_a_plain_callable_takes_a_model_allowlist_and_keeps_its_signature():
    """A function wrapped with a Brief model returns envelopes; page/limit join its signature."""
    import inspect

    def search_tickets(query: str) -> list[dict[str, Any]]:
        """Search support tickets."""
        return _matching(query)

    kit = Toolkit("plain")
    tool = wrap(search_tickets, toolkit=kit, fields=TicketBrief, key="id", limit=4)
    env = tool("timeout")
    assert env.total == 12
    assert env.briefs[0] == {"id": 1, "title": "login timeout on node 1"}
    assert list(inspect.signature(tool).parameters) == ["query", "page", "limit"]
    assert json.loads(kit.get_record(1))["body"].startswith("stack trace")


def test_a_plain_callable_denied_paths_leave_the_callers_data_alone():
    """``deny`` strips a copy: the function's own records keep their fields."""
    rows = [{"id": 1, "secret": "s", "title": "t"}]
    kit = Toolkit("plain-deny")
    tool = wrap(lambda: rows, toolkit=kit, deny=["secret"], key="id", fields=["id", "title"])
    tool()
    assert "secret" not in kit.get_record(1)
    assert rows[0]["secret"] == "s"


def test_unknown_options_are_configuration_errors():
    """A misspelt option is refused with the list of options."""
    with pytest.raises(ConfigurationError, match="limt"):
        wrap(lambda q: [], limt=3)


def test_options_and_config_together_are_refused():
    """Options come either as a config table or as keywords."""
    with pytest.raises(ConfigurationError, match="either"):
        wrap(lambda q: [], config={"limit": 3}, limit=4)


def test_an_object_of_no_supported_kind_is_a_type_error():
    """A value that is no tool says which kinds wrap takes."""
    with pytest.raises(TypeError, match="BaseTool"):
        wrap(42)


def search_tickets_in(db: str, query: str) -> list[dict[str, Any]]:
    """Search tickets in one database."""
    return [{**t, "db": db} for t in _matching(query)]


class TicketSearch:
    """Search tickets by title."""

    def __call__(self, query: str) -> list[dict[str, Any]]:
        return _matching(query)


class AsyncTicketSearch:
    """Search tickets by title, asynchronously."""

    async def __call__(self, query: str) -> list[dict[str, Any]]:
        return _matching(query)


def test_a_partial_is_named_and_described_after_its_function():
    """``functools.partial(f, ...)`` becomes tool ``f`` with ``f``'s docstring, and the
    bound arguments are not the model's to send."""
    kit = Toolkit("partial")
    wrap(functools.partial(search_tickets_in, "prod"), toolkit=kit, **OPTIONS)
    (spec,) = kit.tools[:1]
    assert (spec.name, spec.description) == ("search_tickets_in", "Search tickets in one database.")
    assert "db" not in spec.parameters["properties"]
    briefs = json.loads(kit.call("search_tickets_in", {"query": "a"}).text)["briefs"]
    assert briefs
    assert all(set(b) <= {"id", "title", "status"} for b in briefs)


def test_a_callable_object_is_named_after_its_class_in_snake_case():
    """An instance with ``__call__`` becomes tool ``ticket_search``, described by its class."""
    kit = Toolkit("object")
    wrap(TicketSearch(), toolkit=kit, **OPTIONS)
    (spec,) = kit.tools[:1]
    assert (spec.name, spec.description) == ("ticket_search", "Search tickets by title.")
    result = json.loads(kit.call("ticket_search", {"query": "a"}).text)
    assert result["total"] == len(_matching("a"))
    assert all("tenant" not in b for b in result["briefs"])


async def test_an_async_callable_object_is_awaited():
    """An object whose ``__call__`` is ``async def`` is run as an async tool."""
    kit = Toolkit("async-object")
    wrap(AsyncTicketSearch(), toolkit=kit, **OPTIONS)
    result = await kit.acall("async_ticket_search", {"query": "a"})
    assert not result.is_error
    assert json.loads(result.text)["total"] == len(_matching("a"))


def test_a_class_is_no_tool():
    """A class is callable but not a tool: refused with the kinds wrap takes."""
    with pytest.raises(TypeError, match="callable object"):
        wrap(TicketSearch)


def _rows_tool(name: str, rows: list[dict[str, Any]]) -> StructuredTool:
    def list_rows(query: str) -> list[dict[str, Any]]:
        """List rows."""
        return rows

    return StructuredTool.from_function(list_rows, name=name)


def test_langchain_records_holding_a_datetime_are_projected_and_denied():
    """A ``datetime`` would make LangChain send a repr; the wrapped tool projects the records."""
    from datetime import datetime, timezone

    when = datetime(2026, 1, 2, tzinfo=timezone.utc)
    rows = [{"id": i, "title": f"t{i}", "at": when, "tenant": "acme-secret"} for i in range(4)]
    tool = wrap(_rows_tool("dated", rows), toolkit=Toolkit("lc-dt"), **OPTIONS)
    message = tool.invoke(call("dated", "c1", query="x"))
    assert "acme-secret" not in str(message.content)
    assert json.loads(message.content)["briefs"][0] == {"id": 0, "title": "t0"}


def test_langchain_records_typed_file_are_records_not_content_blocks():
    """Directory listings carry ``"type": "file"``: they are projected, not passed as blocks."""
    rows = [
        {"id": i, "title": f"f{i}.py", "type": "file", "tenant": "acme-secret"} for i in range(4)
    ]
    tool = wrap(_rows_tool("listing", rows), toolkit=Toolkit("lc-file"), **OPTIONS)
    message = tool.invoke(call("listing", "c1", query="x"))
    assert "acme-secret" not in str(message.content)
    assert json.loads(message.content)["total"] == 4


def test_a_langchain_tool_returning_json_text_is_still_read_as_records():
    """Text that is JSON is parsed as before, now that plain tools are called with arguments."""

    def as_text(query: str) -> str:
        """JSON text."""
        return json.dumps([{"id": 1, "title": "a", "tenant": "acme-secret"}])

    tool = wrap(StructuredTool.from_function(as_text), toolkit=Toolkit("lc-txt"), **OPTIONS)
    message = tool.invoke(call("as_text", "c1", query="x"))
    assert json.loads(message.content)["briefs"] == [{"id": 1, "title": "a"}]


def test_a_langchain_validation_error_passes_through_as_an_error():
    """A tool that handles validation errors answers the model with its error text."""
    tool = _rows_tool("strict_rows", [])
    tool.handle_validation_error = "bad arguments"
    wrapped = wrap(tool, toolkit=Toolkit("lc-val"), **OPTIONS)
    message = wrapped.invoke(call("strict_rows", "c1", query={"not": "a string"}))
    assert message.status == "error"
    assert "bad arguments" in message.content


def test_two_tools_of_one_name_are_refused():
    """The second would silently answer for the first: refused, saying how to rename."""
    kit = Toolkit("dup")
    with pytest.raises(ConfigurationError, match=r"tool\.name = "):
        wrap([_rows_tool("rows", []), _rows_tool("rows", [])], toolkit=kit)


def test_wrapping_another_tool_under_a_taken_name_is_refused():
    """A later wrap() of a different tool with the same name on the same toolkit is refused."""
    kit = Toolkit("dup2")
    wrap(_rows_tool("rows", []), toolkit=kit)
    with pytest.raises(ConfigurationError, match="two tools are named 'rows'"):
        wrap(_rows_tool("rows", []), toolkit=kit)


def test_wrapping_the_same_tool_again_is_allowed():
    """Re-running a notebook cell wraps the same tool again: no clash."""
    kit = Toolkit("again")
    original = _rows_tool("rows", [])
    wrap(original, toolkit=kit)
    wrap(original, toolkit=kit, limit=5)


def test_a_tool_named_like_the_companion_says_how_to_rename_it():
    """A tool called get_record would hide the record tool: the message names companion_name."""
    with pytest.raises(ConfigurationError, match="companion_name="):
        wrap(_rows_tool("get_record", []), toolkit=Toolkit("comp"))


def test_response_format_is_refused_with_what_to_do_instead():
    """``response_format=True`` would add no parameter: refused, naming the alternatives."""
    with pytest.raises(ConfigurationError, match="does not add a response_format"):
        wrap(_rows_tool("rf", []), toolkit=Toolkit("rf"), fields=["id"], response_format=True)


async def test_a_langchain_mcp_result_beside_an_image_is_screened():
    """JSON text beside an image passes through, without the denied field or unlisted ones."""

    async def shot(**arguments: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        rows = [dict(t) for t in TICKETS[:2]]
        image = {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"}
        return [{"type": "text", "text": json.dumps(rows)}, image], {"structured_content": None}

    tool = StructuredTool(
        name="shot_tickets",
        description="Tickets and a screenshot.",
        args_schema=SCHEMA,
        coroutine=shot,
        response_format="content_and_artifact",
    )
    wrapped = wrap(tool, toolkit=Toolkit("lc-shot"), **OPTIONS)
    message = await wrapped.ainvoke(call("shot_tickets", "c1", query="x"))
    text = json.dumps(message.content)
    assert "tenant" not in text
    assert "body" not in text
    assert "image" in text


def test_a_langchain_tool_taking_its_call_id_still_gets_one():
    """A tool with an ``InjectedToolCallId`` argument is called with a tool call, as it needs."""

    @lc_tool
    def tagged(query: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Echo the call id."""
        return json.dumps([{"id": 1, "title": tool_call_id, "tenant": "acme-secret"}])

    wrapped = wrap(tagged, toolkit=Toolkit("lc-id"), **OPTIONS)
    message = wrapped.invoke(call("tagged", "c1", query="x"))
    brief = json.loads(message.content)["briefs"][0]
    assert brief["title"].startswith("slimtools-")


@pytest.mark.parametrize("options", [{}, OPTIONS])
def test_wrapping_an_async_generator_pages_what_it_yields(options):
    """A plain async generator function, with or without an allowlist, is read like a list."""

    async def list_tickets(query: str = "") -> Any:
        for ticket in TICKETS:
            yield ticket

    kit = Toolkit("wrap-async-gen")
    wrap(list_tickets, toolkit=kit, **{"limit": 3, **options})
    result = json.loads(kit.call("list_tickets", {}).text)
    assert result["total"] == len(TICKETS)
    assert len(result["briefs"]) == 3
    if options:
        assert all("tenant" not in brief for brief in result["briefs"])


@pytest.mark.parametrize("config", [[("fields", ["id"])], "fields = ['id']", 3])
def test_a_config_that_is_not_a_table_is_a_configuration_error(config):
    """``config=`` must be a mapping like a proxy ``[tools.NAME]`` table; anything else
    is refused by name, not with a ``dict()`` conversion error."""

    def list_tickets() -> list[dict[str, Any]]:
        return TICKETS

    with pytest.raises(ConfigurationError, match=r"config must be a mapping"):
        wrap(list_tickets, toolkit=Toolkit("wrap-bad-config"), config=config)
