"""Reference MCP servers from npm, installed into the git-ignored ``.cache/npm`` on first use.

Without node and npm the tests that need one skip, unless ``SLIMTOOLS_REQUIRE_SHARED=1``
(CI, whose ``.ci/run`` installs them), where they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PREFIX = ROOT / ".cache" / "npm"


def npm_server(package: str, binary: str) -> str:
    """The executable ``binary`` of the npm ``package``, installed if missing."""
    path = PREFIX / "node_modules" / ".bin" / binary
    if not path.exists():
        if not (shutil.which("node") and shutil.which("npm")):
            reason = f"node and npm are needed for {package}"
            if os.environ.get("SLIMTOOLS_REQUIRE_SHARED") == "1":
                pytest.fail(reason + "; SLIMTOOLS_REQUIRE_SHARED=1 requires them")
            pytest.skip(reason)
        subprocess.run(
            ["npm", "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund", package],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return str(path)
