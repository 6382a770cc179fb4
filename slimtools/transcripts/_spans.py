"""Replace JSON values inside JSON text in place, leaving every other character as it was.

Write-back must not reformat a transcript: re-serialising a parsed file would change its
spacing, key order, escapes and number spellings, so a JSONL file could never be restored
byte for byte. Instead :func:`find_spans` walks the text down the wanted paths only (other
values are skipped by the C scanner) and :func:`replace_values` splices new JSON text over
the old values' spans.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from slimtools.transcripts._model import JsonPath, MalformedError

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_LEAF = object()

Trie = dict[Any, Any]


def _trie(paths: Collection[JsonPath]) -> Trie:
    root: Trie = {}
    for path in paths:
        node = root
        for key in path:
            node = node.setdefault(key, {})
        node[_LEAF] = True
    return root


def _ws(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


def _skip(text: str, pos: int) -> int:
    if text.startswith('"', pos):
        end: int = scanstring(text, pos + 1)[1]
        return end
    after: int = _DECODER.raw_decode(text, pos)[1]
    return after


def _expect(text: str, pos: int, char: str) -> int:
    if not text.startswith(char, pos):
        raise MalformedError(f"expected {char!r} at character {pos} while locating a value")
    return _ws(text, pos + 1)


def _walk(
    text: str, pos: int, node: Trie, prefix: JsonPath, out: dict[JsonPath, tuple[int, int]]
) -> int:
    """Walk the value at ``pos`` along ``node``; record the spans of its leaves; its end."""
    if _LEAF in node:
        end = _skip(text, pos)
        out[prefix] = (pos, end)
        return end
    opener = text[pos : pos + 1]
    if opener not in ("{", "["):
        return _skip(text, pos)
    closer = "}" if opener == "{" else "]"
    pos = _ws(text, pos + 1)
    index = 0
    while not text.startswith(closer, pos):
        if index:
            pos = _expect(text, pos, ",")
        key: str | int = index
        if opener == "{":
            if not text.startswith('"', pos):
                raise MalformedError(f"expected a key at character {pos} while locating a value")
            key, pos = scanstring(text, pos + 1)
            pos = _expect(text, _ws(text, pos), ":")
        child = node.get(key)
        pos = _walk(text, pos, child, (*prefix, key), out) if child else _skip(text, pos)
        pos = _ws(text, pos)
        index += 1
    return pos + 1


def find_spans(
    text: str, paths: Collection[JsonPath], start: int = 0
) -> dict[JsonPath, tuple[int, int]]:
    """The ``(start, end)`` character span of the value at each path in the JSON at ``start``.

    Raises:
        MalformedError: the text is not JSON, or a path leads nowhere.
    """
    spans: dict[JsonPath, tuple[int, int]] = {}
    try:
        _walk(text, _ws(text, start), _trie(paths), (), spans)
    except (json.JSONDecodeError, IndexError) as exc:
        raise MalformedError(f"cannot locate values in the JSON text ({exc})") from None
    missing = [p for p in paths if p not in spans]
    if missing:
        shown = "".join(f"[{k!r}]" for k in missing[0])
        raise MalformedError(
            f"no value at {shown or 'the root'} (the file changed since it was read?)"
        )
    return spans


def replace_values(
    text: str, edits: Mapping[JsonPath, Callable[[str], str]], start: int = 0
) -> str:
    """``text`` with the value at each path replaced by ``edit(old JSON text)``.

    Everything outside the replaced spans is kept character for character.
    """
    spans = find_spans(text, list(edits), start)
    pieces: list[str] = []
    last = 0
    for path, (begin, end) in sorted(spans.items(), key=lambda item: item[1][0]):
        if begin < last:
            raise MalformedError("overlapping values cannot be replaced separately")
        pieces += (text[last:begin], edits[path](text[begin:end]))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def dump_string(value: str, like: str) -> str:
    """``value`` as JSON text, escaping non-ASCII only where the value it replaces did.

    A file that escaped everything (Python's default) stays pure ASCII; one written with
    raw UTF-8 gets raw UTF-8, unless ``value`` holds a lone surrogate, which has no UTF-8.
    """
    if like.isascii():
        return json.dumps(value)
    raw = json.dumps(value, ensure_ascii=False)
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return raw
