"""One field of a plain dict or of an SDK object: the one getter every module shares.

Model APIs hand back pydantic objects (OpenAI's, Anthropic's, MCP's) or their plain-dict
dumps; code that accepts both reads a field the same way through :func:`field_of`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def field_of(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` of a mapping, else the attribute ``key`` of an object; ``default`` when
    absent."""
    if isinstance(obj, dict):  # the common case first: a C-level type check
        return obj.get(key, default)
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)
