"""What a guarded call shows of what it cannot project: a withheld verdict, masked values.

The pipeline (``slimtools._core.pipeline``) calls these for a tool with an allowlist or a
deny: a result the reader (``slimtools.projection._readable``) cannot read as records becomes an
envelope that says so (logged once per tool), or its text under the explicit opt-in; the
denied values a call's records carry (``slimtools.projection._scrub``) are masked in the
envelope and in what the store keeps.
"""

from __future__ import annotations

import logging
from typing import Any

from slimtools._core.config import Call, SlimConfig
from slimtools._core.fit import Out, Part
from slimtools.projection import Secrets, Unreadable, scrub_pairs

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


def mask_out(secrets: Secrets | None, out: Out, tail: list[Part]) -> None:
    """Mask the call's denied values in everything the envelope shows."""
    if secrets is None:
        return
    masker = secrets.found_in([out.briefs, out.text, out.notes, [part.text for part in tail]])
    if masker is None:  # the usual call: no denied value anywhere else
        return
    out.briefs = masker.data(out.briefs)
    if out.text is not None:
        out.text = masker.text(out.text)
    out.notes[:] = [masker.text(n) for n in out.notes]
    tail[:] = [part._replace(text=masker.text(part.text)) for part in tail]


def masked(secrets: Secrets | None, saves: dict[str, Any]) -> dict[str, Any]:
    """What the store keeps, the call's denied values masked in it."""
    if secrets is None:
        return saves
    masker = secrets.found_in(saves)
    if masker is None:
        return saves
    return {key: masker.data(value) for key, value in saves.items()}
