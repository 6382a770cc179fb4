"""Locate ../shared/data for tests that evaluate on real transcripts and payloads."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import pytest

from tests._profile import FULL

T = TypeVar("T")

SHARED_DATA = Path(
    os.environ.get("SLIMTOOLS_SHARED_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "data"
)
"""../shared/data, or the folder ``SLIMTOOLS_SHARED_DATA`` names (a worktree elsewhere)."""


def shared_data() -> Path:
    """Return ../shared/data, or skip the test where it is absent (a user's clone).

    With SLIMTOOLS_REQUIRE_SHARED=1 (set by .ci/run) a missing folder fails instead.
    """
    if SHARED_DATA.is_dir():
        return SHARED_DATA
    reason = f"shared data not found at {SHARED_DATA} (it ships beside the repo, not in it)"
    if os.environ.get("SLIMTOOLS_REQUIRE_SHARED") == "1":
        pytest.fail(reason + "; SLIMTOOLS_REQUIRE_SHARED=1 requires it")
    pytest.skip(reason)


def sample(items: Iterable[T], key: Callable[[T], str], per_group: int = 3) -> list[T]:
    """Every item under the full Hypothesis profile (``make test``); else the first
    ``per_group`` of each group, so the inner loop still sees every recorder."""
    if FULL:
        return list(items)
    kept: dict[str, int] = {}
    out = []
    for item in items:
        group = key(item)
        if kept.get(group, 0) < per_group:
            kept[group] = kept.get(group, 0) + 1
            out.append(item)
    return out
