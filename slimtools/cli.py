"""The ``slimtools`` command: measure clearing on recorded transcripts, print the article's bill.

``slimtools report PATH...`` replays each transcript (files or folders; see
:mod:`slimtools.transcripts`) one model call at a time and prints, per transcript and in
total, the tool-result tokens resident at the last call and the input billed with prompt
caching, for three strategies: no clearing, LangChain's defaults
(``ContextEditingMiddleware`` with ``ClearToolUsesEdit()``, run through LangChain itself
when installed) and slimtools (``--policy``), with the number of calls whose cached prefix
was broken by a rewrite. ``slimtools bill ROUNDS PER_RESULT`` prints the closed-form table.
``slimtools recall`` runs the recall harness (:mod:`slimtools.eval.recall`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slimtools.adapters.langchain_baseline import has_langchain, langchain_defaults_step
from slimtools.clearing import ClearingPolicy
from slimtools.eval import _cli as recall_cli
from slimtools.ledger import LedgerSummary, TokenLedger, format_bill, tool_result_bill
from slimtools.transcripts import Transcript, load_transcripts

STRATEGIES = ("none", "langchain", "slimtools")


@dataclass
class _Totals:
    """Summed figures of one group of transcripts, per strategy."""

    rounds: int = 0
    resident: tuple[int, int, int] = (0, 0, 0)
    billed: tuple[int, int, int] = (0, 0, 0)
    breaks: tuple[int, int, int] = (0, 0, 0)

    def add(self, summaries: Sequence[LedgerSummary]) -> None:
        self.rounds += summaries[0].rounds
        self.resident = _plus(self.resident, [s.resident_end for s in summaries])
        self.billed = _plus(self.billed, [s.billed_cached for s in summaries])
        self.breaks = _plus(self.breaks, [s.cache_breaks for s in summaries])


def _plus(a: tuple[int, int, int], b: Sequence[int]) -> tuple[int, int, int]:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def build_policy(
    name: str,
    keep_turns: int | None = None,
    batch_turns: int | None = None,
    clear_at_least: int | None = None,
) -> ClearingPolicy | None:
    """The slimtools policy the report measures (None for ``--policy none``)."""
    if name == "none":
        return None
    overrides: dict[str, Any] = {}
    if keep_turns is not None:
        overrides["keep_turns"] = keep_turns
    if batch_turns is not None:
        overrides["batch_turns"] = batch_turns
    if clear_at_least is not None:
        overrides["clear_at_least"] = clear_at_least
    if name == "anthropic":
        return ClearingPolicy.from_anthropic(**overrides)
    return ClearingPolicy(**overrides)


def measure(transcript: Transcript, policy: ClearingPolicy | None) -> list[LedgerSummary]:
    """Summaries of one transcript for no clearing, LangChain's defaults and slimtools."""
    history = transcript.messages
    fmt = transcript.format
    baseline_history, step = langchain_defaults_step(history)
    return [
        TokenLedger.measure(history, format=fmt).summary,
        TokenLedger.measure(baseline_history, clear=step).summary,
        TokenLedger.measure(history, policy, format=fmt).summary,
    ]


def _row(label: str, t: _Totals) -> str:
    res = " ".join(f"{v:>10,}" for v in t.resident)
    billed = " ".join(f"{v:>12,} {b:>4}" for v, b in zip(t.billed, t.breaks, strict=True))
    return f"{_short(label):<44} {t.rounds:>6} | {res} | {billed}"


def _short(label: str, width: int = 44) -> str:
    """The label, cut in the middle when too long (transcript names differ at the end)."""
    if len(label) <= width:
        return label
    half = (width - 1) // 2
    return label[:half] + "~" + label[len(label) - (width - 1 - half) :]


def _header() -> list[str]:
    names = " ".join(f"{n:>10}" for n in STRATEGIES)
    billed = " ".join(f"{n:>12} {'brk':>4}" for n in STRATEGIES)
    return [
        f"{'':<44} {'':>6} | {'resident tool tokens at end':^32} | "
        f"{'billed input with caching (cache breaks)':^53}",
        f"{'transcript':<44} {'calls':>6} | {names} | {billed}",
    ]


def _ratio(new: int, old: int) -> str:
    return f"x{new / old:.2f}" if old else "n/a"


def report(args: argparse.Namespace) -> int:
    """Run ``slimtools report``."""
    policy = build_policy(args.policy, args.keep_turns, args.batch_turns, args.clear_at_least)
    transcripts = load_transcripts(*args.paths)
    if not transcripts:
        print("no transcripts found under " + ", ".join(args.paths), file=sys.stderr)
        return 1
    groups: dict[str, _Totals] = {}
    total = _Totals()
    lines = _header()
    for t in transcripts:
        summaries = measure(t, policy)
        total.add(summaries)
        key = t.name if args.by == "transcript" else t.source
        groups.setdefault(key, _Totals()).add(summaries)
    lines += [_row(key, figures) for key, figures in groups.items()]
    lines.append(_row(f"TOTAL ({len(transcripts)} transcripts)", total))
    baseline = "LangChain's ClearToolUsesEdit" if has_langchain() else "emulated LangChain"
    none_res, lc_res, slim_res = total.resident
    none_bill, lc_bill, slim_bill = total.billed
    lines += [
        "",
        f"slimtools ({_describe(args)}) vs no clearing: resident {_ratio(slim_res, none_res)}, "
        f"billed with caching {_ratio(slim_bill, none_bill)}",
        f"langchain defaults ({baseline}) vs no clearing: resident "
        f"{_ratio(lc_res, none_res)}, billed with caching {_ratio(lc_bill, none_bill)}",
        "billed = cache reads x0.1 + cache writes x1.25, in input-token equivalents",
    ]
    if slim_bill > none_bill and policy is not None:
        lines.append(
            f"hint: clearing broke the cached prefix {total.breaks[2]} times and cost more than "
            "it saved with caching; batch it: --batch-turns 5 --clear-at-least 2000"
        )
    print("\n".join(lines))
    return 0


def _describe(args: argparse.Namespace) -> str:
    """The policy as given on the command line, e.g. ``default, batch_turns=5``."""
    parts = [args.policy]
    for name in ("keep_turns", "batch_turns", "clear_at_least"):
        value = getattr(args, name)
        if value is not None:
            parts.append(f"{name}={value}")
    return ", ".join(parts)


def bill(args: argparse.Namespace) -> int:
    """Run ``slimtools bill``."""
    print(format_bill(tool_result_bill(args.rounds, args.per_result, every=args.every)))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="slimtools", description="Measure and model the token bill of tool results."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="replay transcripts with and without clearing")
    rep.add_argument("paths", nargs="+", metavar="PATH", help="transcript files or folders")
    rep.add_argument("--policy", choices=("default", "anthropic", "none"), default="default")
    rep.add_argument("--keep-turns", type=_natural, default=None, metavar="N")
    rep.add_argument("--batch-turns", type=_positive, default=None, metavar="N")
    rep.add_argument("--clear-at-least", type=_natural, default=None, metavar="TOKENS")
    rep.add_argument("--by", choices=("transcript", "source"), default="transcript")
    rep.set_defaults(run=report)
    bil = sub.add_parser("bill", help="print the article's resident/billed table")
    bil.add_argument("rounds", type=_natural, metavar="ROUNDS")
    bil.add_argument("per_result", type=_natural, metavar="PER_RESULT")
    bil.add_argument("--every", type=_positive, default=5, metavar="N")
    bil.set_defaults(run=bill)
    recall_cli.add_parser(sub)
    return parser


def _natural(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``slimtools`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except (FileNotFoundError, ValueError) as exc:
        print(f"slimtools: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # piped into `head` and closed early: not an error
        # Point stdout at devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
