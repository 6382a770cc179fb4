"""What the CLI tests of the lab share: running ``slimtools`` in-process, a run on disk,
and the sample session cleared with its audit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from slimtools.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"
SESSION = DATA / "claude_code" / "session.jsonl"
"""A small Claude Code session kept in the repository (tests/data)."""


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``slimtools ARGV`` in this process: its exit status, stdout and stderr."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def write_run(folder: Path, rounds: int = 8, chars: int = 6_000) -> Path:
    """A SWE-agent style function-calling run on disk: ``rounds`` results of ``chars``
    characters, ending soon after they go stale."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "fix it"},
    ]
    for i in range(rounds):
        arguments = json.dumps({"cmd": f"ls {i}"})  # distinct calls: none supersedes another
        call = {"id": f"c{i}", "function": {"name": "bash", "arguments": arguments}}
        history.append({"role": "assistant", "content": f"step {i}", "tool_calls": [call]})
        history.append({"role": "tool", "content": "x" * chars, "tool_call_ids": [f"c{i}"]})
    history.append({"role": "assistant", "content": "done"})
    path = folder / "run.traj"
    path.write_text(json.dumps({"history": history}))
    return path


def cleared_with_audit(tmp_path: Path) -> tuple[Path, Path]:
    """:data:`SESSION` cleared (no cache prices) to ``c.jsonl`` with its audit ``a.jsonl``."""
    cleared, audit = tmp_path / "c.jsonl", tmp_path / "a.jsonl"
    main(["clear", "--cache", "none", str(SESSION), "-o", str(cleared), "--audit", str(audit)])
    return cleared, audit
