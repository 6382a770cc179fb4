"""Toolkit: registration, the tool list every adapter reads, and per-toolkit handles."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from pydantic import BaseModel

import slimtools
from slimtools import (
    ConfigurationError,
    Toolkit,
    ToolSpec,
    paginate,
    project_fields,
    summarize_with_handle,
)
from slimtools.stores import MemoryStore
from slimtools.typing import AsyncHandleStore, Scope
from tests.core_helpers import build_tool, call_sync
from tests.strategies import LogBrief

ROWS = [{"id": i, "level": "ERROR", "message": f"m{i}", "tenant": "acme"} for i in range(8)]


def _rows(_query: str) -> list[dict[str, Any]]:
    return ROWS


def _log_kit() -> Toolkit:
    kit = Toolkit("logs")

    @kit.tool(category="search")
    @summarize_with_handle(key="id")
    @paginate(limit=3)
    @project_fields(LogBrief)
    def search_logs(query: str, level: str = "ERROR") -> list[dict[str, Any]]:
        """Search the logs."""
        return ROWS

    @kit.tool
    def uptime(service: str) -> dict[str, Any]:
        """Report a service's uptime."""
        return {"service": service, "days": 12}

    return kit


def test_tools_list_every_tool_then_get_record():
    """``kit.tools`` holds the registered tools in order, with the companion last."""
    assert [s.name for s in _log_kit().tools] == ["search_logs", "uptime", "get_record"]


def test_tool_specs_carry_name_description_and_callable():
    """Each spec has the name, the docstring as description, and the callable bound to the kit."""
    spec = _log_kit().spec("search_logs")
    assert isinstance(spec, ToolSpec)
    assert spec.description == "Search the logs."
    assert callable(spec.function)
    assert spec.function("x").total == len(ROWS)


def test_parameters_include_page_and_limit_with_defaults_and_descriptions():
    """The JSON Schema of the arguments shows the added ``page`` and ``limit``."""
    params = _log_kit().spec("search_logs").parameters
    assert params["required"] == ["query"]
    assert params["additionalProperties"] is False
    assert params["properties"]["level"] == {"default": "ERROR", "type": "string"}
    assert params["properties"]["page"]["default"] == 1
    assert params["properties"]["limit"]["default"] == 3
    assert "1 to 100" in params["properties"]["limit"]["description"]
    assert "title" not in json.dumps(params)


def test_slim_tools_describe_their_envelope_output():
    """A slimmed tool's ``output_schema`` describes the envelope with briefs as projected."""
    spec = _log_kit().spec("search_logs")
    assert spec.returns_envelope
    assert spec.output_schema is not None
    assert spec.output_schema["required"] == ["total", "hint"]
    brief = spec.output_schema["properties"]["briefs"]["items"]
    assert list(brief["properties"]) == ["id", "level", "summary"]


def test_plain_tools_are_registered_as_they_are():
    """An undecorated tool returns its own value and has no output schema or handle key."""
    spec = _log_kit().spec("uptime")
    assert (spec.returns_envelope, spec.output_schema, spec.handle_key) == (False, None, None)
    assert spec.function("db") == {"service": "db", "days": 12}


def test_handle_keys_name_the_brief_field_that_carries_the_handle():
    """``key="id"`` gives ``id``, a generated handle gives ``handle``, no handles give None."""
    kit = _log_kit()
    kit.tool(summarize_with_handle()(lambda: ROWS), name="recent")
    assert kit.handle_keys == {
        "search_logs": "id",
        "uptime": None,
        "recent": "handle",
        "get_record": None,
    }


def test_generated_handles_appear_in_the_output_schema():
    """With generated handles the brief schema gains a ``handle`` string first."""
    kit = Toolkit("k")
    kit.tool(summarize_with_handle()(project_fields(["id"])(lambda: ROWS)), name="recent")
    schema = kit.spec("recent").output_schema
    assert schema is not None
    assert list(schema["properties"]["briefs"]["items"]["properties"]) == ["handle", "id"]


def test_categories_are_kept_and_get_record_is_a_read():
    """Declared retention categories are listed; the companion counts as a read."""
    assert _log_kit().categories == {"search_logs": "search", "uptime": None, "get_record": "read"}


def test_an_unknown_category_is_a_configuration_error():
    """Only search, read, command, write and input are categories."""
    with pytest.raises(ConfigurationError, match="category"):
        Toolkit("k").tool(lambda: 1, name="x", category="misc")


def test_name_and_description_can_be_overridden():
    """``kit.tool(fn, name=..., description=...)`` changes what the model reads."""
    kit = Toolkit("k")
    kit.tool(paginate(lambda: ROWS), name="latest", description="The latest rows.")
    spec = kit.spec("latest")
    assert spec.description == "The latest rows."
    assert spec.function().hint == "all 8 shown"


def test_a_tool_without_a_docstring_is_described_by_its_name():
    """With no docstring the description is the name in words."""
    kit = Toolkit("k")

    @kit.tool
    def list_open_issues() -> list[int]:
        return []

    assert kit.spec("list_open_issues").description == "list open issues"


def test_a_tool_named_like_the_companion_is_refused():
    """No tool may take the companion's name."""
    with pytest.raises(ConfigurationError, match="companion"):
        Toolkit("k").tool(lambda handle: handle, name="get_record")


def test_a_lambda_registered_without_a_name_is_refused():
    """``kit.tool(lambda q: ...)`` would offer the model a tool named ``<lambda>``, which
    providers reject at the first request: it asks for ``name=`` at once."""
    kit = Toolkit("lambdas")
    with pytest.raises(ConfigurationError, match="pass name="):
        kit.tool(lambda query="": [])
    kit.tool(lambda query="": [], name="search")
    assert kit.spec("search").name == "search"


def test_spec_of_an_unknown_tool_names_the_known_ones():
    """``kit.spec("nope")`` raises KeyError listing the tools."""
    with pytest.raises(KeyError, match="search_logs, uptime, get_record"):
        _log_kit().spec("nope")


def test_in_tells_whether_a_tool_is_registered():
    """``name in kit`` holds for each registered tool and the companion, for nothing else."""
    kit = _log_kit()
    assert "search_logs" in kit
    assert "get_record" in kit
    assert "nope" not in kit
    assert 3 not in kit


@pytest.mark.parametrize("bad", ["", None, 3])
def test_a_toolkit_needs_a_name(bad):
    """The name namespaces handles, so it cannot be empty."""
    with pytest.raises(ConfigurationError):
        Toolkit(bad)


def test_a_store_must_be_a_handle_store_or_url():
    """``store=`` of the wrong type is refused when the toolkit is made."""
    with pytest.raises(ConfigurationError, match="HandleStore"):
        Toolkit("k", store=42)  # type: ignore[arg-type]


def test_every_callable_kind_can_be_registered_and_called(kind):
    """Functions, async functions, bound methods, classmethods and staticmethods register."""
    kit = Toolkit("kinds")
    tool = kit.tool(
        build_tool(kind, [summarize_with_handle(key="id"), paginate(limit=2)], lambda q: ROWS)
    )
    spec = kit.spec("search")
    assert spec.is_async is (kind == "async_function")
    assert list(spec.parameters["properties"]) == ["query", "page", "limit"]
    assert call_sync(tool, "x", page=2).briefs == ROWS[2:4]
    assert json.loads(kit.get_record(3)) == ROWS[3]


def test_a_registered_method_keeps_its_instance():
    """``kit.tool(service.search)`` calls ``search`` on that very ``service``."""

    class Service:
        def __init__(self, rows: list[int]) -> None:
            self.rows = rows

        @paginate(limit=2)
        def search(self, query: str) -> list[int]:
            """Search this service."""
            return self.rows

    kit = Toolkit("k")
    tool = kit.tool(Service([7, 8, 9]).search)
    assert tool("x").briefs == [7, 8]
    assert kit.call("search", {"query": "x", "page": 2}).value.briefs == [9]


def test_one_tool_in_two_toolkits_keeps_separate_handles():
    """Registering a decorated tool in two toolkits gives each its own handles."""

    @summarize_with_handle(key="id")
    def search_logs(query: str) -> list[dict[str, Any]]:
        return ROWS

    a, b = Toolkit("a"), Toolkit("b")
    in_a, in_b = a.tool(search_logs), b.tool(search_logs)
    in_a("x")
    assert json.loads(a.get_record(1)) == ROWS[1]
    assert b.get_record(1).startswith("No record")
    in_b("x")
    assert json.loads(b.get_record(1)) == ROWS[1]


def test_registering_returns_a_tool_bound_to_the_toolkit():
    """The original decorated function keeps using the default toolkit."""

    @summarize_with_handle(key="id")
    def search_logs(query: str) -> list[dict[str, Any]]:
        return ROWS

    kit = Toolkit("k")
    kit.tool(search_logs)("x")
    assert slimtools.get_record(2).startswith("No record")
    search_logs("x")
    assert json.loads(slimtools.get_record(2)) == ROWS[2]


def test_args_model_rejects_unknown_arguments():
    """Each spec has a Pydantic model of its arguments with extra fields forbidden."""
    model = _log_kit().spec("search_logs").args_model
    assert issubclass(model, BaseModel)
    assert model.model_validate({"query": "x", "page": "2"}).page == 2  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="extra"):
        model.model_validate({"query": "x", "tenant": "acme"})


def test_get_record_spec_describes_its_arguments():
    """The companion takes ``handle`` (string or integer), ``source`` and ``page``."""
    spec = _log_kit().spec("get_record")
    assert spec.parameters["required"] == ["handle"]
    assert set(spec.parameters["properties"]) == {"handle", "source", "page"}
    assert spec.description.startswith("Return the full record")
    assert spec.function is not None


def test_repr_names_the_tools():
    """``repr(kit)`` shows its name and tools."""
    assert repr(_log_kit()) == "Toolkit('logs', tools=['search_logs', 'uptime', 'get_record'])"


class AsyncMemoryStore(MemoryStore):
    """A memory store with the optional async API, recording which API each call used."""

    def __init__(self) -> None:
        super().__init__()
        self.used: list[str] = []

    def put_many(self, scope: Scope, items: Mapping[str, Any]) -> list[str]:
        self.used.append("put_many")
        return super().put_many(scope, items)

    def get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        self.used.append("get_many")
        return super().get_many(scope, keys)

    async def aput_many(self, scope: Scope, items: Mapping[str, Any]) -> list[str]:
        self.used.append("aput_many")
        return super().put_many(scope, items)

    async def aget_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        self.used.append("aget_many")
        return super().get_many(scope, keys)


async def test_async_tools_use_the_stores_async_api():
    """An async tool and ``aget_record`` go through ``aput_many``/``aget_many``."""
    store = AsyncMemoryStore()
    assert isinstance(store, AsyncHandleStore)
    kit = Toolkit("k", store=store)
    tool = kit.tool(
        build_tool("async_function", [summarize_with_handle(key="id"), paginate(limit=3)], _rows)
    )
    await tool("x")
    await tool("x", page=2)
    assert json.loads(await kit.aget_record(4)) == ROWS[4]
    # Each page reads the ids it shows before writing them (page 2 its snapshot first).
    assert store.used == [
        *("aget_many", "aput_many"),
        *("aget_many", "aget_many", "aput_many"),
        "aget_many",
    ]


def test_sync_tools_use_the_stores_sync_api():
    """A sync tool and ``get_record`` go through ``put_many``/``get_many``."""
    store = AsyncMemoryStore()
    kit = Toolkit("k", store=store)
    tool = kit.tool(build_tool("function", [summarize_with_handle(key="id")], _rows))
    tool("x")
    kit.get_record(1)
    assert store.used == ["get_many", "put_many", "get_many"]  # ids read before the write


def test_parameters_named_cls_or_self_of_plain_functions_stay_in_the_schema():
    """Only a bound method's first parameter is dropped; ``cls``/``self`` of a function stay."""
    kit = Toolkit("k")

    @kit.tool
    def classify(cls: str, self: int = 1) -> str:
        """Classify a record."""
        return f"{cls}:{self}"

    assert kit.spec("classify").parameters["required"] == ["cls"]
    assert set(kit.spec("classify").parameters["properties"]) == {"cls", "self"}
    assert kit.call("classify", {"cls": "bug", "self": 2}).text == "bug:2"


def test_a_slimmed_function_with_a_cls_parameter_can_be_called_by_the_model():
    """A decorated plain function keeps ``cls`` in its schema, its hints and its snapshot key."""
    kit = Toolkit("k")

    @kit.tool
    @paginate(limit=2)
    def by_class(cls: str) -> list[str]:
        """List the records of one class."""
        return [f"{cls}{i}" for i in range(5)]

    assert "cls" in kit.spec("by_class").parameters["required"]
    first = kit.call("by_class", {"cls": "a"}).value
    assert 'by_class(cls="a", page=2)' in first.hint
    assert kit.call("by_class", {"cls": "b", "page": 2}).value.briefs == ["b2", "b3"]


@summarize_with_handle(key="id")
@paginate(limit=3)
@project_fields(LogBrief)
def _slimmed_search(query: str) -> list[dict[str, Any]]:
    """Search the logs."""
    return ROWS


def test_bind_returns_the_spec_tool_would_register_without_registering_it():
    """``Toolkit.bind`` gives the schema and callable ``tool`` would, and lists nothing."""
    kit = Toolkit("bound")
    spec = kit.bind(_slimmed_search, name="search", category="search")
    assert [s.name for s in kit.tools] == ["get_record"]
    registered = Toolkit("registered")
    registered.tool(_slimmed_search, name="search", category="search")
    assert spec.parameters == registered.spec("search").parameters
    assert spec.output_schema == registered.spec("search").output_schema
    assert spec.category == "search"


def test_a_bound_slimmed_tool_keeps_its_handles_with_the_toolkit():
    """The bound callable is rebound to the kit: its handles are this toolkit's."""
    kit = Toolkit("bound")
    spec = kit.bind(_slimmed_search, name="search")
    assert spec.function is not _slimmed_search
    envelope = spec.function("x")
    kit.tool(_slimmed_search, name="search")
    assert json.loads(kit.get_record(envelope.briefs[0]["id"]))["id"] == ROWS[0]["id"]


def test_tool_refuses_an_unknown_option_by_name():
    """A misspelt option of ``Toolkit.tool`` (or ``bind``) raises a ``TypeError`` naming it."""
    with pytest.raises(TypeError, match="nmae"):
        Toolkit("kit").tool(_slimmed_search, nmae="search")  # type: ignore[call-arg]
