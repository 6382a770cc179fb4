"""A small log toolkit shared by the LangChain and MCP adapter tests.

It has one tool of each shape an adapter must carry: a paginated record search with handles
by id (sync), a long text kept under a generated handle (sync), and a record tool with
generated handles (async); plus the ``get_record`` companion.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from pydantic import BaseModel, Field

from slimtools import Clip, Toolkit, paginate, project_fields, summarize_with_handle

SERVICES = ["auth", "billing", "search"]

LOGS = [
    {
        "id": i,
        "time": f"10-24 03:{i:02d}",
        "level": "ERROR" if i % 2 else "WARN",
        "message": f"upstream timeout connecting to {SERVICES[i % 3]}-service after 30s "
        f"(attempt {i}); retrying with backoff",
        "tenant": "acme-prod-7731",
        "trace_id": f"{i:032x}",
    }
    for i in range(1, 13)
]
"""12 log rows; ``tenant`` and ``trace_id`` must never reach the model in a brief."""

LOG_TEXT = "\n".join(f"03:{i:02d} worker-{i % 4} heartbeat ok" for i in range(1, 31))
"""A 30-line log file for the text tool."""


class LogBrief(BaseModel):
    """The allowlist: what the model sees of one log row (message renamed and clipped)."""

    id: int
    time: str
    level: str
    summary: Annotated[str, Clip(40)] = Field(validation_alias="message")


def make_log_kit(name: str = "logs") -> Toolkit:
    """A fresh toolkit: search_logs (page of 3, handles by id), read_log, recent_errors."""
    kit = Toolkit(name)

    @kit.tool(category="search")
    @summarize_with_handle(key="id")
    @paginate(limit=3, max_limit=5)
    @project_fields(LogBrief)
    def search_logs(query: str) -> list[dict[str, Any]]:
        """Search the service logs for a word."""
        return [row for row in LOGS if query in row["message"]]

    @kit.tool(category="read")
    @summarize_with_handle(head=4)
    def read_log(path: str) -> str:
        """Read a log file (first lines, then get_record for more)."""
        return LOG_TEXT

    @kit.tool
    @summarize_with_handle
    @project_fields(["id", "level"])
    async def recent_errors(count: int = 2) -> list[dict[str, Any]]:
        """The most recent error rows (async backend)."""
        await asyncio.sleep(0)
        return [row for row in LOGS if row["level"] == "ERROR"][:count]

    return kit
