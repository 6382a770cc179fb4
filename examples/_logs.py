"""The log-search toolkit the LangChain and MCP examples share.

A fake backend of 12 log rows, the ``LogBrief`` allowlist and ``kit``, a Toolkit holding
one slimmed tool, ``search_logs`` (3 briefs a page, each row's ``id`` as its handle). Each
example imports ``kit`` and shows only its framework's part.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, Field

from slimtools import Clip, Toolkit, paginate, project_fields, summarize_with_handle

SERVICES = ["auth", "billing", "search"]
LOGS = [  # the backend: 12 rows, with fields the model never needs to see
    {
        "id": i,
        "time": f"10-24 03:{i:02d}",
        "level": "ERROR" if i % 2 else "WARN",
        "message": f"upstream timeout connecting to {SERVICES[i % 3]}-service after 30s "
        f"(attempt {i}); pool exhausted, retrying with backoff",
        "tenant": "acme-prod-7731",
        "trace_id": f"{i:032x}",
    }
    for i in range(1, 13)
]


class LogBrief(BaseModel):
    """What the model sees of one row: nothing else leaves the backend."""

    id: int
    time: str
    level: str
    summary: Annotated[str, Clip(48)] = Field(validation_alias="message")


kit = Toolkit("logs")


@kit.tool(category="search")
@summarize_with_handle(key="id")
@paginate(limit=3)
@project_fields(LogBrief)
def search_logs(query: str) -> list[dict[str, Any]]:
    """Search the service logs for a word."""
    return [row for row in LOGS if query in row["message"]]


def signature(name: str, schema: dict[str, Any]) -> str:
    """A tool as the model sees it, e.g. ``search_logs(query: string, page: integer = 1)``."""
    args = []
    for arg, prop in schema["properties"].items():
        kind = prop.get("type") or "|".join(v["type"] for v in prop.get("anyOf", []))
        default = f" = {json.dumps(prop['default'])}" if "default" in prop else ""
        args.append(f"{arg}: {kind}{default}")
    return f"{name}({', '.join(args)})"
