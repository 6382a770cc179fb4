"""A clearing pass as an event (``slimtools.instrumentation.ClearingPass``), for listeners.

Only called when someone listens: the clearer checks first, so a pass costs nothing more
otherwise.
"""

from __future__ import annotations

import logging
import time

from slimtools._session import current_session
from slimtools.clearing.report import ClearingReport
from slimtools.instrumentation import ClearingPass, Listener, emit

log = logging.getLogger("slimtools")


def report_pass(
    report: ClearingReport,
    *,
    format: str | None,
    messages: int,
    previous: int,
    start: int,
    local: Listener | None,
) -> None:
    """Emit the event of one pass; ``previous`` is the history's length at the last one.

    A rewrite before ``previous`` broke the cache of the previous request; on a first pass
    (``previous == 0``) that request is unknown, so any rewrite counts as a break.
    """
    try:
        first = report.first_changed
        event = ClearingPass(
            format=format,
            session=current_session(),
            messages=messages,
            cleared=report.cleared_tool_uses,
            inputs_cleared=report.cleared_inputs,
            cleared_call_ids=tuple(report.cleared_call_ids),
            tokens_before=report.tokens_before,
            tokens_after=report.tokens_after,
            first_changed=first,
            cache_broken=first is not None and (previous == 0 or first < previous),
            start_ns=start,
            end_ns=time.time_ns(),
        )
    except Exception:
        log.warning("slimtools: could not report a clearing pass", exc_info=True)
        return
    emit(event, local)
