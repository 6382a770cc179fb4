"""Slimmed tools with the OpenAI Responses API, offline.

``ScriptedResponses`` stands in for ``openai.OpenAI().responses``: it plays a model that
searches issues, reads page 2, then expands one issue with get_record, reading the handle
from the ``function_call_output`` it was sent. Its replies are real SDK ``Response`` objects.

Run: python examples/openai_responses.py
"""

from __future__ import annotations

import json
from typing import Any

# kit: search_issues over 20 fake issues, slimmed; its scripted model's turns (_issues.py)
from _issues import kit, openai_script, preview
from openai.types.responses import Response

from slimtools.adapters.openai import response_tool_outputs, response_tools


class ScriptedResponses:
    """Stands in for ``client.responses``, answering with real ``Response`` objects."""

    turn = 0

    def create(self, *, model: str, input: list[Any], tools: list[Any]) -> Response:
        self.turn += 1
        call = openai_script(self.turn, last_output=input[-1].get("output", ""))
        text = {"type": "output_text", "text": "Issue 109 crashes on start.", "annotations": []}
        item: dict[str, Any] = {"type": "message", "id": "m", "role": "assistant",
                                "status": "completed", "content": [text]}  # fmt: skip
        if call is not None:
            item = {"type": "function_call", "id": f"fc_{self.turn}",
                    "call_id": f"call_{self.turn}", "name": call[0],
                    "arguments": json.dumps(call[1])}  # fmt: skip
        return Response.model_validate(
            {"id": "r", "object": "response", "created_at": 0, "model": model,
             "status": "completed", "parallel_tool_calls": True, "tool_choice": "auto",
             "tools": [], "output": [item]}
        )  # fmt: skip


def main() -> None:
    """Run the loop and print every function call and exactly what was sent back."""
    client = ScriptedResponses()  # for real: openai.OpenAI().responses
    tools = response_tools(kit)
    print("tools:", ", ".join(t["name"] for t in tools))
    items: list[Any] = [{"role": "user", "content": "Which crash issues are open?"}]
    while True:
        response = client.create(model="gpt-4.1-mini", input=items, tools=tools)
        outputs = response_tool_outputs(kit, response)
        if not outputs:
            break
        items += [item.model_dump(exclude_none=True) for item in response.output]
        calls = [item for item in response.output if item.type == "function_call"]
        for call, output in zip(calls, outputs, strict=True):
            print(f"\nmodel called {call.name}({call.arguments})")
            print("sent back:", preview(str(output["output"])))
        items += outputs
    print(f"\nfinal answer: {response.output_text}")


if __name__ == "__main__":
    main()
