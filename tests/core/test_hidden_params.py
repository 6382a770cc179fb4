"""Hints and schemas show only the parameters the model can see; secrets are never echoed."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from agents import RunContextWrapper, function_tool
from agents.tool_context import ToolContext
from langchain_core.tools import InjectedToolArg, InjectedToolCallId, StructuredTool
from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime
from pydantic import SecretStr
from pydantic_ai import Agent, RunContext
from pydantic_ai.models.test import TestModel

from slimtools import Hidden, Secret, Toolkit, paginate, summarize_with_handle
from tests.core_helpers import next_call

ROWS = list(range(5))
TOKEN = SecretStr("s")
PASSWORD = SecretStr("hunter2-correct-horse")


def test_hints_never_repeat_a_hidden_argument():
    """An argument marked ``Hidden`` is not in the hint; the next call is still exact."""
    calls: list[str] = []

    @paginate(limit=2)
    def search(query: str, api_token: Annotated[str, Hidden] = "") -> list[int]:
        calls.append(api_token)
        return ROWS

    env = search("x", api_token="sk-live-51HqLyjWDarjtT1zdp7dc")
    assert "sk-live" not in env.hint
    assert "api_token" not in env.hint
    nxt = next_call(env.hint, "search")
    assert nxt == {"query": "x", "page": 2}
    assert search(**nxt, api_token="sk-live-51HqLyjWDarjtT1zdp7dc").briefs == [2, 3]
    assert len(calls) == 1  # page 2 came from the snapshot


def test_a_hidden_argument_still_keys_the_snapshot():
    """Two tenants' page 2 never share a snapshot, though hints show neither tenant."""

    @paginate(limit=2)
    def search(query: str, tenant: Annotated[str, Hidden] = "") -> list[str]:
        return [f"{tenant}{i}" for i in range(5)]

    search("x", tenant="a")
    assert search("x", tenant="b", page=2).briefs == ["b2", "b3"]


@pytest.mark.parametrize(
    "annotation", [SecretStr, SecretStr | None, Annotated[str, Secret]], ids=str
)
def test_secret_values_are_never_echoed_in_hints(annotation):
    """``SecretStr``/``Secret`` values reach the function but never a hint."""
    seen: list[Any] = []

    def search(query: str, password: Any = None) -> list[int]:
        seen.append(password)
        return ROWS

    search.__annotations__["password"] = annotation
    tool = paginate(limit=2)(search)
    secret = (
        SecretStr("hunter2-correct-horse")
        if annotation is not Annotated[str, Secret]
        else ("hunter2-correct-horse")
    )
    env = tool("x", password=secret)
    assert "hunter2" not in str(env)
    assert "password" not in env.hint
    assert seen == [secret]


def test_secrets_with_distinct_values_key_distinct_snapshots():
    """Two ``SecretStr`` values are two queries, although neither is ever shown."""

    @paginate(limit=2)
    def search(query: str, token: SecretStr | None = None) -> list[str]:
        assert token is not None
        return [token.get_secret_value() + str(i) for i in range(5)]

    search("x", token=SecretStr("a"))
    assert search("x", token=SecretStr("b"), page=2).briefs == ["b2", "b3"]


def test_hidden_and_secret_parameters_are_not_in_the_schema():
    """The model's schema lists only what the model may send."""
    kit = Toolkit("k")

    @kit.tool
    @paginate(limit=2)
    def search(
        query: str,
        tenant: Annotated[str, Hidden] = "t",
        token: SecretStr = TOKEN,
        key: Annotated[str, Secret] = "k",
    ) -> list[int]:
        """Search."""
        return ROWS

    assert set(kit.spec("search").parameters["properties"]) == {"query", "page", "limit"}


def test_the_model_cannot_send_a_hidden_argument_through_var_keyword():
    """A tool taking ``**kwargs`` still refuses a hidden parameter's name from the model."""
    kit = Toolkit("k")

    @kit.tool
    def search(query: str, tenant: Annotated[str, Hidden] = "mine", **filters: Any) -> str:
        """Search."""
        return tenant

    result = kit.call("search", {"query": "x", "tenant": "theirs"})
    assert result.is_error
    assert "unknown argument 'tenant'" in result.text
    assert kit.call("search", {"query": "x", "level": "E"}).text == "mine"


def test_error_messages_never_contain_a_secret_value():
    """A tool that puts its secret in an exception message has it removed before the model."""
    kit = Toolkit("k")

    @kit.tool
    def connect(host: str, password: SecretStr = PASSWORD) -> str:
        """Connect."""
        raise ConnectionError(f"login to {host} with {password.get_secret_value()} refused")

    text = kit.call("connect", {"host": "db"}).text
    assert "hunter2" not in text
    assert "login to db with" in text


# parameters frameworks inject --------------------------------------------------------


def _langchain_tool() -> Any:
    @summarize_with_handle(key="id")
    @paginate(limit=2)
    def search(
        query: str,
        state: Annotated[dict[str, Any], InjectedState],
        call_id: Annotated[str, InjectedToolCallId],
        tenant: Annotated[str, InjectedToolArg] = "acme",
    ) -> list[dict[str, Any]]:
        """Search."""
        return [{"id": i, "tenant": tenant} for i in range(5)]

    return search


def test_langchain_injected_arguments_are_hidden_from_schema_and_hints():
    """InjectedState/InjectedToolCallId/InjectedToolArg appear in neither."""
    kit = Toolkit("lc")
    tool = kit.tool(_langchain_tool())
    assert set(kit.spec("search").parameters["properties"]) == {"query", "page", "limit"}
    env = tool("x", state={"messages": ["secret chat"]}, call_id="call_1", tenant="globex")
    assert next_call(env.hint, "search") == {"query": "x", "page": 2}
    assert StructuredTool.from_function(tool).tool_call_schema.model_json_schema()[
        "properties"
    ].keys() == {"query", "page", "limit"}


def test_framework_context_is_left_out_of_the_snapshot_key():
    """State and tool-call ids change every call; page 2 still reads page 1's snapshot."""
    calls: list[str] = []

    @paginate(limit=2)
    def search(
        query: str,
        state: Annotated[dict[str, Any], InjectedState],
        call_id: Annotated[str, InjectedToolCallId],
    ) -> list[int]:
        calls.append(call_id)
        return ROWS

    search("x", state={"n": 1}, call_id="call_1")
    assert search("x", state={"n": 2}, call_id="call_2", page=2).briefs == [2, 3]
    assert calls == ["call_1"]


def test_an_injected_tool_arg_keys_the_snapshot():
    """A plain ``InjectedToolArg`` is the application's argument: it keys the snapshot."""
    tool = _langchain_tool()
    tool("x", state={}, call_id="c1", tenant="a")
    page2 = tool("x", state={}, call_id="c2", tenant="b", page=2)
    assert [b["tenant"] for b in page2.briefs] == ["b", "b"]


def test_pydantic_ai_run_context_is_hidden_from_hints():
    """A ``RunContext`` first parameter is injected by Pydantic AI and never echoed."""

    @paginate(limit=2)
    def search(ctx: RunContext[None], query: str) -> list[int]:
        """Search."""
        return ROWS

    result = Agent(TestModel(), tools=[search]).run_sync("go")
    returns = [
        part.content
        for message in result.all_messages()
        for part in message.parts
        if part.part_kind == "tool-return"
    ]
    assert returns
    assert all("ctx" not in str(r) and "deps" not in str(r) for r in returns)
    kit = Toolkit("pai")
    kit.tool(search)
    assert "ctx" not in kit.spec("search").parameters["properties"]


def test_openai_agents_context_is_hidden_from_schema_and_hints():
    """A ``RunContextWrapper`` first parameter is the SDK's, not the model's."""

    @paginate(limit=2)
    def search(ctx: RunContextWrapper[Any], query: str) -> list[int]:
        """Search."""
        return ROWS

    env = search(RunContextWrapper(context={"user": "secret"}), "x")
    assert next_call(env.hint, "search") == {"query": "x", "page": 2}
    assert "ctx" not in function_tool(search).params_json_schema["properties"]
    kit = Toolkit("oa")
    kit.tool(search)
    assert "ctx" not in kit.spec("search").parameters["properties"]


@pytest.mark.parametrize(
    "annotation",
    [
        ToolRuntime,
        ToolRuntime[None, dict[str, Any]],
        Annotated[Any, InjectedStore()],
        ToolContext[Any],
        RunContext[None],
    ],
    ids=["ToolRuntime", "ToolRuntime[...]", "InjectedStore", "ToolContext", "RunContext"],
)
def test_every_framework_context_parameter_is_left_out_of_the_schema(annotation):
    """Each framework's injected context type is recognised without importing the framework."""

    def search(context: Any, query: str) -> list[int]:
        """Search."""
        return ROWS

    search.__annotations__["context"] = annotation
    kit = Toolkit("ctx")
    kit.tool(paginate(limit=2)(search))
    assert list(kit.spec("search").parameters["properties"]) == ["query", "page", "limit"]


# hidden values in errors -----------------------------------------------------------------


def test_a_hidden_default_never_appears_in_the_error_text():
    """A tool that quotes its ``Hidden`` argument in an exception has it removed."""
    kit = Toolkit("k")

    @kit.tool
    def search(query: str, tenant: Annotated[str, Hidden] = "tenant-acme-7731") -> str:
        """Search."""
        raise PermissionError(f"tenant {tenant} may not search {query!r}")

    text = kit.call("search", {"query": "x"}).text
    assert "tenant-acme-7731" not in text
    assert "may not search 'x'" in text


def test_a_hidden_value_a_framework_passes_is_removed_from_the_exception():
    """The value an application passes at call time is removed from the exception itself,
    so a framework that shows ``str(exc)`` (LangChain) never shows it."""

    @paginate(limit=2)
    def search(query: str, tenant: Annotated[str, Hidden] = "") -> list[int]:
        raise KeyError(f"no index for tenant {tenant}")

    with pytest.raises(KeyError) as caught:
        search("x", tenant="tenant-globex-9921")
    assert "tenant-globex-9921" not in str(caught.value)
    assert "no index for tenant" in str(caught.value)


async def test_an_async_tools_hidden_value_is_removed_from_its_exception():
    """The same for an async tool."""

    @summarize_with_handle
    async def search(query: str, user_id: Annotated[int, Hidden] = 0) -> list[int]:
        raise LookupError("user", user_id, "has no rows")

    with pytest.raises(LookupError) as caught:
        await search("x", user_id=48213377)
    assert "48213377" not in str(caught.value)


def test_a_short_hidden_value_is_not_removed():
    """Values under four characters identify nothing and would shred the message."""
    kit = Toolkit("k")

    @kit.tool
    def search(query: str, region: Annotated[str, Hidden] = "eu") -> str:
        """Search."""
        raise ValueError(f"no such query in eu: {query}")

    assert "no such query in eu: x" in kit.call("search", {"query": "x"}).text
