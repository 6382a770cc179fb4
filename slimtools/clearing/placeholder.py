"""Placeholders: what a cleared tool result becomes, and how a cleared result is recognised.

A placeholder is the hallucination guard of section 6 of the design article: it tells the
model what was called, how big the answer was, how it began, which handles it carried, and
that the model may call the tool again (or ``get_record``) instead of "remembering".

Recognition: every placeholder starts with ``[cleared <digest>] `` where
``<digest>`` is a salted checksum of the rest of the text. Real content cannot pass for a
placeholder by accident (the article's ``startswith("[")`` test also matches every JSON
array), and a placeholder edited afterwards no longer verifies, so it is never mistaken for
one of ours either.
"""

from __future__ import annotations

import functools
import string
import zlib
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import orjson

from slimtools._core.jsonenc import dumps_str
from slimtools.envelope import is_envelope_dict
from slimtools.errors import ConfigurationError

MARKER_PREFIX = "[cleared "
_DIGEST_CHARS = 8
_BODY_START = len(MARKER_PREFIX) + _DIGEST_CHARS + 2  # "<digest>] "
_SALT = zlib.crc32(b"slimtools.clearing.v1")
_ARGS_MAX = 160
_MAX_HANDLES = 20

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


class PlaceholderInfo(NamedTuple):
    """What a placeholder may say about the result it replaces (passed to callables).

    A named tuple (immutable, and built once per cleared result at a fraction of a frozen
    dataclass's cost).

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
    model from "remembering" a cleared detail); for any other, that calling it again would
    repeat what it did, and a read-only way to the current state. Handles always stay
    reachable through the companion, which only reads.
    """
    record = f", or {refetch_tool}(<handle>) for one record" if has_handles else ""
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


_TARGET_KEYS = ("path", "file_path", "filepath", "file", "filename", "url")
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


def seal(body: str, max_chars: int) -> str:
    """The placeholder around ``body``: the checksummed marker, at most ``max_chars``."""
    room = max(1, max_chars - _BODY_START)
    if len(body) > room:
        body = body[: room - 1] + "…"
    raw = body.encode() if body.isascii() else body.encode("utf-8", "surrogatepass")
    return f"{MARKER_PREFIX}{zlib.crc32(raw, _SALT):08x}] {body}"


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


@functools.lru_cache(maxsize=64)
def _compile(template: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each template line with the fields it uses (parsed once per template, not per call)."""
    return tuple((line, tuple(_fields(line))) for line in template.split("\n"))


def _format_default(info: PlaceholderInfo) -> str:
    return default_body(
        info.tool,
        info.args_text,
        chars=info.chars,
        tokens=info.tokens,
        is_error=info.is_error,
        media=info.media,
        head=info.head,
        handles=info.handles,
        refetch=info.refetch_line(),
    )


def default_placeholder(  # noqa: PLR0917 - positional: it runs once per cleared result
    tool: str,
    args_text: str,
    args: Mapping[str, Any],
    text: str,
    tokens: int,
    is_error: bool,
    media: tuple[str, ...],
    head: str,
    handles: tuple[str, ...],
    repeatable: bool | None,
    refetch_tool: str,
    max_chars: int,
) -> str:
    """The whole placeholder under DEFAULT_TEMPLATE (marker, body, refetch line) in one call:
    :func:`default_body` and :func:`seal` as the general renderer uses them."""
    if repeatable:
        record = f", or {refetch_tool}(<handle>) for one record" if handles else ""
        refetch = f"To see it again, call {tool}({args_text}) again{record}."
    else:
        refetch = refetch_line(
            tool,
            args_text,
            args,
            has_handles=bool(handles),
            repeatable=repeatable,
            refetch_tool=refetch_tool,
        )
    error = " (an error)" if is_error else ""
    extra = media_text(media) if media else ""
    body = (
        f"{tool}({args_text}) returned {len(text):,} chars{extra} "
        f"(~{tokens:,} tokens){error}; removed to save context."
    )
    if head:
        body += f"\nHead: {head}"
    if handles:
        body += f"\nHandles: {', '.join(handles)}"
    return seal(f"{body}\n{refetch}", max_chars)


def default_body(
    tool: str,
    args_text: str,
    *,
    chars: int,
    tokens: int,
    is_error: bool,
    media: tuple[str, ...],
    head: str,
    handles: tuple[str, ...],
    refetch: str,
) -> str:
    """DEFAULT_TEMPLATE as one f-string: the same text (a test pins it), 4x faster, which
    matters when a 10,000-turn history is cleared in one pass."""
    error = " (an error)" if is_error else ""
    extra = media_text(media) if media else ""
    text = (
        f"{tool}({args_text}) returned {chars:,} chars{extra} "
        f"(~{tokens:,} tokens){error}; removed to save context."
    )
    if head:
        text += f"\nHead: {head}"
    if handles:
        text += f"\nHandles: {', '.join(handles)}"
    return f"{text}\n{refetch}"


def _format(template: str, info: PlaceholderInfo) -> str:
    if template is DEFAULT_TEMPLATE or template == DEFAULT_TEMPLATE:
        return _format_default(info)
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


def is_placeholder(text: str) -> bool:
    """True when ``text`` is a placeholder this module produced (its digest verifies)."""
    if not text.startswith(MARKER_PREFIX) or len(text) < _BODY_START:
        return False
    digest = text[len(MARKER_PREFIX) : len(MARKER_PREFIX) + _DIGEST_CHARS]
    if text[_BODY_START - 2 : _BODY_START] != "] ":
        return False
    return digest == _digest(text[_BODY_START:])


def _digest(body: str) -> str:
    # CRC-32 of the salted body: not a defence against forgery (nothing secret here), only
    # against accidents, for which 32 bits next to a fixed prefix are plenty; 5x cheaper
    # than a cryptographic hash.
    raw = body.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(raw, _SALT):08x}"


def flatten_head(text: str, keep_head: int) -> str:
    """The first ``keep_head`` characters of ``text`` with whitespace runs flattened.

    Only a prefix is looked at (doubling while whitespace eats it), so a 1 MB result costs
    no more than a short one; a prefix with nothing to flatten is returned as is.
    """
    if keep_head <= 0:
        return ""
    head = text[: keep_head + 1]
    if head.isascii() and "  " not in head and head[:1] != " " and _single_spaced(head):
        # ASCII with single spaces only: nothing to flatten (the common case, 5x cheaper
        # than split/join; non-ASCII text has more kinds of whitespace, so it takes that).
        return head[:keep_head] if len(text) > keep_head else head.rstrip()
    window = keep_head * 2 + 16
    while True:
        flat = " ".join(text[:window].split())
        if len(flat) > keep_head or window >= len(text):
            return flat[:keep_head]
        window *= 4


def _single_spaced(ascii_text: str) -> bool:
    """True when ASCII text holds no whitespace but plain spaces (what ``str.split`` splits
    on: tab, newline, vertical tab, form feed, carriage return and the four separators)."""
    return (
        "\n" not in ascii_text
        and "\t" not in ascii_text
        and "\r" not in ascii_text
        and "\x0b" not in ascii_text
        and "\x0c" not in ascii_text
        and "\x1c" not in ascii_text
        and "\x1d" not in ascii_text
        and "\x1e" not in ascii_text
        and "\x1f" not in ascii_text
    )


def render_args(args: Mapping[str, Any]) -> str:
    """Arguments as ``k=<json>, ...`` bounded to a short line."""
    try:  # plain JSON values (nearly all arguments) need none of dumps_str's fallbacks
        text = ", ".join([f"{key}={orjson.dumps(value).decode()}" for key, value in args.items()])
    except (TypeError, orjson.JSONEncodeError):
        text = ", ".join([f"{key}={dumps_str(value)}" for key, value in args.items()])
    return text if len(text) <= _ARGS_MAX else text[: _ARGS_MAX - 1] + "…"


def envelope_handles(text: str, key: str | None) -> tuple[str, ...]:
    """The handles a slimtools envelope carries, JSON-rendered, in order, de-duplicated.

    Each brief's ``"handle"`` field, else its ``key`` field (the tool's declared handle key;
    ``"id"`` when nothing is known, None when the tool declares no handles), plus the
    top-level ``"handle"`` of a text envelope. Anything that is not an envelope has none.
    """
    if not text.lstrip().startswith("{"):
        return ()
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return ()
    if not is_envelope_dict(value):
        return ()
    found: list[Any] = []
    briefs = value.get("briefs")
    if isinstance(briefs, list):
        for brief in briefs:
            if not isinstance(brief, dict):
                continue
            if "handle" in brief:
                found.append(brief["handle"])
            elif key is not None and key in brief:
                found.append(brief[key])
    if "handle" in value:
        found.append(value["handle"])
    rendered = dict.fromkeys(
        dumps_str(h) for h in found if isinstance(h, (str, int)) and not isinstance(h, bool)
    )
    handles = list(rendered)
    if len(handles) > _MAX_HANDLES:
        extra = len(handles) - _MAX_HANDLES
        handles = [*handles[:_MAX_HANDLES], f"… (+{extra} more)"]
    return tuple(handles)
