"""``slimtools analyze``: what tool results cost in transcripts, per tool, and what clearing
would change; a thin shell over :func:`slimtools.ledger.analyze.analyze`.

Tables (grouped by ``--by file|source|tool``), ``--json`` for machines, ``--plot`` for a
picture of resident tool tokens and the cumulative bill per round, ``--ledger`` for the
per-round ledger itself.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from slimtools.clearing.pricing import CachePricing
from slimtools.cli._bills import bill_table
from slimtools.cli._html import render
from slimtools.cli._options import Formatter, add_by_option
from slimtools.cli._output import Cell, Style, Table, print_tables, progress
from slimtools.cli._plot import Curve, PlotError, plot_path, plot_rounds
from slimtools.cli._policy import (
    add_policy_options,
    chosen_names,
    count,
    describe,
    policies_from,
)
from slimtools.errors import ConfigurationError
from slimtools.ledger.analyze import Analysis, Figures, RoundSeries, Totals, analyze, percentile
from slimtools.transcripts import SOURCES

EXAMPLE = """\
examples:
  slimtools analyze ~/.claude/projects/my-project --by tool
  slimtools analyze runs/ --compare turn-end,default --plot waste.png
  slimtools analyze session.jsonl --json > figures.json
  slimtools analyze session.jsonl --html report.html

exit status: 0 analysed, 1 a file could not be read (one line each on stderr; the others
are still analysed), no transcript was found, or the plot or report could not be written,
2 bad usage
"""
HTML_HELP = (
    "also write one self-contained page (no network, secrets redacted) of where the tokens "
    "went: the bill, resident tool tokens per round, per tool, and a timeline of the tool "
    "calls with what the first policy clears, e.g. report.html"
)
NOTES = (
    "resident: tool-result tokens in the prompt of the last model call (peak: the largest),",
    "summed over runs; billed: input tokens without caching; cached: cache reads and writes",
    "at the --cache prices, in input-token equivalents; breaks: calls whose cached prefix",
    "clearing broke; worse: runs whose cached bill is above no clearing's.",
)


def add_commands(sub: Any) -> None:
    """Register ``analyze`` on the ``slimtools`` subcommand parser."""
    parser = sub.add_parser(
        "analyze",
        help="see what tool results cost in transcripts, per tool, and what clearing changes",
        description="Read transcript files and folders (every format slimtools knows, "
        "recognised from the content), replay each run one model call at a time under no "
        "clearing and each chosen policy, and show per file (or source, or tool) and in "
        "total: messages, model calls, tool calls and results, result tokens per tool, and "
        "resident tool tokens and the input billed, with and without prompt caching. Long "
        "sessions are read message by message, in memory that grows with their message "
        "count, not their size.",
        epilog=EXAMPLE,
        formatter_class=Formatter,
    )
    parser.add_argument("paths", nargs="+", metavar="FILE|DIR", help="transcripts, or folders")
    parser.add_argument(
        "--format",
        choices=SOURCES,
        metavar="NAME",
        help="force the transcript format: " + ", ".join(SOURCES) + "; e.g. claude_code",
    )
    add_by_option(
        parser,
        ("file", "source", "tool"),
        help="group the tables by file (default), by source format, or by tool, e.g. --by tool",
    )
    output = parser.add_argument_group("output")
    output.add_argument(
        "--json",
        action="store_true",
        help="print everything as one JSON document (per file and in total, with the "
        "per-round ledger) instead of tables",
    )
    output.add_argument(
        "--plot",
        type=plot_path,
        metavar="OUT.png",
        help="draw resident tool tokens and the cumulative bill per round for no clearing "
        "and each policy (.png, .svg or .pdf; needs the cli extra), e.g. waste.png",
    )
    output.add_argument("--html", metavar="OUT.html", help=HTML_HELP)
    output.add_argument(
        "--ledger",
        action="store_true",
        help="also print the per-round ledger of each strategy (all runs added up by round)",
    )
    output.add_argument(
        "--every", type=count(1), metavar="N", help="with --ledger: one row every N rounds, e.g. 10"
    )
    output.add_argument(
        "--top", type=count(1), default=15, metavar="N", help="tools listed (default 15), e.g. 30"
    )
    output.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="no progress bar (it is shown only on a terminal anyway)",
    )
    add_policy_options(parser, several=True)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``slimtools analyze``."""
    names = chosen_names(args)
    try:
        policies = policies_from(args, names)
    except ConfigurationError as exc:
        print(f"slimtools: {exc}", file=sys.stderr)
        return 2
    with progress(args.progress) as bar:
        result = analyze(
            *args.paths,
            policies=policies,
            cache=args.cache,
            format=args.format,
            on_progress=lambda done, total, path: bar.update(done, total, path.name),
            timelines=bool(args.html),
        )
    for error in result.errors:
        print(f"slimtools: {error}", file=sys.stderr)
    if not result.files:
        if not result.errors:
            where = ", ".join(args.paths)
            print(f"slimtools: no transcripts found under {where}", file=sys.stderr)
        return 1
    document = result.to_dict()
    document["policies"] = {name: describe(name, args) for name in policies}
    if args.json:
        print(json.dumps(document, ensure_ascii=False))
    else:
        print_tables(tables(result, args))
    status = 1 if result.errors else 0
    if args.plot:
        try:
            plot(result, args.plot)
        except PlotError as exc:
            print(f"slimtools: {exc}", file=sys.stderr)
            return 1
        if not args.json:
            print(f"wrote {args.plot}")
    if args.html:
        try:
            write_report(result, document, args.html)
        except OSError as exc:
            print(f"slimtools: cannot write {args.html}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        if not args.json:
            print(f"wrote {args.html}")
    return status


def write_report(result: Analysis, document: dict[str, Any], path: str) -> None:
    """Write the HTML report of ``result`` (``document`` is its ``--json``) to ``path``: the
    first policy's timeline comes from the same replay (``analyze(..., timelines=True)``)."""
    label = next(iter(result.policies))
    runs = [run for f in result.files for run in f.timelines]
    page = render(document, runs, policy=label)
    with open(path, "w", encoding="utf-8") as out:
        out.write(page)


def tables(result: Analysis, args: argparse.Namespace) -> list[Table]:
    """The tables ``analyze`` prints, grouped by ``args.by``."""
    groups = result.groups(args.by)
    total = result.total
    out = [_counts(result, groups, args.by, total), _tools(result, total, args)]
    out.append(savings_table(result, groups if len(groups) > 1 else {}, total))
    bills = bill_table(result)
    if bills is not None:
        out.append(bills)
    if args.ledger:
        out += [_ledger(label, total.series[label], args.every) for label in result.labels]
    return out


def _counts(result: Analysis, groups: dict[str, Figures], by: str, total: Figures) -> Table:
    streamed = sum(f.streamed for f in result.files)
    title = (
        f"{len(result.files)} transcript files, {total.runs:,} runs"
        + (f" ({streamed} read message by message)" if streamed else "")
        + (f"; {len(result.skipped)} other files skipped" if result.skipped else "")
        + (f"; {len(result.errors)} could not be read (see above)" if result.errors else "")
    )
    sources = {str(f.path): f.source for f in result.files}
    heads = {"file": ["file", "format"], "source": ["source"], "tool": [""]}[by]
    columns = [*heads, ">runs", ">messages", ">model calls", ">tool calls", ">tool results"]
    table = Table(title, [*columns, ">tool tokens"])
    for name, figures in groups.items() if by != "tool" else ():
        named = [name, sources[name]] if by == "file" else [name]
        table.add(*named, *_count_cells(figures))
    table.add("TOTAL", *[""] * (len(heads) - 1), *_count_cells(total), style="bold")
    return table


def _count_cells(f: Figures) -> list[str]:
    values = (f.runs, f.messages, f.model_calls, f.tool_calls, f.tool_results, f.tool_tokens)
    return [f"{v:,}" for v in values]


def _tools(result: Analysis, total: Figures, args: argparse.Namespace) -> Table:
    everything = total.tool_tokens
    ranked = sorted(total.tools.items(), key=lambda kv: (-kv[1].total, kv[0]))
    shown = ranked if args.by == "tool" else ranked[: args.top]
    left = len(ranked) - len(shown)
    columns = ["tool", ">calls", ">results", ">p50", ">p95", ">max", ">tokens", ">share"]
    labels = result.labels if args.by == "tool" else []
    title = "Tool results by tool (tokens of one result: median, 95th percentile, largest)"
    if labels:
        title += "; resident at the end of each run under each strategy"
    table = Table(title, columns + [f">end: {label}" for label in labels])
    for name, tally in shown:
        share = tally.total / everything if everything else 0.0
        cells = [
            name,
            f"{tally.calls:,}",
            f"{tally.results:,}",
            f"{percentile(tally.tokens, 50):,}",
            f"{percentile(tally.tokens, 95):,}",
            f"{max(tally.tokens, default=0):,}",
            f"{tally.total:,}",
            f"{share:.1%}",
        ]
        ends = [f"{total.resident_by_tool[label].get(name, 0):,}" for label in labels]
        table.add(*cells, *ends)
    if left:
        table.note = f"{left} more tools below {shown[-1][1].total:,} tokens (--top, --json)"
    elif not ranked:
        table.note = "no tool results"
    return table


def savings_table(result: Analysis, groups: dict[str, Figures], total: Figures) -> Table:
    """Per group (none: the total alone) and in total, each strategy against no clearing."""
    table = Table(
        f"What clearing would change (cache: {_cache_name(result.cache)})",
        [
            "",
            "strategy",
            ">resident peak",
            ">resident end",
            ">",
            ">billed",
            ">",
            ">billed cached",
            ">",
            ">breaks",
            ">worse",
        ],
    )
    table.note = "\n".join(NOTES)
    for name, figures in [*groups.items(), ("TOTAL", total)]:
        labels = result.labels
        base = figures.strategies[labels[0]]
        for i, label in enumerate(labels):
            t = figures.strategies[label]
            style: Style = "bold" if name == "TOTAL" else ""
            table.add(
                name if i == 0 else "",
                label,
                f"{t.resident_peak:,}",
                f"{t.resident_end:,}",
                _ratio(t.resident_ratio, label),
                f"{t.billed:,}",
                _ratio(t.billed / base.billed if base.billed else 1.0, label),
                f"{round(t.cached):,}",
                _ratio(t.cost_ratio, label),
                f"{t.breaks:,}",
                _worse(t, label),
                style=style,
                end_section=i == len(labels) - 1,
            )
    return table


def _ratio(value: float, label: str) -> Cell:
    if label == "no clearing":
        return Cell("", "")
    style: Style = "good" if value < 1 - 1e-9 else "bad" if value > 1 + 1e-9 else ""
    return Cell(f"{value:.2f}x", style)


def _worse(t: Totals, label: str) -> Cell:
    if label == "no clearing":
        return Cell("")
    return Cell(f"{t.worse}/{t.runs}", "bad" if t.worse else "")


def _cache_name(cache: CachePricing | None) -> str:
    if cache is None:
        return "none, every input token at the full price"
    return f"{cache.name}, reads {cache.read:g}x, writes {cache.write:g}x the input price"


def _ledger(label: str, series: RoundSeries, every: int | None) -> Table:
    rounds = len(series.runs)
    step = every or max(1, -(-rounds // 20))
    table = Table(
        f"Per-round ledger: {label} (round r adds up round r of every run that reached it)",
        [
            ">round",
            ">runs",
            ">input",
            ">tool",
            ">cache read",
            ">cache write",
            ">breaks",
            ">cleared",
        ],
    )
    for i in range(rounds):
        if (i + 1) % step and i != rounds - 1:
            continue
        table.add(
            str(i + 1),
            *(
                f"{getattr(series, name)[i]:,}"
                for name in (
                    "runs",
                    "input_tokens",
                    "tool_tokens",
                    "cache_read",
                    "cache_write",
                    "cache_breaks",
                    "cleared",
                )
            ),
        )
    return table


def plot(result: Analysis, path: str) -> None:
    """Draw resident tool tokens and the cumulative bill per round, every run added up."""
    total = result.total
    curves = [
        Curve(label, total.series[label].tool_tokens, total.series[label].cost(result.cache))
        for label in result.labels
    ]
    runs = total.runs
    what = f"{runs:,} runs added up by round" if runs > 1 else "1 run"
    cache = "no cache" if result.cache is None else f"{result.cache.name} cache"
    plot_rounds(
        curves,
        path,
        title=f"Resident tool tokens per round ({what})",
        billed_label=f"billed input so far\n({cache}, input-token equivalents)",
        runs=total.series[result.labels[0]].runs,
    )
