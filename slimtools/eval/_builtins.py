"""The built-in scenarios by name, in one table that the package and the runner share."""

from __future__ import annotations

from types import MappingProxyType

from slimtools.eval._builtin_code import CODE_TASK, FILE_READING
from slimtools.eval._builtin_records import API_LISTING, LOG_SEARCH

BUILTIN_SCENARIOS = MappingProxyType(
    {s.name: s for s in (LOG_SEARCH, FILE_READING, API_LISTING, CODE_TASK)}
)
"""The built-in scenarios by name: log_search, file_reading, api_listing, code_task."""
