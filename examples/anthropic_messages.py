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

# kit: search_issues over 20 fake issues, slimmed (see _issues.py)
from _issues import kit, preview
from anthropic.types import Message

from slimtools.adapters.anthropic import anthropic_tools, tool_result_message


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
            flag = " [is_error]" if result["is_error"] else ""
            print(f"sent back{flag}:", preview(result["content"]))
        messages.append(reply)
    print(f"\nfinal answer: {message.content[0].text}")


if __name__ == "__main__":
    main()
