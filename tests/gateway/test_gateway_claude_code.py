"""The Claude Code CLI (from npm) through the gateway, against the scripted upstream, offline."""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from slimtools.clearing import ClearingPolicy, is_placeholder
from slimtools.gateway import create_app
from slimtools.gateway._wire import normalize
from tests._ports import run as run_command
from tests.gateway.gateway_upstream import FakeUpstream, Script, create_upstream, serve

pytestmark = pytest.mark.subprocess

CLAUDE = Path(__file__).resolve().parents[2] / ".cache" / "npm" / "node_modules" / ".bin" / "claude"
ROUNDS = 4
POLICY = ClearingPolicy(
    cache=None,
    keep_turns=1,
    retention={"search": 1, "read": 1, "command": 1, "write": 1, "input": None},
)


def claude_binary() -> str:
    """The installed CLI, or skip (fail under CI, where .ci/run installs it)."""
    found = str(CLAUDE) if CLAUDE.exists() else shutil.which("claude")
    if found:
        return found
    reason = (
        "the Claude Code CLI is not installed "
        "(npm install --prefix .cache/npm @anthropic-ai/claude-code)"
    )
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def bash_round(n: int) -> dict[str, Any]:
    """Round ``n`` of the script: cat one log (about 12 KB: under Claude Code's 30 KB cap)."""
    return {"command": f"cat log{n}.txt", "description": f"Read log {n}"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeUpstream, Path]]:
    """One ``claude -p`` run through the gateway; the upstream's record and the run's home."""
    binary = claude_binary()
    work = tmp_path_factory.mktemp("claude")
    for n in range(1, ROUNDS + 1):
        lines = (f"log{n} line {j}: status ok, request served" for j in range(300))
        (work / f"log{n}.txt").write_text("\n".join(lines))
    fake = FakeUpstream(Script(tool="Bash", rounds=ROUNDS, args=bash_round))
    with serve(create_upstream(fake)) as upstream, serve(create_app(upstream, POLICY)) as url:
        env = {
            **os.environ,
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "x",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "HOME": str(work),
        }
        argv = [binary, "-p", "Read the logs.", "--allowedTools", "Bash,Read"]
        done = run_command(argv, cwd=work, env=env, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return fake, work


def scripted(fake: FakeUpstream) -> list[Any]:
    """The bodies of the requests that carried the scripted tool (the agent's main loop)."""
    bodies = [r.body for r in fake.model_requests("/v1/messages")]
    return [b for b in bodies if any(t.get("name") == "Bash" for t in b.get("tools", []))]


def results(body: Any) -> list[Any]:
    """Every tool_result block of a request, in order."""
    return [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == "tool_result"]  # fmt: skip


def text_of(block: Any) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def test_claude_code_results_are_cleared_from_the_round_the_policy_says(run: Any) -> None:
    """Round k's request holds results 1..k-2 as placeholders, k-1 whole (retention 1)."""
    bodies = scripted(run[0])
    assert len(bodies) == ROUNDS + 1
    for k, body in enumerate(bodies):
        texts = [text_of(b) for b in results(body)]
        assert len(texts) == k
        assert all(is_placeholder(t) for t in texts[:-1])
        assert not texts or "status ok" in texts[-1]


def test_claude_code_pairing_stays_intact(run: Any) -> None:
    """Every tool_result answers the tool_use just before it, in every request."""
    for body in scripted(run[0]):
        uses = [b["id"] for m in body["messages"] if m["role"] == "assistant"
                and isinstance(m["content"], list) for b in m["content"]
                if b.get("type") == "tool_use"]  # fmt: skip
        assert [b["tool_use_id"] for b in results(body)] == uses


def test_claude_code_requests_keep_their_prefix(run: Any) -> None:
    """Each request extends the previous one, breakpoints aside, up to a newly cleared result."""
    bodies = scripted(run[0])
    for before, after in itertools.pairwise(bodies):
        a = [normalize(m, "anthropic") for m in before["messages"]]
        b = [normalize(m, "anthropic") for m in after["messages"]]
        same = next((i for i in range(len(a)) if a[i] != b[i]), len(a))
        changed = orjson.dumps(b[same : len(a)])
        assert same == len(a) or b"[cleared" in changed


def test_claude_code_transcript_keeps_every_original(run: Any) -> None:
    """The session file Claude Code wrote holds every whole output, no placeholder."""
    files = list((run[1] / ".claude" / "projects").rglob("*.jsonl"))
    assert files
    text = "".join(f.read_text() for f in files)
    for n in range(1, ROUNDS + 1):
        assert f"log{n} line 299: status ok" in text
    assert "[cleared" not in text
