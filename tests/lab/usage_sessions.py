"""Claude Code sessions with recorded usage, generated from a known tokenizer and prefix."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from slimtools.ledger.stream import RunReplay
from slimtools.transcripts import claude_code_messages

START = datetime(2026, 2, 10, 21, 0, tzinfo=timezone.utc)
MODEL = "claude-opus-4-6"


def _line(kind: str, message: dict[str, Any], n: int, at: datetime) -> dict[str, Any]:
    stamp = at.isoformat().replace("+00:00", "Z")
    return {"type": kind, "message": message, "uuid": f"u{n}", "sessionId": "s", "timestamp": stamp}


def session_lines(results: list[str], *, gaps: list[float] | None = None) -> list[dict[str, Any]]:
    """A session: a task, then one Read call per result (no usage yet), ``gaps`` seconds
    between the calls (10 s each by default)."""
    at = START
    lines = [_line("user", {"role": "user", "content": "Fix the failing test in app.py"}, 0, at)]
    for k, text in enumerate(results):
        at += timedelta(seconds=(gaps or [10.0] * len(results))[k])
        call = {"type": "tool_use", "id": f"toolu_{k}", "name": "Read", "input": {"path": f"/f{k}"}}
        reply = {"id": f"msg_{k}", "role": "assistant", "model": MODEL, "content": [call]}
        lines.append(_line("assistant", reply, 2 * k + 1, at))
        answer = [{"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": text}]
        lines.append(_line("user", {"role": "user", "content": answer}, 2 * k + 2, at))
    at += timedelta(seconds=10)
    done = {
        "id": "msg_end",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": "Done."}],
    }
    lines.append(_line("assistant", done, 2 * len(results) + 1, at))
    return lines


def _replayed(messages: list[Any]) -> tuple[Sequence[int], Sequence[int]]:
    """The tokens before each message (no clearing, ``count_tokens``) and each call's start."""
    figures = RunReplay("anthropic").add_all(messages).finish()
    return figures.offsets, figures.call_starts


def prompts_of(
    lines: list[dict[str, Any]], *, factor: float, per_message: float, prefix: int
) -> list[int]:
    """Each request's whole prompt under a tokenizer ``factor`` times ``count_tokens`` plus
    ``per_message`` a message, after a ``prefix`` of system prompt and tools."""
    tokens, starts = _replayed(claude_code_messages(lines))
    return [round(prefix + factor * tokens[s] + per_message * s) for s in starts]


SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation: the failing test in "
    "app.py was traced to the handler; six files were read.\n"
) * 8


def compacted_lines(before: list[str], after: list[str]) -> list[dict[str, Any]]:
    """A session of one Read call per result, compacted after the calls of ``before``: a
    ``compact_boundary`` system line, then the summary (a user line flagged
    ``isCompactSummary``), then the calls of ``after``."""
    lines = session_lines(before + after)
    at = 2 * len(before) + 1  # the first call after the compaction
    stamp = lines[at]["timestamp"]
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": "b", "sessionId": "s"}
    summary = _line("user", {"role": "user", "content": SUMMARY}, 900, START)
    lines[at:at] = [boundary | {"timestamp": stamp}, summary | {"isCompactSummary": True}]
    return lines


NOTIFICATION = (
    "<task-notification>\n<task-id>b0be39e</task-id>\n"
    "<output-file>/tmp/claude/tasks/b0be39e.output</output-file>\n<status>completed</status>\n"
    '<summary>Background command "Run the tests" completed (exit code 0)</summary>\n'
    "</task-notification>\nRead the output file to retrieve the result: "
    "/tmp/claude/tasks/b0be39e.output"
)
"""A background task's notification as Claude Code logs it: the user line starting a turn."""


def with_notification(lines: list[dict[str, Any]], call: int) -> list[dict[str, Any]]:
    """``lines`` with a background task's ``<task-notification>`` user line just before
    the ``call``-th model call (0-based), as Claude Code logs one when the task ends."""
    at = 2 * call + 1
    note = _line("user", {"role": "user", "content": NOTIFICATION}, 800, START)
    return [*lines[:at], note | {"timestamp": lines[at]["timestamp"]}, *lines[at:]]


def compacted_prompts(
    lines: list[dict[str, Any]], *, factor: float, per_message: float, prefix: int, added: int
) -> list[int]:
    """Each request's whole prompt, the model seeing after the compaction only the summary
    and what follows, with ``added`` tokens of context Claude Code puts back beside it."""
    messages = claude_code_messages(lines)
    tokens, starts = _replayed(messages)
    restart = next(i for i, m in enumerate(messages) if m["content"] == SUMMARY)
    out = []
    for s in starts:
        base, extra = (restart, added) if s > restart else (0, 0)
        out.append(
            round(prefix + extra + factor * (tokens[s] - tokens[base]) + per_message * (s - base))
        )
    return out


def with_usage(
    lines: list[dict[str, Any]],
    prompts: list[int],
    *,
    hour: bool = True,
    reads: list[int] | None = None,
) -> list[dict[str, Any]]:
    """``lines`` with each response's usage: it reads the previous prompt (or ``reads``)."""
    out, k = [], 0
    for line in lines:
        if line["type"] == "assistant":
            read = reads[k] if reads is not None else (prompts[k - 1] if k else 0)
            written = prompts[k] - read - 1
            split = {"ephemeral_5m_input_tokens": 0 if hour else written}
            split["ephemeral_1h_input_tokens"] = written if hour else 0
            usage = {
                "input_tokens": 1,
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written,
                "cache_creation": split,
                "output_tokens": 20,
            }
            out.append({**line, "message": {**line["message"], "usage": usage}})
            k += 1
        else:
            out.append(line)
    return out


def write_session(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


CODE = "def handler(request):\n    return {'status': 200, 'body': request.json()}\n" * 40
JSON = json.dumps([{"id": i, "name": f"row{i}", "tags": ["a", "b"]} for i in range(120)])
RESULTS = [CODE, JSON, CODE[:900], JSON[:2000], "ok", CODE + JSON]
