"""The same bytes everywhere: a cleared history is a function of the history and the policy."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from slimtools.clearing import DEFAULT_RETENTION, Clearer, ClearingPolicy, clear_stale_results
from tests.clearing.strategies_clearing import FORMATS, render, script

ROOT = Path(__file__).resolve().parents[2]

TOOLS = ("search_logs", "read_file", "bash", "create_issue", "write_file", "get_page", "x")


def policies() -> list[ClearingPolicy]:
    """Policies whose decisions touch every set and mapping the engine consults."""
    return [
        ClearingPolicy(),
        ClearingPolicy(cache=None),
        ClearingPolicy(cache=None, clear_tool_inputs={"bash", "write_file", "x"}),
        ClearingPolicy(cache=None, keep=2),
        ClearingPolicy(
            cache="openai",
            retention={**DEFAULT_RETENTION, "get_page": None, "create_issue": None},
            repeatable={"x", "bash", "write_file"},
            categories={"x": "read", "bash": "command"},
        ),
    ]


def _dumpable(message: Any) -> Any:
    if hasattr(message, "model_dump"):
        return message.model_dump(mode="json")
    return message


def digest() -> str:
    """A SHA-256 over every format's history cleared under every policy."""
    turns = script(*(TOOLS[i % len(TOOLS)] for i in range(24)), (TOOLS[1], TOOLS[2]), size=160)
    h = hashlib.sha256()
    for fmt in FORMATS:
        history = render(fmt, turns)
        for policy in policies():
            out = clear_stale_results(history, policy)
            h.update(json.dumps([_dumpable(m) for m in out], sort_keys=True).encode())
    return h.hexdigest()


def _digest_in(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    code = "from tests.clearing.test_clearing_determinism import digest; print(digest())"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
        timeout=300, check=True,
    )  # fmt: skip
    return done.stdout.strip()


@pytest.mark.subprocess
def test_cleared_history_is_the_same_bytes_under_any_hash_seed():
    """Three processes with different PYTHONHASHSEED, and this one, clear to the same bytes."""
    here = digest()
    assert {_digest_in(seed) for seed in ("0", "1", "4242")} == {here}


def test_cleared_history_is_the_same_bytes_on_a_second_call():
    """Two fresh clearers in one process produce byte-identical histories."""
    assert digest() == digest()


def _persisted(history: list[Any], policy: ClearingPolicy, restart_at: int | None) -> str:
    """Clear ``history`` message by message in place, a new clearer taking over at a point."""
    clearer, grown = Clearer(policy), []
    for i, message in enumerate(history):
        grown.append(message)
        if i == restart_at:
            clearer = Clearer(policy)  # the agent restarted: nothing remembered but the list
        clearer.clear_in_place(grown)
    return json.dumps([_dumpable(m) for m in grown], sort_keys=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_restarted_clearer_continues_with_the_same_bytes(fmt):
    """A persisted history taken over by a new clearer ends byte-identical to one clearer's."""
    turns = script(*(TOOLS[i % len(TOOLS)] for i in range(24)), size=160)
    history = render(fmt, turns)
    for policy in policies():
        alone = _persisted(history, policy, None)
        assert all(_persisted(history, policy, k) == alone for k in (10, 25, 40))
