"""Toolkit.call and acall: untrusted model arguments in, a ToolResult out, never an exception."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slimtools import Envelope, Toolkit, ToolResult, paginate, summarize_with_handle
from tests.strategies import json_values

ROWS = [{"id": i, "title": f"t{i}"} for i in range(6)]


class BackendError(Exception):
    """Raised by a failing backend."""


def _kit() -> Toolkit:
    kit = Toolkit("d")

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=2)
    def search(query: str, exact: bool = False) -> list[dict[str, Any]]:
        """Search."""
        return ROWS

    @kit.tool
    @paginate(limit=2)
    async def asearch(query: str) -> list[dict[str, Any]]:
        """Search, asynchronously."""
        await asyncio.sleep(0)
        return ROWS

    @kit.tool
    def echo(text: str) -> str:
        """Echo text."""
        return text

    @kit.tool
    def stats(service: str) -> dict[str, Any]:
        """Stats of a service."""
        return {"service": service, "errors": 3}

    @kit.tool
    def broken(query: str) -> list[int]:
        """Always fails."""
        raise BackendError("index offline")

    @kit.tool
    def tagged(query: str, **filters: str) -> dict[str, Any]:
        """Accepts any filters."""
        return {"query": query, **filters}

    return kit


@pytest.mark.parametrize(
    "arguments", ['{"query": "x"}', b'{"query": "x"}', {"query": "x"}, '  {"query":"x"} ']
)
def test_json_text_bytes_and_mappings_are_accepted(arguments):
    """Arguments may be JSON text, JSON bytes or a mapping."""
    result = _kit().call("search", arguments)
    assert not result.is_error
    assert result.value.total == 6


def test_an_envelope_result_is_the_text_the_model_sees():
    """For a slimmed tool: text is ``str(env)``, value the Envelope, structured its JSON."""
    result = _kit().call("search", {"query": "x"})
    assert isinstance(result, ToolResult)
    assert isinstance(result.value, Envelope)
    assert result.text == str(result.value)
    assert result.structured == json.loads(result.text)


def test_plain_results_are_shown_as_json_or_text():
    """A dict becomes compact JSON; a string is shown as is; neither is structured."""
    kit = _kit()
    assert kit.call("stats", {"service": "db"}).text == '{"service":"db","errors":3}'
    echoed = kit.call("echo", {"text": "héllo"})
    assert (echoed.text, echoed.structured) == ("héllo", None)


def test_page_and_limit_can_be_sent_by_the_model():
    """``page`` and ``limit`` are ordinary arguments, validated like the rest."""
    result = _kit().call("search", {"query": "x", "page": "2", "limit": 3})
    assert [b["id"] for b in result.value.briefs] == [3, 4, 5]


def test_a_page_past_the_end_is_an_envelope_not_an_error():
    """As the README says: not flagged as an error; the hint names the pages and the last one."""
    result = _kit().call("search", {"query": "x", "page": 99})
    assert not result.is_error
    assert "page 99 is past the end" in result.text
    assert result.structured is not None


def test_an_invalid_page_is_an_envelope_not_an_error():
    """``page=0`` passes validation and is answered by the envelope's hint."""
    result = _kit().call("search", {"query": "x", "page": 0})
    assert not result.is_error
    assert "not a valid page" in result.text


def test_missing_arguments_mean_no_arguments():
    """``None`` and ``""`` are an empty argument object."""
    kit = _kit()
    for empty in (None, "", b""):
        result = kit.call("search", empty)
        assert result.is_error
        assert "missing required argument 'query'" in result.text


def test_bad_json_is_reported_with_what_to_send():
    """Malformed JSON comes back as an error asking for a JSON object."""
    result = _kit().call("search", '{"query": ')
    assert result.is_error
    assert result.text.startswith("Invalid arguments for search: arguments are not valid JSON")
    assert result.text.endswith("send a JSON object.")


def test_arguments_nested_past_the_stack_are_reported_not_raised():
    """JSON arguments nested 100,000 deep come back as invalid JSON, not a RecursionError."""
    result = _kit().call("search", '{"query": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert result.is_error
    assert "nested too deep" in result.text


@pytest.mark.parametrize("arguments", ["[1, 2]", '"x"', "3", "null"])
def test_json_that_is_not_an_object_is_reported(arguments):
    """A JSON array, string or number is not an argument object."""
    result = _kit().call("search", arguments)
    assert result.is_error
    assert "must be a JSON object" in result.text or "missing required" in result.text


def test_an_unknown_tool_lists_the_available_ones():
    """Calling a tool that does not exist names the tools that do."""
    result = _kit().call("serach", {"query": "x"})
    assert result.is_error
    assert result.text == (
        "Unknown tool 'serach'. Available tools: "
        "search, asearch, echo, stats, broken, tagged, get_record."
    )


def test_wrong_types_say_what_was_expected():
    """A wrong type names the argument, what it got and the whole expected signature."""
    result = _kit().call("search", {"query": {"a": 1}, "exact": "maybe"})
    assert result.is_error
    assert "query: Input should be a valid string" in result.text
    assert "exact: Input should be a valid boolean" in result.text
    assert "Expected: query: string (required), exact: boolean = false, page: integer = 1" in (
        result.text
    )


def test_values_that_are_not_json_are_described_anyway():
    """A mapping from Python with int keys or huge ints still gets a readable error."""
    result = _kit().call("search", {"query": {1: 2}, "page": 2**70})
    assert result.is_error
    assert 'query: Input should be a valid string (got {"1":2})' in result.text


def test_unknown_arguments_are_refused_by_name():
    """An argument the tool does not take is named."""
    result = _kit().call("search", {"query": "x", "tenant": "acme"})
    assert result.is_error
    assert "unknown argument 'tenant'" in result.text


def test_var_keyword_tools_accept_extra_arguments():
    """A tool with ``**filters`` receives arguments it does not name."""
    result = _kit().call("tagged", {"query": "x", "level": "E"})
    assert result.value == {"query": "x", "level": "E"}


def test_tool_exceptions_become_error_results():
    """An exception raised by the tool is reported with its type and message."""
    result = _kit().call("broken", {"query": "x"})
    assert (result.is_error, result.value) == (True, None)
    assert result.text == "broken failed: BackendError: index offline"


def test_async_tools_run_to_completion_through_call():
    """``call`` runs an async tool when no event loop is running."""
    result = _kit().call("asearch", {"query": "x"})
    assert result.value.total == 6


async def test_acall_awaits_async_tools_and_runs_sync_ones():
    """``acall`` serves both kinds inside a running loop."""
    kit = _kit()
    assert (await kit.acall("asearch", {"query": "x"})).value.total == 6
    assert (await kit.acall("search", '{"query": "x"}')).value.total == 6
    assert (await kit.acall("broken", {"query": "x"})).is_error


async def test_call_inside_a_running_loop_points_to_acall():
    """A sync ``call`` of an async tool under a running loop says to use ``acall``."""
    result = _kit().call("asearch", {"query": "x"})
    assert result.is_error
    assert "use Toolkit.acall" in result.text


def test_get_record_is_callable_through_call():
    """The companion dispatches like any tool; an unknown handle is an error result."""
    kit = _kit()
    kit.call("search", {"query": "x"})
    assert json.loads(kit.call("get_record", {"handle": 1}).text) == ROWS[1]
    assert json.loads(kit.call("get_record", '{"handle": "1"}').text) == ROWS[1]
    missing = kit.call("get_record", {"handle": 99})
    assert missing.is_error
    assert missing.text.startswith("No record for handle")


async def test_get_record_is_callable_through_acall():
    """``acall("get_record", ...)`` reads the store asynchronously when it can."""
    kit = _kit()
    await kit.acall("search", {"query": "x"})
    assert json.loads((await kit.acall("get_record", {"handle": 0})).text) == ROWS[0]


def test_get_record_validates_its_own_arguments():
    """A structured handle is refused by the companion's argument model."""
    result = _kit().call("get_record", {"handle": [1]})
    assert result.is_error
    assert "Invalid arguments for get_record" in result.text


def test_a_boolean_handle_is_refused_not_read_as_record_one():
    """``get_record(handle=true)`` is an error naming the handle, not record 1 (lax 1)."""
    kit = _kit()
    kit.call("search", {"query": "x"})
    result = kit.call("get_record", {"handle": True})
    assert result.is_error
    assert "handle: Input should be an integer or a string, not a boolean (got true)" in result.text


def test_a_boolean_page_is_refused_where_an_integer_is_wanted():
    """A ``true`` sent for an integer argument is an error, not page 1."""
    result = _kit().call("search", {"query": "x", "page": True})
    assert result.is_error
    assert "page: Input should be an integer, not a boolean" in result.text


def test_booleans_stay_valid_where_the_tool_takes_one():
    """A boolean argument, or one whose type is not declared, is passed as sent."""
    kit = _kit()
    assert not kit.call("search", {"query": "x", "exact": True}).is_error
    assert kit.call("tagged", {"query": "x", "flag": True}).value == {"query": "x", "flag": True}


def test_a_numeric_string_stays_lax():
    """``"2"`` for an integer page is still read as 2 (a common, harmless slip)."""
    result = _kit().call("search", {"query": "x", "page": "2"})
    assert not result.is_error
    assert result.value.total == 6


def test_session_argument_binds_the_session_for_the_call():
    """``call(..., session=...)`` scopes the handles made and read during the call."""
    kit = _kit()
    kit.call("search", {"query": "x"}, session="alice")
    assert not kit.call("get_record", {"handle": 1}, session="alice").is_error
    assert kit.call("get_record", {"handle": 1}, session="bob").is_error
    assert kit.call("get_record", {"handle": 1}).is_error


@given(
    name=st.sampled_from(["search", "asearch", "echo", "stats", "broken", "tagged", "get_record"])
    | st.text(max_size=10),
    arguments=st.one_of(
        st.none(),
        st.text(max_size=30),
        st.binary(max_size=30),
        st.dictionaries(st.text(max_size=8), json_values, max_size=4),
        st.dictionaries(
            st.sampled_from(["query", "page", "handle"]) | st.integers(),
            st.dictionaries(st.integers(), st.integers(), max_size=2) | st.integers(),
            max_size=3,
        ),
        json_values.map(json.dumps),
    ),
)
def test_call_never_raises(name, arguments):
    """Any tool name and any arguments give a ToolResult."""
    result = _kit().call(name, arguments)
    assert isinstance(result, ToolResult)
    assert isinstance(result.text, str)
