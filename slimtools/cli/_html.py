"""``slimtools analyze --html``: one self-contained page of where a transcript's tokens went.

Like coverage.py's ``htmlcov``, the report is made to be opened offline and attached to a bug
report: styles, script and charts are inline (SVG), it loads nothing, and every text taken
from a transcript is redacted (:func:`slimtools.redaction.redact`) and escaped. Its figures
are the very values of ``analyze --json``: each is written with ``data-figure`` (its path in
that document) and ``data-value``, so a test can read them back from the page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from importlib.resources import files
from typing import Any

from slimtools.foreign import DEFAULT_MAX_TOKENS, PAGE_TOKENS
from slimtools.ledger.timeline import RunTimeline, ToolEvent
from slimtools.redaction import redact

__all__ = ["TEXT_BUDGET", "render", "slimming_saving"]

TEXT_BUDGET = 3_000_000
"""Characters of first lines and placeholders the timeline keeps in all: the largest results
keep theirs first, so a 50 MB session still gives a report of a few megabytes."""
CHART_POINTS = 600
"""Rounds drawn per curve at most; a longer run is drawn by the largest value of each span."""
LARGEST = 20
"""Results listed under "Largest results"."""


def slimming_saving(tokens: int) -> int:
    """What zero-config slimming (``wrap()``, the proxy) saves on one result of ``tokens``:
    a result over the budget is paged, its first page at most :data:`PAGE_TOKENS`."""
    return tokens - PAGE_TOKENS if tokens > DEFAULT_MAX_TOKENS else 0


def render(document: Mapping[str, Any], timelines: Sequence[RunTimeline], *, policy: str) -> str:
    """The report page for ``document`` (what ``analyze --json`` prints) and the runs'
    ``timelines`` under the policy labelled ``policy``."""
    total = document["total"]
    parts = [
        _summary(document, policy),
        _chart(total.get("ledger", {}), document["strategies"]),
        _tools(total, timelines, document["strategies"]),
        _timeline_section(timelines, policy),
        _largest(timelines),
    ]
    files_read = len(document["files"])
    title = f"slimtools analyze: {files_read} transcript file{'s' * (files_read != 1)}"
    sub = f"{_n(total['runs'])} runs, {_n(total['model_calls'])} model calls, " + (
        f"{_n(total['tool_results'])} tool results; cache: {_cache(document['cache'])}"
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        # No request may leave the page: a shared report must open on a plane.
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{_e(title)}</title><style>{_asset('report.css')}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><p>{_e(sub)}</p></header><main>"
        + "".join(parts)
        + f"</main><script>{_asset('report.js')}</script></body></html>\n"
    )


def _summary(document: Mapping[str, Any], policy: str) -> str:
    savings = document["total"]["savings"]
    base, chosen = savings["no clearing"], savings.get(policy)
    cards = []
    bills = [(i, j, b) for i, f in enumerate(document["files"]) for j, b in enumerate(f["runs"])]
    if bills:
        recorded = sum(b["recorded_cost"] for _, _, b in bills)
        modelled = sum(b["modelled_cost"] for _, _, b in bills)
        ratio = recorded and modelled / recorded
        cards.append(
            _card(
                "recorded bill (what the session logged)",
                _sum_figure("recorded_cost", recorded),
                f"modelled: {_sum_figure('modelled_cost', modelled)} ({ratio:.2f}x)",
            )
        )
    cards.append(
        _card(
            "no clearing: billed input (cached)",
            _figure(("total", "savings", "no clearing", "billed_cached"), base["billed_cached"]),
            "resident tool tokens, peak "
            + _figure(("total", "savings", "no clearing", "resident_peak"), base["resident_peak"]),
        )
    )
    if chosen is not None:
        key = ("total", "savings", policy)
        good = "good" if chosen["cost_ratio"] < 1 else "bad" if chosen["cost_ratio"] > 1 else ""
        cards.append(
            _card(
                f"{policy} policy: billed input (cached)",
                _figure((*key, "billed_cached"), chosen["billed_cached"]),
                f"<span class='{good}'>"
                + _figure(
                    (*key, "cost_ratio"), chosen["cost_ratio"], f"{chosen['cost_ratio']:.2f}x"
                )
                + "</span> of no clearing; resident peak "
                + _figure((*key, "resident_peak"), chosen["resident_peak"]),
            )
        )
        cards.append(
            _card(
                f"{policy} policy: cache breaks it causes",
                _figure((*key, "cache_breaks"), chosen["cache_breaks"]),
                "runs it makes dearer: " + _figure((*key, "worse"), chosen["worse"]),
            )
        )
    out = "<section id='summary'><h2>The bill</h2><div class='cards'>" + "".join(cards) + "</div>"
    out += "<p class='note'>Billed input in input-token equivalents at the cache prices above. "
    if bills:
        out += "The recorded and modelled bills price each whole prompt as the session logged "
        out += "it (system prompt and tool definitions included); the ledger's bills price the "
        out += "history the transcript holds, with and without clearing. "
    out += "The policy's breaks are modelled: each is a model call whose cached prefix its "
    out += "clearing cut.</p>"
    if bills:
        out += _bills_table(bills)
    return out + "</section>"


def _bills_table(bills: Iterable[tuple[int, int, Mapping[str, Any]]]) -> str:
    rows = []
    for i, j, b in bills:
        key = ("files", i, "runs", j)
        causes: dict[str, int] = {}
        for brk in b["breaks"]:
            causes[brk["cause"]] = causes.get(brk["cause"], 0) + 1
        cells = ", ".join(f"{n} {_e(redact(str(c)))}" for c, n in causes.items()) or "none"
        ratio = f"{b['ratio']:.2f}x"
        rows.append(
            f"<tr><td>{_e(redact(b['name']))}</td>"
            f"<td>{_figure((*key, 'requests'), b['requests'])}</td>"
            f"<td>{_figure((*key, 'recorded_cost'), b['recorded_cost'])}</td>"
            f"<td>{_figure((*key, 'modelled_cost'), b['modelled_cost'])}</td>"
            f"<td>{_figure((*key, 'ratio'), b['ratio'], ratio)}</td>"
            f"<td class='text'>{cells}</td></tr>"
        )
    return (
        "<h2 style='margin-top:14px'>Recorded runs and their cache breaks</h2><table>"
        "<tr><th>run</th><th>model calls</th><th>recorded</th><th>modelled</th>"
        "<th>modelled / recorded</th><th class='text'>cache breaks by cause</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _chart(ledger: Mapping[str, Any], labels: Sequence[str]) -> str:
    curves = [(label, list(ledger[label]["tool_tokens"])) for label in labels if label in ledger]
    rounds = max((len(c) for _, c in curves), default=0)
    head = "<section id='chart'><h2>Resident tool tokens per model call</h2>"
    if not rounds:
        return head + "<p>No model calls.</p></section>"
    width, height, left, bottom = 960, 260, 60, 24
    peak = max(max(c, default=0) for _, c in curves) or 1
    colours = ["#3b6fd8", "#d8623b", "#2a9d8f", "#8e5bd6"]
    lines, legend = [], []
    for k, (label, values) in enumerate(curves):
        points = _downsample(values, CHART_POINTS)
        span = max(len(points) - 1, 1)
        coords = " ".join(
            f"{left + (width - left - 10) * x / span:.1f},"
            f"{height - bottom - (height - bottom - 10) * y / peak:.1f}"
            for x, y in enumerate(points)
        )
        colour = colours[k % len(colours)]
        lines.append(
            f"<polyline fill='none' stroke='{colour}' stroke-width='2' points='{coords}'>"
            f"<title>{_e(label)}</title></polyline>"
        )
        legend.append(f"<span><i style='background:{colour}'></i>{_e(label)}</span>")
    axes = (
        f"<line x1='{left}' y1='{height - bottom}' x2='{width - 10}' y2='{height - bottom}' "
        "stroke='#999'/>"
        f"<line x1='{left}' y1='10' x2='{left}' y2='{height - bottom}' stroke='#999'/>"
        f"<text x='{left - 6}' y='16' text-anchor='end'>{_n(peak)}</text>"
        f"<text x='{left - 6}' y='{height - bottom}' text-anchor='end'>0</text>"
        f"<text x='{left}' y='{height - 6}'>1</text>"
        f"<text x='{width - 10}' y='{height - 6}' text-anchor='end'>{_n(rounds)}</text>"
    )
    return (
        head + f"<svg viewBox='0 0 {width} {height}' width='100%' role='img' "
        "aria-label='resident tool tokens per model call'>"
        + axes
        + "".join(lines)
        + "</svg><div class='legend'>"
        + "".join(legend)
        + "</div><p class='note'>Every run added up by model call (round r adds round r of "
        "each run that reached it).</p></section>"
    )


def _downsample(values: Sequence[int], limit: int) -> list[int]:
    """At most ``limit`` points, each the largest of its span (peaks stay visible)."""
    if len(values) <= limit:
        return list(values)
    step = len(values) / limit
    return [max(values[int(i * step) : int((i + 1) * step)] or [0]) for i in range(limit)]


def _tools(
    total: Mapping[str, Any], timelines: Sequence[RunTimeline], labels: Sequence[str]
) -> str:
    cleared: dict[str, int] = {}
    slimmed: dict[str, int] = {}
    for run in timelines:
        for e in run.events:
            if e.cleared is not None:
                cleared[e.tool] = cleared.get(e.tool, 0) + e.tokens
            slimmed[e.tool] = slimmed.get(e.tool, 0) + slimming_saving(e.tokens)
    policy_labels = [label for label in labels if label != "no clearing"]
    ends = "".join(f"<th>resident at the end: {_e(label)}</th>" for label in labels)
    rows = []
    for name, t in total["by_tool"].items():
        key = ("total", "by_tool", name)
        share = f"{t['share']:.1%}"
        end_cells = "".join(
            "<td>"
            + _figure(
                ("total", "resident_by_tool", label, name),
                total["resident_by_tool"].get(label, {}).get(name, 0),
            )
            + "</td>"
            for label in labels
        )
        rows.append(
            f"<tr><td>{_e(redact(name))}</td><td>{_figure((*key, 'calls'), t['calls'])}</td>"
            f"<td>{_figure((*key, 'tokens'), t['tokens'])}</td>"
            f"<td>{_figure((*key, 'share'), t['share'], share)}</td>"
            f"{end_cells}<td>{_n(cleared.get(name, 0))}</td>"
            f"<td>{_n(slimmed.get(name, 0))}</td></tr>"
        )
    policy = _e(policy_labels[0]) if policy_labels else "the policy"
    return (
        "<section id='tools'><h2>Per tool</h2><table><tr><th>tool</th><th>calls</th>"
        f"<th>tokens returned</th><th>share</th>{ends}<th>cleared by {policy}</th>"
        "<th>slimming would save</th></tr>"
        + "".join(rows)
        + "</table><p class='note'>Cleared: tokens of the results the policy replaced by "
        f"placeholders. Slimming: zero-config <code>wrap()</code> or proxy paging, which "
        f"shows a result over {_n(DEFAULT_MAX_TOKENS)} tokens as pages of at most "
        f"{_n(PAGE_TOKENS)}; field projection saves more where you configure it.</p></section>"
    )


def _timeline_section(timelines: Sequence[RunTimeline], policy: str) -> str:
    budget = _text_budget(timelines)
    tools: dict[str, int] = {}
    runs = []
    for run in timelines:
        events = []
        for e in run.events:
            tool = tools.setdefault(redact(e.tool), len(tools))
            keep = id(e) in budget
            events.append(
                [
                    tool,
                    e.round,
                    e.tokens,
                    e.cleared or 0,
                    int(e.is_error),
                    e.head if keep else "",
                    e.placeholder if keep else "",
                ]
            )
        runs.append({"name": redact(run.name), "events": events})
    data = {"tools": list(tools), "runs": runs}
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    options = "".join(
        f"<option value='{i}'>{_e(redact(run.name))}</option>" for i, run in enumerate(timelines)
    )
    picker = (
        f"<div class='runpick'><label>run <select id='run'>{options}</select></label></div>"
        if len(runs) > 1
        else ""
    )
    return (
        "<section id='timeline'><h2>Tool calls, in order</h2>"
        f"<p class='note'>One bar per result, its height growing with its tokens; faint, "
        f"outlined bars are the ones the {_e(policy)} policy clears. Hover for the tool, "
        f"click for the result's first lines and its placeholder.</p>{picker}"
        "<div id='strip'></div><div id='detail'></div>"
        f"<script type='application/json' id='timeline-data'>{payload}</script></section>"
    )


def _text_budget(timelines: Sequence[RunTimeline]) -> set[int]:
    """The events (by id) that keep their texts: the largest first, within TEXT_BUDGET."""
    events = sorted((e for run in timelines for e in run.events), key=lambda e: -e.tokens)
    kept, used = set(), 0
    for e in events:
        used += len(e.head) + len(e.placeholder)
        if used > TEXT_BUDGET:
            break
        kept.add(id(e))
    return kept


def _largest(timelines: Sequence[RunTimeline]) -> str:
    ranked: list[tuple[str, ToolEvent]] = sorted(
        ((run.name, e) for run in timelines for e in run.events), key=lambda p: -p[1].tokens
    )[:LARGEST]
    rows = "".join(
        f"<tr><td>{_e(redact(e.tool))}</td><td>{_n(e.tokens)}</td><td>{e.round}</td>"
        f"<td>{'' if e.cleared is None else e.cleared}</td>"
        f"<td class='text'><pre>{_e(e.head)}</pre></td></tr>"
        for _, e in ranked
    )
    return (
        "<section id='largest'><h2>Largest results</h2><table><tr><th>tool</th><th>tokens</th>"
        "<th>read at call</th><th>cleared at call</th><th class='text'>first lines</th></tr>"
        + rows
        + "</table></section>"
    )


def _card(label: str, value: str, sub: str) -> str:
    return (
        f"<div class='card'><div class='label'>{_e(label)}</div><div class='value'>{value}</div>"
        f"<div class='sub'>{sub}</div></div>"
    )


def _figure(path: tuple[str | int, ...], value: Any, shown: str | None = None) -> str:
    """A figure of the ``analyze --json`` document at ``path`` (its keys and indexes,
    written as a JSON array), readable back from the page."""
    text = shown if shown is not None else _n(value)
    keys = [redact(k) if isinstance(k, str) else k for k in path]
    return (
        f"<span data-figure='{_e(json.dumps(keys))}' data-value='{_e(json.dumps(value))}'>"
        f"{_e(text)}</span>"
    )


def _sum_figure(name: str, value: int) -> str:
    """A sum over the recorded runs of ``files.*.runs.*.<name>``."""
    return f"<span data-sum='{name}' data-value='{value}'>{_n(value)}</span>"


def _cache(cache: Mapping[str, Any] | None) -> str:
    if cache is None:
        return "none, every input token at the full price"
    return f"{cache['name']} (reads {cache['read']:g}x, writes {cache['write']:g}x the input price)"


def _n(value: Any) -> str:
    return f"{round(value):,}" if isinstance(value, (int, float)) else str(value)


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _asset(name: str) -> str:
    return files("slimtools.cli").joinpath(name).read_text(encoding="utf-8")
