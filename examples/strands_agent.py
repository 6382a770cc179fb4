"""A Strands agent whose tools you did not write, slimmed and cleared by two hooks, offline.

``list_issues`` returns whole issues (bodies, node ids, reactions, a reporter's e-mail).
``SlimHook`` shows the model briefs of them instead, the e-mail denied; ``record_tool``
gives the agent ``get_record`` to expand one; ``ClearingHook`` replaces the stale results in
what each later model call is sent by placeholders (``agent.messages`` keeps the originals). Strands ships no scripted
model, so a small ``Model`` below plays one: it lists crash issues and typo issues in one
turn (two parallel calls), expands issue 101, lists again, and answers.

Run: python examples/strands_agent.py
"""

from __future__ import annotations

import copy
import json
from typing import Any

from _issues import ISSUES, preview
from strands import Agent, tool
from strands.models import Model

from slimtools import Toolkit
from slimtools.adapters.strands import ClearingHook, SlimHook, record_tool
from slimtools.clearing import ClearingPolicy


@tool
def list_issues(query: str) -> dict[str, Any]:
    """List the repository's issues whose title contains the query (a tool you did not write)."""
    found = [{**i, "reporter": {"login": "ana", "email": "ana@example.com"}} for i in ISSUES]
    return {"total_count": len(found), "items": [i for i in found if query in i["title"]]}


class ScriptedModel(Model):
    """Plays a script: each turn a list of (tool, input) calls, or a final text."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script
        self.requests: list[list[dict[str, Any]]] = []

    def update_config(self, **config: Any) -> None:
        pass

    def get_config(self) -> dict[str, Any]:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.requests.append(copy.deepcopy(messages))
        step = self.script[len(self.requests) - 1]
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(step, str):
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": step}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        for n, (name, arguments) in enumerate(step):
            use = {"toolUseId": f"call_{len(self.requests)}_{n}", "name": name}
            yield {"contentBlockStart": {"start": {"toolUse": use}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


def main() -> None:
    """Run the agent, then print the tool results the model was sent at each request."""
    kit = Toolkit("github")
    model = ScriptedModel(
        [
            [("list_issues", {"query": "crash"}), ("list_issues", {"query": "typo"})],
            [("get_record", {"handle": 101})],
            [("list_issues", {"query": "docs"})],
            "Issue 101 crashes on start-up.",
        ]
    )  # for real: BedrockModel(...), AnthropicModel(...), OpenAIModel(...)
    slim = SlimHook(
        toolkit=kit,
        tools={"list_issues": {"fields": ["number", "title", "state"], "key": "number"}},
        deny=["reporter.email"],
    )
    agent = Agent(
        model=model,
        tools=[list_issues, record_tool(kit)],
        hooks=[slim, ClearingHook(ClearingPolicy(cache=None))],
        callback_handler=None,
    )
    print("final answer:", agent("Which crash issues are open?"))
    for n, request in enumerate(model.requests[1:], start=2):
        print(f"\nmodel request {n} holds these tool results:")
        for message in request:
            for block in message["content"]:
                if "toolResult" in block:
                    print("  ", preview(block["toolResult"]["content"][0]["text"]))
    assert "ana@example.com" not in str(model.requests)
    kept = [b for m in agent.messages for b in m["content"] if "toolResult" in b]
    print("\nthe agent's history keeps:", preview(kept[0]["toolResult"]["content"][0]["text"]))


if __name__ == "__main__":
    main()
