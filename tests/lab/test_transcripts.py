"""Transcript loaders: real recordings become well-formed histories the clearer can read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slimtools.transcripts import (
    Transcript,
    claude_code_messages,
    load_file,
    load_transcripts,
    mini_swe_agent_history,
    stream_file,
    swe_agent_history,
)
from tests._shared import shared_data


def _transcripts(folder: str) -> list[Transcript]:
    return load_transcripts(shared_data() / "transcripts" / folder)


def _anthropic_pairs_ok(messages: list[dict]) -> bool:
    """Every tool_use is answered in the very next user message, and nothing else answers."""
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        uses = {b["id"] for b in m["content"] if b.get("type") == "tool_use"}
        if not uses:
            continue
        nxt = messages[i + 1] if i + 1 < len(messages) else None
        if nxt is None or nxt["role"] != "user" or isinstance(nxt["content"], str):
            return False
        answered = {b["tool_use_id"] for b in nxt["content"] if b.get("type") == "tool_result"}
        if answered != uses:
            return False
    return True


def _openai_pairs_ok(messages: list[dict]) -> bool:
    """Every tool message answers a call of an earlier assistant message, at most once."""
    open_calls: set[str] = set()
    for m in messages:
        for call in m.get("tool_calls") or []:
            open_calls.add(call["id"])
        if m["role"] == "tool":
            if m["tool_call_id"] not in open_calls:
                return False
            open_calls.discard(m["tool_call_id"])
    return True


def test_every_shared_transcript_loads():
    """All 268 recorded runs load, grouped by recorder."""
    loaded = _transcripts("")
    by_source: dict[str, int] = {}
    for t in loaded:
        by_source[t.source] = by_source.get(t.source, 0) + 1
    assert by_source == {
        "claude_code": 3,
        "tau_bench": 200,
        "swe_agent": 22,
        "mini_swe_agent": 40,
        "openhands": 3,
    }


def test_claude_code_merges_lines_of_one_response():
    """Assistant lines sharing message.id become one message holding all its tool_use blocks."""
    (short,) = [t for t in _transcripts("claude_code") if t.name == "short.jsonl"]
    assistants = [m for m in short.messages if m["role"] == "assistant"]
    assert len(assistants) == 1
    kinds = [b["type"] for b in assistants[0]["content"]]
    assert kinds.count("tool_use") == 2
    assert "thinking" in kinds


def test_claude_code_results_follow_their_response():
    """Results logged between lines of one response still land in the next user message."""
    for t in _transcripts("claude_code"):
        assert t.format == "anthropic"
        assert _anthropic_pairs_ok(t.messages), t.name


def test_claude_code_interleaved_result_is_regrouped():
    """A result logged between two tool_use lines of one response is moved after both."""
    lines = [
        {"type": "user", "message": {"role": "user", "content": "go"}},
        _cc_assistant("m1", {"type": "tool_use", "id": "a", "name": "Read", "input": {}}),
        _cc_result("a", "file text"),
        _cc_assistant("m1", {"type": "tool_use", "id": "b", "name": "Bash", "input": {}}),
        _cc_result("b", "ok"),
        {"type": "progress", "data": {}},
        _cc_assistant("m2", {"type": "text", "text": "done"}),
    ]
    messages = claude_code_messages(lines)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert [b["id"] for b in messages[1]["content"]] == ["a", "b"]
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["a", "b"]


def test_claude_code_drops_sidechain_lines():
    """Subagent (sidechain) lines are not part of the main model's context."""
    side = _cc_assistant("m9", {"type": "text", "text": "subagent"})
    side["isSidechain"] = True
    lines = [{"type": "user", "message": {"role": "user", "content": "go"}}, side]
    assert claude_code_messages(lines) == [{"role": "user", "content": "go"}]


def _compacted(summary_flag: bool, boundary: bool) -> list[dict]:
    """A session compacted after its first response: a boundary line and/or a flagged
    summary, then one more response."""
    lines = [
        {"type": "user", "message": {"role": "user", "content": "go"}, "uuid": "1"},
        _cc_assistant("m1", {"type": "text", "text": "working"}),
    ]
    if boundary:
        lines.append({"type": "system", "subtype": "compact_boundary", "uuid": "b"})
    summary = {"type": "user", "message": {"role": "user", "content": "Summary: go."}}
    lines += [summary | ({"isCompactSummary": True} if summary_flag else {})]
    lines.append(_cc_assistant("m2", {"type": "text", "text": "done"}))
    return lines


@pytest.mark.parametrize(("flag", "boundary"), [(True, True), (True, False), (False, True)])
def test_claude_code_history_restarts_at_a_compaction_summary(tmp_path, flag, boundary):
    """The summary after a compaction (flagged, or the user line after the boundary) is
    where the model's context restarts, read whole or streamed."""
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in _compacted(flag, boundary)))
    (run,) = load_file(path)
    assert run.restarts == (2,)
    assert run.messages[2]["content"] == "Summary: go."
    (streamed,) = stream_file(path)
    assert list(streamed.messages) == run.messages
    assert streamed.restarts == [2]


def test_claude_code_history_without_compaction_never_restarts(tmp_path):
    """A session that was not compacted restarts nowhere."""
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in _compacted(False, False)))
    (run,) = load_file(path)
    assert run.restarts == ()


def test_tau_bench_gives_one_openai_history_per_run():
    """The tau-bench file holds 200 runs; each is a paired OpenAI chat history."""
    runs = _transcripts("tau_bench")
    assert len(runs) == 200
    assert all(t.format == "openai_chat" and _openai_pairs_ok(t.messages) for t in runs)
    assert sum(1 for t in runs if any(m["role"] == "tool" for m in t.messages)) == 182
    assert not any("tool_calls" in m and not m["tool_calls"] for t in runs for m in t.messages)


def test_swe_agent_function_calling_keeps_real_calls():
    """Function-calling .traj files keep their real call ids and are not synthetic."""
    (simple,) = [t for t in _transcripts("swe_agent") if t.name == "function_calling_simple.traj"]
    assert not simple.synthetic
    assert simple.messages[3] == {
        "role": "tool",
        "tool_call_id": "call_PbWErNIge3YTrli3fiVvmIid",
        "content": simple.messages[3]["content"],
    }
    assert _openai_pairs_ok(simple.messages)


def test_text_actions_become_synthetic_tool_calls():
    """A SWE-agent text action becomes a call; the next user message becomes its result."""
    data = {
        "history": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "fix the bug"},
            {
                "role": "assistant",
                "content": "look\n```\nopen a.py\n```",
                "thought": "look",
                "action": "open a.py\n",
            },
            {"role": "user", "content": "[File: a.py]"},
            {"role": "assistant", "content": "run", "thought": "run", "action": "python a.py"},
            {"role": "user", "content": "ok"},
        ]
    }
    t = swe_agent_history(data, "x.traj")
    assert t.synthetic
    assert t.messages[2]["content"] == "look"
    assert t.messages[2]["tool_calls"][0]["function"] == {
        "name": "open",
        "arguments": '{"command": "open a.py"}',
    }
    assert t.messages[3] == {"role": "tool", "tool_call_id": "call_2", "content": "[File: a.py]"}
    assert t.messages[4]["tool_calls"][0]["function"]["name"] == "bash"
    assert t.messages[5]["role"] == "tool"


def test_mini_swe_agent_bash_block_becomes_call():
    """The fenced bash block is the call's command; the reasoning stays as content."""
    data = {
        "trajectory_format": "mini-swe-agent-1",
        "messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "THOUGHT: list\n\n```bash\nls -la\n```"},
            {"role": "user", "content": "<returncode>0</returncode><output>a</output>"},
            {"role": "assistant", "content": "no command here"},
            {"role": "user", "content": "Please always provide EXACTLY ONE action"},
        ],
    }
    t = mini_swe_agent_history(data, "m.traj.json")
    assert t.messages[1]["content"] == "THOUGHT: list"
    assert json.loads(t.messages[1]["tool_calls"][0]["function"]["arguments"]) == {
        "command": "ls -la"
    }
    assert t.messages[2]["role"] == "tool"
    assert t.messages[3] == {"role": "assistant", "content": "no command here"}
    assert t.messages[4]["role"] == "user"


def test_synthetic_histories_are_paired():
    """Every synthesised result answers exactly one synthesised call."""
    for t in _transcripts("mini_swe_agent") + _transcripts("swe_agent"):
        assert _openai_pairs_ok(t.messages), t.name
    assert all(t.synthetic for t in _transcripts("mini_swe_agent"))


def test_unknown_files_are_skipped(tmp_path: Path):
    """A README or foreign JSON in a transcript folder is ignored, not an error."""
    (tmp_path / "README.md").write_text("hi")
    (tmp_path / "other.json").write_text('{"a": 1}')
    assert load_transcripts(tmp_path) == []


def test_malformed_transcript_names_the_file(tmp_path: Path):
    """A broken transcript raises ValueError naming the file."""
    bad = tmp_path / "bad.traj"
    bad.write_text('{"history": [{"role": "assistant", "tool_calls": [{"function": {}}]}]}')
    with pytest.raises(ValueError, match=r"bad\.traj"):
        load_file(bad)


def test_invalid_json_names_the_file(tmp_path: Path):
    """A transcript file that is not JSON raises ValueError naming the file."""
    bad = tmp_path / "cut.traj"
    bad.write_text('{"history": [')
    with pytest.raises(ValueError, match=r"cut\.traj"):
        load_file(bad)


def test_missing_path_raises():
    """A path that does not exist is reported, not silently skipped."""
    with pytest.raises(FileNotFoundError, match="nowhere"):
        load_transcripts("/nowhere/at/all")


def _cc_assistant(mid: str, block: dict) -> dict:
    return {"type": "assistant", "message": {"id": mid, "role": "assistant", "content": [block]}}


def _cc_result(use_id: str, text: str) -> dict:
    block = {"type": "tool_result", "tool_use_id": use_id, "content": text}
    return {"type": "user", "message": {"role": "user", "content": [block]}}
