"""Exceptions slimtools raises to its callers (never into an agent loop: tools degrade)."""

from __future__ import annotations


class SlimtoolsError(Exception):
    """Base class of every slimtools exception."""


class ConfigurationError(SlimtoolsError, TypeError):
    """A decorator, toolkit or policy was configured wrongly; raised at decoration time."""


class StoreUnavailableError(SlimtoolsError):
    """The handle store cannot be reached; callers degrade instead of failing the tool."""
