"""How hard the property tests try: a light profile for the inner loop, the full one for CI.

``make test`` (and ``.ci/run``) set ``SLIMTOOLS_HYPOTHESIS=full``; a bare ``pytest`` or
``make test-fast`` runs the light profile, about a sixth of the examples per property.
"""

from __future__ import annotations

import os

FULL = os.environ.get("SLIMTOOLS_HYPOTHESIS", "light") == "full"


def examples(n: int) -> int:
    """``n`` examples under the full profile; a sixth of them (at least 5) under the light one."""
    return n if FULL else max(5, n // 6)
