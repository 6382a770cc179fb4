"""Stacking and wrapping: any order, one pipeline run, and tools that stay themselves."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import typing
from decimal import Decimal
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from slimtools import (
    Clip,
    ConfigurationError,
    Envelope,
    Toolkit,
    paginate,
    project_fields,
    summarize_with_handle,
)
from tests._profile import examples
from tests.core_helpers import KINDS, build_tool, call_sync
from tests.strategies import LogBrief

ROWS = [
    {"id": i, "level": "WARN", "message": f"disk {i}% full", "tenant": "acme"} for i in range(10)
]

DECORATORS = {
    "project": lambda: project_fields(LogBrief),
    "paginate": lambda: paginate(limit=3),
    "summarize": lambda: summarize_with_handle(key="id"),
}


def _results(order: tuple[str, ...], kind: str) -> list[str]:
    kit = Toolkit("stack")
    tool = kit.tool(build_tool(kind, [DECORATORS[name]() for name in order], lambda q: ROWS))
    return [
        str(call_sync(tool, "disk")),
        str(call_sync(tool, "disk", page=2)),
        kit.get_record(4),
    ]


@settings(max_examples=examples(30), deadline=None)
@given(order=st.permutations(list(DECORATORS)), kind=st.sampled_from(KINDS))
def test_any_stacking_order_gives_the_same_envelope(order, kind):
    """Every order of the three decorators gives the same pages and the same records."""
    assert _results(tuple(order), kind) == _results(("summarize", "paginate", "project"), kind)


def test_the_backend_runs_once_per_call(kind):
    """Three decorators, one call of the backend per tool call (none for later pages)."""
    calls: list[str] = []

    def backend(query: str) -> list[dict[str, Any]]:
        calls.append(query)
        return ROWS

    tool = build_tool(kind, [DECORATORS[n]() for n in DECORATORS], backend)
    call_sync(tool, "a")
    call_sync(tool, "b")
    call_sync(tool, "b", page=2)
    assert calls == ["a", "b"]


class CountingRecord:
    """A record that counts reads of its data attributes."""

    reads: typing.ClassVar[list[int]] = []

    def __init__(self, n: int) -> None:
        self.id = n
        self.level = "INFO"
        self.message = f"event {n}"

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("_"):
            CountingRecord.reads.append(object.__getattribute__(self, "id"))
        return object.__getattribute__(self, name)


@pytest.mark.parametrize("order", list(itertools.permutations(DECORATORS)))
def test_projection_runs_only_over_the_page(order):
    """Of 10,000 records, only the 3 on the page have their fields read."""
    rows = [CountingRecord(n) for n in range(10_000)]
    tool = build_tool("function", [DECORATORS[name]() for name in order], lambda q: rows)
    CountingRecord.reads.clear()
    env = tool("x")
    assert [b["id"] for b in env.briefs] == [0, 1, 2]
    assert set(CountingRecord.reads) == {0, 1, 2}


@pytest.mark.parametrize("name", list(DECORATORS))
def test_each_decorator_alone_gives_a_valid_envelope(kind, name):
    """project_fields, paginate and summarize_with_handle each return an Envelope on their own."""
    env = call_sync(build_tool(kind, [DECORATORS[name]()], lambda q: ROWS), "x")
    assert isinstance(env, Envelope)
    assert env.total == len(ROWS)
    assert env.hint
    assert env.jsonable() == json.loads(str(env))


@pytest.mark.parametrize("name", list(DECORATORS))
def test_the_same_decorator_twice_is_a_configuration_error(name):
    """Applying one decorator twice to a tool fails at decoration time."""
    with pytest.raises(ConfigurationError, match="applied twice"):
        build_tool("function", [DECORATORS[name](), DECORATORS[name]()], lambda q: ROWS)


def test_the_same_decorator_twice_with_another_between_is_refused():
    """``paginate`` above and below ``project_fields`` is still twice."""
    with pytest.raises(ConfigurationError):
        build_tool(
            "function", [paginate(limit=2), project_fields(["id"]), paginate()], lambda q: ROWS
        )


@pytest.mark.parametrize("above", [True, False])
def test_a_key_the_allowlist_drops_is_a_configuration_error(above):
    """``key="id"`` with an allowlist without ``id`` cannot work, in either order."""
    decorators = [summarize_with_handle(key="tenant"), project_fields(LogBrief)]
    with pytest.raises(ConfigurationError, match="tenant"):
        build_tool("function", decorators if above else decorators[::-1], lambda q: ROWS)


def test_budgets_of_stacked_decorators_take_the_smaller():
    """``max_tokens`` on both paginate and summarize_with_handle: the tighter one applies."""
    loose = build_tool(
        "function",
        [summarize_with_handle(key="id", max_tokens=500), paginate(limit=10, max_tokens=40)],
        lambda q: ROWS,
    )
    assert len(loose("x").briefs) < 10


# the decorated tool stays itself -------------------------------------------------------


def test_name_and_docstring_are_kept(kind):
    """The wrapper reports the tool's own ``__name__`` and docstring."""
    tool = build_tool(kind, [DECORATORS[n]() for n in DECORATORS], lambda q: ROWS)
    assert tool.__name__ == "search"
    assert inspect.getdoc(tool) == "Search the backend."


def test_type_hints_of_the_tool_are_kept(kind):
    """The tool's own parameter hints survive; the return is an Envelope."""
    tool = build_tool(kind, [DECORATORS[n]() for n in DECORATORS], lambda q: ROWS)
    hints = typing.get_type_hints(tool)
    assert hints["query"] is str
    assert hints["return"] == Envelope[Any]


def test_async_tools_stay_coroutine_functions(kind):
    """``inspect.iscoroutinefunction`` is true exactly for async tools."""
    tool = build_tool(kind, [DECORATORS[n]() for n in DECORATORS], lambda q: ROWS)
    assert inspect.iscoroutinefunction(tool) is (kind == "async_function")


def test_async_tools_return_an_awaitable_envelope():
    """An async tool's call is awaited to an Envelope; a sync tool's is the Envelope."""
    atool = build_tool("async_function", [paginate(limit=3)], lambda q: ROWS)
    pending = atool("x")
    assert inspect.isawaitable(pending)
    assert isinstance(asyncio.run(_await(pending)), Envelope)
    assert isinstance(build_tool("function", [paginate(limit=3)], lambda q: ROWS)("x"), Envelope)


async def _await(value: Any) -> Any:
    return await value


class BackendError(Exception):
    """Raised by a failing backend."""


def test_errors_raised_by_the_tool_propagate_unchanged(kind):
    """The exact exception the tool raised reaches the caller."""
    error = BackendError("index offline")

    def backend(query: str) -> Any:
        raise error

    tool = build_tool(kind, [DECORATORS[n]() for n in DECORATORS], backend)
    with pytest.raises(BackendError) as caught:
        call_sync(tool, "x")
    assert caught.value is error


def test_decorators_inside_classmethod_and_staticmethod_work():
    """``@classmethod`` / ``@staticmethod`` above the slimming decorators work too."""

    class Service:
        @classmethod
        @paginate(limit=2)
        def by_class(cls, query: str) -> list[str]:
            return [cls.__name__, query, "z"]

        @staticmethod
        @paginate(limit=2)
        def by_static(query: str) -> list[str]:
            return [query, "y", "z"]

    assert Service.by_class("q").briefs == ["Service", "q"]
    assert Service.by_class("q").hint == '1 more: by_class(query="q", page=2)'
    assert Service().by_static("q", page=2).briefs == ["z"]


def test_methods_of_two_objects_page_their_own_results():
    """Page 2 of ``b.search("x")`` comes from ``b``, never from ``a``'s snapshot."""

    class Repo:
        def __init__(self, base: int) -> None:
            self.base = base

        @paginate(limit=2)
        def search(self, query: str) -> list[int]:
            return [self.base + i for i in range(5)]

    a, b = Repo(0), Repo(100)
    a.search("x")
    b.search("x")
    assert a.search("x", page=2).briefs == [2, 3]
    assert b.search("x", page=2).briefs == [102, 103]


# results that cannot be slimmed ----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"), [(42, 42), (3.5, 3.5), (True, True), (Decimal("1.10"), "1.10")]
)
def test_scalar_results_pass_through_with_a_hint(kind, value, shown):
    """An int, float, bool or Decimal comes back in a valid envelope saying nothing was slimmed."""
    decorators = [DECORATORS[n]() for n in DECORATORS if n != "project"]
    env = call_sync(build_tool(kind, decorators, lambda q: value), "x")
    assert json.loads(str(env))["briefs"] == [shown]
    assert env.total == 1
    assert "passed through as is" in env.hint


@pytest.mark.parametrize(
    ("value", "shown"), [(42, "42"), (3.5, "3.5"), (True, "true"), (Decimal("1.10"), "1.10")]
)
def test_scalar_results_of_projected_tools_pass_through_as_text(kind, value, shown):
    """Under an allowlist (whose schema promises object briefs) a scalar comes back as text."""
    env = call_sync(build_tool(kind, [DECORATORS[n]() for n in DECORATORS], lambda q: value), "x")
    assert (env.total, env.briefs, env.text) == (1, [], shown)
    assert "passed through as is" in env.hint


def test_none_result_says_the_tool_returned_nothing(kind):
    """``None`` gives total 0 and a hint saying there was no result."""
    env = call_sync(build_tool(kind, [paginate()], lambda q: None), "x")
    assert (env.total, env.briefs, env.hint) == (0, [], "the tool returned no result")


def test_unknown_object_without_an_allowlist_passes_through():
    """An object nothing can slim is shown through the JSON fallback, with a note."""

    class Handle:
        __slots__ = ()

        def __str__(self) -> str:
            return "<handle>"

    @paginate
    def open_handle() -> Handle:
        return Handle()

    env = open_handle()
    assert json.loads(str(env)) == {
        "total": 1,
        "briefs": ["<handle>"],
        "hint": "result passed through as is (Handle): nothing to slim",
    }


def test_an_envelope_returned_by_the_tool_is_returned_as_is():
    """A tool that builds its own Envelope is not wrapped again."""
    own = Envelope(total=1, briefs=[{"x": 1}], hint="mine")
    assert paginate(lambda: own)() is own


def test_generators_are_records():
    """A generator result is consumed into records and paged."""
    env = paginate(limit=2)(lambda: (i for i in range(5)))()
    assert (env.total, env.briefs) == (5, [0, 1])


def test_a_single_dict_is_one_record():
    """A dict result is one record, projected like any other."""
    env = project_fields(["id"])(lambda: {"id": 1, "secret": "s"})()
    assert (env.total, env.briefs) == (1, [{"id": 1}])


def test_the_design_article_scenario():
    """The issue's ``search_logs("timeout")``: 3 of 12 briefs, the next call, get_record(3)."""
    hits = [
        {
            "id": 3 + i,
            "time": f"10-24 03:{12 + i:02d}",
            "level": "ERROR",
            "message": "upstream timeout connecting to auth-service",
            "tenant": "acme",
            "trace_id": f"t{i}",
        }
        for i in range(12)
    ]

    class Brief(BaseModel):
        id: int
        time: str
        level: str
        summary: Annotated[str, Clip(80)] = Field(validation_alias="message")

    kit = Toolkit("logs")

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=3)
    @project_fields(Brief)
    def search_logs(query: str) -> list[dict[str, Any]]:
        """Search the logs."""
        return hits

    env = search_logs("timeout")
    assert json.loads(str(env)) == {
        "total": 12,
        "briefs": [
            {
                "id": 3 + i,
                "time": f"10-24 03:{12 + i:02d}",
                "level": "ERROR",
                "summary": "upstream timeout connecting to auth-service",
            }
            for i in range(3)
        ],
        "hint": '9 more: search_logs(query="timeout", page=2); full record: get_record(3)',
    }
    assert json.loads(kit.get_record(3)) == hits[0]
