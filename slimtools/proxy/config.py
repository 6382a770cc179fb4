"""The proxy's TOML configuration: a global budget, a handle store, and options per tool.

```toml
max_tokens = 20000             # unconfigured tools: a larger result becomes an envelope
store = "sqlite:///handles.db" # default memory://; sqlite or redis to share handles
auto_briefs = 2000             # unconfigured record results past this: briefs (0: never)
emit = "text"                  # "both", "text" or "structured" (default: per client)
call_timeout = 60              # seconds an upstream call may take (0: unbounded)

[tools.list_issues]            # a tool name, or a glob such as "list_*"
items = "items"                # where the records are in a dict result
fields = ["number", "title:120", "state", "author = user.login", "labels.name"]
deny = ["node_id", "user.email"]
key = "number"                 # the brief field get_record takes
limit = 10
category = "search"
response_format = true         # the model may ask for "detailed" (whole) records
emit = "both"                  # this tool's channels, over the global emit
```

A field is ``"path"`` (dotted; nested output kept), ``"name = path"`` (renamed) and either
may end in ``:N`` to clip a text to N characters; an inline table
``{name = "author", path = "user.login", clip = 40}`` says the same. The keys, their types
and their messages come from one schema (``slimtools.proxy._schema``, over the tool table of
``slimtools.foreign``); every problem is reported at start as a ``ConfigurationError``
naming the file, line and key. The ``deny`` of every glob matching a tool is added to its
options (deny wins). See docs/proxy-config.md.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from slimtools.errors import ConfigurationError
from slimtools.foreign import (
    DEFAULT_MAX_TOKENS,
    FieldSpec,
    ToolOptions,
    config_error,
    first_problem,
    table_options,
    tool_options,
)
from slimtools.proxy._schema import ConfigFile

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
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_MAX_TOKENS",
    "FieldSpec",
    "ProxyConfig",
    "ToolOptions",
    "load_config",
    "parse_config",
    "tool_options",
]


DEFAULT_AUTO_BRIEFS = 2_000
"""Unconfigured record results past this many tokens are shown as automatic briefs."""

DEFAULT_CALL_TIMEOUT = 60.0
"""Seconds the proxy waits for the upstream's answer to one call before it gives up on it."""

EMITS = ("both", "text", "structured")
"""The values of ``emit``: which channels of an MCP tool result carry the envelope."""


@dataclass(frozen=True)
class ProxyConfig:
    """The whole configuration: global settings and per-tool options in file order."""

    max_tokens: int | None = DEFAULT_MAX_TOKENS
    store: str | None = None
    session: str | None = None
    companion: str = "get_record"
    name: str = "proxy"
    auto_briefs: int | None = DEFAULT_AUTO_BRIEFS
    emit: str | None = None
    """The channels of tool results (``EMITS``); None: chosen per client."""
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT
    """Seconds one forwarded request may wait for the upstream; None: unbounded."""
    tools: tuple[tuple[str, ToolOptions], ...] = ()
    source: str = "<defaults>"
    _exact: dict[str, ToolOptions] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._exact.update({p: o for p, o in self.tools if not _is_glob(p)})

    def options_for(self, tool: str) -> ToolOptions | None:
        """The options of ``tool``: its own table, else the first glob that matches, else None.

        Deny wins: the ``deny`` of every glob that matches (``[tools."*"]``) is added to the
        options found, so a tool with its own table never drops a global deny.
        """
        found = self._exact.get(tool)
        globs = [o for p, o in self.tools if _is_glob(p) and fnmatch.fnmatchcase(tool, p)]
        if found is None and globs:
            found = globs[0]
        if found is None:
            return None
        extra = [d for options in globs for d in options.deny if d not in found.deny]
        if not extra:
            return found
        return dataclasses.replace(found, deny=(*found.deny, *dict.fromkeys(extra)))

    def patterns_matching_nothing(self, names: Sequence[str]) -> list[str]:
        """Configured tool names and globs that no upstream tool matches (likely typos)."""
        return [p for p, _ in self.tools if not any(fnmatch.fnmatchcase(n, p) for n in names)]


def _is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


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
        return config_error(f"{self.source}:{line}" if line else self.source, message, path)


def _split_key(key: str) -> list[str]:
    return [p.strip().strip('"').strip("'") for p in re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', key)]


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
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start]
        raise ConfigurationError(
            f"{source}: not UTF-8 text: byte 0x{byte:02x} at offset {exc.start} "
            "(TOML configs are UTF-8; save the file as UTF-8)"
        ) from None
    return parse_config(text, source)


def parse_config(text: str, source: str = "<config>") -> ProxyConfig:
    """Validate the TOML ``text`` of a proxy config (see :func:`load_config`)."""
    where = _Where(source, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{source}: not valid TOML: {exc}") from exc
    try:
        parsed = ConfigFile.model_validate(data)
    except ValidationError as exc:
        path, message = first_problem(exc, ConfigFile, tables="tools")
        raise where.error(message, *path) from None
    briefs = DEFAULT_AUTO_BRIEFS if "auto_briefs" not in data else parsed.auto_briefs
    budget = DEFAULT_MAX_TOKENS if "max_tokens" not in data else parsed.max_tokens
    timeout = DEFAULT_CALL_TIMEOUT if "call_timeout" not in data else parsed.call_timeout
    return ProxyConfig(
        max_tokens=budget if budget and budget is not True else None,
        store=parsed.store,
        session=parsed.session,
        companion=parsed.companion,
        name=parsed.name,
        auto_briefs=briefs if briefs and briefs is not True else None,
        emit=parsed.emit,
        call_timeout=float(timeout) if timeout and timeout is not True else None,
        tools=tuple((name, table_options(table)) for name, table in parsed.tools.items()),
        source=source,
    )
