"""A tool you did not write, slimmed inside the Claude Agent SDK, offline.

``search_issues`` is an in-process MCP tool returning whole issues (bodies, node ids, the
reporter's email). ``ClaudeSlimming`` adds a ``PostToolUse`` hook that shows the model an
envelope of briefs instead (the email denied, never shown) and a ``get_record`` MCP tool that
expands one. The SDK's bundled CLI runs the agent against a scripted Anthropic API on
loopback: it searches, expands the first brief by its handle, and runs ``seq`` in Bash, whose
long output comes back as its first lines and a handle. The CLI owns the history, so no
clearing here: put ``slimtools gateway`` in front of the API for that.

Run: python examples/claude_agent.py
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from typing import Any

from _issues import ISSUES, preview
from _scripted_anthropic import ScriptedModel, offline_env, serving, tool_results
from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, query, tool

from slimtools.adapters.claude_agent_sdk import ClaudeSlimming

SEARCH = "mcp__issues__search_issues"


@tool("search_issues", "Search the repository's issues by title.", {"query": str})
async def search_issues(arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool you did not write: whole issues, each with its reporter's email."""
    found = [
        {**issue, "reporter": {"login": "ana", "email": "ana@example.com"}}
        for issue in ISSUES
        if arguments["query"] in issue["title"]
    ]
    return {"content": [{"type": "text", "text": json.dumps(found)}]}


def expand_first(messages: list[Any]) -> tuple[str, dict[str, Any]]:
    """Turn 2: read the envelope the model was sent and expand its first brief."""
    envelope = json.loads(tool_results({"messages": messages})[-1])
    return "mcp__slimtools__get_record", {"handle": envelope["briefs"][0]["number"]}


async def main() -> None:
    """Run the agent; print each tool result exactly as the model received it."""
    slimming = ClaudeSlimming(
        tools={
            SEARCH: {
                "fields": ["number", "title", "state"],
                "key": "number",
                "deny": ["reporter.email"],
            },
            "Bash": {"max_tokens": 200},
        }
    )
    model = ScriptedModel(
        SEARCH,
        [
            lambda messages: (SEARCH, {"query": "crash"}),
            expand_first,
            lambda messages: ("Bash", {"command": "seq 1 3000", "description": "Count"}),
        ],
    )
    with tempfile.TemporaryDirectory() as home, serving(model) as url:
        options = slimming.apply(
            ClaudeAgentOptions(
                mcp_servers={"issues": create_sdk_mcp_server("issues", tools=[search_issues])},
                allowed_tools=[SEARCH, "Bash"],
                env=offline_env(url, home),
                cwd=home,
                setting_sources=[],
            )
        )
        async for _message in query(prompt="Which crash issues are open?", options=options):
            pass
    print("tools the model was offered:", ", ".join(
        t["name"] for t in model.requests[0]["tools"] if t["name"].startswith("mcp__")))  # fmt: skip
    last = model.requests[-1]
    for call, result in zip(_calls(last), tool_results(last), strict=True):
        print(f"\nmodel called {call}")
        print("sent back:", preview(result))
    raw = sum(len(json.dumps(i)) for i in ISSUES if "crash" in i["title"])
    print(f"\nraw search result: {raw:,} characters; the model saw "
          f"{len(tool_results(last)[0]):,}")  # fmt: skip
    assert "ana@example.com" not in json.dumps(model.requests)


def _calls(body: Any) -> list[str]:
    return [f"{b['name']}({json.dumps(b['input'])})" for m in body["messages"]
            if m["role"] == "assistant" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_use"]  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
