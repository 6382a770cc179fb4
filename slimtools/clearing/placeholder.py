"""Placeholders: what a cleared tool result becomes.

A placeholder guards against hallucinated recall: it tells the model what was called, how
big the answer was, how it began, which handles it carried, and how to see it again (the
call, for tools safe to repeat; a read-only way otherwise) instead of "remembering". It
starts with the checksummed marker of :mod:`slimtools.clearing.marker`.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypeAlias

from slimtools._json import dumps_str
from slimtools.clearing.excerpt import PATH_KEYS
from slimtools.clearing.formats.base import unparsed
from slimtools.clearing.marker import seal
from slimtools.errors import ConfigurationError

DEFAULT_TEMPLATE = (
    "{tool}({args}) returned {chars} chars{media} (~{tokens} tokens){error}; removed to save "
    "context.\n"
    "Head: {head}\n"
    "Handles: {handles}\n"
    "{refetch}"
)
"""The default placeholder body. A line is dropped when every field it uses is empty."""

TEMPLATE_FIELDS = frozenset(
    {"tool", "args", "chars", "tokens", "head", "handles", "refetch", "call_id", "turn", "error"}
    | {"media"}
)
"""The fields a template may use (``str.format`` syntax)."""

MAX_PLACEHOLDER_CHARS = 1000
"""The most characters a placeholder holds, marker included (its body is cut to fit)."""


class PlaceholderInfo(NamedTuple):
    """What a placeholder may say about the result it replaces (passed to callables).

    Attributes:
        tool: the tool name (``"tool"`` when unknown).
        args: the call's arguments.
        args_text: the arguments rendered ``k=<json>``, bounded.
        chars: the original size in characters.
        tokens: the original size in tokens (the policy's counter).
        head: the first ``keep_head`` characters of the original, whitespace flattened.
        handles: the handles found in the original envelope, JSON-rendered (``"k3f9"``, ``3``).
        call_id: the tool call id.
        turn: the turn the result belongs to.
        is_error: whether the result was an error.
        refetch_tool: the name of the companion that fetches one record by handle.
        repeatable: True when calling the tool again is safe (it only reads), False when it
            has effects (writes, commands), None when nothing is known about it.
        media: the result's images, documents and files, described (kind, type, size,
            source; never their data).
    """

    tool: str
    args: Mapping[str, Any]
    args_text: str
    chars: int
    tokens: int
    head: str
    handles: tuple[str, ...]
    call_id: str
    turn: int
    is_error: bool
    refetch_tool: str = "get_record"
    repeatable: bool | None = None
    media: tuple[str, ...] = ()

    def refetch_line(self) -> str:
        """How to see it again (see :func:`refetch_line`)."""
        return refetch_line(
            self.tool,
            self.args_text,
            self.args,
            has_handles=bool(self.handles),
            repeatable=self.repeatable,
            refetch_tool=self.refetch_tool,
        )

    def media_text(self) -> str:
        """``" and 1 non-text block: image (...)"``, or ``""`` without media."""
        return media_text(self.media)


def refetch_line(
    tool: str,
    args_text: str,
    args: Mapping[str, Any],
    *,
    has_handles: bool,
    repeatable: bool | None,
    refetch_tool: str,
) -> str:
    """How to see a cleared result again, without inviting a repeated side effect.

    The exact call for a tool safe to repeat (the explicit permission to refetch keeps the
    model from "remembering" a cleared detail; its name alone when its arguments were not a
    JSON object, which no call could repeat); for any other, that calling it again would
    repeat what it did, and a read-only way to the current state. Handles always stay
    reachable through the companion, which only reads.
    """
    record = f", or {refetch_tool}(<handle>) for one record" if has_handles else ""
    if repeatable and unparsed(args):  # not a JSON object: the exact call is no call
        return f"To see it again, call {tool} again with valid arguments{record}."
    if repeatable:
        return f"To see it again, call {tool}({args_text}) again{record}."
    where = _target(args)
    look = f"read {where} with a read-only tool" if where else "use a read-only tool"
    if repeatable is False:
        return (
            f"Do not call {tool} again to see this: that would repeat what it did. "
            f"To see the current state, {look}{record}."
        )
    return (
        f"If {tool} changed anything, calling it again would repeat that; to see "
        f"the current state, {look}{record}."
    )


def media_text(media: tuple[str, ...]) -> str:
    """``" and 1 non-text block: image (image/png, 45 KB, base64)"``, or ``""``."""
    if not media:
        return ""
    shown = ", ".join(media[:_MAX_MEDIA])
    more = f" and {len(media) - _MAX_MEDIA} more" if len(media) > _MAX_MEDIA else ""
    count = len(media)
    return f" and {count} non-text block{'s' if count > 1 else ''}: {shown}{more}"


_TARGET_KEYS = (*PATH_KEYS, "url")
_MAX_MEDIA = 3


def _target(args: Mapping[str, Any]) -> str:
    """What a call acted on, when its arguments name it (a path or URL), for the read hint."""
    for key in _TARGET_KEYS:
        value = args.get(key) if isinstance(args, Mapping) else None
        if isinstance(value, str) and value and len(value) <= 200:
            return dumps_str(value)
    return ""


def validate_template(template: str | Callable[[PlaceholderInfo], str]) -> None:
    """Raise :class:`ConfigurationError` when ``template`` cannot render a placeholder."""
    if callable(template):
        return
    if not isinstance(template, str) or not template.strip():
        raise ConfigurationError("placeholder must be a non-empty str template or a callable")
    try:
        fields = _fields(template)
    except ValueError as exc:
        raise ConfigurationError(f"placeholder template is malformed: {exc}") from None
    unknown = sorted(f for f in fields if f not in TEMPLATE_FIELDS)
    if unknown:
        raise ConfigurationError(
            f"placeholder template uses unknown field(s) {unknown}; "
            f"allowed: {sorted(TEMPLATE_FIELDS)}"
        )
    try:
        _format(template, _SAMPLE)
    except (ValueError, TypeError, IndexError) as exc:
        raise ConfigurationError(f"placeholder template cannot render: {exc}") from None


_SAMPLE = PlaceholderInfo(
    "tool", {}, "", 1, 1, "head", ("h",), "call", 1, True, "get_record", True, ("image",)
)


_ALL_NEEDS = frozenset({"args", "head", "handles"})


def template_needs(template: str | Callable[[PlaceholderInfo], str]) -> frozenset[str]:
    """Which costly info fields (``args``, ``head``, ``handles``) a template shows.

    The clearer computes only those: a terse template such as ``"[cleared]"`` then costs
    next to nothing per result. A callable may read anything, so it gets everything.
    """
    if callable(template):
        return _ALL_NEEDS
    fields = set(_fields(template))
    if "refetch" in fields:  # the refetch line names the call and mentions handles
        fields |= {"args", "handles"}
    return _ALL_NEEDS & fields


def constant_placeholder(
    template: str | Callable[[PlaceholderInfo], str], max_chars: int
) -> str | None:
    """The placeholder itself when ``template`` uses no field (the same for every result),
    so that it is rendered once per policy rather than once per result; else None."""
    if callable(template) or _fields(template):
        return None
    return render(_SAMPLE, template, max_chars)


def _fields(text: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]


def render(
    info: PlaceholderInfo, template: str | Callable[[PlaceholderInfo], str], max_chars: int
) -> str:
    """The full placeholder text (marker included), at most ``max_chars`` characters."""
    body = template(info) if callable(template) else _format(template, info)
    return seal(body if isinstance(body, str) else str(body), max_chars)


@functools.lru_cache(maxsize=64)
def _compile(template: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each template line with the fields it uses (parsed once per template, not per call)."""
    return tuple((line, tuple(_fields(line))) for line in template.split("\n"))


def default_body(  # noqa: PLR0917 - positional: it runs once per cleared result
    tool: str,
    args_text: str,
    args: Mapping[str, Any],
    chars: int,
    tokens: int,
    is_error: bool,
    media: tuple[str, ...],
    head: str,
    handles: tuple[str, ...],
    repeatable: bool | None,
    refetch_tool: str,
) -> str:
    """DEFAULT_TEMPLATE's body as one f-string: the same text as the generic renderer (a
    test pins it), 4x faster, which matters when a 10,000-turn history is cleared in one
    pass."""
    refetch = refetch_line(
        tool,
        args_text,
        args,
        has_handles=bool(handles),
        repeatable=repeatable,
        refetch_tool=refetch_tool,
    )
    return (
        f"{tool}({args_text}) returned {chars:,} chars{media_text(media) if media else ''} "
        f"(~{tokens if 0 <= tokens < 1000 else f'{tokens:,}'} tokens)"  # nothing to group: cheaper
        f"{' (an error)' if is_error else ''}; removed to save context."
        f"{_HEAD + head if head else ''}"
        f"{_HANDLES + ', '.join(handles) if handles else ''}\n{refetch}"
    )


_HEAD, _HANDLES = "\nHead: ", "\nHandles: "


_VALUES: dict[str, Callable[[PlaceholderInfo], str]] = {
    "tool": lambda i: i.tool,
    "args": lambda i: i.args_text,
    "chars": lambda i: f"{i.chars:,}",
    "tokens": lambda i: f"{i.tokens:,}",
    "head": lambda i: i.head,
    "handles": lambda i: ", ".join(i.handles),
    "refetch": PlaceholderInfo.refetch_line,
    "call_id": lambda i: i.call_id,
    "turn": lambda i: str(i.turn),
    "error": lambda i: " (an error)" if i.is_error else "",
    "media": PlaceholderInfo.media_text,
}


def _format(template: str, info: PlaceholderInfo) -> str:
    if template is DEFAULT_TEMPLATE or template == DEFAULT_TEMPLATE:
        i = info
        return default_body(
            i.tool, i.args_text, i.args, i.chars, i.tokens, i.is_error, i.media, i.head,
            i.handles, i.repeatable, i.refetch_tool,
        )  # fmt: skip
    return _format_generic(template, info)


def _format_generic(template: str, info: PlaceholderInfo) -> str:
    values: dict[str, str] = {}
    lines = []
    for line, used in _compile(template):
        if not used:
            lines.append(line)
            continue
        for name in used:
            if name not in values:
                values[name] = _VALUES[name](info)
        if any(values[name] for name in used):  # e.g. no "Handles:" line without handles
            lines.append(line.format_map(values))
    return "\n".join(lines)


PlaceholderTemplate: TypeAlias = "str | Callable[[PlaceholderInfo], str]"
"""A ``str.format`` template over ``slimtools.clearing.placeholder.TEMPLATE_FIELDS``, or a
callable building the placeholder's body from a ``PlaceholderInfo``."""
