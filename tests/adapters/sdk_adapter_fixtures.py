"""A small ticket toolkit and the untrusted-argument cases shared by the adapter tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle

ROOT = Path(__file__).resolve().parents[2]

TICKETS = [
    {
        "id": i,
        "title": f"login timeout on node {i}" if i % 2 else f"payment failed #{i}",
        "status": "open" if i % 3 else "closed",
        "body": "stack trace " * 40,
        "tenant": "acme-internal",
    }
    for i in range(1, 25)
]
"""24 tickets, 12 of them about a login timeout; body and tenant must never reach the model."""


class TicketBrief(BaseModel):
    """The allowlist: what the model sees of a ticket."""

    id: int
    title: str
    status: str


def make_kit(name: str = "tickets") -> Toolkit:
    """A fresh toolkit: a slimmed search (page of 3, handles by id) and a tool that fails."""
    kit = Toolkit(name)

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=3)
    @project_fields(TicketBrief)
    def search_tickets(query: str) -> list[dict[str, Any]]:
        """Search support tickets whose title contains the query."""
        return [t for t in TICKETS if query in t["title"]]

    @kit.tool
    def explode(reason: str) -> str:
        """Always fails (to check that a failing tool informs the model)."""
        raise RuntimeError(reason)

    return kit


@dataclass(frozen=True)
class Untrusted:
    """One kind of bad call a model makes, and what its result must say."""

    id: str
    tool: str
    arguments: str
    is_error: bool
    says: str

    @property
    def object_arguments(self) -> dict[str, Any] | None:
        """The arguments when they are a JSON object, the only kind some frameworks carry."""
        try:
            value = json.loads(self.arguments)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


UNTRUSTED = [
    Untrusted("malformed-json", "search_tickets", '{"query": "timeout"', True, "JSON"),
    Untrusted("wrong-type", "search_tickets", '{"query": "timeout", "page": "two"}', True, "page"),
    Untrusted("unknown-field", "search_tickets", '{"query": "x", "color": 1}', True, "color"),
    Untrusted("missing-required", "search_tickets", "{}", True, "query"),
    Untrusted("not-an-object", "search_tickets", '["timeout"]', True, "object"),
    Untrusted("page-past-end", "search_tickets", '{"query": "timeout", "page": 99}', False, "page"),
    Untrusted("unknown-handle", "get_record", '{"handle": "nope42"}', True, "nope42"),
    Untrusted("tool-raises", "explode", '{"reason": "disk on fire"}', True, "disk on fire"),
]
"""Every case returns a result the model can act on; none raises out of the agent loop."""

OBJECT_CASES = [case for case in UNTRUSTED if case.object_arguments is not None]
"""The cases a framework that carries arguments as a JSON object (LangChain, MCP) can send."""


def first_brief_id(envelope_text: str) -> Any:
    """The handle (``id``) of the first brief of an envelope the model was sent."""
    return orjson.loads(envelope_text)["briefs"][0]["id"]


def import_error_without(framework: str, adapter: str) -> str:
    """Import ``adapter`` in a fresh interpreter where ``framework`` is missing; its stderr."""
    code = f"import sys; sys.modules[{framework!r}] = None; import {adapter}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode != 0
    return done.stderr
