"""slimtools analyze: peak memory against file size, and time per MB, for both file shapes.

(a) One long run: a synthetic Claude Code session (a Bash call and its ~2.5 KB result per
    round, as Claude Code writes them, ``toolUseResult`` copies included) of 50, 150 and
    500 MB. Each size is analysed in a fresh interpreter with no policy (the figures alone)
    and with the default policy (one clearing engine in replay mode), and, for scale, the
    session is loaded whole with ``iter_file`` (what ``report`` and ``clear`` hold).
(b) Many runs: a synthetic OpenHands evaluation output (one ~100 KB run a line) of 150 and
    500 MB, analysed with the default policy: memory is bounded by one run.
(d) The HTML report (``analyze --html``) of the 50 MB session: its size (goal: under 5 MB),
    the time to write it over ``analyze`` alone, and the time headless Chromium takes to
    load and draw it over an empty page (goal: a couple of seconds).
(c) Results still clearable: the 50 MB session of (a) under the default policy with
    ``clear_at_least`` out of reach, so every result stays a candidate of the cache-aware
    decision to the end; its peak RSS over the default policy's (which clears as it goes),
    per result, against the floor of what the decision needs per result (position, tokens,
    placeholder tokens, argument saving: four machine integers, 32 bytes).

The baseline is the same interpreter importing slimtools and analysing a 1 MB file (same
run); figures are peak RSS (``VmHWM``) of each child, growth over that baseline, and
MB/s. Files are generated in a temporary folder and deleted after each case.
"""

from __future__ import annotations

import gc
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._timing import PEAK_MB
from benchmarks.bench_transcripts import _openhands_line, _session_line, _write
from benchmarks.results import record
from tests._browser import FLAGS

ROOT = Path(__file__).resolve().parents[1]
SESSION_MB = (50, 150, 500)
RUNS_MB = (150, 500)

_CHILD = """
import gc, resource, sys, time
from slimtools.clearing import ClearingPolicy
from slimtools.ledger.analyze import analyze
from slimtools.transcripts import iter_file
mode, path = sys.argv[1], sys.argv[2]
gc.collect()
start = time.perf_counter()
if mode == "whole":
    loaded = list(iter_file(path))
    messages, runs = sum(len(t.messages) for t in loaded), len(loaded)
else:
    policies = {
        "none": {},
        "default": {"default": ClearingPolicy()},
        "pending": {"never": ClearingPolicy(clear_at_least=10**12)},
    }[mode]
    result = analyze(path, policies=policies)
    assert not result.errors, result.errors
    messages, runs = result.total.messages, result.total.runs
    if mode == "pending":  # every result stayed a candidate: the count, not the messages
        assert max(result.total.series["never"].cleared) == 0
        messages = result.total.tool_results
seconds = time.perf_counter() - start
print(peak_mb(), seconds, messages, runs, sep="\\t")
"""


def _child(mode: str, path: Path) -> tuple[int, float, int, int]:
    """(peak RSS in MB, seconds, messages, runs) of a fresh interpreter doing ``mode``."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK_MB + _CHILD, mode, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    rss, seconds, messages, runs = done.stdout.strip().split("\t")
    return int(rss), float(seconds), int(messages), int(runs)


def _baseline(folder: Path) -> int:
    path = folder / "small.jsonl"
    _write(path, _session_line, 1)
    rss, _, _, _ = _child("default", path)
    path.unlink()
    return rss


def one_run(folder: Path, base: int) -> None:
    print("\n(a) one Claude Code session, read message by message")
    print(
        f"    {'file MB':>8} {'messages':>9} {'mode':<16} {'peak RSS':>9} {'growth':>8}"
        f" {'KB/message':>10} {'seconds':>8} {'MB/s':>6}"
    )
    for megabytes in SESSION_MB:
        path = folder / f"session{megabytes}.jsonl"
        size = _write(path, _session_line, megabytes) / 2**20
        modes = ["none", "default"] + (["whole"] if megabytes == SESSION_MB[0] else [])
        for mode in modes:
            rss, seconds, messages, _ = _child(mode, path)
            label = {"none": "no policy", "default": "default policy", "whole": "loaded whole"}
            print(
                f"    {size:>8,.0f} {messages:>9,} {label[mode]:<16} {rss:>6,} MB {rss - base:>5,} MB"
                f" {(rss - base) * 1024 / messages:>10.2f} {seconds:>8.1f} {size / seconds:>6.1f}"
            )
            record(
                f"analyze: one Claude Code session of {size:,.0f} MB ({messages:,} messages), "
                + label[mode],
                baseline=f"import + a 1 MB session: {base} MB peak RSS",
                measured=f"{rss} MB peak RSS, {size / seconds:.0f} MB/s",
                ratio=f"{(rss - base) * 1024 / messages:.2f} KB a message",
                peak_mb=rss,
                seconds=seconds,
            )
        path.unlink()


def pending(folder: Path) -> None:
    megabytes = SESSION_MB[0]
    print(
        f"\n(c) a {megabytes} MB session whose results all stay clearable (clear_at_least out of reach)"
    )
    path = folder / f"pending{megabytes}.jsonl"
    _write(path, _session_line, megabytes)
    clears, _, _, _ = _child("default", path)
    rss, _, results, _ = _child("pending", path)
    path.unlink()
    per = (rss - clears) * 2**20 / results
    print(
        f"    {results:,} results pending at the end: peak RSS {rss} MB, {rss - clears} MB over"
        f" the default policy's {clears} MB: {per:,.0f} bytes a pending result (floor: 32)"
    )


def many_runs(folder: Path, base: int) -> None:
    print("\n(b) an OpenHands evaluation output, one run a line, default policy")
    print(
        f"    {'file MB':>8} {'runs':>6} {'peak RSS':>9} {'growth':>8} {'seconds':>8} {'MB/s':>6}"
    )
    for megabytes in RUNS_MB:
        path = folder / f"runs{megabytes}.jsonl"
        size = _write(path, _openhands_line, megabytes) / 2**20
        rss, seconds, _, runs = _child("default", path)
        print(
            f"    {size:>8,.0f} {runs:>6,} {rss:>6,} MB {rss - base:>5,} MB {seconds:>8.1f}"
            f" {size / seconds:>6.1f}"
        )
        record(
            f"analyze: an OpenHands output of {size:,.0f} MB ({runs:,} runs, one a line)",
            baseline=f"import + a 1 MB session: {base} MB peak RSS",
            measured=f"{rss} MB peak RSS, {size / seconds:.0f} MB/s",
            ratio=f"+{rss - base} MB",
            peak_mb=rss,
            seconds=seconds,
        )
        path.unlink()


def html_report(folder: Path) -> None:
    megabytes = SESSION_MB[0]
    print(f"\n(d) the HTML report of a {megabytes} MB session")
    path = folder / f"report{megabytes}.jsonl"
    size = _write(path, _session_line, megabytes) / 2**20
    page = folder / "report.html"
    command = [sys.executable, "-m", "slimtools.cli", "analyze", str(path), "--no-progress"]
    plain = _timed(command)
    with_html = _timed([*command, "--html", str(page)])
    report_mb = page.stat().st_size / 2**20
    print(
        f"    {size:,.0f} MB session: report {report_mb:.2f} MB (goal < 5), analyze {plain:.1f} s,"
        f" with --html {with_html:.1f} s ({with_html / plain:.2f}x)"
    )
    record(
        f"analyze --html: the report of a {size:,.0f} MB Claude Code session",
        baseline=f"analyze alone: {plain:.1f} s",
        measured=f"{with_html:.1f} s, a {report_mb:.2f} MB page",
        ratio=f"{with_html / plain:.2f}x",
        report_mb=report_mb,
        seconds=with_html,
    )
    loaded = _load_time(page, folder)
    if loaded is not None:
        empty, report = loaded
        print(
            f"    headless Chromium draws it {report:.2f} s after navigation (an empty page: {empty:.2f} s)"
        )
        record(
            f"analyze --html: Chromium loads the report of a {size:,.0f} MB session",
            baseline=f"an empty page: {empty:.2f} s",
            measured=f"{report:.2f} s",
            ratio=f"+{report - empty:.2f} s",
            seconds=report,
        )
    path.unlink()


def _timed(command: list[str]) -> float:
    gc.collect()
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True, cwd=ROOT)
    return time.perf_counter() - start


def _load_time(page: Path, folder: Path) -> tuple[float, float] | None:
    """Seconds from navigation to the page drawn (its script's own ``performance.now()``
    once the timeline is drawn; ``load`` for the empty page) in headless Chromium, best of
    three, for an empty page and ``page``; None where Chromium is not installed."""
    browser = shutil.which("chromium")
    if browser is None:
        print("    (chromium not installed: load time not measured)")
        return None
    empty = folder / "empty.html"
    empty.write_text(
        "<!DOCTYPE html><p>empty</p><script>addEventListener('load', function () {"
        "document.documentElement.setAttribute('data-drawn-ms', String(performance.now()))"
        "})</script>"
    )
    times = []
    for target in (empty, page):
        best = float("inf")
        for k in range(3):
            profile = folder / f"profile{k}"
            args = [browser, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", target.as_uri()]
            gc.collect()
            dom = subprocess.run(args, capture_output=True, text=True, check=True).stdout
            shutil.rmtree(profile, ignore_errors=True)
            found = re.search(r'data-drawn-ms="([0-9.]+)"', dom)
            if found is None:
                raise RuntimeError(f"{target.name} was not drawn")
            best = min(best, float(found[1]) / 1000)
        times.append(best)
    return times[0], times[1]


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench_analyze.") as name:
        folder = Path(name)
        start = time.perf_counter()
        base = _baseline(folder)
        print(f"baseline (import + analyse a 1 MB session): peak RSS {base} MB")
        one_run(folder, base)
        many_runs(folder, base)
        pending(folder)
        html_report(folder)
        print(f"    ({time.perf_counter() - start:.0f}s in all)")


if __name__ == "__main__":
    main()
