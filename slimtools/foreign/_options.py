"""A foreign tool's options: how ``wrap()`` and the proxy slim a tool they did not write.

``tool_options`` validates one tool's options (a proxy ``[tools.NAME]`` table, or
``wrap()``'s keywords) against the declarative ``ToolTable`` schema and returns the runtime
:class:`ToolOptions`; the allowlist model a table's ``fields`` describe is built here.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AliasPath, BaseModel, Field, ValidationError, create_model

from slimtools.clip import Clip
from slimtools.errors import ConfigurationError
from slimtools.foreign._schema import FieldSpec, ToolTable, first_problem
from slimtools.projection import DenyTree, compile_deny

__all__ = ["DEFAULT_MAX_TOKENS", "ToolOptions", "config_error", "table_options", "tool_options"]


DEFAULT_MAX_TOKENS = 20_000
"""The global budget of unconfigured tools when the config says nothing (or there is none)."""


@dataclass(frozen=True)
class ToolOptions:
    """How one upstream tool is slimmed (every key of a ``[tools.NAME]`` table)."""

    items: str | None = None
    fields: tuple[FieldSpec, ...] | None = None
    deny: tuple[str, ...] = ()
    key: str | None = None
    limit: int = 20
    max_limit: int = 100
    max_tokens: int | None = None
    category: str | None = None
    read_only: bool | None = None
    head: int | None = None
    tail: int = 0
    description: str | None = None
    response_format: bool = False
    """Add a ``response_format`` parameter: "detailed" shows whole records instead of briefs."""
    emit: str | None = None
    """The channels this tool's results use (``EMITS``); None: the global choice."""
    model: type[BaseModel] | None = None
    """An allowlist model given in code (``slimtools.wrap(tool, fields=Brief)``)."""
    on_unreadable: str = "withhold"
    """With ``fields`` or ``deny``: ``"text"`` shows a result that cannot be read as records
    (or a passed-through free text) as text, an explicit opt-in (see ``project_fields``); by
    default it is withheld."""

    @property
    def guards(self) -> bool:
        """Whether the tool shows only what it can project (it has an allowlist or a deny)."""
        return bool(self.fields or self.model is not None or self.deny)

    @property
    def allowlisted(self) -> bool:
        """Whether the tool has an allowlist (``fields``, or a model given in code)."""
        return bool(self.fields or self.model is not None)

    def brief_model(self, name: str = "Brief") -> type[BaseModel] | list[str] | None:
        """The allowlist for ``project_fields``: a list of paths, or a model when renaming.

        Plain dotted paths stay nested (``user.login`` -> ``{"user": {"login": ...}}``).
        """
        if self.model is not None:
            return self.model
        if not self.fields:
            return None
        if not any(f.renamed or f.clip for f in self.fields):
            return [".".join(f.path) for f in self.fields]
        return _model(name, self.fields)

    @functools.cached_property
    def deny_tree(self) -> DenyTree | None:
        """``deny`` compiled once (None: nothing denied)."""
        return compile_deny(list(self.deny))


def _model(name: str, fields: Sequence[FieldSpec]) -> type[BaseModel]:
    """A Pydantic allowlist: renamed fields read their path; plain dotted paths nest."""
    top: dict[str, Any] = {}
    nested: dict[str, list[FieldSpec]] = {}
    for spec in fields:
        if spec.renamed or len(spec.path) == 1:
            out = spec.name or spec.path[0]
            annotation: Any = Annotated[str, Clip(spec.clip)] if spec.clip else Any
            # Internal identifiers: output names such as "html-url" need not be Python names.
            top[f"f{len(top)}_"] = (
                annotation,
                Field(serialization_alias=out, validation_alias=AliasPath(*spec.path)),
            )
        else:
            nested.setdefault(spec.path[0], []).append(
                FieldSpec(path=spec.path[1:], name=None, clip=spec.clip)
            )
    for head, subs in nested.items():
        sub = _model(f"{name}_{len(top)}", subs)
        top[f"f{len(top)}_"] = (
            sub | None,
            Field(serialization_alias=head, validation_alias=AliasPath(head)),
        )
    model: type[BaseModel] = create_model(name, **top)
    return model


def tool_options(table: Mapping[str, Any], *, source: str = "<options>") -> ToolOptions:
    """Validate one tool's options given as a mapping (a config table, or keywords).

    ``fields`` may also be a Pydantic allowlist model, given in code (``wrap()``'s keywords,
    a hook's per-tool table): it is used as it is, and the other keys are validated.

    Raises:
        ConfigurationError: an unknown option or a bad value, named.
    """
    model = table.get("fields")
    if isinstance(model, type) and issubclass(model, BaseModel):
        rest = {k: v for k, v in table.items() if k != "fields"}
        return dataclasses.replace(tool_options(rest, source=source), model=model)
    try:
        parsed = ToolTable.model_validate(dict(table))
    except ValidationError as exc:
        path, message = first_problem(exc, ToolTable)
        raise config_error(source, message, path) from None
    return table_options(parsed)


def table_options(table: ToolTable) -> ToolOptions:
    """The runtime options of a validated table (``max_limit`` defaulted as paginate does)."""
    values = {key: getattr(table, key) for key in ToolTable.model_fields}
    return ToolOptions(**{**values, "max_limit": table.paging_max})


def config_error(where: str, message: str, path: Sequence[str] = ()) -> ConfigurationError:
    """``where: key.path: message`` as the error a config problem raises (quoted keys)."""
    key = ".".join(_quote(p) for p in path)
    return ConfigurationError(f"{where}: {key + ': ' if key else ''}{message}")


def _quote(part: str) -> str:
    return part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else f'"{part}"'
