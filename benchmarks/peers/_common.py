"""What the peers share: the step type, SWE-agent's masking text, and rewriting results."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeAlias

from slimtools.clearing import ResultView
from slimtools.clearing.formats import get
from slimtools.clearing.formats.media import TEXT_BLOCK_TYPES
from slimtools.clearing.formats.view import get_codec, safe_decode
from slimtools.errors import ConfigurationError

Step: TypeAlias = Callable[[list[Any]], list[Any]]
"""A per-call step: the history before a model call in, the history the model sees out."""

OBSERVATION_PLACEHOLDER = "Old environment output: ({lines} lines omitted)"
"""SWE-agent's text for an elided observation (also the Complexity Trap's); ``lines`` is the
number of text lines of the original. SWE-agent appends `` ({images} images omitted)``."""

_MASKED = re.compile(r"Old environment output: \(\d+ lines omitted\)( \(\d+ images omitted\))?")
_IMAGE_TYPES = frozenset({"image_url", "image", "input_image"})


def _check_int(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(f"{name} must be an int >= {minimum}, got {value!r}")


def _check_tags(name: str, value: Any) -> frozenset[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Collection):
        raise ConfigurationError(f"{name} must be a collection of tag strings, not {value!r}")
    if not all(isinstance(tag, str) for tag in value):
        raise ConfigurationError(f"{name} must hold only strings, got {sorted(map(repr, value))}")
    return frozenset(value)


def _tags(message: Any) -> frozenset[str]:
    tags = get(message, "tags")
    if not isinstance(tags, (list, tuple, set, frozenset)):
        return frozenset()
    return frozenset(t for t in tags if isinstance(t, str))


def _mask(
    messages: list[Any],
    fmt: str,
    results: Sequence[ResultView],
    masks: Callable[[int, ResultView], bool],
    *,
    images: bool,
) -> list[Any]:
    """Replace each result ``masks(index, result)`` picks by SWE-agent's placeholder."""
    codec = get_codec(fmt)
    changes: dict[int, dict[int, str]] = {}
    slots: dict[int, tuple[int, ...]] = {}
    seen_in: dict[int, int] = {}
    for index, result in enumerate(results):
        k = seen_in[result.position] = seen_in.get(result.position, -1) + 1
        if not masks(index, result) or _MASKED.fullmatch(result.text):
            continue
        message = messages[result.position]
        if result.position not in slots:
            slots[result.position] = tuple(r.slot for r in safe_decode(codec, message).results)
        slot = slots[result.position][k]
        lines, pictures = _content_stats(codec.result_content(message, slot))
        text = OBSERVATION_PLACEHOLDER.format(lines=lines)
        if images and pictures:
            text += f" ({pictures} images omitted)"
        changes.setdefault(result.position, {})[slot] = text
    return _rewrite(messages, fmt, changes)


def _rewrite(messages: list[Any], fmt: str, changes: dict[int, dict[int, str]]) -> list[Any]:
    """A new list with the given results replaced; every other message is the same object."""
    out = list(messages)
    if changes:
        codec = get_codec(fmt)
        for position, texts in changes.items():
            out[position] = codec.replace_results(out[position], texts)
    return out


def _content_stats(content: Any) -> tuple[int, int]:
    """Text lines and images of a result's content, counted as SWE-agent counts them."""
    if isinstance(content, str):
        return len(content.splitlines()), 0
    if not isinstance(content, (list, tuple)):
        return (0, 0) if content is None else (len(str(content).splitlines()), 0)
    lines = images = 0
    for part in content:
        kind = get(part, "type")
        if isinstance(part, str):
            lines += len(part.splitlines())
        elif kind in TEXT_BLOCK_TYPES and isinstance(get(part, "text"), str):
            lines += len(get(part, "text").splitlines())
        elif kind in _IMAGE_TYPES:
            images += 1
    return lines, images
