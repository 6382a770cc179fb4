"""Transcript loading: memory against file size, and load time against parsing alone.

(a) Streaming. A synthetic OpenHands evaluation output of about 300 MB (one run a line, as
    OpenHands writes them; generated in a temporary folder and deleted after) is iterated
    with ``iter_transcripts`` in a fresh interpreter, whose peak RSS is reported against the
    file size and against the same interpreter loading just one run (the baseline, same
    run). Goal: memory bounded by a run, not by the file.
(b) ``clear_file`` then ``restore_file`` on a 100 MB file of the same runs, each in its own
    interpreter: time, peak RSS, output and audit sizes, and whether the restored file is
    byte-identical.
(c) One run. A single Claude Code session of about 60 MB is one history: it is held whole,
    so its peak RSS grows with the file; reported for scale.
(d) Load time of every file in ../shared/data/transcripts (best of 3 each) against parsing
    the same file with orjson alone (the baseline, same run).

Each memory figure comes from its own child process (``ru_maxrss``), so one case's garbage
cannot bill the next; timings run after ``gc.collect()``.
"""

from __future__ import annotations

import filecmp
import gc
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from benchmarks._timing import PEAK_MB, SHARED_DATA
from benchmarks.results import record
from slimtools.transcripts import load_file

RUN_MB, CLEAR_MB, SESSION_MB = 300, 100, 60
ROOT = Path(__file__).resolve().parents[1]


def _observation(i: int) -> str:
    return "\n".join(f"{i}:{k} drwxr-xr-x 2 root root 4096 src/module_{k}.py" for k in range(50))


def _openhands_line(n: int) -> bytes:
    """One evaluation-output line: a run of 20 tool calls, about 100 KB."""
    history: list[dict] = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "Fix it."}}
    ]
    for i in range(20):
        action = {
            "id": len(history),
            "source": "agent",
            "action": "run",
            "args": {"command": f"ls -la src/{i}", "thought": "Look around."},
        }
        history.append(action)
        history.append(
            {
                "id": len(history),
                "source": "agent",
                "cause": action["id"],
                "observation": "run",
                "content": _observation(i),
                "extras": {"exit_code": 0},
            }
        )
    history.append(
        {"id": len(history), "source": "agent", "action": "finish", "args": {"thought": "Done."}}
    )
    return orjson.dumps({"instance_id": f"repo__issue-{n}", "history": history}) + b"\n"


def _session_line(n: int) -> bytes:
    """Two Claude Code lines: a Bash call and its result, about 5 KB."""
    use = {
        "type": "assistant",
        "uuid": f"a{n}",
        "sessionId": "s",
        "message": {
            "id": f"m{n}",
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "ls"}}
            ],
        },
    }
    result = {
        "type": "user",
        "uuid": f"u{n}",
        "sessionId": "s",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": f"t{n}", "content": _observation(n)}
            ],
        },
        "toolUseResult": {"stdout": _observation(n)},
    }
    return orjson.dumps(use) + b"\n" + orjson.dumps(result) + b"\n"


def _write(path: Path, line: object, megabytes: int) -> int:
    """Write lines from ``line(n)`` until the file holds ``megabytes``; its size in bytes."""
    size, n = 0, 0
    with path.open("wb", buffering=1 << 20) as fh:
        while size < megabytes << 20:
            chunk = line(n)  # type: ignore[operator]
            fh.write(chunk)
            size += len(chunk)
            n += 1
    return size


_CHILD = """
import resource, sys, time
from pathlib import Path
from slimtools.transcripts import iter_transcripts, clear_file, restore_file, iter_file
mode, path = sys.argv[1], Path(sys.argv[2])
folder = path.parent
start = time.perf_counter()
if mode == "one":
    result = len(next(iter_file(path)).messages)
elif mode == "all":
    result = sum(1 for t in iter_transcripts(path))
elif mode == "clear":
    done = clear_file(path, folder / "cleared.jsonl", audit=folder / "audit.jsonl")
    result = f"{done.cleared:,} of {done.results:,} results in {done.runs:,} runs cleared"
else:
    result = restore_file(folder / "cleared.jsonl", folder / "audit.jsonl", folder / "restored.jsonl")
seconds = time.perf_counter() - start
print(peak_mb(), seconds, result, sep="\\t")
"""


def _child(mode: str, path: Path) -> tuple[int, float, str]:
    """(peak RSS in MB, seconds, result) of a fresh interpreter doing ``mode`` on ``path``."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK_MB + _CHILD, mode, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    rss, seconds, result = done.stdout.strip().split("\t")
    return int(rss), float(seconds), result


def streaming(folder: Path) -> None:
    print(f"\n(a) streaming a {RUN_MB} MB OpenHands evaluation output (one run a line)")
    path = folder / "output.jsonl"
    start = time.perf_counter()
    size = _write(path, _openhands_line, RUN_MB)
    print(f"    generated {size / 2**20:,.0f} MB in {time.perf_counter() - start:.1f}s")
    base_rss, _, _ = _child("one", path)
    rss, seconds, runs = _child("all", path)
    print(f"    baseline (import + one run): peak RSS {base_rss} MB")
    print(
        f"    iterating all {runs} runs:       peak RSS {rss} MB in {seconds:.1f}s ({size / 2**20 / seconds:,.0f} MB/s)"
    )
    print(
        f"    growth over baseline: {rss - base_rss} MB for a {size / 2**20:,.0f} MB file ({(rss - base_rss) / (size / 2**20):.3f} MB per file MB)"
    )
    record(
        f"transcripts: iterating a {size / 2**20:,.0f} MB file of {runs} OpenHands runs",
        baseline=f"one run loaded: {base_rss} MB peak RSS",
        measured=f"{rss} MB peak RSS, {size / 2**20 / seconds:,.0f} MB/s",
        ratio=f"+{rss - base_rss} MB",
        peak_mb=rss,
        seconds=seconds,
    )
    path.unlink()


def clear_and_restore(folder: Path) -> None:
    path = folder / "runs.jsonl"
    size = _write(path, _openhands_line, CLEAR_MB)
    print(f"\n(b) clear_file, then restore_file, on a {size / 2**20:,.0f} MB file of the same runs")
    rss, seconds, result = _child("clear", path)
    cleared, audit = folder / "cleared.jsonl", folder / "audit.jsonl"
    print(f"    clear:   {seconds:5.1f}s, peak RSS {rss} MB; {result}")
    print(
        f"             wrote {cleared.stat().st_size / 2**20:,.0f} MB and an audit of"
        f" {audit.stat().st_size / 2**20:,.0f} MB"
    )
    rss, seconds, result = _child("restore", path)
    same = filecmp.cmp(path, folder / "restored.jsonl", shallow=False)
    print(
        f"    restore: {seconds:5.1f}s, peak RSS {rss} MB; {result} values put back, byte-identical: {same}"
    )
    record(
        f"transcripts: clear_file then restore_file, {size / 2**20:,.0f} MB file",
        baseline="the original file",
        measured=f"restore peak RSS {rss} MB, {seconds:.1f} s",
        ratio="byte-identical round trip" if same else "NOT byte-identical",
        peak_mb=rss,
    )


def one_run(folder: Path) -> None:
    print(f"\n(c) one {SESSION_MB} MB Claude Code session (one run: held whole)")
    path = folder / "session.jsonl"
    size = _write(path, _session_line, SESSION_MB)
    base_rss, _, _ = _child("one", folder / "runs.jsonl")
    rss, seconds, _ = _child("all", path)
    print(
        f"    peak RSS {rss} MB for a {size / 2**20:,.0f} MB file ({(rss - base_rss) / (size / 2**20):.2f} MB per file MB over the baseline) in {seconds:.1f}s"
    )


def _parse_only(path: Path) -> None:
    if path.suffix == ".jsonl":
        with path.open("rb") as fh:
            for line in fh:
                if line.strip():
                    orjson.loads(line)
    else:
        orjson.loads(path.read_bytes())


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def load_times() -> None:
    folder = SHARED_DATA / "transcripts"
    print(f"\n(d) load time per file in {folder}")
    if not folder.is_dir():
        print("    shared data not found; skipped")
        return
    rows: dict[str, list[float]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        (source,) = {t.source for t in load_file(path)}
        parse = _best(lambda path=path: _parse_only(path))
        load = _best(lambda path=path: load_file(path))
        row = rows.setdefault(source, [0, 0, 0.0, 0.0])
        row[0] += 1
        row[1] += path.stat().st_size
        row[2] += parse
        row[3] += load
    print(
        f"    {'source':<16} {'files':>5} {'MB':>6} {'orjson parse':>13} {'load':>9} {'ratio':>6} {'ms/file':>8} {'MB/s':>6}"
    )
    for source, (files, size, parse, load) in rows.items():
        print(
            f"    {source:<16} {files:>5} {size / 2**20:>6.1f} {parse * 1000:>10.1f} ms {load * 1000:>6.1f} ms"
            f" {load / parse:>5.1f}x {load * 1000 / files:>8.2f} {size / 2**20 / load:>6.0f}"
        )
        record(
            f"transcripts: loading each recorded {source} file ({files})",
            baseline=f"orjson parse alone: {parse * 1000:.1f} ms",
            measured=f"{load * 1000:.1f} ms",
            ratio=f"{load / parse:.1f}x",
            parse_s=parse,
            load_s=load,
        )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench_transcripts.") as name:
        folder = Path(name)
        streaming(folder)
        clear_and_restore(folder)
        one_run(folder)
    load_times()


if __name__ == "__main__":
    main()
