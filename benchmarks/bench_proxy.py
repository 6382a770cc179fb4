"""The MCP proxy on recorded GitHub responses: what its configured slimming saves.

The config is what ``slimtools suggest`` proposes for each response, then trimmed by hand as
a user would (fewer fields, shorter clips); both are printed. Per tool:

1. tokens: the raw result against the proxy's first envelope;
2. overhead per call: the slimming proxy against a pass-through proxy (``max_tokens =
   false``, no tool configured) over the same in-process upstream, both through a real
   ``mcp.Client`` (and, without the MCP layer, through ``Toolkit.acall``), same run;
3. ids: at the same budget per response, how many record ids a whole-payload truncation
   keeps against those the proxy shows on page 1 and reaches by following its hints;
4. speed as users see it: the proxy against a direct connection over stdio, with real
   servers (server-filesystem, mcp-server-git): ``benchmarks/_stdio_direct.py``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from mcp import Client
from mcp.types import CallToolResult, TextContent, Tool

from benchmarks import _stdio_direct
from benchmarks._timing import SHARED_DATA
from benchmarks.results import record
from slimtools._json import loads
from slimtools.proxy.config import parse_config
from slimtools.proxy.server import build_proxy, proxy_server
from slimtools.proxy.suggest import render, suggest
from slimtools.tokens import count_tokens

SOURCES = {  # tool -> (file in github_pygithub, how the upstream sends it)
    "list_issues": ("145.json", None),
    "list_pulls": ("149.json", None),
    "list_commits": ("148.json", "commits"),
    "search_repositories": ("146.json", None),
}

TRIMMED = """
max_tokens = 2000

[tools.list_issues]
fields = ["number", "title:100", "state", "user = user.login", "labels.name", "comments",
          "updated_at"]
key = "number"
limit = 10

[tools.list_pulls]
fields = ["number", "title:100", "state", "user = user.login", "head = head.ref",
          "merged_at", "updated_at"]
key = "number"
limit = 10

[tools.list_commits]
fields = ["sha", "message = commit.message:120", "author = author.login",
          "date = commit.author.date"]
key = "sha"
limit = 10

[tools.search_repositories]
items = "items"
fields = ["id", "full_name", "description:100", "stargazers_count", "language", "updated_at"]
key = "id"
limit = 10
"""

ID_KEY = {"list_issues": "number", "list_pulls": "number", "list_commits": "sha"}


def _payloads() -> dict[str, Any]:
    root = SHARED_DATA / "payloads" / "github_pygithub"
    out = {}
    for tool, (name, key) in SOURCES.items():
        data = json.loads((root / name).read_text(encoding="utf-8"))
        out[tool] = data[key] if key else data
    return out


def _tools() -> list[Tool]:
    schema = {"type": "object", "properties": {"repo": {"type": "string"}}}
    return [Tool(name=name, description=name, input_schema=schema) for name in SOURCES]


def _upstream(payloads: dict[str, Any]) -> Callable[[str, dict[str, Any]], Awaitable[Any]]:
    """An in-process upstream: a prebuilt result per tool (JSON text, as GitHub's server)."""
    results = {
        name: CallToolResult(content=[TextContent(type="text", text=json.dumps(data))])
        for name, data in payloads.items()
    }

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        return results[name]

    return call


def show_suggestions(payloads: dict[str, Any]) -> None:
    print("0. what `slimtools suggest` proposed (then trimmed by hand into the config below)")
    for tool, data in payloads.items():
        block = render(suggest([data], tool=tool))
        lines = [line for line in block.splitlines() if not line.startswith("# ") or "raw" in line]
        print("   " + "\n   ".join(lines))
    print("   trimmed config:" + TRIMMED.replace("\n", "\n     "))


async def bench_tokens(payloads: dict[str, Any]) -> None:
    config = parse_config(TRIMMED)
    proxy = build_proxy(config, _tools(), _upstream(payloads))
    print("1. tokens per tool: raw result vs the proxy's first envelope")
    total_raw = total_env = 0
    for tool, data in payloads.items():
        raw = count_tokens(json.dumps(data))
        env = count_tokens((await proxy.kit.acall(tool, {"repo": "o/r"})).text)
        total_raw += raw
        total_env += env
        print(f"   {tool:22} raw {raw:8,}  envelope {env:6,}  {raw / env:6.1f}x smaller")
    print(
        f"   {'all':22} raw {total_raw:8,}  envelope {total_env:6,}  {total_raw / total_env:6.1f}x"
    )
    record(
        "proxy, GitHub responses (issues, pulls, commits, search), suggested-then-trimmed config",
        baseline=f"raw: {total_raw:,} tokens",
        measured=f"first envelopes: {total_env:,}",
        ratio=f"{total_raw / total_env:.0f}x smaller",
        baseline_tokens=total_raw,
        measured_tokens=total_env,
    )


async def _per_call(run: Callable[[], Awaitable[Any]], seconds: float = 0.5) -> float:
    """Best of 5 runs of average seconds per call."""
    best = float("inf")
    for _ in range(5):
        gc.collect()
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / 5 or calls < 5:
            await run()
            calls += 1
        best = min(best, (time.perf_counter() - start) / calls)
    return best


async def _parse(text: str) -> None:
    """What any slimming costs at least: the upstream's text read as exact JSON."""
    loads(text)


async def bench_overhead(payloads: dict[str, Any]) -> None:
    call = _upstream(payloads)
    slim_config, plain_config = parse_config(TRIMMED), parse_config("max_tokens = false")
    slim = build_proxy(slim_config, _tools(), call)
    plain = build_proxy(plain_config, _tools(), call)
    print("2. proxy overhead per call (page 1), against a pass-through proxy, same run")
    texts = {tool: json.dumps(data) for tool, data in payloads.items()}
    async with (
        Client(proxy_server(slim, slim_config)) as slim_client,
        Client(proxy_server(plain, plain_config)) as plain_client,
    ):
        args = {"repo": "o/r"}
        for tool in payloads:
            base = await _per_call(lambda t=tool: plain_client.call_tool(t, args))
            mine = await _per_call(lambda t=tool: slim_client.call_tool(t, args))
            kit_base = await _per_call(lambda t=tool: plain.kit.acall(t, args))
            kit_mine = await _per_call(lambda t=tool: slim.kit.acall(t, args))
            floor = await _per_call(partial(_parse, texts[tool]))
            verdict = "met" if mine - base < 0.002 else "NOT met"
            print(
                f"   {tool:22} MCP client: pass-through {base * 1e3:6.2f} ms, slimmed "
                f"{mine * 1e3:6.2f} ms, +{(mine - base) * 1e3:5.2f} ms (goal < 2 ms: {verdict}); "
                f"toolkit only: +{(kit_mine - kit_base) * 1e3:5.2f} ms, of which parsing the "
                f"upstream's JSON exactly (the floor): {floor * 1e3:5.2f} ms"
            )
            record(
                f"proxy overhead per call, {tool}, through a real mcp.Client",
                baseline=f"pass-through proxy: {base * 1e3:.2f} ms",
                measured=f"{mine * 1e3:.2f} ms",
                ratio=f"+{(mine - base) * 1e3:.2f} ms (goal < 2 ms: {verdict})",
                baseline_s=base,
                measured_s=mine,
            )


def _ids(tool: str, records: list[Any]) -> list[str]:
    key = ID_KEY.get(tool, "id")
    return [str(r[key]) for r in records]


async def bench_ids(payloads: dict[str, Any]) -> None:
    config = parse_config(TRIMMED)
    budget = config.max_tokens or 0
    proxy = build_proxy(config, _tools(), _upstream(payloads))
    print(f"3. record ids at {budget:,} tokens a response: truncation vs the proxy")
    for tool, data in payloads.items():
        records = data["items"] if isinstance(data, dict) else data
        ids = _ids(tool, records)
        text = json.dumps(data)
        cut = text[: budget * 4]  # the first `budget` tokens of ASCII JSON
        truncated = sum(
            1
            for i in ids
            if f'"{ID_KEY.get(tool, "id")}": {json.dumps(_typed(i, records, tool))}' in cut
        )
        shown: list[str] = []
        reached: list[str] = []
        args: dict[str, Any] | None = {"repo": "o/r"}
        first = True
        while args is not None:
            result = await proxy.kit.acall(tool, args)
            assert count_tokens(result.text) <= budget, (tool, count_tokens(result.text))
            env = json.loads(result.text)
            page_ids = [str(b[ID_KEY.get(tool, "id")]) for b in env["briefs"]]
            reached += page_ids
            if first:
                shown, first = page_ids, False
            args = _next(env, tool)
        kept = "every id kept" if sorted(reached) == sorted(ids) else "ids MISSING"
        print(
            f"   {tool:22} {len(ids)} records: truncation keeps {truncated}, "
            f"proxy page 1 shows {len(shown)}, following hints reaches {len(set(reached))} "
            f"({kept})"
        )


def _typed(value: str, records: list[Any], tool: str) -> Any:
    key = ID_KEY.get(tool, "id")
    return next(r[key] for r in records if str(r[key]) == value)


def _next(env: dict[str, Any], tool: str) -> dict[str, Any] | None:
    """The call for the next page that the hint names, as arguments."""
    import re

    found = re.search(rf"{tool}\(([^)]*)\)", env["hint"].split("full record")[0])
    if not found:
        return None
    args: dict[str, Any] = {}
    for part in found.group(1).split(", "):
        name, _, value = part.partition("=")
        args[name] = json.loads(value)
    return args if "page" in args else None


def main() -> None:
    if not (SHARED_DATA / "payloads").is_dir():
        print(f"skipped 0-3: {SHARED_DATA / 'payloads'} not found (it ships beside the repo)")
    else:
        payloads = _payloads()
        show_suggestions(payloads)
        asyncio.run(bench_tokens(payloads))
        asyncio.run(bench_overhead(payloads))
        asyncio.run(bench_ids(payloads))
    asyncio.run(_stdio_direct.run())


if __name__ == "__main__":
    main()
