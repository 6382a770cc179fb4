"""Turn-end clearing in a LangGraph agent: agent -> tools -> clear -> agent. Offline.

Run: ``python examples/langgraph_clearing.py``. A scripted fake chat model plays an agent
that searches logs and reads files for six rounds. The ``clear`` node (article, section
4.2) replaces tool results older than two turns by placeholders that keep the call, the
size, the head and the handles, so the model can refetch instead of guessing. Each round
prints what the model was sent; the end compares the token ledger with and without clearing.

The node clears at every round end (``ClearingPolicy(cache=None)``), as the article does, for a
model called without prompt caching. With caching the default ``ClearingPolicy()`` clears only
what pays for itself under the cache prices: on a six-round run like this one, nothing, as
the ledger at the end shows.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field

from slimtools.adapters.langgraph import ClearingNode
from slimtools.clearing import ClearingPolicy, is_placeholder
from slimtools.ledger import TokenLedger


@tool
def search_logs(query: str) -> str:
    """Search the logs; answers with briefs and handles (a slimtools envelope)."""
    briefs = [
        {"id": i, "time": f"10-24 03:{i:02d}", "level": "ERROR", "summary": f"{query} #{i} " * 8}
        for i in range(1, 13)
    ]
    return json.dumps({"total": 12, "briefs": briefs, "hint": "full record: get_record(id)"})


@tool
def read_file(path: str) -> str:
    """Read a source file."""
    return "\n".join(
        f"{n:4d}  def handler_{n}(request): return upstream(request)" for n in range(80)
    )


class ScriptedModel(FakeMessagesListChatModel):
    """Plays the script below and keeps every prompt it was sent."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        self.prompts.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kw)


STEPS = [
    ("search_logs", {"query": "timeout"}),
    ("read_file", {"path": "gateway.py"}),
    ("search_logs", {"query": "auth-service"}),
    ("read_file", {"path": "auth.py"}),
    ("search_logs", {"query": "retry"}),
    ("read_file", {"path": "retry.py"}),
]


def script() -> list[BaseMessage]:
    calls: list[BaseMessage] = [
        AIMessage("", tool_calls=[{"id": f"call_{i}", "name": name, "args": args}])
        for i, (name, args) in enumerate(STEPS)
    ]
    return [*calls, AIMessage("The auth-service timeouts come from retry.py's 30s budget.")]


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def build(model: ScriptedModel, clear: ClearingNode | None) -> Any:
    tools = [search_logs, read_file]
    bound = model.bind_tools(tools)

    def agent(state: State) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    if clear is None:
        builder.add_edge("tools", "agent")
    else:
        builder.add_node("clear", clear)  # tools have run, the next model call has not
        builder.add_edge("tools", "clear")
        builder.add_edge("clear", "agent")
    return builder.compile()


def describe(message: BaseMessage) -> str:
    text = str(message.content)
    if message.type == "tool":
        kind = "CLEARED" if is_placeholder(text) else "full"
        return f"    tool   {kind:<7} {len(text):>5} chars  {text[:70]!r}"
    if message.type == "ai":
        calls = ", ".join(f"{c['name']}({c['args']})" for c in message.tool_calls)
        return f"    ai     {calls or text[:60]}"
    return f"    {message.type:<6} {text[:60]}"


def main() -> None:
    question = HumanMessage("Why does the auth-service time out?")
    model = ScriptedModel(responses=script())
    # search results go after 2 turns, file reads after 3 (the article's retention table)
    final = build(model, ClearingNode(ClearingPolicy(cache=None)))
    cleared_run = final.invoke({"messages": [question]})["messages"]
    for n, prompt in enumerate(model.prompts, start=1):
        print(f"model call {n}: {len(prompt)} messages")
        for message in prompt:
            if message.type == "tool":
                print(describe(message))
    print("\nA cleared result, as the model reads it:")
    first = next(m for m in cleared_run if m.type == "tool")
    print(first.content)

    plain_run = build(ScriptedModel(responses=script()), None).invoke({"messages": [question]})
    print("\nToken ledger over the run (resident: tool tokens in the last prompt; billed:")
    print("input tokens without caching; cached: at Anthropic's 5-minute cache prices)")
    for label, policy in (
        ("no clearing", None),
        ("with clearing", ClearingPolicy(cache=None)),
        ("cache-aware default", ClearingPolicy()),
    ):
        s = TokenLedger.measure(plain_run["messages"], policy).summary
        print(
            f"  {label + ':':<21} resident {s.resident_end:>6,}, billed {s.billed:>7,}, "
            f"cached {s.billed_cached:>6,}"
        )


if __name__ == "__main__":
    main()
