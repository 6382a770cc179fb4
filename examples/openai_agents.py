"""Slimmed tools in an OpenAI Agents SDK agent, offline.

The SDK's own ``ScriptedModel`` (``agents.testing``) plays a model that searches issues,
reads page 2, sends a wrong argument type (and is told what to fix), then expands one issue
with get_record, reading the handle from the tool output it was sent.

Run: python examples/openai_agents.py
"""

from __future__ import annotations

import json
from typing import Any

from agents import Agent, RunConfig, Runner
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from pydantic import BaseModel

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.adapters.openai_agents import to_agents_tools

ISSUES = [
    {
        "number": n,
        "title": f"crash on start-up ({n})" if n % 2 else f"typo in docs ({n})",
        "state": "open" if n % 3 else "closed",
        "body": "Steps to reproduce: ... " * 40,
        "node_id": f"I_kwDOAbc{n}",
        "reactions": {"+1": n % 7, "heart": 0},
    }
    for n in range(101, 121)
]


class IssueBrief(BaseModel):
    """What the model sees of an issue; body, node_id and reactions stay behind the handle."""

    number: int
    title: str
    state: str


kit = Toolkit("github")


@kit.tool
@summarize_with_handle(key="number")
@paginate(limit=4)
@project_fields(IssueBrief)
def search_issues(query: str) -> list[dict[str, Any]]:
    """Search the repository's issues by title."""
    return [issue for issue in ISSUES if query in issue["title"]]


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
            text = str(raw["output"])
            print("sent back:", text if len(text) < 600 else text[:200] + " ...")
    print(f"\nfinal answer: {result.final_output}")


if __name__ == "__main__":
    main()
