"""The fenced code blocks of the docs' Markdown pages, as ``test_docs.py`` runs them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SKIP = "<!-- docs-test: skip -->"
"""On the line before a fence: the block is shown but not run (it needs a key, a server)."""

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)")


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, the line of its first code line, language, code."""

    page: Path
    line: int
    language: str
    code: str
    skipped: bool


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page`` at top level (blocks shown inside a longer fence,
    as a page about writing docs shows them, are its text, not blocks)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, ticks = opening["indent"], opening["ticks"]
        end = i + 1
        while end < len(lines) and not _closes(lines[end], ticks):
            end += 1
        body = [
            line[len(indent) :] if line.startswith(indent) else line for line in lines[i + 1 : end]
        ]
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        found.append(
            Block(page, i + 2, opening["info"].lower(), "\n".join(body) + "\n", before == SKIP)
        )
        i = end + 1
    return found


def _closes(line: str, ticks: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(ticks[0] * len(ticks)) and not stripped.lstrip(ticks[0])


def python_blocks(page: Path) -> list[Block]:
    """The ``python`` (or ``py``) blocks of a page, in order."""
    return [b for b in blocks(page) if b.language in ("python", "py", "python3")]


def run_page(page: Path) -> int:
    """Run a page's Python blocks in order in one namespace; returns how many ran.

    Raises:
        Whatever a block raises, its traceback pointing at the page and line.
    """
    namespace: dict[str, object] = {"__name__": f"docs.{page.stem}"}
    ran = 0
    for block in python_blocks(page):
        if block.skipped:
            continue
        source = "\n" * (block.line - 1) + block.code  # tracebacks give the page's line numbers
        exec(compile(source, str(page), "exec"), namespace)
        ran += 1
    return ran
