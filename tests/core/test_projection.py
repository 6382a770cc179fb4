"""project_fields: allowlist projection, deny by default, renaming, nesting, record shapes."""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import AliasChoices, BaseModel, Field

from slimtools import Clip, ConfigurationError, project_fields
from slimtools.projection import Projection, record_to_plain
from tests.strategies import (
    RECORD_FORMS,
    AliasedBrief,
    LogBrief,
    PlainRecord,
    allowed_keys,
    allowlist_model,
    dotted_names,
    record_dicts,
    record_forms,
    shapes,
)


def _check_allowed(brief: dict[str, Any], allowed: dict[str, set[str] | None]) -> None:
    assert set(brief) <= set(allowed), f"{set(brief) - set(allowed)} leaked"
    for name, inner in allowed.items():
        value = brief.get(name)
        if inner is None:
            assert not isinstance(value, (dict, list)), f"{name} is a leaf but holds {value!r}"
            continue
        for item in value if isinstance(value, list) else [value]:
            if item is not None:
                assert set(item) <= inner, f"{set(item) - inner} leaked under {name}"


@given(
    data=st.data(),
    shape=shapes,
    form=record_forms,
    as_names=st.booleans(),
)
def test_no_key_outside_the_allowlist_reaches_a_brief(data, shape, form, as_names):
    """Deny by default: records with random extra keys give briefs of allowlisted keys only."""
    rows = data.draw(st.lists(record_dicts(shape), max_size=4))
    spec = dotted_names(shape) if as_names and not shape.renamed else allowlist_model(shape)
    projection = Projection.from_spec(spec)
    for row in rows:
        brief = projection.project(RECORD_FORMS[form](row))
        _check_allowed(brief, allowed_keys(shape))
        assert "zz_" not in json.dumps(list(_keys(brief)))


def _keys(value: Any) -> Any:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner)


@given(shape=shapes, form=record_forms, data=st.data())
def test_every_record_shape_projects_to_the_same_brief(shape, form, data):
    """A dict, a Pydantic model, a dataclass and a plain object with the same data agree."""
    row = data.draw(record_dicts(shape))
    projection = Projection.from_spec(allowlist_model(shape))
    assert projection.project(RECORD_FORMS[form](row)) == projection.project(row)


@given(shape=shapes, data=st.data())
def test_allowlisted_values_come_from_their_source_keys(shape, data):
    """Each leaf shows its source key's value, renamed; absent sources show the default."""
    row = data.draw(record_dicts(shape))
    brief = Projection.from_spec(allowlist_model(shape)).project(row)
    for leaf in shape.leaves:
        assert brief[leaf] == row.get(shape.source(leaf))


def test_validation_alias_renames_a_field():
    """``Field(validation_alias="message")`` reads ``message`` and shows the field's own name."""
    brief = Projection.from_spec(LogBrief).project({"id": 1, "level": "E", "message": "m"})
    assert brief == {"id": 1, "level": "E", "summary": "m"}


def test_alias_renames_a_field():
    """``Field(alias="message")`` also reads ``message`` and shows the field's own name."""

    class Brief(BaseModel):
        summary: str = Field(alias="message")

    assert Projection.from_spec(Brief).project({"message": "m"}) == {"summary": "m"}


def test_explicit_serialization_alias_names_the_output_key():
    """``serialization_alias`` chooses the key the model sees."""

    class Brief(BaseModel):
        summary: str = Field(validation_alias="message", serialization_alias="msg")

    assert Projection.from_spec(Brief).project({"message": "m"}) == {"msg": "m"}


def test_alias_path_reaches_into_nested_data():
    """``AliasPath("user", "login")`` and ``AliasPath("labels", 0, "name")`` read nested values."""
    record = {"id": 7, "user": {"login": "ada", "email": "x"}, "labels": [{"name": "bug"}]}
    assert Projection.from_spec(AliasedBrief).project(record) == {
        "id": 7,
        "author": "ada",
        "first_label": "bug",
    }


def test_alias_path_through_objects_and_missing_indexes():
    """Alias paths read attributes of objects; an index past the end gives the default."""
    record = PlainRecord(id=1, user=PlainRecord(login="ada"), labels=[])
    assert Projection.from_spec(AliasedBrief).project(record) == {
        "id": 1,
        "author": "ada",
        "first_label": None,
    }


def test_alias_choices_take_the_first_present_source():
    """``AliasChoices`` tries each source in turn."""

    class Brief(BaseModel):
        title: str | None = Field(default=None, validation_alias=AliasChoices("name", "title"))

    projection = Projection.from_spec(Brief)
    assert projection.project({"title": "t"}) == {"title": "t"}
    assert projection.project({"name": "n", "title": "t"}) == {"title": "n"}


class User(BaseModel):
    login: str


class Issue(BaseModel):
    number: int
    user: User
    assignees: list[User] = []


def test_nested_models_project_nested_records():
    """A field typed with a model keeps only that model's fields of the nested record."""
    record = {"number": 1, "user": {"login": "ada", "token": "s3cr3t"}, "body": "long"}
    assert Projection.from_spec(Issue).project(record) == {
        "number": 1,
        "user": {"login": "ada"},
        "assignees": [],
    }


def test_lists_of_nested_models_project_each_item():
    """A ``list[Model]`` field projects every item of the list."""
    record = {"number": 1, "user": {"login": "a"}, "assignees": [{"login": "b", "id": 2}]}
    assert Projection.from_spec(Issue).project(record)["assignees"] == [{"login": "b"}]


def test_dotted_names_keep_nested_fields():
    """``["number", "user.login"]`` keeps ``number`` and only ``login`` under ``user``."""
    record = {"number": 1, "user": {"login": "ada", "token": "s"}, "body": "b"}
    assert Projection.from_spec(["number", "user.login"]).project(record) == {
        "number": 1,
        "user": {"login": "ada"},
    }


def test_dotted_names_map_over_lists():
    """A dotted name under a list applies to every item of it."""
    record = {"labels": [{"name": "bug", "color": "red"}, {"name": "ui"}]}
    assert Projection.from_spec(["labels.name"]).project(record) == {
        "labels": [{"name": "bug"}, {"name": "ui"}]
    }


def test_missing_field_with_a_default_takes_the_default():
    """A record without a declared field shows the model's default for it."""

    class Brief(BaseModel):
        id: int
        level: str = "INFO"
        tags: list[str] = Field(default_factory=list)

    assert Projection.from_spec(Brief).project({"id": 1}) == {"id": 1, "level": "INFO", "tags": []}


def test_missing_required_field_is_omitted():
    """A record without a required field gives a brief without it, not an exception."""
    assert Projection.from_spec(LogBrief).project({"id": 1}) == {"id": 1}


def test_missing_dotted_name_is_omitted():
    """A list allowlist leaves out names the record does not have."""
    assert Projection.from_spec(["id", "user.login"]).project({"id": 1}) == {"id": 1}


def test_projection_does_not_coerce_types():
    """A brief shows what the backend returned: ``id: int`` with ``"7"`` stays ``"7"``."""
    assert Projection.from_spec(LogBrief).project({"id": "7"}) == {"id": "7"}


@pytest.mark.parametrize("form", sorted(RECORD_FORMS))
def test_records_of_every_shape_are_projected(form):
    """Dicts, Pydantic models, dataclasses and plain objects all project the same way."""
    row = {"id": 1, "level": "E", "message": "m", "tenant": "acme"}
    assert Projection.from_spec(LogBrief).project(RECORD_FORMS[form](row)) == {
        "id": 1,
        "level": "E",
        "summary": "m",
    }


def test_methods_of_objects_are_not_data():
    """An allowlisted name that is a method of the record is treated as missing."""
    assert Projection.from_spec(["describe", "id"]).project(PlainRecord(id=1)) == {"id": 1}


def test_static_and_class_methods_of_objects_are_not_data():
    """Functions found on the record's class are not fields either."""

    class Row:
        id = 1

        @staticmethod
        def helper() -> int:
            return 0

        @classmethod
        def build(cls) -> Row:
            return cls()

    assert Projection.from_spec(["id", "helper", "build"]).project(Row()) == {"id": 1}


def test_methods_of_pydantic_records_are_not_data():
    """``model_dump`` or ``copy`` on a Pydantic record are not fields."""

    class Row(BaseModel):
        id: int

    assert Projection.from_spec(["id", "copy", "model_dump"]).project(Row(id=1)) == {"id": 1}


def test_dict_methods_are_not_fields_of_dict_records():
    """``items`` on a dict record is a key lookup, never the ``dict.items`` method."""
    assert Projection.from_spec(["items"]).project({"id": 1}) == {}


def test_properties_of_objects_are_data():
    """A property of a plain object is read like an attribute."""

    class Row:
        @property
        def id(self) -> int:
            return 5

    assert Projection.from_spec(["id"]).project(Row()) == {"id": 5}


def test_clip_annotation_clips_a_field():
    """``Annotated[str, Clip(10)]`` cuts the value to 10 characters with a marker."""

    class Brief(BaseModel):
        summary: Annotated[str, Clip(10)]

    brief = Projection.from_spec(Brief).project({"summary": "upstream timeout connecting"})
    assert len(brief["summary"]) <= 10
    assert brief["summary"].endswith("…")


def test_clip_applies_to_optional_fields():
    """``Annotated[str, Clip(10)] | None`` clips too."""

    class Brief(BaseModel):
        summary: Annotated[str, Clip(10)] | None = None

    brief = Projection.from_spec(Brief).project({"summary": "upstream timeout connecting"})
    assert len(brief["summary"]) <= 10


def test_clip_leaves_non_text_values_alone():
    """A clipped field holding a number is shown as is."""

    class Brief(BaseModel):
        summary: Annotated[str, Clip(5)]

    assert Projection.from_spec(Brief).project({"summary": 1234567}) == {"summary": 1234567}


def test_clip_in_nested_models_applies_to_nested_fields():
    """Clip annotations of a nested model clip the nested values."""

    class Comment(BaseModel):
        body: Annotated[str, Clip(8)]

    class Post(BaseModel):
        comments: list[Comment]

    brief = Projection.from_spec(Post).project({"comments": [{"body": "a long long body"}]})
    assert len(brief["comments"][0]["body"]) <= 8


def test_output_names_list_the_brief_keys_in_order():
    """``output_names`` are the model's output names, in declaration order."""
    assert Projection.from_spec(AliasedBrief).output_names == ("id", "author", "first_label")


def test_json_schema_describes_briefs_as_emitted():
    """The brief schema uses output names and the clip limits, and requires nothing."""

    class Brief(BaseModel):
        id: int
        summary: Annotated[str, Clip(80)] = Field(validation_alias="message")

    schema = Projection.from_spec(Brief).json_schema()
    assert schema["properties"]["summary"]["maxLength"] == 80
    assert "message" not in schema["properties"]
    assert "required" not in schema


@pytest.mark.parametrize("spec", [[], [""], ["id", 3], "id", 42, dict])
def test_bad_allowlists_raise_configuration_error(spec):
    """An empty list, a non-string name, a bare string or a non-model is refused at once."""
    with pytest.raises(ConfigurationError):
        project_fields(spec)


def test_project_fields_alone_returns_an_envelope_of_briefs():
    """Alone, ``project_fields`` projects every record and says all are shown."""

    @project_fields(LogBrief)
    def search_logs(query: str) -> list[dict[str, Any]]:
        return [{"id": 1, "level": "E", "message": "m", "tenant": "acme"}]

    assert json.loads(str(search_logs("x"))) == {
        "total": 1,
        "briefs": [{"id": 1, "level": "E", "summary": "m"}],
        "hint": "all 1 shown",
    }


def test_a_single_object_result_is_projected_not_passed_through():
    """A tool returning one plain object still shows only allowlisted attributes."""

    @project_fields(["id"])
    def lookup() -> Any:
        return PlainRecord(id=1, secret="s3cr3t")

    env = lookup()
    assert "s3cr3t" not in str(env)
    assert env.briefs == [{"id": 1}]


def test_record_to_plain_copies_every_record_shape():
    """Unprojected briefs are plain dicts (never the caller's own dict)."""

    @dataclasses.dataclass
    class Row:
        id: int

    original = {"id": 1}
    assert record_to_plain(original) == original
    assert record_to_plain(original) is not original
    assert record_to_plain(Row(1)) == {"id": 1}
    assert record_to_plain(User(login="a")) == {"login": "a"}
    assert record_to_plain(PlainRecord(id=1, _private=2)) == {"id": 1}


def test_scalar_field_receiving_a_dict_is_omitted_not_leaked():
    """A field declared ``str`` that receives a nested dict is left out, secrets and all."""

    class Brief(BaseModel):
        id: int
        author: str

    brief = Projection.from_spec(Brief).project({"id": 1, "author": {"email": "x@secret"}})
    assert brief == {"id": 1}


def test_scalar_field_receiving_an_object_is_omitted_not_leaked():
    """A field declared ``str`` that receives an object with attributes is left out."""

    class Brief(BaseModel):
        author: str | None = None

    class Person:
        def __init__(self) -> None:
            self.email = "x@secret"

    assert Projection.from_spec(Brief).project(SimpleNamespace(author=Person())) == {}
