"""``slimtools report`` and ``slimtools bill``: clearing measured on recorded transcripts.

``slimtools report PATH...`` replays each transcript (files or folders; see
:mod:`slimtools.transcripts`) one model call at a time under no clearing and slimtools
(``--policy`` and its options), in the replay ``slimtools analyze`` runs, and prints per
group and in total the resident tool tokens, the input billed without caching, the cached
cost under ``--cache`` prices, the cache breaks and how many runs cost more than no clearing.
``slimtools bill ROUNDS PER_RESULT`` prints the closed-form table.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from slimtools.clearing import ClearingPolicy
from slimtools.cli._options import Formatter, add_by_option
from slimtools.cli._output import Cell, Table, print_tables
from slimtools.cli._plot import Curve, PlotError, plot_path, plot_rounds
from slimtools.cli._policy import add_policy_options, build_policy, count, describe, options_of
from slimtools.cli.analyze import savings_table
from slimtools.ledger import tool_result_bill
from slimtools.ledger.analyze import analyze

__all__ = ["add_commands", "bill", "build_policy", "report"]

REPORT_EXAMPLE = """\
example:
  slimtools report ../shared/data/transcripts --by source --cache openai
  slimtools report run.jsonl --keep-turns 3 --clear-at-least 2000

exit status: 0 reported, 1 a file could not be read (or none was found), 2 bad usage
"""
BILL_EXAMPLE = """\
example:
  slimtools bill 20 5000                      # 20 rounds of 5,000-token results
  slimtools bill 40 5000 --slim 0.1 --plot bill.png

exit status: 0 printed, 1 the plot could not be written, 2 bad usage
"""


def report(args: argparse.Namespace) -> int:
    """Run ``slimtools report``: no clearing and the policy on every transcript, per group
    and in total."""
    policy = build_policy(args.policy, cache=args.cache, **options_of(args))
    label = f"slimtools ({describe(args.policy, args)})"
    result = analyze(
        *args.paths, policies={} if policy is None else {label: policy}, cache=args.cache
    )
    for error in result.errors:  # one line each; the other files are still reported
        print(f"slimtools: {error}", file=sys.stderr)
    if not result.files:
        if not result.errors:
            print("no transcripts found under " + ", ".join(args.paths), file=sys.stderr)
        return 1
    groups = result.groups(args.by)
    table = savings_table(result, groups if len(groups) > 1 else {}, result.total)
    mine = result.total.strategies.get(label)
    if policy is not None and mine is not None and mine.cost_ratio > 1 + 1e-9:
        table.note += "\n" + _hint(policy, mine.breaks)
    print_tables([table])
    return 1 if result.errors else 0


def _hint(policy: ClearingPolicy, breaks: int) -> str:
    """What to try when the measured policy cost more than no clearing."""
    if policy.pricing is None:
        return (
            f"hint: clearing without a cache model broke the cached prefix {breaks} times and "
            "cost more than it saved; the default (--cache anthropic) clears only what pays"
        )
    return (
        f"hint: the {breaks} clears bet that the runs would go on, and they ended soon after; "
        "if your runs make few calls, pass a smaller --payback-horizon, or clear in larger "
        "steps (--clear-at-least)"
    )


def bill(args: argparse.Namespace) -> int:
    """Run ``slimtools bill``: the closed-form table, with ``--slim`` side by side."""
    print_tables([bill_table(args.rounds, args.per_result, every=args.every, slim=args.slim)])
    if args.plot:
        return _plot_bill(args)
    return 0


def bill_table(rounds: int, per_result: int, *, every: int, slim: float | None) -> Table:
    """The bill as a headed table; with ``slim``, the slimmed columns beside each figure."""
    rows = _rows(rounds, per_result, every)
    if slim is None:
        table = Table(
            f"{per_result:,} tokens a result, one a round; no caching, no clearing",
            [">round", ">resident", ">billed input"],
        )
        for r, resident, billed in rows:
            table.add(str(r), f"{resident:,}", f"{billed:,}")
        return table
    size = round(per_result * slim)
    slimmed = _rows(rounds, size, every)
    table = Table(
        f"{per_result:,} tokens a result, slimmed at the source to {size:,} "
        f"(--slim {slim:g}); no caching, no clearing",
        [">round", ">resident", ">slimmed", ">billed input", ">slimmed"],
    )
    for (r, resident, billed), (_, resident_s, billed_s) in zip(rows, slimmed, strict=True):
        table.add(
            str(r),
            f"{resident:,}",
            Cell(f"{resident_s:,}", "good"),
            f"{billed:,}",
            Cell(f"{billed_s:,}", "good"),
        )
    return table


def _rows(rounds: int, per_result: int, every: int) -> list[tuple[int, int, int]]:
    """Every ``every``-th round of the bill, and the last round whatever ``every`` says."""
    rows = tool_result_bill(rounds, per_result, every=every)
    if rounds and rounds % every:
        rows += tool_result_bill(rounds, per_result, every=rounds)
    return rows


def _plot_bill(args: argparse.Namespace) -> int:
    every = tool_result_bill(args.rounds, args.per_result, every=1)
    curves = [Curve("no slimming", [r for _, r, _ in every], [float(r) for _, r, _ in every])]
    if args.slim is not None:
        slim = tool_result_bill(args.rounds, round(args.per_result * args.slim), every=1)
        curves.append(
            Curve(
                f"slimmed x{args.slim:g}", [r for _, r, _ in slim], [float(r) for _, r, _ in slim]
            )
        )
    try:
        plot_rounds(
            curves,
            args.plot,
            title=f"one {args.per_result:,}-token result a round, never cleared",
            billed_label="cumulative billed input (no cache)",
        )
    except PlotError as exc:
        print(f"slimtools: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.plot}")
    return 0


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value:g}")
    return value


def add_commands(sub: Any) -> None:
    """Register ``report`` and ``bill`` on the ``slimtools`` subcommand parser."""
    rep = sub.add_parser(
        "report",
        help="replay transcripts with and without clearing, cache prices included",
        description="Replay each transcript one model call at a time under no clearing "
        "and slimtools, and print resident tool tokens, billed input and the cached cost per "
        "group and in total (the savings table of slimtools analyze).",
        epilog=REPORT_EXAMPLE,
        formatter_class=Formatter,
    )
    rep.add_argument("paths", nargs="+", metavar="PATH", help="transcript files or folders")
    add_policy_options(rep)
    add_by_option(
        rep,
        ("file", "source"),
        help="a block per transcript file (default) or per source format, e.g. --by source "
        "(--by transcript, the old spelling of file, still works)",
    )
    rep.set_defaults(run=report)
    _add_bill(sub)


def _add_bill(sub: Any) -> None:
    """Register ``bill``: the closed-form bill of a run that never clears."""
    bil = sub.add_parser(
        "bill",
        help="the resident/billed table of a run that never clears (and what slimming changes)",
        description="The closed-form bill: one PER_RESULT-token tool result "
        "a round, never cleared, no caching: tokens resident at each round and input billed "
        "so far. --slim RATIO adds the same columns with every result slimmed at the source "
        "to RATIO of its size.",
        epilog=BILL_EXAMPLE,
        formatter_class=Formatter,
    )
    bil.add_argument(
        "rounds", type=count(0), metavar="ROUNDS", help="model calls in the run, e.g. 40"
    )
    bil.add_argument(
        "per_result",
        type=count(0),
        metavar="PER_RESULT",
        help="tokens of the one tool result each round adds, e.g. 5000",
    )
    bil.add_argument(
        "--every",
        type=count(1),
        default=5,
        metavar="N",
        help="a row every N rounds (default 5), e.g. 1",
    )
    bil.add_argument(
        "--slim",
        type=_ratio,
        metavar="RATIO",
        help="also show the bill with each result slimmed to RATIO of its size, e.g. 0.1 "
        "(10x smaller)",
    )
    bil.add_argument(
        "--plot",
        type=plot_path,
        metavar="OUT.png",
        help="draw resident tokens and cumulative billed input per round (.png, .svg, .pdf), "
        "e.g. bill.png",
    )
    bil.set_defaults(run=bill)
