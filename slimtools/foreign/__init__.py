"""The rules for a foreign tool: how a tool we did not write is slimmed, on every surface.

``slimtools.wrap`` (in process, per framework) and the MCP proxy share them: a tool's
options (:class:`ToolOptions`, validated by one declarative schema, ``ToolTable``), the
neutral form of its result (:class:`Raw`), the :class:`Plan` that shapes it (errors and
images pass through, every block screened by ``deny`` and the allowlist, :class:`Screen`;
an unconfigured tool passes while it fits its budget), and ``slim``, which stacks the
decorators a tool's options ask for. A framework plugs in as a :class:`WrapAdapter`
module, found through ``slimtools._frameworks``. No module here imports a framework, the
MCP SDK or ``tomllib``.
"""

from slimtools.foreign._adapter import WrapAdapter, adapter_for
from slimtools.foreign._forward import (
    PAGE_TOKENS,
    UNCONFIGURED_LIMIT,
    Plan,
    Raw,
    can_page,
    items_warning,
    slim,
)
from slimtools.foreign._options import (
    DEFAULT_MAX_TOKENS,
    ToolOptions,
    config_error,
    table_options,
    tool_options,
)
from slimtools.foreign._payload import (
    extract,
    guard,
    guard_value,
    obvious_list,
    raw_tokens,
    records_in,
    reshape_oversized,
)
from slimtools.foreign._schema import (
    FieldSpec,
    SchemaError,
    Text,
    ToolTable,
    expects,
    first_problem,
    known_keys,
)
from slimtools.foreign._screen import Screen

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "PAGE_TOKENS",
    "UNCONFIGURED_LIMIT",
    "FieldSpec",
    "Plan",
    "Raw",
    "SchemaError",
    "Screen",
    "Text",
    "ToolOptions",
    "ToolTable",
    "WrapAdapter",
    "adapter_for",
    "can_page",
    "config_error",
    "expects",
    "extract",
    "first_problem",
    "guard",
    "guard_value",
    "items_warning",
    "known_keys",
    "obvious_list",
    "raw_tokens",
    "records_in",
    "reshape_oversized",
    "slim",
    "table_options",
    "tool_options",
]
