"""What a provider billed for each request of a recorded run: Claude Code's ``usage`` records.

Claude Code logs every model response with the API's ``usage``: ``input_tokens`` (after the
last cache breakpoint), ``cache_read_input_tokens``, ``cache_creation_input_tokens`` and its
split by lifetime in ``cache_creation.ephemeral_5m_input_tokens`` /
``ephemeral_1h_input_tokens``. A response spans several lines sharing ``message.id``; each
carries the same input figures, so the response's last line is read. The responses are kept
as the history reader keeps them (main-agent lines, or a subagent file's own lines), in the
order of their first line, so that request ``k`` here is the ``k``-th model call of the
history. Between two requests the reader notes a compaction (a ``compact_boundary`` system
line or a summary the user line flags ``isCompactSummary``), the local commands run
(``/mcp``, ``/model`` ...), which change what the next prompt holds outside the transcript,
and a background task's ``<task-notification>`` starting a turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from slimtools.instrumentation import usage_of

_COMMAND = re.compile(r"<command-name>\s*(/[\w:-]+)\s*</command-name>")
_NOTIFICATION = "<task-notification>"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One model call's recorded usage.

    Attributes:
        input: input tokens billed at the plain price (after the last cache breakpoint).
        cache_read: input tokens read from the cache.
        write_5m: input tokens written to the 5-minute cache.
        write_1h: input tokens written to the 1-hour cache.
        model: the model that answered (empty when not recorded).
        at: when the response's first line was logged (None when not recorded): the
            request was sent just before.
        ended: when its last line was logged (None when not recorded).
        compacted: a compaction happened since the previous request.
        commands: local commands (``/mcp``, ``/model`` ...) run since the previous request.
        notified: a background task's ``<task-notification>`` came since the previous
            request (Claude Code starts a turn with it when the task ends).
    """

    input: int
    cache_read: int
    write_5m: int
    write_1h: int
    model: str = ""
    at: datetime | None = None
    ended: datetime | None = None
    compacted: bool = False
    commands: tuple[str, ...] = ()
    notified: bool = False

    @property
    def cache_write(self) -> int:
        """Tokens written to either cache."""
        return self.write_5m + self.write_1h

    @property
    def prompt(self) -> int:
        """The whole prompt: every input token, however it was billed."""
        return self.input + self.cache_read + self.cache_write


@dataclass
class _Pending:
    """What happened since the last response: a compaction, local commands, a task's
    notification."""

    compacted: bool = False
    commands: list[str] = field(default_factory=list)
    notified: bool = False


def recorded_requests(records: Iterable[tuple[int, Any]]) -> list[RecordedRequest]:
    """Each response's usage from Claude Code lines, in request order (empty when none).

    Responses without a ``usage`` object are left out, so a session logged without usage
    yields an empty list rather than zeros.
    """
    collector = UsageCollector()
    for number, line in records:
        collector.add(number, line)
    return collector.requests()


_Kept = tuple[Any, dict[str, Any], _Pending]  # first timestamp, usage and model, what preceded


class UsageCollector:
    """Reads usage from a session's lines as another pass reads them (the streamed reader's
    first pass), keeping per response only its usage, model and times."""

    def __init__(self) -> None:
        self._main: dict[str, _Kept] = {}
        self._side: dict[str, _Kept] = {}
        self._pending = {"main": _Pending(), "side": _Pending()}

    def add(self, number: int, line: Any) -> None:
        """Read the next line (any line of the file, in order)."""
        if not isinstance(line, dict):
            return
        chain = "side" if line.get("isSidechain") else "main"
        if chain == "side" and self._main:
            return  # a main session's subagent lines are not its requests
        if chain == "main" and self._side and line.get("type") == "assistant":
            self._side.clear()
        responses = self._side if chain == "side" else self._main
        _note(line, self._pending[chain])
        message = line.get("message")
        if line.get("type") != "assistant" or not isinstance(message, dict):
            return
        if not isinstance(message.get("usage"), dict):
            return
        key = str(message.get("id") or f"line{number}")
        if key in responses:
            first, _, before = responses[key]
        else:
            first, before = line.get("timestamp"), self._pending[chain]
            self._pending[chain] = _Pending()
        kept = {"usage": message["usage"], "model": message.get("model")}  # not the content
        responses[key] = (first, {"message": kept, "timestamp": line.get("timestamp")}, before)

    def requests(self) -> list[RecordedRequest]:
        """The requests read so far, in order."""
        chosen = self._main or self._side
        return [_request(line, before, first) for first, line, before in chosen.values()]


def _note(line: dict[str, Any], pending: _Pending) -> None:
    """Note a compaction, a local command or a task's notification on ``line`` in what the
    next request follows."""
    if line.get("type") == "system" and line.get("subtype") == "compact_boundary":
        pending.compacted = True
    if line.get("type") != "user":
        return
    if line.get("isCompactSummary"):
        pending.compacted = True
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        pending.commands += _COMMAND.findall(content)
    pending.notified |= any(t.lstrip().startswith(_NOTIFICATION) for t in _texts(content))


def _texts(content: Any) -> list[str]:
    """A user message's text: the string, or its ``text`` blocks."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return [b["text"] for b in blocks if isinstance(b.get("text"), str)]


def _request(line: dict[str, Any], before: _Pending, first: Any) -> RecordedRequest:
    message = line["message"]
    usage = usage_of(message["usage"])  # the one reading of a usage record
    return RecordedRequest(
        input=usage.input,
        cache_read=usage.cache_read,
        write_5m=usage.write_5m,
        write_1h=usage.write_1h,
        model=str(message.get("model") or ""),
        at=_time(first),
        ended=_time(line.get("timestamp")),
        compacted=before.compacted,
        commands=tuple(before.commands),
        notified=before.notified,
    )


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
