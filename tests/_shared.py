"""Locate ../shared/data for tests that evaluate on real transcripts and payloads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


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
