"""What failing closed costs a guarded call, as ratios within one run.

1. Reading: an allowlisted tool that returns its backend's JSON text (now read as records)
   against the same tool returning the records (the reader's cost on text), and against the
   hand-written ``json.loads`` + projection.
2. What ``deny`` costs: the same allowlisted call of 20 records with 1, 3 and 10 denied
   names and with 3 names plus a nested path, against the call without ``deny`` (the goal:
   at most 2x, flat from 1 to 10 paths); and 10,000 records paged 20 at a time against a
   ``detail=`` view (which also snapshots a reduced view of every record): every record
   loses its denied keys before the page-1 snapshot is written, the case where the cost
   shows.

Times are CPU time (``benchmarks._timing.cpu_seconds``: interleaved rounds, best round).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from benchmarks._timing import cpu_seconds
from benchmarks.results import record
from slimtools import paginate, project_fields

ALLOW = ["id", "name", "note"]
ROWS = [
    {
        "id": i,
        "name": f"user {i}",
        "ssn": f"123-45-{i:05d}",
        "tenant": f"tenant-{i % 7:04d}",
        "token": f"tok_{i:08x}",
        "note": f"note {i}",
        "x": {"y": i},
    }
    for i in range(10_000)
]
DENY = {
    "1 path": ["ssn"],
    "3 paths": ["ssn", "tenant", "token"],
    "10 paths": [
        "ssn",
        "tenant",
        "token",
        *["password", "api_key", "email", "phone", "dob", "address", "salary"],
    ],
    "3 paths + nested": ["ssn", "tenant", "token", "x.y"],
}
"""The deny lists timed, by label: names the records carry, and names they do not."""
PAGE = ROWS[:20]
PAGE_TEXT = json.dumps(PAGE)


@project_fields(ALLOW)
def records(query: str) -> list[dict[str, Any]]:
    return PAGE


@project_fields(ALLOW)
def json_text(query: str) -> str:
    return PAGE_TEXT


def by_hand(query: str) -> list[dict[str, Any]]:
    return [{k: r[k] for k in ALLOW} for r in json.loads(PAGE_TEXT)]


def _denied_page(deny: list[str]) -> Any:
    @project_fields(ALLOW, deny=deny)
    def page_denied(query: str) -> list[dict[str, Any]]:
        return PAGE

    return page_denied


DENIED_PAGES = {label: _denied_page(deny) for label, deny in DENY.items()}


def deny_floor() -> bool:
    """The least work ``deny=["ssn"]`` asks of this page, written by hand for its shape.

    Each record copied without ``ssn``, one JSON dump of the page, one look for the denied
    name in every spelling (folded) and one for each denied value in any case: what tells
    that nothing else needs masking. The call without ``deny`` plus this is the floor.
    """
    kept, values = [], []
    for row in PAGE:
        copy = row.copy()
        values.append(copy.pop("ssn"))
        kept.append(copy)
    lower = orjson.dumps(kept).decode().lower()
    folded = lower.replace("_", "").replace("-", "").replace(" ", "")
    return "ssn" in folded or any(v.lower() in lower for v in values)


@project_fields(ALLOW, deny=["ssn"])
@paginate(limit=20)
def many_denied(query: str) -> list[dict[str, Any]]:
    return ROWS


@project_fields(ALLOW, detail=[*ALLOW, "x"])
@paginate(limit=20)
def many(query: str) -> list[dict[str, Any]]:
    return ROWS


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:8.1f} us"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def main() -> None:
    """Print the two comparisons and record the cost of ``deny``."""
    calls = {
        "records": lambda: records("q"),
        "text": lambda: json_text("q"),
        "by hand": lambda: by_hand("q"),
        "many": lambda: many("q"),
        "many denied": lambda: many_denied("q"),
        "floor": deny_floor,
    }
    for label, tool in DENIED_PAGES.items():
        calls[label] = lambda tool=tool: tool("q")
    t = cpu_seconds(calls)
    base = t["records"]
    print("1. reading a JSON text result (20 records)")
    print(f"   records returned:        {_us(base)}")
    print(f"   JSON text returned:      {_us(t['text'])}  {t['text'] / base:.2f}x records")
    print(f"   json.loads + projection: {_us(t['by hand'])}  (hand-written)")
    print("2. what deny costs (20 records, the same call without deny)")
    for label in DENY:
        ratio = t[label] / base
        print(f"   {label + ':':18} {_us(t[label])}  {ratio:.2f}x")
        record(
            f"allowlisted call of 20 records with deny of {label}, against the same call "
            "without deny; CPU",
            baseline=_us(base).strip(),
            measured=_us(t[label]).strip(),
            ratio=f"{ratio:.2f}x (goal 2x)",
            baseline_s=base,
            measured_s=t[label],
        )
    floor = (base + t["floor"]) / base
    print(f"   floor (1 path):    {_us(base + t['floor'])}  {floor:.2f}x (the call + deny_floor)")
    record(
        "floor of deny=['ssn'] on 20 records: the call without deny plus the least work by "
        "hand (copy without the key, one dump, a look per name and per value); CPU",
        baseline=_us(base).strip(),
        measured=_us(base + t["floor"]).strip(),
        ratio=f"{floor:.2f}x",
        baseline_s=base,
        measured_s=base + t["floor"],
    )
    ratio = t["many denied"] / t["many"]
    print(f"   10,000 records:    {_ms(t['many denied'])}  {ratio:.2f}x a detail view")
    record(
        "10,000 records paged by 20 with deny=['ssn'], against a detail= view (both snapshot "
        "a view of every record); CPU",
        baseline=_ms(t["many"]),
        measured=_ms(t["many denied"]),
        ratio=f"{ratio:.2f}x",
        baseline_s=t["many"],
        measured_s=t["many denied"],
    )


if __name__ == "__main__":
    main()
