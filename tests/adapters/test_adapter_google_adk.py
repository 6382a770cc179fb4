"""Google ADK adapter: SlimPlugin and ClearingPlugin run by a real Runner with a scripted model."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from pydantic import Field

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

import slimtools
from slimtools import Toolkit
from slimtools.adapters.google_adk import ClearingPlugin, SlimPlugin, record_tool
from slimtools.clearing import ClearingPolicy, is_placeholder
from slimtools.errors import ConfigurationError
from tests.adapters.sdk_adapter_fixtures import TICKETS, import_error_without, make_kit


class Scripted(BaseLlm):
    """A model that plays a script and keeps a deep copy of every request's contents."""

    model: str = "scripted"
    script: list[Any] = Field(default_factory=list)
    seen: list[list[types.Content]] = Field(default_factory=list)

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        self.seen.append([c.model_copy(deep=True) for c in llm_request.contents])
        step = self.script[len(self.seen) - 1]
        yield LlmResponse(content=step)


def turn(*calls: tuple[str, dict[str, Any]], text: str = "done") -> types.Content:
    parts = [types.Part(function_call=types.FunctionCall(name=n, args=a)) for n, a in calls]
    return types.Content(role="model", parts=parts or [types.Part(text=text)])


def search_tickets(query: str) -> list[dict[str, Any]]:
    """Search tickets (a tool nobody slimmed)."""
    return [t for t in TICKETS if query in t["title"]]


def run(tools: list[Any], plugins: list[Any], script: list[types.Content]) -> tuple[Scripted, Any]:
    """Run one agent to the end of ``script``; the model and the stored session."""
    model = Scripted(script=[*script, turn()])
    agent = LlmAgent(name="support", model=model, tools=tools)
    runner = InMemoryRunner(app=App(name="t", root_agent=agent, plugins=plugins))

    async def go() -> Any:
        session = await runner.session_service.create_session(app_name="t", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="look into logins")])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
        return await runner.session_service.get_session(
            app_name="t", user_id="u", session_id=session.id
        )

    return model, asyncio.run(go())


def responses(contents: list[types.Content]) -> list[dict[str, Any]]:
    """Every function response body in a request, in order."""
    return [
        p.function_response.response or {}
        for c in contents
        for p in c.parts or ()
        if p.function_response is not None
    ]


def test_a_tool_result_reaches_the_model_as_an_envelope_of_briefs():
    """Under fields and key, the model is sent {total, briefs, hint} itself, not the records."""
    plugin = SlimPlugin(toolkit=Toolkit("t"), fields=["id", "title"], key="id")
    model, _ = run([search_tickets], [plugin], [turn(("search_tickets", {"query": "login"}))])
    (sent,) = responses(model.seen[1])
    assert sent["total"] == 12
    assert sent["briefs"][0] == {"id": 1, "title": "login timeout on node 1"}
    assert "get_record(1)" in sent["hint"]


def test_denied_values_reach_neither_the_model_nor_get_record():
    """deny removes a path before anything keeps it: the envelope and the record lack it."""
    kit = Toolkit("t")
    plugin = SlimPlugin(toolkit=kit, key="id", deny=["tenant"])
    script = [turn(("search_tickets", {"query": "login"})), turn(("get_record", {"handle": 3}))]
    model, _ = run([search_tickets, record_tool(kit)], [plugin], script)
    assert "acme-internal" not in str(model.seen)
    assert responses(model.seen[2])[-1]["result"]["id"] == 3


def test_get_record_returns_the_full_record_as_data():
    """The record tool answers with the whole record (the body the briefs left out)."""
    kit = Toolkit("t")
    plugin = SlimPlugin(toolkit=kit, fields=["id", "title"], key="id")
    script = [turn(("search_tickets", {"query": "login"})), turn(("get_record", {"handle": 3}))]
    model, _ = run([search_tickets, record_tool(kit)], [plugin], script)
    record = responses(model.seen[2])[-1]["result"]
    assert record["id"] == 3
    assert record["body"].startswith("stack trace")


def test_a_bad_get_record_call_is_an_error_result_not_an_exception():
    """An unknown handle comes back as ADK's {"error": ...}, and the run goes on."""
    kit = Toolkit("t")
    model, _ = run(
        [record_tool(kit)], [SlimPlugin(toolkit=kit)], [turn(("get_record", {"handle": 99}))]
    )
    assert "error" in responses(model.seen[1])[0]


def test_a_result_that_cannot_be_projected_is_withheld_with_a_note():
    """Prose from a tool with fields is never shown: the model reads why it was withheld."""

    def fetch_page(url: str) -> str:
        """Fetch a page."""
        return "tenant acme-internal owes 300 EUR"

    plugin = SlimPlugin(toolkit=Toolkit("t"), fields=["id"])
    model, _ = run([fetch_page], [plugin], [turn(("fetch_page", {"url": "x"}))])
    (sent,) = responses(model.seen[1])
    assert "acme-internal" not in str(sent)
    assert "withheld" in str(sent)


def test_an_unconfigured_small_result_passes_untouched():
    """With no options, a result within the budget is sent as the tool made it."""
    plugin = SlimPlugin(toolkit=Toolkit("t"))
    model, _ = run([search_tickets], [plugin], [turn(("search_tickets", {"query": "#2"}))])
    (sent,) = responses(model.seen[1])
    assert sent["result"][0]["tenant"] == "acme-internal"


def test_an_unconfigured_result_over_the_budget_becomes_an_envelope():
    """With no options, a result larger than max_tokens is summarised behind a handle."""
    plugin = SlimPlugin(toolkit=Toolkit("t"), max_tokens=1_000)
    model, _ = run([search_tickets], [plugin], [turn(("search_tickets", {"query": "login"}))])
    (sent,) = responses(model.seen[1])
    assert sent["total"] == 12
    assert len(str(sent)) < 5_000 < len(str(search_tickets("login")))
    assert "get_record" in sent["hint"]


def test_an_error_result_keeps_its_message_and_loses_denied_values():
    """ADK's {"error": ...} passes as an error, screened by deny like every other result."""

    def charge(card: str) -> dict[str, Any]:
        """Charge a card."""
        return {"error": "card declined", "card": card, "ssn": "123-45-6789"}

    plugin = SlimPlugin(toolkit=Toolkit("t"), deny=["ssn"])
    model, _ = run([charge], [plugin], [turn(("charge", {"card": "4111"}))])
    (sent,) = responses(model.seen[1])
    assert sent["error"] == "card declined"
    assert "123-45-6789" not in str(model.seen)


def test_per_tool_options_override_the_shared_ones():
    """tools={name: {...}} applies to that tool, merged over the options for every tool."""

    def list_users() -> list[dict[str, Any]]:
        """List users."""
        return [{"id": i, "name": f"u{i}", "email": f"u{i}@x.io"} for i in range(3)]

    plugin = SlimPlugin(
        toolkit=Toolkit("t"), fields=["id"], tools={"list_users": {"fields": ["id", "name"]}}
    )
    script = [turn(("list_users", {}), ("search_tickets", {"query": "login"}))]
    model, _ = run([list_users, search_tickets], [plugin], script)
    users, tickets = responses(model.seen[1])
    assert {k for k in users["briefs"][0] if k != "handle"} == {"id", "name"}
    assert {k for k in tickets["briefs"][0] if k != "handle"} == {"id"}


def test_parallel_async_tools_are_each_slimmed_by_their_own_options():
    """Two async tools called in one model turn run concurrently; each result is slimmed."""

    async def slow_search(query: str) -> list[dict[str, Any]]:
        """Search slowly."""
        await asyncio.sleep(0.01)
        return search_tickets(query)

    async def fast_search(query: str) -> list[dict[str, Any]]:
        """Search quickly."""
        return search_tickets(query)

    plugin = SlimPlugin(
        toolkit=Toolkit("t"),
        tools={"slow_search": {"fields": ["id"]}, "fast_search": {"fields": ["title"]}},
    )
    script = [turn(("slow_search", {"query": "login"}), ("fast_search", {"query": "payment"}))]
    model, _ = run([slow_search, fast_search], [plugin], script)
    slow, fast = responses(model.seen[1])
    assert slow["briefs"][0]["id"] == 1
    assert "title" not in slow["briefs"][0]
    assert fast["briefs"][0]["title"] == "payment failed #2"
    assert "id" not in fast["briefs"][0]


def test_a_toolkit_tool_and_get_record_are_not_slimmed_twice():
    """A tool the toolkit slims itself, and get_record, pass the plugin untouched."""
    kit = make_kit()
    plugin = SlimPlugin(toolkit=kit, max_tokens=10)
    assert plugin.slimmer.plan("search_tickets") is None
    assert plugin.slimmer.plan("get_record") is None


def test_unknown_options_are_refused_naming_the_tool():
    """A typo in a per-tool table raises at construction, naming the table."""
    with pytest.raises(ConfigurationError, match="list_users"):
        SlimPlugin(toolkit=Toolkit("t"), tools={"list_users": {"feilds": ["id"]}})


def test_response_format_is_refused():
    """A hook cannot add a parameter to a tool it did not make."""
    with pytest.raises(ConfigurationError, match="response_format"):
        SlimPlugin(toolkit=Toolkit("t"), fields=["id"], response_format=True)


def test_clearing_replaces_stale_responses_in_the_request_only():
    """Old results become placeholders in what the model is sent; the session keeps them."""
    script = [turn(("search_tickets", {"query": q})) for q in ("login", "payment", "node", "#1")]
    clearing = ClearingPlugin(ClearingPolicy(cache=None, keep_turns=1))
    model, session = run([search_tickets], [clearing], script)
    last = responses(model.seen[-1])
    assert is_placeholder(last[0]["result"])
    assert not is_placeholder(str(last[-1]["result"]))
    stored = [r.response for e in session.events for r in e.get_function_responses()]
    assert not any(is_placeholder(str(r)) for r in stored)


def test_clearing_keeps_every_response_paired_with_its_call():
    """Each response keeps its name and stays right after its call, parallel calls included."""
    script = [
        turn(("search_tickets", {"query": "login"}), ("search_tickets", {"query": "payment"})),
        turn(("search_tickets", {"query": "node"})),
        turn(("search_tickets", {"query": "#1"})),
    ]
    model, _ = run([search_tickets], [ClearingPlugin(ClearingPolicy(cache=None))], script)
    final = model.seen[-1]
    kinds = [
        ("call" if p.function_call else "response" if p.function_response else "text")
        for c in final
        for p in c.parts or ()
    ]
    assert kinds == ["text", "call", "call", "response", "response"] + ["call", "response"] * 2
    cleared = [p.function_response for c in final for p in c.parts or () if p.function_response]
    assert {r.name for r in cleared} == {"search_tickets"}
    assert is_placeholder(cleared[0].response["result"])
    assert 'query="login"' in cleared[0].response["result"]
    assert 'query="payment"' in cleared[1].response["result"]


def test_a_clearing_failure_leaves_the_request_as_it_is(caplog, monkeypatch):
    """A clearer that raises is logged and the model gets the history unchanged."""
    clearing = ClearingPlugin(ClearingPolicy(cache=None, keep_turns=1))

    def broken(*_: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr("slimtools.clearing.Clearer.clear", broken)
    script = [turn(("search_tickets", {"query": q})) for q in ("login", "payment", "node")]
    with caplog.at_level(logging.WARNING, "slimtools.adapters"):
        model, _ = run([search_tickets], [clearing], script)
    assert not any(is_placeholder(str(r)) for r in responses(model.seen[-1]))
    assert "clearing failed" in caplog.text


@pytest.mark.subprocess
def test_a_missing_google_adk_names_the_extra():
    """Importing the adapter without ADK says which extra to install."""
    assert "pip install 'slimtools[google-adk]'" in import_error_without(
        "google.adk", "slimtools.adapters.google_adk"
    )


def test_a_result_holding_media_keeps_it_and_loses_denied_values():
    """An image beside data passes to the model as media; the data is screened by deny."""
    chart = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))

    def plot(query: str) -> dict[str, Any]:
        """Plot tickets."""
        return {"chart": chart, "count": 12, "ssn": "123-45-6789"}

    model, _ = run(
        [plot], [SlimPlugin(toolkit=Toolkit("t"), deny=["ssn"])], [turn(("plot", {"query": "x"}))]
    )
    (part,) = [p for c in model.seen[1] for p in c.parts or () if p.function_response]
    assert part.function_response.response == {"count": 12}
    assert part.function_response.parts[0].inline_data.data == b"\x89PNG"
    assert "123-45-6789" not in str(model.seen)


def test_handles_are_kept_per_adk_user():
    """A user's handles are read in that user's session only, never in another's."""
    kit = Toolkit("t")
    plugin = SlimPlugin(toolkit=kit, fields=["id"], key="id")
    run([search_tickets], [plugin], [turn(("search_tickets", {"query": "login"}))])
    with slimtools.session("u"):
        assert '"id":3' in kit.get_record(3).replace(" ", "")
    with slimtools.session("someone-else"):
        assert '"id":3' not in kit.get_record(3).replace(" ", "")


def test_record_tool_declares_get_records_parameters():
    """The model is shown get_record's handle, source and page, as every adapter shows them."""
    kit = Toolkit("t")
    declared = record_tool(kit)._get_declaration().parameters_json_schema
    assert declared == kit.spec("get_record").parameters
    assert {"handle", "source", "page"} <= set(declared["properties"])


def test_options_are_keyword_arguments_as_for_wrap() -> None:
    """The toolkit and the per-tool tables are named, never positional."""
    with pytest.raises(TypeError):
        SlimPlugin(Toolkit("t"))  # type: ignore[misc]
