"""Structured benchmark results: each bench records its headline rows with one call.

A bench calls :func:`record` next to the line it prints; ``python -m benchmarks`` then
writes each bench's rows, with the date, the machine's core count and the Python version,
to ``docs/benchmarks/<bench>.json`` and renders the docs' benchmark page from every such
file (:mod:`benchmarks.render`). Figures on the page therefore come from a run, never from
a hand copy. Adding a bench is writing ``benchmarks/bench_<name>.py`` with a ``main()`` that
calls ``record(...)`` for each figure worth quoting.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parents[1] / "docs" / "benchmarks"
"""Where ``python -m benchmarks`` writes one JSON file per bench it ran."""


@dataclass(frozen=True)
class Row:
    """One figure: what was measured, against which same-run baseline, and the ratio.

    ``baseline``, ``measured`` and ``ratio`` are the page's text (``"29.3 µs"``,
    ``"1.37x"``); ``values`` holds the raw numbers behind them for machines.
    """

    what: str
    baseline: str
    measured: str
    ratio: str
    values: dict[str, float] = field(default_factory=dict)


_ROWS: dict[str, list[Row]] = {}


def _caller_bench(depth: int = 2) -> str:
    """The bench a call comes from: its module's name (``bench_core``)."""
    frame = sys._getframe(depth)
    spec = frame.f_globals.get("__spec__")
    name = spec.name if spec is not None else frame.f_globals.get("__name__", "bench")
    return str(name).rpartition(".")[2]


def record(
    what: str,
    *,
    baseline: str,
    measured: str,
    ratio: str,
    bench: str | None = None,
    **values: float,
) -> Row:
    """Record one row of the calling bench's table (its module name unless ``bench=``)."""
    row = Row(what, baseline, measured, ratio, {k: float(v) for k, v in values.items()})
    _ROWS.setdefault(bench or _caller_bench(), []).append(row)
    return row


def rows(bench: str) -> list[Row]:
    """The rows recorded so far by ``bench``."""
    return list(_ROWS.get(bench, []))


def clear(bench: str) -> None:
    """Forget what ``bench`` recorded (before running it again)."""
    _ROWS.pop(bench, None)


def document(
    bench: str, *, title: str, seconds: float, now: datetime | None = None
) -> dict[str, Any]:
    """The JSON document of one bench's run: its rows and where and when they were measured."""
    when = (now or datetime.now(timezone.utc)).replace(microsecond=0)
    return {
        "bench": bench,
        "title": title,
        "date": when.isoformat().replace("+00:00", "Z"),
        "cores": os.cpu_count() or 1,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "seconds": round(seconds, 1),
        "rows": [asdict(row) for row in rows(bench)],
    }


def write(doc: dict[str, Any], folder: Path = RESULTS_DIR) -> Path:
    """Write one bench's document as ``folder/<bench>.json`` (stable key order, one file a bench)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{doc['bench']}.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load(folder: Path = RESULTS_DIR) -> list[dict[str, Any]]:
    """Every bench document in ``folder``, sorted by bench name."""
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    return sorted(docs, key=lambda d: str(d["bench"]))
