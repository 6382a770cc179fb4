"""Measuring what tool results cost: the token ledger.

:func:`tool_result_bill` is the closed-form model of a run that never clears; :class:`TokenLedger`
replays a recorded history one model call at a time (resident tool tokens, billed input with
and without prompt caching), cleared under a policy or not. Nothing here runs inside an agent
loop. Other agents' clearing is measured in the benchmarks (``benchmarks/peers``).
"""

from slimtools.ledger._rows import LedgerRow, LedgerSummary, tool_result_bill
from slimtools.ledger.stream import TokenLedger, round_starts

__all__ = [
    "LedgerRow",
    "LedgerSummary",
    "TokenLedger",
    "round_starts",
    "tool_result_bill",
]
