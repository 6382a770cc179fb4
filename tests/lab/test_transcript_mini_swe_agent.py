"""mini-swe-agent trajectories: only commands that ran, and were answered, are results."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given

from slimtools.transcripts import load_transcripts, mini_swe_agent_history
from tests._shared import shared_data
from tests.lab.strategies_transcripts import MINI_FORMAT_ERROR, MINI_SUBMIT, mini_swe_agent_runs


def _results(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m.get("role") == "tool")


def _calls(messages: list[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or ()) for m in messages)


def _run(*messages: dict[str, Any], info: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    doc = {"trajectory_format": "mini-swe-agent-1", "messages": list(messages)}
    if info is not None:
        doc["info"] = info
    return mini_swe_agent_history(doc, "m.traj.json").messages


def test_reply_with_several_blocks_is_no_call():
    """Two bash blocks make mini-swe-agent refuse the reply: no command ran, no result."""
    reply = "THOUGHT: two.\n\n```bash\nls\n```\n\n```bash\npwd\n```"
    messages = _run(
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": MINI_FORMAT_ERROR.format(n=2)},
    )
    assert messages[1] == {"role": "assistant", "content": reply}
    assert messages[2] == {"role": "user", "content": MINI_FORMAT_ERROR.format(n=2)}


def test_format_error_reply_is_not_a_result_even_when_one_block_parses():
    """A reply the harness answered with a format error ran nothing, however it was spelt."""
    messages = _run(
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "```sh\nls\n```"},
        {"role": "user", "content": MINI_FORMAT_ERROR.format(n=0)},
    )
    assert (_calls(messages), _results(messages)) == (0, 0)


def test_final_submission_is_not_a_result():
    """The submission the harness appends at the end reached no model: a plain message."""
    messages = _run(
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "```bash\nls\n```"},
        {"role": "user", "content": "<returncode>0</returncode><output>a</output>"},
        {"role": "assistant", "content": f"Done.\n\n```bash\n{MINI_SUBMIT}\n```"},
        {"role": "user", "content": "diff --git a/a b/a"},
        info={"exit_status": "Submitted"},
    )
    assert (_calls(messages), _results(messages)) == (1, 1)
    assert messages[-1] == {"role": "user", "content": "diff --git a/a b/a"}
    assert MINI_SUBMIT in messages[-2]["content"]


def test_last_answer_of_an_unfinished_run_stays_a_result():
    """Without an exit status the last message is an ordinary answer (a run cut short)."""
    messages = _run(
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "```bash\nls\n```"},
        {"role": "user", "content": "<returncode>0</returncode><output>a</output>"},
    )
    assert _results(messages) == 1


@given(mini_swe_agent_runs())
def test_generated_runs_count_only_commands_that_ran(case: tuple[dict[str, Any], int]):
    """Results are exactly the answered commands: no format error, no submission."""
    doc, ran = case
    messages = mini_swe_agent_history(doc, "m.traj.json").messages
    assert _calls(messages) == _results(messages) == ran
    assert len(messages) == len(doc["messages"])


def test_shared_samples_count_no_format_error_or_submission():
    """On the shared samples no result is a format error or a submission diff."""
    runs = load_transcripts(shared_data() / "transcripts" / "mini_swe_agent")
    assert runs
    for run in runs:
        raw = json.loads(run.path.read_text()) if run.path else {}
        results = [m["content"] for m in run.messages if m.get("role") == "tool"]
        assert not any(r.startswith("Please always provide EXACTLY ONE") for r in results)
        assert not any(r.startswith("diff --git") for r in results), run.name
        assert _calls(run.messages) == len(results)
        assert raw["info"]["exit_status"] != "Submitted" or run.messages[-1]["role"] == "user"
