"""A foreign tool's options schema: one declarative model, from which keys, types and
messages come.

``ToolTable`` is one tool's options (a proxy ``[tools.NAME]`` table, or ``wrap()``'s
keywords), a Pydantic model with ``extra="forbid"`` (unknown keys are refused, the known ones
listed from the model); the proxy's file-level ``ConfigFile`` builds on it. Each field says
what it expects in its ``description``, so a bad value reads ``must be <description>, got
<value>``; rules across keys (``max_limit`` at least
``limit``, ``key`` among the fields shown, two fields shown under one name) raise
:class:`SchemaError` naming the key they blame. ``_options.py`` turns a
``ValidationError`` into a ``source: key: message`` error and a table into ``ToolOptions``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from slimtools.toolkit import CATEGORIES

__all__ = [
    "FieldSpec",
    "SchemaError",
    "Text",
    "ToolTable",
    "expects",
    "first_problem",
    "known_keys",
]

SCHEMA_ERROR = "slimtools_config"

_FIELD = re.compile(
    r"^\s*(?:(?P<name>[^=:]+?)\s*=\s*)?(?P<path>[^=:]+?)\s*(?::\s*(?P<clip>\d+))?\s*$"
)
_FIELD_FORMS = (
    'write "path", "name = path", either with ":N" to clip, or {name = "...", path = "...", '
    "clip = N}"
)


@dataclass(frozen=True)
class FieldSpec:
    """One allowlisted field: where it is read (a dotted path), its output name, its clip."""

    path: tuple[str, ...]
    name: str | None = None
    clip: int | None = None

    @property
    def renamed(self) -> bool:
        """True when the output name is not the path itself."""
        return self.name is not None and (self.name,) != self.path

    @property
    def output(self) -> str:
        """The name the field has in a brief (the top of its path when not renamed)."""
        return self.name or self.path[0]


def SchemaError(message: str, key: str) -> PydanticCustomError:  # noqa: N802 - an error factory
    """A rule across keys broken: ``message``, blamed on ``key`` of the table."""
    return PydanticCustomError(SCHEMA_ERROR, message, {"key": key})


Positive = Annotated[StrictInt, Field(ge=1)]
Text = Annotated[StrictStr, Field(min_length=1)]
Path = Annotated[StrictStr, Field(pattern=r"[^.]")]


class ToolTable(BaseModel):
    """One ``[tools.NAME]`` table: how an upstream tool is slimmed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    items: Path | None = Field(None, description="a non-empty string")
    fields: tuple[FieldSpec, ...] | None = Field(None, description="a non-empty list of fields")
    deny: tuple[Path, ...] = Field((), description="a list of field names or dotted paths")
    key: Path | None = Field(None, description="a non-empty string")
    limit: Positive = Field(20, description="a positive integer")
    max_limit: Positive | None = Field(
        None, description="a positive integer (default: 100, or limit when larger)"
    )
    max_tokens: Positive | None = Field(None, description="a positive integer")
    category: Literal[tuple(sorted(CATEGORIES))] | None = Field(  # type: ignore[valid-type]
        None, description=f"one of {', '.join(sorted(CATEGORIES))}"
    )
    read_only: StrictBool | None = Field(None, description="true or false")
    head: Positive | None = Field(None, description="a positive integer")
    tail: Annotated[StrictInt, Field(ge=0)] = Field(0, description="an integer >= 0")
    description: Path | None = Field(None, description="a non-empty string")
    response_format: StrictBool = Field(False, description="true or false")
    on_unreadable: Literal["withhold", "text"] = Field(
        "withhold", description='"withhold" or "text"'
    )
    emit: Literal["both", "text", "structured"] | None = Field(
        None, description='"both", "text" or "structured"'
    )

    @field_validator("fields", mode="before")
    @classmethod
    def _parse_fields(cls, value: Any) -> tuple[FieldSpec, ...] | None:
        if value is None:
            return None
        if not isinstance(value, (list, tuple)) or not value:
            raise SchemaError(f"must be a non-empty list of fields, got {value!r}", "fields")
        specs = []
        for item in value:
            spec = parse_field(item)
            if spec is None:
                raise SchemaError(f"{item!r} is not a field: {_FIELD_FORMS}", "fields")
            specs.append(spec)
        return tuple(specs)

    @field_validator("deny", mode="after")
    @classmethod
    def _strip_dots(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        stripped = tuple(d.strip(".") for d in value)
        for path in stripped:
            if not all(path.split(".")):  # "a..b" would fail every call of the tool
                raise SchemaError(
                    f"{path!r} has an empty step: write field names or dotted paths", "deny"
                )
        return stripped

    @model_validator(mode="after")
    def _across_keys(self) -> ToolTable:
        if self.max_limit is not None and self.max_limit < self.limit:
            raise SchemaError(f"must be at least limit ({self.limit})", "max_limit")
        if self.fields:
            outputs = [f.output for f in self.fields]
            # Plain dotted paths with one head merge into one nested object (``user.login``
            # and ``user.id`` -> ``{"user": {...}}``): the head counts once among the names.
            flat = [f.output for f in self.fields if f.renamed or len(f.path) == 1]
            heads = {f.path[0] for f in self.fields if not (f.renamed or len(f.path) == 1)}
            shown = flat + sorted(heads)
            twice = sorted({o for o in shown if shown.count(o) > 1})
            if twice:
                raise SchemaError(
                    f"two fields are shown as {twice[0]!r}: give each its own name", "fields"
                )
            if self.key is not None and self.key not in outputs:
                raise SchemaError(
                    f"{self.key!r} is not one of the fields shown ({', '.join(outputs)}); "
                    "the handle must be in the brief",
                    "key",
                )
        return self

    @property
    def paging_max(self) -> int:
        """``max_limit``, defaulting as ``paginate`` does: 100, or ``limit`` when larger."""
        return self.max_limit if self.max_limit is not None else max(100, self.limit)


def parse_field(item: Any) -> FieldSpec | None:
    """One ``fields`` entry as a spec (``"name = path:N"`` or an inline table), or None."""
    if isinstance(item, str):
        match = _FIELD.match(item)
        if match is None:
            return None
        path = tuple(p for p in match["path"].strip().split(".") if p)
        clip = int(match["clip"]) if match["clip"] else None
        name = match["name"].strip() if match["name"] else None
    elif isinstance(item, Mapping) and set(item) <= {"name", "path", "clip"} and "path" in item:
        raw, name, clip = item["path"], item.get("name"), item.get("clip")
        if not isinstance(raw, str) or (name is not None and not isinstance(name, str)):
            return None
        if clip is not None and (isinstance(clip, bool) or not isinstance(clip, int)):
            return None
        path = tuple(p for p in raw.split(".") if p)
    else:
        return None
    if not path or (clip is not None and clip < 2):
        return None
    return FieldSpec(path=path, name=name, clip=clip)


def known_keys(model: type[BaseModel]) -> list[str]:
    """The keys a table of ``model`` takes, sorted (for "unknown key" messages)."""
    return sorted(model.model_fields)


def expects(model: type[BaseModel], key: str) -> str:
    """What ``key`` of ``model`` takes, in words (its field's description)."""
    found = model.model_fields.get(key)
    return (found.description if found else None) or "a valid value"


def first_problem(
    exc: ValidationError, root: type[BaseModel] = ToolTable, *, tables: str | None = None
) -> tuple[tuple[str, ...], str]:
    """The first error of a validation as ``(key path, message)`` for a config message.

    ``tables`` names the key of ``root`` that holds ``ToolTable`` values by tool name
    (the proxy file's ``tools``). The path is cut to the config key (``tools.NAME.KEY``); a
    type error becomes ``must be <what the key expects>, got <value>``.
    """
    error = exc.errors()[0]
    loc = tuple(str(step) for step in error["loc"])
    model = root
    if tables is not None and loc[:1] == (tables,) and len(loc) >= 2:
        at, rest, model = loc[:2], loc[2:], ToolTable
    else:
        at, rest = (), loc
    kind = error["type"]
    if kind == SCHEMA_ERROR:
        ctx = error.get("ctx") or {}
        return (*at, str(ctx.get("key") or (rest[0] if rest else ""))), error["msg"]
    if kind == "extra_forbidden":
        noun = "option; known options" if model is ToolTable else "key; known keys"
        return (*at, rest[0]), f"unknown {noun}: {', '.join(known_keys(model))}"
    if not rest:
        what = "a table of options" if model is ToolTable else "a table of settings"
        return at, f"must be {what}, got {error['input']!r}"
    return (*at, rest[0]), f"must be {expects(model, rest[0])}, got {error['input']!r}"
