"""The core reader: every shape a tool result comes in, as records or a withheld verdict."""

from __future__ import annotations

import ast
import dataclasses
import json

import pytest

from slimtools.projection import Unreadable, read, read_text
from slimtools.projection._readable import LITERAL_MAX_CHARS
from tests.core.strategies_fail_closed import CallToolResultLike, TextBlock, ToolMessageLike

ROWS = [{"id": 1, "email": "a@example.com"}, {"id": 2, "email": "b@example.com"}]


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(ROWS),
        "\ufeff" + json.dumps(ROWS),
        "```json\n" + json.dumps(ROWS, indent=2) + "\n```",
        "```\n" + json.dumps(ROWS) + "\n```",
        "Found 2 items:\n" + json.dumps(ROWS),
        "Found 2 items: " + json.dumps(ROWS),
        "Results:\n```json\n" + json.dumps(ROWS) + "\n```",
        "\n".join(json.dumps(r) for r in ROWS),
        str(ROWS),
        json.dumps(json.dumps(ROWS)),
    ],
    ids=[
        "json",
        "bom",
        "fenced json",
        "bare fence",
        "preamble line",
        "preamble inline",
        "preamble and fence",
        "json lines",
        "python repr",
        "json in a json string",
    ],
)
def test_text_shapes_are_read_as_records(text):
    """JSON, fenced, after a preamble, JSON Lines and Python reprs all read as the rows."""
    assert list(read_text(text)) == ROWS


def test_nan_and_infinity_are_read():
    """``NaN``/``Infinity`` from Python's ``json.dumps`` (orjson refuses them) are read."""
    found = read_text('[{"id": 1, "score": NaN, "max": Infinity}]')
    assert found[0]["id"] == 1
    assert found[0]["score"] != found[0]["score"]


def test_an_escaped_lone_surrogate_is_read():
    """A lone surrogate escape (``"\\ud800"``), which orjson refuses, is read."""
    assert read_text('[{"id": 1, "name": "\\ud800x"}]')[0]["id"] == 1


def test_integers_beyond_64_bits_stay_exact():
    """An id of 2**70 + 1 keeps every digit (orjson would read a float)."""
    assert read_text(f'[{{"id": {2**70 + 1}}}]') == [{"id": 2**70 + 1}]


def test_a_python_repr_is_never_evaluated():
    """A repr holding a call is not read (``ast.literal_eval``, never ``eval``)."""
    found = read_text("[{'id': __import__('os').getpid()}]")
    assert isinstance(found, Unreadable)


def test_a_huge_python_literal_list_is_read_item_by_item():
    """A list literal over the limit (``str()`` of 5,000 long rows) is read, not withheld."""
    row = {"id": 1, "body": 'it\'s a "long" text, [with] {brackets} \\ and é😀\n' * 20}
    text = str([row] * (LITERAL_MAX_CHARS // len(str(row)) + 10))
    found = read_text(text)
    assert isinstance(found, list)
    assert len(text) > LITERAL_MAX_CHARS
    assert found == ast.literal_eval(text)


def test_a_huge_python_literal_that_is_not_a_list_is_not_parsed():
    """A dict literal over the limit is withheld rather than parsed at great memory cost."""
    text = "{" + ", ".join(f"'k{i}': 1" for i in range(LITERAL_MAX_CHARS // 8)) + "}"
    assert isinstance(read_text(text), Unreadable)


def test_a_huge_list_with_a_call_in_one_item_is_not_read():
    """Item by item, a call is still never evaluated: the whole text is unreadable."""
    text = "[" + "{'id': 1}, " * (LITERAL_MAX_CHARS // 10) + "{'id': __import__('os')}]"
    assert isinstance(read_text(text), Unreadable)


def test_prose_is_unreadable_with_its_kind_size_and_reason():
    """Prose is a verdict: kind text, its length, a one-line reason, the text kept apart."""
    found = read_text("the backend says: all good")
    assert isinstance(found, Unreadable)
    assert (found.kind, found.size) == ("text", 26)
    assert "\n" not in found.reason
    assert found.text == "the backend says: all good"
    assert "26 characters" in found.describe()
    assert "withheld" in found.describe()


def test_empty_text_is_no_result():
    """Blank text (a BOM and spaces) reads as ``None``: the tool returned nothing."""
    assert read_text("\ufeff  \n") is None


def test_bytes_are_read_as_utf8_text():
    """UTF-8 bytes are read like text; other bytes are a verdict of kind bytes."""
    assert read(json.dumps(ROWS).encode()) == ROWS
    found = read(b"\xff\xfe\x00")
    assert isinstance(found, Unreadable)
    assert found.kind == "bytes"
    assert found.size == 3


def test_content_blocks_are_unwrapped():
    """LangChain-style ``[{"type": "text", "text": ...}]`` reads as the JSON it holds."""
    assert read([{"type": "text", "text": json.dumps(ROWS)}]) == ROWS
    assert read([{"type": "text", "text": json.dumps(r)} for r in ROWS]) == ROWS


def test_unreadable_content_blocks_stay_records():
    """Blocks of prose stay the list they are: projected, they show only allowlisted keys."""
    blocks = [{"type": "text", "text": "hello"}]
    assert read(blocks) is blocks


def test_records_that_merely_have_a_type_are_not_blocks():
    """A record with more keys than a block has (``"type": "file"`` listings) stays a record."""
    files = [{"type": "text", "text": "x", "path": "a.txt", "size": 3}]
    assert read(files) is files


def test_tool_message_like_objects_give_their_artifact_else_their_content():
    """A ``ToolMessage``-like result reads as its artifact, or its content text."""
    assert read(ToolMessageLike(content="done", artifact=ROWS)) == ROWS
    assert read(ToolMessageLike(content=json.dumps(ROWS))) == ROWS


def test_call_tool_result_like_objects_give_their_structured_content_else_text():
    """An MCP ``CallToolResult``-like object reads as structured content, else its text."""
    assert read(CallToolResultLike(content=[], structuredContent={"rows": ROWS})) == {"rows": ROWS}
    assert read(CallToolResultLike(content=[TextBlock(json.dumps(ROWS))])) == ROWS


def test_records_and_numbers_are_returned_as_they_are():
    """Models, dataclasses, objects, dicts and numbers need no reading."""

    @dataclasses.dataclass
    class Row:
        id: int

    row = Row(1)
    assert read(row) is row
    assert read(ROWS) is ROWS
    assert read(42) == 42


def test_an_object_without_fields_is_unreadable():
    """An object with neither attributes nor fields (only a ``__str__``) is a verdict."""

    class Opaque:
        __slots__ = ()

        def __str__(self) -> str:
            return "secret-ish"

    found = read(Opaque())
    assert isinstance(found, Unreadable)
    assert found.kind == "Opaque"
    assert found.size == 10
