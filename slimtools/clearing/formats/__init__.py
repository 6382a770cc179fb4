"""History formats: one codec per wire format, and the format-neutral view built on them.

Every piece of knowledge about a format (where its tool calls and results are, what a turn
is, how to rewrite a result) lives in its codec module here; the engine, the view, the ledger
and compaction only ever see the neutral records of :mod:`slimtools.clearing.formats.base`.
"""

from slimtools.clearing.formats._objects import get, with_changes
from slimtools.clearing.formats.view import (
    ANTHROPIC,
    API_FORMATS,
    LANGCHAIN,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
)
from slimtools.clearing.formats.view import _format_of as message_format

__all__ = [
    "ANTHROPIC",
    "API_FORMATS",
    "LANGCHAIN",
    "OPENAI_CHAT",
    "OPENAI_RESPONSES",
    "get",
    "message_format",
    "with_changes",
]
