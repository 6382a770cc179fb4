"""Anthropic's server-side ``clear_tool_uses_20250919`` edit, read into policy fields.

:meth:`ClearingPolicy.from_anthropic` uses this so that the same settings mean the same
thing on the server and here: a trigger in input tokens or tool uses, tool uses kept,
a minimum saving per clearing, excluded tools, and whether call arguments are blanked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from slimtools.clearing._checks import check_count
from slimtools.errors import ConfigurationError

ANTHROPIC_EDIT_TYPE = "clear_tool_uses_20250919"
"""The edit type this module reads."""

_ANTHROPIC_KEYS = frozenset(
    {"type", "trigger", "keep", "clear_at_least", "exclude_tools", "clear_tool_inputs"}
)


def anthropic_fields(edit: Any) -> dict[str, Any]:
    """Policy fields for a ``clear_tool_uses_20250919`` edit dict (None: the defaults)."""
    if edit is None:
        edit = {}
    if not isinstance(edit, Mapping) and hasattr(edit, "model_dump"):
        edit = edit.model_dump(exclude_none=True)  # an anthropic SDK param object
    if not isinstance(edit, Mapping):
        raise ConfigurationError(f"edit must be a dict, got {type(edit).__name__}")
    unknown = sorted(set(edit) - _ANTHROPIC_KEYS)
    if unknown:
        raise ConfigurationError(f"unknown keys in the {ANTHROPIC_EDIT_TYPE} edit: {unknown}")
    if edit.get("type", ANTHROPIC_EDIT_TYPE) != ANTHROPIC_EDIT_TYPE:
        raise ConfigurationError(f"edit type must be {ANTHROPIC_EDIT_TYPE!r}, got {edit['type']!r}")
    fields: dict[str, Any] = {}
    kind, value = _typed(edit.get("trigger"), "trigger", ("input_tokens", "tool_uses"), 100_000)
    fields["trigger"] = ("tokens" if kind == "input_tokens" else "tool_uses", value)
    fields["keep"] = _typed(edit.get("keep"), "keep", ("tool_uses",), 3)[1]
    if edit.get("clear_at_least") is not None:
        at_least = _typed(edit["clear_at_least"], "clear_at_least", ("input_tokens",), 0)
        fields["clear_at_least"] = at_least[1]
    fields["retention"] = dict.fromkeys(_names(edit.get("exclude_tools", ())), None)
    if edit.get("clear_tool_inputs") is not None:
        fields["clear_tool_inputs"] = edit["clear_tool_inputs"]
    return fields


def _names(value: Any) -> list[str]:
    """The edit's ``exclude_tools``: a list of tool names."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple, set, frozenset)) or not all(
        isinstance(n, str) for n in value
    ):
        raise ConfigurationError(f"exclude_tools must be a list of tool names, got {value!r}")
    return list(value)


def _typed(value: Any, name: str, kinds: tuple[str, ...], default: int) -> tuple[str, int]:
    """Parse ``{"type": <kind>, "value": <int>}`` (None gives the default of the first kind)."""
    if value is None:
        return kinds[0], default
    if not isinstance(value, Mapping) or value.get("type") not in kinds:
        raise ConfigurationError(
            f"{name} must be {{'type': one of {list(kinds)}, 'value': int}}, got {value!r}"
        )
    number = value.get("value")
    check_count(number, f"{name}.value", optional=False)
    return str(value["type"]), int(number or 0)
