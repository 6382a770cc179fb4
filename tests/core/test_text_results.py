"""Text results (a file, command output): head, head and tail, and reading on by handle."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle
from tests._profile import examples
from tests.core_helpers import build_tool, call_sync

FILE = "\n".join(f"line {i}" for i in range(1, 51))


def _file(_path: str) -> str:
    return FILE


def _registered(
    kind: str, decorators: list[object], body: object = _file
) -> tuple[Toolkit, object]:
    kit = Toolkit("files")
    return kit, kit.tool(build_tool(kind, decorators, body))


def test_long_text_shows_its_head_and_a_handle(kind):
    """Beyond ``head`` lines the envelope shows the head, the line count and a handle."""
    _kit, tool = _registered(kind, [summarize_with_handle(head=10)])
    env = call_sync(tool, "a.py")
    assert (env.total, env.text) == (50, "".join(f"line {i}\n" for i in range(1, 11)))
    assert env.handle is not None
    assert env.hint == f'lines 1-10 of 50; more: get_record("{env.handle}", page=2)'
    assert list(json.loads(str(env))) == ["total", "hint", "handle", "text"]


def test_get_record_reads_the_text_on_by_pages(kind):
    """``get_record(handle, page=2)`` returns the next ``head`` lines and the call after."""
    kit, tool = _registered(kind, [summarize_with_handle(head=10)])
    handle = call_sync(tool, "a.py").handle
    page2 = json.loads(kit.get_record(handle, page=2))
    assert page2["text"] == "".join(f"line {i}\n" for i in range(11, 21))
    assert page2["hint"] == f'lines 11-20 of 50; next: get_record("{handle}", page=3)'


def test_reading_every_page_by_handle_gives_back_the_whole_text():
    """Page 1 of get_record, then each next page, is the full text."""
    kit, tool = _registered("function", [summarize_with_handle(head=7)])
    handle = tool("a.py").handle
    pages: list[str] = []
    page = 1
    while True:
        shown = json.loads(kit.get_record(handle, page=page))
        pages.append(shown["text"])
        if "next:" not in shown["hint"]:
            break
        page += 1
    assert "".join(pages) == FILE


def test_command_output_shows_head_and_tail_with_an_omitted_marker(kind):
    """With ``tail`` the envelope shows both ends and says how many lines are omitted."""
    _kit, tool = _registered(kind, [summarize_with_handle(head=3, tail=2)])
    env = call_sync(tool, "make test")
    lines = env.text.split("\n")
    assert lines[:3] == ["line 1", "line 2", "line 3"]
    assert lines[-2:] == ["line 49", "line 50"]
    assert lines[3] == f'… 45 lines omitted: get_record("{env.handle}", page=2) reads on …'
    assert env.hint == f'head and tail of 50 lines; the middle: get_record("{env.handle}", page=2)'


def test_the_omitted_marker_points_at_the_first_omitted_line():
    """Following the marker's call starts exactly after the head."""
    kit, tool = _registered("function", [summarize_with_handle(head=3, tail=2)])
    handle = tool("make test").handle
    assert json.loads(kit.get_record(handle, page=2))["text"].startswith("line 4\n")


def test_text_within_head_and_tail_is_shown_whole():
    """A text that fits is shown as is, with no handle."""
    _kit, tool = _registered("function", [summarize_with_handle(head=40, tail=10)])
    env = tool("a.py")
    assert (env.text, env.handle, env.hint) == (FILE, None, "all 50 lines")


def test_paged_text_with_a_handle_offers_both_ways_on():
    """``paginate`` + ``summarize_with_handle`` page the text and keep it under a handle."""
    kit, tool = _registered("function", [summarize_with_handle(), paginate(limit=20)])
    env = tool("a.py")
    assert env.text.endswith("\nline 20\n")
    assert env.hint == (
        'lines 1-20 of 50; next: search(query="a.py", page=2); '
        f'same pages later: get_record("{env.handle}", page=N)'
    )
    assert json.loads(kit.get_record(env.handle, page=3))["text"].startswith("line 41")


def test_text_page_past_the_end_through_get_record_says_how_many_pages():
    """Asking a text handle for page 9 of 5 names the last page."""
    kit, tool = _registered("function", [summarize_with_handle(head=10)])
    handle = tool("a.py").handle
    shown = json.loads(kit.get_record(handle, page=9))
    assert shown["hint"] == (
        f'page 9 is past the end: 50 lines in 5 pages of 10; get_record("{handle}", page=5)'
    )


def test_get_record_with_a_bad_page_says_what_is_valid():
    """``page=0`` or ``page="x"`` is answered with the rule, not an exception."""
    kit, tool = _registered("function", [summarize_with_handle(head=10)])
    handle = tool("a.py").handle
    assert kit.get_record(handle, page=0) == "page must be an integer >= 1, got 0."
    assert kit.get_record(handle, page="x") == 'page must be an integer >= 1, got "x".'  # type: ignore[arg-type]


def test_project_fields_on_a_text_result_withholds_the_text():
    """An allowlist cannot select in prose: the text is withheld, the hint says why."""
    env = project_fields(["id"])(lambda: "a\nb")()
    assert (env.total, env.text, env.briefs) == (0, None, [])
    assert "could not be read as records" in env.hint
    assert "a\nb" not in str(env)


def test_project_fields_opted_in_to_text_shows_the_text():
    """``on_unreadable="text"`` shows a text result as text, as before the rule."""
    env = project_fields(["id"], on_unreadable="text")(lambda: "a\nb")()
    assert (env.total, env.text, env.hint) == (2, "a\nb", "all 2 lines")


def test_an_empty_text_is_zero_lines():
    """An empty string is a text of no lines."""
    env = summarize_with_handle()(lambda: "")()
    assert (env.total, env.text) == (0, "")


@settings(max_examples=examples(40), deadline=None)
@given(
    lines=st.lists(
        st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\n\r")),
        min_size=1,
        max_size=40,
    ),
    head=st.integers(1, 8),
    tail=st.integers(0, 4),
)
def test_head_tail_and_get_record_pages_cover_the_text(lines, head, tail):
    """Whatever the text, head (+ tail) plus get_record pages give back every line."""
    text = "\n".join(lines)
    kit = Toolkit("prop")
    tool = kit.tool(
        build_tool("function", [summarize_with_handle(head=head, tail=tail)], lambda p: text)
    )
    env = tool("p")
    if env.handle is None:
        assert env.text == text
        return
    read: list[str] = []
    page = 1
    while True:
        shown = json.loads(kit.get_record(env.handle, page=page))
        read.append(shown["text"])
        if "next:" not in shown["hint"]:
            break
        page += 1
    assert "".join(read) == text
    assert env.text.split("\n")[:head] == "".join(read).split("\n")[:head]
