"""The CLI explains itself: entry points, version, help for every option, one --by vocabulary,
hints that fit what was passed, plots a reader can use, one-line log records."""

from __future__ import annotations

import argparse
import logging
import sys

import pytest

import slimtools
from slimtools.cli import _output, main, parser
from slimtools.cli._plot import Curve, draw_rounds
from tests._ports import run
from tests.lab.cli_helpers import cli, write_run

MINE = ("analyze", "report", "bill", "clear", "restore", "recall")
"""The commands of this module's owner (proxy and suggest have their own help tests)."""


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.subprocess
def test_python_dash_m_slimtools_runs_the_command():
    """`python -m slimtools bill 5 10` prints the bill and exits 0."""
    done = run([sys.executable, "-m", "slimtools", "bill", "5", "10"])
    assert done.returncode == 0, done.stderr
    assert "billed input" in done.stdout


def test_package_has_a_version_string():
    """slimtools.__version__ is the installed distribution's version."""
    from importlib.metadata import version

    assert slimtools.__version__ == version("slimtools")


def test_version_option_prints_the_version(capsys):
    """`slimtools --version` prints the program name and version and exits 0."""
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"slimtools {slimtools.__version__}"


@pytest.mark.parametrize("command", MINE)
def test_every_option_has_help_with_an_example(command):
    """Every option that takes a value says what it does and gives an example (e.g. ...)."""
    missing = [
        action.option_strings[0]
        for action in _subparsers()[command]._actions
        if action.option_strings
        and not isinstance(action, argparse._HelpAction)
        and action.nargs != 0
        and "e.g." not in (action.help or "")
    ]
    assert missing == []


@pytest.mark.parametrize("command", MINE)
def test_every_positional_argument_has_help(command):
    """Positional arguments (bill's ROUNDS and PER_RESULT among them) are described."""
    bare = [
        action.dest
        for action in _subparsers()[command]._actions
        if not action.option_strings and not action.help
    ]
    assert bare == []


@pytest.mark.parametrize("command", MINE)
def test_every_command_help_ends_with_examples_and_exit_statuses(command, capsys):
    """--help shows a `slimtools COMMAND` example and each exit status, unwrapped."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert f"\n  slimtools {command} " in text
    status = text[text.index("exit status: 0") :].split("\n\n")[0]
    assert status.rstrip().endswith("2 bad usage")


@pytest.mark.parametrize(
    "option", ["--repeats", "--rounds", "--target", "--seed", "--max-steps", "--keep-heads"]
)
def test_recall_help_describes_each_episode_option(option, capsys):
    """The recall options that had no help now show a sentence with their default."""
    with pytest.raises(SystemExit):
        main(["recall", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    after = text.split(f" {option} ", 1)[1]
    assert "default" in after.split(" --", 1)[0]


@pytest.mark.parametrize("command", ["analyze", "report"])
def test_by_file_and_source_are_spelled_alike_in_analyze_and_report(command):
    """analyze and report both group with --by file|source (analyze adds tool)."""
    by = next(a for a in _subparsers()[command]._actions if a.dest == "by")
    assert by.choices is not None
    assert {"file", "source"} <= set(by.choices)
    assert by.default == "file"


def test_report_by_transcript_still_works_with_a_deprecation_note(capsys, tmp_path):
    """The old `report --by transcript` spelling groups by file and says to use `file`."""
    write_run(tmp_path, chars=20_000)
    status, out, err = cli(capsys, "report", str(tmp_path), "--by", "transcript")
    assert status == 0
    assert str(tmp_path / "run.traj") not in out  # one file: the total alone
    assert "TOTAL " in out
    assert "--by transcript is deprecated" in err
    assert "--by file" in err


def test_report_by_file_groups_by_the_file(capsys, tmp_path):
    """`report --by file` prints a block per file when there are several."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    write_run(tmp_path / "a", chars=20_000)
    write_run(tmp_path / "b", rounds=4, chars=20_000)
    status, out, err = cli(capsys, "report", str(tmp_path), "--by", "file")
    assert (status, err) == (0, "")
    assert f"{tmp_path / 'a' / 'run.traj'} " in out
    assert f"{tmp_path / 'b' / 'run.traj'} " in out


def test_analyze_by_transcript_is_the_deprecated_spelling_of_file(capsys, tmp_path):
    """analyze accepts the old spelling too, as file."""
    write_run(tmp_path, chars=20_000)
    status, out, err = cli(capsys, "analyze", str(tmp_path), "--by", "transcript")
    assert status == 0
    assert "deprecated" in err
    assert str(tmp_path / "run.traj") in out


def test_report_hint_advises_a_smaller_horizon(capsys, tmp_path):
    """When the default cost more, the hint suggests a smaller --payback-horizon."""
    write_run(tmp_path, chars=20_000)
    status, out, _ = cli(capsys, "report", str(tmp_path))
    assert status == 0
    assert "--payback-horizon" in out


def _figure(rounds: int = 40):
    plain = Curve("no slimming", [5_000 * r for r in range(1, rounds + 1)], [5e3] * rounds)
    slim = Curve("slimmed x0.1", [500 * r for r in range(1, rounds + 1)], [5e2] * rounds)
    return draw_rounds([plain, slim], title="bill", billed_label="billed")


@pytest.mark.parametrize("rounds", [10, 40, 7])
def test_plot_round_ticks_are_whole_numbers(rounds):
    """The shared round axis never shows 2.5 or 7.5: every visible tick is an integer."""
    import matplotlib.pyplot as plt

    figure = _figure(rounds)
    try:
        axis = figure.axes[1]
        low, high = axis.get_xlim()
        ticks = [t for t in axis.get_xticks() if low <= t <= high]
        assert ticks
        assert all(float(t).is_integer() for t in ticks)
    finally:
        plt.close(figure)


def test_plot_legend_sits_outside_both_panels():
    """The legend's box overlaps neither panel, so no line (40 rounds included) is hidden."""
    import matplotlib.pyplot as plt

    figure = _figure(40)
    try:
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        legend = figure.axes[0].get_legend().get_window_extent(renderer)
        for axis in figure.axes:
            assert not legend.overlaps(axis.get_window_extent(renderer))
    finally:
        plt.close(figure)


def test_one_line_logging_prints_a_failed_call_without_traceback():
    """A logged exception is one line on stderr: logger, level, message, exception type."""
    stream = _Stream()
    handler = _output.setup_logging(stream=stream)
    try:
        try:
            raise RuntimeError("upstream closed\nsecond line")
        except RuntimeError:
            logging.getLogger("mcp.server").exception("Tool %r raised", "search")
    finally:
        logging.getLogger().removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert lines == ["mcp.server: error: Tool 'search' raised: RuntimeError: upstream closed"]


def test_verbose_logging_keeps_the_traceback():
    """With verbose, the traceback is there for whoever asked."""
    stream = _Stream()
    handler = _output.setup_logging(verbose=True, stream=stream)
    try:
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            logging.getLogger("mcp.server").exception("Tool failed")
    finally:
        logging.getLogger().removeHandler(handler)
    assert "Traceback (most recent call last)" in stream.getvalue()


def test_setup_logging_stops_the_mcp_server_installing_rich_tracebacks():
    """After setup_logging, MCP's configure_logging finds a handler and adds no RichHandler."""
    pytest.importorskip("mcp")
    from mcp.server.mcpserver.utilities.logging import configure_logging

    handler = _output.setup_logging(stream=_Stream())
    try:
        configure_logging("INFO")
        kinds = [type(h).__name__ for h in logging.getLogger().handlers]
    finally:
        logging.getLogger().removeHandler(handler)
    assert kinds == ["StreamHandler"]


class _Stream:
    """A text sink that is not a terminal (a log file, a pipe)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def getvalue(self) -> str:
        return "".join(self.parts)


def test_an_unforeseen_error_is_one_line_without_verbose(capsys, monkeypatch):
    """A command that fails unexpectedly prints one line naming the error, exit 1."""
    from slimtools.cli import report

    def broken(rows, per_result, every=5):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(report, "tool_result_bill", broken)
    status, _, err = cli(capsys, "bill", "5", "10")
    assert status == 1
    assert err == "slimtools bill: RuntimeError: disk on fire (--verbose shows where)\n"


def test_verbose_lets_an_unforeseen_error_keep_its_traceback(monkeypatch):
    """With --verbose the exception propagates, traceback and all."""
    from slimtools.cli import report

    def broken(rows, per_result, every=5):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(report, "tool_result_bill", broken)
    with pytest.raises(RuntimeError, match="disk on fire"):
        main(["bill", "5", "10", "--verbose"])


@pytest.mark.parametrize("command", [*MINE, "proxy", "suggest"])
def test_every_command_takes_verbose(command):
    """--verbose is spelled the same on every command."""
    assert "--verbose" in _subparsers()[command]._option_string_actions


@pytest.mark.parametrize("slim", [[], ["--slim", "0.1"]])
def test_bill_always_ends_with_the_last_round(capsys, slim):
    """`bill 7 5000` shows round 5 (every 5) and round 7, the run's end."""
    status, out, _ = cli(capsys, "bill", "7", "5000", *slim)
    assert status == 0
    rounds = [line.split()[0] for line in out.splitlines()[3:]]
    assert rounds == ["5", "7"]
    assert out.splitlines()[-1].split()[1] == "35,000"
