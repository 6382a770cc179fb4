"""The design article's motivating scenario: a log search that returns an envelope, not a dump.

Run it with ``make demo`` (or ``python examples/log_search.py``): it needs no network.
"""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import BaseModel, Field

from slimtools import Clip, Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.tokens import count_tokens

LEVELS = ["ERROR", "WARN", "ERROR", "INFO"]


def backend_search(query: str) -> list[dict[str, object]]:
    """A stand-in for a log backend: 12 hits, each with fields the model never needs."""
    return [
        {
            "id": 3 + i,
            "time": f"10-24 03:{12 + i:02d}",
            "level": LEVELS[i % 4],
            "message": f"upstream {query} connecting to auth-service (attempt {i + 1}); "
            "pool exhausted after 30s, retrying with backoff " + "x" * 300,
            "tenant": "acme-prod-7731",
            "trace_id": f"4bf92f3577b34da6a3ce929d0e0e{i:04d}",
            "host": f"ip-10-0-{i}-17.ec2.internal",
            "pod": f"auth-proxy-7d9c-{i:03d}",
            "stack": "Traceback (most recent call last):\n" + "  frame\n" * 40,
        }
        for i in range(12)
    ]


class LogBrief(BaseModel):
    """The allowlist: nothing else reaches the model."""

    id: int
    time: str
    level: str
    summary: Annotated[str, Clip(80)] = Field(validation_alias="message")


kit = Toolkit("logs")


@kit.tool(category="search")
@summarize_with_handle(key="id")
@paginate(limit=3)
@project_fields(LogBrief)
def search_logs(query: str) -> list[dict[str, object]]:
    """Search the logs."""
    return backend_search(query)


def main() -> None:
    """Show the raw dump, the envelope, page 2 and one record expanded by handle."""
    raw = json.dumps(backend_search("timeout"), ensure_ascii=False)
    first = search_logs("timeout")
    print("tool result the model sees:")
    print(first)
    print("\nnext page, as the hint says:")
    print(search_logs("timeout", page=2))
    print("\nexpand one record by handle: get_record(3)")
    print(kit.get_record(3)[:160] + " ...")
    print(
        "\nthe same call through the dispatcher adapters use (arguments as the model sends them):"
    )
    print(kit.call("get_record", '{"handle": "999"}').text)
    raw_tokens, slim_tokens = count_tokens(raw), count_tokens(str(first))
    print(
        f"\ntokens: raw dump {raw_tokens:,} -> envelope {slim_tokens:,} ({raw_tokens / slim_tokens:.0f}x smaller)"
    )
    print("tools to register:", ", ".join(t.name for t in kit.tools))


if __name__ == "__main__":
    main()
