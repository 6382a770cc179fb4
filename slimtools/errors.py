"""Exceptions slimtools raises to its callers (never into an agent loop: tools degrade)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias


class SlimtoolsError(Exception):
    """Base class of every slimtools exception."""


class ConfigurationError(SlimtoolsError, TypeError):
    """A decorator, toolkit or policy was configured wrongly; raised at decoration time."""


class StoreUnavailableError(SlimtoolsError):
    """The handle store cannot be reached; callers degrade instead of failing the tool."""


class TranscriptError(SlimtoolsError, ValueError):
    """A transcript file cannot be read; the message names the file, the line and the fault.

    Attributes:
        path: the file.
        line: the 1-based line of a JSON Lines file (or of a JSON document) where the fault
            is, when known.
        reason: what is wrong, in one line.
    """

    def __init__(self, path: object, reason: str, *, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = " ".join(reason.split())  # one line, whatever the cause's message held
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {self.reason}")


OnError: TypeAlias = Callable[[Exception], str]
"""Words a tool's exception for the model (``Toolkit(on_error=...)``)."""
