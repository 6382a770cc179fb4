"""Render ``docs/benchmarks.md`` from the benches' recorded results (``docs/benchmarks/*.json``).

It also renders the README's few headline ratios (between ``<!-- bench-headlines -->``
markers), each linked to its bench's section of the page, and the figures the guides give in
prose: the text between ``<!-- bench-figure: NAME -->`` and ``<!-- /bench-figure -->`` in
any docs page is :data:`FIGURES` ``[NAME]`` filled from its bench's recorded row.

``python -m benchmarks`` runs this at the end; ``python -m benchmarks.render`` re-renders
the page from the committed results alone, and ``tests/project/test_bench_results.py`` checks that
the committed page is what this module makes of them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import bench_recall
from benchmarks.results import RESULTS_DIR, load

PAGE = RESULTS_DIR.parent / "benchmarks.md"
README = RESULTS_DIR.parents[1] / "README.md"
HEADLINES = (
    (
        "bench_core",
        "tokens: raw JSON",
        "- on {what_tail}, envelopes are **{ratio}** than the raw JSON "
        "([bench_core](docs/benchmarks.md#bench_core));",
    ),
    (
        "bench_proxy",
        "proxy, GitHub responses",
        "- through the proxy, recorded GitHub responses are **{ratio}** "
        "([bench_proxy](docs/benchmarks.md#bench_proxy));",
    ),
    (
        "bench_clearing",
        "one clearing pass, 1,000 LangChain turns",
        "- one default clearing pass over 1,000 LangChain turns runs at **{ratio}** of "
        "LangChain's `ClearToolUsesEdit` ({measured} against {baseline_value}),",
    ),
    (
        "bench_clearing",
        "one clearing pass, 10,000 LangChain turns",
        "  over 10,000 turns at **{ratio}** ({measured} against {baseline_value});",
    ),
    (
        "bench_clearing",
        "speed budget: one default pass, 10x the history",
        "- ten times the history costs the default pass **{measured}** (budget at most 12x; "
        "it varies with the machine's load: [speed](docs/clearing.md#speed));",
    ),
    (
        "bench_clearing",
        "superseded results alone, ALL",
        "- clearing superseded results alone (the same call again, a re-read after a write) "
        "frees **{row[values][freed_tokens]:,.0f} resident tokens** at "
        "{row[values][cost]:.3f}x the cost of no clearing;",
    ),
    (
        "bench_bill",
        "modelled bill against the recorded one, no clearing, every main session",
        "- the ledger's modelled bill of the recorded Claude Code sessions, without clearing, "
        "is **{measured}** of what they recorded ({ratio}; [measure](docs/measure.md));",
    ),
    (
        "bench_clearing",
        "slimtools default:",
        "- on the recorded transcripts, the default clearing policy's cached cost / resident "
        "tool tokens are **{measured}** of no clearing's "
        "([bench_clearing](docs/benchmarks.md#bench_clearing)).",
    ),
)
"""The README's headline ratios: (bench, the start of the row's ``what``, the line quoting it)."""
_START, _END = "<!-- bench-headlines -->", "<!-- /bench-headlines -->"


def _recall_heads_table() -> str:
    """The recall guide's table of readable answers, head by scenario (bench_recall's row)."""
    lines = [
        "| head | " + " | ".join(bench_recall.SCENARIOS) + " |",
        "|---|" + "---|" * len(bench_recall.SCENARIOS),
    ]
    for head in bench_recall.HEADS:
        cells = (f"{{v[{s}_{head}]:.0f}}/{{v[n]:.0f}}" for s in bench_recall.SCENARIOS)
        lines.append(f"| {head} | " + " | ".join(cells) + " |")
    return "\n\n" + "\n".join(lines) + "\n\n"


FIGURES: dict[str, tuple[str, str, str]] = {
    "sqlite-space": (
        "bench_stores",
        "SQLite store file",
        "{v[snapshot_mb]:.1f} MB snapshot make a {v[full_mb]:.0f} MB file, which stays at "
        "{v[later_mb]:.0f} MB while the calls go on an hour later and drops to "
        "{v[expired_mb]:.2f} MB once they expire (a file made without auto-vacuum: "
        "{v[base_expired_mb]:.0f} MB)",
    ),
    "redis-hung": (
        "bench_stores",
        "Redis store hung",
        "{v[page1_s]:.1f} s for page 1, {v[page2_s]:.1f} s for page 2 and "
        "{v[get_record_s]:.1f} s for `get_record`",
    ),
    "recall-wilson": (
        "bench_recall",
        "Wilson 95% interval",
        "With n = {v[n]:.0f} a behaviour never seen still has an upper bound of "
        "{v[none_high]:.0%}, and {v[k]:.0f} of {v[n]:.0f} spans {v[k_low]:.0%} to {v[k_high]:.0%}",
    ),
    "recall-head-cost": (
        "bench_recall",
        "recall, round 3's placeholder tokens",
        "on 1,000 cleared results a 200-character head costs about "
        "{v[extra_200_per_1000]:,.0f} tokens more than none",
    ),
    "recall-heads": ("bench_recall", "recall, answer readable", _recall_heads_table()),
    "clearing-pass-1k": (
        "bench_clearing",
        "one clearing pass, 1,000 LangChain turns",
        "{row[measured]} against {row[baseline]} ({row[ratio]})",
    ),
    "clearing-pass-10k": (
        "bench_clearing",
        "one clearing pass, 10,000 LangChain turns",
        "{row[measured]} against {row[baseline]} ({row[ratio]})",
    ),
    "clearing-pass-growth": (
        "bench_clearing",
        "speed budget: one default pass, 10x the history",
        "{v[growth]:.1f}x the time (a pass that only copies each result: {v[plain_growth]:.1f}x)",
    ),
    "clearing-budget-1k": (
        "bench_clearing",
        "speed budget: one default pass, 1,000 LangChain turns",
        "{row[measured]} against the {row[baseline]}: {row[ratio]}",
    ),
    "clearing-budget-10k": (
        "bench_clearing",
        "speed budget: one default pass, 10,000 LangChain turns",
        "{row[measured]} against the {row[baseline]}: {row[ratio]}",
    ),
    "clearing-budget-round": (
        "bench_clearing",
        "speed budget: the incremental per-round call",
        "{row[measured]} against {row[baseline]}: {row[ratio]}",
    ),
    "clearing-pass-parts": (
        "bench_clearing",
        "where a default pass's time goes, 1,000 LangChain turns",
        "the informative placeholders add {v[placeholders_ms]:.1f} ms, supersession "
        "{v[supersession_ms]:.1f} ms and the cache-aware cut {v[cache_cut_ms]:.1f} ms to a pass "
        "of {v[default_ms]:.1f} ms; without the three it takes {v[bare_ms]:.1f} ms, "
        "{v[bare_speed]:.2f}x the speed of ClearToolUsesEdit's {v[peer_ms]:.1f} ms",
    ),
    "clearing-pass-floors": (
        "bench_clearing",
        "floors of a default pass, 1,000 LangChain turns",
        "the informative floor takes {v[informative_ms]:.1f} ms ({v[informative_speed]:.2f}x "
        "the speed of ClearToolUsesEdit's {v[peer_ms]:.1f} ms) and the fused floor "
        "{v[fused_ms]:.1f} ms ({v[fused_speed]:.2f}x)",
    ),
    "clearing-in-place": (
        "bench_clearing",
        "clearing before each model call, 10,000 rounds, in place",
        "{row[measured]} against {row[baseline]}: {row[ratio]}",
    ),
}
"""Figures quoted in prose: name -> (bench, the start of the row's ``what``, the text, whose
``{v[...]}`` are the row's raw values and ``{row[...]}`` its cells)."""
_FIGURE = re.compile(
    r"<!-- bench-figure: (?P<name>[\w-]+) -->(?P<text>.*?)<!-- /bench-figure -->", re.S
)

INTRO = """\
# Benchmarks

<!-- Generated by `python -m benchmarks` (or `python -m benchmarks.render`) from
docs/benchmarks/*.json: do not edit by hand. -->

`make bench` (`python -m benchmarks`) runs every `benchmarks/bench_*.py`. Each reports
ratios against a baseline measured in the same run (CPU time, best of several rounds,
`gc.collect()` before each timed run, default settings) and records its headline rows in
`docs/benchmarks/<bench>.json` with the date, the machine's core count and the Python
version; this page is rendered from those files, so every figure on it comes from the run
named under its table. `python -m benchmarks bench_core` runs one bench and updates its
section only. On a shared 2-core machine timings are noisy to about ±20%; token counts and
ratios of tokens are exact.

The printed output of a run has more detail than these tables (per tool, per source, per
size); read it with `python -m benchmarks NAME`.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def section(doc: dict[str, Any]) -> str:
    """One bench's section: its title, the run that produced it and its table."""
    lines = [f"## {doc['bench']}", "", _cell(str(doc["title"])), ""]
    lines.append(
        f"Run of {doc['date'][:10]} ({doc['date']}) on {doc['cores']} cores ({doc['machine']}), "
        f"Python {doc['python']}, {doc['seconds']:.0f} s."
    )
    lines.append("")
    if not doc["rows"]:
        lines += ["This bench records no rows yet: its figures are in its printed output.", ""]
        return "\n".join(lines)
    lines += ["| what | baseline (same run) | slimtools | ratio |", "|---|---|---|---|"]
    for row in doc["rows"]:
        cells = (row["what"], row["baseline"], row["measured"], row["ratio"])
        lines.append("| " + " | ".join(_cell(str(c)) for c in cells) + " |")
    lines.append("")
    return "\n".join(lines)


def render(docs: Sequence[dict[str, Any]]) -> str:
    """The whole page for these bench documents (in the order given)."""
    if not docs:
        return INTRO + "\nNo results recorded yet: run `make bench`.\n"
    return INTRO + "\n" + "\n".join(section(doc) for doc in docs)


def headlines(docs: Sequence[dict[str, Any]]) -> str:
    """The README's list of headline ratios, each from its bench's recorded row."""
    by_bench = {doc["bench"]: doc for doc in docs}
    lines = []
    for bench, start, template in HEADLINES:
        rows = by_bench.get(bench, {}).get("rows", [])
        row = next((r for r in rows if str(r["what"]).startswith(start)), None)
        if row is not None:
            tail = str(row["what"]).partition(", ")[2] or str(row["what"])
            baseline_value = str(row["baseline"]).partition(": ")[2] or str(row["baseline"])
            lines.append(
                template.format(
                    ratio=row["ratio"],
                    measured=row["measured"],
                    what_tail=tail,
                    baseline_value=baseline_value,
                    row=row,
                )
            )
    return "\n".join(lines) if lines else "- no results recorded yet: run `make bench`."


def with_headlines(readme: str, docs: Sequence[dict[str, Any]]) -> str:
    """``readme`` with the text between the headline markers rendered from ``docs``."""
    head, found, rest = readme.partition(_START + "\n")
    if not found:
        return readme
    _, found, tail = rest.partition(_END)
    if not found:
        raise ValueError(f"README has {_START} without {_END}")
    return f"{head}{_START}\n{headlines(docs)}\n{_END}{tail}"


def figure(name: str, docs: Sequence[dict[str, Any]]) -> str:
    """The prose of figure ``name`` from its bench's recorded row, or how to record it."""
    if name not in FIGURES:
        raise ValueError(f"unknown bench figure {name!r}: add it to benchmarks.render.FIGURES")
    bench, start, template = FIGURES[name]
    rows = next((d.get("rows", []) for d in docs if d["bench"] == bench), [])
    row = next((r for r in rows if str(r["what"]).startswith(start)), None)
    if row is None:
        return f"(not measured yet: run `python -m benchmarks {bench}`)"
    return template.format(v=row.get("values", {}), row=row)


def with_figures(text: str, docs: Sequence[dict[str, Any]]) -> str:
    """``text`` with every ``bench-figure`` span rendered from ``docs``."""

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        return f"<!-- bench-figure: {name} -->{figure(name, docs)}<!-- /bench-figure -->"

    return _FIGURE.sub(fill, text)


def figure_pages(docs_dir: Path = PAGE.parent) -> list[Path]:
    """The docs pages that quote a bench figure in prose."""
    return [
        p
        for p in sorted(docs_dir.rglob("*.md"))
        if "<!-- bench-figure: " in p.read_text(encoding="utf-8")
    ]


def write_page(folder: Path = RESULTS_DIR, page: Path = PAGE, readme: Path = README) -> Path:
    """Render the page, the README's headline ratios and the guides' prose figures from the
    results in ``folder``."""
    docs = load(folder)
    page.write_text(render(docs), encoding="utf-8")
    if readme.is_file():
        text = readme.read_text(encoding="utf-8")
        if (new := with_headlines(text, docs)) != text:
            readme.write_text(new, encoding="utf-8")
    for guide in figure_pages(page.parent):
        text = guide.read_text(encoding="utf-8")
        if (new := with_figures(text, docs)) != text:
            guide.write_text(new, encoding="utf-8")
    return page


def main(argv: Sequence[str] = ()) -> None:
    """``python -m benchmarks.render``: re-render the page from the committed results."""
    print(f"wrote {write_page()}")


if __name__ == "__main__":
    main(sys.argv[1:])
