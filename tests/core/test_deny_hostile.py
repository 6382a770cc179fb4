"""``deny`` on hostile results and errors: cycles and deep nesting are read, never a
RecursionError; a denied value in an exception's non-string argument is masked too."""

from __future__ import annotations

from typing import Any

import pytest

from slimtools import paginate, project_fields


def _deep(levels: int) -> list[Any]:
    """A list nested ``levels`` deep."""
    root: list[Any] = []
    node = root
    for _ in range(levels):
        child: list[Any] = []
        node.append(child)
        node = child
    return root


def test_a_denied_value_holding_itself_is_masked_without_recursion():
    """A denied field whose value contains itself gives a page, its leaf values masked."""
    secret: dict[str, Any] = {"token": "hunter2-secret-value"}
    secret["again"] = secret

    @paginate(limit=2)
    @project_fields(["id", "note"], deny=["secret"])
    def search() -> list[dict[str, Any]]:
        return [{"id": 1, "note": "hunter2-secret-value", "secret": secret}]

    assert "hunter2" not in str(search())


def test_a_result_list_holding_itself_gives_a_page():
    """A result list that contains itself is read like any list, not followed forever: the
    inner list, a row without field names, is withheld."""
    rows: list[Any] = [{"id": 1, "title": "a"}]
    rows.append(rows)

    @paginate(limit=2)
    @project_fields(["id", "title"], deny=["secret"])
    def search() -> list[Any]:
        return rows

    env = search()
    assert env.briefs == [{"id": 1, "title": "a"}]
    assert "1 of 2 items (list) could not be read as records" in env.hint


def test_a_result_nested_ten_thousand_deep_gives_an_envelope():
    """Nesting deeper than the interpreter's stack is read without a RecursionError: a list
    of lists has no field names, so it is withheld with a note."""

    @paginate(limit=2)
    @project_fields(["id"], deny=["secret"])
    def search() -> list[Any]:
        return _deep(10_000)

    env = search()
    assert env.total == 0
    assert "could not be read as records" in env.hint


def test_an_exception_whose_argument_is_a_row_is_masked_for_frameworks():
    """``KeyError(row)`` raised by a guarded tool: ``str(exc)``, as LangChain shows it,
    hides the row's denied value like a ``ValueError(f"bad row {row}")`` does."""
    row = {"id": 1, "title": "a", "ssn": "078-05-1120"}

    @project_fields(["id", "title"], deny=["ssn"])
    def lookup() -> list[dict[str, Any]]:
        raise KeyError(row)

    with pytest.raises(KeyError) as caught:
        lookup()
    assert "078-05-1120" not in str(caught.value)
