"""Projection shows a value only when it fits the shape its field declares."""

from __future__ import annotations

import enum
from collections import UserString
from types import MappingProxyType, SimpleNamespace
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from slimtools import Clip, paginate, project_fields
from slimtools.projection import Projection
from tests.strategies import (
    SECRET_PREFIX,
    TypedShape,
    fits_declared,
    keys_anywhere,
    typed_allowlist,
    typed_records,
    typed_shapes,
)


class Status(str, enum.Enum):
    """A string enum, as ORMs and API clients return them."""

    OPEN = "open"
    IN_PROGRESS = "in progress for a very long while"


class Level(enum.Enum):
    """An enum whose values are not scalars."""

    NESTED = {"token": "t0p-s3cret"}  # noqa: RUF012 - an enum value, not a class attribute


class Markup(str):
    """A ``str`` subclass with an attribute dictionary, like ``markupsafe.Markup``."""


class User(BaseModel):
    login: str


class Ticket(BaseModel):
    """No defaults: a field the record lacks is omitted, so each test shows only its own."""

    id: int
    title: str | None
    tags: list[str] | None
    status: Literal["open", "closed"] | None
    user: User | None
    watchers: list[User] | None
    labels: dict[str, int] | None
    short: Annotated[str, Clip(12)] | None


def _brief(record: dict[str, Any]) -> dict[str, Any]:
    """The brief of ``record`` under ``Ticket``, checked to be the same on both code paths."""
    projection = Projection.from_spec(Ticket)
    fast = projection.project(record)
    general = projection.project(MappingProxyType(record))  # a Mapping that is not a dict
    assert fast == general
    return fast


def test_a_list_field_receiving_records_is_omitted():
    """``tags: list[str]`` holding dicts (with tokens inside) is left out, not shown whole."""
    assert _brief({"id": 1, "tags": [{"name": "x", "token": "sk-1"}]}) == {"id": 1}


def test_a_list_field_receiving_fitting_items_is_shown():
    """A list of scalars under ``list[str]`` is shown as a list."""
    assert _brief({"id": 1, "tags": ["a", "b"]}) == {"id": 1, "tags": ["a", "b"]}


def test_a_list_field_receiving_a_scalar_is_omitted():
    """A bare string under ``list[str]`` does not fit the declared list."""
    assert _brief({"id": 1, "tags": "a,b"}) == {"id": 1}


def test_a_literal_field_receiving_a_dict_is_omitted():
    """``Literal[...] | None`` shows scalars only; a dict under it is left out."""
    assert _brief({"id": 1, "status": {"state": "open", "owner_ssn": "123"}}) == {"id": 1}


def test_a_literal_field_shows_any_scalar_without_coercion():
    """Projection does not check literal membership: a scalar is shown as the backend sent it."""
    assert _brief({"id": 1, "status": "reopened"}) == {"id": 1, "status": "reopened"}


def test_a_nested_model_receiving_a_string_is_omitted():
    """``user: User | None`` holding a plain string shows nothing under ``user``."""
    assert _brief({"id": 1, "user": "alice"}) == {"id": 1}


def test_a_list_of_models_with_a_scalar_item_is_omitted():
    """Every item of a ``list[User]`` must be a record for the list to show."""
    assert _brief({"id": 1, "watchers": [{"login": "a"}, "b"]}) == {"id": 1}
    assert _brief({"id": 1, "watchers": [{"login": "a", "pw": "x"}]}) == {
        "id": 1,
        "watchers": [{"login": "a"}],
    }


def test_a_list_of_models_with_a_list_item_is_omitted():
    """Items of a ``list[User]`` are records, not lists of records: nesting shows nothing."""
    assert _brief({"id": 1, "watchers": [[]]}) == {"id": 1}
    assert _brief({"id": 1, "watchers": [[{"login": "a", "pw": "x"}]]}) == {"id": 1}


def test_a_model_field_shows_a_list_of_records():
    """``user: User | None`` holding a list of records shows each projected (fan-out)."""
    assert _brief({"id": 1, "user": [{"login": "a", "pw": "x"}]}) == {
        "id": 1,
        "user": [{"login": "a"}],
    }


def test_a_dict_field_shows_a_mapping_whose_values_fit():
    """``dict[str, int]`` shows a mapping of scalars and omits one holding records."""
    assert _brief({"id": 1, "labels": {"bug": 2}})["labels"] == {"bug": 2}
    assert "labels" not in _brief({"id": 1, "labels": {"bug": {"secret": 1}}})


def test_none_is_shown_under_any_declared_shape():
    """``null`` carries nothing, so it is shown whatever the field declares."""
    brief = _brief({"id": 1, "tags": None, "user": None, "status": None})
    assert brief == {"id": 1, "tags": None, "user": None, "status": None}


def test_dotted_names_show_nothing_under_a_path_that_does_not_exist():
    """``["user.login"]`` when ``user`` is a plain string shows no ``user`` at all."""
    projection = Projection.from_spec(["id", "user.login"])
    assert projection.project({"id": 1, "user": "alice"}) == {"id": 1}
    assert projection.project({"id": 1, "user": {"login": "a", "pw": "x"}}) == {
        "id": 1,
        "user": {"login": "a"},
    }


def test_a_string_enum_value_is_shown_as_its_value():
    """A ``str`` enum member under a ``str`` field is shown as its plain value."""
    brief = _brief({"id": 1, "title": Status.OPEN})
    assert brief["title"] == "open"
    assert type(brief["title"]) is str


def test_an_enum_value_that_is_not_a_scalar_is_omitted():
    """An enum member whose value is a container never rides out under a scalar field."""
    assert _brief({"id": 1, "title": Level.NESTED}) == {"id": 1}


@pytest.mark.parametrize("record_type", [dict, MappingProxyType])
def test_a_string_enum_in_a_clipped_field_is_clipped(record_type):
    """``Clip(12)`` applies to a string enum's value on the fast and the general path."""
    brief = Projection.from_spec(Ticket).project(
        record_type({"id": 1, "short": Status.IN_PROGRESS})
    )
    assert brief["short"] == "in progress…"


@pytest.mark.parametrize("record_type", [dict, MappingProxyType, SimpleNamespace])
def test_a_string_subclass_is_kept_as_its_string(record_type):
    """A ``str`` subclass (``markupsafe.Markup``) under a ``str`` field is shown as plain text."""
    value = Markup("<b>bold</b>")
    value.__dict__["secret"] = "not shown"
    record = SimpleNamespace(id=1, title=value) if record_type is SimpleNamespace else None
    brief = Projection.from_spec(Ticket).project(record or record_type({"id": 1, "title": value}))
    assert brief == {"id": 1, "title": "<b>bold</b>"}
    assert type(brief["title"]) is str


def test_a_string_like_object_that_is_not_a_str_is_omitted():
    """``UserString`` is an object with attributes, not text: a ``str`` field omits it."""
    assert _brief({"id": 1, "title": UserString("x")}) == {"id": 1}


def test_a_decorated_tool_shows_fitting_values_only():
    """The rule holds end to end: the envelope carries only values that fit."""

    @paginate(limit=5)
    @project_fields(Ticket)
    def search() -> list[dict[str, Any]]:
        return [{"id": 1, "tags": [{"token": "sk-live-x"}], "title": Markup("t")}]

    assert "sk-live" not in str(search())
    assert search().briefs == [{"id": 1, "title": "t"}]


@given(shape=typed_shapes, data=st.data())
def test_no_value_outside_its_declared_shape_reaches_a_brief(shape: TypedShape, data):
    """For any typed allowlist and any record, a brief value fits its field's annotation.

    Records put random JSON (dicts with secret keys included) under every declared field;
    no secret key appears anywhere in the brief and every value shown fits its declaration.
    """
    record = data.draw(typed_records(shape))
    brief = Projection.from_spec(typed_allowlist(shape)).project(record)
    for name, value in brief.items():
        assert fits_declared(shape.fields[name], value), (name, value)
        if shape.fields[name] != "dict_int":  # a declared mapping shows its own keys
            assert not [k for k in keys_anywhere(value) if str(k).startswith(SECRET_PREFIX)]
