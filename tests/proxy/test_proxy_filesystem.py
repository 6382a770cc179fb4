"""A real public server behind the proxy: ``@modelcontextprotocol/server-filesystem`` from npm.

Its results arrive as text in ``content`` with a ``{"content": "..."}`` structuredContent
wrapper and an output schema, as many real servers send them. The package is installed into
``.cache/npm`` (git-ignored) on first use; without node and npm the tests skip, unless
``SLIMTOOLS_REQUIRE_SHARED=1`` (CI), where they fail.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from slimtools.tokens import count_tokens
from tests.proxy.npm_servers import npm_server
from tests.proxy.proxy_fixtures import envelope, text_of

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "@modelcontextprotocol/server-filesystem"


@pytest.fixture(scope="session")
def filesystem_server() -> str:
    """The installed server's executable (installed with npm on first use)."""
    return npm_server(PACKAGE, "mcp-server-filesystem")


@pytest.fixture
def tree(tmp_path) -> Path:
    """A directory of 60 folders of 60 files each, and a 6,000-line text file."""
    for i in range(60):
        folder = tmp_path / f"folder_{i:02d}"
        folder.mkdir()
        for j in range(60):
            (folder / f"file_{j:02d}.txt").write_text("x\n")
    (tmp_path / "long.txt").write_text("".join(f"line number {n}\n" for n in range(1, 6001)))
    return tmp_path


@asynccontextmanager
async def through_proxy(server: str, root: Path, *options: str) -> AsyncIterator[Client]:
    args = ["-m", "slimtools.cli", "proxy", *options, "--", server, str(root)]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT))
    with anyio.fail_after(90):
        async with Client(params) as client:
            yield client


async def test_unconfigured_tools_fit_the_global_budget(filesystem_server, tree):
    """directory_tree becomes automatic briefs, a long read_text_file pages within budget."""
    async with through_proxy(filesystem_server, tree) as client:
        tree_result = await client.call_tool("directory_tree", {"path": str(tree)})
        text_result = await client.call_tool("read_text_file", {"path": str(tree / "long.txt")})
        next_page = await client.call_tool(
            "read_text_file", {"path": str(tree / "long.txt"), "page": 2}
        )
    folders = envelope(tree_result)
    assert folders["total"] == 61
    assert count_tokens(text_of(tree_result)) <= 20_000
    assert folders["briefs"][0]["name"] == "folder_00"
    assert folders["briefs"][0]["type"] == "directory"  # automatic briefs keep short kinds
    assert "41 more: directory_tree(" in folders["hint"]
    lines = envelope(text_result)
    assert lines["total"] == 6000
    assert lines["text"].startswith("line number 1\n")
    last = int(lines["text"].rsplit("line number ", 1)[1])
    assert envelope(next_page)["text"].startswith(f"line number {last + 1}\n")


async def test_a_small_result_passes_through_with_its_structured_wrapper(filesystem_server, tree):
    """Under the budget the server's own result, wrapper included, reaches the client."""
    async with through_proxy(filesystem_server, tree) as client:
        result = await client.call_tool("list_allowed_directories", {})
    assert result.structured_content is not None
    assert "total" not in result.structured_content
    assert str(tree.resolve()) in text_of(result)


async def test_a_config_slims_the_real_servers_results(filesystem_server, tree, tmp_path_factory):
    """With a config, the tree shows folder names and child names, 10 a page, far smaller."""
    config = tmp_path_factory.mktemp("cfg") / "slim.toml"
    config.write_text(
        "[tools.directory_tree]\n"
        'fields = ["name", "type", "children.name"]\n'
        'key = "name"\nlimit = 10\n'
        "[tools.read_text_file]\nlimit = 50\n"
    )
    async with through_proxy(filesystem_server, tree, "--config", str(config)) as client:
        slim = await client.call_tool("directory_tree", {"path": str(tree)})
        record = await client.call_tool("get_record", {"handle": "folder_03"})
        text = await client.call_tool("read_text_file", {"path": str(tree / "long.txt")})
    folders = envelope(slim)
    assert [b["name"] for b in folders["briefs"]][:2] == ["folder_00", "folder_01"]
    assert folders["briefs"][0]["children"][0] == {"name": "file_00.txt"}
    assert len(folders["briefs"]) == 10
    full = json.loads(text_of(record))
    assert len(full["children"]) == 60
    raw_tokens = count_tokens(json.dumps(full)) * 61
    assert count_tokens(text_of(slim)) * 2 < raw_tokens
    assert envelope(text)["text"].count("\n") == 50
