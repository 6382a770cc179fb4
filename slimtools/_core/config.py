"""What a stack of slimming decorators asks for, and one call as the pipeline sees it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from slimtools._core.keys import args_digest, snapshot_key
from slimtools.projection import DenyTree, Projection, denied_names
from slimtools.tokens import TokenCounter, count_tokens

FORMATS = ("concise", "detailed")
"""The values of the ``response_format`` parameter ``project_fields(response_format=True)`` adds."""


@dataclass(frozen=True, slots=True)
class PageSpec:
    """Options of ``@paginate``."""

    limit: int
    max_limit: int


@dataclass(frozen=True, slots=True)
class HandleSpec:
    """Options of ``@summarize_with_handle``."""

    key: str | None = None
    fetch: Callable[[str], Any] | None = None
    head: int = 20
    tail: int = 0


@dataclass(frozen=True, slots=True)
class SlimConfig:
    """What a stack of slimming decorators asks for; merged into one pipeline run."""

    projection: Projection | None = None
    """The brief allowlist (deny compiled in)."""
    detail: Projection | None = None
    """The detailed view: what handles keep and detailed briefs show (deny compiled in)."""
    deny: DenyTree | None = None
    """Paths removed from everything shown or stored."""
    formats: bool = False
    """Whether the tool takes ``response_format`` (concise briefs or detailed ones)."""
    paging: PageSpec | None = None
    handles: HandleSpec | None = None
    max_tokens: int | None = None
    counter: TokenCounter = count_tokens
    items: str | None = None
    """Dotted path to the record list inside a dict result (``"items"``, ``"data.results"``)."""
    on_unreadable: str = "withhold"
    """What a guarded tool does with a result it cannot read as records: ``"withhold"`` it,
    or (an explicit opt-in) show it as ``"text"``."""

    def merge(self, other: SlimConfig) -> SlimConfig:
        """Combine two decorators' options; the same option set twice is an error."""
        from slimtools.errors import ConfigurationError

        parts: dict[str, Any] = {}
        for name in ("projection", "paging", "handles"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine is not None and theirs is not None:
                label = {"projection": "@project_fields", "paging": "@paginate"}.get(
                    name, "@summarize_with_handle"
                )
                raise ConfigurationError(f"{label} is applied twice to the same tool")
            parts[name] = mine if mine is not None else theirs
        views = self if self.projection is not None else other  # project_fields' other options
        parts.update(
            detail=views.detail,
            deny=views.deny,
            formats=views.formats,
            on_unreadable=views.on_unreadable,
        )
        budgets = [b for b in (self.max_tokens, other.max_tokens) if b is not None]
        parts["max_tokens"] = min(budgets) if budgets else None
        parts["counter"] = other.counter if other.counter is not count_tokens else self.counter
        if self.items and other.items and self.items != other.items:
            raise ConfigurationError(
                f"items={self.items!r} and items={other.items!r} disagree on where the records are"
            )
        parts["items"] = self.items or other.items
        return SlimConfig(**parts)

    reduces: bool = field(init=False, default=False)
    """Whether stored records are reduced (a detail view or denied paths) before storing.

    Derived from ``detail`` and ``deny`` when the config is made (read on every call)."""
    guarded: bool = field(init=False, default=False)
    """Whether the tool has an allowlist or a deny list, so shows only what it can project
    (``slimtools.projection._readable``); derived when the config is made."""
    denied_names: frozenset[str] = field(init=False, default=frozenset())
    """The keys ``deny`` removes whole (folded), masked in exception messages
    (``projection._scrub``)."""
    allowed_names: frozenset[str] | None = field(init=False, default=None)
    """The names the allowlists show or read; in an exception message, a quoted or keyword
    pair under any other key is masked (``None``: no allowlist)."""
    named: frozenset[str] = field(init=False, default=frozenset())
    """Every name the allowlists read and ``deny`` names: a mapping keyed by one of them is
    one record, not records by id (``projection.records_by_id``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "reduces", self.detail is not None or self.deny is not None)
        object.__setattr__(self, "guarded", self.projection is not None or self.deny is not None)
        object.__setattr__(self, "denied_names", denied_names(self.deny))
        views = [v for v in (self.projection, self.detail) if v is not None]
        if views:
            allowed = frozenset().union(*(v.names for v in views)) - self.denied_names
            object.__setattr__(self, "allowed_names", allowed)
        tops = frozenset(self.deny or ())
        named = frozenset().union(*(v.names for v in views)) | self.denied_names | tops
        object.__setattr__(self, "named", named)

    @property
    def id_field(self) -> str:
        """Where a record read from a mapping of ids keeps its id: the handle key, or ``id``."""
        key = self.handles.key if self.handles is not None else None
        return key or "id"

    def keep(self, record: Any) -> Any:
        """What a handle keeps of ``record`` (already without what ``deny`` removes): its
        detail view, else the record."""
        if self.detail is not None:
            return self.detail.project(record)
        return record


@dataclass(slots=True)
class Call:
    """One tool call as the pipeline sees it: who, with which arguments, which page.

    Not ``frozen`` (though never changed): one is made per tool call, and a frozen
    dataclass's ``__init__`` costs three times as much.
    """

    tool: str
    companion: str
    args: dict[str, Any]
    """The arguments a hint repeats: those given and different from their defaults."""
    key_args: dict[str, Any]
    """Every argument with its default filled in: what identifies the query's snapshot."""
    page: Any = 1
    limit: Any = None
    response_format: Any = "concise"
    withheld: tuple[str, ...] = ()
    """The text of the hidden and secret arguments' values: removed from the tool's errors."""

    def snapshot_key(self) -> str:
        """Store key of this query's page-1 snapshot.

        Computed on demand, not per call: hashing the arguments is wasted on the calls
        that neither read nor write a snapshot (a result that fits on one page).
        """
        return snapshot_key(self.tool, args_digest(self.key_args))
