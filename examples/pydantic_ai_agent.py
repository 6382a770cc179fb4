"""Slimmed tools in a Pydantic AI agent, offline.

Pydantic AI's own ``FunctionModel`` plays a model that searches issues, reads page 2, asks
for a page past the end (and is told which pages exist), then expands one issue with
get_record, reading the handle from the tool return it was sent.

Run: python examples/pydantic_ai_agent.py
"""

from __future__ import annotations

import json

# kit: search_issues over 20 fake issues, slimmed (see _issues.py)
from _issues import kit, preview
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from slimtools.adapters.pydantic_ai import to_pydantic_ai_toolset


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """Every tool return sent to the model so far."""
    parts = [part for message in messages for part in getattr(message, "parts", [])]
    return [part for part in parts if isinstance(part, ToolReturnPart)]


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Plays the model: the next turn depends on how many tool results it has seen."""
    seen = returns(messages)
    if len(seen) == 0:
        call = ToolCallPart("search_issues", {"query": "crash"})
    elif len(seen) == 1:
        call = ToolCallPart("search_issues", {"query": "crash", "page": 2})
    elif len(seen) == 2:
        call = ToolCallPart("search_issues", {"query": "crash", "page": 9})
    elif len(seen) == 3:
        number = json.loads(seen[1].content)["briefs"][0]["number"]
        call = ToolCallPart("get_record", {"handle": number})
    else:
        return ModelResponse(parts=[TextPart("Issue 109 crashes on start-up.")])
    return ModelResponse(parts=[call])


def main() -> None:
    """Run the agent and print every tool call and exactly what was sent back to the model."""
    model = FunctionModel(scripted_model)  # for real: "openai:gpt-4.1-mini", "anthropic:..."
    agent = Agent(model, toolsets=[to_pydantic_ai_toolset(kit)])
    result = agent.run_sync("Which crash issues are open?")
    for message in result.all_messages():
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                print(f"\nmodel called {part.tool_name}({part.args_as_json_str()})")
            elif isinstance(part, ToolReturnPart):
                print(f"sent back ({part.outcome}):", preview(str(part.content)))
    print(f"\nfinal answer: {result.output}")


if __name__ == "__main__":
    main()
