"""The slimtools command: the article's bill and transcript reports."""

from __future__ import annotations

import pytest

from slimtools.clearing import ClearingPolicy
from slimtools.cli import main
from slimtools.cli.report import build_policy
from slimtools.ledger.analyze import analyze
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
    """The cells after the strategy ``label`` in the report's TOTAL block."""
    line = next(line for line in out.splitlines() if label in line)
    return line.split(label, 1)[1].split()


def test_report_prints_no_clearing_and_the_policy_in_total(tmp_path, capsys):
    """A report lists no clearing and the slimtools policy, totalled over the transcripts."""
    write_run(tmp_path)
    assert main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "TOTAL   no clearing" in out
    assert "slimtools (default)" in out


def test_report_figures_are_analyzes(tmp_path, capsys):
    """The report's rows are the totals ``analyze`` gives for the same policy."""
    write_run(tmp_path)
    main(["report", str(tmp_path), "--cache", "none"])
    out = capsys.readouterr().out
    result = analyze(tmp_path, policies={"p": ClearingPolicy(cache=None)}, cache=None)
    mine = result.total.strategies["p"]
    cells = _row(out, "slimtools (default)")
    assert cells[1] == f"{mine.resident_end:,}"
    assert cells[5] == f"{round(mine.cached):,}"
    assert cells[-1] == f"{mine.worse}/{mine.runs}"


def test_report_counts_runs_that_cost_more_and_hints_why(tmp_path, capsys):
    """A run that ends soon after its clears costs more cached: worse 1/1, and a hint."""
    write_run(tmp_path)
    main(["report", str(tmp_path)])
    out = capsys.readouterr().out
    assert _row(out, "slimtools (default)")[-1] == "1/1"
    assert "hint: the 2 clears bet that the runs would go on" in out


def test_report_policy_none_reports_no_clearing_alone(tmp_path, capsys):
    """--policy none leaves only the no-clearing row."""
    write_run(tmp_path)
    main(["report", str(tmp_path), "--policy", "none"])
    out = capsys.readouterr().out
    assert "no clearing" in out
    assert "slimtools" not in out


def test_report_options_name_the_policy(tmp_path, capsys):
    """--keep-turns and --clear-at-least are shown in the slimtools row's label."""
    write_run(tmp_path)
    main(["report", str(tmp_path), "--keep-turns", "4", "--clear-at-least", "2"])
    assert "slimtools (default, keep_turns=4, clear_at_least=2)" in capsys.readouterr().out


def test_report_cache_option_prices_the_bill(tmp_path, capsys):
    """--cache openai bills with OpenAI's prices; --cache none bills uncached."""
    write_run(tmp_path)
    main(["report", str(tmp_path), "--cache", "openai"])
    assert "cache: openai, reads 0.1x, writes 1x" in capsys.readouterr().out
    main(["report", str(tmp_path), "--cache", "none"])
    out = capsys.readouterr().out
    assert "cache: none" in out
    billed, cached = _row(out, "no clearing")[2], _row(out, "no clearing")[3]
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
    assert main(["report", str(folder), "--by", "source"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for source in ("claude_code", "tau_bench", "swe_agent", "mini_swe_agent", "openhands"):
        assert any(line.startswith(f"{source} ") for line in lines)
    assert any(line.startswith("TOTAL ") for line in lines)
