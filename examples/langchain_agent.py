"""A LangChain agent with slimmed tools: search, read page 2, expand one record. Offline.

Run: ``python examples/langchain_agent.py``. A scripted fake chat model stands in for the
LLM; each round prints what the model was sent, so you see the envelopes it reads.
"""

from __future__ import annotations

from typing import Any

# kit: search_logs over 12 fake log rows, slimmed (see _logs.py)
from _logs import kit, signature
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from slimtools.adapters.langchain import to_langchain_tools
from slimtools.tokens import count_tokens


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, taught to accept tools and to print its prompts."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        new = messages[-1]  # the message this round adds: the question or a tool result
        print(
            f"\n--- round {sum(isinstance(m, AIMessage) for m in messages) + 1}: the model "
            f"receives {new.type} ({count_tokens(str(new.content))} tokens)"
        )
        print(new.content)
        return super()._generate(messages, *args, **kwargs)


def tool_call(name: str, **args: Any) -> AIMessage:
    """One scripted model turn that calls a tool."""
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{name}"}])


SCRIPT = [
    tool_call("search_logs", query="timeout"),
    tool_call("search_logs", query="timeout", page=2),  # as the hint says
    tool_call("get_record", handle=5),  # expand one brief by its handle (its id)
    AIMessage("Row 5: search-service timed out after 30s because its pool was exhausted."),
]


def main() -> None:
    """Run the scripted agent and show each round, then the artifact the app keeps."""
    tools = to_langchain_tools(kit)
    print("tools the model is given:")
    for tool in tools:
        print("  ", signature(tool.name, convert_to_openai_tool(tool)["function"]["parameters"]))
    agent = create_agent(ScriptedModel(messages=iter(SCRIPT)), tools)
    out = agent.invoke({"messages": [HumanMessage("Why do requests time out?")]})
    print("\n--- final answer:", out["messages"][-1].content)
    first = out["messages"][2]  # the first ToolMessage
    print("the application also gets each page as a dict (ToolMessage.artifact):")
    print("  ", first.artifact["total"], "hits;", [b["id"] for b in first.artifact["briefs"]])


if __name__ == "__main__":
    main()
