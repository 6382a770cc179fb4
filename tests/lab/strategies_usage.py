"""Recorded Claude Code sessions under random tokenizers, prefixes and tool results."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from tests.lab.usage_sessions import (
    compacted_lines,
    compacted_prompts,
    prompts_of,
    session_lines,
    with_notification,
    with_usage,
)

_code = st.sampled_from(
    [
        "def f(x):\n    return {'a': x, 'b': [x, x + 1]}\n",
        "import os\nprint(os.listdir('.'))\n",
        "SELECT id, name FROM users WHERE active = 1;\n",
        "The build failed because the test timed out after 30 seconds.\n",
    ]
)
_result = st.one_of(
    st.tuples(_code, st.integers(1, 60)).map(lambda p: p[0] * p[1]),
    st.integers(1, 150).map(
        lambda n: json.dumps([{"id": i, "tags": ["x"] * (i % 4)} for i in range(n)])
    ),
)


@st.composite
def recorded_sessions(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Session lines with usage from a tokenizer ``factor`` times ``count_tokens`` plus
    ``per_message`` a message and a ``prefix`` outside the transcript; and those values."""
    results = draw(st.lists(_result, min_size=4, max_size=10))
    true = {
        "factor": draw(st.floats(1.0, 2.2)),
        "per_message": float(draw(st.integers(0, 80))),
        "prefix": draw(st.integers(2_000, 40_000)),
    }
    lines = session_lines(results)
    prompts = prompts_of(lines, **true)  # type: ignore[arg-type]
    return with_usage(lines, prompts, hour=draw(st.booleans())), true


@st.composite
def compacted_sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Session lines compacted once, with usage: before the compaction each request reads
    the previous prompt; after it the prompt is the prefix, ``added`` tokens of context put
    back and the summary onward, and the first request after it reads only the prefix."""
    before = draw(st.lists(_result, min_size=3, max_size=6))
    after = draw(st.lists(_result, min_size=3, max_size=6))
    true = {
        "factor": draw(st.floats(1.0, 2.2)),
        "per_message": float(draw(st.integers(0, 80))),
        "prefix": draw(st.integers(2_000, 40_000)),
    }
    lines = compacted_lines(before, after)
    added = draw(st.integers(0, 8_000))
    prompts = compacted_prompts(lines, **true, added=added)  # type: ignore[arg-type]
    reads = [0, *prompts[:-1]]
    reads[len(before)] = int(true["prefix"])
    return with_usage(lines, prompts, hour=draw(st.booleans()), reads=reads)


@st.composite
def notified_sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Session lines with usage and a background task's notification before one call,
    which reads only the prefix (the cache lost) or the whole previous prompt (kept)."""
    results = draw(st.lists(_result, min_size=4, max_size=10))
    true = {
        "factor": draw(st.floats(1.0, 2.2)),
        "per_message": float(draw(st.integers(0, 80))),
        "prefix": draw(st.integers(2_000, 40_000)),
    }
    call = draw(st.integers(1, len(results)))
    lines = with_notification(session_lines(results), call)
    prompts = prompts_of(lines, **true)  # type: ignore[arg-type]
    reads = [0, *prompts[:-1]]
    if draw(st.booleans()):
        reads[call] = int(true["prefix"])
    return with_usage(lines, prompts, hour=draw(st.booleans()), reads=reads)
