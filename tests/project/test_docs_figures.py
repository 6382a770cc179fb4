"""Console output the docs quote is what the commands print today (python -m benchmarks.figures)."""

from __future__ import annotations

import pytest

from benchmarks import figures
from tests._shared import shared_data

QUOTED = [f for page in figures.pages() for f in figures.figures(page)]


def test_the_docs_quote_runs():
    """The guides and the README quote the analyze run, the proxy dry run and the example."""
    commands = " ".join(f.command for f in QUOTED)
    for needle in ("slimtools analyze", "--dry-run", "examples/log_search.py", "slimtools bill"):
        assert needle in commands


@pytest.mark.shared
@pytest.mark.subprocess
@pytest.mark.parametrize("figure", QUOTED, ids=lambda f: f"{f.page.name}:{f.command[:40]}")
def test_a_quoted_run_prints_what_the_page_shows(figure):
    """Re-running the command prints exactly the page's output (python -m benchmarks.figures)."""
    shared_data()
    assert figures.run(figure.command) == figure.output, (
        f"{figure.page.name} quotes stale output of {figure.command!r}: "
        "run python -m benchmarks.figures"
    )


def test_a_failing_command_names_itself(tmp_path):
    """A quoted command that fails raises with the command and its stderr."""
    with pytest.raises(RuntimeError, match="slimtools nope"):
        figures.run("slimtools nope")


def test_refresh_writes_the_output_after_the_command(tmp_path):
    """refresh() puts what the command prints under it and counts the change."""
    page = tmp_path / "p.md"
    page.write_text(f"x\n{figures.MARKER}\n```console\n$ python -c 'print(41 + 1)'\nold\n```\n")
    assert figures.refresh(page) == 1
    assert "$ python -c 'print(41 + 1)'\n42\n```" in page.read_text()
    assert figures.refresh(page) == 0
