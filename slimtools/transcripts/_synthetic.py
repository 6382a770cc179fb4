"""Tool calls synthesised from text actions, for recorders that have no tool-call format.

In SWE-agent's text-action mode, mini-swe-agent and OpenHands runs without function-calling
metadata, the model writes its command in prose (or the harness records an action event)
and the harness answers with a user message (or an observation event). Clearing works on
tool results, so these are turned into OpenAI Chat tool calls: each action becomes one
``tool_calls`` entry on the assistant message (the message keeps the model's reasoning as
its content) and the answer becomes the ``role: "tool"`` result. Such transcripts are
flagged ``synthetic``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from slimtools.transcripts._model import Location, Message, Origin


class Step(NamedTuple):
    """One recorded message: its role, text, action (None: not an action) and place."""

    role: str
    text: str
    action: str | None
    at: Location
    content: Location  # where ``text`` was read from


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI Chat ``tool_calls`` entry."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def synthesise(
    steps: Sequence[Step], tool_name: Callable[[str], str]
) -> tuple[list[Message], tuple[Origin, ...]]:
    """Make each assistant action a tool call and the user message after it its result.

    Call ids are ``call_<n>``, ``n`` the action's index among the recorded messages.
    """
    messages: list[Message] = []
    origins: list[Origin] = []
    pending: str | None = None
    for n, step in enumerate(steps):
        if step.role == "user" and pending is not None:
            messages.append({"role": "tool", "tool_call_id": pending, "content": step.text})
            origins.append(Origin(step.at, {0: step.content}))
            pending = None
            continue
        pending = None
        if step.role == "assistant" and step.action is not None:
            pending = f"call_{n}"
            entry = call(pending, tool_name(step.action), {"command": step.action})
            messages.append({"role": "assistant", "content": step.text, "tool_calls": [entry]})
        else:
            messages.append({"role": step.role, "content": step.text})
        origins.append(Origin(step.at))
    return messages, tuple(origins)


def text_of(content: Any) -> str:
    """Plain text of a message content: a string, or the text parts of a part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return "" if content is None else str(content)
