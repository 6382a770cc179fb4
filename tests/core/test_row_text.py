"""Rows quoted without their column names in text lose their values under a ``deny``.

``(1, 'alice', '078-05-1120')`` (a ``fetchall()`` tuple in an error) and Postgres'
``Key (ssn)=(...)`` have no ``key: value`` pair for ``scrub_pairs`` to find; the rule is
``slimtools.projection.scrub_rows``, applied wherever ``scrub_pairs`` is (tool errors in
the decorators and ``wrap()``, the proxy's screen).
"""

from __future__ import annotations

import sqlite3
import string
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import slimtools
from slimtools import Toolkit, project_fields
from slimtools.projection import compile_deny, denied_names, scrub_pairs, scrub_rows

SSN = "078-05-1120"


def _failing_insert() -> Any:
    """Insert a duplicate row into a real sqlite table and raise its error quoting the row."""
    db = sqlite3.connect(":memory:")
    db.execute("create table users (id integer, name text, ssn text unique)")
    row = (1, "alice", SSN)
    db.execute("insert into users values (?, ?, ?)", row)
    try:
        db.execute("insert into users values (?, ?, ?)", row)
    except sqlite3.IntegrityError as exc:
        raise sqlite3.IntegrityError(f"{exc} on row {row}") from exc
    raise AssertionError("the duplicate was inserted")


def test_a_decorated_tools_error_quoting_a_tuple_row_loses_its_values():
    """A guarded tool's ``IntegrityError`` quoting a ``fetchall()`` tuple shows no value."""
    kit = Toolkit("row-errors")

    @project_fields(["id", "name"], deny=["ssn"])
    def insert_user() -> Any:
        return _failing_insert()

    kit.tool(insert_user, name="insert_user")
    result = kit.call("insert_user", {})
    assert result.is_error
    assert SSN not in result.text
    assert "UNIQUE constraint failed" in result.text


def test_a_wrapped_tools_error_quoting_a_tuple_row_loses_its_values():
    """``wrap()`` with only a deny masks the same error the same way."""
    kit = Toolkit("row-errors-wrap")

    def insert_user() -> Any:
        return _failing_insert()

    slimtools.wrap(insert_user, toolkit=kit, deny=["ssn"])
    result = kit.call("insert_user", {})
    assert result.is_error
    assert SSN not in result.text


def test_a_postgres_key_of_a_denied_column_loses_its_value():
    """``Key (ssn)=(...)`` loses its value; a key of another column keeps it."""
    text = f"Key (ssn)=({SSN}) already exists; Key (id)=(12345) too"
    assert (
        scrub_rows(text, {"ssn"}) == "Key (ssn)=([redacted]) already exists; Key (id)=(12345) too"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"Duplicate entry '{SSN}' for key 'users.ssn'",
            "Duplicate entry '[redacted]' for key 'users.ssn'",
        ),
        (
            f"Duplicate entry '{SSN}' for key 'users_ssn_unique'",
            "Duplicate entry '[redacted]' for key 'users_ssn_unique'",
        ),
        (
            f"Violation of UNIQUE KEY constraint 'UQ_users_ssn'. Cannot insert duplicate key in "
            f"object 'dbo.users'. The duplicate key value is ({SSN}).",
            "Violation of UNIQUE KEY constraint 'UQ_users_ssn'. Cannot insert duplicate key in "
            "object 'dbo.users'. The duplicate key value is ([redacted]).",
        ),
    ],
    ids=["mysql", "mysql constraint name", "sql server"],
)
def test_a_bare_value_beside_the_denied_key_it_broke_is_masked(text, expected):
    """A database quoting the duplicate value beside a key naming the denied column."""
    assert scrub_rows(text, {"ssn"}) == expected


@pytest.mark.parametrize(
    ("text", "deny"),
    [
        (f"Key (SSN)=({SSN}) already exists", ["ssn"]),
        (f'Key ("Ssn")=({SSN}) already exists', ["ssn"]),
        (f"Duplicate entry '{SSN}' for key 'users.SSN'", ["ssn"]),
        (
            f"Duplicate entry '{SSN}' for key 'users.social_security_number'",
            ["socialSecurityNumber"],
        ),
        (
            f"Violation of UNIQUE KEY constraint 'UQ_users_social_security_number'. "
            f"The duplicate key value is ({SSN}).",
            ["social_security_number"],
        ),
    ],
    ids=["postgres upper", "postgres quoted", "mysql upper", "mysql snake", "sql server snake"],
)
def test_a_column_is_matched_in_every_spelling_deny_matches(text, deny):
    """A row's column matches a denied name folded, as ``deny`` matches a key (issue 32)."""
    assert SSN not in scrub_rows(text, denied_names(compile_deny(deny)))


def test_a_bare_value_beside_a_key_merely_containing_a_denied_name_is_kept():
    """``users.passn`` holds ``ssn`` inside a word: not the denied column."""
    text = "Duplicate entry 'bob@example.org' for key 'users.passn'"
    assert scrub_rows(text, {"ssn"}) == text


def test_a_bare_value_beside_another_key_is_kept():
    """The value of a key that names no denied column is the error's own words."""
    text = "Duplicate entry 'bob@example.org' for key 'users.email'"
    assert scrub_rows(text, {"ssn"}) == text


def test_numbers_only_and_short_values_are_kept():
    """``(1, 2)`` is not a quoted row, and values under five characters identify nothing."""
    assert scrub_rows("f(1, 2) or (3, 'ab')", {"ssn"}) == "f(1, 2) or (3, 'ab')"


def test_nothing_is_masked_without_a_deny():
    """A tool without ``deny`` keeps its rows in its errors."""
    text = f"bad row (1, '{SSN}')"
    assert scrub_rows(text, ()) == text
    assert scrub_pairs(text, (), None) == text


@pytest.mark.parametrize("size", [10_000, 100_000])
def test_hostile_parentheses_are_scanned_in_linear_time(size):
    """An unterminated run of items or parentheses is scanned once (no backtracking blowup)."""
    assert scrub_rows("(" + "'abcdef'," * size, {"ssn"}).startswith("(")
    assert scrub_rows("(" * size + "'abcdef', 1", {"ssn"}).startswith("(")
    assert scrub_rows("constraint 'x' (" * (size // 10), {"ssn"}).startswith("constraint")


_specific = st.text(alphabet=string.ascii_letters + string.digits + "-@.", min_size=5, max_size=20)
_scalar = st.one_of(st.integers(), st.none(), st.booleans(), st.text(max_size=6))


@given(before=st.lists(_scalar, max_size=3), secret=_specific, after=st.lists(_scalar, max_size=3))
def test_no_specific_string_of_a_quoted_row_survives(before, secret, after):
    """Whatever scalars sit beside it, a specific string in a row's repr is masked."""
    prefix = "Error: bad row "
    assume(secret not in prefix)
    assume(not any(isinstance(v, str) and secret in v for v in (*before, *after)))
    text = prefix + repr((*before, secret, *after))
    assert secret not in scrub_rows(text, {"ssn"})
