"""Dispatch: validate model-sent arguments, run the tool, and turn every outcome into a result.

``dispatch`` is the engine behind ``Toolkit.call`` and ``Toolkit.acall`` (sans-I/O, driven
by ``slimtools._core.drive``): it yields an ``Invoke`` of the tool, or runs ``get_record``
for the companion, and never raises. Bad JSON, an unknown tool, wrong, unknown or missing
arguments and the tool's own exceptions all come back as ``ToolResult(is_error=True)``
with a message the model can act on.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from pydantic import BaseModel, ValidationError

from slimtools._core import schema as _schema
from slimtools._core.drive import Engine, Invoke
from slimtools._core.keeper import Keeper
from slimtools._core.lookup import Lookup, Sources, get_record
from slimtools._core.pipeline import FinalResult
from slimtools._core.wrapper import rebind, slim_state
from slimtools._json import dumps_str
from slimtools.categories import CATEGORIES, REPEATABLE_CATEGORIES
from slimtools.envelope import Envelope
from slimtools.errors import ConfigurationError
from slimtools.projection import DENIED_ATTR, scrub_pairs

if TYPE_CHECKING:
    from typing_extensions import Unpack

log = logging.getLogger("slimtools")


COMPANION_DESCRIPTION = (
    "Return the full record (JSON) or text behind a handle that a tool result showed: "
    "a brief's id or handle value."
)


@dataclass(frozen=True)
class ToolSpec:
    """One registered tool as every framework adapter sees it."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    is_async: bool
    category: str | None
    handle_key: str | None
    args_model: type[BaseModel]
    output_schema: dict[str, Any] | None
    returns_envelope: bool
    read_only: bool = False
    """The tool only reads: calling it again changes nothing (declared, or its category is
    ``search`` or ``read``). Clearing placeholders offer to call it again; MCP lists it with
    ``readOnlyHint``."""


@dataclass(frozen=True)
class ToolResult(FinalResult):
    """The outcome of ``Toolkit.call``: the text for the model, and whether it is an error.

    A tool (slimmed or not) may also return one to answer exactly that: the slimming
    decorators pass it through untouched and ``Toolkit.call`` returns it as it is. ``value``
    then carries what an adapter may send natively (the MCP adapter sends a
    ``CallToolResult`` found there as it is).
    """

    text: str
    is_error: bool = False
    value: Any = None
    structured: dict[str, Any] | None = None


def tool_spec(
    fn: Any,
    bound: Callable[..., Any],
    name: str,
    *,
    description: str | None,
    category: str | None,
    parameters: Mapping[str, Any] | None,
    output_schema: Mapping[str, Any] | None,
    read_only: bool | None,
) -> ToolSpec:
    """The spec of ``bound`` (``fn`` as its toolkit runs it), with ``Toolkit.tool``'s options."""
    state = slim_state(bound)
    model = _schema.args_model(name, bound)
    handle_key = None
    if state is not None and state.cfg.handles is not None:
        handle_key = state.cfg.handles.key or "handle"
    schema = _schema.parameters_schema(model)
    if parameters is not None:
        schema = _schema.merge_parameters(parameters, schema)
    if output_schema is None and state is not None:
        output_schema = _schema.output_schema(_schema.brief_schema(state.cfg))
    return ToolSpec(
        name=name,
        description=description or inspect.getdoc(fn) or name.replace("_", " "),
        parameters=schema,
        function=bound,
        is_async=inspect.iscoroutinefunction(bound),
        category=category,
        handle_key=handle_key,
        args_model=model,
        output_schema=dict(output_schema) if output_schema is not None else None,
        returns_envelope=state is not None,
        read_only=category in REPEATABLE_CATEGORIES if read_only is None else bool(read_only),
    )


class SpecOptions(TypedDict, total=False):
    """The options of ``Toolkit.tool`` and ``Toolkit.bind`` (documented on ``tool``)."""

    name: str | None
    description: str | None
    category: str | None
    parameters: Mapping[str, Any] | None
    output_schema: Mapping[str, Any] | None
    read_only: bool | None


def bound_spec(fn: Callable[..., Any], keeper: Keeper, **options: Unpack[SpecOptions]) -> ToolSpec:
    """The spec of ``fn`` as a toolkit over ``keeper`` runs it (``Toolkit.bind``).

    Raises:
        ConfigurationError: an unknown category, no name to tell, or the companion's name.
        TypeError: an option ``Toolkit.tool`` does not take.
    """
    unknown = sorted(set(options) - set(SpecOptions.__annotations__))
    if unknown:
        raise TypeError(f"unexpected keyword arguments: {', '.join(unknown)}")
    category, name = options.get("category"), options.get("name")
    if category is not None and category not in CATEGORIES:
        raise ConfigurationError(f"category must be one of {sorted(CATEGORIES)}, got {category!r}")
    state = slim_state(fn)
    tool_name = name or (state.name if state else getattr(fn, "__name__", None))
    if not tool_name or not isinstance(tool_name, str) or (not name and tool_name == "<lambda>"):
        raise ConfigurationError(f"cannot tell the name of {fn!r}; pass name=")
    if tool_name == keeper.companion:
        raise ConfigurationError(f"{tool_name!r} is the name of this toolkit's companion tool")
    bound = rebind(fn, keeper=keeper, name=tool_name) if state else fn
    return tool_spec(
        fn,
        bound,
        tool_name,
        description=options.get("description"),
        category=category,
        parameters=options.get("parameters"),
        output_schema=options.get("output_schema"),
        read_only=options.get("read_only"),
    )


def companion_spec(name: str, function: Callable[..., Any]) -> ToolSpec:
    """The spec of a toolkit's ``get_record`` companion, called ``name``."""
    model = _schema.args_model(name, function)
    return ToolSpec(
        name=name,
        description=COMPANION_DESCRIPTION,
        parameters=_schema.parameters_schema(model),
        function=function,
        is_async=False,
        category="read",
        handle_key=None,
        args_model=model,
        output_schema=None,
        returns_envelope=False,
        read_only=True,
    )


@dataclass(frozen=True, slots=True)
class Table:
    """A toolkit's tools as dispatch reads them; the toolkit replaces it on registration."""

    specs: Mapping[str, ToolSpec]
    """Every tool by name, the companion last."""
    hidden: Mapping[str, frozenset[str]]
    """Each tool's parameters the model may not set (``slimtools.Hidden``)."""
    describe: Callable[[Exception, str], str]
    """Words a tool's exception (the toolkit's ``on_error`` without the tool's secrets)."""


def dispatch(
    table: Table, sources: Sources, name: str, arguments: Any, lookup: Lookup = get_record
) -> Engine[ToolResult]:
    """The result of calling tool ``name`` with model-sent ``arguments``; never raises.

    ``lookup`` answers the companion (``get_record``, or the same reporting its answer).
    """
    prepared = prepare(table, name, arguments)
    if isinstance(prepared, ToolResult):
        return prepared
    spec, kwargs = prepared
    if spec.name == sources.companion:
        text, is_error = yield from lookup(
            sources, kwargs.get("handle"), kwargs.get("source"), kwargs.get("page", 1)
        )
        return ToolResult(text=text, is_error=is_error, value=None if is_error else text)
    under_loop = f"{spec.name} is async and an event loop is running: use Toolkit.acall"
    try:
        value = yield Invoke(spec.function, (), kwargs, not spec.is_async, under_loop)
    except Exception as exc:
        log.warning("slimtools: tool %r raised %s", spec.name, type(exc).__name__, exc_info=exc)
        text = clip_error(f"{spec.name} failed: {_failure(table, spec, exc)}")
        return ToolResult(text, is_error=True)
    return to_result(value)


ERROR_MAX_CHARS = 4_000
"""A longer error text (after masking) keeps its head: a 5 MB exception message would
otherwise fill the model's context with one failure."""


def clip_error(text: str) -> str:
    """``text``, or its first :data:`ERROR_MAX_CHARS` characters and how many were cut."""
    if len(text) <= ERROR_MAX_CHARS:
        return text
    return f"{text[:ERROR_MAX_CHARS]}... ({len(text) - ERROR_MAX_CHARS:,} more characters cut)"


def _failure(table: Table, spec: ToolSpec, exc: Exception) -> str:
    """The words of a tool's exception, its denied ``key: value`` pairs masked.

    The slimming pipeline masks them in the exception's arguments already; this also covers
    an exception whose ``__str__`` builds its message from elsewhere, and the ``on_error`` hook.
    """
    text = table.describe(exc, spec.name)
    noted: frozenset[str] = getattr(exc, DENIED_ATTR, frozenset())  # wrap()'s deny, say
    state = slim_state(spec.function)
    if state is None:
        return scrub_pairs(text, noted) if noted else text
    return scrub_pairs(text, state.cfg.denied_names | noted, state.cfg.allowed_names)


Prepared = tuple[ToolSpec, dict[str, Any]]


def prepare(table: Table, name: str, arguments: Any) -> Prepared | ToolResult:
    """The tool and its validated keyword arguments, or the error result saying what is wrong."""
    spec = table.specs.get(name)
    if spec is None:
        known = ", ".join(table.specs)
        return ToolResult(f"Unknown tool {name!r}. Available tools: {known}.", is_error=True)
    parsed = _schema.parse_arguments(arguments)
    if isinstance(parsed, str):
        return ToolResult(f"Invalid arguments for {name}: {parsed}.", is_error=True)
    hidden = table.hidden.get(spec.name, frozenset()) & parsed.keys()
    if hidden:  # the application's parameters, even where **kwargs would take them
        problems = [f"unknown argument {k!r}" for k in sorted(hidden)]
        return ToolResult(_schema.describe_problems(name, problems, spec.parameters), is_error=True)
    problems = _schema.misplaced_booleans(parsed, spec.parameters)
    if problems:
        return ToolResult(_schema.describe_problems(name, problems, spec.parameters), is_error=True)
    try:
        validated = spec.args_model.model_validate(parsed)
    except ValidationError as exc:
        return ToolResult(_schema.describe_errors(name, exc, spec.parameters), is_error=True)
    kwargs = {k: getattr(validated, k) for k in validated.model_fields_set}
    kwargs.update(validated.model_extra or {})
    return spec, kwargs


def to_result(value: Any) -> ToolResult:
    """The model-facing text of a tool's return value."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, Envelope):
        return ToolResult(text=str(value), value=value, structured=value.jsonable())
    if isinstance(value, str):
        return ToolResult(text=value, value=value)
    return ToolResult(text=dumps_str(value), value=value)
