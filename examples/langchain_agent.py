"""A LangChain agent with slimmed tools: search, read page 2, expand one record. Offline.

Run: ``python examples/langchain_agent.py``. A scripted fake chat model stands in for the
LLM; each round prints what the model was sent, so you see the envelopes it reads.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field

from slimtools import Clip, Toolkit, count_tokens, paginate, project_fields, summarize_with_handle
from slimtools.adapters.langchain import to_langchain_tools

SERVICES = ["auth", "billing", "search"]
LOGS = [  # the backend: 12 rows, with fields the model never needs to see
    {
        "id": i,
        "time": f"10-24 03:{i:02d}",
        "level": "ERROR" if i % 2 else "WARN",
        "message": f"upstream timeout connecting to {SERVICES[i % 3]}-service after 30s "
        f"(attempt {i}); pool exhausted, retrying with backoff",
        "tenant": "acme-prod-7731",
        "trace_id": f"{i:032x}",
    }
    for i in range(1, 13)
]


class LogBrief(BaseModel):
    """What the model sees of one row: nothing else leaves the backend."""

    id: int
    time: str
    level: str
    summary: Annotated[str, Clip(48)] = Field(validation_alias="message")


kit = Toolkit("logs")


@kit.tool(category="search")
@summarize_with_handle(key="id")
@paginate(limit=3)
@project_fields(LogBrief)
def search_logs(query: str) -> list[dict[str, Any]]:
    """Search the service logs for a word."""
    return [row for row in LOGS if query in row["message"]]


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


def signature(tool: Any) -> str:
    """The tool as the model sees it, e.g. search_logs(query: string, page: integer = 1)."""
    params = convert_to_openai_tool(tool)["function"]["parameters"]
    args = []
    for name, prop in params["properties"].items():
        kind = prop.get("type") or "|".join(v["type"] for v in prop.get("anyOf", []))
        args.append(
            f"{name}: {kind}" + (f" = {json.dumps(prop['default'])}" if "default" in prop else "")
        )
    return f"{tool.name}({', '.join(args)})"


def main() -> None:
    """Run the scripted agent and show each round, then the artifact the app keeps."""
    tools = to_langchain_tools(kit)
    print("tools the model is given:")
    for tool in tools:
        print("  ", signature(tool))
    agent = create_agent(ScriptedModel(messages=iter(SCRIPT)), tools)
    out = agent.invoke({"messages": [HumanMessage("Why do requests time out?")]})
    print("\n--- final answer:", out["messages"][-1].content)
    first = out["messages"][2]  # the first ToolMessage
    print("the application also gets each page as a dict (ToolMessage.artifact):")
    print("  ", first.artifact["total"], "hits;", [b["id"] for b in first.artifact["briefs"]])


if __name__ == "__main__":
    main()
