"""The ledger's modelled bill against the recorded one, on the shared Claude Code samples.

For each session of ../shared/data/transcripts/claude_code (``SLIMTOOLS_SHARED_DATA`` names
another folder): the recorded bill (each request's usage, 5-minute and 1-hour writes at
their own prices), the ledger as it was before calibration (four characters a token, no
prefix, the default 5-minute prices), the calibrated model (prefix from the first request,
density fitted on the run), the offline default calibration, the recorded cache breaks by
cause, and the model with what those breaks cost. All in input-token equivalents, no
clearing. Then the CPU time of the usage pass (the one extra read of each file ``analyze``
makes; the bill itself comes from the replay's counts) as a share of ``analyze`` on those
files (best of 5 each, ``gc.collect()`` before each).
"""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

from benchmarks._timing import SHARED_DATA
from slimtools.ledger import TokenLedger
from slimtools.ledger.analyze import analyze
from slimtools.ledger.bill import RunBill, bill_run
from slimtools.transcripts import load_file
from slimtools.transcripts._usage import read_usage


def _folder() -> Path:
    return Path(os.environ.get("SLIMTOOLS_SHARED_DATA") or SHARED_DATA) / "transcripts"


def _bill(path: Path) -> RunBill | None:
    """What ``analyze`` adds for a file: its usage read, the run loaded, the bill made."""
    requests = read_usage(path)
    if not requests:
        return None
    (run,) = load_file(path)
    return bill_run(run.messages, requests, format=run.format, name=path.name)


def _row(path: Path) -> tuple[RunBill, float] | None:
    bill = _bill(path)
    if bill is None:
        return None
    (run,) = load_file(path)
    before = TokenLedger.measure(run.messages, format=run.format).summary.billed_cached
    return bill, before / bill.recorded_cost if bill.recorded_cost else 1.0


def _breaks(bill: RunBill) -> str:
    return ", ".join(f"{b.cause} (#{b.request}, {b.shortfall:,})" for b in bill.breaks) or "-"


def _best(fn: object, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.process_time()
        fn()  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    folder = _folder() / "claude_code"
    if not folder.is_dir():
        print("    shared data not found; skipped")
        return
    print("(a) recorded bill against the ledger's model, no clearing (input-token equivalents)")
    head = f"    {'session':<18}{'calls':>6}{'recorded':>10}{'before':>8}{'model':>8}"
    print(head + f"{'offline':>9}{'explained':>10}  cache         breaks")
    files = sorted(folder.glob("*.jsonl"))
    for path in files:
        found = _row(path)
        if found is None:
            print(f"    {path.name:<18} no usage recorded")
            continue
        b, before = found
        print(
            f"    {path.name:<18}{b.requests:>6}{round(b.recorded_cost):>10,}{before:>7.2f}x"
            f"{b.ratio:>7.2f}x{b.offline_ratio:>8.2f}x{b.explained_ratio:>9.2f}x  "
            f"{b.cache:<13} {_breaks(b)}"
        )
        c = b.calibration
        print(
            f"    {'':<18}calibration: {c.factor:.2f} tokens per counted token, "
            f"{c.per_message:.0f} a message, prefix {c.prefix:,} ({c.source})"
        )
    print("(b) CPU time of the usage pass (analyze's one extra read), as a share of analyze")
    whole = _best(lambda: analyze(*files))
    usage = _best(lambda: [read_usage(p) for p in files])
    share = usage / whole if whole else 0.0
    print(f"    usage pass {usage * 1e3:.1f} ms of {whole * 1e3:.1f} ms: {share:.0%} of analyze")


if __name__ == "__main__":
    main()
