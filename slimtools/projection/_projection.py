"""The allowlist ``Projection``: select, rename and clip the declared fields of a record."""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import AliasChoices, AliasPath, BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from slimtools._json import to_jsonable
from slimtools.clip import Clip, clip_text
from slimtools.errors import ConfigurationError
from slimtools.projection._compiled import compile_flat
from slimtools.projection._deny import DenyTree, path_denied
from slimtools.projection._shapes import MISSING as _MISSING
from slimtools.projection._shapes import PLAIN as _PLAIN
from slimtools.projection._shapes import Fit, compile_fit, fit_records

__all__ = ["Projection", "record_to_plain"]

_FlatField = tuple[str, Any, Clip | None, Any, bool, Fit | None]


def _project_flat(fields: tuple[_FlatField, ...], record: dict[Any, Any]) -> dict[str, Any]:
    """``Projection.project`` of a dict record under a flat allowlist (the hot path)."""
    brief: dict[str, Any] = {}
    get = record.get
    for out, key, clip, default, scalars_ok, fit in fields:
        value = get(key, default)
        # Branch on the exact type first: a JSON scalar (nearly every value) under a field
        # that takes scalars needs no shape check, only a possible clip.
        if type(value) in _PLAIN and (scalars_ok or value is None):
            if clip is not None and type(value) is str and len(value) > clip.max_chars:
                value = clip_text(value, clip.max_chars, clip.marker)
            brief[out] = value
        elif value is not _MISSING:
            if fit is not None:
                value = fit(value)
                if value is _MISSING:
                    continue
            if clip is not None:
                value = _clip_value(value, clip)
            brief[out] = value
    return brief


def _clip_value(value: Any, clip: Clip) -> Any:
    """``value`` clipped when JSON writes it as a string (``Decimal``, ``datetime`` too).

    The output schema promises ``maxLength`` for a clipped field, and that holds for every
    string a brief carries, not only for values that were ``str`` in Python.
    """
    if type(value) is not str:
        if value is None or type(value) in _PLAIN or isinstance(value, (list, tuple, Mapping)):
            return value
        plain = to_jsonable(value)
        if not isinstance(plain, str):
            return value
        value = plain
    if len(value) > clip.max_chars:
        return clip_text(value, clip.max_chars, clip.marker)
    return value


def _get(record: Any, key: str | int) -> Any:
    """Read one step of a path from a dict, a sequence or an object's attribute."""
    if type(record) is dict or isinstance(record, Mapping):
        return record.get(key, _MISSING)
    if isinstance(key, int):
        if (
            isinstance(record, Sequence)
            and not isinstance(record, str)
            and -len(record) <= key < len(record)
        ):
            return record[key]
        return _MISSING
    value = getattr(record, key, _MISSING)
    # A method (``dict.copy``, ``model.json``, a staticmethod) is behaviour, not data.
    if inspect.isroutine(value):
        return _MISSING
    return value


@dataclass(frozen=True, slots=True)
class _Field:
    out: str
    paths: tuple[tuple[str | int, ...], ...]
    clip: Clip | None = None
    sub: Projection | None = None
    default: Any = _MISSING
    annotation: Any = None
    fit: Fit | None = None
    """The compiled shape check (``slimtools.projection._shapes``); ``None``: anything fits."""
    scalars_ok: bool = True
    """Whether an exact JSON scalar fits as is (no call to ``fit`` needed)."""

    def read(self, record: Any) -> Any:
        for path in self.paths:
            value = record
            for step in path:
                value = _get(value, step)
                if value is _MISSING:
                    break
            if value is not _MISSING:
                return value
        return self.default

    def show(self, value: Any) -> Any:
        """``value`` as the brief shows it: shape-checked and clipped, or ``_MISSING``."""
        if value is None or (self.scalars_ok and type(value) in _PLAIN):
            pass
        elif self.fit is not None:
            value = self.fit(value)
        if self.clip is not None and value is not _MISSING:
            value = _clip_value(value, self.clip)
        return value


class Projection:
    """A compiled allowlist: ``project(record)`` returns the brief dict of one record."""

    __slots__ = ("_fields", "_flat", "_many", "_one", "model")

    def __init__(self, fields: Sequence[_Field], model: type[BaseModel] | None = None) -> None:
        self._fields = tuple(fields)
        self.model = model
        # Most allowlists are flat (one source key per field, no nesting): for dict records
        # they take a loop of dict.get calls, the common hot path.
        simple = all(len(f.paths) == 1 and len(f.paths[0]) == 1 and f.sub is None for f in fields)
        self._flat = (
            tuple((f.out, f.paths[0][0], f.clip, f.default, f.scalars_ok, f.fit) for f in fields)
            if simple
            else None
        )
        compiled = compile_flat(self._flat, self._general) if self._flat else None
        self._one: Callable[[Any], dict[str, Any]] | None = None
        self._many: Callable[[Sequence[Any]], list[dict[str, Any]]] | None = None
        if compiled is not None:
            self._one, self._many = compiled

    @classmethod
    def from_spec(
        cls, spec: type[BaseModel] | Sequence[str] | Projection, deny: DenyTree | None = None
    ) -> Projection:
        """Compile a Pydantic model or a list of (dotted) field names into a projection.

        Args:
            spec: the allowlist.
            deny: compiled ``deny=`` paths (``projection._deny``); they win over the allowlist:
                a field that reads a denied path is left out (even with a default). What
                denied keys a shown value holds inside is ``apply_deny``'s, which every
                surface runs on the data before projecting it.
        """
        if isinstance(spec, Projection):
            return spec
        if isinstance(spec, type) and issubclass(spec, BaseModel):
            fields = [_model_field(n, f, deny) for n, f in spec.model_fields.items()]
            return cls([f for f in fields if f is not None], spec)
        if isinstance(spec, Sequence) and not isinstance(spec, str):
            names = list(spec)
            if not names or not all(isinstance(n, str) and n.strip(".") for n in names):
                raise ConfigurationError(
                    "project_fields takes a Pydantic model or a non-empty list of field "
                    f"names, got {spec!r}"
                )
            return _from_names(names, deny)
        raise ConfigurationError(
            f"project_fields takes a Pydantic model or a list of field names, got {spec!r}"
        )

    @property
    def names(self) -> frozenset[str]:
        """Every name the allowlist shows or reads, at every depth (outputs and source steps)."""
        found: set[str] = set()
        for f in self._fields:
            found.add(f.out)
            found.update(step for path in f.paths for step in path if isinstance(step, str))
            if f.sub is not None:
                found |= f.sub.names
        return frozenset(found)

    @property
    def output_names(self) -> tuple[str, ...]:
        """The top-level keys a brief may carry, in order."""
        return tuple(f.out for f in self._fields)

    def project(self, record: Any) -> dict[str, Any]:
        """Keep only the allowlisted fields of ``record`` (dict, model, dataclass or object)."""
        if self._one is not None:
            return self._one(record)
        return self._general(record)

    def _general(self, record: Any) -> dict[str, Any]:
        """``project`` without the compiled shortcut (``slimtools.projection._compiled``)."""
        if self._flat is not None and type(record) is dict:
            return _project_flat(self._flat, record)
        brief: dict[str, Any] = {}
        for field in self._fields:
            value = field.read(record)
            if value is not _MISSING:
                value = field.show(value)
                if value is not _MISSING:
                    brief[field.out] = value
        return brief

    def project_many(self, records: Sequence[Any]) -> list[dict[str, Any]]:
        """``[self.project(r) for r in records]``, with dict records on the flat fast path."""
        if self._many is not None:
            return self._many(records)
        flat = self._flat
        if flat is None:
            return [self.project(r) for r in records]
        return [_project_flat(flat, r) if type(r) is dict else self.project(r) for r in records]

    def json_schema(self) -> dict[str, Any]:
        """JSON Schema of a brief as emitted: its field names, nested fields and clip limits.

        Types are deliberately not asserted: projection selects without coercing, so a
        backend that sends ``"3"`` for a field declared ``int`` must not make a client's
        schema validation (MCP checks ``structuredContent``) reject the whole result. The
        declared type is kept as a description. Nothing is required: missing fields are
        omitted. ``maxLength`` constrains only strings, which is what clipping guarantees.
        """
        props: dict[str, Any] = {}
        for field in self._fields:
            if field.sub is not None:
                schema = field.sub.json_schema()
                del schema["type"]  # an object, a list of them, null or a stray scalar
            else:
                schema = _declared(field.annotation)
                if field.clip is not None:
                    schema["maxLength"] = field.clip.max_chars
            props[field.out] = schema
        return {"type": "object", "properties": props}


def _declared(annotation: Any) -> dict[str, Any]:
    if annotation is None or annotation is Any:
        return {}
    name = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    return {"description": f"declared {name or annotation}"}


def _alias_paths(name: str, info: FieldInfo) -> tuple[tuple[str | int, ...], ...]:
    alias = info.validation_alias if info.validation_alias is not None else info.alias
    if alias is None:
        return ((name,),)
    choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
    paths: list[tuple[str | int, ...]] = []
    for choice in choices:
        if isinstance(choice, AliasPath):
            paths.append(tuple(choice.path))
        else:
            paths.append((choice,))
    return tuple(paths)


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _nested_model(arg)
        if found is not None:
            return found
    return None


def _optional_clips(annotation: Any) -> list[Clip]:
    """Clip markers inside an optional annotation: ``Annotated[str, Clip(80)] | None``."""
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return []
    return [
        meta
        for arg in typing.get_args(annotation)
        if typing.get_origin(arg) is typing.Annotated
        for meta in arg.__metadata__
        if isinstance(meta, Clip)
    ]


def _output_name(name: str, info: FieldInfo) -> str:
    """The key a brief shows: the field name, or an explicit ``serialization_alias``.

    Pydantic copies ``alias`` into ``serialization_alias``; such a copy names the source, not
    the output, so ``Field(alias="message")`` renames ``message`` to the field's name.
    """
    explicit = info.serialization_alias
    if explicit is not None and explicit != info.alias:
        return explicit
    return name


def _model_field(name: str, info: FieldInfo, deny: DenyTree | None) -> _Field | None:
    """The compiled field, or ``None`` when deny removes every source it reads."""
    paths = tuple(p for p in _alias_paths(name, info) if not path_denied(deny, p))
    if not paths:
        return None
    clips = [m for m in info.metadata if isinstance(m, Clip)] or _optional_clips(info.annotation)
    nested = _nested_model(info.annotation)
    compiled: dict[type[BaseModel], Projection] = {}

    def project_nested(model: type[BaseModel]) -> Any:
        if model not in compiled:
            compiled[model] = Projection.from_spec(model, deny)
        return compiled[model].project

    fit, scalars_ok = compile_fit(info.annotation, project_nested)
    if info.default is not PydanticUndefined:
        default = info.default
    elif info.default_factory is not None:
        default = info.default_factory()  # type: ignore[call-arg]
    else:
        default = _MISSING
    return _Field(
        out=_output_name(name, info),
        paths=paths,
        clip=clips[-1] if clips else None,
        sub=(compiled.get(nested) or Projection.from_spec(nested, deny)) if nested else None,
        default=default,
        annotation=info.annotation,
        fit=fit,
        scalars_ok=scalars_ok,
    )


def _from_names(names: Sequence[str], deny: DenyTree | None = None) -> Projection:
    """Group dotted names by their first segment: ``["user.login"]`` keeps ``user.login`` only."""
    groups: dict[str, list[str]] = {}
    for name in names:
        if path_denied(deny, name.strip(".").split(".")):
            continue
        head, _, rest = name.strip(".").partition(".")
        groups.setdefault(head, []).append(rest)
    fields = []
    for head, rests in groups.items():
        if "" in rests:  # the name itself is allowlisted: its value is shown as it is
            fields.append(_Field(out=head, paths=((head,),)))
            continue
        sub = _from_names(rests, deny)
        fit = fit_records(sub.project)
        fields.append(_Field(out=head, paths=((head,),), sub=sub, fit=fit, scalars_ok=False))
    return Projection(fields)


def record_to_plain(record: Any) -> Any:
    """A full record as plain data for an unprojected brief (never the caller's own dict)."""
    if isinstance(record, Mapping):
        return dict(record)
    if isinstance(record, BaseModel):
        return record.model_dump()
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return dataclasses.asdict(record)
    attrs = getattr(record, "__dict__", None)
    if isinstance(attrs, dict) and not isinstance(record, type):
        return {k: v for k, v in attrs.items() if not k.startswith("_")}
    return record
