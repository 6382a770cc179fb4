"""What failing closed costs a guarded call, as ratios within one run.

1. Reading: an allowlisted tool that returns its backend's JSON text (now read as records)
   against the same tool returning the records (the reader's cost on text), and against the
   hand-written ``json.loads`` + projection.
2. Masking denied values: the same allowlist with ``deny=["ssn"]`` against without, for a
   page of 20 records, and for 10,000 records paged 20 at a time against a ``detail=``
   view (which also snapshots a reduced view of every record, unmasked): the page-1
   snapshot of every record is masked too, the case where the cost shows.

Times are CPU time (``benchmarks._timing.cpu_seconds``: interleaved rounds, best round).
"""

from __future__ import annotations

import json
from typing import Any

from benchmarks._timing import cpu_seconds
from slimtools import paginate, project_fields

ALLOW = ["id", "name", "note"]
ROWS = [
    {"id": i, "name": f"user {i}", "ssn": f"123-45-{i:05d}", "note": f"note {i}", "x": {"y": i}}
    for i in range(10_000)
]
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


@project_fields(ALLOW, deny=["ssn"])
def page_denied(query: str) -> list[dict[str, Any]]:
    return PAGE


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


def main() -> None:
    """Print the two comparisons."""
    t = cpu_seconds(
        {
            "records": lambda: records("q"),
            "text": lambda: json_text("q"),
            "by hand": lambda: by_hand("q"),
            "page denied": lambda: page_denied("q"),
            "many": lambda: many("q"),
            "many denied": lambda: many_denied("q"),
        }
    )
    print("1. reading a JSON text result (20 records)")
    print(f"   records returned:        {_us(t['records'])}")
    print(f"   JSON text returned:      {_us(t['text'])}  {t['text'] / t['records']:.2f}x records")
    print(f"   json.loads + projection: {_us(t['by hand'])}  (hand-written)")
    print("2. masking denied values (deny=['ssn'] against none)")
    print(f"   20 records:     {_us(t['page denied'])}  {t['page denied'] / t['records']:.2f}x")
    ratio = t["many denied"] / t["many"]
    print(f"   10,000 records: {_us(t['many denied'])}  {ratio:.2f}x a detail view")


if __name__ == "__main__":
    main()
