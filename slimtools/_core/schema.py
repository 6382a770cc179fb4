"""JSON Schemas and argument validators built from a tool's visible signature."""

from __future__ import annotations

import copy
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from slimtools._core.config import SlimConfig
from slimtools._core.params import roles
from slimtools._json import dumps_str, loads
from slimtools.envelope import Envelope
from slimtools.errors import ConfigurationError


def args_model(name: str, fn: Callable[..., Any]) -> type[BaseModel]:
    """A Pydantic model of the arguments a model may send to ``fn`` (unknown ones rejected).

    ``fn``'s signature is taken as is: a bound method's already omits ``self``, so a plain
    function's parameters named ``self`` or ``cls`` are ordinary arguments. Parameters the
    model cannot see (injected by a framework, ``Hidden``, secrets: ``slimtools._core.params``)
    are left out.
    """
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to raw annotations
        hints = {}
    hidden = roles(fn).hidden
    fields: dict[str, Any] = {}
    extra = "forbid"
    for param in sig.parameters.values():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            extra = "allow"
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL or param.name in hidden:
            continue
        annotation = hints.get(param.name, param.annotation)
        if annotation is inspect.Parameter.empty:
            annotation = Any
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    model_name = "".join(part.capitalize() for part in name.split("_")) + "Args"
    config = ConfigDict(extra=extra, arbitrary_types_allowed=True)  # type: ignore[typeddict-item]
    return create_model(model_name, __config__=config, **fields)


def parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of the arguments, without pydantic's noisy ``title`` keywords."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    return _strip_titles(schema)  # type: ignore[no-any-return]


def merge_parameters(given: Mapping[str, Any], declared: dict[str, Any]) -> dict[str, Any]:
    """``given`` (a JSON Schema of arguments) plus the properties only ``declared`` has.

    Raises:
        ConfigurationError: ``given`` is not an object schema, or already defines a
            parameter the signature adds (``page``, ``limit``).
    """
    if not isinstance(given, Mapping) or given.get("type", "object") != "object":
        raise ConfigurationError(f"parameters= must be a JSON Schema of type object, got {given!r}")
    merged = copy.deepcopy(dict(given))
    merged.setdefault("type", "object")
    props = merged.setdefault("properties", {})
    added = declared.get("properties", {})
    clashes = sorted(set(props) & set(added))
    if clashes:
        raise ConfigurationError(
            f"parameters= already has {clashes}, which the slimming decorators add themselves"
        )
    props.update(copy.deepcopy(added))
    return merged


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                out[key] = {k: _strip_titles(v) for k, v in value.items()}
            else:
                out[key] = _strip_titles(value)
        return out
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def brief_schema(cfg: SlimConfig) -> dict[str, Any] | None:
    """JSON Schema of one brief as emitted (either view when the tool takes response_format)."""
    if cfg.projection is None:
        return None
    views = [cfg.projection] + ([cfg.detail] if cfg.formats and cfg.detail else [])
    schemas = [view.json_schema() for view in views]
    if cfg.handles is not None and cfg.handles.key is None:
        for schema in schemas:
            schema["properties"] = {"handle": {"type": "string"}, **schema["properties"]}
    return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}


def output_schema(brief: dict[str, Any] | None) -> dict[str, Any]:
    """JSON Schema of an envelope as emitted, its briefs described by ``brief``."""
    schema = _strip_titles(Envelope[dict].model_json_schema())  # type: ignore[type-arg]
    schema.pop("title", None)
    props = schema["properties"]
    props["briefs"] = {"type": "array", "items": brief or {}}
    for key in ("page", "handle", "text"):
        props[key] = {"type": props[key]["anyOf"][0]["type"]}
        props[key].pop("default", None)
    props["hint"] = {"type": "string"}
    schema["required"] = ["total", "hint"]
    return schema  # type: ignore[no-any-return]


def parse_arguments(arguments: str | bytes | dict[str, Any] | Any) -> dict[str, Any] | str:
    """Model-sent arguments as a dict, or a message saying what is wrong with them."""
    if arguments is None or (isinstance(arguments, (str, bytes)) and not arguments.strip()):
        return {}
    if isinstance(arguments, (str, bytes)):
        try:
            arguments = loads(arguments)  # exact integers beyond 64 bits (a big id's handle)
        except ValueError as exc:
            return f"arguments are not valid JSON ({exc}); send a JSON object"
    if isinstance(arguments, dict):
        return arguments
    if hasattr(arguments, "items"):
        return dict(arguments.items())
    return f"arguments must be a JSON object, got {type(arguments).__name__}"


def misplaced_booleans(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """Problems with top-level arguments sent as ``true``/``false`` where the schema wants a
    number: Pydantic's lax mode reads ``true`` as 1, so ``get_record(handle=true)`` would
    silently answer record 1. Strings stay lax (``"5"`` for 5 is a common, harmless slip)."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    problems = []
    for name, value in arguments.items():
        if not isinstance(value, bool):
            continue
        kinds = _types(properties.get(name))
        if kinds & {"integer", "number"} and "boolean" not in kinds:
            wanted = " or ".join(_ARTICLED.get(k, k) for k in sorted(kinds - {"null"}))
            problems.append(
                f"{name}: Input should be {wanted}, not a boolean (got {dumps_str(value)})"
            )
    return problems


_ARTICLED = {
    "array": "an array",
    "integer": "an integer",
    "number": "a number",
    "object": "an object",
    "string": "a string",
}


def _types(node: Any) -> set[str]:
    """The JSON types a property schema names (empty: it does not say, so anything goes)."""
    if not isinstance(node, Mapping):
        return set()
    kind = node.get("type")
    found = {kind} if isinstance(kind, str) else set()
    if isinstance(kind, list):
        found = {k for k in kind if isinstance(k, str)}
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if not isinstance(options, list):
            continue
        for option in options:
            inner = _types(option)
            if not inner:
                return set()  # one option takes anything: a boolean may be meant
            found |= inner
    return found


def describe_errors(tool: str, exc: ValidationError, schema: dict[str, Any]) -> str:
    """A model-readable account of invalid arguments and of what the tool expects."""
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown argument {where!r}")
        elif err["type"] == "missing":
            problems.append(f"missing required argument {where!r}")
        else:
            got = dumps_str(err.get("input"))[:60]
            problems.append(f"{where}: {err['msg']} (got {got})")
    return describe_problems(tool, problems, schema)


def describe_problems(tool: str, problems: list[str], schema: dict[str, Any]) -> str:
    """``Invalid arguments for <tool>: <problems>. Expected: <parameters>.``"""
    expected = []
    required = set(schema.get("required", []))
    for pname, pschema in schema.get("properties", {}).items():
        kind = (
            pschema.get("type")
            or "/".join(str(a.get("type")) for a in pschema.get("anyOf", []) if isinstance(a, dict))
            or "any"
        )
        suffix = " (required)" if pname in required else f" = {dumps_str(pschema.get('default'))}"
        expected.append(f"{pname}: {kind}{suffix}")
    return f"Invalid arguments for {tool}: {'; '.join(problems)}. Expected: {', '.join(expected)}."
