"""The proxy with no config, on recorded and real server results.

Per result: raw tokens against page 1 through a proxy with no config (automatic briefs for
record results past 2,000 tokens, 4,000-token pages for the rest), the pages a reader
follows, and whether every record (by ``get_record``) and every byte of text (by joining the
pages) was reached by following the hints. Sources: the recorded GitHub responses in
``../shared/data/payloads`` past the threshold, a loghub log, and two real servers from npm
(``server-memory`` with a 1,620-entity graph, ``server-filesystem`` on a generated tree),
skipped when node or the packages are missing (``npm install --prefix .cache/npm ...``);
``mcp-server-git`` on a 300-commit synthetic repository (or the repository named by
``SLIMTOOLS_BENCH_GIT_REPO``, with ``SLIMTOOLS_BENCH_GIT_TARGET`` for ``git_diff`` and
``SLIMTOOLS_BENCH_GIT_REVISION`` for ``git_show``: a clone of a big public project) and
``mcp-server-sqlite`` (its own venv, ``.cache/sqlite-venv``) on a 5,000-row table whose
``read_query`` is a 2,000,000-character Python repr, then a second table (400 orders of
short columns: another shape through the same tool).
For record results it also reports the share of each record's short scalar fields (numbers,
booleans, strings of 40 characters or fewer) that its automatic brief shows.
Goal: page 1 at least 5x smaller than raw, everything reachable.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp.types import CallToolResult, TextContent, Tool

from benchmarks._timing import SHARED_DATA
from benchmarks.results import record
from slimtools.proxy.config import ProxyConfig
from slimtools.proxy.server import build_proxy
from slimtools.proxy.upstream import UpstreamSpec, connect
from slimtools.tokens import count_tokens

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".cache" / "npm" / "node_modules" / ".bin"
ANY = {"type": "object", "properties": {}}
_CALL = re.compile(r"(\w+)\((.*?)\)(?:;|$)")


def _recorded() -> dict[str, str]:
    """Recorded results (as the upstream's text) past the auto-brief threshold."""
    root = SHARED_DATA / "payloads"
    found = []
    for folder in ("github_pygithub", "github_octokit"):
        for path in sorted((root / folder).glob("*.json")):
            text = path.read_text(encoding="utf-8")
            found.append(
                (count_tokens(text), f"{folder.removeprefix('github_')}/{path.name}", text)
            )
    out = {name: text for _, name, text in sorted(found, reverse=True)[:14]}  # the largest
    commits = json.loads((root / "github_pygithub" / "148.json").read_text(encoding="utf-8"))
    out["pygithub/148.json commits"] = json.dumps(commits["commits"])  # list_commits
    log = root / "logs_loghub" / "HDFS_2k.log"
    if log.exists():
        out["loghub/HDFS_2k.log"] = log.read_text(errors="replace")
    return out


def _args(text: str) -> dict[str, Any]:
    """The keyword arguments of a hint's call (JSON values)."""
    found: dict[str, Any] = {}
    for part in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,]+)', text):
        found[part[0]] = json.loads(part[1])
    return found


def _next(hint: str, tool: str) -> dict[str, Any] | None:
    for name, inner in _CALL.findall(hint.replace("; ", ";")):
        if name == tool and "page=" in inner:
            return _args(inner)
    return None


async def _read_all(kit: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Page 1 and every page its hints lead to; then every record by get_record."""
    first = await kit.acall(tool, args)
    pages = [first.text]
    env = json.loads(first.text) if first.text.startswith("{") else None
    if env is None or "hint" not in env:  # passed through untouched
        return {"page1": first.text, "pages": 1, "records": None, "text": first.text}
    envs = [env]
    while (nxt := _next(envs[-1]["hint"], tool)) is not None:
        result = await kit.acall(tool, {**args, **nxt})
        pages.append(result.text)
        envs.append(json.loads(result.text))
    briefs = [b for e in envs for b in e.get("briefs", [])]
    fetched = 0
    shares: list[float] = []
    for brief in briefs:
        handle = brief.get("handle") if isinstance(brief, dict) else None
        if handle is not None:
            answer = await kit.acall("get_record", {"handle": handle})
            fetched += not answer.is_error
            if not answer.is_error:
                shares.append(_short_share(brief, answer.text))
    return {
        "page1": first.text,
        "pages": len(pages),
        "records": (len(briefs), envs[0]["total"], fetched),
        "text": "".join(e.get("text") or "" for e in envs),
        "short": sum(shares) / len(shares) if shares else None,
    }


def _short_scalars(record: dict[str, Any]) -> set[str]:
    """A record's short scalar fields: numbers, booleans and strings of 40 characters or
    fewer (ids, names, states, levels, timestamps, prices)."""
    return {
        key
        for key, value in record.items()
        if isinstance(value, (int, float, bool)) or (isinstance(value, str) and len(value) <= 40)
    }


def _short_share(brief: dict[str, Any], record_text: str) -> float:
    """The share of the record's short scalar fields that its brief shows."""
    try:
        record = json.loads(record_text)
    except ValueError:
        return 0.0
    short = _short_scalars(record) if isinstance(record, dict) else set()
    return len(short & set(brief)) / len(short) if short else 1.0


def _same(joined: str, raw: str, *, exact: bool) -> bool:
    """The pages rejoined give the raw text (or, reshaped JSON, the same data)."""
    if exact or joined == raw:
        return joined == raw
    try:
        return bool(json.loads(joined) == json.loads(raw))
    except ValueError:
        return False


def _row(name: str, raw: str, seen: dict[str, Any], original: str | None) -> str:
    raw_t, page_t = count_tokens(raw), count_tokens(seen["page1"])
    short = seen.get("short")
    if seen["records"] is not None and seen["records"][1] and not seen["text"]:
        shown, total, fetched = seen["records"]
        reach = f"records {shown}/{total} shown, {fetched} by get_record"
        if short is not None:
            reach += f"; short fields shown {short:.0%}"
        ok = shown == total == fetched
    else:
        ok = seen["pages"] == 1 or _same(seen["text"], raw, exact=original is not None)
        reach = f"text rejoined: {'exact' if ok else 'DIFFERENT'}"
    ratio = raw_t / page_t if page_t else float("inf")
    if seen["records"] is None:
        mark = "untouched (under the budget, not records)"
    else:
        mark = "ok" if ratio >= 5 and ok else "BELOW GOAL"
    record(
        f"no config, {name}",
        baseline=f"raw: {raw_t:,} tokens",
        measured=f"page 1: {page_t:,} tokens, {seen['pages']} pages; {reach}",
        ratio=f"{ratio:.1f}x smaller" if seen["records"] is not None else "untouched",
        raw_tokens=raw_t,
        page1_tokens=page_t,
        pages=seen["pages"],
        reached=float(ok),
        short_fields_shown=short if short is not None else -1.0,
    )
    return (
        f"  {name:<34} raw {raw_t:>8,} -> page 1 {page_t:>6,} tokens ({ratio:5.1f}x), "
        f"{seen['pages']:>3} pages; {reach} [{mark}]"
    )


async def _recorded_rows() -> list[str]:
    rows = []
    for name, text in _recorded().items():

        async def call(_tool: str, _args: dict[str, Any], text: str = text) -> CallToolResult:
            return CallToolResult(content=[TextContent(type="text", text=text)])

        proxy = build_proxy(ProxyConfig(), [Tool(name="t", input_schema=ANY)], call)
        seen = await _read_all(proxy.kit, "t", {})
        rows.append(_row(name, text, seen, text if name.startswith("loghub") else None))
    return rows


async def _memory_rows() -> list[str]:
    server = BIN / "mcp-server-memory"
    if not server.exists() or shutil.which("node") is None:
        return [
            "  server-memory: skipped (npm install --prefix .cache/npm @modelcontextprotocol/server-memory)"
        ]
    with tempfile.TemporaryDirectory() as tmp:
        spec = UpstreamSpec(command=(str(server),))
        os.environ["MEMORY_FILE_PATH"] = str(Path(tmp) / "memory.jsonl")
        async with connect(spec) as upstream:
            entities = [
                {
                    "name": f"person_{i}",
                    "entityType": "person",
                    "observations": [f"works on project {i % 40}", "joined in 2024"],
                }
                for i in range(1_620)
            ]
            await upstream.call("create_entities", {"entities": entities})
            relations = [
                {"from": f"person_{i}", "to": f"person_{i + 1}", "relationType": "knows"}
                for i in range(1_619)
            ]
            await upstream.call("create_relations", {"relations": relations})
            raw = await upstream.call("read_graph", {})
            proxy = build_proxy(ProxyConfig(), await upstream.tools(), upstream.call)
            seen = await _read_all(proxy.kit, "read_graph", {})
            search = await upstream.call("search_nodes", {"query": "project 1"})
            seen_search = await _read_all(proxy.kit, "search_nodes", {"query": "project 1"})
    raw_text = "\n".join(b.text for b in raw.content if b.type == "text")
    search_text = "\n".join(b.text for b in search.content if b.type == "text")
    return [
        _row("memory/read_graph (1,620 entities)", raw_text, seen, None)
        + " (text of the pretty JSON)",
        _row("memory/search_nodes", search_text, seen_search, None),
    ]


async def _filesystem_rows() -> list[str]:
    server = BIN / "mcp-server-filesystem"
    if not server.exists() or shutil.which("node") is None:
        return ["  server-filesystem: skipped (npm install --prefix .cache/npm ...)"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        for i in range(60):
            (root / f"folder_{i:02d}").mkdir()
            for j in range(75):
                (root / f"folder_{i:02d}" / f"file_{j:02d}.txt").write_text("x\n")
        (root / "big.txt").write_text("".join(f"line {n} of a long file\n" for n in range(30_000)))
        async with connect(UpstreamSpec(command=(str(server), str(root)))) as upstream:
            proxy = build_proxy(ProxyConfig(), await upstream.tools(), upstream.call)
            rows = []
            for tool, args in (
                ("directory_tree", {"path": str(root)}),
                ("list_directory", {"path": str(root / "folder_00")}),
                ("read_text_file", {"path": str(root / "big.txt")}),
            ):
                raw = await upstream.call(tool, args)
                raw_text = "\n".join(b.text for b in raw.content if b.type == "text")
                seen = await _read_all(proxy.kit, tool, args)
                rows.append(_row(f"filesystem/{tool}", raw_text, seen, raw_text))
    return rows


async def _server_rows(label: str, command: tuple[str, ...], calls: list[Any]) -> list[str]:
    """One row per ``(tool, arguments)`` of a real stdio server behind a proxy with no config."""
    async with connect(UpstreamSpec(command=command)) as upstream:
        proxy = build_proxy(ProxyConfig(), await upstream.tools(), upstream.call)
        rows = []
        for tool, args, exact in calls:
            raw = await upstream.call(tool, args)
            raw_text = "\n".join(b.text for b in raw.content if b.type == "text")
            seen = await _read_all(proxy.kit, tool, args)
            what = tool if len({c[0] for c in calls}) == len(calls) else f"{tool} {args}"
            rows.append(_row(f"{label}/{what}", raw_text, seen, raw_text if exact else None))
    return rows


async def _git_rows() -> list[str]:
    try:
        import mcp_server_git  # noqa: F401  (only its presence is checked)
    except ImportError:
        return ["  mcp-server-git: skipped (pip install mcp-server-git)"]
    from tests.proxy.real_servers import git_repository

    with tempfile.TemporaryDirectory() as tmp:
        repo = os.environ.get("SLIMTOOLS_BENCH_GIT_REPO") or str(git_repository(Path(tmp) / "r"))
        far = os.environ.get("SLIMTOOLS_BENCH_GIT_TARGET", "start")
        revision = os.environ.get("SLIMTOOLS_BENCH_GIT_REVISION", "HEAD")
        server = (sys.executable, "-m", "mcp_server_git", "--repository", repo)
        calls = [
            ("git_log", {"repo_path": repo, "max_count": 3_000}, True),
            ("git_diff", {"repo_path": repo, "target": far}, True),
            ("git_show", {"repo_path": repo, "revision": revision}, True),
        ]
        return await _server_rows("git", server, calls)


async def _sqlite_rows() -> list[str]:
    from tests.proxy.real_servers import SQLITE_SERVER, notes_database

    if not SQLITE_SERVER.exists():
        return [f"  mcp-server-sqlite: skipped (not installed at {SQLITE_SERVER})"]
    with tempfile.TemporaryDirectory() as tmp:
        database = str(notes_database(Path(tmp) / "notes.db"))
        _orders(database)
        server = (str(SQLITE_SERVER), "--db-path", database)
        calls = [
            ("read_query", {"query": "SELECT * FROM notes"}, False),
            ("read_query", {"query": "SELECT * FROM orders"}, False),
        ]
        return await _server_rows("sqlite", server, calls)


def _orders(database: str, rows: int = 400) -> None:
    """A second table of short columns and one long note (another shape for ``read_query``)."""
    import sqlite3

    con = sqlite3.connect(database)
    con.execute(
        "create table orders (order_id integer primary key, sku text, price real, "
        "stock integer, status text, placed_at text, note text)"
    )
    con.executemany(
        "insert into orders values (?, ?, ?, ?, ?, ?, ?)",
        (
            (
                i,
                f"SKU-{i:05d}",
                9.5 + i,
                i % 13,
                ("open", "paid", "sent")[i % 3],
                f"2024-02-{1 + i % 28:02d}T12:00:00",
                "handle with care, " * 12,
            )
            for i in range(1, rows + 1)
        ),
    )
    con.commit()
    con.close()


def main() -> None:
    """Print one row per result: raw vs page 1, pages, reachability."""
    print("no config: page 1 against raw, and everything reached by following hints")
    if SHARED_DATA.is_dir():
        rows = asyncio.run(_recorded_rows())
    else:
        rows = [f"  recorded payloads: skipped ({SHARED_DATA} not found)"]
    rows += asyncio.run(_memory_rows())
    rows += asyncio.run(_filesystem_rows())
    rows += asyncio.run(_git_rows())
    rows += asyncio.run(_sqlite_rows())
    print("\n".join(rows))


if __name__ == "__main__":
    main()
