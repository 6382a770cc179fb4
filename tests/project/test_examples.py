"""Every example in examples/ runs offline and prints what the model saw (so docs never rot)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

# Modules named _*.py are the backends the examples share, imported by them, not run alone.
EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("[!_]*.py"))

# Text each example must print: proof that it reached its end and showed its point.
EXPECTED = {
    "log_search.py": ['"total":12', 'search_logs(query=\\"timeout\\", page=2)', "get_record(3)"],
    "langchain_agent.py": [
        "search_logs(query: string, page: integer = 1, limit: integer = 3)",
        '"total":12',
        "page=2",
        '"tenant":"acme-prod-7731"',
    ],
    "openai_chat.py": ['"total":10', '"page": 2', "get_record", '"body":"Steps to reproduce'],
    "openai_responses.py": ['"total":10', '"page": 2', "get_record", '"body":"Steps to reproduce'],
    "anthropic_messages.py": [
        "[is_error]",
        'get_record({"handle": 109})',
        '"body":"Steps to reproduce',
    ],
    "openai_agents.py": [
        "Invalid arguments for search_issues",
        "get_record",
        '"body":"Steps to reproduce',
    ],
    "claude_agent.py": [
        "mcp__issues__search_issues, mcp__slimtools__get_record",
        '{"total":10,"briefs":[{"number":101,"title":"crash on start-up (101)","state":"open"}',
        '"body":"Steps to reproduce',
        "more: mcp__slimtools__get_record(",
        "the model saw",
    ],
    "crewai_crew.py": [
        'search_issues -> the model saw: {"total":10,"briefs":[{"number":101,',
        'get_record -> the model saw: {"number":101,',
        '"body":"Steps to reproduce',
        "final answer: issue 101 crashes on start-up.",
    ],
    "pydantic_ai_agent.py": ["page 9 is past the end", "get_record", '"body":"Steps to reproduce'],
    "google_adk_agent.py": [
        "final answer: Issue 101 crashes on start-up.",
        "{'total': 10, 'briefs': [{'number': 101, 'title': 'crash on start-up (101)'",
        "'result': '[cleared ",
        "the session keeps the envelope: {'total': 10",
    ],
    "strands_agent.py": [
        "final answer: Issue 101 crashes on start-up.",
        '{"total":10,"briefs":[{"number":101,"title":"crash on start-up (101)"',
        "[cleared ",
        'call list_issues(query="crash") again',
        'the agent\'s history keeps: {"total":10',
    ],
    "langgraph_clearing.py": [
        "CLEARED",
        "Handles: 1, 2, 3",
        "with clearing:        resident",
        "cache-aware default:",
    ],
    "live_metrics.py": [
        "search_logs      4",
        "clearing: 8 passes, 5 results cleared",
        "execute_tool search_logs: gen_ai.tool.call.id=call_0",
        "metric slimtools.tokens.saved:",
    ],
    "recall_sweep.py": ["== careful", "== careless", "keep_head=500", "Wilson score interval"],
    "mcp_server.py": [
        "search_logs(query: string, page: integer = 1, limit: integer = 3)",
        '"total":12',
        '"page":2',
        '"tenant":"acme-prod-7731"',
        "isError",
    ],
}

# Examples of a framework the dev extra cannot hold beside its other pins: they run where the
# framework is installed (.ci/run gives Strands a venv of its own, where this test runs them).
APART = {"strands_agent.py": "strands"}


@pytest.mark.subprocess
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs_offline_and_prints_its_story(path: Path) -> None:
    """The example exits 0 and prints the lines that show its point."""
    framework = APART.get(path.name)
    if framework is not None and importlib.util.find_spec(framework) is None:
        pytest.skip(f"{framework} is not installed here; .ci/run runs this example in its venv")
    done = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    for expected in EXPECTED.get(path.name, []):
        assert expected in done.stdout
