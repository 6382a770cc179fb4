"""The slimming decorators: ``project_fields``, ``paginate`` and ``summarize_with_handle``.

Each decorator validates its options once, when it is applied, and records them; applied to
an already-slimmed tool it merges them into the same wrapper, so any stacking order gives
one pipeline run per call (wrapping: ``slimtools._core.wrapper``; the pipeline:
``slimtools._core.pipeline``). The added ``page``/``limit`` parameters appear in
``inspect.signature`` and ``__annotations__``, where frameworks read tool schemas. Static type
checkers cannot see those added keyword parameters; they exist at run time and are tested
there.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Literal, ParamSpec, Protocol, TypeAlias, overload

from pydantic import BaseModel

from slimtools._core.config import HandleSpec, PageSpec, SlimConfig
from slimtools._core.wrapper import build
from slimtools.envelope import Envelope
from slimtools.errors import ConfigurationError
from slimtools.projection import Projection, compile_deny
from slimtools.tokens import TokenCounter, count_tokens

P = ParamSpec("P")


SlimTool: TypeAlias = Callable[..., Envelope[Any]]
"""A slimmed sync tool as static types see it (``page``/``limit`` exist at run time only)."""

AsyncSlimTool: TypeAlias = Callable[..., Coroutine[Any, Any, Envelope[Any]]]
"""A slimmed async tool as static types see it."""


class SlimDecorator(Protocol):
    """What the decorator factories return: sync tools stay sync, async stay async."""

    @overload
    def __call__(self, fn: Callable[P, Coroutine[Any, Any, Any]], /) -> AsyncSlimTool: ...
    @overload
    def __call__(self, fn: Callable[P, Any], /) -> SlimTool: ...
    @overload
    def __call__(
        self, fn: classmethod[Any, Any, Any] | staticmethod[Any, Any], /
    ) -> classmethod[Any, Any, Any] | staticmethod[Any, Any]: ...


def _check_budget(max_tokens: int | None) -> None:
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
    ):
        raise ConfigurationError(f"max_tokens must be a positive int or None, got {max_tokens!r}")


def _decorator(cfg: SlimConfig) -> SlimDecorator:
    def decorate(fn: Any) -> Any:
        return build(fn, cfg)

    return decorate


def _check_items(items: str | None) -> str | None:
    if items is not None and (not isinstance(items, str) or not items.strip(".")):
        raise ConfigurationError(f"items= must be a dotted path such as 'items', got {items!r}")
    return items


def _check_projection(on_unreadable: str, response_format: bool, *, has_detail: bool) -> None:
    """Refuse ``project_fields`` options that cannot work together, by name."""
    if on_unreadable not in ("withhold", "text"):
        raise ConfigurationError(
            f'project_fields(on_unreadable=...) must be "withhold" or "text", got {on_unreadable!r}'
        )
    if response_format not in (True, False):
        raise ConfigurationError(f"response_format= must be True or False, got {response_format!r}")
    if response_format and not has_detail:
        raise ConfigurationError(
            "project_fields(response_format=True) needs detail=: detailed briefs use that allowlist"
        )


def project_fields(
    spec: type[BaseModel] | list[str] | tuple[str, ...],
    /,
    *,
    detail: type[BaseModel] | list[str] | tuple[str, ...] | None = None,
    deny: list[str] | tuple[str, ...] = (),
    response_format: bool = False,
    items: str | None = None,
    on_unreadable: Literal["withhold", "text"] = "withhold",
) -> SlimDecorator:
    """Keep only allowlisted fields of each record (deny by default).

    What cannot be projected is withheld: a result that cannot be read as records (prose
    text, an object without fields) comes back as an envelope that says so (its kind, size
    and why) with none of its content, and the ``slimtools`` logger warns once per tool.
    JSON text (also fenced, after a one-line preamble, with ``NaN``), JSON Lines, Python
    literal reprs, models, dataclasses, objects, content blocks and ``ToolMessage``
    artifacts are read as records (``slimtools.projection.read``), and so is a dict of ids
    to records (``slimtools.projection.records_by_id``). A denied field's value
    seen in the records is masked in every other string the call shows or stores (values
    of fewer than 5 characters exempt), and in exception messages ``key: value`` pairs of
    denied keys are masked.

    Args:
        spec: a Pydantic model (field names are output names; ``validation_alias`` or
            ``AliasPath`` name the source; ``Annotated[str, Clip(n)]`` clips) or a list of
            field names, dotted for nested ones (``"user.login"``).
        detail: a second allowlist for the detailed view: what a handle keeps (so what
            ``get_record``, the MCP resources and live ``fetch=`` results show) and what
            detailed briefs show. Without it a handle keeps the full record (minus ``deny``).
        deny: field names or dotted record paths removed from everything shown or stored
            (briefs, detail, get_record, page snapshots). Deny wins: a denied path is left
            out even where an allowlist names it.
        response_format: add a ``response_format: Literal["concise", "detailed"]`` keyword
            parameter (default ``"concise"``) to the tool; detailed briefs use ``detail``.
        items: where the records are when the tool returns one dict around them, as a
            dotted path (``"items"`` for GitHub search, ``"web.results"`` for Brave).
        on_unreadable: ``"withhold"`` (default) or ``"text"``: show a result that cannot be
            read as records as text, paged as text results are. Risk: that text is shown
            whole; the allowlist cannot apply to it and ``deny`` masks only the values of
            ``key: value`` pairs it can spot. Use it only for a tool whose text you trust.
    """
    tree = compile_deny(deny)
    _check_projection(on_unreadable, response_format, has_detail=detail is not None)
    cfg = SlimConfig(
        projection=Projection.from_spec(spec, tree),
        detail=Projection.from_spec(detail, tree) if detail is not None else None,
        deny=tree,
        formats=response_format,
        items=_check_items(items),
        on_unreadable=on_unreadable,
    )
    return _decorator(cfg)


@overload
def paginate(
    fn: None = None,
    /,
    *,
    limit: int = ...,
    max_limit: int | None = ...,
    max_tokens: int | None = ...,
    token_counter: TokenCounter | None = ...,
    items: str | None = ...,
) -> SlimDecorator: ...
@overload
def paginate(fn: Callable[P, Coroutine[Any, Any, Any]], /) -> AsyncSlimTool: ...
@overload
def paginate(fn: Callable[P, Any], /) -> SlimTool: ...
def paginate(
    fn: Any = None,
    /,
    *,
    limit: int = 20,
    max_limit: int | None = None,
    max_tokens: int | None = None,
    token_counter: TokenCounter | None = None,
    items: str | None = None,
) -> Any:
    """Return one page of the result and the exact call for the next.

    Adds ``page`` (1-based) and ``limit`` keyword parameters to the tool's signature. Later
    pages of one query come from a snapshot taken with page 1, so every item appears
    exactly once across pages. Text results are paged by lines.

    Args:
        limit: items (or lines) per page by default.
        max_limit: the largest ``limit`` a caller may ask for; larger ones are capped.
            Default: ``max(100, limit)``.
        max_tokens: the serialised envelope never exceeds this many tokens.
        token_counter: counts tokens for ``max_tokens`` (default: ``count_tokens``).
        items: dotted path to the records inside a dict result (see ``project_fields``).
    """
    if max_limit is None:
        max_limit = max(100, limit) if isinstance(limit, int) else 100
    for label, value in (("limit", limit), ("max_limit", max_limit)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigurationError(f"paginate({label}=...) must be a positive int, got {value!r}")
    if max_limit < limit:
        raise ConfigurationError(f"paginate(max_limit={max_limit}) is below limit={limit}")
    _check_budget(max_tokens)
    cfg = SlimConfig(
        paging=PageSpec(limit, max_limit),
        max_tokens=max_tokens,
        counter=token_counter or count_tokens,
        items=_check_items(items),
    )
    deco = _decorator(cfg)
    return deco if fn is None else deco(fn)


@overload
def summarize_with_handle(
    fn: None = None,
    /,
    *,
    key: str | None = ...,
    fetch: Callable[[str], Any] | None = ...,
    head: int = ...,
    tail: int = ...,
    max_tokens: int | None = ...,
    token_counter: TokenCounter | None = ...,
    items: str | None = ...,
) -> SlimDecorator: ...
@overload
def summarize_with_handle(fn: Callable[P, Coroutine[Any, Any, Any]], /) -> AsyncSlimTool: ...
@overload
def summarize_with_handle(fn: Callable[P, Any], /) -> SlimTool: ...
def summarize_with_handle(
    fn: Any = None,
    /,
    *,
    key: str | None = None,
    fetch: Callable[[str], Any] | None = None,
    head: int = 20,
    tail: int = 0,
    max_tokens: int | None = None,
    token_counter: TokenCounter | None = None,
    items: str | None = None,
) -> Any:
    """Give every brief a handle that the toolkit's ``get_record`` expands to the full record.

    Args:
        key: the brief field whose value is the handle (``get_record(3)``); without it a
            short generated ``handle`` field is added to each brief.
        fetch: with ``key``, nothing is stored and ``get_record`` calls ``fetch(handle)``
            (the handle as a string) live.
        head: for text results, the lines shown (and the page size ``get_record`` reads).
        tail: for text results such as command output, the last lines also shown, with an
            explicit "N lines omitted" marker between.
        max_tokens: the serialised envelope never exceeds this many tokens.
        token_counter: counts tokens for ``max_tokens`` (default: ``count_tokens``).
        items: dotted path to the records inside a dict result (see ``project_fields``).
    """
    if key is not None and (not isinstance(key, str) or not key):
        raise ConfigurationError(
            f"summarize_with_handle(key=...) must be a field name, got {key!r}"
        )
    if fetch is not None and not callable(fetch):
        raise ConfigurationError("summarize_with_handle(fetch=...) must be callable")
    if fetch is not None and key is None:
        raise ConfigurationError(
            "summarize_with_handle(fetch=...) needs key=: the handle is what fetch receives"
        )
    for label, value, low in (("head", head, 1), ("tail", tail, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigurationError(
                f"summarize_with_handle({label}=...) must be an int >= {low}, got {value!r}"
            )
    _check_budget(max_tokens)
    cfg = SlimConfig(
        handles=HandleSpec(key=key, fetch=fetch, head=head, tail=tail),
        max_tokens=max_tokens,
        counter=token_counter or count_tokens,
        items=_check_items(items),
    )
    deco = _decorator(cfg)
    return deco if fn is None else deco(fn)
