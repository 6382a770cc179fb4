"""``mcp-server-git`` behind a proxy with no config, on a repository of 300 commits.

Every text result past the budget pages at a few thousand tokens, never collapsing, and
joining the pages (by the hints, or by ``get_record``) gives the direct call's text exactly,
CRLF lines included. The repository is built with ``git fast-import`` in a tmp dir.
"""

from __future__ import annotations

import shutil
import sys

import pytest

from slimtools.tokens import count_tokens
from tests.proxy.proxy_fixtures import text_of
from tests.proxy.real_servers import connected, follow, git_repository, record_pages, require

pytestmark = pytest.mark.subprocess


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> str:
    """The synthetic repository's path (git and mcp-server-git are required)."""
    require(shutil.which("git") is not None, "git is needed for the mcp-server-git tests")
    try:
        import mcp_server_git  # noqa: F401  (only its presence is checked)
    except ImportError:
        require(False, "mcp-server-git is not installed (the dev extras have it)")
    return str(git_repository(tmp_path_factory.mktemp("git") / "repo"))


def _server(repo: str) -> list[str]:
    return [sys.executable, "-m", "mcp_server_git", "--repository", repo]


async def _direct(repo: str, tool: str, arguments: dict) -> str:
    async with connected(_server(repo), "--direct") as client:
        return text_of(await client.call_tool(tool, arguments))


CALLS = {
    "git_log": {"max_count": 300},
    "git_diff": {"target": "start"},
    "git_show": {"revision": "main"},
}


@pytest.mark.parametrize("tool", sorted(CALLS))
async def test_joined_pages_by_the_hints_are_the_direct_text_exactly(repo, tool):
    """Following every hint of git_log, git_diff and git_show gives the direct text exactly."""
    arguments = {"repo_path": repo, **CALLS[tool]}
    raw = await _direct(repo, tool, arguments)
    async with connected(_server(repo)) as client:
        pages = await follow(client, tool, arguments)
    assert len(pages) > 3
    assert "".join(p["text"] for p in pages) == raw


async def test_a_big_diff_comes_back_exactly_by_get_record(repo):
    """The handle's pages, read by get_record, join to the direct git_diff (CRLF kept)."""
    arguments = {"repo_path": repo, "target": "start"}
    raw = await _direct(repo, "git_diff", arguments)
    async with connected(_server(repo)) as client:
        pages = await follow(client, "git_diff", arguments)
        texts = await record_pages(client, pages[0]["handle"], len(pages))
    assert "\r\n" in raw
    assert "".join(texts) == raw


async def test_pages_hold_a_few_thousand_tokens_and_page_one_is_far_smaller(repo):
    """git_show's pages stay near 4,000 tokens to the end (no collapse); page 1 is 5x smaller."""
    arguments = {"repo_path": repo, "revision": "main"}
    raw = await _direct(repo, "git_show", arguments)
    async with connected(_server(repo)) as client:
        pages = await follow(client, "git_show", arguments)
    sizes = [count_tokens(p["text"]) for p in pages]
    assert all(2_500 <= size <= 4_000 for size in sizes[:-1])
    assert count_tokens(raw) >= 5 * sizes[0]
