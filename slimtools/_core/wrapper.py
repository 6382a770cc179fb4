"""The wrapt shell around a slimmed tool: its state, its signature and how a call is run.

``build`` wraps the user's callable once per decorator stack (re-wrapping the original when
another slimming decorator is applied), so every stacking order yields one wrapper and one
pipeline run per call. Wrappers are wrapt ``FunctionWrapper`` subclasses, so functions,
methods, classmethods and staticmethods work; they report a signature with the added
``page``/``limit`` parameters, where frameworks read tool schemas. A call runs the
pipeline (``slimtools._core.pipeline``) through a driver (``slimtools._core.drive``) against
the keeper of the tool's toolkit (``slimtools._core.keeper``), never the toolkit itself.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import wrapt
from pydantic import Field

from slimtools._core.config import Call, SlimConfig
from slimtools._core.drive import drive_async, drive_sync
from slimtools._core.keeper import DEFAULT_KEEPER, Keeper
from slimtools._core.observed import observed_run
from slimtools._core.params import NO_ROLES, Roles, reveal, roles, withheld_values
from slimtools._core.pipeline import run
from slimtools.envelope import Envelope
from slimtools.errors import ConfigurationError
from slimtools.instrumentation import REGISTRY


@dataclass(frozen=True)
class SlimState:
    """Everything a slim wrapper knows, kept on the wrapper itself as ``_self_slim``.

    (Setting a plain attribute on a wrapt proxy writes through to the user's function, so
    stacked decorators would overwrite each other; ``_self_``-prefixed names stay on the
    proxy.)
    """

    cfg: SlimConfig
    original: Any
    name: str
    positional: tuple[str, ...]
    var_positional: str | None
    defaults: dict[str, Any]
    drops_first: bool
    is_async: bool
    keeper: Keeper | None = None
    """The keeper of the toolkit that registered the tool; ``None``: the default one."""
    # Derived once here rather than on every call (see ``_call_of``):
    bound_positional: tuple[str, ...] = ()
    """``positional`` as a bound call fills it (without ``self``/``cls`` when dropped)."""
    key_defaults: dict[str, Any] = field(default_factory=dict)
    """``defaults`` without a method's ``self``/``cls``: the base of every snapshot key."""
    roles: Roles = NO_ROLES
    """Parameters the model does not see (``slimtools._core.params``): never in hints."""


def slim_state(fn: Any) -> SlimState | None:
    """The slimming state of a decorated tool, or ``None`` for an undecorated callable."""
    state = getattr(fn, "_self_slim", None)
    if isinstance(state, SlimState):
        return state
    inner = getattr(fn, "__func__", None)
    if isinstance(fn, (classmethod, staticmethod)) and inner is not None:
        return slim_state(inner)
    return None


def _function_of(original: Any) -> Callable[..., Any]:
    if isinstance(original, (classmethod, staticmethod)):
        return original.__func__
    return original  # type: ignore[no-any-return]


_PAGE_DOC = "1-based page number (default 1)."


_FORMAT_DOC = (
    'How much of each item to show: "detailed" adds what the concise briefs leave out '
    '(default "concise").'
)


def _added_parameters(cfg: SlimConfig) -> list[tuple[inspect.Parameter, str]]:
    """The keyword parameters the decorators add, each with the option that adds it."""
    added: list[tuple[inspect.Parameter, str]] = []
    keyword = inspect.Parameter.KEYWORD_ONLY
    if cfg.paging is not None:
        limit_doc = (
            f"Items (or lines) per page, 1 to {cfg.paging.max_limit} (default {cfg.paging.limit})."
        )
        page = Annotated[int, Field(description=_PAGE_DOC)]
        limit = Annotated[int, Field(description=limit_doc)]
        added += [
            (inspect.Parameter("page", keyword, default=1, annotation=page), "@paginate"),
            (
                inspect.Parameter("limit", keyword, default=cfg.paging.limit, annotation=limit),
                "@paginate",
            ),
        ]
    if cfg.formats:
        fmt = Annotated[Literal["concise", "detailed"], Field(description=_FORMAT_DOC)]
        param = inspect.Parameter("response_format", keyword, default="concise", annotation=fmt)
        added.append((param, "project_fields(response_format=True)"))
    return added


def _visible_signature(original: Any, cfg: SlimConfig) -> inspect.Signature:
    sig = inspect.signature(_function_of(original))
    added = _added_parameters(cfg)
    if not added:
        return sig
    for param, option in added:
        if param.name in sig.parameters:
            raise ConfigurationError(
                f"{getattr(original, '__qualname__', original)!r} already has a parameter "
                f"named {param.name!r}; {option} adds its own"
            )
    params = list(sig.parameters.values())
    var_kw = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    rest = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]
    extra = [param for param, _ in added]
    return sig.replace(parameters=[*rest, *extra, *var_kw], return_annotation=Envelope[Any])


def _make_state(
    original: Any, cfg: SlimConfig, name: str | None, keeper: Keeper | None
) -> SlimState:
    func = _function_of(original)
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    positional = tuple(
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    )
    var_pos = next((p.name for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL), None)
    defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    is_method_like = (
        not isinstance(original, staticmethod)
        and bool(positional)
        and positional[0] in ("self", "cls")
    )
    key = cfg.handles.key if cfg.handles is not None else None
    views = [cfg.projection, cfg.detail if cfg.formats else None]
    for view in [v for v in views if v is not None]:
        if key and key not in view.output_names:
            fields = ", ".join(view.output_names)
            which = "detail allowlist" if view is cfg.detail else "allowlist"
            raise ConfigurationError(
                f"summarize_with_handle(key={key!r}) names a field that project_fields drops "
                f"(not in its {which}, or denied); allowlist it (fields: {fields})"
            )
    drops_first = is_method_like or isinstance(original, classmethod)
    param_roles = roles(func)
    return SlimState(
        cfg=cfg,
        original=original,
        name=name or str(getattr(func, "__name__", "tool")),
        positional=positional,
        var_positional=var_pos,
        defaults=defaults,
        drops_first=drops_first,
        is_async=inspect.iscoroutinefunction(func),
        keeper=keeper,
        bound_positional=positional[1:] if drops_first else positional,
        key_defaults={
            k: v
            for k, v in defaults.items()
            if not (drops_first and k == positional[0]) and k not in param_roles.context
        },
        roles=param_roles,
    )


def build(
    fn: Any, cfg: SlimConfig, *, name: str | None = None, keeper: Keeper | None = None
) -> Any:
    """Wrap ``fn`` (or re-wrap the original under an existing slim wrapper) with ``cfg``.

    A tool that keeps handles is registered with its keeper at once (the default keeper
    when no toolkit registers it), so ``get_record`` resolves its handles from the first
    call on.
    """
    previous = slim_state(fn)
    if previous is not None:
        cfg = previous.cfg.merge(cfg) if cfg is not previous.cfg else cfg
        original = previous.original
        name = name or previous.name
        keeper = keeper or previous.keeper
    else:
        original = _collecting(fn) if inspect.isasyncgenfunction(fn) else fn
    state = _make_state(original, cfg, name, keeper)
    (keeper or DEFAULT_KEEPER).register(state)
    shell = _async_shell(state) if state.is_async else _sync_shell(state)
    outer: Any = _SlimWrapper(original, shell, _visible_signature(original, cfg))
    outer._self_slim = state
    return outer


def _collecting(fn: Callable[..., AsyncIterator[Any]]) -> Callable[..., Awaitable[list[Any]]]:
    """An async generator function as a coroutine function returning its items: a tool's
    result is what it yields, as a sync generator's is (and its signature stays)."""

    @functools.wraps(fn)
    async def collecting(*args: Any, **kwargs: Any) -> list[Any]:
        return [item async for item in fn(*args, **kwargs)]

    return collecting


# ``wrapt.with_signature`` wraps a callable in a pass-through ``FunctionWrapper`` subclass that
# reports the new signature. Subclassing that class instead lets the shell be its wrapper: one
# wrapt layer per call rather than two, and a bound subclass that fixes one gap.
_SIGNED: Any = type(wrapt.with_signature(signature=inspect.Signature())(lambda: None))


class _BoundSlimWrapper(_SIGNED.__bound_function_wrapper__):  # type: ignore[misc]
    """A slim tool bound to an instance or a class (a method, classmethod or staticmethod).

    wrapt's bound signature wrapper reports the added ``page``/``limit`` in ``__signature__``
    but forwards ``__annotations__`` to the user's function, so ``typing.get_type_hints`` of
    a method missed them; derive them from the same signature as the unbound tool does.
    """

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        annotations: dict[str, Any] = self.__func__.__annotations__
        return annotations


class _SlimWrapper(_SIGNED):  # type: ignore[misc]
    """The wrapper of a slim tool: ``_SIGNED`` whose bound form is :class:`_BoundSlimWrapper`."""

    __bound_function_wrapper__ = _BoundSlimWrapper


def _call_of(
    state: SlimState,
    companion: str,
    instance: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Call, dict[str, Any]]:
    """Split the added ``page``/``limit``/``response_format`` off; describe the call for hints."""
    page: Any = 1
    limit: Any = None
    fmt: Any = "concise"
    paging = state.cfg.paging
    if paging is not None:
        limit = paging.limit
        if "page" in kwargs or "limit" in kwargs:  # copied only when there is something to pop
            kwargs = dict(kwargs)
            page = kwargs.pop("page", 1)
            limit = kwargs.pop("limit", limit)
    if state.cfg.formats and "response_format" in kwargs:
        kwargs = dict(kwargs)
        fmt = kwargs.pop("response_format")
    names = state.bound_positional if instance is not None else state.positional
    explicit = dict(zip(names, args, strict=False))
    if len(args) > len(names) and state.var_positional:
        explicit[state.var_positional] = list(args[len(names) :])
    explicit.update(kwargs)
    defaults = state.defaults
    shown = (
        {k: v for k, v in explicit.items() if k not in defaults or _differs(defaults[k], v)}
        if defaults
        else explicit  # (neither dict is changed afterwards, so they may be one)
    )
    key_args = {**state.key_defaults, **explicit}
    withheld: tuple[str, ...] = ()
    if state.roles.hidden:  # checked once per call; most tools have no hidden parameter
        withheld = withheld_values(state.roles, key_args)
        shown, key_args = _model_view(state.roles, shown, key_args)
    if instance is not None:
        # Two objects' methods are different queries: without this, page 2 of
        # ``b.search("x")`` would be read from the snapshot of ``a.search("x")``.
        key_args["\0instance"] = _identity(instance)
    if fmt == "detailed":  # repeated by hints; one snapshot serves both formats (not keyed)
        shown = {**shown, "response_format": fmt}
    call = Call(state.name, companion, shown, key_args, page, limit, fmt, withheld)
    return call, kwargs


def _model_view(
    param_roles: Roles, shown: dict[str, Any], key_args: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Hint arguments without hidden ones; key arguments without context, secrets revealed.

    A secret keys the snapshot by its revealed value (``SecretStr`` encodes as ``{}``, so two
    tokens would otherwise share one snapshot); the key is a digest, never shown.
    """
    shown = {k: v for k, v in shown.items() if k not in param_roles.hidden}
    key_args = {
        k: reveal(v) if k in param_roles.secret else v
        for k, v in key_args.items()
        if k not in param_roles.context
    }
    return shown, key_args


def _differs(default: Any, value: Any) -> bool:
    """True when ``value`` is not the parameter's default (so the hint must repeat it)."""
    if default is value:
        return False
    try:
        return bool(default != value)
    except Exception:  # arrays and other values whose comparison is not a bool
        return True


def _identity(instance: Any) -> str:
    """Which object (or class) a method call is bound to, for the snapshot key."""
    if isinstance(instance, type):
        return f"{instance.__module__}.{instance.__qualname__}"
    cls = type(instance)
    return f"{cls.__module__}.{cls.__qualname__}@{id(instance):x}"


def _sync_shell(state: SlimState) -> Callable[..., Any]:
    def shell(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        keeper = state.keeper or DEFAULT_KEEPER
        call, rest = _call_of(state, keeper.companion, instance, args, kwargs)
        if keeper.on_event is None and not REGISTRY.listeners:  # nobody listens: no event
            return drive_sync(run(state.cfg, call), keeper, wrapped, args, rest)
        return drive_sync(observed_run(state.cfg, keeper, call), keeper, wrapped, args, rest)

    return shell


def _async_shell(state: SlimState) -> Callable[..., Any]:
    def shell(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        keeper = state.keeper or DEFAULT_KEEPER
        call, rest = _call_of(state, keeper.companion, instance, args, kwargs)
        if keeper.on_event is None and not REGISTRY.listeners:  # nobody listens: no event
            return drive_async(run(state.cfg, call), keeper, wrapped, args, rest)
        return drive_async(observed_run(state.cfg, keeper, call), keeper, wrapped, args, rest)

    return shell


def rebind(fn: Any, *, keeper: Keeper, name: str | None = None) -> Any:
    """A copy of the slim tool ``fn`` that keeps its handles with ``keeper``."""
    state = slim_state(fn)
    if state is None:
        raise ConfigurationError(f"{fn!r} is not a slimmed tool")
    fresh = build(state.original, state.cfg, name=name or state.name, keeper=keeper)
    return _bind_like(fn, fresh)


def _bind_like(fn: Any, fresh: Any) -> Any:
    """Bind ``fresh`` as ``fn`` is bound: ``kit.tool(service.search)`` keeps ``service``."""
    if getattr(fn, "_self_parent", None) is not None:  # a wrapt bound wrapper
        return fresh.__get__(fn._self_instance, fn._self_owner)
    if isinstance(fn, types.MethodType):  # classmethod over the wrapper, Python >= 3.13
        return types.MethodType(fresh, fn.__self__)
    return fresh
