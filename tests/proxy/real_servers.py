"""Real MCP servers behind the proxy: a synthetic git repository, a SQLite database, hints.

``mcp-server-git`` comes with the dev extras; ``mcp-server-sqlite`` needs ``mcp<2``, so it
lives in its own venv, ``.cache/sqlite-venv`` (``.ci/run`` installs it). Without one, its
tests skip, unless ``CI`` is set, where they fail.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.core_helpers import calls_in
from tests.proxy.proxy_fixtures import envelope, text_of

ROOT = Path(__file__).resolve().parents[2]
SQLITE_SERVER = ROOT / ".cache" / "sqlite-venv" / "bin" / "mcp-server-sqlite"


def require(found: bool, reason: str) -> None:
    """Skip with ``reason`` when ``found`` is false, or fail under CI."""
    if not found:
        if os.environ.get("CI"):
            pytest.fail(reason + " (CI must provide it: see .ci/run)")
        pytest.skip(reason)


def git_repository(path: Path, commits: int = 300) -> Path:
    """A repository of ``commits`` commits with big diffs and a CRLF file, via git fast-import."""
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    stream: list[bytes] = []
    for n in range(1, commits + 1):
        body = "".join(f"line {i} of revision {n}: {'é日😀' * (n % 3)}\n" for i in range(n * 10))
        crlf = "".join(f"rem step {i}\r\n" for i in range(n % 50))
        files = {"src/big.txt": body, "make.bat": crlf, f"notes/{n % 40}.md": f"# {n}\n" * n}
        message = f"Revision {n}\n\n" + f"Changes {n * 10} lines of src/big.txt. " * 12 + "\n"
        stream.append(
            f"commit refs/heads/main\nmark :{n}\n"
            f"committer Dev <dev@example.com> {1_700_000_000 + n * 60} +0000\n".encode()
        )
        stream.append(b"data %d\n%s\n" % (len(message.encode()), message.encode()))
        if n > 1:
            stream.append(b"from :%d\n" % (n - 1))
        for name, text in files.items():
            data = text.encode()
            stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (name.encode(), len(data), data))
        stream.append(b"\n")
    subprocess.run(
        ["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(stream), check=True
    )
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "-f", "main"], check=True)
    subprocess.run(["git", "-C", str(path), "tag", "start", "main~" + str(commits - 1)], check=True)
    return path


def notes_database(path: Path, rows: int = 5_000, words: int = 55) -> Path:
    """A table ``notes`` of ``rows`` rows with long texts (quotes, newlines, emoji) and emails."""
    vocabulary = ["alpha", "'quoted'", '"dq"', "café", "日本語", "😀", "back\\slash", "a\nb"]
    con = sqlite3.connect(path)
    con.execute("create table notes (id integer primary key, title text, email text, body text)")
    con.executemany(
        "insert into notes values (?, ?, ?, ?)",
        (
            (
                i,
                f"note {i}",
                f"user{i}@example.com",
                " ".join(vocabulary[(i + j) % 8] for j in range(words)),
            )
            for i in range(1, rows + 1)
        ),
    )
    con.commit()
    con.close()
    return path


@asynccontextmanager
async def connected(command: Sequence[str], *proxy_options: str) -> AsyncIterator[Client]:
    """A client of ``command`` through ``slimtools proxy`` (or directly, when ``proxy_options``
    is ``("--direct",)``)."""
    if proxy_options == ("--direct",):
        params = StdioServerParameters(command=command[0], args=list(command[1:]))
    else:
        args = ["-m", "slimtools.cli", "proxy", *proxy_options, "--", *command]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT), env=env)
    with anyio.fail_after(240):
        async with Client(params) as client:
            yield client


async def follow(client: Client, tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Page 1 of ``tool`` and every page its hints lead to (calls that set ``page``)."""
    pages = [envelope(await client.call_tool(tool, arguments))]
    while nxt := [c for c in calls_in(pages[-1]["hint"], tool) if "page" in c]:
        pages.append(envelope(await client.call_tool(tool, nxt[0])))
        assert len(pages) < 1_000, "paging does not end"
    return pages


async def record_pages(client: Client, handle: str, count: int) -> list[str]:
    """The texts of pages 1..count of a text handle, read by ``get_record``."""
    calls = [{"handle": handle, "page": page} for page in range(1, count + 1)]
    answers = [await client.call_tool("get_record", call) for call in calls]
    assert not any(answer.is_error for answer in answers)
    return [json.loads(text_of(answer))["text"] for answer in answers]
