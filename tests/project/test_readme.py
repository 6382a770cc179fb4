"""The README stays a front door: short, set-up commands first, its example as it runs."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_is_at_most_200_lines():
    """Reference material lives in docs/, not in the README."""
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_the_first_commands_are_make_demo_and_make_test():
    """The first code block is the two set-up commands, exactly."""
    text = README.read_text(encoding="utf-8")
    first = re.search(r"```\w*\n(.*?)```", text, re.S)
    assert first is not None
    commands = [line.split("#")[0].strip() for line in first[1].splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]


def test_the_readme_example_is_the_demo_s_code():
    """The decorated tool in the README is examples/log_search.py's, line for line."""
    text = README.read_text(encoding="utf-8")
    example = (README.parent / "examples" / "log_search.py").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S)
    assert block is not None
    for line in ('@kit.tool(category="search")', "@paginate(limit=3)", "@project_fields(LogBrief)"):
        assert line in block[1]
        assert line in example


def test_every_readme_link_into_docs_exists():
    """Links to docs pages point at files that exist (or optional pages still being written)."""
    text = README.read_text(encoding="utf-8")
    optional = {"gateway.md", "proxy.md", "proxy-paging.md", "clearing.md", "ledger.md"}
    for target in re.findall(r"\]\(((?:docs/)?[\w./-]+\.md)", text):
        path = README.parent / target
        assert path.is_file() or path.name in optional, target
