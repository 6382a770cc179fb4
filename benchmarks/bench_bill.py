"""The ledger's modelled bill against the recorded one, on the shared Claude Code samples.

For each main session of ../shared/data/transcripts/claude_code and of
../shared/data/sessions_with_compaction/claude_code (one compaction; ``SLIMTOOLS_SHARED_DATA``
names another folder; a subagent's run, ``<session>__agent-*``, is no main session): the
recorded bill (each request's usage, 5-minute and 1-hour writes at their own prices), the
ledger as it was before calibration (four characters a token, no prefix, the default
5-minute prices, no compaction), the calibrated model (prefix from the first request,
density fitted on the run, the history restarting at a compaction's summary, the cache
read as recorded where the transcript says it could not hold), the offline default
calibration, the recorded cache breaks by cause, and the model with what the breaks the
transcript gives no reason for cost. All in input-token equivalents, no
clearing. Then what the bill costs ``analyze`` (usage is read in the reader's first pass,
the bill made from the replay's counts): its CPU time on a synthetic 30 MB session whose
every response logged usage, over one of the same size without (5 interleaved rounds,
best of each, no policy, ``gc.collect()`` before each).
"""

from __future__ import annotations

import gc
import os
import tempfile
import time
from pathlib import Path

import orjson

from benchmarks._timing import SHARED_DATA, cpu_seconds
from benchmarks.bench_transcripts import _session_line, _write
from benchmarks.results import record
from slimtools.ledger import TokenLedger
from slimtools.ledger.analyze import analyze
from slimtools.ledger.bill import RunBill, bill_run
from slimtools.transcripts import load_file, read_usage


def _sessions() -> list[Path]:
    """Every shared Claude Code main session, the samples first."""
    root = Path(os.environ.get("SLIMTOOLS_SHARED_DATA") or SHARED_DATA)
    folders = (
        root / "transcripts" / "claude_code",
        root / "sessions_with_compaction" / "claude_code",
    )
    return [p for f in folders for p in sorted(f.glob("*.jsonl")) if "__agent-" not in p.name]


def _label(path: Path) -> str:
    """A session's name, a compacted session's shortened (its name is a UUID)."""
    return path.name if len(path.name) <= 18 else f"{path.name[:8]} (compacted)"


def _bill(path: Path) -> RunBill | None:
    """What ``analyze`` adds for a file: its usage read, the run loaded, the bill made."""
    requests = read_usage(path)
    if not requests:
        return None
    (run,) = load_file(path)
    return bill_run(
        run.messages, requests, restarts=run.restarts, format=run.format, name=_label(path)
    )


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


def _with_usage(n: int) -> bytes:
    """A Bash call and its result (``bench_transcripts``), the call logging its usage."""
    use, result = _session_line(n).splitlines()
    line = orjson.loads(use)
    line["message"]["usage"] = {
        "input_tokens": 1,
        "cache_read_input_tokens": 20_000 + 1_300 * n,
        "cache_creation_input_tokens": 1_300,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1_300},
    }
    return orjson.dumps(line) + b"\n" + result + b"\n"


def _long_session() -> None:
    with tempfile.TemporaryDirectory() as folder:
        plain, billed = Path(folder) / "plain.jsonl", Path(folder) / "billed.jsonl"
        _write(plain, _session_line, 30)
        _write(billed, _with_usage, 30)
        timed = cpu_seconds(
            {
                "plain": lambda: analyze(plain, policies={}),
                "billed": lambda: analyze(billed, policies={}),
            },
            rounds=5,
        )
        without, with_bill = timed["plain"], timed["billed"]
        (bill,) = analyze(billed, policies={}).files[0].bills
    print(
        f"    30 MB session, {bill.requests:,} calls: {with_bill:.2f} s with usage and its "
        f"bill, {without:.2f} s without: {with_bill / without:.2f}x"
    )


def _record_all(bills: list[RunBill]) -> None:
    """The range of the model's ratio to the recorded bill over every session with usage."""
    ratios = sorted(b.ratio for b in bills)
    explained = sorted(b.explained_ratio for b in bills)
    record(
        f"modelled bill against the recorded one, no clearing, every main session ({len(bills)})",
        baseline="recorded: 1.00x",
        measured=f"{ratios[0]:.2f}-{ratios[-1]:.2f}x",
        ratio=f"{explained[0]:.2f}-{explained[-1]:.2f}x with the unexplained breaks' cost",
        lowest=ratios[0],
        highest=ratios[-1],
    )


def main() -> None:
    files = _sessions()
    if not files:
        print("    shared data not found; skipped")
        return
    print("(a) recorded bill against the ledger's model, no clearing (input-token equivalents)")
    head = f"    {'session':<24}{'calls':>6}{'recorded':>11}{'before':>8}{'model':>8}"
    print(head + f"{'offline':>9}{'explained':>10}  cache         breaks")
    bills: list[RunBill] = []
    for path in files:
        found = _row(path)
        if found is None:
            print(f"    {_label(path):<24} no usage recorded")
            continue
        b, before = found
        bills.append(b)
        print(
            f"    {b.name:<24}{b.requests:>6}{round(b.recorded_cost):>11,}{before:>7.2f}x"
            f"{b.ratio:>7.2f}x{b.offline_ratio:>8.2f}x{b.explained_ratio:>9.2f}x  "
            f"{b.cache:<13} {_breaks(b)}"
        )
        record(
            f"modelled bill against the recorded one, no clearing, {b.name}",
            baseline=f"recorded: {round(b.recorded_cost):,} input-token equivalents",
            measured=f"modelled {b.ratio:.2f}x, uncalibrated {before:.2f}x",
            ratio=f"{b.explained_ratio:.2f}x with the unexplained breaks' cost",
            recorded=b.recorded_cost,
            modelled_ratio=b.ratio,
            uncalibrated_ratio=before,
            explained_ratio=b.explained_ratio,
        )
        c = b.calibration
        print(
            f"    {'':<24}calibration: {c.factor:.2f} tokens per counted token, "
            f"{c.per_message:.0f} a message, prefix {c.prefix:,} ({c.source})"
        )
    if bills:
        _record_all(bills)
    print("(b) analyze CPU time on a session that logged usage over one of the same size without")
    _long_session()


if __name__ == "__main__":
    main()
