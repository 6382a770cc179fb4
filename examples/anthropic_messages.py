"""Slimmed tools in an Anthropic Messages API loop, offline.

``ScriptedMessages`` stands in for ``anthropic.Anthropic().messages``: it plays a model that
searches issues, reads page 2, asks for a handle that does not exist (and is told how to
recover, with ``is_error``), then expands a real one with get_record. Its replies are real
SDK ``Message`` objects.

Run: python examples/anthropic_messages.py
"""

from __future__ import annotations

import json
from typing import Any

from anthropic.types import Message
from pydantic import BaseModel

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.adapters.anthropic import anthropic_tools, tool_result_message

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


def _message(turn: int, block: dict[str, Any], stop: str = "tool_use") -> Message:
    return Message.model_validate(
        {
            "id": f"msg_{turn}",
            "type": "message",
            "role": "assistant",
            "model": "scripted",
            "stop_reason": stop,
            "usage": {"input_tokens": 0, "output_tokens": 0},
            "content": [block],
        }
    )


def _use(turn: int, name: str, tool_input: dict[str, Any]) -> Message:
    return _message(
        turn, {"type": "tool_use", "id": f"toolu_{turn}", "name": name, "input": tool_input}
    )


class ScriptedMessages:
    """Plays the model, one scripted turn per ``create`` call."""

    def __init__(self) -> None:
        self.turn = 0

    def create(self, *, messages: list[Any], **_: Any) -> Message:
        self.turn += 1
        if self.turn == 1:
            return _use(1, "search_issues", {"query": "crash"})
        if self.turn == 2:
            return _use(2, "search_issues", {"query": "crash", "page": 2})
        if self.turn == 3:
            return _use(3, "get_record", {"handle": 404})
        if self.turn == 4:  # recover: take a handle from the page it was shown
            page = json.loads(messages[-3]["content"][0]["content"])
            return _use(4, "get_record", {"handle": page["briefs"][0]["number"]})
        return _message(5, {"type": "text", "text": "Issue 109 crashes on start-up."}, "end_turn")


def main() -> None:
    """Run the loop and print every tool call and exactly what was sent back to the model."""
    client = ScriptedMessages()  # for real: anthropic.Anthropic().messages
    tools = anthropic_tools(kit)
    print("tools:", ", ".join(t["name"] for t in tools))
    messages: list[Any] = [{"role": "user", "content": "Which crash issues are open?"}]
    while True:
        message = client.create(
            model="claude-sonnet-4-5", max_tokens=1024, messages=messages, tools=tools
        )
        messages.append({"role": "assistant", "content": message.content})
        reply = tool_result_message(kit, message)
        if reply is None:
            break
        uses = [block for block in message.content if block.type == "tool_use"]
        for use, result in zip(uses, reply["content"], strict=True):
            print(f"\nmodel called {use.name}({json.dumps(use.input)})")
            text, flag = result["content"], " [is_error]" if result["is_error"] else ""
            print(f"sent back{flag}:", text if len(text) < 600 else text[:200] + " ...")
        messages.append(reply)
    print(f"\nfinal answer: {message.content[0].text}")


if __name__ == "__main__":
    main()
