"""The GitHub-issues toolkit the SDK examples share (openai_chat, openai_responses, ...).

A fake backend of 20 issues, the ``IssueBrief`` allowlist and ``kit``, a Toolkit holding one
slimmed tool, ``search_issues``. Each example imports ``kit`` and shows only its framework's
part: how the tools reach the model and how the model's calls come back.
"""

from __future__ import annotations

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


def preview(text: str) -> str:
    """What the examples print of a tool result: all of it, or its head when it is long."""
    return text if len(text) < 600 else text[:200] + " ..."
