"""Issue 19.12: the proxy against a DIRECT connection, over stdio, with real servers.

Two ``mcp.Client`` s run side by side: one connected straight to a real server, one to
``slimtools proxy -- <the same server>`` (no config: what a new user runs). Each round calls
every case once on each, alternating which goes first, so load on the machine falls on
both alike; a case's figure is the median of ``ROUNDS`` rounds. Goals: under 2 ms added for
results under 10 KB; under 15% of the direct call's time for larger ones.
"""

from __future__ import annotations

import gc
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 20
SMALL = 10_000


@dataclass(frozen=True)
class Case:
    """One call to time: a server, a tool and its arguments."""

    server: str
    tool: str
    arguments: dict[str, Any]


@asynccontextmanager
async def _client(command: list[str]) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(ROOT))
    async with Client(params, mode="legacy") as client:
        yield client


def _size(result: Any) -> int:
    return sum(len(getattr(block, "text", "") or "") for block in result.content)


async def _time(client: Client, case: Case) -> tuple[float, int]:
    gc.collect()
    start = time.perf_counter()
    result = await client.call_tool(case.tool, case.arguments)
    return time.perf_counter() - start, _size(result)


def servers(workdir: Path) -> dict[str, list[str]]:
    """The servers found on this machine: server-filesystem (npm) and mcp-server-git."""
    found = {}
    filesystem = ROOT / ".cache" / "npm" / "node_modules" / ".bin" / "mcp-server-filesystem"
    if filesystem.exists():
        found["filesystem"] = [str(filesystem), str(workdir)]
    git = shutil.which("mcp-server-git") or str(Path(sys.executable).with_name("mcp-server-git"))
    if Path(git).exists():
        found["git"] = [git, "--repository", str(ROOT)]
    return found


def cases(workdir: Path) -> list[Case]:
    """Small and large calls on each server."""
    small = workdir / "small.txt"
    small.write_text("a line of a small file\n" * 100)
    large = workdir / "large.txt"
    large.write_text("".join(f"line {i}: {'x' * 60}\n" for i in range(6000)))
    repo = str(ROOT)
    return [
        Case("filesystem", "read_text_file", {"path": str(small)}),
        Case("filesystem", "list_directory", {"path": str(workdir)}),
        Case("filesystem", "read_text_file", {"path": str(large)}),
        Case("git", "git_status", {"repo_path": repo}),
        Case("git", "git_log", {"repo_path": repo, "max_count": 5}),
        Case("git", "git_log", {"repo_path": repo, "max_count": 400}),
    ]


async def run() -> None:
    """Time every case direct and proxied, interleaved; print medians and the verdicts."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        commands = servers(workdir)
        todo = [case for case in cases(workdir) if case.server in commands]
        print(f"4. against a direct connection over stdio (median of {ROUNDS}, interleaved)")
        if not todo:
            print("   skipped: neither server-filesystem (.cache/npm) nor mcp-server-git found")
            return
        async with AsyncExitStack() as stack:
            direct, proxied = {}, {}
            for name, command in commands.items():
                proxy = [sys.executable, "-m", "slimtools.cli", "proxy", "--", *command]
                direct[name] = await stack.enter_async_context(_client(command))
                proxied[name] = await stack.enter_async_context(_client(proxy))
            times: list[tuple[list[float], list[float]]] = [([], []) for _ in todo]
            sizes: list[int] = [0] * len(todo)
            for round_ in range(ROUNDS + 2):  # two warm-up rounds, not counted
                for i, case in enumerate(todo):
                    pair = [direct[case.server], proxied[case.server]]
                    order = pair if round_ % 2 else pair[::-1]
                    got = {id(c): await _time(c, case) for c in order}
                    (d, size), (p, _) = got[id(pair[0])], got[id(pair[1])]
                    sizes[i] = size
                    if round_ >= 2:
                        times[i][0].append(d)
                        times[i][1].append(p)
        for i, case in enumerate(todo):
            _report(case, sizes[i], *times[i])


def _report(case: Case, size: int, direct: list[float], proxied: list[float]) -> None:
    d, p = statistics.median(direct), statistics.median(proxied)
    added = p - d
    if size < SMALL:
        goal, met = "< 2 ms", added < 0.002
    else:
        goal, met = "< 15%", added < 0.15 * d
    args = ",".join(f"{k}" for k in case.arguments if k not in ("path", "repo_path"))
    label = f"{case.server}.{case.tool}({args})"
    print(
        f"   {label:38} {size:8,} B direct {d * 1e3:7.2f} ms, proxy {p * 1e3:7.2f} ms, "
        f"+{added * 1e3:6.2f} ms ({added / d:+.0%}; goal {goal}: {'met' if met else 'NOT met'})"
    )
