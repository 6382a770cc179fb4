"""A real Python-repr server behind the proxy: ``mcp-server-sqlite`` from PyPI.

It answers ``read_query`` with ``str()`` of a list of dicts (``[{'id': 1, ...}]``), floats
``inf`` and ``nan`` included. It needs ``mcp<2``, so it lives in its own venv,
``.cache/sqlite-venv`` (git-ignored; ``.ci/run`` installs it). Without it the tests skip,
unless ``CI`` is set, where they fail.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.proxy.proxy_fixtures import envelope, text_of

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".cache" / "sqlite-venv" / "bin" / "mcp-server-sqlite"
EMAIL = "SECRET-email-123456789@example.io"
CONFIG = """
[tools.read_query]
fields = ["id", "name"]
deny = ["email"]
key = "id"
limit = 2
"""


@pytest.fixture(scope="session")
def sqlite_server() -> str:
    """The server's executable, or a skip (a failure under CI) when it is not installed."""
    if not SERVER.exists():
        reason = f"mcp-server-sqlite is not installed at {SERVER} (see .ci/run)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return str(SERVER)


@asynccontextmanager
async def through_proxy(server: str, tmp_path: Path) -> AsyncIterator[Client]:
    config = tmp_path / "slim.toml"
    config.write_text(CONFIG)
    db = tmp_path / "t.db"
    args = ["-m", "slimtools.cli", "proxy", "--config", str(config), "--", server]
    params = StdioServerParameters(
        command=sys.executable, args=[*args, "--db-path", str(db)], cwd=str(ROOT)
    )
    with anyio.fail_after(90):
        async with Client(params) as client:
            create = "CREATE TABLE u (id INTEGER, name TEXT, email TEXT, note TEXT, score REAL)"
            await client.call_tool("write_query", {"query": create})
            rows = ", ".join(
                f"({i}, 'n{i}', '{EMAIL}', 'mail {EMAIL} ok', {score})"
                for i, score in ((1, "1e999"), (2, "-1e999"), (3, "0.5"))
            )
            await client.call_tool("write_query", {"query": f"INSERT INTO u VALUES {rows}"})
            yield client


async def test_read_query_reprs_are_projected_with_deny(sqlite_server, tmp_path):
    """``SELECT *`` (a repr holding ``inf``) shows allowlisted briefs, never the e-mail."""
    async with through_proxy(sqlite_server, tmp_path) as client:
        page1 = await client.call_tool("read_query", {"query": "SELECT * FROM u"})
        page2 = await client.call_tool("read_query", {"query": "SELECT * FROM u", "page": 2})
        record = await client.call_tool("get_record", {"handle": 1})
    assert envelope(page1)["briefs"] == [{"id": 1, "name": "n1"}, {"id": 2, "name": "n2"}]
    assert envelope(page2)["briefs"] == [{"id": 3, "name": "n3"}]
    full = json.loads(text_of(record))
    assert full["id"] == 1
    assert "email" not in full
    for result in (page1, page2, record):
        assert EMAIL not in text_of(result)
        assert EMAIL not in json.dumps(result.structured_content or {})
