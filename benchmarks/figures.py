"""Console output quoted in the docs, regenerated from runs so it never goes stale.

A ``console`` block right after the marker ``<!-- docs-figure: run -->`` starts with one
``$ COMMAND`` line (run from the repository root; ``slimtools`` and ``python`` mean this
interpreter) and goes on with what the command prints. ``python -m benchmarks.figures``
(also run at the end of ``python -m benchmarks``) re-runs every such command and writes its
output into the page; ``tests/project/test_docs_figures.py`` re-runs them and compares.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests._ports import run as run_command

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MARKER = "<!-- docs-figure: run -->"
PLOTS = (
    "slimtools analyze ../shared/data/transcripts --by source --compare turn-end,default "
    "--plot docs/analyze.png",
)
"""Commands that redraw the docs' pictures (run by ``main``, not compared by the test)."""
REPORT = (
    "slimtools analyze ../shared/data/transcripts/claude_code --html .cache/analyze-report.html",
    ROOT / ".cache" / "analyze-report.html",
    DOCS / "analyze-report.png",
)
"""The HTML report the measure guide shows: the command, the page it writes, its picture."""
_BLOCK = re.compile(
    re.escape(MARKER) + r"\n```console\n\$ (?P<command>[^\n]*)\n(?P<output>.*?)```\n", re.S
)


@dataclass(frozen=True)
class Figure:
    """One quoted run: the page, the command as shown and the output the page shows."""

    page: Path
    command: str
    output: str


def figures(page: Path) -> list[Figure]:
    """The quoted runs of one page, in order."""
    text = page.read_text(encoding="utf-8")
    return [Figure(page, m["command"], m["output"]) for m in _BLOCK.finditer(text)]


def argv(command: str) -> list[str]:
    """The command line to run for a shown command (``slimtools`` and ``python`` made exact)."""
    words = shlex.split(command)
    out: list[str] = []
    for word in words:
        if word == "slimtools":
            out += [sys.executable, "-m", "slimtools.cli"]
        elif word == "python":
            out.append(sys.executable)
        else:
            out.append(word)
    return out


def run(command: str, *, timeout: float = 120) -> str:
    """What ``command`` prints on stdout, run from the repository root, plain (no terminal)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100", "NO_COLOR": "1"}
    done = run_command(argv(command), env=env, cwd=ROOT, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{command!r} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout if done.stdout.endswith("\n") else done.stdout + "\n"


def refresh(page: Path) -> int:
    """Re-run every quoted command of ``page`` and write the outputs back; how many changed."""
    text = page.read_text(encoding="utf-8")
    changed = 0

    def fresh(match: re.Match[str]) -> str:
        nonlocal changed
        output = run(match["command"])
        changed += output != match["output"]
        return f"{MARKER}\n```console\n$ {match['command']}\n{output}```\n"

    new = _BLOCK.sub(fresh, text)
    if new != text:
        page.write_text(new, encoding="utf-8")
    return changed


def pages() -> list[Path]:
    """The docs pages (and the README) that quote runs."""
    found = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    return [p for p in found if p.is_file() and MARKER in p.read_text(encoding="utf-8")]


def main(argv_: Sequence[str] = ()) -> None:
    """``python -m benchmarks.figures``: refresh the quoted runs of every page (or those named)."""
    for page in [Path(a) for a in argv_] or pages():
        print(f"{page.relative_to(ROOT) if page.is_absolute() else page}: {refresh(page)} changed")
    if not argv_:
        for command in PLOTS:
            run(command)
        report_picture()


def report_picture() -> None:
    """Write the measure guide's report and take its picture in headless Chromium."""
    from tests._browser import screenshot  # only here: it needs pytest and Chromium

    command, page, picture = REPORT
    page.parent.mkdir(exist_ok=True)
    run(command)
    screenshot(page, picture, width=1300, height=1500)


if __name__ == "__main__":
    main(sys.argv[1:])
