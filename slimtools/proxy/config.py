"""The proxy's TOML configuration: a global budget, a handle store, and options per tool.

```toml
max_tokens = 20000             # unconfigured tools: a larger result becomes an envelope
store = "sqlite:///handles.db" # default memory://; sqlite or redis to share handles

[tools.list_issues]            # a tool name, or a glob such as "list_*"
items = "items"                # where the records are in a dict result
fields = ["number", "title:120", "state", "author = user.login", "labels.name"]
deny = ["node_id", "user.email"]
key = "number"                 # the brief field get_record takes
limit = 10
category = "search"
response_format = true         # the model may ask for "detailed" (whole) records
```

A field is ``"path"`` (dotted; nested output kept), ``"name = path"`` (renamed) and either
may end in ``:N`` to clip a text to N characters; an inline table
``{name = "author", path = "user.login", clip = 40}`` says the same. Every problem is
reported at start as a ``ConfigurationError`` naming the file, line and key.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import AliasPath, BaseModel, Field, create_model

from slimtools._core.deny import DenyTree, compile_deny
from slimtools.clip import Clip
from slimtools.errors import ConfigurationError
from slimtools.toolkit import CATEGORIES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    try:
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise ImportError(
            "reading slimtools proxy configs on Python 3.10 needs tomli: "
            "pip install 'slimtools[proxy]'"
        ) from exc

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "FieldSpec",
    "ProxyConfig",
    "ToolOptions",
    "load_config",
    "parse_config",
    "tool_options",
]

DEFAULT_MAX_TOKENS = 20_000
"""The global budget of unconfigured tools when the config says nothing (or there is none)."""

_FIELD = re.compile(
    r"^\s*(?:(?P<name>[^=:]+?)\s*=\s*)?(?P<path>[^=:]+?)\s*(?::\s*(?P<clip>\d+))?\s*$"
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
    model: type[BaseModel] | None = None
    """An allowlist model given in code (``slimtools.wrap(tool, fields=Brief)``)."""
    on_unreadable: str = "withhold"
    """With ``fields`` or ``deny``: ``"text"`` shows a result that cannot be read as records
    as text (an explicit opt-in; see ``project_fields``); by default it is withheld."""

    @property
    def guards(self) -> bool:
        """Whether the tool shows only what it can project (it has an allowlist or a deny)."""
        return bool(self.fields or self.model is not None or self.deny)

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


@dataclass(frozen=True)
class ProxyConfig:
    """The whole configuration: global settings and per-tool options in file order."""

    max_tokens: int | None = DEFAULT_MAX_TOKENS
    store: str | None = None
    session: str | None = None
    companion: str = "get_record"
    name: str = "proxy"
    tools: tuple[tuple[str, ToolOptions], ...] = ()
    source: str = "<defaults>"
    _exact: dict[str, ToolOptions] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._exact.update({p: o for p, o in self.tools if not _is_glob(p)})

    def options_for(self, tool: str) -> ToolOptions | None:
        """The options of ``tool``: its own table, else the first glob that matches, else None."""
        found = self._exact.get(tool)
        if found is not None:
            return found
        for pattern, options in self.tools:
            if _is_glob(pattern) and fnmatch.fnmatchcase(tool, pattern):
                return options
        return None

    def patterns_matching_nothing(self, names: Sequence[str]) -> list[str]:
        """Configured tool names and globs that no upstream tool matches (likely typos)."""
        return [p for p, _ in self.tools if not any(fnmatch.fnmatchcase(n, p) for n in names)]


def _is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


_TOP_KEYS = {"max_tokens", "store", "session", "companion", "name", "tools"}
_TOOL_KEYS = {
    "items",
    "fields",
    "deny",
    "key",
    "limit",
    "max_limit",
    "max_tokens",
    "category",
    "read_only",
    "head",
    "tail",
    "description",
    "response_format",
    "on_unreadable",
}


class _Where:
    """Finds the line of a key in the TOML text, for error messages."""

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.lines = text.splitlines()

    def line(self, *path: str) -> int | None:
        table: tuple[str, ...] = ()
        best: int | None = None
        for number, raw in enumerate(self.lines, 1):
            line = raw.split("#", 1)[0].strip()
            header = re.match(r"^\[\s*([^\]]+?)\s*\]$", line)
            if header:
                table = tuple(_split_key(header.group(1)))
                if table == path:
                    best = best or number
                continue
            assign = re.match(r"^([^=]+?)\s*=", line)
            if assign and (*table, *_split_key(assign.group(1))) == path:
                return number
        return best

    def error(self, message: str, *path: str) -> ConfigurationError:
        line = self.line(*path) if path else None
        key = ".".join(_quote(p) for p in path)
        where = f"{self.source}:{line}" if line else self.source
        return ConfigurationError(f"{where}: {key + ': ' if key else ''}{message}")


def _split_key(key: str) -> list[str]:
    return [p.strip().strip('"').strip("'") for p in re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', key)]


def _quote(part: str) -> str:
    return part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else f'"{part}"'


def load_config(path: str | Path | None) -> ProxyConfig:
    """Read and validate a proxy config; ``None`` gives the defaults.

    Raises:
        ConfigurationError: the file is missing, is not TOML, or a key is unknown or has a
            bad value; the message names the file, the line and the key.
    """
    if path is None:
        return ProxyConfig()
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"{source}: cannot read the config: {exc.strerror}") from exc
    return parse_config(text, source)


def parse_config(text: str, source: str = "<config>") -> ProxyConfig:
    """Validate the TOML ``text`` of a proxy config (see :func:`load_config`)."""
    where = _Where(source, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{source}: not valid TOML: {exc}") from exc
    for key in data:
        if key not in _TOP_KEYS:
            raise where.error(f"unknown key; known keys: {', '.join(sorted(_TOP_KEYS))}", key)
    budget = data.get("max_tokens", DEFAULT_MAX_TOKENS)
    if budget is False or budget == 0:
        budget = None
    elif not _positive(budget):
        raise where.error(
            f"must be a positive integer, or 0/false for none, got {budget!r}", "max_tokens"
        )
    strings = {}
    for key in ("store", "session", "companion", "name"):
        value = data.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise where.error(f"must be a non-empty string, got {value!r}", key)
        strings[key] = value
    tables = data.get("tools", {})
    if not isinstance(tables, Mapping):
        raise where.error("must be a table of [tools.NAME] tables", "tools")
    tools = tuple((name, _tool(where, name, table)) for name, table in tables.items())
    return ProxyConfig(
        max_tokens=budget,
        store=strings["store"],
        session=strings["session"],
        companion=strings["companion"] or "get_record",
        name=strings["name"] or "proxy",
        tools=tools,
        source=source,
    )


def tool_options(table: Mapping[str, Any], *, source: str = "<options>") -> ToolOptions:
    """Validate one tool's options given as a mapping (a config table, or keywords).

    Raises:
        ConfigurationError: an unknown option or a bad value, named.
    """
    return _tool(_Where(source, ""), "tool", table)


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _tool(where: _Where, name: str, table: Any) -> ToolOptions:
    at = ("tools", name)
    if not isinstance(table, Mapping):
        raise where.error("must be a table of options", *at)
    for key in table:
        if key not in _TOOL_KEYS:
            known = ", ".join(sorted(_TOOL_KEYS))
            raise where.error(f"unknown option; known options: {known}", *at, key)
    opts: dict[str, Any] = {}
    for key in ("limit", "max_limit", "max_tokens", "head"):
        if key in table:
            if not _positive(table[key]):
                raise where.error(f"must be a positive integer, got {table[key]!r}", *at, key)
            opts[key] = table[key]
    if "tail" in table:
        tail = table["tail"]
        if isinstance(tail, bool) or not isinstance(tail, int) or tail < 0:
            raise where.error(f"must be an integer >= 0, got {tail!r}", *at, "tail")
        opts["tail"] = tail
    if opts.get("max_limit", 100) < opts.get("limit", 20):
        raise where.error(
            "must be at least limit", *at, "max_limit" if "max_limit" in table else "limit"
        )
    for key in ("items", "key", "description"):
        if key in table:
            value = table[key]
            if not isinstance(value, str) or not value.strip("."):
                raise where.error(f"must be a non-empty string, got {value!r}", *at, key)
            opts[key] = value
    if "category" in table:
        if table["category"] not in CATEGORIES:
            raise where.error(
                f"must be one of {', '.join(sorted(CATEGORIES))}, got {table['category']!r}",
                *at,
                "category",
            )
        opts["category"] = table["category"]
    if "response_format" in table:
        if not isinstance(table["response_format"], bool):
            got = table["response_format"]
            raise where.error(f"must be true or false, got {got!r}", *at, "response_format")
        opts["response_format"] = table["response_format"]
    if "read_only" in table:
        if not isinstance(table["read_only"], bool):
            raise where.error(
                f"must be true or false, got {table['read_only']!r}", *at, "read_only"
            )
        opts["read_only"] = table["read_only"]
    if "on_unreadable" in table:
        opts["on_unreadable"] = _on_unreadable(where, at, table["on_unreadable"])
    if "deny" in table:
        deny = table["deny"]
        if not isinstance(deny, list) or not all(isinstance(d, str) and d.strip(".") for d in deny):
            raise where.error("must be a list of field names or dotted paths", *at, "deny")
        opts["deny"] = tuple(d.strip(".") for d in deny)
    if "fields" in table:
        opts["fields"] = _fields(where, at, table["fields"])
        outputs = [f.name or f.path[0] for f in opts["fields"]]
        if "key" in opts and opts["key"] not in outputs:
            raise where.error(
                f"{opts['key']!r} is not one of the fields shown ({', '.join(outputs)}); "
                "the handle must be in the brief",
                *at,
                "key",
            )
    return ToolOptions(**opts)


def _on_unreadable(where: _Where, at: tuple[str, str], value: Any) -> str:
    if value not in ("withhold", "text"):
        raise where.error(f'must be "withhold" or "text", got {value!r}', *at, "on_unreadable")
    return str(value)


def _fields(where: _Where, at: tuple[str, str], value: Any) -> tuple[FieldSpec, ...]:
    if not isinstance(value, list) or not value:
        raise where.error("must be a non-empty list of fields", *at, "fields")
    specs = []
    for item in value:
        spec = _field(item)
        if spec is None:
            raise where.error(
                f'{item!r} is not a field: write "path", "name = path", either with ":N" to '
                'clip, or {name = "...", path = "...", clip = N}',
                *at,
                "fields",
            )
        specs.append(spec)
    return tuple(specs)


def _field(item: Any) -> FieldSpec | None:
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
        if clip is not None and not _positive(clip):
            return None
        path = tuple(p for p in raw.split(".") if p)
    else:
        return None
    if not path or (clip is not None and clip < 2):
        return None
    return FieldSpec(path=path, name=name, clip=clip)
