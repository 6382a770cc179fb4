"""The slimtools command: the article's bill and transcript reports."""

from __future__ import annotations

import pytest

from slimtools.clearing import ClearingPolicy
from slimtools.cli import main
from slimtools.cli.report import build_policy
from slimtools.ledger import TokenLedger
from slimtools.ledger.peers import (
    context_editing_step,
    langchain_defaults_step,
    to_langchain_messages,
)
from slimtools.transcripts import load_transcripts
from tests._shared import shared_data
from tests.lab.cli_helpers import write_run


def test_bill_prints_the_article_table(capsys):
    """`slimtools bill 20 5000` prints the four rows of the article under the table head."""
    assert main(["bill", "20", "5000"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 + 4
    assert "25,000" in lines[3]
    assert "75,000" in lines[3]
    assert lines[6].endswith("1,050,000")


def test_bill_without_slim_prints_column_headers(capsys):
    """The plain bill is a table: a title line and a header naming every column."""
    assert main(["bill", "20", "5000"]) == 0
    title, header = capsys.readouterr().out.splitlines()[:2]
    assert "5,000 tokens a result" in title
    assert header.split() == ["round", "resident", "billed", "input"]


def test_bill_every_option(capsys):
    """--every 1 prints a row per round."""
    assert main(["bill", "3", "10", "--every", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3 + 3


def test_bill_rejects_negative_rounds(capsys):
    """A negative count is an argument error (exit status 2)."""
    with pytest.raises(SystemExit) as exc:
        main(["bill", "-3", "10"])
    assert exc.value.code == 2
    assert "must be >= 0" in capsys.readouterr().err


def _row(out: str, label: str) -> list[str]:
    """The figures of the row named ``label`` in the TOTAL table."""
    total = out[out.index("TOTAL") :]
    line = next(line for line in total.splitlines() if line.startswith(label))
    return line[48:].split()


def test_report_prints_every_strategy_and_a_total(tmp_path, capsys):
    """A report lists no clearing, the peers and slimtools, totalled over the transcripts."""
    write_run(tmp_path)
    assert main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "TOTAL (1 transcripts): 1 runs, 9 model calls" in out
    for label in (
        "no clearing",
        "langchain ClearToolUsesEdit (defaults)",
        "langchain ClearToolUsesEdit (30k, keep 3, >=5k)",
        "swe-agent last 5 observations",
        "complexity trap (10-turn window)",
        "slimtools turn-end (cache=None)",
        "slimtools (default)",
    ):
        assert label in out


def test_report_turn_end_row_clears(tmp_path, capsys):
    """The turn-end row keeps fewer resident tokens than no clearing."""
    write_run(tmp_path)
    main(["report", str(tmp_path)])
    out = capsys.readouterr().out
    none = int(_row(out, "no clearing")[0].replace(",", ""))
    turn_end = int(_row(out, "slimtools turn-end")[0].replace(",", ""))
    assert turn_end < none / 2
    assert _row(out, "langchain ClearToolUsesEdit (defaults)")[0] == _row(out, "no clearing")[0]


def test_report_counts_transcripts_that_cost_more(tmp_path, capsys):
    """The worse column counts transcripts whose cached cost is above no clearing's."""
    write_run(tmp_path)
    main(["report", str(tmp_path)])
    out = capsys.readouterr().out
    assert _row(out, "no clearing")[-1] == "0/1"
    assert _row(out, "slimtools turn-end")[-1] == "1/1"


def test_report_policy_none_matches_no_clearing(tmp_path, capsys):
    """--policy none makes the slimtools row equal the no-clearing row."""
    write_run(tmp_path)
    main(["report", str(tmp_path), "--policy", "none", "--no-peers"])
    out = capsys.readouterr().out
    assert _row(out, "slimtools (none)") == _row(out, "no clearing")


def test_report_options_name_the_policy(tmp_path, capsys):
    """--keep-turns and --clear-at-least are shown in the slimtools row's label."""
    write_run(tmp_path)
    main(["report", str(tmp_path), "--keep-turns", "4", "--clear-at-least", "2", "--no-peers"])
    assert "slimtools (default, keep_turns=4, clear_at_least=2)" in capsys.readouterr().out


def test_report_cache_option_prices_the_bill(tmp_path, capsys):
    """--cache openai bills and decides with OpenAI's prices; --cache none bills uncached."""
    write_run(tmp_path)
    main(["report", str(tmp_path), "--cache", "openai", "--no-peers"])
    assert "cache openai (read 0.1x, write 1x)" in capsys.readouterr().out
    main(["report", str(tmp_path), "--cache", "none", "--no-peers"])
    out = capsys.readouterr().out
    assert "cache none" in out
    billed, cached = _row(out, "no clearing")[3], _row(out, "no clearing")[4]
    assert billed == cached


def test_report_rejects_an_unknown_cache(tmp_path, capsys):
    """An unknown --cache preset is a usage error naming the presets."""
    with pytest.raises(SystemExit) as exc:
        main(["report", str(tmp_path), "--cache", "azure"])
    assert exc.value.code == 2
    assert "anthropic-1h" in capsys.readouterr().err


def test_build_policy_variants():
    """default, anthropic and none map to the documented policies."""
    assert build_policy("none") is None
    assert build_policy("default", keep_turns=3).keep_turns == 3
    assert build_policy("default", cache="openai").cache == ClearingPolicy(cache="openai").cache
    assert build_policy("default", cache="none").pricing is None
    assert build_policy("anthropic") == ClearingPolicy.from_anthropic()


def test_report_missing_path_fails_cleanly(capsys):
    """An unknown path prints an error and exits with status 1."""
    assert main(["report", "/no/such/place"]) == 1
    assert "no such transcript" in capsys.readouterr().err


def test_report_empty_folder_fails_cleanly(tmp_path, capsys):
    """A folder without transcripts is reported, not an empty table."""
    assert main(["report", str(tmp_path)]) == 1
    assert "no transcripts found" in capsys.readouterr().err


def test_report_on_shared_transcripts_by_source(capsys):
    """On the recorded runs the report has a table per recorder and a total."""
    folder = shared_data() / "transcripts"
    assert main(["report", str(folder), "--by", "source", "--no-peers"]) == 0
    out = capsys.readouterr().out
    for source in ("claude_code", "tau_bench", "swe_agent", "mini_swe_agent", "openhands"):
        assert f"{source}: " in out
    assert f"TOTAL ({len(load_transcripts(folder))} transcripts)" in out


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
    import slimtools.ledger.peers as baseline
    import slimtools.ledger.peers.langchain as langchain_peer

    monkeypatch.setattr(langchain_peer, "has_langchain", lambda: False)
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(12):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        history.append({"role": "assistant", "content": "", "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": "y" * 40_000})
    messages, step = baseline.langchain_defaults_step(history)
    assert messages == history
    kept = [len(m["content"]) == 40_000 for m in step(messages) if m["role"] == "tool"]
    assert kept == [False] * 9 + [True] * 3
