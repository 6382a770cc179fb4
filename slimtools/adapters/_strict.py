"""Strict JSON schemas for OpenAI function calling, and the defaults they make the model spell out.

OpenAI's strict mode (Chat Completions, the Responses API, the Agents SDK) accepts a subset of
JSON Schema: every object lists all its properties as required and sets
``additionalProperties: false``, and ``default`` is not permitted. :func:`strict_schema`
rewrites a tool's parameter schema into that form where it can without changing what the
tool accepts: optional parameters become nullable and their default moves into the
description. :func:`restore_defaults` undoes the one difference at dispatch time: a ``null``
sent for a parameter that does not itself accept null is dropped, so the tool's default
applies. Pure functions over JSON data; no framework is imported here.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from slimtools._json import dumps_str, loads

__all__ = ["restore_defaults", "strict_schema"]

_STRICT_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum",
        "const", "description", "title", "$ref", "$defs", "definitions", "pattern", "format",
        "multipleOf", "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum",
        "minItems", "maxItems",
    }
)  # fmt: skip
"""Keywords OpenAI's strict mode accepts; any other keyword that constrains values means the
tool is sent non-strict (dropping it would let the model send what the tool refuses)."""

_ANNOTATIONS = frozenset(
    {"default", "examples", "deprecated", "readOnly", "writeOnly", "$comment", "$schema"}
)
"""Keywords that only annotate: dropped in strict mode, where OpenAI rejects them."""

_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
"""String formats strict mode knows; others (``uri``, ``path``) are annotations and dropped."""

_MAX_DEPTH = 32


class _NotStrictError(Exception):
    """The schema uses something strict mode cannot express."""


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """Return the strict-mode form of a tool's parameter schema, or ``None`` when impossible.

    The input is not modified. In the result every object lists all its properties as
    required and forbids others; a parameter that was optional becomes nullable (``null``
    means "use the default", see :func:`restore_defaults`) and its default, when not null,
    is appended to its description as ``Default: <json>.`` unless the description already
    states it.

    Returns:
        The strict schema, or ``None`` when the schema needs a keyword outside the strict
        subset (see module docstring); callers then send that tool non-strict.
    """
    root = copy.deepcopy(dict(schema))
    if "properties" not in root and root.get("type") == "object":
        root["properties"] = {}  # a tool without arguments
    try:
        result = _strict_node(root, root, 0)
    except _NotStrictError:
        return None
    return result if result.get("type") == "object" else None


def _strict_node(node: Any, root: dict[str, Any], depth: int) -> dict[str, Any]:
    if depth > _MAX_DEPTH or not isinstance(node, dict):
        raise _NotStrictError
    if "$ref" in node and len(node) > 1:
        node = _inline_ref(node, root)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _ANNOTATIONS or (key == "format" and value not in _STRICT_FORMATS):
            continue
        target = "anyOf" if key == "oneOf" else key  # anyOf is looser; the tool validates
        if target not in _STRICT_KEYWORDS or target in out:
            raise _NotStrictError
        out[target] = value
    if _is_object(out):
        _strict_object(out, root, depth)
    if "items" in out:
        out["items"] = _strict_node(out["items"], root, depth + 1)
    if "anyOf" in out:
        out["anyOf"] = [_strict_node(v, root, depth + 1) for v in _as_list(out["anyOf"])]
    for defs in ("$defs", "definitions"):
        if defs in out:
            out[defs] = {k: _strict_node(v, root, depth + 1) for k, v in out[defs].items()}
    return out


def _strict_object(out: dict[str, Any], root: dict[str, Any], depth: int) -> None:
    properties = out.get("properties")
    if not isinstance(properties, dict) or out.get("additionalProperties", False) is not False:
        raise _NotStrictError  # an open mapping: strict mode cannot express it
    required = set(out.get("required", ()))
    strict_properties: dict[str, Any] = {}
    for name, original in properties.items():
        converted = _strict_node(original, root, depth + 1)
        if name not in required:
            converted = _nullable(converted, original.get("default", None))
        strict_properties[name] = converted
    out.setdefault("type", "object")
    out["properties"] = strict_properties
    out["required"] = list(strict_properties)
    out["additionalProperties"] = False


def _nullable(schema: dict[str, Any], default: Any) -> dict[str, Any]:
    """``schema`` also accepting null, with a non-null default noted in its description."""
    if not _accepts_null(schema):
        kind = schema.get("type")
        if isinstance(kind, (str, list)) and not {"enum", "const"} & schema.keys():
            schema = {**schema, "type": [*_as_list(kind), "null"]}
        else:
            meta: dict[str, Any] = {k: schema[k] for k in ("title", "description") if k in schema}
            core = {k: v for k, v in schema.items() if k not in meta}
            variants = core["anyOf"] if list(core) == ["anyOf"] else [core]
            schema = {**meta, "anyOf": [*variants, {"type": "null"}]}
    described = str(schema.get("description") or "")
    if default is not None and not _states_default(described, dumps_str(default)):
        note = f"Default: {dumps_str(default)}."
        schema = {**schema, "description": f"{described} {note}" if described else note}
    return schema


def _states_default(description: str, rendered: str) -> bool:
    """Whether a description already gives the default (``(default 1)``, ``Default: 1.``)."""
    pattern = rf"\bdefault:?\s+{re.escape(rendered)}(?!\w|\.\d)"
    return re.search(pattern, description, re.IGNORECASE) is not None


def _accepts_null(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "anyOf" in schema or "oneOf" in schema:
        variants = _as_list(schema.get("anyOf", schema.get("oneOf")))
        return any(isinstance(v, Mapping) and _accepts_null(v) for v in variants)
    if "enum" in schema:
        return None in _as_list(schema["enum"])
    if "const" in schema:
        return schema["const"] is None
    return kind is None and "$ref" not in schema and "properties" not in schema


def _is_object(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return "properties" in schema or kind == "object" or "object" in _as_list(kind)


def _inline_ref(node: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """Merge a ``$ref`` that has siblings (``description``...) with its target."""
    target = _resolve(node, root)
    if target is node:
        raise _NotStrictError
    return {**target, **{k: v for k, v in node.items() if k != "$ref"}}


def _resolve(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """Follow a local ``$ref`` (``#/$defs/Name``); anything unresolvable is returned as is."""
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return node
    target: Mapping[str, Any] = root
    for part in ref[2:].split("/"):
        found = target.get(part.replace("~1", "/").replace("~0", "~"))
        if not isinstance(found, Mapping):
            return node
        target = found
    return target


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def restore_defaults(
    arguments: str | bytes | Mapping[str, Any] | None, schema: Mapping[str, Any]
) -> str | bytes | dict[str, Any] | None:
    """Drop the nulls that strict mode makes the model send for optional parameters.

    A ``null`` is dropped only where the original ``schema`` does not accept null for that
    property and does not require it, so the tool's own default applies; nested objects and
    arrays of objects are handled too. Text that is not a JSON object is returned unchanged
    so that the toolkit reports it to the model.

    Args:
        arguments: the arguments as the model sent them (JSON text or a mapping).
        schema: the tool's original (non-strict) parameter schema, ``ToolSpec.parameters``.
    """
    parsed: Any = arguments
    if isinstance(arguments, (str, bytes)):
        try:
            parsed = loads(arguments)  # exact: an id beyond 64 bits stays an integer
        except ValueError:
            return arguments
    if not isinstance(parsed, Mapping):
        return arguments if not isinstance(arguments, Mapping) else dict(arguments)
    restored: dict[str, Any] = _restore(dict(parsed), schema, schema, 0)
    return restored


def _restore(value: Any, node: Any, root: Mapping[str, Any], depth: int) -> Any:
    if depth > _MAX_DEPTH or not isinstance(node, Mapping):
        return value
    node = _resolve(node, root)
    if isinstance(value, dict):
        shape = _branch(node, root, "properties")
        if shape is None:
            return value
        properties, required = shape["properties"], set(shape.get("required", ()))
        out = {}
        for key, item in value.items():
            sub = properties.get(key) if isinstance(properties, Mapping) else None
            if item is None and _null_means_default(sub, key in required, root):
                continue
            out[key] = _restore(item, sub, root, depth + 1)
        return out
    if isinstance(value, list):
        shape = _branch(node, root, "items")
        if shape is not None:
            return [_restore(item, shape["items"], root, depth + 1) for item in value]
    return value


def _null_means_default(schema: Any, required: bool, root: Mapping[str, Any]) -> bool:
    """Whether a null is strict mode's stand-in for "use the default" for this property:
    it is optional, and null is not one of its own values."""
    if required or not isinstance(schema, Mapping):
        return False
    return not _accepts_null(_resolve(schema, root))


def _branch(node: Mapping[str, Any], root: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    """``node`` or the first of its ``anyOf``/``oneOf`` variants that has ``key``."""
    if key in node:
        return node
    for variant in _as_list(node.get("anyOf", node.get("oneOf"))):
        if isinstance(variant, Mapping):
            resolved = _resolve(variant, root)
            if key in resolved:
                return resolved
    return None
