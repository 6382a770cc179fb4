"""Read the billed ``usage`` out of an upstream response while relaying it untouched.

A streamed response (``text/event-stream``) is read line by line as its chunks pass: only a
``data:`` line that mentions ``usage`` is parsed. A plain JSON response is kept (up to
:data:`MAX_JSON_BYTES`) and parsed once it has passed. The relayed bytes are never changed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import orjson

from slimtools.gateway.stats import ConversationStats, Diagnosis, diagnosis_of, raw_usage_in_event
from slimtools.instrumentation import REGISTRY, Usage, emit, usage_of

MAX_JSON_BYTES = 8 * 1024 * 1024
"""A JSON response larger than this is relayed without reading its usage."""

logger = logging.getLogger("slimtools.gateway")


class UsageTap:
    """Fed each relayed chunk; :attr:`usage` is what the response billed (None: unknown)."""

    def __init__(self, content_type: str) -> None:
        self.streaming = content_type.startswith("text/event-stream")
        self.usage: Usage | None = None
        self.diagnosis = Diagnosis()
        self._buffer = bytearray()
        self._overflow = False
        self._fields: dict[str, Any] = {}

    def feed(self, chunk: bytes) -> None:
        """Note one chunk of the response as it passes."""
        if not self.streaming:
            if not self._overflow:
                self._buffer += chunk
                self._overflow = len(self._buffer) > MAX_JSON_BYTES
            return
        self._buffer += chunk
        if b"\n" not in chunk:
            return
        *lines, rest = bytes(self._buffer).split(b"\n")
        self._buffer = bytearray(rest)
        for line in lines:
            if line.startswith(b"data:") and b'"usage"' in line:
                self._event(line[5:].strip())

    def close(self) -> Usage | None:
        """The response has passed: read what is left and return the usage."""
        if self.streaming:
            self.feed(b"\n")
            if self._fields:
                self.usage = usage_of(self._fields)
        elif not self._overflow and self._buffer:
            try:
                parsed = orjson.loads(self._buffer)
                raw = parsed.get("usage")
                self.usage = usage_of(raw) if isinstance(raw, Mapping) else None
                self.diagnosis = diagnosis_of(parsed)
            except (orjson.JSONDecodeError, AttributeError):
                logger.debug("response body is not a JSON object; usage unknown")
        self._buffer = bytearray()
        return self.usage

    def settle(
        self, stats: ConversationStats, *, ok: bool, cleared: bool, diagnostics: bool = False
    ) -> None:
        """The response has passed: add its usage and diagnosis to the conversation's
        figures when it was ``ok`` (complete, and not an error status); with
        ``diagnostics`` (the gateway asked for them), emit its cache miss as an event."""
        usage = self.close()
        if not ok:
            return
        if usage is not None:
            stats.billed.add(usage)
        stats.diagnosed(self.diagnosis, cleared=cleared)
        if diagnostics and REGISTRY.listeners:
            miss = self.diagnosis.miss(stats.id, cleared=cleared)
            if miss is not None:
                emit(miss, None)

    def _event(self, data: bytes) -> None:
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        found = raw_usage_in_event(event)
        seen = diagnosis_of(event)
        self.diagnosis = Diagnosis(
            self.diagnosis.response_id or seen.response_id,
            seen.missed if seen.missed is not None else self.diagnosis.missed,
            seen.reason or self.diagnosis.reason,
            seen.provider or self.diagnosis.provider,
        )
        if found is not None:
            # Anthropic's message_start has a stand-in output count that message_delta
            # replaces; its other figures repeat or refine earlier ones: the last one wins.
            self._fields.update({k: v for k, v in found.items() if v is not None})
