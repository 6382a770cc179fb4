"""Fail closed, core rows: each case that once leaked a value it could not project is now
withheld (one test per case).

Only APIs that existed before the fix are used, so each test also runs (and fails) against
the code before it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from slimtools import Toolkit, project_fields, summarize_with_handle
from slimtools.foreign import Plan, Raw, extract, slim
from slimtools.proxy.config import tool_options

ROWS = [{"id": i, "name": f"user {i}", "ssn": f"SECRET-{i}"} for i in range(3)]


class Brief(BaseModel):
    id: int
    name: str


def test_a_tool_returning_its_backends_json_body_shows_no_denied_field():
    """``return resp.text`` of a JSON body is read as records: no ``ssn`` reaches the model."""

    @project_fields(Brief, deny=["ssn"])
    def list_users() -> str:
        return json.dumps(ROWS)

    env = list_users()
    assert "SECRET" not in str(env)
    assert [b["id"] for b in env.briefs] == [0, 1, 2]


def test_a_text_result_that_is_not_records_is_withheld():
    """Prose from a tool with an allowlist is not shown: a valid envelope says why."""

    @project_fields(Brief, deny=["ssn"])
    def describe_user() -> str:
        return "user 0 has ssn SECRET-0 and lives at 1 Main St"

    shown = json.loads(str(describe_user()))
    assert shown["total"] == 0
    assert shown["briefs"] == []
    assert "SECRET" not in shown["hint"]
    assert "Main St" not in shown["hint"]
    assert "could not be read as records" in shown["hint"]


def _proxied(options: dict[str, Any], texts: list[str]) -> Any:
    kit = Toolkit("rows-proxy")
    plan = Plan(tool_options(options), 20_000)

    def forward(**arguments: Any) -> Any:
        return plan.shape(Raw(texts=texts))

    forward.__name__ = "read_rows"
    kit.tool(slim(forward, plan, name="read_rows"), name="read_rows")
    return kit.call("read_rows", {})


NAN_JSON = json.dumps([{**r, "score": float("nan")} for r in ROWS])
UPSTREAM_TEXTS = {
    "NaN from json.dumps": NAN_JSON,
    "an escaped lone surrogate": json.dumps([{**r, "bio": "\ud800"} for r in ROWS]),
    "a byte-order mark": "\ufeff" + json.dumps(ROWS),
    "a fenced json block": "```json\n" + json.dumps(ROWS, indent=2) + "\n```",
    "a one-line preamble": f"Found {len(ROWS)} items:\n" + json.dumps(ROWS),
    "NDJSON": "\n".join(json.dumps(r) for r in ROWS),
}


@pytest.mark.parametrize("text", list(UPSTREAM_TEXTS.values()), ids=list(UPSTREAM_TEXTS))
def test_upstream_json_text_orjson_refuses_is_read_as_records(text):
    """The proxy's payload reader turns each of these texts into the records it holds."""
    data = extract([text])
    assert [row["id"] for row in data] == [0, 1, 2]


@pytest.mark.parametrize("text", list(UPSTREAM_TEXTS.values()), ids=list(UPSTREAM_TEXTS))
def test_a_configured_proxy_tool_denies_fields_of_every_json_text(text):
    """A configured tool's deny holds for JSON text orjson refuses (paged as text before)."""
    result = _proxied({"deny": ["ssn"], "key": "id"}, [text])
    assert "SECRET" not in result.text
    assert json.loads(result.text)["total"] == 3


def test_a_python_repr_from_mcp_server_sqlite_honours_deny():
    """``read_query`` sends ``str(rows)``; it is read with ``ast.literal_eval`` and denied."""
    rows = [{"id": 1, "email": "ann@example.com"}, {"id": 2, "email": "bob@example.com"}]
    result = _proxied({"deny": ["email"]}, [str(rows)])
    assert "example.com" not in result.text
    assert json.loads(result.text)["total"] == 2


def test_a_tool_error_quoting_a_row_does_not_show_its_denied_fields():
    """``ValueError(f"bad row {row}")`` reaches the model without the row's ``ssn``."""
    kit = Toolkit("rows-errors")

    @kit.tool
    @project_fields(Brief, deny=["ssn"])
    def list_users() -> list[dict[str, Any]]:
        raise ValueError(f"bad row {ROWS[1]}")

    result = kit.call("list_users", {})
    assert result.is_error
    assert "SECRET" not in result.text
    assert "bad row" in result.text
    assert "'id': 1" in result.text


def test_a_denied_exception_is_masked_for_frameworks_that_show_it_themselves():
    """Called directly (LangChain shows ``str(exc)``), the exception's message is masked too."""

    @project_fields(Brief, deny=["ssn"])
    def list_users() -> list[dict[str, Any]]:
        raise ValueError(f"bad row {ROWS[1]}")

    with pytest.raises(ValueError, match="bad row") as caught:
        list_users()
    assert "SECRET" not in str(caught.value)


def test_a_generator_tools_exception_is_masked_for_frameworks_that_show_it():
    """A generator tool failing mid-way (raised as its items are read) is masked in place too."""

    @project_fields(Brief, deny=["ssn"])
    def list_users() -> Iterator[dict[str, Any]]:
        yield ROWS[0]
        raise ValueError(f"bad row {ROWS[1]}")

    with pytest.raises(ValueError, match="bad row") as caught:
        list_users()
    assert "SECRET" not in str(caught.value)


def test_a_denied_value_quoted_in_an_allowed_field_is_masked():
    """A note that quotes a denied value shows the note, not the value."""
    rows = [{"id": 1, "note": "ssn on file is 123-45-6789", "ssn": "123-45-6789"}]
    env = project_fields(["id", "note"], deny=["ssn"])(lambda: rows)()
    assert "123-45-6789" not in str(env)
    assert env.briefs[0]["note"].startswith("ssn on file is ")


def test_integer_ids_beyond_64_bits_stay_exact_and_their_handles_resolve():
    """An id of 2**70 + 1 is shown with every digit, and ``get_record`` takes it back."""
    big = 2**70 + 1
    kit = Toolkit("rows-big-ids")

    @kit.tool
    @summarize_with_handle(key="id")
    @project_fields(["id", "name"])
    def list_objects() -> str:
        return json.dumps([{"id": big, "name": "a"}])

    result = kit.call("list_objects", "{}")
    assert f'"id":{big}' in result.text
    for arguments in (f'{{"handle": {big}}}', {"handle": big}, {"handle": str(big)}):
        assert json.loads(kit.call("get_record", arguments).text) == {"id": big, "name": "a"}


def test_the_unknown_handle_message_names_only_tools_that_read():
    """An unknown handle never tells the model to call ``git_reset`` or ``delete_entities``."""
    kit = Toolkit("rows-handles")
    for name in ("git_reset", "delete_entities", "list_entities"):
        kit.tool(summarize_with_handle(key="id")(lambda: [{"id": 1}]), name=name)
    message = kit.get_record(99)
    assert "git_reset" not in message
    assert "delete_entities" not in message
    assert "Call list_entities again to get fresh handles." in message


def test_a_declared_read_only_tool_is_offered_whatever_its_name():
    """A tool registered ``read_only=True`` is named even when its verbs say nothing."""
    kit = Toolkit("rows-declared")
    kit.tool(summarize_with_handle(key="id")(lambda: [{"id": 1}]), name="git_log", read_only=True)
    assert "Call git_log again" in kit.get_record(99)
