"""Clearing in real LangGraph graphs and create_agent agents, driven offline by fake models."""

from __future__ import annotations

import json
from typing import Annotated, Any, TypedDict

import pytest
from hypothesis import given, settings
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field

from slimtools.adapters.langgraph import ClearingMiddleware, ClearingNode, replaced_messages
from slimtools.clearing import ClearingPolicy, clear_stale_results, is_placeholder
from tests._profile import examples
from tests.clearing.strategies_clearing import policies, render, turns

TURN_END = ClearingPolicy(cache=None)  # clear whatever is stale: the mechanics under test

ROUNDS = 6


class ScriptedModel(FakeMessagesListChatModel):
    """A fake chat model that plays a script and records every prompt it was given."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


@tool
def lorem_page(n: int) -> str:
    """Return a long page of text."""
    return f"page {n}: " + "lorem ipsum dolor " * 200


@tool
def create_ticket(title: str) -> str:
    """Create a ticket (a write whose confirmation should stay)."""
    return f"created ticket T-{len(title)}: " + "ok " * 300


def script(rounds: int = ROUNDS, tool_name: str = "lorem_page", run: str = "") -> list[BaseMessage]:
    calls = [
        AIMessage(
            "",
            id=f"ai{run}-{i}",
            tool_calls=[{"id": f"call{run}-{i}", "name": tool_name, "args": _args(tool_name, i)}],
        )
        for i in range(rounds)
    ]
    return [*calls, AIMessage("all done", id=f"ai{run}-final")]


def _args(tool_name: str, i: int) -> dict:
    return {"n": i} if tool_name == "lorem_page" else {"title": f"t{i}"}


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def build_graph(model: ScriptedModel, clear: ClearingNode | None, checkpointer=None):
    """The article's graph: agent -> tools -> clear -> agent."""
    tools = [lorem_page, create_ticket]
    bound = model.bind_tools(tools)

    def agent(state: State) -> dict:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    if clear is None:
        builder.add_edge("tools", "agent")
    else:
        builder.add_node("clear", clear)
        builder.add_edge("tools", "clear")
        builder.add_edge("clear", "agent")
    return builder.compile(checkpointer=checkpointer)


def tool_messages(messages: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def dump(messages: list[BaseMessage], *, renumber: bool = False) -> str:
    """The messages as JSON text; ``renumber`` replaces ids by positions (ToolNode's ids are
    random uuid4s, so two runs can only be compared without them)."""
    if renumber:
        messages = [m.model_copy(update={"id": f"m{i}"}) for i, m in enumerate(messages)]
    return json.dumps([m.model_dump(mode="json") for m in messages], sort_keys=True)


def test_node_clears_stale_results_in_a_compiled_graph():
    """After the run, all but the last two turns' results are placeholders."""
    model = ScriptedModel(responses=script())
    final = build_graph(model, ClearingNode(TURN_END))
    messages = final.invoke({"messages": [HumanMessage("read all pages")]})["messages"]
    cleared = [is_placeholder(str(m.content)) for m in tool_messages(messages)]
    assert cleared == [True] * (ROUNDS - 2) + [False, False]


def test_node_keeps_ids_and_pairing():
    """Replacements keep message ids and tool_call_ids: nothing appended, nothing lost."""
    model = ScriptedModel(responses=script())
    messages = build_graph(model, ClearingNode(TURN_END)).invoke(
        {"messages": [HumanMessage("go")]}
    )["messages"]
    assert len(messages) == 1 + 2 * ROUNDS + 1
    assert len({m.id for m in messages}) == len(messages)
    calls = [tc["id"] for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls]
    assert [m.tool_call_id for m in tool_messages(messages)] == calls


def test_model_saw_the_cleared_history():
    """Each model call after round three saw placeholders for the stale results."""
    model = ScriptedModel(responses=script())
    build_graph(model, ClearingNode(TURN_END)).invoke({"messages": [HumanMessage("go")]})
    last_prompt = model.seen[-1]
    assert sum(is_placeholder(str(m.content)) for m in tool_messages(last_prompt)) == ROUNDS - 2
    assert all(not is_placeholder(str(m.content)) for p in model.seen[:3] for m in tool_messages(p))


def test_node_returns_only_replaced_messages():
    """The node's update holds just the rewritten ToolMessages, with their original ids."""
    node = ClearingNode(ClearingPolicy(cache=None, keep_turns=1))
    history: list[BaseMessage] = [HumanMessage("go", id="h")]
    for i in range(3):
        history.append(AIMessage("", id=f"a{i}", tool_calls=[_call(i)]))
        history.append(ToolMessage("x " * 600, tool_call_id=f"c{i}", id=f"t{i}"))
    update = node(State(messages=history))["messages"]
    assert [m.id for m in update] == ["t0", "t1"]


def test_node_update_is_empty_when_nothing_is_stale():
    """A short history gives an empty update (no rewrite, the cache is kept)."""
    node = ClearingNode(TURN_END)
    history = [HumanMessage("hi", id="h"), AIMessage("hello", id="a")]
    assert node({"messages": history}) == {"messages": []}


def test_excluded_write_results_survive():
    """Results of an excluded tool are never cleared."""
    model = ScriptedModel(responses=script(tool_name="create_ticket"))
    policy = ClearingPolicy(cache=None, retention={"create_ticket": None})
    messages = build_graph(model, ClearingNode(policy)).invoke({"messages": [HumanMessage("go")]})
    assert not any(is_placeholder(str(m.content)) for m in tool_messages(messages["messages"]))


def test_persisted_clearing_survives_a_checkpoint_round_trip():
    """With InMemorySaver the stored thread holds the placeholders and keeps working."""
    saver = InMemorySaver()
    model = ScriptedModel(responses=[*script(), *script(run="b")])
    graph = build_graph(model, ClearingNode(TURN_END), checkpointer=saver)
    config = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"messages": [HumanMessage("go")]}, config)
    stored = graph.get_state(config).values["messages"]
    assert sum(is_placeholder(str(m.content)) for m in tool_messages(stored)) == ROUNDS - 2
    # A second run on the same thread reloads the checkpoint and keeps clearing in place.
    graph.invoke({"messages": [HumanMessage("again")]}, config)
    again = graph.get_state(config).values["messages"]
    assert len(again) == len(stored) + 1 + 2 * ROUNDS + 1
    results = tool_messages(again)
    assert all(is_placeholder(str(m.content)) for m in results[:-2])
    assert not any(is_placeholder(str(m.content)) for m in results[-2:])


def test_node_cleared_is_ephemeral():
    """node.cleared() gives the model a cleared copy and leaves the given list alone."""
    node = ClearingNode(ClearingPolicy(cache=None, keep_turns=1))
    history: list[BaseMessage] = [HumanMessage("go", id="h")]
    for i in range(3):
        history.append(AIMessage("", id=f"a{i}", tool_calls=[_call(i)]))
        history.append(ToolMessage("x " * 600, tool_call_id=f"c{i}", id=f"t{i}"))
    before = dump(history)
    seen = node.cleared(history)
    assert dump(history) == before
    assert is_placeholder(str(seen[2].content))


def test_replaced_messages_uses_identity():
    """Only objects that differ from the original at the same index are returned."""
    a, b, c = HumanMessage("a"), HumanMessage("b"), HumanMessage("c")
    assert replaced_messages([a, b], [a, c]) == [c]


def test_messages_without_ids_are_rebuilt_not_appended():
    """A state without message ids gets a remove-all plus the cleared list."""
    node = ClearingNode(ClearingPolicy(cache=None, keep_turns=1))
    history: list[BaseMessage] = [HumanMessage("go")]
    for i in range(3):
        history.append(AIMessage("", tool_calls=[_call(i)]))
        history.append(ToolMessage("x " * 600, tool_call_id=f"c{i}"))
    update = node({"messages": history})["messages"]
    assert update[0].type == "remove"
    assert len(update) == 1 + len(history)


def agent_run(middleware: ClearingMiddleware, checkpointer=None, rounds: int = ROUNDS):
    model = ScriptedModel(responses=script(rounds))
    agent = create_agent(
        model, [lorem_page, create_ticket], middleware=[middleware], checkpointer=checkpointer
    )
    return model, agent


def test_middleware_ephemeral_model_sees_placeholders_state_does_not():
    """Ephemeral: the model's prompt is cleared, the agent state keeps every original."""
    model, agent = agent_run(ClearingMiddleware(TURN_END))
    result = agent.invoke({"messages": [HumanMessage("go")]})
    assert sum(is_placeholder(str(m.content)) for m in tool_messages(model.seen[-1])) == ROUNDS - 2
    assert not any(is_placeholder(str(m.content)) for m in tool_messages(result["messages"]))


def test_middleware_ephemeral_state_is_byte_identical():
    """The stored thread equals, byte for byte, a run without the middleware (ids aside)."""
    config = {"configurable": {"thread_id": "same"}}
    dumps = []
    for middleware in (ClearingMiddleware(TURN_END), None):
        saver = InMemorySaver()
        model = ScriptedModel(responses=script())
        agent = create_agent(
            model, [lorem_page], middleware=[middleware] if middleware else [], checkpointer=saver
        )
        agent.invoke({"messages": [HumanMessage("go", id="h")]}, config)
        dumps.append(dump(agent.get_state(config).values["messages"], renumber=True))
    assert dumps[0] == dumps[1]


def test_middleware_ephemeral_never_writes_a_checkpoint_with_placeholders():
    """No checkpoint of an ephemeral run ever stores a cleared result."""
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "e"}}
    model, agent = agent_run(ClearingMiddleware(TURN_END), checkpointer=saver)
    agent.invoke({"messages": [HumanMessage("go")]}, config)
    snapshots = list(agent.get_state_history(config))
    assert len(snapshots) > ROUNDS
    for snap in snapshots:
        for m in tool_messages(snap.values.get("messages", [])):
            assert not is_placeholder(str(m.content))
    assert any(is_placeholder(str(m.content)) for m in tool_messages(model.seen[-1]))


def test_middleware_persisted_writes_placeholders_through_checkpoints():
    """persist=True: the checkpointed state holds the placeholders, with the same ids."""
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "p"}}
    _model, agent = agent_run(ClearingMiddleware(persist=True), checkpointer=saver)
    agent.invoke({"messages": [HumanMessage("go")]}, config)
    stored = agent.get_state(config).values["messages"]
    results = tool_messages(stored)
    # The last model call came before the final results could go stale.
    assert sum(is_placeholder(str(m.content)) for m in results) == ROUNDS - 2
    assert len({m.id for m in stored}) == len(stored) == 1 + 2 * ROUNDS + 1


async def test_middleware_async_path_clears_too():
    """ainvoke goes through awrap_model_call and clears the same way."""
    model, agent = agent_run(ClearingMiddleware(TURN_END))
    await agent.ainvoke({"messages": [HumanMessage("go")]})
    assert sum(is_placeholder(str(m.content)) for m in tool_messages(model.seen[-1])) == ROUNDS - 2


def test_middleware_keeps_one_clearer_per_thread():
    """Two threads through one middleware do not disturb each other."""
    middleware = ClearingMiddleware(TURN_END)
    saver = InMemorySaver()
    model = ScriptedModel(responses=[*script(), *script(run="b")])
    agent = create_agent(model, [lorem_page], middleware=[middleware], checkpointer=saver)
    for thread in ("a", "b"):
        agent.invoke({"messages": [HumanMessage(thread)]}, {"configurable": {"thread_id": thread}})
    first_b_prompt = model.seen[ROUNDS + 1]
    assert len(first_b_prompt) == 1
    assert sum(is_placeholder(str(m.content)) for m in tool_messages(model.seen[-1])) == ROUNDS - 2


def test_max_threads_must_be_positive():
    """A zero bound on kept clearers is a configuration error."""
    with pytest.raises(ValueError, match="max_threads"):
        ClearingNode(max_threads=0)


def _call(i: int) -> dict:
    return {"id": f"c{i}", "name": "lorem_page", "args": {"n": i}}


def test_clearing_failure_passes_history_through(monkeypatch, caplog):
    """If clearing raises, the model gets the history unchanged and the loop goes on."""
    from slimtools.clearing import Clearer

    def boom(self, history):
        raise RuntimeError("bug")

    monkeypatch.setattr(Clearer, "clear", boom)
    model, agent = agent_run(ClearingMiddleware(TURN_END))
    result = agent.invoke({"messages": [HumanMessage("go")]})
    assert result["messages"][-1].content == "all done"
    assert not any(is_placeholder(str(m.content)) for m in tool_messages(model.seen[-1]))
    assert "clearing failed" in caplog.text


@settings(max_examples=examples(40), deadline=None)
@given(turns(), policies)
def test_node_update_merged_by_add_messages_equals_clearing(neutral, policy):
    """add_messages(state, node update) is exactly clear_stale_results(state): in place."""
    history = [
        m.model_copy(update={"id": f"m{i}"}) for i, m in enumerate(render("langchain", neutral))
    ]
    update = ClearingNode(policy)({"messages": history})["messages"]
    merged = add_messages(history, update)
    expected = clear_stale_results(history, policy)
    assert [m.id for m in merged] == [m.id for m in history]
    assert dump(merged) == dump(expected)


def test_concurrent_calls_on_one_thread_key_never_mix_histories():
    """Two OS threads clearing through one middleware (no thread_id: one shared clearer) each
    get their own history back, never the other's messages."""
    import threading

    started, release = threading.Event(), threading.Event()

    def slow_counter(text: str) -> int:
        if "SLOW" in text and not started.is_set():
            started.set()
            release.wait(0.3)  # the other thread clears meanwhile, unless it has to wait
        return len(text) // 4

    middleware = ClearingMiddleware(TURN_END.replace(token_counter=slow_counter))

    def history(run: str, rounds: int, first: str) -> list[BaseMessage]:
        messages: list[BaseMessage] = [HumanMessage(first, id=f"{run}-q")]
        for i, call in enumerate(script(rounds, run=run)[:-1]):
            result = lorem_page.invoke({"n": i})
            messages += [call, ToolMessage(result, id=f"{run}-r{i}", tool_call_id=f"call{run}-{i}")]
        return messages

    first, second = history("a", ROUNDS, "SLOW"), history("b", 2, "go")
    outputs: dict[str, list[Any]] = {}

    def clear_first() -> None:
        outputs["a"] = middleware._clearers.clear(first)

    def clear_second() -> None:
        started.wait(5)
        outputs["b"] = middleware._clearers.clear(second)
        release.set()

    threads = [threading.Thread(target=clear_first), threading.Thread(target=clear_second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert [m.id for m in outputs["a"]] == [m.id for m in first]
    assert [m.id for m in outputs["b"]] == [m.id for m in second]


@pytest.mark.parametrize(
    "settings",
    [{"policy": {"keep_turns": 2}}, {"audit": "clearing.jsonl"}],
    ids=["policy-dict", "audit-path"],
)
def test_a_wrong_policy_or_audit_is_refused_when_the_middleware_is_made(settings):
    """Settings no clearer can use fail at construction, not as a warning on every model call
    with nothing ever cleared."""
    with pytest.raises(TypeError, match=r"^(policy|audit) must be"):
        ClearingMiddleware(**settings)
    with pytest.raises(TypeError, match=r"^(policy|audit) must be"):
        ClearingNode(**settings)
