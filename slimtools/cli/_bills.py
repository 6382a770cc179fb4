"""The ``analyze`` table of recorded bills against the ledger's model (no clearing)."""

from __future__ import annotations

from slimtools.cli._output import Cell, Table
from slimtools.ledger.analyze import Analysis
from slimtools.ledger.bill import RunBill

NOTE = "\n".join(
    (
        "recorded: the usage the session logged, each write at its own cache's price;",
        "modelled: the ledger without clearing, calibrated on the run (prefix from the first",
        "request, density from each request's growth), the history restarting at a compaction",
        "and the cache read as recorded where the transcript shows it could not hold; offline:",
        "with the default calibration; breaks: the record's cache breaks by cause; explained:",
        "modelled plus what the breaks the transcript gives no reason for (unexplained) cost.",
    )
)


def bill_table(result: Analysis) -> Table | None:
    """One row per run that recorded its usage; None when no run did."""
    bills = [b for f in result.files for b in f.bills]
    if not bills:
        return None
    table = Table(
        "Recorded bill against the modelled one, no clearing (input-token equivalents)",
        [
            "run",
            "cache",
            ">calls",
            ">recorded",
            ">modelled",
            ">ratio",
            ">offline",
            ">breaks",
            ">explained",
        ],
    )
    table.note = NOTE
    for bill in bills:
        table.add(
            bill.name,
            bill.cache,
            f"{bill.requests:,}",
            f"{round(bill.recorded_cost):,}",
            f"{round(bill.modelled_cost):,}",
            _ratio(bill.ratio),
            _ratio(bill.offline_ratio),
            _breaks(bill),
            _ratio(bill.explained_ratio),
        )
    return table


def _ratio(value: float) -> Cell:
    return Cell(f"{value:.2f}x", "" if abs(value - 1) <= 0.10 else "bad")


def _breaks(bill: RunBill) -> str:
    if not bill.breaks:
        return "0"
    causes: dict[str, int] = {}
    for b in bill.breaks:
        causes[b.cause] = causes.get(b.cause, 0) + 1
    return ", ".join(f"{n} {cause}" for cause, n in causes.items())
