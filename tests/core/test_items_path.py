"""``items=``: slimming the record list that a dict result wraps (search APIs, GitHub)."""

from __future__ import annotations

import pytest

from slimtools import ConfigurationError, Toolkit, paginate, project_fields, summarize_with_handle

SEARCH = {
    "total_count": 5,
    "incomplete_results": False,
    "items": [{"number": n, "title": f"issue {n}", "node_id": f"secret-{n}"} for n in range(5)],
}


def test_paginate_pages_the_list_inside_a_dict_result():
    """With items="items" the page comes from the wrapped list and total counts it."""

    @paginate(limit=2, items="items")
    def search_issues(q: str) -> dict:
        return SEARCH

    env = search_issues("bug")
    assert env.total == 5
    assert [b["number"] for b in env.briefs] == [0, 1]
    assert 'search_issues(q="bug", page=2)' in env.hint


def test_projection_applies_to_records_at_a_nested_path():
    """A dotted path reaches records nested two levels down."""

    @project_fields(["title"], items="data.results")
    def search() -> dict:
        return {"data": {"results": SEARCH["items"]}, "meta": {"took": 3}}

    env = search()
    assert env.total == 5
    assert env.briefs[0] == {"title": "issue 0"}


def test_handles_resolve_to_the_full_wrapped_record():
    """get_record returns the full item from inside the dict, not the whole response."""
    kit = Toolkit("gh-items")

    @kit.tool
    @summarize_with_handle(key="number", items="items")
    @project_fields(["number", "title"])
    def search_issues(q: str) -> dict:
        return SEARCH

    search_issues("bug")
    assert '"node_id":"secret-3"' in kit.get_record(3)


def test_later_pages_come_from_the_snapshot_of_the_wrapped_list():
    """Page 2 is read from the page-1 snapshot: the backend runs once for both pages."""
    calls = []

    @paginate(limit=3, items="items")
    def search_issues(q: str) -> dict:
        calls.append(q)
        return SEARCH

    first, second = search_issues("x"), search_issues("x", page=2)
    assert [b["number"] for b in first.briefs + second.briefs] == [0, 1, 2, 3, 4]
    assert calls == ["x"]


def test_a_missing_path_gives_an_empty_envelope_that_says_why():
    """A result without the path shows no briefs and a hint naming the path."""

    @paginate(limit=3, items="items")
    def search_issues(q: str) -> dict:
        return {"message": "rate limited"}

    env = search_issues("x")
    assert env.total == 0
    assert "no 'items'" in env.hint


def test_a_plain_list_result_ignores_items():
    """A tool that already returns a list is paged as is."""

    @paginate(limit=2, items="items")
    def listing() -> list:
        return [1, 2, 3]

    assert listing().total == 3


def test_decorators_that_disagree_on_items_are_rejected():
    """Two different paths for one tool are a configuration error at decoration time."""
    with pytest.raises(ConfigurationError, match="disagree"):

        @paginate(items="items")
        @project_fields(["title"], items="results")
        def search() -> dict:
            return {}


def test_items_must_be_a_dotted_path():
    """An empty or non-string path is refused where it is written."""
    with pytest.raises(ConfigurationError, match="dotted path"):
        paginate(items="")


def test_json_text_at_the_path_is_read_as_the_records_under_an_allowlist():
    """A guarded tool whose list at ``items`` is JSON text projects it, never shows it raw."""
    body = {"items": '[{"number": 1, "title": "a", "node_id": "secret-1"}]'}
    env = project_fields(["number"], items="items")(lambda: body)()
    assert (env.total, env.briefs) == (1, [{"number": 1}])


def test_prose_at_the_path_is_withheld_under_a_deny():
    """Prose at ``items`` of a tool with a deny is withheld like any unreadable result."""
    body = {"items": "node_id secret-1 belongs to issue 1"}
    env = project_fields(["number"], deny=["node_id"], items="items")(lambda: body)()
    assert "secret-1" not in str(env)
    assert "could not be read as records" in env.hint
