"""slimtools: keep LLM agents' context windows lean.

The core is here: the slimming decorators (``project_fields``, ``paginate``,
``summarize_with_handle``) that make a tool return an ``Envelope``, the ``Toolkit`` that
registers tools with their ``get_record`` companion, ``wrap`` for tools you did not write, and
clearing stale results in place (``clear_stale_results``, ``Clearer``, ``ClearingPolicy``),
and ``observe``, which hears what each of them did (live metrics).
The rest lives in namespaces: :mod:`slimtools.clearing` (formats, audit, cache prices),
:mod:`slimtools.stores` (durable handle stores), :mod:`slimtools.ledger` (measuring the
bill), :mod:`slimtools.compaction`, :mod:`slimtools.instrumentation` (the events, and their
OpenTelemetry bridge), :mod:`slimtools.typing` (every protocol you implement) and
:mod:`slimtools.testing`.
"""

from slimtools._core.params import Hidden, Secret
from slimtools._session import current_session, session
from slimtools.clearing import Clearer, ClearingPolicy, clear_stale_results
from slimtools.clip import Clip
from slimtools.decorators import paginate, project_fields, summarize_with_handle
from slimtools.envelope import Envelope
from slimtools.errors import (
    ConfigurationError,
    SlimtoolsError,
    StoreUnavailableError,
    TranscriptError,
)
from slimtools.instrumentation import observe
from slimtools.toolkit import Toolkit, ToolResult, ToolSpec, default_toolkit, get_record
from slimtools.wrap import wrap


def _version() -> str:
    """The installed distribution's version; a source checkout that is not installed says so."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("slimtools")
    except PackageNotFoundError:
        return "0+unknown"


__version__ = _version()

__all__ = [
    "Clearer",
    "ClearingPolicy",
    "Clip",
    "ConfigurationError",
    "Envelope",
    "Hidden",
    "Secret",
    "SlimtoolsError",
    "StoreUnavailableError",
    "ToolResult",
    "ToolSpec",
    "Toolkit",
    "TranscriptError",
    "clear_stale_results",
    "current_session",
    "default_toolkit",
    "get_record",
    "observe",
    "paginate",
    "project_fields",
    "session",
    "summarize_with_handle",
    "wrap",
]
