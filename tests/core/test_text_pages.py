"""Text pages: every byte reachable, pages that rejoin exactly, no collapsing resume calls."""

from __future__ import annotations

import base64
import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools import Toolkit, paginate, summarize_with_handle
from slimtools._core.textpages import cost, text_pages
from slimtools.clip import safe_cut
from slimtools.tokens import count_tokens
from tests._profile import examples
from tests.core_helpers import build_tool, next_call
from tests.strategies import grapheme_lists, page_texts


def _paged(text: str, *, limit: int = 50, budget: int | None = 500) -> tuple[Toolkit, Any]:
    kit = Toolkit("texts")
    decorators = [
        summarize_with_handle(max_tokens=budget),
        paginate(limit=limit, max_tokens=budget),
    ]
    return kit, kit.tool(build_tool("function", decorators, lambda _q: text))


def _follow(tool: Any, first: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """The text of every page the hints lead to from ``first``, and each call made."""
    env, pages, calls = first, [first.text], []
    while (nxt := next_call(env.hint, "search")) is not None:
        calls.append(nxt)
        env = tool(**nxt)
        pages.append(env.text)
    return pages, calls


def _by_handle(kit: Toolkit, handle: str) -> list[str]:
    """Every page of a text handle, read with get_record from page 1 on."""
    pages, page = [], 1
    while True:
        shown = json.loads(kit.get_record(handle, page=page))
        pages.append(shown["text"])
        if "next:" not in shown["hint"]:
            return pages
        page += 1


def _base64_line(chars: int) -> str:
    return base64.b64encode(random.Random(7).randbytes(chars * 3 // 4)).decode("ascii")


def test_a_line_longer_than_a_page_is_shown_in_pieces_with_a_handle():
    """A one-line result far over the budget shows its first piece, marked, and a handle."""
    line = _base64_line(200_000)
    _kit, tool = _paged(line)
    env = tool("q")
    assert env.text
    assert line.startswith(env.text)
    assert env.handle is not None
    assert "too long for one page: characters 1-" in env.hint
    assert "smaller limit" not in env.hint
    assert count_tokens(str(env)) <= 500


def test_following_the_hints_of_a_one_line_result_gives_every_byte():
    """The pieces of a line longer than a page rejoin to the line, by hints or by handle."""
    line = _base64_line(50_000) + "\n" + "short tail\n"
    kit, tool = _paged(line)
    first = tool("q")
    pages, _ = _follow(tool, first)
    assert "".join(pages) == line
    assert _by_handle(kit, first.handle) == pages


def test_minified_text_with_multibyte_characters_is_cut_between_graphemes():
    """Pieces of a long line of emoji, flags and combining marks never split a grapheme."""
    graphemes = ["👩‍💻", "🇫🇷", "ẹ́", "a\u0308\u0301", "日", "本"]
    unit = "".join(graphemes)
    line = unit * 3_000
    _kit, tool = _paged(line, budget=300)
    pages, _ = _follow(tool, tool("q"))
    assert "".join(pages) == line
    joints = {sum(map(len, graphemes[:i])) for i in range(len(graphemes) + 1)}
    ends = [sum(map(len, pages[: i + 1])) for i in range(len(pages))]
    assert len(pages) > 10
    assert all(end % len(unit) in joints for end in ends)


def _diff_like(lines: int) -> str:
    rnd = random.Random(3)
    out = []
    for i in range(lines):
        width = rnd.choice([0, 5, 40, 90, 300, 2_000])
        out.append(f"{'+-'[i % 2]}{'x' * width}")
    return "\n".join(out) + "\n"


def test_a_page_the_budget_cuts_does_not_shrink_the_pages_after_it():
    """Every call a hint offers keeps the page size: the read never collapses to limit=1."""
    text = _diff_like(600)
    _kit, tool = _paged(text, limit=100, budget=2_000)
    pages, calls = _follow(tool, tool("q"))
    assert "".join(pages) == text
    assert all("limit" not in call for call in calls)
    full = [cost(count_tokens, p) for p in pages[:-1]]
    assert min(full) > 2_000 // 2 - 2_000 // 5  # each page near the budget, less a long line


def test_the_number_of_calls_follows_the_text_size_not_its_line_lengths():
    """A text of N budget-fulls takes about N pages, whatever its line lengths."""
    text = _diff_like(600)
    _kit, tool = _paged(text, limit=100, budget=2_000)
    pages, _ = _follow(tool, tool("q"))
    assert len(pages) <= 2 * cost(count_tokens, text) // 2_000 + 2


def test_a_handles_pages_are_fixed_when_it_is_made():
    """A later call with another limit does not change the pages an earlier handle promised."""
    text = "".join(f"line {i}\n" for i in range(1, 101))
    kit, tool = _paged(text, limit=10, budget=None)
    handle = tool("q").handle
    other = tool("q", limit=5).handle
    assert other != handle
    page2 = json.loads(kit.get_record(handle, page=2))
    assert page2["text"] == "".join(f"line {i}\n" for i in range(11, 21))


def test_crlf_lone_cr_tabs_and_no_final_newline_survive_paging():
    """The pages of a CRLF text with tabs, a lone CR and no final newline rejoin exactly."""
    text = "a\r\n\tb\rc\r\n" * 40 + "last"
    _kit, tool = _paged(text, limit=7, budget=None)
    pages, _ = _follow(tool, tool("q"))
    assert "".join(pages) == text
    assert pages[0].count("\n") == 7


@settings(max_examples=examples(60), deadline=None)
@given(text=page_texts, limit=st.integers(1, 9), budget=st.sampled_from([None, 300, 600, 2_000]))
def test_joining_the_pages_of_any_text_gives_the_text(text, limit, budget):
    """Pages followed by hints, and the same pages by handle, concatenate to the original."""
    kit, tool = _paged(text, limit=limit, budget=budget)
    first = tool("q")
    pages, _ = _follow(tool, first)
    assert "".join(pages) == text
    if first.handle is not None:
        assert _by_handle(kit, first.handle) == pages
    if budget is not None:
        assert all(count_tokens(str(tool(**c))) <= budget for c in _follow(tool, first)[1])


@settings(max_examples=examples(60), deadline=None)
@given(units=grapheme_lists.filter(bool), budget=st.integers(1, 30))
def test_pieces_of_a_long_line_end_between_graphemes(units, budget):
    """Each piece of a line longer than a page ends on a joint between whole graphemes."""
    graphemes = [u for u in units if u != "\n"] or ["a"]  # units of newlines only: one "a"
    line = "".join(graphemes)
    joints = {0}
    for unit in graphemes:
        joints.add(max(joints) + len(unit))
    pages = text_pages(line, 10, budget, count_tokens)
    assert "".join(line[p.start : p.end] for p in pages) == line
    assert all(p.end in joints for p in pages)


def test_a_grapheme_longer_than_a_page_stays_whole_in_its_piece():
    """A ZWJ emoji costing more than the page is one piece, never cut inside."""
    line = "\U0001f469\u200d\U0001f4bb"
    pages = text_pages(line, 10, 1, count_tokens)
    assert [line[p.start : p.end] for p in pages] == [line]


def test_safe_cut_never_returns_an_empty_piece():
    """Even inside a run of combining marks longer than the piece, a cut moves forward."""
    text = "a" + "\u0301" * 50
    assert safe_cut(text, 10, 0) == 10
    assert safe_cut(text, 10, 3) > 3


class _Counter:
    """A token counter users may write: a callable object that is not hashable."""

    __hash__ = None  # type: ignore[assignment]

    def __call__(self, text: str) -> int:
        return count_tokens(text)


def test_an_unhashable_token_counter_still_pages():
    """Remembering cuts never fails for a counter that cannot be a cache key."""
    pages = text_pages("a\nb\nc\n", 2, 100, _Counter())
    assert [(p.first, p.last) for p in pages] == [(1, 2), (3, 3)]


def test_a_grapheme_over_a_tiny_budget_is_kept_whole():
    """A skin-toned emoji worth more than a 1-token piece is one piece, never split in two."""
    pages = text_pages("日👍🏽", 10, 1, count_tokens)
    assert [(p.start, p.end) for p in pages] == [(0, 1), (1, 3)]
