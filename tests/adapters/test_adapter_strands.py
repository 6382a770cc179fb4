"""Strands Agents adapter: SlimHook and ClearingHook run by a real Agent with a scripted model."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from typing import Any

import pytest

pytest.importorskip("strands")

from strands import Agent, tool
from strands.models import Model

from slimtools import Toolkit
from slimtools.adapters.strands import ClearingHook, SlimHook, record_tool
from slimtools.clearing import ClearingPolicy, MemoryAudit, is_placeholder
from slimtools.errors import ConfigurationError
from tests.adapters.sdk_adapter_fixtures import TICKETS, import_error_without, make_kit


class Scripted(Model):
    """A model that plays a script (a list of calls per turn, or a final text) and keeps a
    copy of the messages of every request."""

    def __init__(self, script: list[Any]) -> None:
        self.script = [*script, "done"]
        self.seen: list[list[dict[str, Any]]] = []

    def update_config(self, **config: Any) -> None:
        pass

    def get_config(self) -> dict[str, Any]:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.seen.append(copy.deepcopy(messages))
        step = self.script[len(self.seen) - 1]
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(step, str):
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": step}}}
            yield {"contentBlockStop": {}}
        for n, (name, args_) in enumerate([] if isinstance(step, str) else step):
            use = {"toolUseId": f"call_{len(self.seen)}_{n}", "name": name}
            yield {"contentBlockStart": {"start": {"toolUse": use}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args_)}}}}
            yield {"contentBlockStop": {}}
        reason = "end_turn" if isinstance(step, str) else "tool_use"
        yield {"messageStop": {"stopReason": reason}}
        usage = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
        yield {"metadata": {"usage": usage, "metrics": {"latencyMs": 0}}}


@tool
def search_tickets(query: str) -> list[dict[str, Any]]:
    """Search tickets (a tool nobody slimmed)."""
    return [t for t in TICKETS if query in t["title"]]


def run(tools: list[Any], hooks: list[Any], script: list[Any]) -> tuple[Scripted, Agent]:
    model = Scripted(script)
    agent = Agent(model=model, tools=tools, hooks=hooks, callback_handler=None)
    agent("look into logins")
    return model, agent


def results(messages: list[dict[str, Any]]) -> list[str]:
    """The text of every tool result in a request, in order."""
    return [
        "".join(c.get("text", json.dumps(c.get("json"))) for c in b["toolResult"]["content"])
        for m in messages
        for b in m["content"]
        if "toolResult" in b
    ]


def test_a_tool_result_reaches_the_model_as_an_envelope_of_briefs():
    """Under fields and key, the model reads {total, briefs, hint} instead of the records."""
    hook = SlimHook(toolkit=Toolkit("t"), fields=["id", "title"], key="id")
    model, _ = run([search_tickets], [hook], [[("search_tickets", {"query": "login"})]])
    (sent,) = results(model.seen[1])
    envelope = json.loads(sent)
    assert envelope["total"] == 12
    assert envelope["briefs"][0] == {"id": 1, "title": "login timeout on node 1"}


def test_denied_values_reach_neither_the_model_nor_get_record():
    """deny removes a path before anything keeps it; get_record shows the rest of a record."""
    kit = Toolkit("t")
    hook = SlimHook(toolkit=kit, key="id", deny=["tenant"])
    script = [[("search_tickets", {"query": "login"})], [("get_record", {"handle": 3})]]
    model, _ = run([search_tickets, record_tool(kit)], [hook], script)
    assert "acme-internal" not in str(model.seen)
    assert json.loads(results(model.seen[2])[-1])["id"] == 3


def test_a_bad_get_record_call_is_an_error_result():
    """An unknown handle is an error result the model reads, and the run goes on."""
    kit = Toolkit("t")
    model, agent = run(
        [record_tool(kit)], [SlimHook(toolkit=kit)], [[("get_record", {"handle": 99})]]
    )
    blocks = [b for m in agent.messages for b in m["content"] if "toolResult" in b]
    assert blocks[0]["toolResult"]["status"] == "error"
    assert "99" in results(model.seen[1])[0]


def test_a_result_that_cannot_be_projected_is_withheld_with_a_note():
    """Prose from a tool with fields is never shown: the model reads why it was withheld."""

    @tool
    def fetch_page(url: str) -> str:
        """Fetch a page."""
        return "tenant acme-internal owes 300 EUR"

    model, _ = run(
        [fetch_page],
        [SlimHook(toolkit=Toolkit("t"), fields=["id"])],
        [[("fetch_page", {"url": "x"})]],
    )
    (sent,) = results(model.seen[1])
    assert "acme-internal" not in sent
    assert "withheld" in sent


def test_an_unconfigured_small_result_passes_untouched():
    """With no options, a result within the budget is sent as the tool made it."""
    model, _ = run(
        [search_tickets], [SlimHook(toolkit=Toolkit("t"))], [[("search_tickets", {"query": "#2"})]]
    )
    assert "acme-internal" in results(model.seen[1])[0]


def test_an_error_keeps_its_status_and_loses_denied_values():
    """A failing tool's result stays an error, screened by deny like every other result."""

    @tool
    def charge(card: str) -> dict[str, Any]:
        """Charge a card."""
        raise RuntimeError('declined: {"card": "4111", "ssn": "123-45-6789"}')

    model, agent = run(
        [charge], [SlimHook(toolkit=Toolkit("t"), deny=["ssn"])], [[("charge", {"card": "4111"})]]
    )
    blocks = [b for m in agent.messages for b in m["content"] if "toolResult" in b]
    assert blocks[0]["toolResult"]["status"] == "error"
    assert "123-45-6789" not in str(model.seen)


def test_parallel_async_tools_are_each_slimmed_by_their_own_options():
    """Two async tools called in one model turn run concurrently; each result is slimmed."""

    @tool
    async def slow_search(query: str) -> list[dict[str, Any]]:
        """Search slowly."""
        await asyncio.sleep(0.01)
        return [t for t in TICKETS if query in t["title"]]

    @tool
    async def fast_search(query: str) -> list[dict[str, Any]]:
        """Search quickly."""
        return [t for t in TICKETS if query in t["title"]]

    hook = SlimHook(
        toolkit=Toolkit("t"),
        tools={"slow_search": {"fields": ["id"]}, "fast_search": {"fields": ["title"]}},
    )
    script = [[("slow_search", {"query": "login"}), ("fast_search", {"query": "payment"})]]
    model, _ = run([slow_search, fast_search], [hook], script)
    slow, fast = (json.loads(r) for r in results(model.seen[1]))
    assert slow["briefs"][0]["id"] == 1
    assert "title" not in slow["briefs"][0]
    assert fast["briefs"][0]["title"] == "payment failed #2"


def test_a_toolkit_tool_and_get_record_are_not_slimmed_twice():
    """A tool the toolkit slims itself, and get_record, pass the hook untouched."""
    hook = SlimHook(toolkit=make_kit(), max_tokens=10)
    assert hook.slimmer.plan("search_tickets") is None
    assert hook.slimmer.plan("get_record") is None


def test_unknown_options_are_refused_naming_the_tool():
    """A typo in a per-tool table raises at construction, naming the table."""
    with pytest.raises(ConfigurationError, match="list_users"):
        SlimHook(toolkit=Toolkit("t"), tools={"list_users": {"feilds": ["id"]}})


def test_clearing_replaces_stale_results_in_what_the_model_is_sent_only():
    """By default old results become placeholders in the request; agent.messages keeps them."""
    script = [[("search_tickets", {"query": q})] for q in ("login", "payment", "node", "#1")]
    clearing = ClearingHook(ClearingPolicy(cache=None, keep_turns=1))
    model, agent = run([search_tickets], [clearing], script)
    sent = results(model.seen[-1])
    assert is_placeholder(sent[0])
    assert not is_placeholder(sent[-1])
    assert not any(is_placeholder(r) for r in results(agent.messages))


def test_persisted_clearing_writes_placeholders_into_the_history():
    """persist=True: old results become placeholders in agent.messages; the audit keeps them."""
    audit = MemoryAudit()
    script = [[("search_tickets", {"query": q})] for q in ("login", "payment", "node", "#1")]
    clearing = ClearingHook(ClearingPolicy(cache=None, keep_turns=1), persist=True, audit=audit)
    model, agent = run([search_tickets], [clearing], script)
    sent = results(model.seen[-1])
    assert is_placeholder(sent[0])
    assert not is_placeholder(sent[-1])
    assert is_placeholder(results(agent.messages)[0])
    assert len(audit.records) >= 1


def test_clearing_keeps_every_result_paired_with_its_call():
    """Each result keeps its toolUseId and place, parallel calls included."""
    script = [
        [("search_tickets", {"query": "login"}), ("search_tickets", {"query": "payment"})],
        [("search_tickets", {"query": "node"})],
        [("search_tickets", {"query": "#1"})],
    ]
    model, _ = run([search_tickets], [ClearingHook(ClearingPolicy(cache=None))], script)
    final = model.seen[-1]
    ids = [
        (b.get("toolUse") or b.get("toolResult") or {}).get("toolUseId")
        for m in final
        for b in m["content"]
    ]
    first = ["call_1_0", "call_1_1"] * 2
    assert ids == [None, *first, "call_2_0", "call_2_0", "call_3_0", "call_3_0"]
    sent = results(final)
    assert 'query="login"' in sent[0]
    assert 'query="payment"' in sent[1]


def test_a_clearing_failure_leaves_the_history_as_it_is(caplog, monkeypatch):
    """A clearer that raises is logged and the model gets the history unchanged."""

    def broken(*_: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr("slimtools.clearing.Clearer.clear", broken)
    script = [[("search_tickets", {"query": q})] for q in ("login", "payment", "node")]
    clearing = ClearingHook(ClearingPolicy(cache=None, keep_turns=1))
    with caplog.at_level(logging.WARNING, "slimtools.adapters"):
        model, _ = run([search_tickets], [clearing], script)
    assert not any(is_placeholder(r) for r in results(model.seen[-1]))
    assert "clearing failed" in caplog.text


@pytest.mark.subprocess
def test_a_missing_strands_names_the_extra():
    """Importing the adapter without Strands says which extra to install."""
    assert "pip install 'slimtools[strands]'" in import_error_without(
        "strands", "slimtools.adapters.strands"
    )


def test_a_result_holding_media_keeps_it_and_loses_denied_values():
    """An image block passes to the model as it is; the text beside it is screened by deny."""
    image = {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}

    @tool
    def plot(query: str) -> dict[str, Any]:
        """Plot tickets."""
        return {"status": "success", "content": [{"text": '{"count": 12, "ssn": "1-2"}'}, image]}

    model, _ = run(
        [plot], [SlimHook(toolkit=Toolkit("t"), deny=["ssn"])], [[("plot", {"query": "x"})]]
    )
    (block,) = [b for m in model.seen[1] for b in m["content"] if "toolResult" in b]
    assert block["toolResult"]["content"] == [{"text": '{"count":12}'}, image]


def test_record_tool_declares_get_records_parameters():
    """The model is shown get_record's handle, source and page, as every adapter shows them."""
    kit = Toolkit("t")
    spec = record_tool(kit).tool_spec
    assert spec["name"] == "get_record"
    assert spec["inputSchema"]["json"] == kit.spec("get_record").parameters
    assert {"handle", "source", "page"} <= set(spec["inputSchema"]["json"]["properties"])


def test_options_are_keyword_arguments_as_for_wrap() -> None:
    """The toolkit and the per-tool tables are named, never positional."""
    with pytest.raises(TypeError):
        SlimHook(Toolkit("t"))  # type: ignore[misc]
