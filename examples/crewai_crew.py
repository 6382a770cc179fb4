"""A tool you did not write, slimmed inside a CrewAI crew, offline.

``search_issues`` is a CrewAI tool returning whole issues (bodies, node ids, the reporter's
email). ``CrewSlimming`` registers an after-tool-call hook that replaces its result with an
envelope of briefs (the email denied, never shown), and gives the agent ``get_record`` to
expand one. A scripted LLM plays the agent: it searches, expands the first brief by the handle
it was shown, then answers.

Run: python examples/crewai_crew.py
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline: no price list fetch

from _issues import ISSUES, preview
from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool

from slimtools.adapters.crewai import CrewSlimming


@tool("search_issues")
def search_issues(query: str) -> str:
    """Search the repository's issues by title."""
    found = [
        {**issue, "reporter": {"login": "ana", "email": "ana@example.com"}}
        for issue in ISSUES
        if query in issue["title"]
    ]
    return json.dumps(found)


class ScriptedLLM(BaseLLM):
    """Plays the agent in CrewAI's ReAct format, reading what each tool result showed."""

    def __init__(self) -> None:
        super().__init__(model="scripted")
        self.seen: list[str] = []

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        said = [m["content"] for m in messages if m["role"] == "assistant"]
        observations = re.findall(r"Observation: (.*)", "\n".join(said))
        self.seen = observations
        if not observations:
            return 'Thought: search first\nAction: search_issues\nAction Input: {"query": "crash"}'
        if len(observations) == 1:
            number = json.loads(observations[0])["briefs"][0]["number"]
            return (
                "Thought: read the first one\nAction: get_record\n"
                f'Action Input: {{"handle": {number}}}'
            )
        return "Thought: I now know the final answer\nFinal Answer: issue 101 crashes on start-up."

    def supports_function_calling(self) -> bool:
        return False

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 100_000


def main() -> None:
    """Run the crew; print each tool result exactly as the agent's model saw it."""
    slimming = CrewSlimming(
        tools={"search_issues": {"fields": ["number", "title", "state"], "key": "number"}},
        deny=["reporter.email"],
    )
    llm = ScriptedLLM()
    agent = Agent(
        role="triager",
        goal="Find open crash issues",
        backstory="You triage issues.",
        llm=llm,
        tools=[search_issues, slimming.record_tool],
        verbose=False,
    )
    task = Task(
        description="Which crash issues are open?", expected_output="an answer", agent=agent
    )
    with slimming.registered():
        answer = Crew(agents=[agent], tasks=[task], verbose=False, tracing=False).kickoff()
    for call, seen in zip(("search_issues", "get_record"), llm.seen, strict=True):
        print(f"\n{call} -> the model saw:", preview(seen))
    raw = len(search_issues.run(query="crash"))
    print(f"\nraw search result: {raw:,} characters; the model saw {len(llm.seen[0]):,}")
    print("final answer:", answer.raw)
    assert "ana@example.com" not in "".join(llm.seen)


if __name__ == "__main__":
    main()
