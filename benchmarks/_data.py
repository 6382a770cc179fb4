"""The log rows the core and store benchmarks search: 10 fields a row, 4 of them briefed.

``log_row(i)`` builds row ``i`` (a store benchmark builds batches of fresh rows from it);
``ROWS`` holds the 10,000 rows every decorated ``search_logs`` in the benchmarks returns.
"""

from __future__ import annotations

from typing import Any


def log_row(i: int) -> dict[str, Any]:
    """Log row ``i``: id, time, level and message, plus six fields no brief shows."""
    return {
        "id": i,
        "time": f"10-24 03:{i % 60:02d}:{i % 59:02d}",
        "level": ("ERROR", "WARN", "INFO")[i % 3],
        "message": f"upstream timeout connecting to auth-service, attempt {i}; " + "detail " * 20,
        "tenant": "acme-prod-7731",
        "trace_id": f"4bf92f3577b34da6a3ce929d0e0e{i:06d}",
        "host": f"ip-10-0-{i % 250}-17.ec2.internal",
        "pod": f"auth-proxy-7d9c-{i % 999:03d}",
        "latency_ms": i * 7 % 3000,
        "status": 504,
    }


ROWS = [log_row(i) for i in range(10_000)]
