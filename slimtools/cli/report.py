"""``slimtools report`` and ``slimtools bill``: clearing measured on recorded transcripts.

``slimtools report PATH...`` replays each transcript (files or folders; see
:mod:`slimtools.transcripts`) one model call at a time under no clearing, the peers'
clearing (:mod:`slimtools.ledger.peers`) and slimtools (``--policy`` and its options), and
prints per group and in total the resident tool tokens, the input billed without caching,
the cached cost under ``--cache`` prices, the cache breaks and how many transcripts cost more
than no clearing (:mod:`slimtools.ledger.compare`). ``slimtools bill ROUNDS PER_RESULT``
prints the closed-form table.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from slimtools.clearing import ClearingPolicy
from slimtools.clearing.pricing import PRESETS
from slimtools.ledger import format_bill, tool_result_bill
from slimtools.ledger.compare import Strategy, compare, item7_strategies
from slimtools.transcripts import load_transcripts


def build_policy(
    name: str,
    keep_turns: int | None = None,
    batch_turns: int | None = None,
    clear_at_least: int | None = None,
    *,
    cache: str | None = "anthropic",
    expected_calls: int | None = None,
    payback_horizon: int | None = None,
    max_context_tokens: int | None = None,
) -> ClearingPolicy | None:
    """The slimtools policy the report measures (None for ``--policy none``).

    ``default`` is ``ClearingPolicy(cache=...)`` with the options given; ``anthropic``
    mirrors Anthropic's server-side defaults (no cache economics).
    """
    if name == "none":
        return None
    given = {
        "keep_turns": keep_turns,
        "batch_turns": batch_turns,
        "clear_at_least": clear_at_least,
        "expected_calls": expected_calls,
        "payback_horizon": payback_horizon,
        "max_context_tokens": max_context_tokens,
    }
    overrides: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if name == "anthropic":
        return ClearingPolicy.from_anthropic(**overrides)
    return ClearingPolicy(cache=cache, **overrides)


def report(args: argparse.Namespace) -> int:
    """Run ``slimtools report``: every strategy on every transcript, per group and in total."""
    policy = build_policy(
        args.policy,
        args.keep_turns,
        args.batch_turns,
        args.clear_at_least,
        cache=args.cache,
        expected_calls=args.expected_calls,
        payback_horizon=args.payback_horizon,
        max_context_tokens=args.max_context_tokens,
    )
    transcripts = load_transcripts(*args.paths)
    if not transcripts:
        print("no transcripts found under " + ", ".join(args.paths), file=sys.stderr)
        return 1
    ours = Strategy.policy(f"slimtools ({_describe(args)})", policy)
    if args.peers:
        strategies = [*item7_strategies(args.cache)[:-1], ours]
    else:
        strategies = [Strategy.policy("no clearing", None), ours]
    by = (lambda t: t.name) if args.by == "transcript" else (lambda t: t.source)
    result = compare(transcripts, strategies, cache=args.cache, group=by)
    groups = [g for g in result.groups if g != "ALL"]
    blocks = [result.table(g) for g in groups] if len(groups) > 1 else []
    blocks.append(
        result.table("ALL").replace("ALL:", f"TOTAL ({len(transcripts)} transcripts):", 1)
    )
    lines = ["\n\n".join(blocks), ""]
    lines += [
        "resident: tool-result tokens in the prompt of the last call (peak: the largest);",
        "billed: input tokens without caching; cached cost: cache reads and writes at the",
        "--cache prices, in input-token equivalents; breaks: calls whose cached prefix a",
        "rewrite broke; worse: transcripts whose cached cost is above no clearing's.",
    ]
    mine = result.groups["ALL"][ours.label]
    if policy is not None and mine.cached > result.groups["ALL"]["no clearing"].cached:
        lines.append(_hint(policy, mine.breaks))
    print("\n".join(lines))
    return 0


def _hint(policy: ClearingPolicy, breaks: int) -> str:
    """What to try when the measured policy cost more than no clearing."""
    if policy.pricing is None:
        return (
            f"hint: clearing without a cache model broke the cached prefix {breaks} times and "
            "cost more than it saved; the default (--cache anthropic) clears only what pays"
        )
    return (
        f"hint: the {breaks} clears bet that the runs would go on, and they ended soon after; "
        "if you know how many calls your runs make, pass --expected-calls"
    )


def _describe(args: argparse.Namespace) -> str:
    """The policy as given on the command line, e.g. ``default, batch_turns=5``."""
    parts = [args.policy]
    for name in (
        "keep_turns",
        "batch_turns",
        "clear_at_least",
        "expected_calls",
        "payback_horizon",
        "max_context_tokens",
    ):
        value = getattr(args, name)
        if value is not None:
            parts.append(f"{name}={value}")
    return ", ".join(parts)


def bill(args: argparse.Namespace) -> int:
    """Run ``slimtools bill``."""
    print(format_bill(tool_result_bill(args.rounds, args.per_result, every=args.every)))
    return 0


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


def add_commands(sub: Any) -> None:
    """Register ``report`` and ``bill`` on the ``slimtools`` subcommand parser."""
    rep = sub.add_parser(
        "report",
        help="replay transcripts under every clearing strategy, cache prices included",
        description="Replay each transcript one model call at a time under no clearing, "
        "peers' clearing and slimtools, and print resident tool tokens, billed input and "
        "the cached cost per group and in total.",
        epilog="example: slimtools report ../shared/data/transcripts --by source --cache openai",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument("paths", nargs="+", metavar="PATH", help="transcript files or folders")
    rep.add_argument("--policy", choices=("default", "anthropic", "none"), default="default")
    rep.add_argument(
        "--cache",
        choices=sorted(PRESETS),
        default="anthropic",
        type=lambda v: v.lower(),
        help="prompt-cache prices to bill and decide with (default: anthropic, 5-minute)",
    )
    rep.add_argument("--keep-turns", type=_natural, default=None, metavar="N")
    rep.add_argument("--batch-turns", type=_positive, default=None, metavar="N")
    rep.add_argument("--clear-at-least", type=_natural, default=None, metavar="TOKENS")
    rep.add_argument("--expected-calls", type=_positive, default=None, metavar="N")
    rep.add_argument("--payback-horizon", type=_positive, default=None, metavar="N")
    rep.add_argument("--max-context-tokens", type=_positive, default=None, metavar="TOKENS")
    rep.add_argument(
        "--no-peers",
        dest="peers",
        action="store_false",
        help="compare with no clearing only (peers replay slowly on large folders)",
    )
    rep.add_argument("--by", choices=("transcript", "source"), default="transcript")
    rep.set_defaults(run=report)
    bil = sub.add_parser("bill", help="print the article's resident/billed table")
    bil.add_argument("rounds", type=_natural, metavar="ROUNDS")
    bil.add_argument("per_result", type=_natural, metavar="PER_RESULT")
    bil.add_argument("--every", type=_positive, default=5, metavar="N")
    bil.set_defaults(run=bill)
