"""The docs cannot drift: the CLI page is what the parsers print, every Python block of
``docs/*.md`` runs, and pages still being written drop out of the nav instead of breaking it."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from slimtools.cli import _reference
from tests.project.docs_blocks import SKIP, blocks, python_blocks, run_page

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


def test_cli_reference_page_is_current():
    """docs/cli.md is what `python -m slimtools.cli._reference` renders now (make docs-cli)."""
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    made_with = re.search(r"with\s+Python (\d+\.\d+)", page)
    assert made_with is not None, "docs/cli.md does not say which Python rendered it"
    if made_with[1] != _reference.python_version():
        pytest.skip(f"argparse lays help out differently on {_reference.python_version()}")
    assert page == _reference.render(), "docs/cli.md is out of date: run make docs-cli"


def test_cli_reference_has_a_section_for_every_command():
    """Each subcommand (and proxy install) has its heading and its help."""
    page = _reference.render()
    for words in _reference.commands():
        title = " ".join(("slimtools", *words))
        assert f"## `{title}`" in page
        assert f"usage: {title} " in page


def test_cli_reference_does_not_depend_on_the_terminal_width(monkeypatch):
    """A narrow terminal renders the same page."""
    wide = _reference.render()
    monkeypatch.setenv("COLUMNS", "40")
    assert _reference.render() == wide


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=lambda p: p.name)
def test_docs_python_blocks_run(page, tmp_path, monkeypatch):
    """A page's Python blocks run in order, in a scratch folder, without raising."""
    monkeypatch.chdir(tmp_path)
    runnable = [b for b in python_blocks(page) if not b.skipped]
    assert run_page(page) == len(runnable)


def test_the_docs_have_python_blocks_to_run():
    """The collector finds blocks to run (an index page without one would hide a bug here)."""
    assert python_blocks(DOCS / "index.md")


def test_a_failing_block_names_its_page_and_line(tmp_path):
    """A renamed API fails the test with the page and line of the block."""
    page = tmp_path / "guide.md"
    page.write_text("# Guide\n\n```python\nfrom slimtools import clear_everything\n```\n")
    with pytest.raises(ImportError) as exc:
        run_page(page)
    frame = exc.traceback[-1]
    assert (Path(frame.path).name, frame.lineno + 1) == ("guide.md", 4)


def test_the_skip_marker_opts_a_block_out(tmp_path):
    """A block right after the marker is shown but not run; the next one runs."""
    page = tmp_path / "keys.md"
    page.write_text(
        f"{SKIP}\n```python\nraise RuntimeError('needs a key')\n```\n\n```python\nx = 1\n```\n"
    )
    first, second = python_blocks(page)
    assert (first.skipped, second.skipped) == (True, False)
    assert run_page(page) == 1


def test_blocks_shown_inside_a_longer_fence_are_text(tmp_path):
    """A ```python example inside a ````markdown block is not a block of its own."""
    page = tmp_path / "meta.md"
    page.write_text("````markdown\n```python\nraise SystemExit\n```\n````\n")
    (only,) = blocks(page)
    assert only.language == "markdown"
    assert python_blocks(page) == []


def test_blocks_of_a_page_share_one_namespace(tmp_path):
    """A later block may use what an earlier one defined."""
    page = tmp_path / "steps.md"
    page.write_text("```python\nx = 2\n```\ntext\n```py\nassert x * 2 == 4\n```\n")
    assert run_page(page) == 2


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "_hooks.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_nav_drops_optional_pages_that_do_not_exist(tmp_path):
    """An optional page without its file leaves the nav; one that exists stays."""
    (tmp_path / "index.md").write_text("# Home\n")
    (tmp_path / "clearing.md").write_text("# Clearing\n")
    nav = [
        {"Home": "index.md"},
        {"Guides": [{"Clear": "clearing.md"}, {"Proxy": "proxy.md"}]},
        {"More": [{"Gateway": "gateway.md"}]},
    ]
    config = _hooks().on_config({"docs_dir": str(tmp_path), "nav": nav})
    assert config["nav"] == [{"Home": "index.md"}, {"Guides": [{"Clear": "clearing.md"}]}]


def test_nav_keeps_missing_pages_that_are_not_optional(tmp_path):
    """A required page that is missing stays in the nav, so the strict build reports it."""
    config = _hooks().on_config({"docs_dir": str(tmp_path), "nav": [{"CLI": "cli.md"}]})
    assert config["nav"] == [{"CLI": "cli.md"}]


def test_links_to_missing_optional_pages_become_text(tmp_path):
    """A link to an optional page not written yet shows its text; other links stay."""
    (tmp_path / "proxy.md").write_text("# Proxy\n")
    page = "[gw](gateway.md#recipes), [px](proxy.md), [cli](cli.md), [x](https://a.b/gateway.md)"
    out = _hooks().unlink_missing(page, tmp_path)
    assert out == "gw, [px](proxy.md), [cli](cli.md), [x](https://a.b/gateway.md)"


def test_every_guide_is_in_the_nav():
    """Each page under docs/ (but the benchmark results) is listed in mkdocs.yml's nav."""
    nav = (DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8").partition("\nnav:\n")[2]
    for page in DOCS.glob("*.md"):
        assert f": {page.name}" in nav, page.name


def _command_lines() -> list[tuple[str, int, str]]:
    """Every ``slimtools …`` line of a shell block in the docs and the README."""
    found = []
    for page in [*PAGES, DOCS.parent / "README.md"]:
        for block in blocks(page):
            if block.language not in ("sh", "bash", "shell", "console"):
                continue
            joined = block.code.replace("\\\n", " ")  # continued lines as one
            for offset, line in enumerate(joined.splitlines()):
                command = line.split(" #")[0].strip().removeprefix("$ ").removesuffix("&")
                if command.startswith("slimtools ") and "<" not in command:
                    found.append((page.name, block.line + offset, command.strip()))
    return found


@pytest.mark.parametrize(("page", "line", "command"), _command_lines())
def test_every_command_the_docs_show_parses(page: str, line: int, command: str) -> None:
    """A ``slimtools`` command a page shows names only commands and options that exist."""
    import shlex

    from slimtools.cli import parser

    words = shlex.split(command)[1:]
    try:
        parser().parse_args(words)
    except SystemExit as exc:
        pytest.fail(f"{page}:{line}: `{command}` does not parse (exit {exc.code})")
