"""The GitHub-issues toolkit the SDK examples share (openai_chat, openai_responses, ...).

A fake backend of 20 issues, the ``IssueBrief`` allowlist and ``kit``, a Toolkit holding one
slimmed tool, ``search_issues``. Each example imports ``kit`` and shows only its framework's
part: how the tools reach the model and how the model's calls come back.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle

ISSUES = [  # the backend: bodies, node ids and reactions the model never needs to see
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


def openai_script(turn: int, last_output: str) -> tuple[str, dict[str, Any]] | None:
    """The OpenAI examples' scripted model: its call at each turn (``None``: answer and stop).

    It searches, reads page 2 as the hint says, then expands the first issue of the page it
    was just sent (``last_output``, the text of the latest tool result). With strict tools
    (the default) the model sends ``null`` for the optional arguments.
    """
    if turn == 1:
        return "search_issues", {"query": "crash", "page": None, "limit": None}
    if turn == 2:
        return "search_issues", {"query": "crash", "page": 2, "limit": None}
    if turn == 3:
        number = json.loads(last_output)["briefs"][0]["number"]
        return "get_record", {"handle": number, "source": None, "page": None}
    return None


def preview(text: str) -> str:
    """What the examples print of a tool result: all of it, or its head when it is long."""
    return text if len(text) < 600 else text[:200] + " ..."
