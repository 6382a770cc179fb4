"""What the gateway knows of each model API's request body: where the history is, what the
agent changes between rounds, and when to leave a request alone.

An :class:`Endpoint` names the clearing codec's format and the body field holding the
history (``messages`` or ``input``). Anthropic agents move their ``cache_control``
breakpoints every round and fold a string message into one text block to carry one, so the
history is *normalized* before the clearer sees it and :func:`merge_back` puts the agent's
own breakpoints on what is sent; both are the format's codec's
(``clearing/formats/anthropic.py``), named in one row of ``_ROUND_CHANGES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slimtools.clearing.formats import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES
from slimtools.clearing.formats.anthropic import with_breakpoints, without_breakpoints


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A model API route: its path, its clearing format and the field holding the history."""

    path: str
    format: str
    field: str
    counts_tokens: bool = False


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/v1/messages", ANTHROPIC, "messages"),
    Endpoint("/v1/messages/count_tokens", ANTHROPIC, "messages", counts_tokens=True),
    Endpoint("/chat/completions", OPENAI_CHAT, "messages"),
    Endpoint("/responses", OPENAI_RESPONSES, "input"),
)
"""The routes the gateway clears, matched as path suffixes: OpenAI-compatible servers put
them under ``/v1``, ``/openai/v1`` or nothing; Anthropic's are always under ``/v1``."""


def endpoint_of(method: str, path: str) -> Endpoint | None:
    """The model route a request goes to (None: forwarded without clearing)."""
    if method != "POST":
        return None
    path = path.partition("?")[0].rstrip("/")
    return next((e for e in ENDPOINTS if path.endswith(e.path)), None)


class UnreadableError(ValueError):
    """A request body the gateway cannot clear; it is forwarded unchanged."""


def history_of(body: Any, endpoint: Endpoint) -> list[Any]:
    """The history list of a parsed request body.

    Raises:
        UnreadableError: the body is not a JSON object or its history is not a list of objects.
    """
    if not isinstance(body, dict):
        raise UnreadableError(f"the body is a JSON {type(body).__name__}, not an object")
    history = body.get(endpoint.field)
    if isinstance(history, str) and endpoint.format == OPENAI_RESPONSES:
        raise UnreadableError("input is a plain string: no tool results to clear")
    if not isinstance(history, list):
        raise UnreadableError(f"{endpoint.field!r} is missing or not a list")
    if not all(isinstance(m, dict) for m in history):
        raise UnreadableError(f"{endpoint.field!r} holds an entry that is not an object")
    return history


def server_clearing(body: Mapping[str, Any]) -> bool:
    """Whether the request asks the server for ``clear_tool_uses`` (then it clears, not us)."""
    management = body.get("context_management")
    edits = management.get("edits") if isinstance(management, Mapping) else None
    if not isinstance(edits, list):
        return False
    return any(
        isinstance(e, Mapping) and str(e.get("type", "")).startswith("clear_tool_uses")
        for e in edits
    )


def continues_response(body: Mapping[str, Any]) -> bool:
    """Whether a Responses request builds on ``previous_response_id`` (history is upstream)."""
    return bool(body.get("previous_response_id"))


_ROUND_CHANGES = {ANTHROPIC: (without_breakpoints, with_breakpoints)}
"""What a format's agents change between rounds, as its codec undoes and redoes it: a
row per format that has any (Anthropic's moving ``cache_control`` breakpoints)."""


def normalize(message: dict[str, Any], format: str) -> dict[str, Any]:
    """The message as the clearer should see it: the same across rounds whatever the agent
    changes between them (the message itself when nothing needs changing)."""
    found = _ROUND_CHANGES.get(format)
    return message if found is None else found[0](message)


def merge_back(original: dict[str, Any], filed: Any, cleared: Any, format: str) -> Any:
    """What to send for one message the clearer rewrote: its cleared content, with what the
    agent changes between rounds put back as it sent it this round (``filed`` is what the
    clearer read)."""
    found = _ROUND_CHANGES.get(format)
    return cleared if found is None else found[1](original, filed, cleared)
