"""The slimtools command: the article's bill and transcript reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slimtools.adapters.langchain_baseline import (
    context_editing_step,
    langchain_defaults_step,
    to_langchain_messages,
)
from slimtools.clearing import ClearingPolicy
from slimtools.cli import build_policy, main
from slimtools.ledger import TokenLedger
from slimtools.transcripts import load_transcripts
from tests._shared import shared_data


def write_run(folder: Path, rounds: int = 8, chars: int = 6_000) -> Path:
    """A small SWE-agent style function-calling run on disk."""
    history: list[dict] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "fix it"},
    ]
    for i in range(rounds):
        call = {"id": f"c{i}", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}
        history.append({"role": "assistant", "content": f"step {i}", "tool_calls": [call]})
        history.append({"role": "tool", "content": "x" * chars, "tool_call_ids": [f"c{i}"]})
    history.append({"role": "assistant", "content": "done"})
    path = folder / "run.traj"
    path.write_text(json.dumps({"history": history}))
    return path


def test_bill_prints_the_article_table(capsys):
    """`slimtools bill 20 5000` prints the four rows of the article."""
    assert main(["bill", "20", "5000"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4
    assert "25,000" in lines[0]
    assert "75,000" in lines[0]
    assert lines[3].endswith("1,050,000")


def test_bill_every_option(capsys):
    """--every 1 prints a row per round."""
    assert main(["bill", "3", "10", "--every", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_bill_rejects_negative_rounds(capsys):
    """A negative count is an argument error (exit status 2)."""
    with pytest.raises(SystemExit) as exc:
        main(["bill", "-3", "10"])
    assert exc.value.code == 2
    assert "must be >= 0" in capsys.readouterr().err


def test_report_prints_rows_totals_and_ratios(tmp_path, capsys):
    """A report lists each transcript, a total and the ratios against no clearing."""
    write_run(tmp_path)
    assert main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "run.traj" in out
    assert "TOTAL (1 transcripts)" in out
    assert "slimtools (default) vs no clearing: resident x" in out
    assert "langchain defaults" in out


def test_report_slimtools_column_clears(tmp_path, capsys):
    """The slimtools column keeps fewer resident tokens than no clearing."""
    write_run(tmp_path)
    main(["report", str(tmp_path)])
    row = next(line for line in capsys.readouterr().out.splitlines() if "run.traj" in line)
    resident = [int(v.replace(",", "")) for v in row.split("|")[1].split()]
    none, langchain, slimtools = resident
    assert slimtools < none / 2
    assert langchain == none  # under LangChain's 100,000-token trigger nothing is cleared


def test_report_policy_none_matches_no_clearing(tmp_path, capsys):
    """--policy none makes the slimtools column equal the no-clearing column."""
    write_run(tmp_path)
    main(["report", str(tmp_path), "--policy", "none"])
    row = next(line for line in capsys.readouterr().out.splitlines() if "run.traj" in line)
    none, _, slimtools = row.split("|")[1].split()
    assert none == slimtools


def test_report_keep_turns_option(tmp_path, capsys):
    """--keep-turns is shown in the ratio line and applied to the policy."""
    write_run(tmp_path)
    main(["report", str(tmp_path), "--keep-turns", "4", "--batch-turns", "2"])
    assert "slimtools (default, keep_turns=4, batch_turns=2)" in capsys.readouterr().out


def test_build_policy_variants():
    """default, anthropic and none map to the documented policies."""
    assert build_policy("none") is None
    assert build_policy("default", keep_turns=3).keep_turns == 3
    anthropic = build_policy("anthropic")
    assert anthropic == ClearingPolicy.from_anthropic()


def test_report_missing_path_fails_cleanly(capsys):
    """An unknown path prints an error and exits with status 1."""
    assert main(["report", "/no/such/place"]) == 1
    assert "no such transcript" in capsys.readouterr().err


def test_report_empty_folder_fails_cleanly(tmp_path, capsys):
    """A folder without transcripts is reported, not an empty table."""
    assert main(["report", str(tmp_path)]) == 1
    assert "no transcripts found" in capsys.readouterr().err


def test_report_on_shared_transcripts_by_source(capsys):
    """On the recorded runs the report groups by recorder and totals 268 transcripts."""
    assert main(["report", str(shared_data() / "transcripts"), "--by", "source"]) == 0
    out = capsys.readouterr().out
    for source in ("claude_code", "tau_bench", "swe_agent", "mini_swe_agent", "openhands"):
        assert source in out
    assert "TOTAL (268 transcripts)" in out


def test_langchain_conversion_bills_like_the_original():
    """Converting a transcript to LangChain messages keeps its calls and bill within 1%."""
    for t in load_transcripts(shared_data() / "transcripts" / "claude_code"):
        native = TokenLedger.measure(t.messages).summary
        converted = TokenLedger.measure(to_langchain_messages(t.messages)).summary
        assert converted.rounds == native.rounds
        assert abs(converted.billed - native.billed) <= 0.01 * native.billed + 5


def test_langchain_step_clears_past_its_trigger():
    """LangChain's edit, replayed per call, clears all but 3 results once past 100k tokens."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(12):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        history.append({"role": "assistant", "content": "", "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": "y" * 40_000})
    messages, step = langchain_defaults_step(history)
    edited = step(messages)
    cleared = [m.content == "[cleared]" for m in edited if m.type == "tool"]
    assert cleared == [True] * 9 + [False] * 3
    assert all(m.content != "[cleared]" for m in messages if m.type == "tool")


def test_langchain_step_breaks_the_cache_every_call_once_triggered():
    """Per-call recomputation slides the cleared boundary: every call past the trigger breaks."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(20):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        history.append({"role": "assistant", "content": "", "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": "y" * 40_000})
    ledger = TokenLedger.measure(to_langchain_messages(history), clear=context_editing_step())
    broken = [r.round for r in ledger.rows if r.cache_broken]
    assert broken == list(range(broken[0], 21))
    assert len(broken) >= 10


def test_without_langchain_the_documented_defaults_are_emulated(monkeypatch):
    """With LangChain missing, the baseline clears all but 3 results past 100k tokens."""
    import slimtools.adapters.langchain_baseline as baseline

    monkeypatch.setattr(baseline, "has_langchain", lambda: False)
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(12):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        history.append({"role": "assistant", "content": "", "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": "y" * 40_000})
    messages, step = baseline.langchain_defaults_step(history)
    assert messages == history
    kept = [len(m["content"]) == 40_000 for m in step(messages) if m["role"] == "tool"]
    assert kept == [False] * 9 + [True] * 3
