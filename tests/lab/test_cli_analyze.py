"""slimtools analyze, bill --slim/--plot and the shared policy options, run as a user would."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from slimtools.clearing import ClearingPolicy
from slimtools.cli import _output, main
from slimtools.cli._policy import build_policy
from slimtools.ledger.analyze import analyze
from tests._ports import run, slimtools
from tests._shared import shared_data
from tests.lab.cli_helpers import cli

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"
ROOT = Path(__file__).resolve().parents[2]


def table(out: str, title_start: str, until: str = "") -> list[str]:
    """The lines of the table whose title starts with ``title_start``: up to the first blank
    line, or with ``until``, up to the line starting with it (sections have blank lines)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title_start))
    rest = range(start + 1, len(lines))
    if until:
        end = next(i for i in rest if lines[i].startswith(until))
    else:
        end = next((i for i in rest if not lines[i].strip()), len(lines))
    return [line for line in lines[start:end] if line.strip()]


def savings_table(out: str) -> list[str]:
    """The rows of the savings table."""
    return table(out, "What clearing would change", until="resident: tool-result")


def row(lines: list[str], first: str) -> list[str]:
    """The cells (split on runs of spaces) of the row (not the title) starting with ``first``."""
    line = next(line for line in lines[1:] if line.lstrip().startswith(first))
    return line.split()


def test_analyze_prints_counts_tools_and_savings_per_file_and_in_total(capsys):
    """By default: a row per file, the tools by tokens, and what each policy would change."""
    status, out, err = cli(capsys, "analyze", str(DATA / "openai_chat"), str(DATA / "anthropic"))
    assert (status, err) == (0, "")
    expected = analyze(DATA / "openai_chat", DATA / "anthropic").total
    counts = table(out, "5 transcript files, 5 runs (1 read message by message)")
    assert row(counts, str(DATA / "openai_chat" / "messages.jsonl"))[1:3] == ["openai_chat", "1"]
    assert row(counts, "TOTAL") == [
        "TOTAL",
        "5",
        f"{expected.messages:,}",
        f"{expected.model_calls:,}",
        f"{expected.tool_calls:,}",
        f"{expected.tool_results:,}",
        f"{expected.tool_tokens:,}",
    ]
    tools = table(out, "Tool results by tool")
    ranked = sorted(expected.tools.items(), key=lambda kv: -kv[1].total)
    assert row(tools, ranked[0][0])[6] == f"{ranked[0][1].total:,}"
    savings = out[out.index("What clearing would change") :]
    assert "no clearing" in savings
    assert "default" in savings
    assert "TOTAL" in savings


def test_by_source_groups_the_files_of_each_format(capsys):
    """--by source: one row per format in the counts and savings tables."""
    status, out, _ = cli(capsys, "analyze", str(DATA), "--by", "source")
    assert status == 1  # the malformed files
    counts = table(out, f"{len(analyze(DATA).files)} transcript files")
    for source in ("claude_code", "tau_bench", "openhands", "langchain", "openai_responses"):
        assert row(counts, source)[0] == source


def test_by_tool_lists_every_tool_with_its_resident_tokens_at_the_end(capsys):
    """--by tool: every tool, and per strategy the tokens it leaves resident at the end."""
    status, out, _ = cli(
        capsys,
        "analyze",
        str(DATA / "claude_code"),
        "--by",
        "tool",
        "--compare",
        "turn-end,default",
    )
    assert status == 0
    tools = table(out, "Tool results by tool")
    assert "end: no clearing" in tools[1]
    assert "end: turn-end" in tools[1]
    assert "end: default" in tools[1]
    expected = analyze(DATA / "claude_code", policies={"turn-end": ClearingPolicy(cache=None)})
    ends = expected.total.resident_by_tool
    for name in expected.total.tools:
        cells = row(tools, name + " ")
        assert cells[-3] == f"{ends['no clearing'].get(name, 0):,}"
        assert cells[-2] == f"{ends['turn-end'].get(name, 0):,}"


def test_policies_can_be_repeated_and_compared(capsys):
    """--policy twice and --compare add strategies in order, each named once."""
    argv = [
        "analyze",
        str(DATA / "tau_bench"),
        "--policy",
        "anthropic",
        "--compare",
        "turn-end,anthropic",
    ]
    status, out, _ = cli(capsys, *argv)
    assert status == 0
    savings = savings_table(out)
    labels = [
        line.split()[1] if line.startswith("TOTAL") else line.split()[0] for line in savings[3:]
    ]
    assert labels == ["no", "anthropic", "turn-end"]


def test_policy_options_reach_every_policy(capsys):
    """--keep-turns and --exclude-tool apply to each named policy (as ClearingPolicy fields)."""
    argv = ["analyze", str(DATA / "tau_bench"), "--json", "--compare", "turn-end,default"]
    _, wide, _ = cli(capsys, *argv)
    _, kept, _ = cli(capsys, *argv, "--keep-turns", "50")
    cleared = json.loads(wide)["total"]["savings"]["turn-end"]["resident_end"]
    untouched = json.loads(kept)["total"]["savings"]
    assert untouched["turn-end"]["resident_end"] == untouched["no clearing"]["resident_end"]
    assert cleared < untouched["no clearing"]["resident_end"]
    assert json.loads(kept)["policies"] == {
        "turn-end": "turn-end, keep_turns=50",
        "default": "default, keep_turns=50",
    }


def test_json_has_the_documented_keys_per_file(capsys):
    """--json: per file at least file, format, messages, tool_calls, tool_results, by_tool,
    ledger and savings; the same figures as the library."""
    status, out, _ = cli(capsys, "analyze", str(DATA / "swe_agent"), "--json")
    assert status == 0
    document = json.loads(out)
    for entry in document["files"]:
        for key in ("file", "format", "messages", "tool_calls", "tool_results", "by_tool"):
            assert key in entry
        assert set(entry["ledger"]) == set(entry["savings"]) == {"no clearing", "default"}
    expected = analyze(DATA / "swe_agent").to_dict()
    assert document["total"] == expected["total"]
    assert document["errors"] == []
    assert document["strategies"] == ["no clearing", "default"]


def test_a_malformed_file_gets_one_line_and_the_others_are_analysed(capsys):
    """Each bad file: one stderr line naming it and the fault; exit 1; the rest still counted."""
    status, out, err = cli(capsys, "analyze", str(DATA / "malformed"), str(DATA / "tau_bench"))
    assert status == 1
    lines = err.strip().splitlines()
    assert len(lines) == len(list((DATA / "malformed").iterdir()))
    assert f"slimtools: {DATA / 'malformed' / 'latin1.jsonl'}:2: not UTF-8 text (byte 32)" in lines
    assert f"slimtools: {DATA / 'malformed' / 'cut_line.jsonl'}:4: not valid JSON" in err
    counts = table(out, "1 transcript files, 3 runs; 6 could not be read (see above)")
    assert row(counts, "TOTAL")[1] == "3"


def test_malformed_files_are_listed_in_the_json_errors(capsys):
    """--json carries the errors too, with file, line and reason."""
    _, out, _ = cli(
        capsys,
        "analyze",
        str(DATA / "malformed" / "latin1.jsonl"),
        str(DATA / "tau_bench"),
        "--json",
    )
    (error,) = json.loads(out)["errors"]
    assert error == {
        "file": str(DATA / "malformed" / "latin1.jsonl"),
        "line": 2,
        "reason": "not UTF-8 text (byte 32)",
    }


def test_format_forces_the_reader(capsys):
    """--format: the named reader reads the file, and one that does not fit says why."""
    status, out, _ = cli(capsys, "analyze", str(DATA / "tau_bench"), "--format", "tau_bench")
    assert status == 0
    assert row(table(out, "1 transcript files"), "TOTAL")[1] == "3"
    status, out, err = cli(capsys, "analyze", str(DATA / "tau_bench"), "--format", "swe_agent")
    assert (status, out) == (1, "")
    path = DATA / "tau_bench" / "airline.json"
    assert err == f"slimtools: {path}: list element 0: expected a 'history' list of messages\n"


def test_a_run_without_model_calls_is_counted_and_plotted(capsys, tmp_path):
    """Messages but no model call: counted, no rows, an empty plot, no error."""
    path = tmp_path / "chat.jsonl"
    path.write_text('{"role": "user", "content": "hello"}\n{"role": "user", "content": "hi"}\n')
    status, out, _ = cli(capsys, "analyze", str(path), "--plot", str(tmp_path / "p.png"))
    assert status == 0
    assert row(table(out, "1 transcript files"), "TOTAL")[1:4] == ["1", "2", "0"]
    assert "no tool results" in out
    with Image.open(tmp_path / "p.png") as image:
        assert image.size == (1000, 700)


def test_nothing_to_analyse_fails_cleanly(capsys, tmp_path):
    """A folder without transcripts: one line, exit 1, no table."""
    status, out, err = cli(capsys, "analyze", str(DATA / "unknown"))
    assert (status, out) == (1, "")
    assert err.strip() == f"slimtools: no transcripts found under {DATA / 'unknown'}"


def test_plot_writes_a_png_of_the_expected_size(capsys, tmp_path):
    """--plot out.png: a valid 1000 x 700 image, and a line saying it was written."""
    path = tmp_path / "waste.png"
    status, out, _ = cli(
        capsys,
        "analyze",
        str(DATA / "claude_code"),
        "--compare",
        "turn-end,default",
        "--plot",
        str(path),
    )
    assert status == 0
    assert out.strip().endswith(f"wrote {path}")
    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.size == (1000, 700)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None
    assert len(colours) > 50  # lines and text, not a blank canvas


def test_plot_writes_svg_too(capsys, tmp_path):
    """The suffix picks the format."""
    path = tmp_path / "waste.svg"
    assert main(["analyze", str(DATA / "tau_bench"), "--plot", str(path)]) == 0
    assert path.read_text().lstrip().startswith("<?xml")
    assert "<svg" in path.read_text()


def test_plot_to_an_unwritable_place_fails_with_one_line(capsys, tmp_path):
    """A plot that cannot be written: the tables are printed, then one line, exit 1."""
    path = tmp_path / "missing" / "dir" / "waste.png"
    status, out, err = cli(capsys, "analyze", str(DATA / "tau_bench"), "--plot", str(path))
    assert status == 1
    assert "TOTAL" in out
    assert err.startswith(f"slimtools: cannot write {path}")


def test_ledger_prints_the_per_round_ledger_of_each_strategy(capsys):
    """--ledger: one table per strategy, a row every --every rounds and the last."""
    status, out, _ = cli(
        capsys, "analyze", str(DATA / "openai_chat" / "list.json"), "--ledger", "--every", "2"
    )
    assert status == 0
    lines = table(out, "Per-round ledger: default")
    rounds = [int(line.split()[0]) for line in lines[3:]]
    expected = analyze(DATA / "openai_chat" / "list.json").total.series["default"]
    assert rounds[:-1] == list(range(2, len(expected.runs) + 1, 2))
    assert rounds[-1] == len(expected.runs)
    last = lines[-1].split()
    assert last[2] == f"{expected.input_tokens[-1]:,}"


@pytest.mark.parametrize(
    "argv",
    [
        ["analyze"],
        ["analyze", "x", "--by", "tools"],
        ["analyze", "x", "--compare", "turn-end,bogus"],
        ["analyze", "x", "--policy", "fast"],
        ["analyze", "x", "--plot", "out.jpg"],
        ["analyze", "x", "--keep-turns", "-1"],
        ["analyze", "x", "--cache", "azure"],
        ["analyze", "x", "--format", "chatgpt"],
        ["bill", "20", "5000", "--slim", "0"],
        ["bill", "20", "5000", "--slim", "1.5"],
        ["bill", "20", "5000", "--plot", "bill.txt"],
        ["report", "x", "--policy", "fast"],
        ["clear", "x", "-o", "y", "--policy", "none"],
    ],
)
def test_usage_errors_exit_with_status_2(argv, capsys):
    """Bad options are usage errors with argparse's message."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "usage: slimtools" in capsys.readouterr().err


@pytest.mark.parametrize(
    "command",
    ["analyze", "report", "bill", "clear", "restore", "proxy", "suggest", "proxy install"],
)
def test_every_command_has_help_with_an_example_and_exit_statuses(command, capsys):
    """--help ends with a runnable example and the meaning of exit statuses."""
    with pytest.raises(SystemExit) as exc:
        main([*command.split(), "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "example" in text
    assert f"  slimtools {command} " in text
    assert "exit status: 0" in text
    assert "2 bad usage" in text


def test_suggest_with_an_unreadable_sample_fails_with_status_1(capsys, tmp_path):
    """A sample file that cannot be read is a file that failed: one line, exit 1."""
    status, _, err = cli(capsys, "suggest", str(tmp_path / "missing.json"))
    assert status == 1
    assert err.startswith(f"slimtools suggest: {tmp_path / 'missing.json'}: cannot read")


def test_the_policy_options_are_one_list_shared_by_the_commands(capsys):
    """analyze, report and clear offer the same ClearingPolicy options."""
    flags = ("--cache", "--keep-turns", "--keep-head", "--clear-at-least")
    flags += ("--payback-horizon", "--max-context-tokens", "--exclude-tool")
    for command in ("analyze", "report", "clear"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        for flag in flags:
            assert flag in text, (command, flag)


def test_named_policies_are_the_documented_presets():
    """turn-end, anthropic, default and none, with the options applied to each."""
    assert build_policy("turn-end", keep_turns=4) == ClearingPolicy(cache=None, keep_turns=4)
    assert build_policy("default", cache="gemini") == ClearingPolicy(cache="gemini")
    assert build_policy("anthropic", keep_head=10) == ClearingPolicy.from_anthropic(keep_head=10)
    assert build_policy("none") is None


def test_bill_slim_shows_both_columns(capsys):
    """--slim 0.1: resident and billed with and without slimming, row by row."""
    status, out, _ = cli(capsys, "bill", "20", "5000", "--slim", "0.1")
    assert status == 0
    lines = table(out, "5,000 tokens a result, slimmed at the source to 500")
    assert row(lines, "20 ") == ["20", "100,000", "10,000", "1,050,000", "105,000"]
    assert row(lines, "5 ") == ["5", "25,000", "2,500", "75,000", "7,500"]


def test_bill_without_slim_is_the_article_table(capsys):
    """Without --slim the table holds the article's four rows."""
    _, out, _ = cli(capsys, "bill", "20", "5000")
    lines = table(out, "5,000 tokens a result, one a round")
    assert row(lines, "20 ") == ["20", "100,000", "1,050,000"]
    assert row(lines, "5 ") == ["5", "25,000", "75,000"]


def test_bill_plot_writes_a_png(capsys, tmp_path):
    """bill --plot: a valid image, with and without slimming drawn."""
    path = tmp_path / "bill.png"
    status, out, _ = cli(capsys, "bill", "40", "5000", "--slim", "0.1", "--plot", str(path))
    assert status == 0
    assert f"wrote {path}" in out
    with Image.open(path) as image:
        assert image.size == (1000, 700)


def test_without_rich_the_tables_are_plain_text(capsys, monkeypatch):
    """Without the cli extra's rich, the same table is drawn with dashes, same content."""
    _, with_rich, _ = cli(capsys, "analyze", str(DATA / "tau_bench"))
    monkeypatch.setitem(sys.modules, "rich", None)
    assert not _output.has_rich()
    status, plain, _ = cli(capsys, "analyze", str(DATA / "tau_bench"))
    assert status == 0
    assert "─" in with_rich
    assert "─" not in plain
    assert "-----" in plain
    for out in (with_rich, plain):
        assert row(table(out, "1 transcript files"), "TOTAL")[1] == "3"


def test_without_matplotlib_plot_names_the_extra(capsys, monkeypatch):
    """--plot without matplotlib: a usage error that says what to install."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(SystemExit) as exc:
        main(["analyze", str(DATA / "tau_bench"), "--plot", "x.png"])
    assert exc.value.code == 2
    assert "pip install 'slimtools[cli]'" in capsys.readouterr().err
    assert main(["analyze", str(DATA / "tau_bench")]) == 0


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_under_no_color(monkeypatch):
    """Colour is on for a terminal, off for a pipe, and off when NO_COLOR is set."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert _output.colour_for(_Terminal())
    assert not _output.colour_for(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not _output.colour_for(_Terminal())


def test_the_progress_bar_draws_only_on_a_terminal(monkeypatch):
    """Piped stderr gets nothing; a terminal gets the bar with the file being read."""
    piped, terminal = io.StringIO(), _Terminal()
    monkeypatch.setattr(sys, "stderr", piped)
    with _output.progress() as bar:
        bar.update(50, 100, "x.jsonl")
    assert piped.getvalue() == ""
    monkeypatch.setattr(sys, "stderr", terminal)
    with _output.progress() as bar:
        bar.update(50, 100, "session.jsonl")
    assert "session.jsonl" in terminal.getvalue()
    monkeypatch.setattr(sys, "stderr", _Terminal())
    with _output.progress(enabled=False) as bar:
        bar.update(50, 100, "x.jsonl")
    assert sys.stderr.getvalue() == ""


def test_coloured_tables_carry_escape_codes_and_plain_ones_none():
    """A ratio below 1 is green on a terminal; piped output has no escape codes."""
    demo = _output.Table("t", ["name", ">ratio"])
    demo.add("default", _output.Cell("0.43x", "good"))
    coloured, plain = _Terminal(), io.StringIO()
    _output.print_tables([demo], coloured, colour=True)
    _output.print_tables([demo], plain, colour=False)
    assert "\x1b[32m" in coloured.getvalue()
    assert "\x1b[" not in plain.getvalue()


@pytest.mark.shared
def test_analyze_of_the_shared_transcripts(capsys):
    """The recorded runs: every recorder is a row, and the total matches the library."""
    folder = shared_data() / "transcripts"
    status, out, err = cli(
        capsys, "analyze", str(folder), "--by", "source", "--compare", "turn-end,default"
    )
    assert (status, err) == (0, "")
    counts = table(out, "68 transcript files, 268 runs")
    for source in ("claude_code", "mini_swe_agent", "openhands", "swe_agent", "tau_bench"):
        assert row(counts, source)[0] == source
    expected = analyze(folder, policies={"turn-end": ClearingPolicy(cache=None)}).total
    savings = savings_table(out)
    total = next(i for i, line in enumerate(savings) if line.startswith("TOTAL"))
    turn_end = savings[total + 1].split()
    assert turn_end[0] == "turn-end"
    assert turn_end[2] == f"{expected.strategies['turn-end'].resident_end:,}"


@pytest.mark.subprocess
def test_analyze_runs_as_a_program(tmp_path):
    """`slimtools analyze` in a shell: tables on stdout, one line per bad file, exit 1."""
    plot = tmp_path / "p.png"
    done = run(
        slimtools(
            "analyze",
            str(DATA / "tau_bench"),
            str(DATA / "malformed" / "latin1.jsonl"),
            "--plot",
            str(plot),
        ),
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    )
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        == f"slimtools: {DATA / 'malformed' / 'latin1.jsonl'}:2: not UTF-8 text (byte 32)"
    )
    assert "\x1b[" not in done.stdout
    assert "TOTAL" in done.stdout
    assert done.stdout.strip().endswith(f"wrote {plot}")
    assert plot.stat().st_size > 10_000


@pytest.mark.subprocess
def test_importing_the_cli_loads_neither_rich_nor_matplotlib():
    """They are imported only when a table or a plot is drawn."""
    probe = "import sys, slimtools.cli; print(sorted({'rich', 'matplotlib'} & set(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "[]"
