"""Slimmed tools in an OpenAI Agents SDK agent, offline.

The SDK's own ``ScriptedModel`` (``agents.testing``) plays a model that searches issues,
reads page 2, sends a wrong argument type (and is told what to fix), then expands one issue
with get_record, reading the handle from the tool output it was sent.

Run: python examples/openai_agents.py
"""

from __future__ import annotations

import json
from typing import Any

# kit: search_issues over 20 fake issues, slimmed (see _issues.py)
from _issues import kit, preview
from agents import Agent, RunConfig, Runner
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from slimtools.adapters.openai_agents import to_agents_tools


def expand_first_brief(call: ModelCall) -> list[Any]:
    """Turn 4: read the page-2 envelope the model was sent and expand its first issue."""
    outputs = [item["output"] for item in call.input if item.get("type") == "function_call_output"]
    number = json.loads(outputs[-2])["briefs"][0]["number"]  # the page before the bad call
    return [
        function_call(
            "get_record", {"handle": number, "source": None, "page": None}, call_id="call_4"
        )
    ]


def main() -> None:
    """Run the agent and print every tool call and exactly what was sent back to the model."""
    model = ScriptedModel(
        [
            [
                function_call(
                    "search_issues",
                    {"query": "crash", "page": None, "limit": None},
                    call_id="call_1",
                )
            ],
            [
                function_call(
                    "search_issues", {"query": "crash", "page": 2, "limit": None}, call_id="call_2"
                )
            ],
            [
                function_call(
                    "search_issues",
                    {"query": "crash", "page": "three", "limit": None},
                    call_id="call_3",
                )
            ],
            ModelStep.respond(expand_first_brief),
            [assistant_message("Issue 109 crashes on start-up.")],
        ]
    )  # for real: model="gpt-4.1-mini"
    agent = Agent(name="triage", model=model, tools=to_agents_tools(kit))
    print("tools:", ", ".join(t.name for t in agent.tools))
    result = Runner.run_sync(
        agent, "Which crash issues are open?", run_config=RunConfig(tracing_disabled=True)
    )
    for item in result.new_items:
        raw: Any = item.raw_item
        if item.type == "tool_call_item":
            print(f"\nmodel called {raw.name}({raw.arguments})")
        elif item.type == "tool_call_output_item":
            print("sent back:", preview(str(raw["output"])))
    print(f"\nfinal answer: {result.final_output}")


if __name__ == "__main__":
    main()
