"""Slimmed tools in an OpenAI Chat Completions loop, offline.

``ScriptedChat`` stands in for ``openai.OpenAI().chat.completions``: it plays a model that
searches issues, reads page 2, then expands one issue with get_record, reading the handle
from the tool message it was sent. Its replies are real SDK ``ChatCompletion`` objects.
With strict tools (the default) the model sends ``null`` for optional arguments; the
dispatcher turns those back into the defaults.

Run: python examples/openai_chat.py
"""

from __future__ import annotations

import json
from typing import Any

# kit: search_issues over 20 fake issues, slimmed; its scripted model's turns (_issues.py)
from _issues import kit, openai_script, preview
from openai.types.chat import ChatCompletion

from slimtools.adapters.openai import chat_tool_messages, chat_tools


class ScriptedChat:
    """Stands in for ``client.chat.completions``, answering with real ``ChatCompletion``s."""

    turn = 0

    def create(self, *, model: str, messages: list[Any], tools: list[Any]) -> ChatCompletion:
        self.turn += 1
        call = openai_script(self.turn, last_output=messages[-1].get("content", ""))
        message: dict[str, Any] = {"role": "assistant", "content": "Issue 109 crashes on start."}
        if call is not None:
            function = {"name": call[0], "arguments": json.dumps(call[1])}
            message = {"role": "assistant", "tool_calls": [
                {"id": f"call_{self.turn}", "type": "function", "function": function}
            ]}  # fmt: skip
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}
        return ChatCompletion.model_validate(
            {"id": "c", "object": "chat.completion", "created": 0, "model": model,
             "choices": [choice]}
        )  # fmt: skip


def main() -> None:
    """Run the loop and print every tool call and exactly what was sent back to the model."""
    client = ScriptedChat()  # for real: openai.OpenAI().chat.completions
    tools = chat_tools(kit)
    print("tools:", ", ".join(t["function"]["name"] for t in tools))
    messages: list[Any] = [{"role": "user", "content": "Which crash issues are open?"}]
    while True:
        completion = client.create(model="gpt-4.1-mini", messages=messages, tools=tools)
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        replies = chat_tool_messages(kit, completion)
        if not replies:
            break
        for call, reply in zip(message.tool_calls or [], replies, strict=True):
            print(f"\nmodel called {call.function.name}({call.function.arguments})")
            print("sent back:", preview(reply["content"]))
        messages += replies
    print(f"\nfinal answer: {message.content}")


if __name__ == "__main__":
    main()
