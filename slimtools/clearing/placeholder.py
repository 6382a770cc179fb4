"""Placeholders: what a cleared tool result becomes, and how a cleared result is recognised.

A placeholder is the hallucination guard of section 6 of the design article: it tells the
model what was called, how big the answer was, how it began, which handles it carried, and
that the model may call the tool again (or ``get_record``) instead of "remembering".

Recognition: every placeholder starts with ``[slimtools cleared <digest>] `` where
``<digest>`` is a keyed hash of the rest of the text. Real content cannot pass for a
placeholder by accident (the article's ``startswith("[")`` test also matches every JSON
array), and a placeholder edited afterwards no longer verifies, so it is never mistaken for
one of ours either.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import orjson

from slimtools._json import dumps_str
from slimtools.envelope import is_envelope_dict
from slimtools.errors import ConfigurationError

MARKER_PREFIX = "[slimtools cleared "
_DIGEST_CHARS = 8
_BODY_START = len(MARKER_PREFIX) + _DIGEST_CHARS + 2  # "<digest>] "
_DIGEST_KEY = b"slimtools.clearing.v1"
_ARGS_MAX = 160
_MAX_HANDLES = 20

DEFAULT_TEMPLATE = (
    "{tool}({args}) result cleared from context: {chars} chars, ~{tokens} tokens{error}.\n"
    "Head: {head}\n"
    "Handles: {handles}\n"
    "{refetch}"
)
"""The default placeholder body. A line is dropped when every field it uses is empty."""

TEMPLATE_FIELDS = frozenset(
    {"tool", "args", "chars", "tokens", "head", "handles", "refetch", "call_id", "turn", "error"}
)
"""The fields a template may use (``str.format`` syntax)."""


@dataclass(frozen=True, slots=True)
class PlaceholderInfo:
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

    def refetch_line(self) -> str:
        """The explicit permission to refetch, naming the exact call."""
        line = f"To see it again, call {self.tool}({self.args_text}) again"
        if self.handles:
            line += f", or {self.refetch_tool}(<handle>) for one record"
        return line + "."


PlaceholderTemplate: TypeAlias = "str | Callable[[PlaceholderInfo], str]"
"""A ``str.format`` template over :data:`TEMPLATE_FIELDS`, or a callable building the body."""


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


def _fields(text: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]


def render(
    info: PlaceholderInfo, template: str | Callable[[PlaceholderInfo], str], max_chars: int
) -> str:
    """The full placeholder text (marker included), at most ``max_chars`` characters."""
    body = template(info) if callable(template) else _format(template, info)
    if not isinstance(body, str):
        body = str(body)
    room = max(1, max_chars - _BODY_START)
    if len(body) > room:
        body = body[: room - 1] + "…"
    return f"{MARKER_PREFIX}{_digest(body)}] {body}"


def _format(template: str, info: PlaceholderInfo) -> str:
    values = {
        "tool": info.tool,
        "args": info.args_text,
        "chars": f"{info.chars:,}",
        "tokens": f"{info.tokens:,}",
        "head": info.head,
        "handles": ", ".join(info.handles),
        "refetch": info.refetch_line(),
        "call_id": info.call_id,
        "turn": str(info.turn),
        "error": " (an error)" if info.is_error else "",
    }
    lines = []
    for line in template.split("\n"):
        used = _fields(line)
        if used and not any(values[name] for name in used):
            continue  # e.g. "Handles: {handles}" for a result without handles
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
    raw = body.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(raw, digest_size=_DIGEST_CHARS // 2, key=_DIGEST_KEY).hexdigest()


def flatten_head(text: str, keep_head: int) -> str:
    """The first ``keep_head`` characters of ``text`` with whitespace runs flattened.

    Only a prefix is split (doubling while whitespace eats it), so a 1 MB result costs no
    more than a short one.
    """
    if keep_head <= 0:
        return ""
    window = keep_head * 2 + 16
    while True:
        flat = " ".join(text[:window].split())
        if len(flat) > keep_head or window >= len(text):
            return flat[:keep_head]
        window *= 4


def render_args(args: Mapping[str, Any]) -> str:
    """Arguments as ``k=<json>, ...`` bounded to a short line."""
    text = ", ".join(f"{key}={dumps_str(value)}" for key, value in args.items())
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
