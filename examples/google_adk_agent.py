"""A Google ADK agent whose tools you did not write, slimmed and cleared by two plugins, offline.

``list_issues`` returns whole issues (bodies, node ids, reactions, a reporter's e-mail).
``SlimPlugin`` shows the model briefs of them instead, the e-mail denied; ``record_tool``
gives the agent ``get_record`` to expand one; ``ClearingPlugin`` replaces the stale results
in each later request by placeholders, while the session keeps every original. ADK's own
scripted model (``MockModel``, from its agent test runner) plays a model that lists crash
issues and typo issues in one turn (two parallel calls), expands issue 101, lists again, and
answers.

Run: python examples/google_adk_agent.py
"""

from __future__ import annotations

import asyncio
from typing import Any

from _issues import ISSUES, preview
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.cli.agent_test_runner import MockModel
from google.adk.runners import InMemoryRunner
from google.genai import types

from slimtools import Toolkit
from slimtools.adapters.google_adk import ClearingPlugin, SlimPlugin, record_tool
from slimtools.clearing import ClearingPolicy


def list_issues(query: str) -> dict[str, Any]:
    """List the repository's issues whose title contains the query (a tool you did not write)."""
    found = [{**i, "reporter": {"login": "ana", "email": "ana@example.com"}} for i in ISSUES]
    return {"total_count": len(found), "items": [i for i in found if query in i["title"]]}


def model_turn(*calls: tuple[str, dict[str, Any]], text: str | None = None) -> types.Content:
    """One scripted model turn: function calls, or a final text."""
    parts = [types.Part(function_call=types.FunctionCall(name=n, args=a)) for n, a in calls]
    return types.Content(role="model", parts=parts or [types.Part(text=text)])


def show(request: list[types.Content]) -> None:
    """Print the function responses the model is sent in one request."""
    for content in request:
        for part in content.parts or ():
            if part.function_response is not None:
                print("  ", preview(str(part.function_response.response)))


async def main() -> None:
    """Run the agent, then print what the model was sent at each request."""
    kit = Toolkit("github")
    model = MockModel.create(
        [
            model_turn(("list_issues", {"query": "crash"}), ("list_issues", {"query": "typo"})),
            model_turn(("get_record", {"handle": 101})),
            model_turn(("list_issues", {"query": "docs"})),
            model_turn(text="Issue 101 crashes on start-up."),
        ]
    )  # for real: model="gemini-2.5-flash"
    agent = LlmAgent(name="triage", model=model, tools=[list_issues, record_tool(kit)])
    slim = SlimPlugin(
        toolkit=kit,
        tools={"list_issues": {"fields": ["number", "title", "state"], "key": "number"}},
        deny=["reporter.email"],
    )
    plugins = [slim, ClearingPlugin(ClearingPolicy(cache=None))]
    runner = InMemoryRunner(app=App(name="triage", root_agent=agent, plugins=plugins))
    session = await runner.session_service.create_session(app_name="triage", user_id="u1")
    question = types.Content(role="user", parts=[types.Part(text="Which crash issues are open?")])
    async for event in runner.run_async(user_id="u1", session_id=session.id, new_message=question):
        if event.is_final_response() and event.content and event.content.parts:
            print("final answer:", event.content.parts[0].text)
    for n, request in enumerate(model.requests[1:], start=2):
        print(f"\nmodel request {n} holds these function responses:")
        show(request.contents)
    stored = await runner.session_service.get_session(
        app_name="triage", user_id="u1", session_id=session.id
    )
    assert stored is not None
    first = next(e for e in stored.events if e.get_function_responses())
    print(
        "\nthe session keeps the envelope:",
        preview(str(first.get_function_responses()[0].response)),
    )
    assert "ana@example.com" not in str(model.requests)


if __name__ == "__main__":
    asyncio.run(main())
