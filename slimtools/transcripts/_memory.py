"""Transcripts from recordings already in memory (parsed JSON), for callers without a file."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from slimtools.transcripts._claude_code import claude_code_run
from slimtools.transcripts._model import Location, Message, Run, Source, Transcript
from slimtools.transcripts._swe_agent import mini_swe_agent_run, swe_agent_run
from slimtools.transcripts._tau_bench import tau_bench_run

_ROOT = Location(None, ())


def _transcript(run: Run, name: str, source: Source, index: int = 0) -> Transcript:
    return Transcript(
        name + run.label,
        source,
        run.format,
        run.messages,
        run.synthetic,
        None,
        index,
        run.origins,
        run.restarts,
    )


def claude_code_messages(lines: Iterable[dict[str, Any]]) -> list[Message]:
    """Rebuild the Anthropic history of the main agent from parsed Claude Code log lines."""
    messages: list[Message] = claude_code_run(enumerate(lines, 1)).messages
    return messages


def load_claude_code(path: str | Path) -> Transcript:
    """Load a Claude Code session JSONL as an Anthropic Messages history."""
    from slimtools.transcripts._load import load_file

    return load_file(path, format="claude_code")[0]


def tau_bench_runs(runs: list[dict[str, Any]], name: str) -> list[Transcript]:
    """Turn a parsed tau-bench trajectory list into one OpenAI chat history per run."""
    return [
        _transcript(tau_bench_run(run, Location(None, (i,))), name, "tau_bench", i)
        for i, run in enumerate(runs)
    ]


def swe_agent_history(data: dict[str, Any], name: str) -> Transcript:
    """Turn a parsed SWE-agent ``.traj`` into an OpenAI chat history."""
    return _transcript(swe_agent_run(data, _ROOT), name, "swe_agent")


def mini_swe_agent_history(data: dict[str, Any], name: str) -> Transcript:
    """Turn a parsed mini-swe-agent run into an OpenAI chat history with synthetic calls."""
    return _transcript(mini_swe_agent_run(data, _ROOT), name, "mini_swe_agent")
