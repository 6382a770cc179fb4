"""What a guarded call shows of what it cannot project: a withheld verdict.

The pipeline (``slimtools._core.pipeline``) calls this for a tool with an allowlist or a
deny: a result the reader (``slimtools.projection._readable``) cannot read as records becomes an
envelope that says so (logged once per tool), or its text under the explicit opt-in.
"""

from __future__ import annotations

import logging
from typing import Any

from slimtools._core.config import Call, SlimConfig
from slimtools._core.fit import Out
from slimtools.projection import Unreadable, scrub_pairs

log = logging.getLogger("slimtools")
_WARNED: set[str] = set()  # tools whose withheld results were logged (once per tool)


def unreadable(cfg: SlimConfig, call: Call, found: Unreadable) -> tuple[str, Any]:
    """A result the tool cannot read as records: withheld, or its text under the opt-in."""
    if cfg.on_unreadable == "text" and found.text is not None:
        return "text", scrub_pairs(found.text, cfg.denied_names)
    if call.tool not in _WARNED:
        _WARNED.add(call.tool)
        log.warning(
            "slimtools: tool %r returned a result that cannot be read as records (%s, %d "
            "characters: %s); it was withheld. Return records, or opt in to showing such "
            'results as text with on_unreadable="text" (an argument of project_fields and '
            "wrap(), a key of the proxy's [tools.NAME] table).",
            call.tool,
            found.kind,
            found.size,
            found.reason,
        )
    return "envelope", Out(total=0, notes=[found.describe()]).build()
