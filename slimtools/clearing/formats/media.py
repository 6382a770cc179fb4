"""Images, documents and files in tool results: how they are named and what they weigh."""

from __future__ import annotations

from typing import Any

from slimtools.clearing.formats._objects import get

TEXT_BLOCK_TYPES = frozenset({"text", "input_text", "output_text"})
"""Block types whose ``text`` a model reads as plain text (Anthropic, OpenAI, LangChain)."""


def block_text(block: Any) -> str | None:
    """The text a model reads in one content block, or None for an image, a document, a
    file. Anthropic's ``search_result`` is text: its title, source and inner text blocks."""
    if isinstance(block, str):
        return block
    kind = get(block, "type")
    if kind in TEXT_BLOCK_TYPES and isinstance(get(block, "text"), str):
        return str(get(block, "text"))
    if kind == "search_result":
        inner = get(block, "content")
        parts = [get(block, "title"), get(block, "source")]
        if isinstance(inner, (list, tuple)):
            parts += [block_text(b) for b in inner]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    return None


MEDIA_TOKENS = 1_600
"""Tokens counted for each image, document or file block of a tool result: what a full-size
image costs under Anthropic's pricing (about 1.15 megapixels at 750 pixels a token). Used to
decide whether clearing one pays and to bill it in the ledger; text is counted exactly."""

_MEDIA_KINDS = {
    "image": "image",
    "image_url": "image",
    "input_image": "image",
    "document": "document",
    "file": "file",
    "input_file": "file",
    "input_audio": "audio",
    "audio": "audio",
}


def describe_media(block: Any) -> str:
    """One non-text block as a placeholder names it: kind, media type, size, source.

    E.g. ``image (image/png, 45 KB, base64)`` or ``image (https://example.com/a.png)``; only
    what the block says is shown, and never its data.
    """
    kind = get(block, "type")
    label = _MEDIA_KINDS.get(kind, str(kind or "block")) if isinstance(kind, str) else "block"
    facts: list[str] = []
    source = get(block, "source")
    url = get(block, "image_url")
    if isinstance(url, (dict, str)) or hasattr(url, "url"):
        url = url if isinstance(url, str) else get(url, "url")
    data = None
    if source is not None:
        media_type = get(source, "media_type")
        if isinstance(media_type, str):
            facts.append(media_type)
        data = get(source, "data")
        if get(source, "type") == "url" and isinstance(get(source, "url"), str):
            url = get(source, "url")
        elif get(source, "type") == "file" and isinstance(get(source, "file_id"), str):
            facts.append(f"file {get(source, 'file_id')}")
    for key in ("file_id", "filename"):
        value = get(block, key) or get(get(block, "file"), key)
        if isinstance(value, str):
            facts.append(f"{key.replace('_', ' ')} {value}")
    if isinstance(url, str) and url.startswith("data:"):
        header, _, data = url.partition(",")
        facts.append(header[5:].split(";")[0] or "data URL")
        url = None
    if data is None:
        data = get(block, "data") or get(get(block, "file"), "file_data")
    if isinstance(data, str) and data:
        facts.append(f"{_size(len(data) * 3 // 4)}, base64")
    if isinstance(url, str):
        facts.append(url[:120])
    return f"{label} ({', '.join(facts)})" if facts else label


def _size(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    if n >= 1_000:
        return f"{n // 1_000} KB"
    return f"{n} bytes"


def content_media(content: Any) -> tuple[str, ...]:
    """Descriptions of the non-text blocks of a content value (``()`` for plain text)."""
    if not isinstance(content, (list, tuple)):
        return ()
    return tuple(describe_media(block) for block in content if block_text(block) is None)
