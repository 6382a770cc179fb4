"""Handles survive compaction: the summary carries the manifest of every cleared result."""

from __future__ import annotations

import json

from slimtools.clearing import ClearingPolicy, view
from slimtools.clearing.manifest import MANIFEST_HEADER, entry_lines
from slimtools.compaction import CompactionPolicy, ContextPipeline, compact


def round_of(i: int) -> list[dict]:
    """One model call reading a file, and its large result carrying a handle."""
    call = {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{i}.py"})},
    }
    body = json.dumps({"total": 1, "briefs": [{"id": f"h{i}x"}], "hint": f"line{i} " * 600})
    return [
        {"role": "assistant", "content": f"step {i}", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": body},
    ]


class ScriptedSummariser:
    """Answers a fixed summary that names no detail, and records the manifest it was handed."""

    def __init__(self) -> None:
        self.manifests: list[str] = []

    def __call__(self, messages: list, *, manifest: str = "") -> str:
        self.manifests.append(manifest)
        return "We read some files."


def drive(pipeline: ContextPipeline, rounds: int) -> list[dict]:
    history: list[dict] = [{"role": "user", "content": "Review the code."}]
    for i in range(rounds):
        history += round_of(i)
        history = pipeline(history)
    return history


def pipeline(summarise: ScriptedSummariser) -> ContextPipeline:
    return ContextPipeline(
        CompactionPolicy(window=10_000, keep_turns=2),
        summarise,
        ClearingPolicy(cache=None),
    )


def every_call_cleared_or_kept(history: list[dict], rounds: int) -> list[str]:
    """The calls of the run neither still in the history nor named in a summary."""
    text = "\n".join(view(history).message_texts)
    return [f"src/m{i}.py" for i in range(rounds) if f"src/m{i}.py" not in text]


def test_pipeline_hands_the_summariser_the_manifest_of_cleared_results():
    """The scripted summariser receives a manifest naming the exact calls it folds."""
    summarise = ScriptedSummariser()
    drive(pipeline(summarise), 30)
    assert summarise.manifests, "compaction never ran"
    first = summarise.manifests[0]
    assert first.startswith(MANIFEST_HEADER)
    assert 'read_file({"path":"src/m0.py"})' in first


def test_summary_message_carries_the_manifest_verbatim():
    """The summary message holds the manifest block exactly as it was handed over."""
    summarise = ScriptedSummariser()
    history = drive(pipeline(summarise), 30)
    summary = next(m["content"] for m in history if "We read some files." in str(m["content"]))
    assert summarise.manifests[-1] in summary


def test_every_cleared_detail_stays_refetchable_after_repeated_compactions():
    """After clear-then-compact, several times over, every call of the run is still named."""
    summarise = ScriptedSummariser()
    history = drive(pipeline(summarise), 60)
    assert len(summarise.manifests) >= 2
    assert every_call_cleared_or_kept(history, 60) == []


def test_manifest_entry_names_tool_size_handles_and_a_one_line_head():
    """An entry gives the exact call, the size, the handles and a head without newlines."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(4):
        history += round_of(i)
    from slimtools.clearing import clear_stale_results

    line = entry_lines(clear_stale_results(history, ClearingPolicy(cache=None)))[0]
    call_and_size, handles, head = line.split("; ", 2)
    size = len(history[2]["content"])
    assert call_and_size == f'- read_file({{"path":"src/m0.py"}}): {size:,} chars'
    assert handles.startswith("handles ")
    assert "h0x" in handles
    assert head.startswith('head: {"total": 1')
    assert "\n" not in line


def test_a_plain_summariser_still_gets_the_manifest_appended():
    """A summariser without a ``manifest`` keyword is called as before; the block follows."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(6):
        history += round_of(i)
    from slimtools.clearing import clear_stale_results

    cleared = clear_stale_results(history, ClearingPolicy(cache=None))
    out = compact(cleared, lambda messages: "short", keep_turns=2, manifest=True)
    assert out[0]["content"].startswith("short\n\n" + MANIFEST_HEADER)


def test_compact_without_manifest_is_unchanged():
    """``compact`` keeps its former behaviour unless asked for the manifest."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(6):
        history += round_of(i)
    out = compact(history, lambda messages: "short", keep_turns=2)
    assert out[0]["content"] == "short"
