"""Measuring what tool results cost: the token ledger, peers' clearing and comparisons.

:func:`tool_result_bill` is the closed-form model of a run that never clears; :class:`TokenLedger`
replays a recorded history one model call at a time (resident tool tokens, billed input with
and without prompt caching); :mod:`slimtools.ledger.peers` replays other agents' clearing for
comparison. Nothing here runs inside an agent loop.
"""

from slimtools.ledger._replay import (
    LedgerRow,
    LedgerSummary,
    Snapshot,
    TokenLedger,
    format_bill,
    round_starts,
    tool_result_bill,
)

__all__ = [
    "LedgerRow",
    "LedgerSummary",
    "Snapshot",
    "TokenLedger",
    "format_bill",
    "round_starts",
    "tool_result_bill",
]
